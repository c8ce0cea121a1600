// Drives `toolwire gateway` with the MCP TypeScript SDK client, as a host would: lists the
// tools, runs the steps given in GATEWAY_STEPS (calls, resource reads, a whole result read
// back page by page with read_result, the run behind a marker read back part by part),
// answers elicitations from GATEWAY_ANSWERS, and
// prints one JSON line per step for the Rust test (crates/toolwire/tests/gateway.rs). A
// step {"cancel": TOOL, "args": {...}, "afterMs": N} gives its call up after N ms.
//
//   node gateway_client.mjs TOOLWIRE_BIN DATA_DIR HOST|auto [GATEWAY ARGS...]
//   GATEWAY_URL=http://127.0.0.1:PORT/mcp GATEWAY_TOKEN=... node gateway_client.mjs
//     (a running --http gateway, and the token of its data directory's gateway-token)
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const [bin, data, host, ...gatewayArgs] = process.argv.slice(2);
const steps = JSON.parse(process.env.GATEWAY_STEPS || '[]');
const answers = JSON.parse(process.env.GATEWAY_ANSWERS || '[]');
const transport = process.env.GATEWAY_URL
  ? new StreamableHTTPClientTransport(new URL(process.env.GATEWAY_URL), {
      requestInit: { headers: { Authorization: `Bearer ${process.env.GATEWAY_TOKEN}` } },
    })
  : new StdioClientTransport({
      command: bin,
      // HOST "auto": no --host, the gateway knows the host by the client's name.
      args: ['gateway', ...(host === 'auto' ? [] : ['--host', host]), ...gatewayArgs],
      env: { ...process.env, TOOLWIRE_DATA_DIR: data },
      stderr: 'inherit',
    });
