// Soak: `toolwire serve` under a bounded loopback load (sessions created and deleted,
// direct tool calls, session reads, event feeds opened and dropped) for SOAK_SECONDS
// (default 600). RSS and open file descriptors of the server are sampled from /proc;
// after a warm-up (a fifth of the run), RSS may not grow more than 5% and the descriptor
// count may not grow at all (beyond a small slack for connections in flight).
// Usage: TOOLWIRE_BIN=target/debug/toolwire node tests/soak/soak.mjs
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';

const SECONDS = Number(process.env.SOAK_SECONDS || 600);
const IN_FLIGHT = 4;
const bin = process.env.TOOLWIRE_BIN;
if (!bin) throw new Error('set TOOLWIRE_BIN to a built toolwire binary');

const base = mkdtempSync(join(tmpdir(), 'toolwire-soak-'));
const ws = join(base, 'ws');
mkdirSync(ws);
writeFileSync(join(ws, 'a.txt'), 'soak\n'.repeat(200));
const port = await new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
});
const server = spawn(bin, ['--data-dir', join(base, 'data'), 'serve', '--addr', `127.0.0.1:${port}`, '--workspace', ws], { stdio: 'ignore' });
const url = `http://127.0.0.1:${port}`;
for (let i = 0; i < 100; i += 1) {
  try { if ((await fetch(`${url}/api/info`)).ok) break; } catch { /* starting */ }
  await new Promise((r) => setTimeout(r, 100));
}

const rssKb = () => Number((readFileSync(`/proc/${server.pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m) || [])[1]);
const fds = () => readdirSync(`/proc/${server.pid}/fd`).length;
const post = (path, body) => fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

let requests = 0;
let failures = 0;
const end = Date.now() + SECONDS * 1000;
async function worker(n) {
  while (Date.now() < end) {
    try {
      const s = await (await post('/api/sessions', { title: `soak ${n}` })).json();
      for (let i = 0; i < 5; i += 1) {
        const r = await post(`/api/sessions/${s.id}/calls`, { tool: 'read_file', input: { path: 'a.txt' } });
        if (r.status !== 202) failures += 1;
        await r.arrayBuffer();
      }
      // A feed opened, read a little, and dropped.
      const ctl = new AbortController();
      const feed = await fetch(`${url}/api/sessions/${s.id}/events`, { signal: ctl.signal });
      const reader = feed.body.getReader();
      await Promise.race([reader.read(), new Promise((r) => setTimeout(r, 200))]);
      ctl.abort();
      await (await fetch(`${url}/api/sessions/${s.id}`)).arrayBuffer();
      await (await fetch(`${url}/api/sessions?limit=20`)).arrayBuffer();
      const del = await fetch(`${url}/api/sessions/${s.id}`, { method: 'DELETE' });
      if (del.status !== 204) failures += 1;
      requests += 10;
    } catch (e) {
      if (e.name !== 'AbortError') failures += 1;
    }
  }
}

const samples = [];
const sampler = setInterval(() => samples.push({ t: Date.now(), rss: rssKb(), fds: fds() }), 2000);
await Promise.all(Array.from({ length: IN_FLIGHT }, (_, n) => worker(n)));
clearInterval(sampler);
await new Promise((r) => setTimeout(r, 1500));
const settled = { rss: rssKb(), fds: fds() };
server.kill('SIGTERM');

const warm = samples.filter((s) => s.t >= samples[0].t + (SECONDS * 1000) / 5);
const first = warm[0] || samples[0];
const peakRss = Math.max(...warm.map((s) => s.rss));
const growth = (settled.rss - first.rss) / first.rss;
console.log(`soak ${SECONDS} s: ${requests} requests (${(requests / SECONDS).toFixed(0)}/s), ${failures} failures; `
  + `RSS after warm-up ${first.rss} kB, peak ${peakRss} kB, at the end ${settled.rss} kB (${(growth * 100).toFixed(1)}%); `
  + `fds after warm-up ${first.fds}, at the end ${settled.fds}`);
let ok = true;
if (failures > 0) { console.error('requests failed'); ok = false; }
if (growth > 0.05) { console.error('RSS grew more than 5%'); ok = false; }
if (settled.fds > first.fds + 4) { console.error('file descriptors leaked'); ok = false; }
process.exit(ok ? 0 : 1);
