package apicode_test

import (
	"testing"

	"github.com/membrane/membrane/internal/apicode"
	"github.com/membrane/membrane/internal/membrane"
)

// TestPublicCodes pins the public codes, the API's contract (GraphQL's
// extensions.code, MCP's tool error codes), for every domain error code:
// each has its own public spelling, and a code the table lacks would show
// as INTERNAL.
func TestPublicCodes(t *testing.T) {
	want := map[string]string{
		membrane.EINVALID:        "BAD_USER_INPUT",
		membrane.ENOTFOUND:       "NOT_FOUND",
		membrane.ECONFLICT:       "CONFLICT",
		membrane.EFORBIDDEN:      "FORBIDDEN",
		membrane.EUNAUTHORIZED:   "UNAUTHENTICATED",
		membrane.EPRECONDITION:   "FAILED_PRECONDITION",
		membrane.EUNAVAILABLE:    "UNAVAILABLE",
		membrane.EINTERNAL:       "INTERNAL",
		membrane.ENOTIMPLEMENTED: "NOT_IMPLEMENTED",
		membrane.ECOMPLEXITY:     "COMPLEXITY_LIMIT_EXCEEDED",
		membrane.ERATELIMITED:    "RATE_LIMITED",
		membrane.ETIMEOUT:        "TIMEOUT",
		membrane.EUNKNOWN:        "OUTCOME_UNKNOWN",
		membrane.ETOOLARGE:       "PAYLOAD_TOO_LARGE",
		membrane.ENOTALLOWED:     "PERSISTED_QUERY_NOT_ALLOWED",
	}
	if len(membrane.Codes) != len(want) {
		t.Fatalf("the domain has %d codes, this test pins %d: pin the new ones", len(membrane.Codes), len(want))
	}
	seen := map[string]string{}
	for _, c := range membrane.Codes {
		got := apicode.Of(c)
		if w, ok := want[c]; !ok || got != w {
			t.Errorf("Of(%q) = %q, want %q", c, got, w)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%q and %q both show as %q", c, other, got)
		}
		seen[got] = c
		if got == c {
			t.Errorf("Of(%q) is the domain code itself: the transport must map it", c)
		}
	}
	if got := apicode.Of("no_such_code"); got != "INTERNAL" {
		t.Errorf("an unknown code shows as %q, want INTERNAL", got)
	}
}