// GATEWAY_ROOTS: the host's roots (a JSON list of {uri, name}), declared with listChanged;
// a step {"roots": [...]} changes them and says so.
let roots = process.env.GATEWAY_ROOTS ? JSON.parse(process.env.GATEWAY_ROOTS) : null;
const capabilities = answers.length ? { elicitation: { form: {} } } : {};
if (roots) capabilities.roots = { listChanged: true };
const client = new Client({ name: process.env.GATEWAY_CLIENT_NAME || 'gateway-test-host', version: '1.0.0' }, { capabilities });
if (roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots }));
const asked = [];
if (answers.length) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message);
    return answers.shift() ?? { action: 'decline' };
  });
}
// Each notifications/tools/list_changed the gateway sends; a step {"listUntil": [NAMES]}
// lists again at each one (a minute at most) until every name is listed.
let changes = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  changes += 1;
});
// The log messages and resource updates the gateway sends on; a step {"notes": KIND,
// "count": N} waits (30 s at most) until N of that kind came, and prints them.
const notes = { log: [], updated: [] };
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => notes.log.push(n.params));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => notes.updated.push(n.params));
const connecting = Date.now();
await client.connect(transport);
const connectMs = Date.now() - connecting;
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const call = (name, args) => client.callTool({ name, arguments: args || {} }, undefined, { timeout: 120000 });
const text = (r) => (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const { tools } = await client.listTools();
out({ step: 'list', names: tools.map((t) => t.name), tools, connectMs, listMs: Date.now() - connecting });
for (const step of steps) {
  try {
    if (step.mcp) {
      // One of the SDK client's own requests (listResources, readResource, getPrompt,
      // complete, setLoggingLevel, subscribeResource, ...), its params as given.
      const result = await client[step.mcp](step.params);
      out({ step: 'mcp', method: step.mcp, result });
    } else if (step.notes) {
      const started = Date.now();
      while (notes[step.notes].length < (step.count || 1) && Date.now() - started < 30000) {
        await new Promise((done) => setTimeout(done, 50));
      }
      out({ step: 'notes', kind: step.notes, notes: notes[step.notes].splice(0) });
    } else if (step.listUntil) {
      const started = Date.now();
      let seen = 0;
      let names = [];
      let listed = [];
      for (;;) {
        listed = (await client.listTools()).tools;
        names = listed.map((t) => t.name);
        if (step.listUntil.every((n) => names.includes(n)) || Date.now() - started > 60000) break;
        while (changes === seen && Date.now() - started < 60000) {
          await new Promise((done) => setTimeout(done, 50));
        }
        seen = changes;
      }
      out({ step: 'listUntil', told: changes, names, tools: listed });
    } else if (step.roots) {
      roots = step.roots;
      await client.sendRootsListChanged();
      out({ step: 'roots' });
    } else if (step.cancel) {
      // The call, given up after step.afterMs: the SDK sends notifications/cancelled for
      // it and rejects; what the rejection said, and how long it took.
      const started = Date.now();
      const abort = new AbortController();
      setTimeout(() => abort.abort('the host gave up'), step.afterMs || 500);
      let error = null;
      try {
        await client.callTool({ name: step.cancel, arguments: step.args || {} }, undefined, { signal: abort.signal, timeout: 120000 });
      } catch (e) {
        error = String(e);
      }
      out({ step: 'cancel', tool: step.cancel, error, ms: Date.now() - started });
    } else if (step.until) {
      // Called again (a few seconds at most) until its text holds step.until: a change
      // of roots reaches a server asynchronously.
      let r;
      for (let i = 0; i < 40; i++) {
        r = await call(step.tool, step.args);
        if (text(r).includes(step.until)) break;
        await new Promise((done) => setTimeout(done, 250));
      }
      out({ step: 'call', tool: step.tool, result: r, asked: asked.splice(0) });
    } else if (step.read) {
      const r = await client.readResource({ uri: step.read });
      out({ step: 'read', uri: step.read, contents: r.contents.map((c) => ({ uri: c.uri, mimeType: c.mimeType, size: c.blob ? Buffer.from(c.blob, 'base64').length : (c.text || '').length })) });
    } else if (step.marker) {
      // A result cut into whole blocks and one marker for the run between them: the
      // marker's read_result call, made as it says for each part of the run (pages
      // followed), and what came back.
      const first = await call(step.tool, step.args);
      const seen = text(first);
      const marker = /\[… [^\]]*…\]/.exec(seen);
      const made = marker && /read_result (\{[^}]*\})/.exec(marker[0]);
      const through = marker && /through part (\d+) …\]$/.exec(marker[0]);
      const read = [];
      if (made && through) {
        const args = JSON.parse(made[1]);
        for (let part = args.part; part <= Number(through[1]); part++) {
          let joined = '';
          let offset = args.offset;
          for (;;) {
            const page = text(await call('read_result', { ...args, part, offset, limit: 60000 }));
            const note = page.lastIndexOf('\n[chars ');
            joined += note >= 0 ? page.slice(0, note) : page;
            const next = note >= 0 && /"offset":(\d+)\}\]$/.exec(page);
            if (!next) break;
            offset = Number(next[1]);
          }
          read.push(joined);
        }
      }
      out({ step: 'marker', result: first, marker: marker && marker[0], call: made && JSON.parse(made[1]), last: through && Number(through[1]), read });
    } else if (step.follow) {
      // The whole result, read back through read_result from the start, page by page,
      // each page's closing "[chars a–b of n; …]" note taken off.
      const first = await call(step.tool, step.args);
      const callId = first._meta && first._meta['toolwire/callId'];
      let joined = '';
      let offset = 0;
      let pages = 0;
      for (;;) {
        const page = text(await call('read_result', { callId, part: step.part || 0, offset, limit: 60000 }));
        pages += 1;
        const note = page.lastIndexOf('\n[chars ');
        const body = note >= 0 ? page.slice(0, note) : page;
        joined += body;
        const next = note >= 0 && /"offset":(\d+)\}\]$/.exec(page);
        if (!next) break;
        offset = Number(next[1]);
      }
      const want = readFileSync(step.follow, 'utf8');
      out({ step: 'follow', firstText: text(first).length, firstMarker: /omitted by toolwire; read them with read_result/.test(text(first)), pages, whole: joined.endsWith(want), extra: joined.length - want.length });
    } else {
      const r = await call(step.tool, step.args);
      out({ step: 'call', tool: step.tool, result: r, asked: asked.splice(0) });
    }
  } catch (e) {
    out({ step: 'error', tool: step.tool || step.read || step.mcp, message: String((e && e.message) || e), code: e && e.code });
  }
}
await client.close();
