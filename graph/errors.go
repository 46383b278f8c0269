package graph

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/membrane/membrane/internal/apicode"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// codeCanceled is the code of an error whose request its client canceled;
// only metrics and debug logs see it.
const codeCanceled = "CANCELED"

// Code returns the extensions.code of a domain error code: its public
// spelling (package apicode, which the MCP transport shares).
func Code(domain string) string { return apicode.Of(domain) }

// PresentError maps every resolver error to a GraphQL error with
// extensions.code. Membrane errors show their own message; anything else is
// logged in full and shown as a generic internal error, so no Cypher, driver
// text or stack trace reaches a client.
func PresentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		var gqlErr *gqlerror.Error
		errors.As(err, &gqlErr)
		if gqlErr != nil && graphql.GetFieldContext(ctx) == nil && strings.HasPrefix(gqlErr.Message, "json request body could not be decoded") {
			// The transport could not decode the body. gqlgen's message
			// quotes the whole body back (up to the body limit): say what
			// is wrong instead.
			return &gqlerror.Error{Message: "the request body is not a GraphQL request in JSON (query, variables, operationName, extensions)",
				Extensions: map[string]any{"code": Code(membrane.EINVALID)}}
		}
		if gqlErr != nil && gqlErr.Err == nil {
			// Errors of gqlgen itself keep their standard codes
			// (GRAPHQL_PARSE_FAILED, GRAPHQL_VALIDATION_FAILED), except that
			// a variable of the wrong type or value is bad user input.
			if gqlErr.Extensions == nil {
				gqlErr.Extensions = map[string]any{}
			}
			if len(gqlErr.Path) > 0 && gqlErr.Path[0] == ast.PathName("variable") {
				gqlErr.Extensions["code"] = Code(membrane.EINVALID)
			}
			if isTokenLimit(gqlErr) {
				gqlErr.Extensions["code"] = Code(membrane.ECOMPLEXITY)
			}
			if _, ok := gqlErr.Extensions["code"]; !ok {
				gqlErr.Extensions["code"] = Code(membrane.EINVALID)
			}
			return gqlErr
		}
		if gqlErr != nil && argumentsFailed(ctx) {
			// A value gqlgen could not coerce to an argument's type (a
			// DateTime that does not parse, a JSONObject that is not an
			// object): the validator checks only the shape of custom
			// scalars, so these surface here, as the client's error.
			return &gqlerror.Error{Message: gqlErr.Message, Path: gqlErr.Path,
				Extensions: map[string]any{"code": Code(membrane.EINVALID)}}
		}
		code := membrane.ErrorCode(err)
		// OUTCOME_UNKNOWN stays what it is even then: a write may have
		// committed unacknowledged, which operators must see.
		if (code == membrane.EINTERNAL || code == membrane.EUNAVAILABLE) && errors.Is(ctx.Err(), context.Canceled) {
			// The client went away (hung up, closed its socket, stopped
			// the subscription) and the work failed of the cancellation:
			// no server error, and nobody reads this answer. It is
			// counted as CANCELED, and logged only for debugging.
			log.DebugContext(ctx, "request canceled by its client", "err", err, "path", graphql.GetPath(ctx).String())
			return &gqlerror.Error{Message: "the request was canceled", Path: graphql.GetPath(ctx),
				Extensions: map[string]any{"code": codeCanceled}}
		}
		if code == membrane.EINTERNAL || code == membrane.EUNAVAILABLE || code == membrane.EUNKNOWN {
			log.ErrorContext(ctx, "request failed", "code", code, "err", err,
				"path", graphql.GetPath(ctx).String())
		}
		ext := map[string]any{"code": Code(code)}
		if fields := membrane.ErrorFields(err); len(fields) > 0 {
			ext["fields"] = fields
		}
		return &gqlerror.Error{
			Message:    membrane.ErrorMessage(err),
			Path:       graphql.GetPath(ctx),
			Extensions: ext,
		}
	}
}

// argumentsFailed reports whether the error being presented comes from
// coercing the current field's arguments: the field takes arguments, but
// gqlgen never stored them (it stores a non-nil map before any resolver
// runs, so a resolver's error never matches).
func argumentsFailed(ctx context.Context) bool {
	fc := graphql.GetFieldContext(ctx)
	return fc != nil && fc.Field.Field != nil && len(fc.Field.Arguments) > 0 && fc.Args == nil
}
