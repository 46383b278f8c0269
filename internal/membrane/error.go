package membrane

import (
	"errors"
	"fmt"
)

// Error codes: what went wrong, in the domain's terms. They are not the
// codes clients see: package apicode maps them once to the public codes
// the transports show (GraphQL's extensions.code, MCP's tool error codes),
// so a code's public spelling is the API's contract and the domain can
// name its cases freely.
const (
	EINVALID        = "invalid"
	ENOTFOUND       = "not_found"
	ECONFLICT       = "conflict"
	EFORBIDDEN      = "forbidden"
	EUNAUTHORIZED   = "unauthorized"
	EPRECONDITION   = "precondition"
	EUNAVAILABLE    = "unavailable"
	EINTERNAL       = "internal"
	ENOTIMPLEMENTED = "not_implemented"
	// ECOMPLEXITY rejects an operation over a cost, depth or token limit
	// before it runs.
	ECOMPLEXITY = "complexity"
	// ERATELIMITED rejects a request of a principal over its rate limit.
	ERATELIMITED = "rate_limited"
	// ETIMEOUT is a request that ran out of time; its transaction was
	// rolled back.
	ETIMEOUT = "timeout"
	// EUNKNOWN is a write whose commit Neo4j may or may not have applied:
	// the connection was lost, or the request's time ran out, while the
	// transaction committed. Unlike EUNAVAILABLE (nothing was written), a
	// retry is safe only with the same idempotency key or client-chosen
	// record ids, which replay the first outcome if it committed.
	EUNKNOWN = "outcome_unknown"
	// ETOOLARGE rejects a request body over the configured size.
	ETOOLARGE = "too_large"
	// ENOTALLOWED rejects, in allow-list mode, an operation that is not
	// registered.
	ENOTALLOWED = "not_allowed"
)

// Codes lists every error code, for transports to check that they map each.
var Codes = []string{EINVALID, ENOTFOUND, ECONFLICT, EFORBIDDEN, EUNAUTHORIZED, EPRECONDITION, EUNAVAILABLE, EINTERNAL,
	ENOTIMPLEMENTED, ECOMPLEXITY, ERATELIMITED, ETIMEOUT, EUNKNOWN, ETOOLARGE, ENOTALLOWED}

// IDTaken is the message of the CONFLICT a create answers when the record
// id the client chose is taken: by a record the caller sees, one it cannot
// see (another scope, above its ceiling), a deleted record (ids are never
// reused), or the caller's own earlier request with other content. One
// answer for all, so that it reveals nothing of a record the caller may not
// see: only that the id was used once, which whoever names it already
// claims to know (docs/security.md, "Client-chosen ids").
const IDTaken = "this id is not available; choose another"

// FieldError names one invalid input field. Field is a dotted path relative
// to the input object (for example "lifecycle.halfLifeSeconds").
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is the application error. Its Code and Message are safe to show to
// callers; anything else (driver errors, Cypher) is wrapped as EINTERNAL and
// never reaches a client.
type Error struct {
	Code    string
	Message string
	// Fields lists field-level problems for EINVALID errors.
	Fields []FieldError
}

// Error implements the error interface. It is meant for logs.
func (e *Error) Error() string {
	return fmt.Sprintf("membrane error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, "" for nil,
// and EINTERNAL for any other error.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the caller-safe message of err: the message of the
// first *Error in its chain, or a generic text for anything else.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// ErrorFields returns the field errors of the first *Error in err's chain.
func ErrorFields(err error) []FieldError {
	var e *Error
	if errors.As(err, &e) {
		return e.Fields
	}
	return nil
}
