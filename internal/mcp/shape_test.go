package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/membrane/membrane/internal/mcp"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
		cut  bool
	}{
		{"short", 10, "short", false},
		{"exactly10!", 10, "exactly10!", false},
		{"eleven chars", 10, "eleven ch…", true},
		{"", 5, "", false},
		{"anything", 0, "", true},
		{"", 0, "", false},
		// Characters, not bytes: a multi-byte rune is never split.
		{"héllo wörld", 7, "héllo …", true},
		{"日本語のテキスト", 4, "日本語…", true},
	}
	for _, tt := range tests {
		got, cut := mcp.Truncate(tt.in, tt.max)
		if got != tt.want || cut != tt.cut {
			t.Errorf("Truncate(%q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, cut, tt.want, tt.cut)
		}
		if !utf8.ValidString(got) || (tt.max > 0 && utf8.RuneCountInString(got) > tt.max) {
			t.Errorf("Truncate(%q, %d) = %q: not valid UTF-8 or longer than %d", tt.in, tt.max, got, tt.max)
		}
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 20) + "the PostgreSQL connection pool was exhausted" + strings.Repeat(" dolor sit", 20)
	tests := []struct {
		name, text, query string
		max               int
		want              string // what the snippet must contain
		prefix, suffix    bool   // an ellipsis before, after
	}{
		{"fits whole", "auth-service uses PostgreSQL", "postgres", 100, "auth-service uses PostgreSQL", false, false},
		{"around the match", long, "which connection pool", 40, "connection pool", true, true},
		{"case-insensitive", long, "POSTGRESQL", 40, "PostgreSQL", true, true},
		{"no match: the beginning", long, "kubernetes", 30, "lorem ipsum", false, true},
		{"short words are not matched", long, "of a", 30, "lorem ipsum", false, true},
		{"match at the end", strings.Repeat("x ", 50) + "needle", "needle", 20, "needle", true, false},
		{"earliest word wins", "alpha " + strings.Repeat("- ", 40) + "beta gamma", "gamma alpha", 12, "alpha", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := mcp.Snippet(tt.text, tt.query, tt.max)
			if n := utf8.RuneCountInString(got); n > tt.max {
				t.Fatalf("snippet %q has %d characters, max %d", got, n, tt.max)
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("snippet %q does not contain %q", got, tt.want)
			}
			if strings.HasPrefix(got, "…") != tt.prefix || strings.HasSuffix(got, "…") != tt.suffix {
				t.Fatalf("snippet %q: ellipsis before %v, after %v; want %v, %v", got, strings.HasPrefix(got, "…"), strings.HasSuffix(got, "…"), tt.prefix, tt.suffix)
			}
			if cut != (tt.prefix || tt.suffix) {
				t.Fatalf("cut = %v", cut)
			}
		})
	}
}

func TestMatchedText(t *testing.T) {
	for _, tt := range []struct {
		query string
		texts []string
		want  string
	}{
		{"disk full", []string{"the disk was full", "event the disk was full ref-1"}, "the disk was full"},
		{"ref-1", []string{"the disk was full", "event the disk was full ref-1"}, "event the disk was full ref-1"},
		{"kubernetes", []string{"the disk was full", "event ref-1"}, "the disk was full"},
		{"", []string{"first", "second"}, "first"},
		{"x", nil, ""},
	} {
		if got := mcp.MatchedText(tt.query, tt.texts...); got != tt.want {
			t.Errorf("MatchedText(%q, %q) = %q, want %q", tt.query, tt.texts, got, tt.want)
		}
	}
}

func TestClampChars(t *testing.T) {
	for _, tt := range []struct{ asked, def, want int }{
		{0, 300, 300}, {-5, 300, 300}, {50, 300, 50}, {mcp.MaxChars + 1, 300, mcp.MaxChars},
	} {
		if got := mcp.ClampChars(tt.asked, tt.def); got != tt.want {
			t.Errorf("ClampChars(%d, %d) = %d, want %d", tt.asked, tt.def, got, tt.want)
		}
	}
}

func TestRenameField(t *testing.T) {
	renames := [][2]string{{"filter.", ""}, {"first", "page_size"}, {"newRecord.", "record."}, {"memoryTypes", "types"}}
	for _, tt := range []struct{ in, want string }{
		{"filter.types", "types"},
		{"first", "page_size"},
		{"firstName", "firstName"}, // a prefix of a name is not the name
		{"newRecord.payload.semantic.evidence", "record.payload.semantic.evidence"},
		{"memoryTypes", "types"},
		{"query", "query"},
	} {
		if got := mcp.RenameField(tt.in, renames...); got != tt.want {
			t.Errorf("RenameField(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCheckMessage(t *testing.T) {
	tests := []struct {
		name, msg string
		code      int // 0: let through
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 0},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`, 0},
		{"not JSON", `{"jsonrpc":"2.0","id":1,`, -32700},
		{"not JSON at all", `hello`, -32700},
		{"JSON, not JSON-RPC", `{"foo":1}`, -32600},
		{"a number", `42`, -32600},
		{"an empty batch", `[]`, -32600},
		{"a batch of junk", `[{"jsonrpc":"2.0","id":1,"method":"ping"}, 7]`, -32600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mcp.CheckMessage([]byte(tt.msg))
			if tt.code == 0 {
				if got != nil {
					t.Fatalf("refused: %s", got)
				}
				return
			}
			var resp struct {
				JSONRPC string `json:"jsonrpc"`
				ID      any    `json:"id"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(got, &resp); err != nil {
				t.Fatalf("the refusal %q is not JSON: %v", got, err)
			}
			if resp.JSONRPC != "2.0" || resp.ID != nil || resp.Error.Code != tt.code || resp.Error.Message == "" {
				t.Fatalf("refusal = %s, want code %d and id null", got, tt.code)
			}
		})
	}
}

func TestOperation(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "initialize"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":{}}}`, "tools/call recall"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a name a client chose"}}`, "tools/call (unknown tool)"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "batch"},
		{`not json`, ""},
	} {
		if got := mcp.Operation([]byte(tt.body)); got != tt.want {
			t.Errorf("Operation(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}
