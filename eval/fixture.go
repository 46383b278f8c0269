package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

// Fixture is the eval's corpus and its graded queries.
type Fixture struct {
	Records []FixtureRecord `json:"records"`
	Queries []Query         `json:"queries"`
}

// Query is one query with the graded relevance of the fixture's records.
type Query struct {
	Q        string    `json:"q"`
	Relevant Relevance `json:"relevant"`
}

// FixtureRecord is a record in a compact form (see fixture.json).
type FixtureRecord struct {
	Key       string   `json:"key"`
	Type      string   `json:"type"`
	Retracted bool     `json:"retracted"`
	Text      string   `json:"text"`
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`
	Aliases   []string `json:"aliases"`
	Subject   string   `json:"subject"`
	Predicate string   `json:"predicate"`
	Object    string   `json:"object"`
	Event     string   `json:"event"`
	Thread    string   `json:"thread"`
	State     string   `json:"state"`
	Next      []string `json:"next"`
	Questions []string `json:"questions"`
	Skill     string   `json:"skill"`
	Triggers  []string `json:"triggers"`
	Steps     []string `json:"steps"`
	Tools     []string `json:"tools"`
	Success   int64    `json:"success"`
	Failure   int64    `json:"failure"`
	Intent    string   `json:"intent"`
	Ops       []string `json:"ops"`
	Execs     int64    `json:"executions"`
	FailRate  float64  `json:"failureRate"`
}

// LoadFixture reads a fixture file.
func LoadFixture(path string) (*Fixture, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f Fixture
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	keys := map[string]bool{}
	for _, r := range f.Records {
		if keys[r.Key] {
			return nil, fmt.Errorf("%s: duplicate key %q", path, r.Key)
		}
		keys[r.Key] = true
	}
	for _, q := range f.Queries {
		for k := range q.Relevant {
			if !keys[k] {
				return nil, fmt.Errorf("%s: query %q grades unknown record %q", path, q.Q, k)
			}
		}
	}
	return &f, nil
}

// Record builds the fixture record as a record of scope created at now,
// with the policy's defaults.
func (fr FixtureRecord) Record(p membrane.Policy, scope string, now time.Time) (*membrane.Record, error) {
	in := membrane.RecordInput{Type: membrane.MemoryType(fr.Type), Scope: &scope}
	switch in.Type {
	case membrane.TypeEntity:
		e := &membrane.EntityPayload{CanonicalName: fr.Name, PrimaryType: fr.Kind, Summary: fr.Text}
		for _, a := range fr.Aliases {
			e.Aliases = append(e.Aliases, membrane.EntityAlias{Value: a})
		}
		in.Payload.Entity = e
	case membrane.TypeSemantic:
		in.Payload.Semantic = &membrane.SemanticPayload{Subject: fr.Subject, Predicate: fr.Predicate, Object: fr.Object,
			Evidence: []membrane.EvidenceRef{{SourceType: "eval", SourceID: fr.Key}}}
	case membrane.TypeEpisodic:
		in.Payload.Episodic = &membrane.EpisodicPayload{Timeline: []membrane.TimelineEvent{{T: now, EventKind: fr.Event, Ref: fr.Key, Summary: fr.Text}}}
	case membrane.TypeWorking:
		in.Payload.Working = &membrane.WorkingPayload{ThreadID: fr.Thread, State: membrane.TaskState(fr.State), ContextSummary: fr.Text,
			NextActions: fr.Next, OpenQuestions: fr.Questions}
	case membrane.TypeCompetence:
		c := &membrane.CompetencePayload{SkillName: fr.Skill, RequiredTools: fr.Tools,
			Performance: &membrane.PerformanceStats{SuccessCount: fr.Success, FailureCount: fr.Failure}}
		if n := fr.Success + fr.Failure; n > 0 {
			c.Performance.SuccessRate = float64(fr.Success) / float64(n)
		}
		for _, t := range fr.Triggers {
			c.Triggers = append(c.Triggers, membrane.Trigger{Signal: t})
		}
		for _, s := range fr.Steps {
			c.Recipe = append(c.Recipe, membrane.RecipeStep{Step: s})
		}
		in.Payload.Competence = c
	case membrane.TypePlanGraph:
		pg := &membrane.PlanGraphPayload{PlanID: fr.Key, Intent: fr.Intent}
		for i, op := range fr.Ops {
			pg.Nodes = append(pg.Nodes, membrane.PlanNode{ID: fmt.Sprint("n", i), Op: op})
			if i > 0 {
				pg.Edges = append(pg.Edges, membrane.PlanEdge{From: fmt.Sprint("n", i-1), To: fmt.Sprint("n", i), Kind: membrane.EdgeControl})
			}
		}
		if fr.Execs > 0 {
			pg.Metrics = &membrane.PlanMetrics{ExecutionCount: fr.Execs, FailureRate: fr.FailRate}
		}
		in.Payload.PlanGraph = pg
	default:
		return nil, fmt.Errorf("record %s: unknown type %q", fr.Key, fr.Type)
	}
	r, err := p.BuildRecord(in, now)
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", fr.Key, err)
	}
	if fr.Retracted {
		r.Status, r.Salience = membrane.StatusRetracted, 0
	}
	return r, nil
}

// FixtureEdge is a relation between two fixture records, by key.
type FixtureEdge struct {
	From, To  string
	Predicate membrane.Predicate
}

// Edges are the relations captureMemory would have written between the
// fixture's records had an agent captured its facts: a fact is ABOUT the
// entity its subject names and MENTIONS the entity its object names (a
// canonical name or an alias, compared as membrane.NormaliseTerm does).
// The fixture lists no edges of its own: they follow from the product's
// rule, not from the queries.
func (f *Fixture) Edges() []FixtureEdge {
	entityOf := map[string]string{}
	for _, r := range f.Records {
		if r.Type != string(membrane.TypeEntity) {
			continue
		}
		for _, name := range append([]string{r.Name}, r.Aliases...) {
			if t := membrane.NormaliseTerm(name); t != "" && entityOf[t] == "" {
				entityOf[t] = r.Key
			}
		}
	}
	var out []FixtureEdge
	for _, r := range f.Records {
		// A retracted record takes no new relation (CONFLICT); the fixture
		// writes its retracted facts retracted from the start.
		if r.Type != string(membrane.TypeSemantic) || r.Retracted {
			continue
		}
		if e := entityOf[membrane.NormaliseTerm(r.Subject)]; e != "" {
			out = append(out, FixtureEdge{From: r.Key, To: e, Predicate: membrane.PredAbout})
		}
		if e := entityOf[membrane.NormaliseTerm(r.Object)]; e != "" {
			out = append(out, FixtureEdge{From: r.Key, To: e, Predicate: membrane.PredMentions})
		}
	}
	return out
}
