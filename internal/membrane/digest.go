package membrane

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// digestLabel derives a key's lookup-digest key from it. Like blindLabel,
// the version is part of the label.
const digestLabel = "membrane lookup digest v1"

// checkLabel derives a key's check value from it.
const checkLabel = "membrane key check v1"

// KeyCheck is the check value of an encryption key:
// hex(HMAC-SHA256(key, "membrane key check v1")). Stored beside the key's
// id in the database, it tells a server whether the key it holds under an
// id is the one that sealed the records under that id (a changed key
// otherwise goes unnoticed until a record fails to open), and it
// fingerprints the keys a migration ran with; it reveals nothing of the
// key.
func KeyCheck(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(checkLabel))
	return hex.EncodeToString(m.Sum(nil))
}

// Kinds of keyed lookup digest: each is computed over its kind first, so
// that digests of different kinds over the same strings never coincide.
const (
	DigestFact       = "fact"
	DigestSkill      = "skill"
	DigestEntityName = "entity name"
)

// DigestKey derives the key of the keyed lookup digests from an encryption
// key: HMAC-SHA256(key, "membrane lookup digest v1"), a key of its own, as
// BlindKey is.
func DigestKey(key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(digestLabel))
	return m.Sum(nil)
}

// Digest is the keyed digest of fields of kind under digestKey:
// hex(HMAC-SHA256(digestKey, kind 0 field1 0 field2 0 …)). It stands where
// an unkeyed digest would let someone holding the database confirm a guess
// of sealed text (a fact's subject and object, a skill's or an entity's
// name): computing it needs the key.
func Digest(digestKey []byte, kind string, fields ...string) string {
	m := hmac.New(sha256.New, digestKey)
	m.Write([]byte(kind))
	m.Write([]byte{0})
	for _, f := range fields {
		m.Write([]byte(f))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// ActiveDigest returns the digest of fields of kind under the active key,
// and that key's id; ok is false when the sealer has no key (sealed records
// are then refused anyway).
func (s *Sealer) ActiveDigest(kind string, fields ...string) (digest, keyID string, ok bool) {
	k := s.digest[s.active]
	if k == nil {
		return "", "", false
	}
	return Digest(k, kind, fields...), s.active, true
}

// Digests returns the digests of fields of kind under every configured key,
// the active one first: during a rotation a value digested under an older
// key is still found, until `membrane reseal` recomputes it.
func (s *Sealer) Digests(kind string, fields ...string) []string {
	ids := make([]string, 0, len(s.digest))
	for id := range s.digest {
		if id != s.active {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if s.digest[s.active] != nil {
		ids = append([]string{s.active}, ids...)
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = Digest(s.digest[id], kind, fields...)
	}
	return out
}

// Fields are the strings a fact key's digests are computed over.
func (k FactKey) Fields() []string { return []string{k.Scope, k.Subject, k.Predicate, k.Object} }

// Fields are the strings a competence key's digests are computed over.
func (k CompetenceKey) Fields() []string { return []string{k.Scope, k.SkillName} }

// KeyOfCompetence returns the competence key of a competence record.
func KeyOfCompetence(r *Record) (CompetenceKey, bool) {
	c, ok := r.Payload.(*CompetencePayload)
	if !ok {
		return CompetenceKey{}, false
	}
	return CompetenceKey{SkillName: c.SkillName, Scope: r.Scope}, true
}

// EntityNameDigests are the keyed digests, under the active key, of an
// entity's names (EntityTerms) within its scope: what a sealed entity is
// resolved by instead of plaintext terms. The scope is part of each digest,
// so equal names in two scopes do not show as equal digests.
func (s *Sealer) EntityNameDigests(scope string, p *EntityPayload) (digests []string, keyID string, ok bool) {
	if s.digest[s.active] == nil {
		return nil, "", false
	}
	return s.NameDigests(scope, EntityTerms(p)), s.active, true
}

// NameDigests are the keyed digests of entity names (normalised terms) in
// scope under the active key (none without a key).
func (s *Sealer) NameDigests(scope string, terms []string) []string {
	k := s.digest[s.active]
	if k == nil {
		return nil
	}
	out := make([]string, len(terms))
	for i, t := range terms {
		out[i] = Digest(k, DigestEntityName, scope, t)
	}
	return out
}

// EntityNameQuery returns the keyed digests of terms in scope under every
// configured key, for a request that may see sealed records (Searchable);
// nil otherwise, so that a request below the threshold never matches a
// sealed entity.
func (s *Sealer) EntityNameQuery(ceiling int, scope string, terms []string) []string {
	if !s.Searchable(ceiling) {
		return nil
	}
	var out []string
	for _, t := range terms {
		out = append(out, s.Digests(DigestEntityName, scope, t)...)
	}
	return out
}
