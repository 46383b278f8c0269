package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// emptyAllowed are the response lists that may be empty, with why: every
// other empty list in an example's answer fails the test.
var emptyAllowed = map[string]string{
	"selected": "retrieve's selection picks among competences and plans; the examples create none before Recall",
}

// codeBlocks returns the fenced code blocks of markdown whose info string
// is lang, in order.
func codeBlocks(markdown, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?ms)^```"+regexp.QuoteMeta(lang)+"\n(.*?)^```").FindAllStringSubmatch(markdown, -1) {
		out = append(out, m[1])
	}
	return out
}

// example is what the README's examples have created so far: the ids
// their aliased fields returned (<alias.id>), and the literals made unique
// to this run, so that they read only what this run wrote in the shared
// database.
type example struct {
	ids     map[string]string
	renamed map[string]string
}

// fill replaces, in text, the literals of this run and the <alias.id>
// placeholders already known.
func (e *example) fill(text string) string {
	for from, to := range e.renamed {
		text = strings.ReplaceAll(text, `"`+from+`"`, `"`+to+`"`)
		text = strings.ReplaceAll(text, `'`+from+`'`, `'`+to+`'`)
	}
	for name, id := range e.ids {
		text = strings.ReplaceAll(text, "<"+name+">", id)
	}
	return text
}

// placeholder matches what fill leaves when an example names a record no
// earlier example returned.
var placeholder = regexp.MustCompile(`<[a-zA-Z]+\.id>`)

