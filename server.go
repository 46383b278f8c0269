// Command membrane serves the Membrane GraphQL API over a Neo4j store.
// Its subcommands, flags and signals are internal/app's CLI (membrane -h
// lists them); the server itself is internal/app's Main.
package main

//go:generate go run ./cmd/gqlgen

import (
	"os"

	"github.com/membrane/membrane/internal/app"
)

func main() {
	os.Exit(app.CLI(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
