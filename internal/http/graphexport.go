package http

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The graph downloads: the graph query's answer as a file a dashboard or a
// graph tool loads as it is. They read through the same application
// service as the query (ReadService.Graph), under the request's trust, so
// a download shows exactly what the query would.
const (
	// PathGraphCytoscape serves Cytoscape.js JSON (cy.json()'s elements).
	PathGraphCytoscape = "/graph.cyjs"
	// PathGraphML serves GraphML.
	PathGraphML = "/graph.graphml"
)

// graphReader is the read the downloads make.
type graphReader interface {
	Graph(ctx context.Context, q membrane.ExportQuery) (*membrane.Lineage, error)
}

// graphDownload answers GET requests for the graph of the query string's
// roots, hops, predicates, direction, asOf and limit (the graph query's
// arguments; lists comma-separated or repeated, enum values as in the
// schema), written by write. Errors are the JSON of a GraphQL error with
// its code, as /graphql answers them.
func graphDownload(read graphReader, timeout time.Duration, log *slog.Logger, contentType, filename string,
	write func(http.ResponseWriter, *membrane.Lineage) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, membrane.EINVALID, "use GET")
			return
		}
		if deferred, _ := r.Context().Value(deferredAuthKey{}).(bool); deferred {
			// A WebSocket upgrade without a key: authenticate let it
			// through for connection_init, which a download has none of.
			writeError(w, http.StatusUnauthorized, membrane.EUNAUTHORIZED, "missing API key: send Authorization: Bearer <key>")
			return
		}
		q, err := exportQuery(r)
		if err != nil {
			writeServiceError(w, r, log, err)
			return
		}
		ctx := r.Context()
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		g, err := read.Graph(ctx, q)
		if err != nil {
			writeServiceError(w, r, log, err)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Disposition", `attachment; filename="`+filename+`"`)
		if err := write(w, g); err != nil {
			log.DebugContext(ctx, "graph download not written", "err", err)
		}
	})
}

// exportQuery reads the graph query's arguments from r's query string.
func exportQuery(r *http.Request) (membrane.ExportQuery, error) {
	v := r.URL.Query()
	list := func(name string) []string {
		var out []string
		for _, s := range v[name] {
			for _, p := range strings.Split(s, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
		}
		return out
	}
	var bad []membrane.FieldError
	integer := func(name string) *int64 {
		s := v.Get(name)
		if s == "" {
			return nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			bad = append(bad, membrane.FieldError{Field: name, Message: "must be an integer"})
			return nil
		}
		return &n
	}
	hops, limit := integer("hops"), integer("limit")
	var preds []membrane.Predicate
	for _, p := range list("predicates") {
		// The schema's enum values (SUPERSEDES) name the predicates.
		pred := membrane.PredicateOfRelType(p)
		if p != strings.ToUpper(p) || !pred.Valid() {
			bad = append(bad, membrane.FieldError{Field: "predicates", Message: "unknown predicate " + strconv.Quote(p)})
			continue
		}
		preds = append(preds, pred)
	}
	var dir *membrane.Direction
	if s := v.Get("direction"); s != "" {
		d := membrane.Direction(strings.ToLower(s))
		if s != strings.ToUpper(s) || !d.Valid() {
			bad = append(bad, membrane.FieldError{Field: "direction", Message: "must be OUT, IN or BOTH"})
		}
		dir = &d
	}
	var asOf *time.Time
	if s := v.Get("asOf"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			bad = append(bad, membrane.FieldError{Field: "asOf", Message: "must be an RFC 3339 date-time"})
		}
		asOf = &t
	}
	if len(bad) > 0 {
		return membrane.ExportQuery{}, &membrane.Error{Code: membrane.EINVALID, Message: "invalid input: " + bad[0].Field + ": " + bad[0].Message, Fields: bad}
	}
	return membrane.NewExportQuery(list("roots"), hops, preds, dir, limit, asOf)
}

// serviceStatus is the HTTP status of a service error's code.
var serviceStatus = map[string]int{
	membrane.EINVALID:      http.StatusBadRequest,
	membrane.ENOTFOUND:     http.StatusNotFound,
	membrane.EFORBIDDEN:    http.StatusForbidden,
	membrane.EUNAUTHORIZED: http.StatusUnauthorized,
	membrane.ETIMEOUT:      http.StatusGatewayTimeout,
	membrane.EUNAVAILABLE:  http.StatusServiceUnavailable,
}

// writeServiceError answers with a service error exactly as /graphql
// presents it (graph.PresentError: the public code and caller-safe
// message, internal errors logged, a client that hung up not counted as a
// failure), with the HTTP status of its code.
func writeServiceError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status, ok := serviceStatus[membrane.ErrorCode(err)]
	if !ok {
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, map[string]any{"errors": []*gqlerror.Error{graph.PresentError(log)(r.Context(), err)}})
}

// enumValue is a domain value as the schema spells it (plan_graph:
// PLAN_GRAPH), so that a download reads like the query's answer.
func enumValue[T ~string](v T) string { return strings.ToUpper(string(v)) }

