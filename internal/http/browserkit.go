package http

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/membrane/membrane/cypher"
)

// The Neo4j Browser kit: a GRASS stylesheet and a guide whose slides run
// the analyst queries of cypher/analyst (docs/data-model.md, "Queries for
// Neo4j Browser").
//
//go:embed browserkit/style.grass browserkit/guide.html.tmpl
var browserKit embed.FS

// browserParam is a query file's ":param name => 'value'" comment line.
var browserParam = regexp.MustCompile(`^//\s*(:param\s+\w+\s*=>.*)$`)

// guideQuery is one slide of the guide.
type guideQuery struct {
	File, Title, About, Query string
	Params                    []string
}

// browserKitHandler serves /browser/style.grass and /browser/guide.html.
// Both are public (no key: they hold no data, only the published
// stylesheet and queries) and readable from any origin, preflights
// included, whatever the API's CORS settings (NewHandler routes them past
// cors): Browser fetches them from its own (http://127.0.0.1:7474), and
// nothing is sent with credentials. The guide's links point back at the host the request
// came to.
func browserKitHandler() http.Handler {
	style, err := browserKit.ReadFile("browserkit/style.grass")
	if err != nil {
		panic(err) // embedded at build time
	}
	guide := template.Must(template.ParseFS(browserKit, "browserkit/guide.html.tmpl"))
	queries := guideQueries()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /browser/style.grass", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(style)
	})
	mux.HandleFunc("GET /browser/guide.html", func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		var b bytes.Buffer
		if err := guide.Execute(&b, map[string]any{"Base": scheme + "://" + r.Host, "Queries": queries}); err != nil {
			http.Error(w, "guide", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(b.Bytes())
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
			h.Set("Access-Control-Allow-Headers", r.Header.Get("Access-Control-Request-Headers"))
			w.WriteHeader(http.StatusNoContent)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// guideQueries are the analyst queries, overview first, then by file name:
// each file's leading comment is its slide's text, its ":param" comment
// lines are runnable beside it.
func guideQueries() []guideQuery {
	files := cypher.Analyst()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if (a == "overview.cypher") != (b == "overview.cypher") {
			if a == "overview.cypher" {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	out := make([]guideQuery, 0, len(names))
	for _, name := range names {
		q := guideQuery{File: name, Title: strings.ReplaceAll(strings.TrimSuffix(name, ".cypher"), "_", " ")}
		var about, body []string
		for _, line := range strings.Split(files[name], "\n") {
			switch m := browserParam.FindStringSubmatch(strings.TrimSpace(line)); {
			case m != nil:
				q.Params = append(q.Params, m[1])
			case strings.HasPrefix(strings.TrimSpace(line), "//") && len(body) == 0:
				about = append(about, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "//")))
			default:
				body = append(body, line)
			}
		}
		q.About, q.Query = strings.Join(about, " "), strings.TrimSpace(strings.Join(body, "\n"))
		if q.Title != "" {
			q.Title = strings.ToUpper(q.Title[:1]) + q.Title[1:]
		}
		out = append(out, q)
	}
	return out
}
