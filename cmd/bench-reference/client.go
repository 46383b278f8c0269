package main

import (
	"context"
	"fmt"

	pb "github.com/BennettSchwartz/membrane/api/grpc/gen/membranev1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// client is a connection to the reference daemon: one HTTP/2 connection,
// which its clients share, as cmd/bench's clients share keep-alive ones.
type client struct {
	conn *grpc.ClientConn
	svc  pb.MembraneServiceClient
	key  string
}

func dial(addr, key string) (*client, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return &client{conn: conn, svc: pb.NewMembraneServiceClient(conn), key: key}, nil
}

func (c *client) close() { _ = c.conn.Close() }

// ctx adds the API key, when there is one, as the daemon reads it.
func (c *client) ctx(ctx context.Context) context.Context {
	if c.key == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.key)
}