// cytoscape is the Cytoscape.js JSON of a graph: cy.add(elements) or
// cytoscape({elements}) draws it. Truncated says a limit cut the graph.
type cytoscape struct {
	Truncated bool `json:"truncated"`
	Elements  struct {
		Nodes []cyElement[cyNode] `json:"nodes"`
		Edges []cyElement[cyEdge] `json:"edges"`
	} `json:"elements"`
}

type cyElement[T any] struct {
	Data T `json:"data"`
}

type cyNode struct {
	ID          string `json:"id"`
	Caption     string `json:"caption"`
	Type        string `json:"type"`
	Status      string `json:"status"`
	Sensitivity string `json:"sensitivity"`
	Redacted    bool   `json:"redacted"`
	Depth       int    `json:"depth"`
}

type cyEdge struct {
	ID        string  `json:"id"`
	Source    string  `json:"source"`
	Target    string  `json:"target"`
	Predicate string  `json:"predicate"`
	Weight    float64 `json:"weight"`
}

func writeCytoscape(w http.ResponseWriter, g *membrane.Lineage) error {
	var out cytoscape
	out.Truncated = g.Truncated
	out.Elements.Nodes = make([]cyElement[cyNode], 0, len(g.Nodes))
	for _, n := range g.Nodes {
		r := n.Record
		out.Elements.Nodes = append(out.Elements.Nodes, cyElement[cyNode]{cyNode{ID: r.ID, Caption: r.Caption(), Type: enumValue(r.Type),
			Status: enumValue(r.Status), Sensitivity: enumValue(r.Sensitivity), Redacted: r.Redacted, Depth: n.Depth}})
	}
	out.Elements.Edges = make([]cyElement[cyEdge], 0, len(g.Edges))
	for _, e := range g.Edges {
		out.Elements.Edges = append(out.Elements.Edges, cyElement[cyEdge]{cyEdge{ID: e.ID(), Source: e.SourceID, Target: e.TargetID,
			Predicate: enumValue(e.Predicate), Weight: e.Weight}})
	}
	w.WriteHeader(http.StatusOK)
	return json.NewEncoder(w).Encode(out)
}

// GraphML (http://graphml.graphdrawing.org/): every attribute a node or
// edge carries is declared by a key.
type graphML struct {
	XMLName xml.Name     `xml:"graphml"`
	XMLNS   string       `xml:"xmlns,attr"`
	Keys    []graphMLKey `xml:"key"`
	Graph   graphMLGraph `xml:"graph"`
}

type graphMLKey struct {
	ID   string `xml:"id,attr"`
	For  string `xml:"for,attr"`
	Name string `xml:"attr.name,attr"`
	Type string `xml:"attr.type,attr"`
}

type graphMLGraph struct {
	ID          string        `xml:"id,attr"`
	EdgeDefault string        `xml:"edgedefault,attr"`
	Data        []graphMLData `xml:"data"`
	Nodes       []graphMLNode `xml:"node"`
	Edges       []graphMLEdge `xml:"edge"`
}

type graphMLData struct {
	Key   string `xml:"key,attr"`
	Value string `xml:",chardata"`
}

type graphMLNode struct {
	ID   string        `xml:"id,attr"`
	Data []graphMLData `xml:"data"`
}

type graphMLEdge struct {
	ID     string        `xml:"id,attr"`
	Source string        `xml:"source,attr"`
	Target string        `xml:"target,attr"`
	Data   []graphMLData `xml:"data"`
}

// graphMLKeys declares the attributes; key ids are unique across nodes,
// edges and the graph.
var graphMLKeys = []graphMLKey{
	{"truncated", "graph", "truncated", "boolean"},
	{"caption", "node", "caption", "string"},
	{"type", "node", "type", "string"},
	{"status", "node", "status", "string"},
	{"sensitivity", "node", "sensitivity", "string"},
	{"redacted", "node", "redacted", "boolean"},
	{"depth", "node", "depth", "int"},
	{"predicate", "edge", "predicate", "string"},
	{"weight", "edge", "weight", "double"},
}

func writeGraphML(w http.ResponseWriter, g *membrane.Lineage) error {
	doc := graphML{XMLNS: "http://graphml.graphdrawing.org/xmlns", Keys: graphMLKeys,
		Graph: graphMLGraph{ID: "membrane", EdgeDefault: "directed", Data: []graphMLData{{"truncated", strconv.FormatBool(g.Truncated)}}}}
	for _, n := range g.Nodes {
		r := n.Record
		doc.Graph.Nodes = append(doc.Graph.Nodes, graphMLNode{ID: r.ID, Data: []graphMLData{
			{"caption", r.Caption()}, {"type", enumValue(r.Type)}, {"status", enumValue(r.Status)},
			{"sensitivity", enumValue(r.Sensitivity)}, {"redacted", strconv.FormatBool(r.Redacted)}, {"depth", strconv.Itoa(n.Depth)},
		}})
	}
	for _, e := range g.Edges {
		doc.Graph.Edges = append(doc.Graph.Edges, graphMLEdge{ID: e.ID(), Source: e.SourceID, Target: e.TargetID, Data: []graphMLData{
			{"predicate", enumValue(e.Predicate)}, {"weight", strconv.FormatFloat(e.Weight, 'g', -1, 64)},
		}})
	}
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte(xml.Header)); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	return enc.Encode(doc)
}
