package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/membrane/membrane/internal/apicode"
	"github.com/membrane/membrane/internal/membrane"
)

// MetaError is the _meta key of a failed tool call's error: its code,
// message and invalid fields, for programs; the text content says the same
// to a model.
const MetaError = "membrane/error"

// ToolError is what a failed tool call carries under _meta MetaError.
type ToolError struct {
	// Code is the public code, as GraphQL's extensions.code spells it
	// (BAD_USER_INPUT, NOT_FOUND, CONFLICT, FORBIDDEN, UNAUTHENTICATED…).
	Code string `json:"code"`
	// Message is the caller-safe message, GraphQL's message.
	Message string `json:"message"`
	// Fields name each invalid argument, by the tool's argument names.
	Fields []Field `json:"fields,omitempty"`
}

// Field is one invalid argument.
type Field struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Text is the error as a model reads it: "CODE: message", then each
// invalid argument the message does not already name.
func (e ToolError) Text() string {
	var b strings.Builder
	b.WriteString(e.Code + ": " + e.Message)
	for _, f := range e.Fields {
		if line := f.Field + ": " + f.Message; !strings.Contains(e.Message, line) {
			b.WriteString("\n- " + line)
		}
	}
	return b.String()
}

// errorResult is the tool result of a failed call: isError, the error's
// text, and its code under _meta. The code and message are GraphQL's
// (apicode, membrane.ErrorMessage): a membrane.Error shows its own
// message, anything else (a driver error, Cypher) only "Internal error.",
// and is logged in full here, as the GraphQL presenter logs it. renames
// maps the services' field names (GraphQL's argument names) to the tool's.
func errorResult(ctx context.Context, log *slog.Logger, tool string, err error, renames []rename) *sdk.CallToolResult {
	code := membrane.ErrorCode(err)
	if code == membrane.EINTERNAL || code == membrane.EUNAVAILABLE || code == membrane.EUNKNOWN {
		log.ErrorContext(ctx, "mcp tool failed", "tool", tool, "code", code, "err", err)
	}
	te := ToolError{Code: apicode.Of(code), Message: membrane.ErrorMessage(err)}
	for _, f := range membrane.ErrorFields(err) {
		te.Fields = append(te.Fields, Field{Field: renameField(f.Field, renames), Message: f.Message})
	}
	return toolErrorResult(te)
}

// toolErrorResult is the tool result carrying te.
func toolErrorResult(te ToolError) *sdk.CallToolResult {
	return &sdk.CallToolResult{
		IsError: true,
		Content: []sdk.Content{&sdk.TextContent{Text: te.Text()}},
		Meta:    sdk.Meta{MetaError: te},
	}
}

// invalid is a BAD_USER_INPUT error naming one argument.
func invalid(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &membrane.Error{Code: membrane.EINVALID, Message: "invalid input: " + field + ": " + msg,
		Fields: []membrane.FieldError{{Field: field, Message: msg}}}
}

// rename maps a field path the services name (GraphQL's arguments) to the
// tool argument it came from.
type rename struct{ from, to string }

// renameField applies each rename in turn whose from is field or its
// first part (a prefix ending at a dot): filter.minSalience becomes
// min_salience through {filter., ""} then {minSalience, min_salience}.
func renameField(field string, renames []rename) string {
	for _, r := range renames {
		switch {
		case field == r.from:
			field = r.to
		case strings.HasPrefix(field, r.from+"."):
			field = r.to + field[len(r.from):]
		case strings.HasSuffix(r.from, ".") && strings.HasPrefix(field, r.from):
			field = r.to + field[len(r.from):]
		}
	}
	return field
}

// CodeRefused is the JSON-RPC error code of a request the HTTP transport
// refuses before it reaches MCP (authentication, rate): in JSON-RPC's
// range for servers. A message that does not parse or is too large gets
// JSON-RPC's own codes (jsonrpc.CodeParseError, CodeInvalidRequest).
const CodeRefused = -32001