// TestREADMEExamples runs every GraphQL example of README.md in order
// against a server in dev mode, as a new user would paste them into
// GraphiQL, and fails on any error or empty answer; then every query for
// Neo4j Browser in docs/data-model.md and cypher/analyst/ against the data
// they created, each of which must return a row. The examples' scope, agent
// and subject get a suffix of this run, so that the queries find this run's
// data and not what other tests left in the shared database.
func TestREADMEExamples(t *testing.T) {
	scope := neo4jtest.Scope(t)
	srv := apptest.Start(t, apptest.Options{EncryptionKey: apptest.SealKey(),
		Env: []string{"MEMBRANE_JOBS_SCOPES=" + scope}})
	suffix := strings.ToLower(membrane.NewID()[24:])
	ex := &example{ids: map[string]string{}, renamed: map[string]string{
		"project:alpha": scope, "agent-1": "agent-1-" + suffix, "auth-service": "auth-service-" + suffix}}

	// Full-text indexes apply a commit just after it: queries wait for them
	// (await_search) instead of finding nothing yet.
	drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(context.Background())
	awaitSearch := func(t *testing.T) {
		t.Helper()
		if _, err := driver.ExecuteQuery(t.Context(), drv, cypher.Must("await_search"), nil, driver.EagerResultTransformer); err != nil {
			t.Fatal(err)
		}
	}

	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := codeBlocks(string(readme), "graphql")
	if len(blocks) < 3 {
		t.Fatalf("README.md has %d graphql blocks", len(blocks))
	}
	ran := 0
	for _, block := range blocks {
		doc, perr := parser.ParseQuery(&ast.Source{Input: block})
		if perr != nil {
			t.Fatalf("README example does not parse: %v\n%s", perr, block)
		}
		for i, op := range doc.Operations {
			if op.Name == "" && len(doc.Operations) > 1 {
				t.Fatalf("README block with several operations has an anonymous one (GraphiQL cannot run it):\n%s", block)
			}
			// The operation's own text: only its placeholders must be
			// known (a later one in the block may name what this creates).
			text := block[op.Position.Start:]
			if i+1 < len(doc.Operations) {
				text = block[op.Position.Start:doc.Operations[i+1].Position.Start]
			}
			ran++
			t.Run(op.Name, func(t *testing.T) {
				if m := placeholder.FindString(ex.fill(text)); m != "" {
					t.Fatalf("%s names %s, which no earlier example returned", op.Name, m)
				}
				if op.Operation == ast.Query {
					awaitSearch(t)
				}
				ex.run(t, srv.URL, block, op)
			})
		}
	}
	if ran == 0 || t.Failed() {
		return
	}

	awaitSearch(t)
	dataModel, err := os.ReadFile("docs/data-model.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(dataModel)
	i := strings.Index(section, "## Queries for Neo4j Browser")
	if i < 0 {
		t.Fatal(`docs/data-model.md has no section "Queries for Neo4j Browser"`)
	}
	section = section[i:]
	params := map[string]any{} // as in Browser: a :param stays set for the queries after it
	queries := codeBlocks(section, "cypher")
	if len(queries) < 10 {
		t.Fatalf("docs/data-model.md: %d cypher blocks for Browser", len(queries))
	}
	for n, block := range queries {
		t.Run(fmt.Sprintf("data-model.md query %d", n+1), func(t *testing.T) {
			ex.analystQuery(t, drv, block, params)
		})
	}
	for name, q := range cypher.Analyst() {
		t.Run("cypher/analyst/"+name, func(t *testing.T) {
			ex.analystQuery(t, drv, q, map[string]any{})
		})
	}
}

// run sends op of the README block as POST /graphql, records the ids of
// its aliased root fields, and fails on an error or an empty answer.
func (e *example) run(t *testing.T, url, block string, op *ast.OperationDefinition) {
	t.Helper()
	data := postGraphQL(t, e.fill(block), url, op.Name)
	if empty := emptyIn(data, ""); empty != "" {
		t.Fatalf("%s: empty answer at %s: %v", op.Name, empty, data)
	}
	for _, sel := range op.SelectionSet {
		if f, ok := sel.(*ast.Field); ok && f.Alias != f.Name {
			if m, ok := data[f.Alias].(map[string]any); ok {
				if id, ok := m["id"].(string); ok {
					e.ids[f.Alias+".id"] = id
				}
			}
		}
	}
}

// postGraphQL runs the named operation of query and returns its data,
// failing on any error.
func postGraphQL(t *testing.T, query, url, name string) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "operationName": name})
	resp, err := http.Post(url+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data   map[string]any   `json:"data"`
		Errors []map[string]any `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: HTTP %d: %v", name, resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK || len(out.Errors) > 0 {
		t.Fatalf("%s: HTTP %d, errors %v", name, resp.StatusCode, out.Errors)
	}
	return out.Data
}

// emptyIn returns the path of the first null root field or empty list in
// v (but those emptyAllowed), or "" when there is none.
func emptyIn(v any, path string) string {
	switch v := v.(type) {
	case nil:
		if !strings.Contains(path[1:], ".") {
			return path // a root field is null
		}
	case map[string]any:
		for k, x := range v {
			if p := emptyIn(x, path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		name := path[strings.LastIndex(path, ".")+1:]
		if _, ok := emptyAllowed[name]; len(v) == 0 && !ok {
			return path
		}
		for i, x := range v {
			if p := emptyIn(x, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// paramLine is Browser's :param command as the docs write it, alone on
// its line or after "// " in a .cypher file.
var paramLine = regexp.MustCompile(`^(?://\s*)?:param\s+(\w+)\s*=>\s*'([^']*)'\s*$`)

// analystQuery runs a query for Neo4j Browser (its :param lines set
// params first) read-only and fails unless it returns a row.
func (e *example) analystQuery(t *testing.T, drv driver.DriverWithContext, block string, params map[string]any) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(e.fill(block), "\n") {
		if m := paramLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			if p := placeholder.FindString(m[2]); p != "" {
				t.Fatalf("parameter %s is %s, which no README example returned", m[1], p)
			}
			params[m[1]] = m[2]
			continue
		}
		lines = append(lines, l)
	}
	query := strings.TrimSpace(strings.Join(lines, "\n"))
	res, err := driver.ExecuteQuery(t.Context(), drv, query, params, driver.EagerResultTransformer,
		driver.ExecuteQueryWithReadersRouting())
	if err != nil {
		t.Fatalf("%v\n%s", err, query)
	}
	if len(res.Records) == 0 {
		t.Fatalf("no row (params %v):\n%s", params, query)
	}
}
