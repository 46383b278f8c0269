package neo4j

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

// Statement is one Cypher statement the store fills from a template in
// cypher/ (its __NAME__ placeholders replaced by fixed fragments and
// values): the text that is sent to Neo4j.
type Statement struct {
	// Template is the name of the cypher/ file the statement is filled
	// from (without .cypher).
	Template string
	// Variant names the fill values; empty for a template of one form.
	Variant string
	// Text is the statement as it runs.
	Text string
}

// expandedDims is the vector dimensions Expanded fills vector_index with:
// the default embedder's (internal/config). Any valid value fills alike.
const expandedDims = 1536

// Expanded returns every statement the store fills from a template, in
// every variant: each fixed fill value and, for a numeric fill (lineage
// depth, graph hops, vector dimensions), a representative value. The
// statements are the very ones the store runs, or filled by the functions that fill them
// at run time, so the list cannot drift from what runs; TestCypherGolden
// keeps their text in cypher/expanded/ and has Neo4j plan each of them.
// Sorted by template, then variant.
func Expanded() []Statement {
	var out []Statement
	add := func(template, variant, text string) {
		out = append(out, Statement{Template: template, Variant: variant, Text: text})
	}
	add("record_as_of", "", recordAsOf)
	for _, asOf := range []*time.Time{nil, {}} {
		state := "state=" + stateName(asOf != nil)
		add("neighbors", state, neighborsStmt.at(asOf))
		add("supersede_chain", state, supersedeChain.at(asOf))
		for dir := range lineageArrows {
			add("lineage", fmt.Sprintf("direction=%s maxDepth=%d %s", dir, membrane.MaxLineageDepth, state),
				lineageStatement(dir, membrane.MaxLineageDepth, asOf))
		}
		for dir := range lineageArrows {
			add("graph", fmt.Sprintf("direction=%s hops=%d %s", dir, membrane.MaxGraphHops, state), graphStatement(dir, membrane.MaxGraphHops, asOf))
		}
	}
	add("retrieve_records_as_of", "", retrieveRecordsAsOf)
	for name, byOrder := range auditStatements {
		for o, text := range byOrder {
			add(name, "order="+string(o), text)
		}
	}
	add("vector_index", fmt.Sprintf("dims=%d", expandedDims), vectorIndexStatement(expandedDims))
	for key, text := range retrieveStatements {
		hits, state, _ := strings.Cut(key, "/")
		add("retrieve_candidates", "hits="+hits+" state="+state, text)
	}
	for name, counts := range map[string]map[countVariant]string{"records_count": recordsCount, "records_count_as_of": recordsCountAt} {
		for v, text := range counts {
			add(name, fmt.Sprintf("scoped=%t text=%t", v.scoped, v.text), text)
		}
	}
	for name, pages := range map[string]map[variant]string{"records_page": recordsPage, "records_page_as_of": recordsPageAt} {
		for v, text := range pages {
			add(name, fmt.Sprintf("scoped=%t text=%t order=%s descending=%t", v.scoped, v.text, v.order.Field, v.order.Descending), text)
		}
	}
	for desc, text := range recordsPageScoped {
		add("records_page_scoped", fmt.Sprintf("order=%s descending=%t", membrane.OrderCreatedAt, desc), text)
	}
	for _, s := range []sweep{decaySweep, compressEpisodes, duplicateFacts, pruneSweep, embedMissing} {
		add(s.name, "records=all", s.all)
		add(s.name, "records=scopes", s.scoped)
	}
	slices.SortFunc(out, func(a, b Statement) int {
		return cmp.Or(strings.Compare(a.Template, b.Template), strings.Compare(a.Variant, b.Variant))
	})
	return out
}
