package gqltest

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Drawing is a graph as a download (/graph.cyjs, /graph.graphml) or the
// graph query gives it, in one form for comparison: nodes and edges by id,
// each with its attributes as text.
type Drawing struct {
	Truncated bool
	Nodes     map[string]map[string]string
	Edges     map[string]map[string]string
}

// String is the drawing sorted, one line a node or edge, so that two
// drawings compare as text.
func (d Drawing) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "truncated=%v\n", d.Truncated)
	for _, m := range []map[string]map[string]string{d.Nodes, d.Edges} {
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

// ParseCytoscape decodes a /graph.cyjs body, failing t on any field the
// download does not define.
func ParseCytoscape(t testing.TB, body []byte) Drawing {
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
	d := Drawing{Truncated: *doc.Truncated, Nodes: map[string]map[string]string{}, Edges: map[string]map[string]string{}}
	for _, n := range doc.Elements.Nodes {
		x := n.Data
		if x.Redacted == nil || x.Depth == nil {
			t.Fatalf("node without redacted or depth: %s", body)
		}
		d.Nodes[x.ID] = map[string]string{"caption": x.Caption, "type": x.Type, "status": x.Status, "sensitivity": x.Sensitivity,
			"redacted": strconv.FormatBool(*x.Redacted), "depth": strconv.Itoa(*x.Depth)}
	}
	for _, e := range doc.Elements.Edges {
		x := e.Data
		if x.Weight == nil {
			t.Fatalf("edge without weight: %s", body)
		}
		d.Edges[x.ID] = map[string]string{"source": x.Source, "target": x.Target, "predicate": x.Predicate,
			"weight": strconv.FormatFloat(*x.Weight, 'g', -1, 64)}
	}
	return d
}

// ParseGraphML decodes a /graph.graphml body, checking that every data
// element names a key declared for its element kind.
func ParseGraphML(t testing.TB, body []byte) Drawing {
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
	d := Drawing{Truncated: attrs("graph", doc.Graph.Data)["truncated"] == "true", Nodes: map[string]map[string]string{}, Edges: map[string]map[string]string{}}
	for _, n := range doc.Graph.Nodes {
		d.Nodes[n.ID] = attrs("node", n.Data)
	}
	for _, e := range doc.Graph.Edges {
		m := attrs("edge", e.Data)
		m["source"], m["target"] = e.Source, e.Target
		d.Edges[e.ID] = m
	}
	return d
}
