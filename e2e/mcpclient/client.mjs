// A black-box MCP client from another ecosystem: the reference TypeScript
// SDK, configured as a desktop client is, from one entry of "mcpServers"
// (docs/mcp.md): a command to start (stdio) or a URL with headers (HTTP).
// e2e/mcp_test.go runs it against the membrane binary.
//
//   node client.mjs '<server entry as JSON>' <scope> flow
//     lists the tools, remembers a fact, recalls it, supersedes it, reads
//     its lineage, and meets a tool error and bad arguments; prints what it
//     saw as one JSON line.
//   node client.mjs '<server entry as JSON>' <scope> refused
//     expects its key to be refused; prints how.
//
// It exits 1 on anything unexpected, with the reason on stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [entryJSON, scope, mode] = process.argv.slice(2);
const entry = JSON.parse(entryJSON);

function transportOf(e) {
  if (e.command) {
    // As desktop clients do: the entry's env over a minimal environment.
    return new StdioClientTransport({
      command: e.command,
      args: e.args ?? [],
      env: { ...getDefaultEnvironment(), ...(e.env ?? {}) },
      stderr: "inherit",
    });
  }
  return new StreamableHTTPClientTransport(new URL(e.url), { requestInit: { headers: e.headers ?? {} } });
}

function fail(msg) {
  console.error("mcpclient: " + msg);
  process.exit(1);
}

function textOf(res) {
  return (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
}

// call calls a tool that must succeed and returns its structured result.
async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) fail(`${name}: ${textOf(res)}`);
  if (!res.structuredContent) fail(`${name}: no structured content`);
  return res.structuredContent;
}

// toolError calls a tool that must fail and returns its error's code.
async function toolError(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (!res.isError) fail(`${name}: want a tool error, got ${textOf(res)}`);
  const code = res._meta?.["membrane/error"]?.code;
  if (!code || !textOf(res).startsWith(code + ": ")) fail(`${name}: a tool error without its code: ${JSON.stringify(res)}`);
  return code;
}

const client = new Client({ name: "membrane-e2e-ts", version: "1.0.0" });

if (mode === "refused") {
  // Over HTTP the server refuses the connection itself; over stdio the
  // bridge starts, and each call is refused with the server's code.
  let out;
  try {
    await client.connect(transportOf(entry));
    out = { connected: true, code: await toolError(client, "recall", { query: "anything" }) };
  } catch (e) {
    out = { connected: false, error: String(e?.message ?? e) };
  }
  console.log(JSON.stringify(out));
  await client.close();
  process.exit(0);
}

await client.connect(transportOf(entry));
const out = {};
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();

const rem = await call(client, "remember", {
  content: { subject: "payments-api", predicate: "runs_on", object: "Kubernetes 1.29" },
  summary: "payments-api runs on Kubernetes 1.29",
  scope,
  tags: ["e2e"],
});
const fact = (rem.created ?? []).find((r) => r.type === "semantic");
if (!fact) fail("remember created no fact: " + JSON.stringify(rem));
out.fact = fact.id;

// Full-text indexes catch up with a commit shortly after it: ask until the
// fact is found, a bounded number of times.
let hits = [];
for (let i = 0; i < 100 && !hits.some((h) => h.id === fact.id); i++) {
  hits = (await call(client, "recall", { query: "what does payments-api run on", scope })).hits;
  if (!hits.some((h) => h.id === fact.id)) await new Promise((r) => setTimeout(r, 100));
}
out.recalled = hits.find((h) => h.id === fact.id) ?? null;

const revised = await call(client, "revise", {
  operation: "supersede",
  id: fact.id,
  rationale: "upgraded",
  record: {
    payload: {
      subject: "payments-api",
      predicate: "runs_on",
      object: "Kubernetes 1.31",
      evidence: [{ source_type: "ticket", source_id: "OPS-31" }],
    },
  },
});
out.revised = revised;
const lineage = await call(client, "lineage", { id: revised.id });
out.history = lineage.history.map((r) => r.id);
out.current = lineage.current;
out.audit = lineage.audit.map((a) => a.action);

out.notFound = await toolError(client, "get_record", { id: "no-such-record" });
out.badArguments = await toolError(client, "recall", { limit: "many" });
// The session goes on after both.
out.after = (await call(client, "get_record", { id: revised.id })).id;

console.log(JSON.stringify(out));
await client.close();
