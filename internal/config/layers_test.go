package config_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/config"
	"github.com/membrane/membrane/internal/membrane"
)

// TestEnvOverFileLayers: what each environment variable that is not one
// plain value does to what the file set: API keys add to the file's (and
// the keys file's after them), encryption keys replace the file's keys and
// active key, the admin's limits replace only the limits they name, and the
// file's own admin entry replaces the built-in one whole.
func TestEnvOverFileLayers(t *testing.T) {
	key := func(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }
	hash := func(s string) string { return strings.Repeat(s, 32) }
	keysFile := writeFile(t, "keys.yaml", "- {key_sha256: "+hash("ef")+", actor: from-keys-file, role: reader, max_sensitivity: low}\n")
	yaml := "api_keys:\n  - {key_sha256: " + hash("ab") + ", actor: from-file, role: writer, max_sensitivity: low}\n" +
		"encryption:\n  active_key: k2\n  keys:\n    - {id: k1, key: " + key(1) + "}\n    - {id: k2, key: " + key(2) + "}\n" +
		"limits:\n  roles:\n    admin:\n      depth: 40\n      rate: 9\n"
	file := writeFile(t, "membrane.yaml", yaml)
	tests := []struct {
		name      string
		env       map[string]string
		actors    []string
		keyIDs    []string
		active    string
		admin     config.RoleLimit
		adminSubs int
	}{
		{"file only", nil, []string{"from-file"}, []string{"k1", "k2"}, "k2",
			config.RoleLimit{Complexity: 50000, Depth: 40, RootFields: 20, Rate: 9, Burst: 100}, 100},
		{"env over file", map[string]string{
			"MEMBRANE_API_KEYS":             `[{"key_sha256": "` + hash("cd") + `", "actor": "from-env", "role": "admin", "max_sensitivity": "hyper"}]`,
			"MEMBRANE_API_KEYS_FILE":        keysFile,
			"MEMBRANE_ENCRYPTION_KEY":       "new:" + key(3) + ", old:" + key(1),
			"MEMBRANE_ADMIN_MAX_COMPLEXITY": "7", "MEMBRANE_ADMIN_MAX_SUBSCRIPTIONS_PER_PRINCIPAL": "3",
		}, []string{"from-file", "from-env", "from-keys-file"}, []string{"new", "old"}, "new",
			config.RoleLimit{Complexity: 7, Depth: 40, RootFields: 20, Rate: 9, Burst: 100}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load([]string{"-config", file}, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			var actors, ids []string
			for _, k := range c.APIKeys {
				actors = append(actors, k.Actor)
			}
			for _, k := range c.Encryption.Keys {
				ids = append(ids, k.ID)
			}
			if strings.Join(actors, ",") != strings.Join(tt.actors, ",") || strings.Join(ids, ",") != strings.Join(tt.keyIDs, ",") ||
				c.Encryption.ActiveKey != tt.active {
				t.Fatalf("actors %v, keys %v active %q", actors, ids, c.Encryption.ActiveKey)
			}
			if got := c.LimitsFor(membrane.RoleAdmin); got != tt.admin {
				t.Fatalf("admin %+v, want %+v", got, tt.admin)
			}
			if got := c.SubscriptionsFor(membrane.RoleAdmin); got != tt.adminSubs {
				t.Fatalf("admin subscriptions %d, want %d", got, tt.adminSubs)
			}
		})
	}
}
