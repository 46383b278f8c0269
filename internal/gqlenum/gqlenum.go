// Package gqlenum binds the values of the schema's enums to Go constants by
// a naming rule, so that gqlgen.yml lists no value that follows it.
//
// The domain's enum types hold the lower-case words stored in Neo4j
// ("plan_graph", "createdAt"); GraphQL spells the same values in upper snake
// case (PLAN_GRAPH, CREATED_AT). A GraphQL value binds to the constant of the
// enum's Go type whose value, so written, is its name. An enum whose values
// gqlgen.yml lists itself (LineageDirection: ANCESTORS is "out") is left as
// it is.
package gqlenum

import (
	"fmt"
	"go/constant"
	"go/types"
	"sort"
	"strings"
	"unicode"

	"github.com/99designs/gqlgen/codegen/config"
	"github.com/vektah/gqlparser/v2/ast"
)

// Plugin is a gqlgen plugin that fills in the enum values of gqlgen.yml by
// the naming rule. It must run before the code is generated (prepend it).
type Plugin struct{}

// Name names the plugin in gqlgen's errors.
func (Plugin) Name() string { return "gqlenum" }

// MutateConfig binds the values of every enum bound to a Go string type
// whose values gqlgen.yml does not list. It fails on a GraphQL value that no
// constant spells, and on two constants that spell the same one.
func (Plugin) MutateConfig(cfg *config.Config) error {
	names := make([]string, 0, len(cfg.Schema.Types))
	for name, def := range cfg.Schema.Types {
		if def.Kind == ast.Enum && !strings.HasPrefix(name, "__") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		entry, ok := cfg.Models[name]
		if !ok || len(entry.Model) == 0 || len(entry.EnumValues) > 0 {
			continue
		}
		i := strings.LastIndex(entry.Model[0], ".")
		pkgPath, typeName := entry.Model[0][:i], entry.Model[0][i+1:]
		pkg := cfg.Packages.Load(pkgPath)
		if pkg == nil || pkg.Types == nil {
			return fmt.Errorf("enum %s: cannot load %s", name, pkgPath)
		}
		byName, err := Constants(pkg.Types, typeName)
		if err != nil {
			return fmt.Errorf("enum %s: %w", name, err)
		}
		values := make(map[string]config.EnumValue, len(cfg.Schema.Types[name].EnumValues))
		for _, v := range cfg.Schema.Types[name].EnumValues {
			c, ok := byName[v.Name]
			if !ok {
				return fmt.Errorf("enum %s: no constant of %s.%s has the value that %s names", name, pkgPath, typeName, v.Name)
			}
			values[v.Name] = config.EnumValue{Value: pkgPath + "." + c}
		}
		entry.EnumValues = values
		cfg.Models[name] = entry
	}
	return nil
}

// Constants returns the string constants of pkg's type typeName, keyed by
// the GraphQL name of their value (see GraphQLName).
func Constants(pkg *types.Package, typeName string) (map[string]string, error) {
	obj := pkg.Scope().Lookup(typeName)
	if obj == nil {
		return nil, fmt.Errorf("%s has no type %s", pkg.Path(), typeName)
	}
	out := map[string]string{}
	for _, n := range pkg.Scope().Names() {
		c, ok := pkg.Scope().Lookup(n).(*types.Const)
		if !ok || !c.Exported() || !types.Identical(c.Type(), obj.Type()) || c.Val().Kind() != constant.String {
			continue
		}
		gql := GraphQLName(constant.StringVal(c.Val()))
		if prev, dup := out[gql]; dup {
			return nil, fmt.Errorf("constants %s and %s both spell %s", prev, n, gql)
		}
		out[gql] = n
	}
	return out, nil
}

// GraphQLName spells a stored enum value as its GraphQL name: upper case,
// with an underscore where a lower-case letter or digit meets an upper-case
// one ("createdAt" is CREATED_AT, "plan_graph" PLAN_GRAPH).
func GraphQLName(value string) string {
	var b strings.Builder
	var prev rune
	for i, r := range value {
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
		prev = r
	}
	return b.String()
}
