// board.mjs drives surf serve's task board tools with the official MCP
// TypeScript SDK, as an orchestrator would: it adds a diamond of tasks
// (A, then B and C, then D after both), checks that a cycle is refused,
// waits for the diamond with a progress token, reads each result, and
// prints a JSON summary on stdout for the Go test that runs it
// (cmd/surf/board_mcp_test.go).
//
// Usage: node board.mjs --url http://127.0.0.1:PORT/mcp [--token T]
//        [--prefix P] [--timeout 5m] [--start-url URL]
// The token defaults to $SURF_MCP_TOKEN. --prefix is put before the task
// ids, so several runs can share a board. --start-url, when given, is
// every task's start URL (for workers that browse a fixture site).
//
// Install the SDK first: npm ci --prefix testdata/mcpclient (make setup).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function parseArgs(argv) {
  const out = { token: process.env.SURF_MCP_TOKEN ?? "", prefix: "", timeout: "5m", "start-url": "" };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = argv[i + 1];
    if (!["--url", "--token", "--prefix", "--timeout", "--start-url"].includes(k) || v === undefined) {
      throw new Error(`unknown or incomplete argument ${k}`);
    }
    out[k.slice(2)] = v;
    i++;
  }
  if (!out.url) throw new Error("--url is required");
  return out;
}

// text is a tool result's text content.
function text(res) {
  return (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
}

// json reads a board tool's JSON result; an error result has its message
// before the JSON.
function json(res) {
  const t = text(res);
  const i = t.indexOf("{");
  if (i < 0) throw new Error(`not a JSON result: ${t}`);
  return JSON.parse(t.slice(i));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const headers = args.token ? { Authorization: `Bearer ${args.token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(args.url), { requestInit: { headers } });
  const client = new Client({ name: "surf-board-ts-client", version: "1.0.0" });
  await client.connect(transport);
  try {
    const summary = { server: client.getServerVersion(), tools: [], cycle: {}, added: [], progress: [], wait: {}, results: {} };

    const { tools } = await client.listTools();
    summary.tools = tools.map((t) => t.name).filter((n) => n.startsWith("board_"));

    const id = (s) => args.prefix + s;

    // A cycle is refused, and adds nothing.
    const cyc = await client.callTool({
      name: "board_add",
      arguments: {
        tasks: [
          { id: id("X"), instruction: "x", after: [id("Y")] },
          { id: id("Y"), instruction: "y", after: [id("X")] },
        ],
      },
    });
    summary.cycle = { isError: cyc.isError === true, text: text(cyc) };

    // The diamond: A -> B, A -> C, B + C -> D.
    const start = args["start-url"] ? { start_url: args["start-url"] } : {};
    const add = await client.callTool({
      name: "board_add",
      arguments: {
        tasks: [
          { id: id("A"), instruction: "Open the start page and answer its title", labels: { diamond: "top" }, ...start },
          { id: id("B"), instruction: "Answer the title of the left page", after: [id("A")], ...start },
          { id: id("C"), instruction: "Answer the title of the right page", after: [id("A")], ...start },
          { id: id("D"), instruction: "Answer the title of the last page", after: [id("B"), id("C")], ...start },
        ],
      },
    });
    if (add.isError) throw new Error(`board_add: ${text(add)}`);
    summary.added = json(add).tasks.map((t) => ({ id: t.id, state: t.state, after: t.after ?? [] }));
    const ids = summary.added.map((t) => t.id);

    // Wait with a progress token: the SDK sends one when onprogress is set.
    const wait = await client.callTool(
      { name: "board_wait", arguments: { ids, timeout: args.timeout } },
      undefined,
      {
        onprogress: (p) => summary.progress.push({ progress: p.progress, message: p.message ?? "" }),
        timeout: 60_000,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: 15 * 60_000,
      },
    );
    summary.wait = { isError: wait.isError === true, tasks: json(wait).tasks, text: wait.isError ? text(wait) : "" };

    for (const i of ids) {
      const r = await client.callTool({ name: "board_result", arguments: { id: i } });
      if (r.isError) throw new Error(`board_result ${i}: ${text(r)}`);
      summary.results[i] = json(r);
    }
    process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
}

main().catch((err) => {
  process.stderr.write(`board.mjs: ${err?.stack ?? err}\n`);
  process.exit(1);
});
