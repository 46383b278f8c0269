// Package http is Membrane's HTTP transport: it serves the GraphQL schema of
// package graph over HTTP, server-sent events and WebSockets. It owns the
// routing (NewHandler: GraphiQL at / with its embedded assets under
// /assets/, the lineage explorer at /explorer/, GraphQL at /graphql, the
// graph downloads /graph.cyjs and /graph.graphml (graphexport.go), MCP at
// /mcp (package internal/mcp's handler), /healthz, /readyz, the Neo4j
// Browser kit under /browser/, browserkit.go) and every middleware a
// request passes, outermost first:
//
//   - Observe (observe.go, requestid.go): request ids, access logs, HTTP
//     metrics, trace propagation; OperationObserver counts and traces the
//     GraphQL operations themselves;
//   - recoverPanics (recover.go), bodyDeadline (requestlimits.go), cors
//     (cors.go);
//   - on /graphql: authenticate (auth.go), rateLimit (ratelimit.go),
//     limitBody (requestlimits.go), transportErrors (transporterrors.go);
//     on /mcp the same three, refusing in JSON-RPC (mcp.WriteHTTPError),
//     then observeMCP (observe.go), which names the call in the access log;
//   - then gqlgen's handler with Membrane's transports (sse.go,
//     websocket.go), persisted queries (persisted.go), the query limits of
//     package graph with the parser's token limit and the request timeout
//     (requestlimits.go), and graph's error presenter.
//
// HandlerOptions (options.go) configures all of it. Authentication ends in
// a membrane.Trust in the request's context; what that trust may see and
// do is decided below package graph, by the application's rules.
package http
