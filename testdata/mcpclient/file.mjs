// file.mjs reads a file of a task on surf's task board with the official
// MCP TypeScript SDK, through surf serve --board's board_file tool, and
// prints what it got as JSON on stdout for the Go test that runs it
// (cmd/surf/board_files_test.go): the result's error flag and text, and
// its embedded resource (uri, mimeType, and text or blob, base64).
//
// Usage: node file.mjs --url http://127.0.0.1:PORT/mcp --id TASK --name NAME
//        [--token T]
// The token defaults to $SURF_MCP_TOKEN.
//
// Install the SDK first: npm ci --prefix testdata/mcpclient (make setup).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function parseArgs(argv) {
  const out = { token: process.env.SURF_MCP_TOKEN ?? "" };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = argv[i + 1];
    if (!["--url", "--token", "--id", "--name"].includes(k) || v === undefined) {
      throw new Error(`unknown or incomplete argument ${k}`);
    }
    out[k.slice(2)] = v;
    i++;
  }
  for (const k of ["url", "id", "name"]) {
    if (!out[k]) throw new Error(`--${k} is required`);
  }
  return out;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const headers = args.token ? { Authorization: `Bearer ${args.token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(args.url), { requestInit: { headers } });
  const client = new Client({ name: "surf-board-file-client", version: "1.0.0" });
  await client.connect(transport);
  try {
    const res = await client.callTool({ name: "board_file", arguments: { id: args.id, name: args.name } });
    const content = res.content ?? [];
    const text = content.filter((c) => c.type === "text").map((c) => c.text).join("");
    const embedded = content.find((c) => c.type === "resource");
    process.stdout.write(JSON.stringify({ isError: res.isError === true, text, resource: embedded?.resource ?? null }) + "\n");
  } finally {
    await client.close();
  }
}

main().catch((err) => {
  process.stderr.write(`file.mjs: ${err.stack ?? err}\n`);
  process.exit(1);
});
