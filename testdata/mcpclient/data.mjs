// data.mjs reads surf's tool results as data with the official MCP
// TypeScript SDK: it lists the tools, calls those whose results are data
// (observe and screenshot before any page, websurfer plain and with an
// output_schema, observe, screenshot, session_list, board_add,
// board_wait, board_result) and validates each result's
// structuredContent against the tool's declared outputSchema with ajv
// (JSON Schema 2020-12, the MCP default). It prints a JSON summary on
// stdout for the Go test that runs it
// (cmd/surf/internal/mcpserver/data_test.go).
//
// Usage: node data.mjs --url http://127.0.0.1:PORT/mcp --start-url URL
//        [--token T]
// The token defaults to $SURF_MCP_TOKEN. The server needs a model (the
// tests' fake one answers the two websurfer runs) and a board with
// workers.
//
// Install first: npm ci --prefix testdata/mcpclient (make setup).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Ajv2020 from "ajv/dist/2020.js";

function parseArgs(argv) {
  const out = { token: process.env.SURF_MCP_TOKEN ?? "", "start-url": "" };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = argv[i + 1];
    if (!["--url", "--token", "--start-url"].includes(k) || v === undefined) {
      throw new Error(`unknown or incomplete argument ${k}`);
    }
    out[k.slice(2)] = v;
    i++;
  }
  if (!out.url || !out["start-url"]) throw new Error("--url and --start-url are required");
  return out;
}

function text(res) {
  return (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const headers = args.token ? { Authorization: `Bearer ${args.token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(args.url), { requestInit: { headers } });
  const client = new Client({ name: "surf-data-ts-client", version: "1.0.0" });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const ajv = new Ajv2020({ allErrors: true });
    const validators = {};
    const summary = { tools: {}, calls: [] };
    for (const t of tools) {
      summary.tools[t.name] = { outputSchema: t.outputSchema !== undefined };
      if (t.outputSchema === undefined) continue;
      try {
        validators[t.name] = ajv.compile(t.outputSchema);
      } catch (err) {
        summary.tools[t.name].compileError = String(err?.message ?? err);
      }
    }

    // call calls a tool and records whether its structuredContent is
    // valid against the tool's outputSchema.
    const call = async (label, name, args) => {
      const res = await client.callTool({ name, arguments: args }, undefined, { timeout: 240_000 });
      const rec = {
        label,
        tool: name,
        isError: res.isError === true,
        text: text(res).slice(0, 2000),
        images: (res.content ?? []).filter((c) => c.type === "image").map((c) => ({ mimeType: c.mimeType, bytes: Buffer.from(c.data, "base64").length })),
        structured: res.structuredContent ?? null,
        valid: false,
        errors: null,
      };
      const validate = validators[name];
      if (res.structuredContent !== undefined && validate) {
        rec.valid = validate(res.structuredContent);
        rec.errors = validate.errors ?? null;
      }
      summary.calls.push(rec);
      return res;
    };

    await call("observe-no-page", "observe", {});
    await call("screenshot-no-page", "screenshot", {});
    await call("websurfer", "websurfer", { instruction: "What is this site?", start_url: args["start-url"] });
    await call("websurfer-schema", "websurfer", {
      instruction: "When does it open?",
      output_schema: { type: "object", properties: { opens: { type: "integer" } }, required: ["opens"] },
    });
    await call("observe", "observe", {});
    await call("screenshot", "screenshot", {});
    await call("session_list", "session_list", {});
    await call("board_add", "board_add", { tasks: [{ id: "T1", instruction: "count", output_schema: { type: "object" } }] });
    await call("board_wait", "board_wait", { ids: ["T1"], timeout: "3m" });
    await call("board_result", "board_result", { id: "T1" });
    process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
}

main().catch((err) => {
  process.stderr.write(`data.mjs: ${err?.stack ?? err}\n`);
  process.exit(1);
});
