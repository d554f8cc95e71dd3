// plan.mjs calls surf serve's board_plan tool with the official MCP
// TypeScript SDK, as an orchestrator would: one request, a progress
// token, and the plan's answer with its sources. It prints a JSON summary
// on stdout for the Go test that runs it (cmd/surf/plan_mcp_test.go).
//
// Usage: node plan.mjs --url http://127.0.0.1:PORT/mcp [--token T]
//        --request TEXT [--start-url URL]
// The token defaults to $SURF_MCP_TOKEN.
//
// Install the SDK first: npm ci --prefix testdata/mcpclient (make setup).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function parseArgs(argv) {
  const out = { token: process.env.SURF_MCP_TOKEN ?? "", "start-url": "" };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = argv[i + 1];
    if (!["--url", "--token", "--request", "--start-url"].includes(k) || v === undefined) {
      throw new Error(`unknown or incomplete argument ${k}`);
    }
    out[k.slice(2)] = v;
    i++;
  }
  if (!out.url || !out.request) throw new Error("--url and --request are required");
  return out;
}

function text(res) {
  return (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const headers = args.token ? { Authorization: `Bearer ${args.token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(args.url), { requestInit: { headers } });
  const client = new Client({ name: "surf-plan-ts-client", version: "1.0.0" });
  await client.connect(transport);
  try {
    const summary = { tools: [], progress: [], isError: false, result: null, text: "" };
    const { tools } = await client.listTools();
    summary.tools = tools.map((t) => t.name).filter((n) => n.startsWith("board_"));
    const start = args["start-url"] ? { start_url: args["start-url"] } : {};
    const res = await client.callTool(
      { name: "board_plan", arguments: { request: args.request, ...start } },
      undefined,
      {
        onprogress: (p) => summary.progress.push({ progress: p.progress, message: p.message ?? "" }),
        timeout: 120_000,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: 15 * 60_000,
      },
    );
    summary.isError = res.isError === true;
    summary.text = text(res);
    const i = summary.text.indexOf("{");
    if (i >= 0) summary.result = JSON.parse(summary.text.slice(i));
    process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
}

main().catch((err) => {
  process.stderr.write(`plan.mjs: ${err?.stack ?? err}\n`);
  process.exit(1);
});
