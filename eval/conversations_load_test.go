package eval_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/eval"
)

func TestLoadConversation(t *testing.T) {
	const good = `conversation: cx
about: a test
session: s1 2026-01-02T10:00:00Z
user #q: where is the key?
// a comment
assistant #a: under the mat
session: s2 2026-01-09T10:00:00Z
user: thanks: it: worked
agent #b: kubectl get pods -n payments
questions:
adjacent | a | where did the assistant say the key is?
multi_session | a b | what happened | twice?
`
	c, err := eval.LoadConversation(write(t, good))
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(c.Turns))
	for i, tr := range c.Turns {
		ids[i] = tr.ID
	}
	if !slices.Equal(ids, []string{"cx-s1-t01", "cx-s1-t02", "cx-s2-t01", "cx-s2-t02"}) {
		t.Errorf("turn ids %q", ids)
	}
	if tr := c.Turns[1]; tr.Speaker != "assistant" || tr.Text != "under the mat" || tr.Session != "cx-s1" ||
		!tr.Time.Equal(time.Date(2026, 1, 2, 10, 1, 0, 0, time.UTC)) {
		t.Errorf("second turn %+v", tr)
	}
	if tr := c.Turns[2]; tr.Text != "thanks: it: worked" {
		t.Errorf("a colon in the text: %q", tr.Text)
	}
	if len(c.Questions) != 2 || c.Questions[1].Q != "what happened | twice?" || !slices.Equal(c.Questions[1].Evidence, []string{"cx-s1-t02", "cx-s2-t02"}) ||
		c.Questions[0].Category != eval.CatAdjacent {
		t.Errorf("questions %+v", c.Questions)
	}
	if s := c.SessionOf(); s["cx-s2-t02"] != "cx-s2" {
		t.Errorf("SessionOf %v", s)
	}

	bad := []struct{ name, text, msg string }{
		{"unknown category", "questions:\nguess | a | x?", "unknown category"},
		{"unknown anchor", "questions:\nparaphrase | zz | x?", "unknown anchor"},
		{"no evidence", "questions:\nparaphrase |  | x?", "needs evidence"},
		{"one-session multi_session", "questions:\nmulti_session | q a | x?", "two sessions"},
		{"duplicate anchor", "user #a: again", "duplicate"},
		{"duplicate session", "session: s1 2026-01-02T10:00:00Z", "duplicate session"},
		{"bad start", "session: s3 yesterday", "session start"},
		{"empty turn", "user:", "empty turn"},
		{"malformed speaker", "user a: x", "SPEAKER [#ANCHOR]"},
	}
	for _, tt := range bad {
		_, err := eval.LoadConversation(write(t, strings.Replace(good, "questions:\n", tt.text+"\nquestions:\n", 1)))
		if strings.HasPrefix(tt.text, "questions:") {
			_, err = eval.LoadConversation(write(t, good+strings.TrimPrefix(tt.text, "questions:\n")+"\n"))
		}
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.msg)
		}
	}
}

// TestConversationFixture checks the fixture's shape without a database:
// every file loads, every conversation has at least 4 sessions of at least
// 20 turns, and there are at least 600 questions, 40 or more per category,
// at least a quarter of them multi_session and at least 15 % temporal.
func TestConversationFixture(t *testing.T) {
	convs, err := eval.LoadConversations("conversations")
	if err != nil {
		t.Fatal(err)
	}
	perCategory, questions := map[string]int{}, 0
	for _, c := range convs {
		for _, q := range c.Questions {
			perCategory[q.Category]++
			questions++
		}
		perSession := map[string]int{}
		for _, tr := range c.Turns {
			perSession[tr.Session]++
		}
		if len(perSession) < 4 {
			t.Errorf("%s: %d sessions, want at least 4", c.Name, len(perSession))
		}
		for s, n := range perSession {
			if n < 20 {
				t.Errorf("%s: %d turns, want at least 20", s, n)
			}
		}
	}
	if questions < 600 {
		t.Errorf("%d questions, want at least 600", questions)
	}
	for _, cat := range eval.Categories {
		if perCategory[cat] < 40 {
			t.Errorf("%s: %d questions, want at least 40", cat, perCategory[cat])
		}
	}
	if n := perCategory[eval.CatMultiSession]; 4*n < questions {
		t.Errorf("%d multi_session questions of %d, want at least a quarter", n, questions)
	}
	if n := perCategory[eval.CatTemporal]; 100*n < 15*questions {
		t.Errorf("%d temporal questions of %d, want at least 15 %%", n, questions)
	}
}

func write(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
