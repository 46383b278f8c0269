package http_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// queried is the graph query's answer for the same arguments, as c sees it.
func queried(c *client, roots []string, hops int) gqltest.Drawing {
	c.T.Helper()
	var out struct {
		Graph struct {
			Truncated bool
			Nodes     []struct {
				Depth  int
				Record struct {
					ID, Caption, Type, Status, Sensitivity string
					Redacted                               bool
				}
			}
			Edges []struct {
				ID, SourceID, TargetID, Predicate string
				Weight                            float64
			}
		}
	}
	c.Do(`query($r: [ID!]!, $h: Int) { graph(roots: $r, hops: $h) { truncated
	  nodes { depth record { id caption type status sensitivity redacted } }
	  edges { id sourceId targetId predicate weight } } }`, map[string]any{"r": roots, "h": hops}, &out)
	d := gqltest.Drawing{Truncated: out.Graph.Truncated, Nodes: map[string]map[string]string{}, Edges: map[string]map[string]string{}}
	for _, n := range out.Graph.Nodes {
		r := n.Record
		d.Nodes[r.ID] = map[string]string{"caption": r.Caption, "type": r.Type, "status": r.Status, "sensitivity": r.Sensitivity,
			"redacted": strconv.FormatBool(r.Redacted), "depth": strconv.Itoa(n.Depth)}
	}
	for _, e := range out.Graph.Edges {
		d.Edges[e.ID] = map[string]string{"source": e.SourceID, "target": e.TargetID, "predicate": e.Predicate,
			"weight": strconv.FormatFloat(e.Weight, 'g', -1, 64)}
	}
	return d
}

