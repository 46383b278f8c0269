package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

func main() {
	ctx := context.Background()
	d, _ := neo4j.NewDriverWithContext("bolt://127.0.0.1:37687", neo4j.NoAuth())
	for _, f := range os.Args[1:] {
		b, _ := os.ReadFile(f)
		start := time.Now()
		r, err := neo4j.ExecuteQuery(ctx, d, string(b), nil, neo4j.EagerResultTransformer)
		if err != nil {
			fmt.Println(f, err)
			continue
		}
		fmt.Println(f, time.Since(start), fmt.Sprint(r.Records[0].Values))
	}
}
