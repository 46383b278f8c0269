package mcp

import (
	"encoding/json"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/membrane/membrane/internal/membrane"
)

// What a tool returns is small unless the caller asks for more: a model
// pays for every character of a result with its context, and one recall
// that returned whole episodes would crowd out the conversation it was
// meant to serve. Each tool that returns text takes max_chars (and the
// listing tools a limit or page size) to ask for more.
const (
	// DefaultHitChars bounds the text of each recall hit.
	DefaultHitChars = 300
	// DefaultListChars bounds the text of each record list_records returns.
	DefaultListChars = 200
	// DefaultRecordChars bounds the text, and the payload, get_record
	// returns.
	DefaultRecordChars = 2000
	// MaxChars is the most max_chars may ask for: a record's text is at
	// most a payload (10 MiB), far more than any context holds.
	MaxChars = 100_000
	// DefaultRecallLimit is how many hits recall returns by default.
	DefaultRecallLimit = 5
	// DefaultPageSize is list_records' page size by default.
	DefaultPageSize = 10
	// DefaultLineageLimit bounds the records of a lineage by default.
	DefaultLineageLimit = 25
	// DefaultAuditEntries is how many audit entries lineage shows by
	// default, newest first.
	DefaultAuditEntries = 10
)

// ellipsis marks text that was cut.
const ellipsis = "…"

// truncate returns s cut to at most limit characters (runes), the last
// of them an ellipsis when it was cut, and whether it was. limit <= 0
// leaves nothing.
func truncate(s string, limit int) (string, bool) {
	if limit <= 0 {
		return "", s != ""
	}
	rs := []rune(s)
	if len(rs) <= limit {
		return s, false
	}
	return string(rs[:limit-1]) + ellipsis, true
}

// snippet returns the part of text, at most limit characters, around the
// first place a word of query occurs (matched case-insensitively, as a
// model wrote it), so that a hit shows why it matched rather than only
// how its text begins; without a match, the beginning. Cut ends carry an
// ellipsis. It reports whether text was cut.
func snippet(text, query string, limit int) (string, bool) {
	rs := []rune(text)
	if len(rs) <= limit || limit < 3 {
		return truncate(text, limit)
	}
	at := firstMatch(rs, query)
	if at < 0 {
		return truncate(text, limit)
	}
	// Some context before the match, most of the room after it.
	start := max(0, at-limit/4)
	end := min(len(rs), start+limit)
	start = max(0, end-limit)
	var b strings.Builder
	inner := rs[start:end]
	if start > 0 {
		inner = inner[1:]
		b.WriteString(ellipsis)
	}
	if end < len(rs) {
		inner = inner[:len(inner)-1]
	}
	b.WriteString(string(inner))
	if end < len(rs) {
		b.WriteString(ellipsis)
	}
	return b.String(), true
}

// firstMatch is the rune index in rs of the earliest occurrence of a
// word of query of at least three letters, or -1.
func firstMatch(rs []rune, query string) int {
	lower := make([]rune, len(rs))
	for i, r := range rs {
		lower[i] = unicode.ToLower(r)
	}
	best := -1
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		wr := []rune(w)
		if len(wr) < 3 {
			continue
		}
		if i := runeIndex(lower, wr); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}

