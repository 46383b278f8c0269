package graph_test

// FuzzGraphQLRequest feeds arbitrary requests to the real GraphQL handler
// (membranehttp.NewHandler over the real Neo4j store). The seeds run as a normal
// test in CI; to fuzz, against a Neo4j of your own so that generated writes
// stay out of the shared test database (see docs/operations.md, "Failure
// behaviour"):
//
//	NEO4J_URI=bolt://127.0.0.1:<port> go test -run '^$' -fuzz FuzzGraphQLRequest -fuzztime 60s ./graph/

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// fuzzScope is the only scope the fuzzing principal may write to, so that
// what the seeds write never shows in another test's data (a run's own).
var fuzzScope = "test:FuzzGraphQLRequest:" + membrane.NewID()

var (
	fuzzOnce    sync.Once
	fuzzHandler http.Handler
	fuzzErr     error
)

const fuzzKey = "fuzz-key"

// handlerForFuzz builds one handler for the whole fuzz run: a writer
// principal restricted to fuzzScope (unscoped records are writable by every
// writer, so a mutation that drops its scope is still possible; that is why
// long runs use a database of their own).
func handlerForFuzz(t *testing.T) http.Handler {
	db := neo4jtest.DB(t)
	fuzzOnce.Do(func() {
		p := membrane.Principal{Actor: "fuzzer", Role: membrane.RoleWriter, MaxSensitivity: membrane.SensitivityHyper,
			Scopes: []string{fuzzScope}}
		k, err := membrane.NewAPIKey(membrane.HashKey(fuzzKey), p)
		if err != nil {
			fuzzErr = err // every input fails alike, not just the first
			return
		}
		w := gqltest.NewWiring(db, nil)
		w.Stores.Deletes, w.Stores.Metrics = db, db
		fuzzHandler = membranehttp.NewHandler(w.Resolver(), db, membrane.NewKeyring([]membrane.APIKey{k}),
			slog.New(slog.NewTextHandler(io.Discard, nil)))
	})
	if fuzzErr != nil {
		t.Fatal(fuzzErr)
	}
	return fuzzHandler
}

// nested returns n opening brackets, inner, and n closing ones.
func nested(open, inner, close string, n int) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