// protocolError is a JSON-RPC error response to a message that could not
// be taken: its id is the message's when it could be read, else null, as
// JSON-RPC answers a message whose id it could not read.
type protocolError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   protocolCause   `json:"error"`
}

type protocolCause struct {
	Code    int        `json:"code"`
	Message string     `json:"message"`
	Data    *ToolError `json:"data,omitempty"`
}

// ProtocolError is the JSON of a JSON-RPC error response with id null,
// code and message; public, when not empty, is the public code of the
// refusal (UNAUTHENTICATED, RATE_LIMITED, PAYLOAD_TOO_LARGE…), carried in
// its data as a tool error carries it.
func ProtocolError(code int, public, message string) []byte {
	return protocolErrorFor(nil, code, public, message)
}

// protocolErrorFor is ProtocolError answering id (nil: null).
func protocolErrorFor(id json.RawMessage, code int, public, message string) []byte {
	if len(id) == 0 || !json.Valid(id) {
		id = json.RawMessage("null")
	}
	e := protocolError{JSONRPC: "2.0", ID: id, Error: protocolCause{Code: code, Message: message}}
	if public != "" {
		e.Error.Data = &ToolError{Code: public, Message: message}
	}
	b, _ := json.Marshal(e) // strings and numbers, and id as it came
	return b
}

// CheckMessage refuses what is not a JSON-RPC message: text that is not
// JSON is a parse error, JSON that is not a request, notification or
// response (nor a batch of them) an invalid request. It returns the error
// response to send, or nil to let the message through. Both transports
// check each message so, before the SDK reads it: the SDK would end a
// stdio session on a line that does not parse, and answers HTTP with
// plain text; a client gets a JSON-RPC error instead, and its session
// goes on.
func CheckMessage(b []byte) []byte {
	if !json.Valid(b) {
		return ProtocolError(jsonrpc.CodeParseError, "", "parse error: the message is not JSON")
	}
	trimmed := strings.TrimSpace(string(b))
	if strings.HasPrefix(trimmed, "[") {
		var batch []json.RawMessage
		if json.Unmarshal(b, &batch) != nil || len(batch) == 0 {
			return ProtocolError(jsonrpc.CodeInvalidRequest, "", "invalid request: an empty batch or not a list of JSON-RPC messages")
		}
		for _, m := range batch {
			if _, err := jsonrpc.DecodeMessage(m); err != nil {
				return ProtocolError(jsonrpc.CodeInvalidRequest, "", "invalid request: a batch holds what is not a JSON-RPC 2.0 message")
			}
		}
		return nil
	}
	if _, err := jsonrpc.DecodeMessage(b); err != nil {
		return ProtocolError(jsonrpc.CodeInvalidRequest, "", "invalid request: not a JSON-RPC 2.0 message")
	}
	return nil
}

// refusalOf is the tool error a JSON-RPC error body carries in its data
// (WriteHTTPError's), or nil.
func refusalOf(body []byte) *ToolError {
	var resp struct {
		Error *protocolCause `json:"error"`
	}
	if json.Unmarshal(body, &resp) != nil || resp.Error == nil || resp.Error.Data == nil || resp.Error.Data.Code == "" {
		return nil
	}
	return resp.Error.Data
}

// remoteError is the tool error of a call the stdio bridge could not get
// answered: the server's refusal when the SDK's error carries it (a
// JSON-RPC error whose data has the code; refusals the SDK reports by
// their status alone are read from the answer, refusalOf), else
// UNAVAILABLE naming what failed, or TIMEOUT; never a crash of the
// session.
func remoteError(err error, url string) ToolError {
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		var te ToolError
		if json.Unmarshal(jerr.Data, &te) == nil && te.Code != "" {
			return te
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ToolError{Code: apicode.Of(membrane.ETIMEOUT), Message: fmt.Sprintf("the Membrane server at %s did not answer in time", url)}
	}
	return ToolError{Code: apicode.Of(membrane.EUNAVAILABLE), Message: fmt.Sprintf("cannot reach the Membrane server at %s (is it running? MEMBRANE_URL): %v", url, err)}
}
