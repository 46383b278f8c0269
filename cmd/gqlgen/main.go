// Command gqlgen generates graph/ from gqlgen.yml as `gqlgen generate`
// does, with the enum values bound by internal/gqlenum's naming rule.
package main

import (
	"fmt"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"

	"github.com/membrane/membrane/internal/gqlenum"
)

func main() {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err == nil {
		err = api.Generate(cfg, api.PrependPlugin(gqlenum.Plugin{}))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
