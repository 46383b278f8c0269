// Package cypher holds every Cypher statement Membrane runs, as .cypher files
// embedded at build time, so a reviewer (or an analyst) reads the queries in
// one place and none is assembled from user input.
//
// A few statements have placeholders in the form __NAME__ (an order field, a
// sort direction, a shared WHERE fragment). They are filled only from the
// fixed values in the neo4j package, never from request data; everything a
// request supplies is a parameter. The statements as they run, every
// variant filled, are in expanded/ (generated and checked by the neo4j
// package's TestCypherGolden; not embedded: nothing runs from there).
package cypher

import (
	"embed"
	"fmt"
	"strings"
)

// The pattern *.cypher matches no file in a subfolder: expanded/ stays out.
//
//go:embed *.cypher analyst/*.cypher
var files embed.FS

// Must returns the statement in the named file (without .cypher). It panics
// when the file is missing: statements are fixed at build time, so a missing
// one is a programming error caught by any test that runs it.
func Must(name string) string {
	b, err := files.ReadFile(name + ".cypher")
	if err != nil {
		panic(fmt.Sprintf("cypher: no statement %q: %v", name, err))
	}
	return strings.TrimSpace(string(b))
}

// Statements splits a file of several statements separated by ";" at line
// ends (schema files), dropping comment-only parts.
func Statements(name string) []string {
	var out []string
	for _, part := range strings.Split(Must(name), ";\n") {
		var lines []string
		for _, l := range strings.Split(part, "\n") {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "//") {
				lines = append(lines, l)
			}
		}
		if s := strings.TrimSuffix(strings.TrimSpace(strings.Join(lines, "\n")), ";"); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Names returns the names (without .cypher) of the statement files, the
// fragments that templates include and the templates themselves: every
// name Must and Statements take but those of analyst/. Sorted.
func Names() []string {
	entries, err := files.ReadDir(".")
	if err != nil {
		panic(fmt.Sprintf("cypher: statements: %v", err))
	}
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".cypher"); ok && !e.IsDir() {
			out = append(out, name)
		}
	}
	return out
}

// Analyst returns the queries in analyst/ (for Neo4j Browser) by file name.
func Analyst() map[string]string {
	entries, err := files.ReadDir("analyst")
	if err != nil {
		panic(fmt.Sprintf("cypher: analyst queries: %v", err))
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		out[e.Name()] = Must("analyst/" + strings.TrimSuffix(e.Name(), ".cypher"))
	}
	return out
}
