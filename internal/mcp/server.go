package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/safego"
)

// Name is the server's name in MCP's initialize handshake.
const Name = "membrane"

// instructions tell a model, at initialize, what the server is for and
// how its tools fit together; each tool's description says when to use it.
const instructions = `Membrane is your long-term memory: records of what you experienced (episodic), facts (semantic), ` +
	`entities, task state (working), skills (competence) and plans (plan_graph), with their revision history. ` +
	`Use recall before answering from memory, remember to keep what is worth keeping, revise when something you ` +
	`remembered changed or was wrong, relate to link records, lineage to see where a record came from and what ` +
	`replaced it, get_record and list_records to read records. Every call acts with your API key's trust: records ` +
	`above your sensitivity ceiling show redacted or not at all.`

// Options configure the MCP server.
type Options struct {
	// Log receives the errors of tool calls that failed on the server's
	// side, in full (nil: slog.Default()); callers see only their code and
	// caller-safe message.
	Log *slog.Logger
	// Timeout bounds each tool call, and so the Neo4j transactions it runs
	// (0: none): the request timeout, as for a GraphQL operation.
	Timeout time.Duration
	// Version is the server version reported at initialize.
	Version string
}

// NewServer returns the MCP server whose tools call svc. Each call runs
// under the trust its context carries (membrane.TrustFromContext): the
// HTTP transport puts the caller's there, from its API key, as it does for
// GraphQL, and the services and stores gate every read and write by it.
func NewServer(svc *membrane.Services, o Options) *sdk.Server {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	s := newSDKServer(o.Version)
	for _, t := range tools() {
		s.AddTool(t.spec(), t.handler(svc, o))
	}
	return s
}

func newSDKServer(version string) *sdk.Server {
	if version == "" {
		version = "dev"
	}
	return sdk.NewServer(&sdk.Implementation{Name: Name, Title: "Membrane memory", Version: version},
		&sdk.ServerOptions{Instructions: instructions})
}

// ToolNames lists the tools' names, in the order tools/list gives them.
func ToolNames() []string {
	var out []string
	for _, t := range tools() {
		out = append(out, t.spec().Name)
	}
	return out
}

// toolDef is one tool: its definition as tools/list shows it, and its
// handler over the services.
type toolDef interface {
	spec() *sdk.Tool
	handler(svc *membrane.Services, o Options) sdk.ToolHandler
}

// tool is a tool whose arguments are In and whose result is Out: its
// input and output schemas are derived from those types (descriptions
// from their jsonschema tags, enum values from enums), the arguments are
// validated against the input schema before run sees them, and the result
// against the output schema before the caller does.
type tool[In, Out any] struct {
	name, title, description string
	// readOnly, destructive and idempotent are the tool's hints to clients.
	readOnly, destructive, idempotent bool
	// enums are the values a property allows, by its path in the input
	// schema (record.type; types[] for the items of an array).
	enums map[string][]string
	// renames map the services' field names (GraphQL's) in errors to the
	// tool's argument names.
	renames []rename
	run     func(ctx context.Context, svc *membrane.Services, in In) (Out, error)

	once    sync.Once
	def     *sdk.Tool
	in, out *jsonschema.Resolved
}

// spec derives the tool's definition and schemas once.
func (t *tool[In, Out]) spec() *sdk.Tool {
	t.once.Do(func() {
		in, err := jsonschema.For[In](nil)
		if err != nil {
			panic(fmt.Sprintf("mcp: tool %s: input schema: %v", t.name, err))
		}
		for path, values := range t.enums {
			setEnum(in, path, values)
		}
		out, err := jsonschema.For[Out](nil)
		if err != nil {
			panic(fmt.Sprintf("mcp: tool %s: output schema: %v", t.name, err))
		}
		if t.in, err = in.Resolve(nil); err != nil {
			panic(fmt.Sprintf("mcp: tool %s: input schema: %v", t.name, err))
		}
		if t.out, err = out.Resolve(nil); err != nil {
			panic(fmt.Sprintf("mcp: tool %s: output schema: %v", t.name, err))
		}
		destructive := t.destructive
		open := false
		t.def = &sdk.Tool{Name: t.name, Title: t.title, Description: t.description, InputSchema: in, OutputSchema: out,
			Annotations: &sdk.ToolAnnotations{Title: t.title, ReadOnlyHint: t.readOnly, DestructiveHint: &destructive,
				IdempotentHint: t.idempotent, OpenWorldHint: &open}}
	})
	return t.def
}

