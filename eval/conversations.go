package eval

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Question categories of the conversation fixture (see README.md).
const (
	// CatParaphrase asks in other words than the evidence uses.
	CatParaphrase = "paraphrase"
	// CatInflection uses another form of the evidence's words
	// (database/databases, deploy/deployed/deploying).
	CatInflection = "inflection"
	// CatIdentifier names a code identifier (snake_case, camelCase, dotted,
	// kebab-case) or the words inside one.
	CatIdentifier = "identifier"
	// CatAdjacent matches turn i while the answer is turn i+1 (or i-1): the
	// assistant's reply, the tool's observation.
	CatAdjacent = "adjacent"
	// CatMultiSession needs evidence from two sessions or more.
	CatMultiSession = "multi_session"
	// CatTemporal names or asks for a time: a date, a month, "last week",
	// "before the trip", "the first time", "most recently". Relative times
	// count from the conversation's Asked instant.
	CatTemporal = "temporal"
)

// Categories lists the categories in the order reports print them.
var Categories = []string{CatParaphrase, CatInflection, CatIdentifier, CatAdjacent, CatMultiSession, CatTemporal}

// Turn is one line of a conversation: one EPISODIC record in the eval.
type Turn struct {
	ID      string // <conversation>-<session>-t<n>, n from 1 in the session
	Session string // <conversation>-<session>
	Speaker string
	Time    time.Time
	Text    string
}

// ConvQuestion is a question about a conversation with its evidence turns.
type ConvQuestion struct {
	Category string
	Q        string
	Evidence []string // turn ids
}

// Relevance grades every evidence turn 1.
func (q ConvQuestion) Relevance() Relevance {
	rel := Relevance{}
	for _, id := range q.Evidence {
		rel[id] = 1
	}
	return rel
}

// Conversation is one fixture file: a user's sessions with an assistant,
// or an agent's work log.
type Conversation struct {
	Name  string
	About string
	// Asked is when the questions are asked: the file's 'asked:' line, or a
	// day after its last turn. "Last week" in a question counts from it.
	Asked     time.Time
	Turns     []Turn
	Questions []ConvQuestion
}

// SessionOf maps each turn id to its session.
func (c *Conversation) SessionOf() map[string]string {
	m := make(map[string]string, len(c.Turns))
	for _, t := range c.Turns {
		m[t.ID] = t.Session
	}
	return m
}

// TurnGap is the time between two turns of a session.
const TurnGap = time.Minute

// LoadConversations reads every *.txt file of dir, in name order.
func LoadConversations(dir string) ([]*Conversation, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out []*Conversation
	for _, p := range paths {
		c, err := LoadConversation(p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no conversation files", dir)
	}
	return out, nil
}

// LoadConversation parses one conversation file. The format, line by line
// (blank lines and lines starting with // are ignored):
//
//	conversation: NAME
//	about: ONE LINE
//	asked: RFC3339                 optional: when the questions are asked
//	session: ID RFC3339-START
//	SPEAKER: TEXT                  a turn, TurnGap after the one before
//	SPEAKER #ANCHOR: TEXT          a turn that questions cite as ANCHOR
//	questions:
//	CATEGORY | ANCHOR ANCHOR... | QUESTION
func LoadConversation(path string) (*Conversation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := &Conversation{}
	anchors := map[string]string{}
	sessions := map[string]bool{}
	var session string
	var at time.Time
	n, inQuestions := 0, false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.TrimSpace(sc.Text())
		errf := func(format string, a ...any) error {
			return fmt.Errorf("%s:%d: %s", path, lineNo, fmt.Sprintf(format, a...))
		}
		switch {
		case line == "" || strings.HasPrefix(line, "//"):
			continue
		case strings.HasPrefix(line, "conversation:"):
			c.Name = strings.TrimSpace(strings.TrimPrefix(line, "conversation:"))
		case strings.HasPrefix(line, "about:"):
			c.About = strings.TrimSpace(strings.TrimPrefix(line, "about:"))
		case strings.HasPrefix(line, "asked:"):
			asked, err := time.Parse(time.RFC3339, strings.TrimSpace(strings.TrimPrefix(line, "asked:")))
			if err != nil {
				return nil, errf("asked: %v", err)
			}
			c.Asked = asked.UTC()
		case strings.HasPrefix(line, "session:"):
			fields := strings.Fields(strings.TrimPrefix(line, "session:"))
			if len(fields) != 2 || c.Name == "" {
				return nil, errf("want 'session: ID START' after 'conversation: NAME'")
			}
			start, err := time.Parse(time.RFC3339, fields[1])
			if err != nil {
				return nil, errf("session start: %v", err)
			}
			session = c.Name + "-" + fields[0]
			if sessions[session] {
				return nil, errf("duplicate session %s", fields[0])
			}
			sessions[session], at, n = true, start.UTC(), 0
		case line == "questions:":
			inQuestions = true
		case inQuestions:
			parts := strings.SplitN(line, "|", 3)
			if len(parts) != 3 {
				return nil, errf("want 'CATEGORY | ANCHORS | QUESTION'")
			}
			q := ConvQuestion{Category: strings.TrimSpace(parts[0]), Q: strings.TrimSpace(parts[2])}
			if !slices.Contains(Categories, q.Category) {
				return nil, errf("unknown category %q", q.Category)
			}
			evSessions := map[string]bool{}
			for _, a := range strings.Fields(parts[1]) {
				id, ok := anchors[a]
				if !ok {
					return nil, errf("unknown anchor %q", a)
				}
				q.Evidence = append(q.Evidence, id)
				evSessions[id[:strings.LastIndex(id, "-")]] = true
			}
			if len(q.Evidence) == 0 || q.Q == "" {
				return nil, errf("a question needs evidence and text")
			}
			if q.Category == CatMultiSession && len(evSessions) < 2 {
				return nil, errf("a multi_session question needs evidence in two sessions")
			}
			c.Questions = append(c.Questions, q)
		default:
			head, text, ok := strings.Cut(line, ":")
			if !ok || session == "" {
				return nil, errf("want 'SPEAKER: TEXT' inside a session")
			}
			fields := strings.Fields(head)
			if len(fields) == 0 || len(fields) > 2 || (len(fields) == 2 && !strings.HasPrefix(fields[1], "#")) {
				return nil, errf("want 'SPEAKER [#ANCHOR]: TEXT'")
			}
			n++
			t := Turn{ID: fmt.Sprintf("%s-t%02d", session, n), Session: session, Speaker: fields[0],
				Time: at.Add(time.Duration(n-1) * TurnGap), Text: strings.TrimSpace(text)}
			if t.Text == "" {
				return nil, errf("empty turn")
			}
			if len(fields) == 2 {
				a := fields[1][1:]
				if _, dup := anchors[a]; dup || a == "" {
					return nil, errf("duplicate or empty anchor %q", a)
				}
				anchors[a] = t.ID
			}
			c.Turns = append(c.Turns, t)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Name == "" || len(c.Turns) == 0 {
		return nil, fmt.Errorf("%s: no conversation or no turns", path)
	}
	last := c.Turns[len(c.Turns)-1].Time
	for _, t := range c.Turns {
		if t.Time.After(last) {
			last = t.Time
		}
	}
	switch {
	case c.Asked.IsZero():
		c.Asked = last.Add(24 * time.Hour)
	case !c.Asked.After(last):
		return nil, fmt.Errorf("%s: asked %s is not after the last turn (%s)", path, c.Asked.Format(time.RFC3339), last.Format(time.RFC3339))
	}
	return c, nil
}
