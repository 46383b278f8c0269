package graph_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// rawNodes returns the stored properties of a record and of its audit
// entries, read straight from Neo4j as an analyst (or a stolen disk) would.
func rawNodes(t *testing.T, id string) []map[string]any {
	t.Helper()
	d, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	res, err := driver.ExecuteQuery(t.Context(), d,
		`MATCH (m:Memory {id: $id}) OPTIONAL MATCH (m)-[:HAS_AUDIT]->(a) RETURN properties(m) AS m, collect(properties(a)) AS audits`,
		map[string]any{"id": id}, driver.EagerResultTransformer)
	if err != nil || len(res.Records) != 1 {
		t.Fatalf("raw read: %v (%d rows)", err, len(res.Records))
	}
	out := []map[string]any{res.Records[0].Values[0].(map[string]any)}
	for _, a := range res.Records[0].Values[1].([]any) {
		out = append(out, a.(map[string]any))
	}
	return out
}

func TestSensitivePayloadsAreEncryptedAtRest(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	const secret = "correct-horse-battery-staple"
	in := map[string]any{"type": "SEMANTIC", "scope": scope, "sensitivity": "HIGH", "tags": []any{"credentials"},
		"provenance": map[string]any{"sources": []any{map[string]any{"kind": "ARTIFACT", "ref": "vault://" + secret}}},
		"payload":    map[string]any{"semantic": map[string]any{"subject": "db password", "predicate": "is", "object": secret}}}
	var created struct{ CreateRecord struct{ ID string } }
	c.Do(`mutation($in: RecordInput!) { createRecord(input: $in, actor: "`+secret+`") { id } }`, map[string]any{"in": in}, &created)
	id := created.CreateRecord.ID
	c.Do(`mutation($id: ID!) { contest(id: $id, contestingRef: "https://x/`+secret+`", rationale: "`+secret+`") { id } }`, map[string]any{"id": id}, nil)

	nodes := rawNodes(t, id)
	raw, _ := json.Marshal(nodes)
	if strings.Contains(string(raw), secret) || strings.Contains(string(raw), "db password") {
		t.Fatalf("sensitive text stored in clear: %s", raw)
	}
	m := nodes[0]
	if !membrane.IsSealed(m["payload"].(string)) || !membrane.IsSealed(m["provenanceSources"].(string)) || m["encrypted"] != true {
		t.Fatalf("record props = %v", m)
	}
	if m["name"] != "semantic (encrypted)" || m["searchTerms"] != "" || m["subject"] != nil || m["object"] != nil {
		t.Fatalf("derived text props of a sensitive record = %v", m)
	}
	// Non-sensitive fields stay plain, so filters and Browser views work.
	if m["sensitivity"] != "high" || m["scope"] != scope || m["status"] != "contested" {
		t.Fatalf("plain props = %v", m)
	}
	// The API decrypts for callers allowed to see the record.
	r := c.get(id)
	var full struct {
		Record struct {
			Payload         struct{ Object string }
			Provenance      struct{ Sources []struct{ Ref string } }
			ContestEvidence []string
			AuditLog        struct {
				Nodes []struct{ Rationale, ActorDetail string }
			}
		}
	}
	c.Do(`query($id: ID!) { record(id: $id) { payload { ... on SemanticPayload { object } } provenance { sources { ref } }
	  contestEvidence auditLog { nodes { rationale actorDetail } } } }`, map[string]any{"id": id}, &full)
	if full.Record.Payload.Object != secret || full.Record.Provenance.Sources[0].Ref != "vault://"+secret ||
		full.Record.ContestEvidence[0] != "https://x/"+secret || r.Status != "CONTESTED" {
		t.Fatalf("decrypted = %+v", full.Record)
	}
	if a := full.Record.AuditLog.Nodes; len(a) != 2 || a[0].ActorDetail != secret || !strings.Contains(a[1].Rationale, secret) {
		t.Fatalf("audit = %+v", a)
	}
	// Revisions keep working on sealed records.
	sup := factInput(scope, "rotated")
	sup["sensitivity"] = "HIGH"
	c.Do(supersedeQ, map[string]any{"old": id, "in": sup}, nil)
	if got := c.get(id); got.Status != "SUPERSEDED" {
		t.Fatalf("after supersede = %+v", got)
	}
}

func TestSensitiveRecordsRefusedWithoutAKey(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	db, err := neo4j.Open(ctx, neo4j.Config{URI: os.Getenv("NEO4J_URI"), Database: "neo4j"}) // no Sealer: no keys
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	w := gqltest.NewWiring(db, nil)
	w.Stores.Retrieval, w.Stores.Captures = nil, nil
	srv := httptest.NewServer(membranehttp.NewHandler(w.Resolver(), db, membrane.NewKeyring(nil), slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()
	c := &client{&gqltest.Client{T: t, URL: srv.URL, DB: db}}
	scope := neo4jtest.Scope(t)
	for _, sens := range []string{"HIGH", "HYPER"} {
		in := factInput(scope, "secret")
		in["sensitivity"] = sens
		errs := c.Fail("FAILED_PRECONDITION", `mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, map[string]any{"in": in})
		if !strings.Contains(errs[0].Message, "encryption key") {
			t.Fatalf("message = %q", errs[0].Message)
		}
	}
	c.Do(`mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, map[string]any{"in": factInput(scope, "fine")}, nil)
	if n := c.Count(scope); n != 1 {
		t.Fatalf("records = %d, want only the medium one", n)
	}
}
