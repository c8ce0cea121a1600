// The peer of toolwire's MCP benchmark: the official TypeScript SDK client making N
// sequential tools/call round trips to server-everything's echo over stdio.
// Usage: node bench_echo.mjs [N]   Prints: {"calls": N, "ms": total}
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";
import path from "node:path";

const n = Number(process.argv[2] ?? 1000);
const here = path.dirname(fileURLToPath(import.meta.url));
const server = path.join(here, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const transport = new StdioClientTransport({ command: process.execPath, args: [server, "stdio"], stderr: "ignore" });
const client = new Client({ name: "bench", version: "1" });
await client.connect(transport);
for (let i = 0; i < 20; i++) {
  await client.callTool({ name: "echo", arguments: { message: `warm ${i}` } });
}
const start = process.hrtime.bigint();
for (let i = 0; i < n; i++) {
  await client.callTool({ name: "echo", arguments: { message: `call ${i}` } });
}
const ms = Number(process.hrtime.bigint() - start) / 1e6;
console.log(JSON.stringify({ calls: n, ms }));
await client.close();
