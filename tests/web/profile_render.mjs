// Where the web app's first render of a long session spends its time, for people tuning it
// (the bench, bench_render.mjs, gives only the total): seeds N read_file results on a real
// `toolwire serve`, loads the session, and prints the navigation's phases, each resource's
// fetch (start and end, ms after navigation start), the page's own marks, and the heaviest
// functions of a CPU profile of one load (self time, ms).
// Usage: TOOLWIRE_BIN=… node profile_render.mjs [N] [--static]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, dirs, serve, api, until } from './lib.mjs';

const n = Number(process.argv[2]) || 1000;
const d = dirs();
writeFileSync(join(d.workspace, 'main.rs'), 'fn main() {\n    println!("hello");\n}\n');
const server = await serve(d);
const browser = await launchBrowser();
try {
  const s = await api(server.base, '/api/sessions', { title: 'results' });
  const batch = [];
  for (let i = 0; i < n; i += 1) {
    batch.push(api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'read_file', input: { path: 'main.rs' } }));
    if (batch.length === 50) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
  await until(async () => (await api(server.base, `/api/sessions/${s.id}`)).messages.filter((m) => m.role === 'tool_result').length === n, 600000, 'results');
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const url = `${server.base}/sessions/${s.id}`;
  const load = async () => {
    await page.goto(url);
    await page.waitForFunction(() => performance.getEntriesByName('toolwire-rendered').length > 0, null, { timeout: 120000 });
    return page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      return {
        rendered: Math.round(performance.getEntriesByName('toolwire-rendered')[0].startTime),
        nav: { responseEnd: Math.round(nav.responseEnd), domInteractive: Math.round(nav.domInteractive), domContentLoaded: Math.round(nav.domContentLoadedEventEnd) },
        marks: performance.getEntriesByType('mark').map((m) => `${m.name}@${Math.round(m.startTime)}`),
        measures: performance.getEntriesByType('measure').map((m) => `${m.name} ${Math.round(m.duration)}ms`),
        resources: performance.getEntriesByType('resource').map((e) => `${Math.round(e.startTime)}-${Math.round(e.responseEnd)} ${new URL(e.name).pathname}`),
      };
    });
  };
  for (let i = 0; i < 3; i += 1) console.log('load', i, (await load()).rendered);
  console.log(JSON.stringify(await load(), null, 1));
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  const r = await load();
  const { profile } = await cdp.send('Profiler.stop');
  const self = new Map();
  const dt = profile.timeDeltas;
  const byId = new Map(profile.nodes.map((x) => [x.id, x]));
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const f = node.callFrame;
    const key = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber}`;
    self.set(key, (self.get(key) || 0) + (dt[i] || 0) / 1000);
  });
  console.log('profiled load rendered at', r.rendered);
  console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 30).map(([k, v]) => `${v.toFixed(1).padStart(7)} ${k}`).join('\n'));
} finally {
  await browser.close();
  await server.stop();
}
