// First render of the web app in Chromium, for `scripts/bench` (workload web_render):
// a session of N read_file results and one table result of M rows, served by the
// TOOLWIRE_BIN given, each measured from navigation start to the page's
// `toolwire-rendered` mark (best of 5 loads), beside the same content as a static HTML
// page with no script (Chromium parsing and laying out the same text) in the same run.
// Usage: node bench_render.mjs RESULTS ROWS; prints one JSON object.
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, dirs, serve, api, store, until } from './lib.mjs';

const [results, rows] = process.argv.slice(2).map(Number);
if (!(results > 0 && rows > 0)) throw new Error('usage: node bench_render.mjs RESULTS ROWS');
const LOADS = 5;

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** Serves `pages` (path → HTML) on a free loopback port. */
async function staticServer(pages) {
  const server = http.createServer((req, res) => {
    const body = pages.get(req.url);
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body || '');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

/** The same text as a page with no script: marks when it is parsed and laid out. */
function staticPage(title, body) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title></head><body>${body}`
    + '<script>document.body.offsetHeight; performance.mark("toolwire-rendered");</script></body></html>';
}

/** Best of LOADS: navigation start to the mark, and the part after the session's data arrived. */
async function measure(page, url) {
  let best = { total: Infinity, page: Infinity };
  for (let i = 0; i < LOADS; i += 1) {
    // From a blank page each time: tearing down the page loaded before (the app's 1,000
    // cards, or the static page's 1,000 sections) falls after navigation start and is
    // that page's cost, not this load's.
    await page.goto('about:blank');
    await page.goto(url);
    await page.waitForFunction(() => performance.getEntriesByName('toolwire-rendered').length > 0, null, { timeout: 120000 });
    const m = await page.evaluate(() => {
      const rendered = performance.getEntriesByName('toolwire-rendered')[0].startTime;
      // The session's first read (the page reads a long session's rest after it).
      const data = performance.getEntriesByType('resource')
        .filter((e) => /\/api\/sessions\/[^/?]+$/.test(new URL(e.name).pathname))
        .map((e) => e.responseEnd);
      return { total: rendered, page: rendered - (data.length ? Math.min(...data) : 0) };
    });
    best = { total: Math.min(best.total, m.total), page: Math.min(best.page, m.page) };
  }
  return best;
}

const d = dirs();
writeFileSync(join(d.workspace, 'main.rs'), 'fn main() {\n    println!("hello");\n}\n');
const server = await serve(d);
const browser = await launchBrowser();
const statics = new Map();
let site;
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });

  const s = await api(server.base, '/api/sessions', { title: 'results' });
  const batch = [];
  for (let i = 0; i < results; i += 1) {
    batch.push(api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'read_file', input: { path: 'main.rs' } }));
    if (batch.length === 50) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
  const session = await until(async () => {
    const got = await api(server.base, `/api/sessions/${s.id}`);
    return got.messages.filter((m) => m.role === 'tool_result').length === results && got;
  }, 600000, `${results} results`);
  // Every message's text as the page shows it: the prompt, the call, the file's content.
  const text = (m) => [
    m.content.text || '',
    ...(m.content.toolCalls || []).map((c) => `${c.name} ${JSON.stringify(c.input)}`),
    ...(m.content.output || []).map((o) => o.data?.content ?? JSON.stringify(o.data)),
  ].join('\n');
  const cards = session.messages.map((m) => `<section><h3>${esc(m.role)} ${esc(m.content.toolName || '')}</h3><pre>${esc(text(m))}</pre></section>`);
  statics.set('/results', staticPage('results', cards.join('')));

  const t = await api(server.base, '/api/sessions', { title: 'a big table' });
  const data = [];
  for (let i = 0; i < rows; i += 1) data.push({ id: i, name: `row ${i}`, value: (i * 7919) % 100003 });
  store(d, t.id, {
    callId: 'call_big', toolName: 'big', status: 'success',
    output: [{ kind: 'table', data: { columns: [{ key: 'id', type: 'number' }, { key: 'name' }, { key: 'value', type: 'number' }], rows: data } }],
  }, 'big');
  const trs = data.map((r) => `<tr><td>${r.id}</td><td>${esc(r.name)}</td><td>${r.value}</td></tr>`);
  statics.set('/table', staticPage('table', `<table><tr><th>id</th><th>name</th><th>value</th></tr>${trs.join('')}</table>`));
  site = await staticServer(statics);

  const drawn = await measure(page, `${server.base}/sessions/${s.id}`);
  // The cards beyond the first screen are made after the mark, in idle slices: every one is
  // there once the page says it is ready.
  await page.waitForSelector('body[data-ready="true"]', { timeout: 120000 });
  const out = {
    results: drawn,
    resultCards: await page.locator('.card').count(),
    resultsStatic: await measure(page, `${site.base}/results`),
    table: await measure(page, `${server.base}/sessions/${t.id}`),
    tableCount: await page.locator('.tw-count').innerText(),
    tableStatic: await measure(page, `${site.base}/table`),
  };
  if (out.resultCards !== results) throw new Error(`${out.resultCards} cards drawn, ${results} expected`);
  if (!out.tableCount.startsWith(`${rows} of ${rows}`)) throw new Error(`table shows "${out.tableCount}", ${rows} rows expected`);
  console.log(JSON.stringify(out));
} finally {
  site?.close();
  await browser.close();
  await server.stop();
}
