// The peer of toolwire's MCP benchmark: the official TypeScript SDK client making N
// sequential tools/call round trips to server-everything's echo over stdio.
// Usage: node bench_echo.mjs [N] [TOOLWIRE_BIN DATA_DIR]
// Prints: {"calls": N, "ms": total, "closeMs": from close() to the server's exit,
// "chars": text characters a call, "childCpuMs": CPU time of the process it talks to
// over the calls, every thread (null without /proc)}
// With TOOLWIRE_BIN, the client talks to `toolwire gateway` with server-everything behind
// it (the tool is then ev__echo), for the gateway's row beside the direct one; closeMs is
// then the time the gateway takes to store what it answered and exit.
// With BENCH_RELAY=BENCH_BIN (and no TOOLWIRE_BIN), the client starts `BENCH_BIN relay`
// with the server behind it: a process that copies bytes both ways, the gateway row's floor;
// with BENCH_RELAY_PARSE=1 too, one that parses each line and writes it again.
// With BENCH_READ=FILE, each call instead reads FILE whole through server-filesystem's
// read_text_file (serving FILE's directory): the 5 MB result row.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fileURLToPath } from "node:url";
import path from "node:path";
import fs from "node:fs";

const n = Number(process.argv[2] ?? 1000);
const [toolwire, data] = process.argv.slice(3);
const here = path.dirname(fileURLToPath(import.meta.url));
const read = process.env.BENCH_READ;
const relay = process.env.BENCH_RELAY;
const server = read
  ? [path.join(here, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), path.dirname(read)]
  : [path.join(here, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"];
const prefix = read ? "fs" : "ev";
const transport = toolwire
  ? new StdioClientTransport({
      command: toolwire,
      // The gateway's workspace is the root it offers the server (server-filesystem
      // then allows only it).
      args: ["--data-dir", data, "gateway", ...(read ? ["--workspace", path.dirname(read)] : []),
        "--mcp", `${prefix}=${process.execPath} ${server.join(" ")}`],
      stderr: "ignore",
    })
  : new StdioClientTransport({
      command: relay ?? process.execPath,
      args: relay
        ? ["relay", ...(process.env.BENCH_RELAY_PARSE ? ["--parse"] : []), process.execPath, ...server]
        : server,
      stderr: "ignore",
      // server-filesystem sends the file twice (text and structuredContent): 10.6 MB for
      // 5 MB, over the SDK's default 10 MB line limit, which would close the connection.
      maxBufferSize: 64 << 20,
    });
const tool = (toolwire ? `${prefix}__` : "") + (read ? "read_text_file" : "echo");
const args = (i) => (read ? { path: read } : { message: `call ${i}` });
// With BENCH_PROGRESS=1 every call asks for progress (a handler that does nothing), so the
// request carries `_meta.progressToken` as toolwire's do: toolwire records a server's
// progress on every call, and a server may do work for the token (the MCP echo row).
const progress = process.env.BENCH_PROGRESS ? { onprogress: () => {} } : {};
const client = new Client({ name: "bench", version: "1" });
await client.connect(transport);
const warm = read ? 2 : 20;
for (let i = 0; i < warm; i++) {
  await client.callTool({ name: tool, arguments: args(i) }, undefined, progress);
}
// The CPU time of the process the client talks to (the gateway, the relay or the
// server), every thread, in ms: the sum of /proc/PID/task/*/schedstat's first field (ns
// on the CPU). null where /proc is not there.
function childCpuMs() {
  const pid = transport.pid;
  if (!pid) return null;
  try {
    let ns = 0;
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    }
    return ns / 1e6;
  } catch {
    return null;
  }
}
const cpuBefore = childCpuMs();
const start = process.hrtime.bigint();
let chars = 0;
for (let i = 0; i < n; i++) {
  const r = await client.callTool({ name: tool, arguments: args(i) }, undefined, { timeout: 120000, ...progress });
  if (r.isError) throw new Error(`call ${i} failed: ${JSON.stringify(r.content)}`);
  chars += r.content.filter((c) => c.type === "text").reduce((sum, c) => sum + c.text.length, 0);
}
const ms = Number(process.hrtime.bigint() - start) / 1e6;
const cpuAfter = childCpuMs();
const childCpu = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
const closing = process.hrtime.bigint();
await client.close();
const closeMs = Number(process.hrtime.bigint() - closing) / 1e6;
console.log(JSON.stringify({ calls: n, ms, closeMs, chars: chars / n, childCpuMs: childCpu }));
