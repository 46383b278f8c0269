package config

import (
	"reflect"
	"strings"
)

// Setting is one configuration setting, as Config's struct tags describe
// it.
type Setting struct {
	// Key is the dotted YAML key (neo4j.uri); a key under a map names the
	// map's key in angle brackets (limits.roles.<role>.depth).
	Key string
	// Env is the environment variable that sets it ("": none).
	Env string
	// Flag is the command-line flag that sets it, without its dash ("":
	// none), and Usage its help text.
	Flag, Usage string
	// Default is the built-in default (Default); nil under a map, whose
	// entries' defaults are Default's entries.
	Default any

	// index locates the field in Config (reflect.Value.FieldByIndex), or in
	// the map's element type when inMap, whose env tags follow envPrefix.
	index     []int
	inMap     bool
	envPrefix string
}

// Settings lists every setting of Config in declaration order: what Load
// reads, and what README.md's configuration table documents.
func Settings() []Setting {
	return walk(reflect.ValueOf(Default()), "", "", nil, false, nil)
}

// walk lists the settings of struct v, whose keys start with prefix and
// whose environment variables with envPrefix; index is v's own index in
// Config (or in the map element type when inMap).
func walk(v reflect.Value, prefix, envPrefix string, index []int, inMap bool, out []Setting) []Setting {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("yaml")
		if name == "" || name == "-" {
			continue
		}
		key, idx := prefix+name, append(append([]int(nil), index...), i)
		fv := v.Field(i)
		switch {
		case f.Type.Kind() == reflect.Struct:
			out = walk(fv, key+".", envPrefix, idx, inMap, out)
			continue
		case f.Type.Kind() == reflect.Map && f.Type.Elem().Kind() == reflect.Struct:
			// The element type's settings, with no default of their own
			// (the defaults are the map's entries) and their own index.
			elem := reflect.New(f.Type.Elem()).Elem()
			out = walk(elem, key+".<"+f.Tag.Get("mapkey")+">.", f.Tag.Get("envPrefix"), nil, true, out)
			continue
		}
		s := Setting{Key: key, Flag: f.Tag.Get("flag"), Usage: f.Tag.Get("usage"), index: idx, inMap: inMap, envPrefix: envPrefix}
		if e := f.Tag.Get("env"); e != "" {
			s.Env = envPrefix + strings.Split(e, ",")[0]
		}
		if !inMap {
			s.Default = fv.Interface()
		}
		out = append(out, s)
	}
	return out
}
