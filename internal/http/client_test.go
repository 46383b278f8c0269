package http_test

import "github.com/membrane/membrane/internal/gqltest"

// client is the shared GraphQL test client: these tests drive the
// transport through the whole API, over a real Neo4j.
type client = gqltest.Client
