// The peer of toolwire's MCP benchmark: the official TypeScript SDK client making N
// sequential tools/call round trips to server-everything's echo over stdio.
// Usage: node bench_echo.mjs [N] [TOOLWIRE_BIN DATA_DIR]   Prints: {"calls": N, "ms": total}
// With TOOLWIRE_BIN, the client talks to `toolwire gateway` with server-everything behind
// it (the tool is then ev__echo), for the gateway's row beside the direct one.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";
import path from "node:path";

const n = Number(process.argv[2] ?? 1000);
const [toolwire, data] = process.argv.slice(3);
const here = path.dirname(fileURLToPath(import.meta.url));
const server = path.join(here, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const transport = toolwire
  ? new StdioClientTransport({
      command: toolwire,
      args: ["--data-dir", data, "gateway", "--mcp", `ev=${process.execPath} ${server} stdio`],
      stderr: "ignore",
    })
  : new StdioClientTransport({ command: process.execPath, args: [server, "stdio"], stderr: "ignore" });
const echo = toolwire ? "ev__echo" : "echo";
const client = new Client({ name: "bench", version: "1" });
await client.connect(transport);
for (let i = 0; i < 20; i++) {
  await client.callTool({ name: echo, arguments: { message: `warm ${i}` } });
}
const start = process.hrtime.bigint();
for (let i = 0; i < n; i++) {
  await client.callTool({ name: echo, arguments: { message: `call ${i}` } });
}
const ms = Number(process.hrtime.bigint() - start) / 1e6;
console.log(JSON.stringify({ calls: n, ms }));
await client.close();
