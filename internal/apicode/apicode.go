// Package apicode spells the domain's error codes as clients see them:
// the extensions.code of a GraphQL error (package graph, internal/http)
// and the code of an MCP tool error (internal/mcp). Both transports show
// one spelling, so that a client, or a model, reads the same code for the
// same refusal whichever way it came in.
package apicode

import "github.com/membrane/membrane/internal/membrane"

// public are the public codes: the API's contract, add, never rename.
// This table is the one place a domain error code becomes the code
// clients see.
var public = map[string]string{
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

// Of returns the public code of a domain error code (INTERNAL for a code
// the table lacks, which TestPublicCodes rules out).
func Of(domain string) string {
	if c, ok := public[domain]; ok {
		return c
	}
	return public[membrane.EINTERNAL]
}
