package membrane

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrSealKeyMissing is wrapped by Open's error when a value is sealed under
// a key this server does not have: such a record cannot be shown, but it is
// no reason to fail a search that merely matched it.
var ErrSealKeyMissing = errors.New("encryption key is not configured")

// ErrUnopened marks the error of a record whose sealed values do not open
// (sealed under a key this server lacks, or failing authentication): the
// server's own work (consolidation) passes over such a record.
var ErrUnopened = errors.New("sealed value does not open")

// sealPrefix starts every sealed value: format version, key id, then the
// base64url nonce and ciphertext.
const sealPrefix = "mbx1:"

// Sealer encrypts the free text of sensitive records at rest with
// AES-256-GCM. Neo4j community has no encryption at rest, and analysts,
// backups and stolen disks bypass the API's gating, so records at or above
// the threshold keep only non-sensitive fields in clear.
type Sealer struct {
	threshold int
	active    string
	keys      map[string]cipher.AEAD
	// blind holds each key's blind-index key (BlindKey), by key id.
	blind map[string][]byte
	// digest holds each key's lookup-digest key (DigestKey), by key id.
	digest map[string][]byte
	// check holds each key's check value (KeyCheck), by key id.
	check map[string]string
}

// SealKey is one named 32-byte key.
type SealKey struct {
	ID  string
	Key []byte
}

// NewSealer returns a sealer for records at or above threshold. New values
// are sealed with the key named active; every key in keys can open values
// (key rotation keeps old keys until their values are rewritten). With no
// keys, the sealer refuses to store records at or above the threshold.
func NewSealer(threshold Sensitivity, keys []SealKey, active string) (*Sealer, error) {
	if !threshold.Valid() {
		return nil, fmt.Errorf("encryption threshold %q is not a sensitivity", threshold)
	}
	s := &Sealer{threshold: threshold.Level(), active: active, keys: map[string]cipher.AEAD{}, blind: map[string][]byte{}, digest: map[string][]byte{}, check: map[string]string{}}
	for _, k := range keys {
		if k.ID == "" || strings.Contains(k.ID, ":") {
			return nil, fmt.Errorf("encryption key id %q must be non-empty and without ':'", k.ID)
		}
		if len(k.Key) != 32 {
			return nil, fmt.Errorf("encryption key %q must be 32 bytes (AES-256), got %d", k.ID, len(k.Key))
		}
		block, err := aes.NewCipher(k.Key)
		if err != nil {
			return nil, fmt.Errorf("encryption key %q: %w", k.ID, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("encryption key %q: %w", k.ID, err)
		}
		s.keys[k.ID] = aead
		s.blind[k.ID] = BlindKey(k.Key)
		s.digest[k.ID] = DigestKey(k.Key)
		s.check[k.ID] = KeyCheck(k.Key)
	}
	if len(keys) > 0 && s.keys[active] == nil {
		return nil, fmt.Errorf("active encryption key %q is not among the configured keys", active)
	}
	return s, nil
}

// Required reports whether records of sensitivity sens are stored sealed.
func (s *Sealer) Required(sens Sensitivity) bool { return sens.Level() >= s.threshold }

// RequiredAt is Required for a stored sensitivity level.
func (s *Sealer) RequiredAt(level int) bool { return level >= s.threshold }

// Seal encrypts plain, bound to context (the record id and field name), so
// a sealed value copied to another record or field does not open.
func (s *Sealer) Seal(plain []byte, context string) (string, error) {
	aead := s.keys[s.active]
	if aead == nil {
		return "", Errorf(EPRECONDITION, "records of sensitivity %s and above are stored encrypted, and this server has no encryption key configured (MEMBRANE_ENCRYPTION_KEY)",
			sensitivityAt(s.threshold))
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	ct := aead.Seal(nonce, nonce, plain, []byte(context))
	return sealPrefix + s.active + ":" + base64.RawURLEncoding.EncodeToString(ct), nil
}

// Active returns the id of the key new values are sealed with.
func (s *Sealer) Active() string { return s.active }

// IsSealed reports whether a stored value is sealed.
func IsSealed(v string) bool { return strings.HasPrefix(v, sealPrefix) }

// Open decrypts a value sealed with context.
func (s *Sealer) Open(sealed, context string) ([]byte, error) {
	rest, ok := strings.CutPrefix(sealed, sealPrefix)
	id, data, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return nil, fmt.Errorf("open: not a sealed value")
	}
	aead := s.keys[id]
	if aead == nil {
		return nil, fmt.Errorf("open: key %q: %w", id, ErrSealKeyMissing)
	}
	ct, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil || len(ct) < aead.NonceSize() {
		return nil, fmt.Errorf("open: malformed sealed value")
	}
	plain, err := aead.Open(nil, ct[:aead.NonceSize()], ct[aead.NonceSize():], []byte(context))
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	return plain, nil
}

func sensitivityAt(level int) Sensitivity {
	for _, s := range []Sensitivity{SensitivityPublic, SensitivityLow, SensitivityMedium, SensitivityHigh, SensitivityHyper} {
		if s.Level() == level {
			return s
		}
	}
	return ""
}

// KeyChecks returns the check value (KeyCheck) of each configured key, by
// key id.
func (s *Sealer) KeyChecks() map[string]string {
	out := make(map[string]string, len(s.check))
	for id, c := range s.check {
		out[id] = c
	}
	return out
}

// KeyIDs returns the ids of the configured keys, sorted.
func (s *Sealer) KeyIDs() []string {
	ids := make([]string, 0, len(s.keys))
	for id := range s.keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