func TestGraphDownloads(t *testing.T) {
	scope := neo4jtest.Scope(t)
	reader := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{scope}}
	c := gqltest.New(t, reader)
	r := c.As(reader.Actor)
	ids := map[string]string{}
	for _, n := range []struct{ name, sensitivity string }{
		{"root", "LOW"}, {"red", "HIGH"}, {"hidden", "HYPER"}, {"behind", "LOW"}, {"shown", "MEDIUM"},
	} {
		ids[n.name] = c.Create(scope, "SEMANTIC", gqltest.Fact("secret-"+n.name+` <&">`), map[string]any{"sensitivity": n.sensitivity})
	}
	for _, e := range [][3]string{{"root", "USES", "red"}, {"root", "DEPENDS_ON", "hidden"}, {"hidden", "MENTIONS", "behind"}, {"shown", "SUPPORTS", "root"}} {
		c.Do(`mutation($s: ID!, $p: RelationPredicate!, $t: ID!) { addRelation(sourceId: $s, predicate: $p, targetId: $t, weight: 0.25) { sourceId } }`,
			map[string]any{"s": ids[e[0]], "p": e[1], "t": ids[e[2]]}, nil)
	}
	formats := []struct {
		path, contentType string
		parse             func(testing.TB, []byte) gqltest.Drawing
	}{
		{"/graph.cyjs", "application/json", gqltest.ParseCytoscape},
		{"/graph.graphml", "application/graphml+xml", gqltest.ParseGraphML},
	}
	for _, f := range formats {
		for _, caller := range []struct {
			name  string
			c     *client
			nodes int
		}{{"admin", c, 5}, {"reader", r, 3}} {
			t.Run(f.path+" as "+caller.name, func(t *testing.T) {
				res := caller.c.Send(http.MethodGet, f.path+"?roots="+url.QueryEscape(ids["root"])+"&hops=3", nil, nil)
				if res.Status != http.StatusOK || res.Header.Get("Content-Type") != f.contentType {
					t.Fatalf("status %d, Content-Type %q: %s", res.Status, res.Header.Get("Content-Type"), res.Body)
				}
				got := f.parse(t, res.Body)
				// The download is the query's answer, in another form.
				if want := queried(caller.c, []string{ids["root"]}, 3); got.String() != want.String() {
					t.Fatalf("download:\n%s\nthe graph query:\n%s", got, want)
				}
				if len(got.Nodes) != caller.nodes {
					t.Fatalf("%d nodes, want %d:\n%s", len(got.Nodes), caller.nodes, got)
				}
				if caller.name != "reader" {
					return
				}
				for _, n := range []string{"hidden", "behind"} {
					if bytes.Contains(res.Body, []byte(ids[n])) {
						t.Errorf("the download names %s: %s", n, res.Body)
					}
				}
				if bytes.Contains(res.Body, []byte("secret-red")) || got.Nodes[ids["red"]]["redacted"] != "true" ||
					got.Nodes[ids["red"]]["caption"] != "semantic (redacted)" {
					t.Errorf("the redacted record is not shown redacted: %s", res.Body)
				}
			})
		}
	}

	t.Run("filters", func(t *testing.T) {
		res := c.Send(http.MethodGet, "/graph.cyjs?roots="+url.QueryEscape(ids["root"])+"&predicates=SUPPORTS,USES&direction=OUT&hops=2&limit=10&asOf=2100-01-01T00:00:00Z", nil, nil)
		got := gqltest.ParseCytoscape(t, res.Body)
		if len(got.Nodes) != 2 || got.Nodes[ids["red"]] == nil || len(got.Edges) != 1 {
			t.Fatalf("root's OUT edges of SUPPORTS and USES: %s", got)
		}
	})

	t.Run("errors", func(t *testing.T) {
		anon := *c
		anon.Key = ""
		wrong := *c
		wrong.Key = "not-a-key"
		missing := membrane.NewID()
		notFound := r.Send(http.MethodGet, "/graph.cyjs?roots="+missing, nil, nil)
		for _, tc := range []struct {
			name   string
			c      *client
			method string
			query  string
			status int
			code   string
		}{
			{"no key", &anon, http.MethodGet, "roots=" + ids["root"], http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"wrong key", &wrong, http.MethodGet, "roots=" + ids["root"], http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"no roots", c, http.MethodGet, "", http.StatusBadRequest, "BAD_USER_INPUT"},
			{"hops not a number", c, http.MethodGet, "roots=" + ids["root"] + "&hops=two", http.StatusBadRequest, "BAD_USER_INPUT"},
			{"hops over the bound", c, http.MethodGet, "roots=" + ids["root"] + "&hops=11", http.StatusBadRequest, "BAD_USER_INPUT"},
			{"limit over the bound", c, http.MethodGet, "roots=" + ids["root"] + "&limit=2001", http.StatusBadRequest, "BAD_USER_INPUT"},
			{"unknown predicate", c, http.MethodGet, "roots=" + ids["root"] + "&predicates=LIKES", http.StatusBadRequest, "BAD_USER_INPUT"},
			{"predicate not as the schema spells it", c, http.MethodGet, "roots=" + ids["root"] + "&predicates=uses", http.StatusBadRequest, "BAD_USER_INPUT"},
			{"unknown direction", c, http.MethodGet, "roots=" + ids["root"] + "&direction=UP", http.StatusBadRequest, "BAD_USER_INPUT"},
			{"asOf not a date-time", c, http.MethodGet, "roots=" + ids["root"] + "&asOf=yesterday", http.StatusBadRequest, "BAD_USER_INPUT"},
			{"POST", c, http.MethodPost, "roots=" + ids["root"], http.StatusMethodNotAllowed, "BAD_USER_INPUT"},
			{"missing root", r, http.MethodGet, "roots=" + missing, http.StatusNotFound, "NOT_FOUND"},
			{"invisible root", r, http.MethodGet, "roots=" + ids["root"] + "," + ids["hidden"], http.StatusNotFound, "NOT_FOUND"},
		} {
			for _, path := range []string{"/graph.cyjs", "/graph.graphml"} {
				t.Run(tc.name+" "+path, func(t *testing.T) {
					res := tc.c.Send(tc.method, path+"?"+tc.query, nil, nil)
					if res.Status != tc.status || res.Code() != tc.code {
						t.Fatalf("status %d code %q, want %d %s: %s", res.Status, res.Code(), tc.status, tc.code, res.Body)
					}
					if tc.name == "invisible root" {
						got := strings.ReplaceAll(res.Errors[0].Message, ids["hidden"], missing)
						if want := notFound.Errors[0].Message; got != want {
							t.Fatalf("message %q, a missing root's %q", res.Errors[0].Message, want)
						}
					}
				})
			}
		}
	})
}