// setEnum sets the values allowed at path (dot-separated properties; a
// "[]" suffix names the items of an array) of an object schema.
func setEnum(s *jsonschema.Schema, path string, values []string) {
	for _, p := range strings.Split(path, ".") {
		items := strings.HasSuffix(p, "[]")
		s = s.Properties[strings.TrimSuffix(p, "[]")]
		if s == nil {
			panic("mcp: no property " + path)
		}
		if items {
			s = s.Items
		}
	}
	s.Enum = make([]any, len(values))
	for i, v := range values {
		s.Enum[i] = v
	}
}

// handler runs the tool: a call that fails, whatever the reason (bad
// arguments, a refusal of the services, a panic), is a tool error with its
// code, never a protocol error nor the end of the session.
func (t *tool[In, Out]) handler(svc *membrane.Services, o Options) sdk.ToolHandler {
	t.spec()
	return func(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, _ error) {
		defer func() {
			if p := recover(); p != nil {
				safego.Recovered("mcp tool", p, "tool", t.name)
				res = errorResult(ctx, o.Log, t.name, errors.New("panic"), nil)
			}
		}()
		var raw json.RawMessage
		if req != nil && req.Params != nil {
			raw = req.Params.Arguments
		}
		in, err := t.decode(raw)
		if err != nil {
			return errorResult(ctx, o.Log, t.name, err, t.renames), nil
		}
		if o.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, o.Timeout)
			defer cancel()
		}
		out, err := t.run(ctx, svc, in)
		if err != nil {
			return errorResult(ctx, o.Log, t.name, err, t.renames), nil
		}
		return t.result(ctx, o.Log, out), nil
	}
}

// decode validates the arguments against the input schema and decodes
// them: absent arguments are an empty object.
func (t *tool[In, Out]) decode(raw json.RawMessage) (In, error) {
	var in In
	args := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return in, invalid("arguments", "must be a JSON object")
		}
	}
	if err := t.in.Validate(args); err != nil {
		return in, invalid("arguments", "%s", schemaMessage(err))
	}
	b, _ := json.Marshal(args)
	if err := json.Unmarshal(b, &in); err != nil {
		return in, invalid("arguments", "%v", err)
	}
	return in, nil
}

// schemaMessage is a schema validation error as a model reads it: without
// the validator's "validating root:" preamble.
func schemaMessage(err error) string {
	msg := err.Error()
	for _, p := range []string{"validating root: ", "validating /properties/"} {
		msg = strings.ReplaceAll(msg, p, "")
	}
	return msg
}

// result is the tool result of out: its JSON as structured content, and
// as text for clients that read only text. An output its schema refuses
// is a bug, reported as INTERNAL (and logged) rather than sent: clients
// validate results against the schema tools/list gave them.
func (t *tool[In, Out]) result(ctx context.Context, log *slog.Logger, out Out) *sdk.CallToolResult {
	b, err := json.Marshal(out)
	if err == nil {
		var v any
		if err = json.Unmarshal(b, &v); err == nil {
			err = t.out.Validate(v)
		}
	}
	if err != nil {
		return errorResult(ctx, log, t.name, fmt.Errorf("mcp: %s result does not fit its schema: %w", t.name, err), nil)
	}
	return &sdk.CallToolResult{StructuredContent: json.RawMessage(b), Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
}
