package membrane

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// blindLabel derives a key's blind-index key from it. The version is part
// of the label: a change to the token format or the analyser that produces
// the terms gets a new label, and tokens of the old one never match.
const blindLabel = "membrane blind index v1"

// BlindTokenBytes is how much of HMAC-SHA256 a token keeps: 128 bits make
// a collision between two distinct terms negligible, and 32 hex digits are
// one Lucene token under the whitespace analyzer.
const BlindTokenBytes = 16

// BlindKey derives the key of the blind index from an encryption key:
// HMAC-SHA256(key, "membrane blind index v1"). It is a different key from
// the AES key, so the blind index never reuses encryption key material
// directly, and it is tied to the key id like every sealed value.
func BlindKey(key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(blindLabel))
	return m.Sum(nil)
}

// BlindToken is the token stored for term under blindKey:
// HMAC-SHA256(blindKey, term) truncated to BlindTokenBytes, in lower-case
// hex (only [0-9a-f], so it needs no escaping in a Lucene query).
func BlindToken(blindKey []byte, term string) string {
	m := hmac.New(sha256.New, blindKey)
	m.Write([]byte(term))
	return hex.EncodeToString(m.Sum(nil)[:BlindTokenBytes])
}

// BlindDocument is the blind text of a record's analysed terms: one token
// per term occurrence (repeats kept, so that BM25 sees term frequency),
// sorted, so that the stored text does not keep the order of the words.
func BlindDocument(blindKey []byte, terms []string) string {
	toks := make([]string, len(terms))
	for i, t := range terms {
		toks[i] = BlindToken(blindKey, t)
	}
	slices.Sort(toks)
	return strings.Join(toks, " ")
}

// BlindTerms returns the blind text of a sealed record's analysed terms
// under the active key, and that key's id. ok is false when the sealer has
// no key (sealed records are then refused anyway) or there are no terms.
func (s *Sealer) BlindTerms(terms []string) (doc, keyID string, ok bool) {
	k := s.blind[s.active]
	if k == nil || len(terms) == 0 {
		return "", "", false
	}
	return BlindDocument(k, terms), s.active, true
}

// BlindQuery returns the tokens of a query's analysed terms under every
// configured key, the active one first: during a rotation, records whose
// blind terms were computed under an older key still match. Empty when the
// sealer has no key or there are no terms.
func (s *Sealer) BlindQuery(terms []string) []string {
	ids := make([]string, 0, len(s.blind))
	for id := range s.blind {
		if id != s.active {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if s.blind[s.active] != nil {
		ids = append([]string{s.active}, ids...)
	}
	var out []string
	seen := map[string]bool{}
	for _, id := range ids {
		for _, t := range terms {
			if tok := BlindToken(s.blind[id], t); !seen[tok] {
				seen[tok] = true
				out = append(out, tok)
			}
		}
	}
	return out
}

// Searchable reports whether a request with the given ceiling can match
// sealed records at all: only then is the blind index queried.
func (s *Sealer) Searchable(ceiling int) bool { return len(s.blind) > 0 && ceiling >= s.threshold }
