package membrane

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
)

// APIKey binds the SHA-256 of a secret key to a principal. Only the hash
// is ever configured or held in memory.
type APIKey struct {
	SHA256    [32]byte
	Principal Principal
}

// HashKey returns the hex SHA-256 of a key, the form keys are configured in.
func HashKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// NewAPIKey validates a configured key entry.
func NewAPIKey(sha256Hex string, p Principal) (APIKey, error) {
	var k APIKey
	b, err := hex.DecodeString(strings.TrimPrefix(strings.ToLower(sha256Hex), "sha256:"))
	if err != nil || len(b) != 32 {
		return k, fmt.Errorf("api key for %q: key_sha256 must be 64 hex digits", p.Actor)
	}
	copy(k.SHA256[:], b)
	if p.Actor == "" {
		return k, fmt.Errorf("api key: actor is required")
	}
	if !p.Role.Valid() {
		return k, fmt.Errorf("api key for %q: role must be reader, writer or admin", p.Actor)
	}
	if !p.MaxSensitivity.Valid() {
		return k, fmt.Errorf("api key for %q: max_sensitivity must be one of %s", p.Actor, enum[Sensitivity](Sensitivities))
	}
	k.Principal = p
	return k, nil
}

// Keyring authenticates API keys.
type Keyring struct {
	keys []APIKey
}

// NewKeyring returns a keyring of keys; an empty one means open (dev) mode.
func NewKeyring(keys []APIKey) *Keyring { return &Keyring{keys: keys} }

// Open reports whether no keys are configured: every request is then the
// development principal.
func (k *Keyring) Open() bool { return len(k.keys) == 0 }

// Authenticate returns the principal of key. It compares the key's hash
// with every configured hash in constant time and without stopping early,
// so timing reveals neither which key matched nor how much of it.
func (k *Keyring) Authenticate(key string) (Principal, bool) {
	h := sha256.Sum256([]byte(key))
	found := -1
	for i := range k.keys {
		if subtle.ConstantTimeCompare(h[:], k.keys[i].SHA256[:]) == 1 {
			found = i
		}
	}
	if found < 0 || key == "" {
		return Principal{}, false
	}
	return k.keys[found].Principal, true
}

// DevPrincipal is the principal of every request when no keys are configured.
func DevPrincipal() Principal {
	return Principal{Actor: "dev", Role: RoleAdmin, MaxSensitivity: SensitivityHyper, Scopes: []string{AllScopes}}
}