func runeIndex(s, sub []rune) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		match := true
		for j := range sub {
			if s[i+j] != sub[j] {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

// clampChars is the max_chars a caller asked for, or def when it asked
// for none, bounded by MaxChars.
func clampChars(asked, def int) int {
	if asked <= 0 {
		return def
	}
	return min(asked, MaxChars)
}

// round3 rounds a score to three decimals: more digits tell a model
// nothing and cost it tokens.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// timeText is an instant as tools show it: RFC 3339 in UTC, to the second.
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Record is a record as the tools return it: what a model needs to
// recognise and cite it, and its text cut to the caller's max_chars. A
// record one level above the caller's ceiling comes redacted: its type,
// status, scope and tags, and no text.
type Record struct {
	ID          string   `json:"id" jsonschema:"the record's id: pass it to get_record, lineage, revise, relate, forget, record_outcome"`
	Type        string   `json:"type" jsonschema:"episodic, working, semantic, competence, plan_graph or entity"`
	Caption     string   `json:"caption" jsonschema:"a short label of the record"`
	Status      string   `json:"status" jsonschema:"active, contested, retracted or superseded"`
	Sensitivity string   `json:"sensitivity"`
	Scope       string   `json:"scope,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	Version     int64    `json:"version" jsonschema:"grows with every change; pass it as expected_version to revise only that version"`
	CreatedAt   string   `json:"created_at"`
	Redacted    bool     `json:"redacted,omitempty" jsonschema:"true when the record is above your sensitivity ceiling: only its id, type and labels are shown"`
	Text        string   `json:"text,omitempty" jsonschema:"the record's text, cut to max_chars"`
	Truncated   bool     `json:"truncated,omitempty" jsonschema:"true when text was cut: get_record with a larger max_chars shows more"`
}

// recordOf is r as a tool shows it, its text cut to maxChars (0: no text).
func recordOf(r *membrane.Record, maxChars int) Record {
	out := Record{
		ID: r.ID, Type: string(r.Type), Caption: r.Caption(), Status: string(r.Status), Sensitivity: string(r.Sensitivity),
		Scope: r.Scope, Tags: r.Tags, Version: r.Version, CreatedAt: timeText(r.CreatedAt), Redacted: r.Redacted,
	}
	if !r.Redacted && maxChars > 0 {
		out.Text, out.Truncated = truncate(membrane.SearchText(r.Payload), maxChars)
	}
	return out
}

// recordsOf is recordOf of each record.
func recordsOf(rs []*membrane.Record, maxChars int) []Record {
	out := make([]Record, len(rs))
	for i, r := range rs {
		out[i] = recordOf(r, maxChars)
	}
	return out
}

// Hit is one recall result: which record, why it matched and how well.
type Hit struct {
	ID       string  `json:"id"`
	Type     string  `json:"type"`
	Caption  string  `json:"caption"`
	Text     string  `json:"text,omitempty" jsonschema:"the text that matched, around the first query word it contains, cut to max_chars"`
	When     string  `json:"when" jsonschema:"when it happened (an episode's event time) or was written"`
	Score    float64 `json:"score" jsonschema:"relevance in [0,1], best first"`
	Status   string  `json:"status,omitempty" jsonschema:"set when the record is not active (contested, or retracted with include_retracted)"`
	Redacted bool    `json:"redacted,omitempty" jsonschema:"true when the record is above your sensitivity ceiling: no text is shown"`
}

// hitOf is h as recall shows it, its text a snippet for query of at most
// maxChars.
func hitOf(h membrane.Hit, query string, maxChars int) Hit {
	r := h.Record
	when := h.At
	if when.IsZero() {
		when = r.CreatedAt
	}
	out := Hit{ID: r.ID, Type: string(r.Type), Caption: r.Caption(), When: timeText(when), Score: round3(h.Score), Redacted: r.Redacted}
	if r.Status != membrane.StatusActive {
		out.Status = string(r.Status)
	}
	if !r.Redacted {
		// The record's human text, or, when the query matched elsewhere
		// (a value of an episode's context), all the text search indexed.
		text := matchedText(query, membrane.SearchText(r.Payload), membrane.IndexText(r.Payload))
		out.Text, _ = snippet(text, query, maxChars)
	}
	return out
}

// matchedText is the first of texts in which a word of query occurs (as
// snippet matches it), or the first text when none has one.
func matchedText(query string, texts ...string) string {
	for _, t := range texts {
		if firstMatch([]rune(t), query) >= 0 {
			return t
		}
	}
	if len(texts) == 0 {
		return ""
	}
	return texts[0]
}

// payloadOf is p as get_record shows it: the payload's fields (as stored,
// in snake_case) when its JSON fits in maxChars; otherwise nil, and the
// JSON cut to maxChars as text, so that a large payload never floods the
// caller.
func payloadOf(p membrane.Payload, maxChars int) (fields any, cut string) {
	if p == nil {
		return nil, ""
	}
	b, err := membrane.EncodePayload(p)
	if err != nil {
		return nil, ""
	}
	if s, truncated := truncate(string(b), maxChars); truncated {
		return nil, s
	}
	var v map[string]any
	if json.Unmarshal(b, &v) != nil {
		return nil, ""
	}
	return v, ""
}
