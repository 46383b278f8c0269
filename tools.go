//go:build tools

// Package tools pins the code generators this module runs, so that
// `go generate` uses the versions in go.mod.
package tools

import (
	_ "github.com/99designs/gqlgen"
)
