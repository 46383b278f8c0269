package http_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// drawn is a graph as a download or the graph query gives it, in one form
// for comparison: nodes and edges by id, each with its attributes.
type drawn struct {
	truncated bool
	nodes     map[string]map[string]string
	edges     map[string]map[string]string
}

func (d drawn) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "truncated=%v\n", d.truncated)
	for _, m := range []map[string]map[string]string{d.nodes, d.edges} {
		var ids []string
		for id := range m {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			var kv []string
			for k, v := range m[id] {
				kv = append(kv, k+"="+v)
			}
			sort.Strings(kv)
			fmt.Fprintf(&b, "%s %s\n", id, strings.Join(kv, " "))
		}
	}
	return b.String()
}

// queried is the graph query's answer for the same arguments, as c sees it.
func queried(c *client, roots []string, hops int) drawn {
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
	d := drawn{truncated: out.Graph.Truncated, nodes: map[string]map[string]string{}, edges: map[string]map[string]string{}}
	for _, n := range out.Graph.Nodes {
		r := n.Record
		d.nodes[r.ID] = map[string]string{"caption": r.Caption, "type": r.Type, "status": r.Status, "sensitivity": r.Sensitivity,
			"redacted": strconv.FormatBool(r.Redacted), "depth": strconv.Itoa(n.Depth)}
	}
	for _, e := range out.Graph.Edges {
		d.edges[e.ID] = map[string]string{"source": e.SourceID, "target": e.TargetID, "predicate": e.Predicate,
			"weight": strconv.FormatFloat(e.Weight, 'g', -1, 64)}
	}
	return d
}

// parseCytoscape decodes a /graph.cyjs body.
func parseCytoscape(t *testing.T, body []byte) drawn {
	t.Helper()
	var doc struct {
		Truncated *bool
		Elements  struct {
			Nodes []struct {
				Data struct {
					ID, Caption, Type, Status, Sensitivity string
					Redacted                               *bool
					Depth                                  *int
				}
			}
			Edges []struct {
				Data struct {
					ID, Source, Target, Predicate string
					Weight                        *float64
				}
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil || doc.Truncated == nil {
		t.Fatalf("not Cytoscape JSON (%v): %s", err, body)
	}
	d := drawn{truncated: *doc.Truncated, nodes: map[string]map[string]string{}, edges: map[string]map[string]string{}}
	for _, n := range doc.Elements.Nodes {
		x := n.Data
		if x.Redacted == nil || x.Depth == nil {
			t.Fatalf("node without redacted or depth: %s", body)
		}
		d.nodes[x.ID] = map[string]string{"caption": x.Caption, "type": x.Type, "status": x.Status, "sensitivity": x.Sensitivity,
			"redacted": strconv.FormatBool(*x.Redacted), "depth": strconv.Itoa(*x.Depth)}
	}
	for _, e := range doc.Elements.Edges {
		x := e.Data
		if x.Weight == nil {
			t.Fatalf("edge without weight: %s", body)
		}
		d.edges[x.ID] = map[string]string{"source": x.Source, "target": x.Target, "predicate": x.Predicate,
			"weight": strconv.FormatFloat(*x.Weight, 'g', -1, 64)}
	}
	return d
}

// parseGraphML decodes a /graph.graphml body, checking that every data
// element names a key declared for its element kind.
func parseGraphML(t *testing.T, body []byte) drawn {
	t.Helper()
	type data struct {
		Key   string `xml:"key,attr"`
		Value string `xml:",chardata"`
	}
	var doc struct {
		XMLName xml.Name
		Keys    []struct {
			ID   string `xml:"id,attr"`
			For  string `xml:"for,attr"`
			Name string `xml:"attr.name,attr"`
			Type string `xml:"attr.type,attr"`
		} `xml:"key"`
		Graph struct {
			EdgeDefault string `xml:"edgedefault,attr"`
			Data        []data `xml:"data"`
			Nodes       []struct {
				ID   string `xml:"id,attr"`
				Data []data `xml:"data"`
			} `xml:"node"`
			Edges []struct {
				ID     string `xml:"id,attr"`
				Source string `xml:"source,attr"`
				Target string `xml:"target,attr"`
				Data   []data `xml:"data"`
			} `xml:"edge"`
		} `xml:"graph"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatalf("not XML (%v): %s", err, body)
	}
	if doc.XMLName.Space != "http://graphml.graphdrawing.org/xmlns" || doc.XMLName.Local != "graphml" || doc.Graph.EdgeDefault != "directed" {
		t.Fatalf("not a directed GraphML graph: %s", body)
	}
	keys := map[string]string{} // id -> "for/name"
	for _, k := range doc.Keys {
		if _, dup := keys[k.ID]; dup || k.Name == "" || k.Type == "" {
			t.Fatalf("key %+v duplicated or incomplete", k)
		}
		keys[k.ID] = k.For + "/" + k.Name
	}
	attrs := func(kind string, ds []data) map[string]string {
		m := map[string]string{}
		for _, x := range ds {
			fn, ok := keys[x.Key]
			name, found := strings.CutPrefix(fn, kind+"/")
			if !ok || !found {
				t.Fatalf("%s data with key %q, not declared for %s", kind, x.Key, kind)
			}
			m[name] = x.Value
		}
		return m
	}
	d := drawn{truncated: attrs("graph", doc.Graph.Data)["truncated"] == "true", nodes: map[string]map[string]string{}, edges: map[string]map[string]string{}}
	for _, n := range doc.Graph.Nodes {
		d.nodes[n.ID] = attrs("node", n.Data)
	}
	for _, e := range doc.Graph.Edges {
		m := attrs("edge", e.Data)
		m["source"], m["target"] = e.Source, e.Target
		d.edges[e.ID] = m
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
		parse             func(*testing.T, []byte) drawn
	}{
		{"/graph.cyjs", "application/json", parseCytoscape},
		{"/graph.graphml", "application/graphml+xml", parseGraphML},
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
				if len(got.nodes) != caller.nodes {
					t.Fatalf("%d nodes, want %d:\n%s", len(got.nodes), caller.nodes, got)
				}
				if caller.name != "reader" {
					return
				}
				for _, n := range []string{"hidden", "behind"} {
					if bytes.Contains(res.Body, []byte(ids[n])) {
						t.Errorf("the download names %s: %s", n, res.Body)
					}
				}
				if bytes.Contains(res.Body, []byte("secret-red")) || got.nodes[ids["red"]]["redacted"] != "true" ||
					got.nodes[ids["red"]]["caption"] != "semantic (redacted)" {
					t.Errorf("the redacted record is not shown redacted: %s", res.Body)
				}
			})
		}
	}

	t.Run("filters", func(t *testing.T) {
		res := c.Send(http.MethodGet, "/graph.cyjs?roots="+url.QueryEscape(ids["root"])+"&predicates=SUPPORTS,USES&direction=OUT&hops=2&limit=10&asOf=2100-01-01T00:00:00Z", nil, nil)
		got := parseCytoscape(t, res.Body)
		if len(got.nodes) != 2 || got.nodes[ids["red"]] == nil || len(got.edges) != 1 {
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