func FuzzGraphQLRequest(f *testing.F) {
	create := `mutation($in: RecordInput!) { createRecord(input: $in, actor: "fuzz") { id payload { ... on SemanticPayload { object } } } }`
	sem := func(object string) string {
		return `{"in": {"type": "SEMANTIC", "scope": "` + fuzzScope + `", "payload": {"semantic": {"subject": "s", "predicate": "p", "object": ` + object + `}}}}`
	}
	records := `query($f: RecordFilter, $n: Int, $a: String) { records(filter: $f, first: $n, after: $a) { nodes { id } totalCount } }`
	huge := strings.Repeat("x", 200_000)
	seeds := []struct {
		query, variables string
		raw              string
		get              bool
	}{
		// Well-formed requests, so the fuzzer starts from paths that reach the store.
		{query: `{ records(first: 5, filter: {scopes: ["` + fuzzScope + `"]}) { nodes { id type } } }`},
		{query: create, variables: sem(`"postgres"`)},
		{query: create, variables: sem(`{"a": [1, 2.5, null, true, "x"]}`)},
		{query: `query($id: ID!) { record(id: $id) { id auditLog { nodes { action } } } }`, variables: `{"id": "01a1fc89-0000-7000-8000-000000000000"}`},
		{query: `query($id: ID!) { lineage(id: $id, maxDepth: 100, limit: 1000) { nodes { depth } } }`, variables: `{"id": "x"}`},
		{query: `{ retrieve(input: {query: "postgres OR (pool AND \"x\"~2)^3 *", scopes: ["` + fuzzScope + `"]}) { hits { score } } }`},
		{query: `{ __schema { types { name } } }`},
		{query: `{ records { nodes { id } } }`, get: true},
		// Errors gqlgen's transports write themselves (see transportErrors).
		{query: `{ records { nodes { id } } }`, variables: `{`, get: true},
		{query: `mutation { retract(id: "x") { id } }`, get: true},
		// Malformed JSON and documents.
		{raw: `{`}, {raw: ``}, {raw: `null`}, {raw: `[]`}, {raw: `"query"`}, {raw: `{"query": 5}`},
		{raw: `{"query": "{ records { nodes { id } } }", "variables": "not an object"}`},
		{raw: `{"query": "{ records { nodes { id } } }", "variables": [1, 2]}`},
		{raw: `{"query": "{ records { nodes { id } } }", "extensions": {"persistedQuery": {"version": 1, "sha256Hash": "00"}}}`},
		{raw: `{"query": "{ records { nodes { id } } }", "operationName": 7}`},
		{query: `{ records { nodes { id } }`},
		{query: `query { records(first: "ten") { nodes { id } } }`},
		{query: `{ nope }`},
		{query: `mutation { a: retract(id: "1") { id } b: retract(id: "1") { id } }`},
		{query: `subscription { records { id } }`},
		// Wrong types and huge or non-finite numbers.
		{query: records, variables: `{"n": "ten"}`},
		{query: records, variables: `{"n": 1e400}`},
		{query: records, variables: `{"n": 99999999999999999999999}`},
		{query: records, variables: `{"n": -1}`},
		{query: records, variables: `{"n": 2147483648}`},
		{query: records, variables: `{"f": {"minSalience": NaN}}`},
		{query: records, variables: `{"f": {"minSalience": Infinity}}`},
		{query: records, variables: `{"f": {"minSalience": -Infinity}}`},
		{query: records, variables: `{"f": {"minSalience": 1e308, "maxSalience": -1e308}}`},
		{query: `{ records(filter: {minSalience: NaN}) { nodes { id } } }`},
		{query: `{ records(filter: {minSalience: 1e999}) { nodes { id } } }`},
		{query: records, variables: `{"a": "not-a-cursor"}`},
		{query: records, variables: `{"a": "eyJrIjpudWxsfQ=="}`},
		{query: records, variables: `{"f": {"createdAfter": "0000-00-00T00:00:00Z"}}`},
		{query: records, variables: `{"f": {"createdAfter": "9999-12-31T23:59:59.999999999+23:59"}}`},
		{query: `{ record(id: "x", asOf: "yesterday") { id } }`},
		{query: `mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, variables: `{"in": {"type": "EPISODIC", "scope": "` + fuzzScope +
			`", "payload": {"episodic": {"environment": {"toolVersions": "not an object", "context": [1]}}}}}`},
		{query: `mutation($id: ID!) { penalize(id: $id, amount: 1e308, actor: "fuzz") { id } }`, variables: `{"id": "x"}`},
		{query: create, variables: sem(`1e308`)},
		{query: create, variables: sem(`-0`)},
		{query: create, variables: `{"in": {"type": "SEMANTIC", "confidence": 1e400, "payload": {}}}`},
		{query: create, variables: `{"in": {"type": "WORKING", "scope": "` + fuzzScope + `", "payload": {"semantic": {"subject": "s", "predicate": "p"}}}}`},
		// Deep nesting: in variables, in a JSON payload, in the document.
		{query: records, variables: `{"f": ` + nested(`{"scopes": `, `null`, `}`, 10_000) + `}`},
		{query: records, variables: `{"n": ` + nested(`[`, `1`, `]`, 10_000) + `}`},
		{query: create, variables: sem(nested(`[`, `1`, `]`, 10_000))},
		{query: create, variables: sem(nested(`{"a": `, `1`, `}`, 10_000))},
		{query: create, variables: sem(nested(`[`, `1`, `]`, 100))},
		{query: `{ records(filter: {tags: ` + nested(`[`, `"x"`, `]`, 10_000) + `}) { nodes { id } } }`},
		{query: `{ records { nodes { ` + nested(`auditLog { nodes { id } } id `, ``, ``, 1) + `} } }`},
		{query: nested(`{ a: records { nodes { history `, `{ id }`, ` } }`, 500)},
		{query: `{ ` + strings.Repeat(`...F `, 10_000) + `} fragment F on Query { records { nodes { id } } }`},
		// Overlapping-field validation is quadratic: 10,000 aliases take ~8 s
		// of CPU (see docs/operations.md); 2,000 keep the seed cheap.
		{query: `{ ` + strings.Repeat(`a: __typename `, 2_000) + `}`},
		// Unicode edge cases.
		{query: create, variables: sem(`"\ud800"`)},
		{query: create, variables: sem(`"\udfff\ud800"`)},
		{query: create, variables: sem(`"a\u0000b"`)},
		{query: create, variables: sem(`"\u202eevil\u202c \u200f\u061c"`)},
		{query: create, variables: sem(`"e` + strings.Repeat("\u0301", 5000) + `"`)},
		{query: create, variables: sem(`"\ufeff\uffff\ufffe"`)},
		{raw: "{\"query\": \"{ records { nodes { id } } }\xff\xfe\"}"},
		{raw: "{\"query\": \"{ record(id: \\\"\xed\xa0\x80\\\") { id } }\"}"},
		{query: "{ record(id: \"\x00\") { id } }"},
		{query: `{ record(id: "` + "\u202e" + `") { id } }`},
		{query: create, variables: sem(`"😀` + "\U0010FFFF" + `"`)},
		// Huge strings: over the 100 KB limit, in a value and in the document.
		{query: create, variables: sem(`"` + huge + `"`)},
		{query: `{ record(id: "` + huge + `") { id } }`},
		{query: `{ ` + huge + ` }`},
		{query: records, variables: `{"f": {"tags": ["` + huge + `"]}}`},
	}
	for _, s := range seeds {
		f.Add(s.query, s.variables, []byte(s.raw), s.get)
	}
	f.Fuzz(func(t *testing.T, query, variables string, raw []byte, get bool) {
		h := handlerForFuzz(t)
		var req *http.Request
		switch {
		case get:
			v := url.Values{"query": {query}}
			if variables != "" {
				v.Set("variables", variables)
			}
			req = httptest.NewRequest(http.MethodGet, "/graphql?"+v.Encode(), nil)
		case len(raw) > 0:
			req = httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(raw))
		default:
			// variables go in unescaped, so that they may be malformed JSON.
			q, _ := json.Marshal(query)
			body := `{"query": ` + string(q)
			if variables != "" {
				body += `, "variables": ` + variables
			}
			req = httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body+"}"))
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+fuzzKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		body := rec.Body.Bytes()
		if !json.Valid(body) {
			t.Fatalf("status %d, response is not JSON: %.500q", rec.Code, body)
		}
		var resp struct {
			Errors []struct {
				Message    string         `json:"message"`
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatalf("status %d, response %.500q: %v", rec.Code, body, err)
		}
		unavailable := false
		for _, e := range resp.Errors {
			code, _ := e.Extensions["code"].(string)
			if code == "" {
				t.Fatalf("error without extensions.code: %+v (status %d)", e, rec.Code)
			}
			unavailable = unavailable || code == "UNAVAILABLE"
			if code == "INTERNAL" {
				t.Errorf("internal error for a client's input: %+v (response %.300s)", e, body)
			}
		}
		if rec.Code >= 500 && !unavailable {
			t.Fatalf("status %d without UNAVAILABLE: %.500q", rec.Code, body)
		}
	})
}
