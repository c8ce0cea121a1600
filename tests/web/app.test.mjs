// The web app in Chromium against a real `toolwire serve`: every kind renders, media play
// live, after a reload and after a restart, results from another process arrive live and
// survive a dropped feed, approval from the page resumes the tool, hostile results never
// run script, and big sessions render whole (how fast: scripts/bench --only web_render).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readdirSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { ROOT, SCREENSHOTS } from './lib.mjs';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { launchBrowser, dirs, serve, api, cli, store, until, shot, everythingMcp } from './lib.mjs';
import { png, wav, webm, pdf } from './media.mjs';

let d;
let server;
let browser;
let page;
const sessions = {};

const b64 = (buf) => buf.toString('base64');

/** The page's visible text of the timeline, which reloads and restarts must keep. */
// The whole timeline's text, once every card is drawn. Cards draw as they near the viewport
// and sit in `content-visibility: auto` chunks, so innerText would depend on the scroll position and
// on timing: each pending card is scrolled to until none is left, and textContent (which
// ignores layout) is read one block per line.
async function timelineText() {
  await page.waitForFunction(() => {
    const view = window.toolwireView;
    const next = view.pendingDraw.keys().next();
    if (!next.done) next.value.scrollIntoView();
    return view.pendingDraw.size === 0;
  }, null, { timeout: 10000, polling: 50 });
  return page.locator('.timeline').evaluate((t) => [...t.querySelectorAll(':scope > .chunk > *')].map((c) => c.textContent).join('\n'));
}

/** The only frames a result may hold are inline SVGs' (hardening.test.mjs), drawn on the
 * sandbox origin. */
async function onlySandboxFrames() {
  const { sandboxOrigin } = await api(server.base, '/api/info');
  const srcs = await page.locator('.tw-result iframe').evaluateAll((fs) => fs.map((f) => [f.className, f.getAttribute('src')]));
  for (const [cls, src] of srcs) {
    assert.equal(cls, 'tw-svg-frame', src);
    assert.equal(new URL(src).origin, sandboxOrigin, src);
  }
}

async function open(path) {
  await page.goto(`${server.base}${path}`);
  await page.waitForSelector('body[data-ready="true"]');
}

before(async () => {
  d = dirs();
  writeFileSync(join(d.workspace, 'main.rs'), 'fn main() {\n    println!("hello");\n}\n');
  writeFileSync(join(d.workspace, 'pic.png'), png());
  const csv = ['city,population,country'];
  for (let i = 0; i < 60; i += 1) csv.push(`city${String(i).padStart(2, '0')},${(i * 7919) % 1000},c${i % 3}`);
  writeFileSync(join(d.workspace, 'cities.csv'), `${csv.join('\n')}\n`);
  server = await serve(d);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('pageerror', (e) => console.log('page error:', e.message));

  const s = await api(server.base, '/api/sessions', { title: 'every kind' });
  sessions.kinds = s.id;
  for (const [tool, input] of [
    ['read_file', { path: 'main.rs' }],
    ['list_dir', {}],
    ['query_csv', { path: 'cities.csv' }],
    ['view_image', { path: 'pic.png' }],
  ]) await api(server.base, `/api/sessions/${s.id}/calls`, { tool, input });
  store(d, s.id, {
    content: [
      { type: 'audio', data: b64(wav()), mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'file:///clip.webm', mimeType: 'video/webm', blob: b64(webm()) } },
    ],
  }, 'media');
  store(d, s.id, {
    callId: 'call_md', toolName: 'notes', status: 'success',
    output: [
      { kind: 'text', mimeType: 'text/markdown', data: { content: '# Notes\n\n**bold** and a [link](https://example.com)\n\n```rust\nfn x() {}\n```\n' } },
      { kind: 'diff', data: { path: 'a.txt', original: 'one\ntwo\nthree\n', modified: 'one\n2\nthree\nfour\n', isNew: false } },
      { kind: 'structured', data: { nested: { deep: [1, 2, { k: 'v' }] }, flag: true } },
      { kind: 'text', data: { content: 'for the model only' }, annotations: { audience: ['assistant'] } },
    ],
  });
  // A subagent's result names its child session, which the card opens.
  const child = await api(server.base, '/api/sessions', { title: 'the subagent' });
  sessions.child = child.id;
  store(d, s.id, {
    callId: 'call_task', toolName: 'task', status: 'success',
    output: [{ kind: 'text', data: { content: 'the subagent is done' } }],
    metadata: { childSessionId: child.id },
  }, 'task');
  await until(async () => (await api(server.base, `/api/sessions/${s.id}`)).messages.filter((m) => m.role === 'tool_result').length >= 7, 10000, 'seeded results');
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

test('a session with every kind renders', async () => {
  await open(`/sessions/${sessions.kinds}`);
  // Cards near the viewport are drawn in idle slices after the mark (`pump`): a busy
  // machine draws the first three before the rest, so wait for them, then say which lack.
  const every = ['file_content', 'file_list', 'table', 'image', 'file', 'text', 'diff', 'structured'];
  await page.waitForFunction((want) => {
    const have = new Set([...document.querySelectorAll('.tw-value')].map((e) => e.dataset.kind));
    return want.every((k) => have.has(k));
  }, every, { timeout: 10000 }).catch(() => {});
  const kinds = await page.$$eval('.tw-value', (els) => els.map((e) => e.dataset.kind));
  for (const k of every) assert.ok(kinds.includes(k), `${k} in ${kinds}`);
  // Images decode.
  await page.waitForFunction(() => [...document.querySelectorAll('img.tw-image')].every((i) => i.complete && i.naturalWidth > 0));
  // Audio and video load their metadata through the resource route (Range).
  await page.waitForFunction(() => {
    const m = [...document.querySelectorAll('audio, video')];
    return m.length === 2 && m.every((x) => x.readyState >= 1 && x.duration > 0);
  }, null, { timeout: 10000 });
  // Code is highlighted, with line numbers.
  assert.equal(await page.locator('.tw-gutter').first().innerText(), '1\n2\n3');
  // The table sorts on a header click, then filters.
  const table = page.locator('.tw-value[data-kind="table"]');
  const firstCell = () => table.locator('.tw-window .tw-tr').first().locator('.tw-td').nth(1).innerText();
  await table.locator('[data-role="sort"][data-key="population"]').click();
  const asc = Number(await firstCell());
  await table.locator('[data-role="sort"][data-key="population"]').click();
  const desc = Number(await firstCell());
  assert.ok(desc > asc, `sorted ${asc} then ${desc}`);
  await table.locator('[data-role="filter"]').fill('city07');
  assert.equal(await table.locator('.tw-window .tw-tr').count(), 1);
  assert.match(await table.locator('.tw-count').innerText(), /^1 of 60/);
  // The JSON tree collapses.
  const node = page.locator('.tw-value[data-kind="structured"] details.tw-node').first();
  assert.equal(await node.getAttribute('open'), '');
  await node.locator('> summary').click();
  assert.equal(await node.getAttribute('open'), null);
  // The diff toggles between unified and side by side.
  const diff = page.locator('.tw-diff');
  assert.equal(await diff.getAttribute('data-mode'), 'unified');
  await diff.locator('[data-role="diff-toggle"]').click();
  assert.equal(await diff.getAttribute('data-mode'), 'split');
  assert.ok(await diff.locator('.tw-diff-split').isVisible());
  // Markdown renders, as elements.
  assert.equal(await page.locator('.tw-markdown h1').innerText(), 'Notes');
  assert.equal(await page.locator('.tw-markdown strong').innerText(), 'bold');
  // Assistant-only values are behind a toggle.
  assert.equal(await page.locator('details.tw-assistant-only').getAttribute('open'), null);
  await shot(page, 'session-kinds');
  // A task call opens its child session.
  await page.locator('.card[data-tool="task"] a.child-session').click();
  await page.waitForURL(`**/sessions/${sessions.child}`);
  await page.waitForSelector('body[data-ready="true"]');
  assert.equal(await page.locator('h1.title').innerText(), 'the subagent');
});

test('reloading and restarting the server give the same page', async () => {
  await open(`/sessions/${sessions.kinds}`);
  // The four calls made through the API were made by a person, and their cards say so
  // (the stored call's `byPerson.via`); results stored with no call say nothing.
  const by = await page.$$eval('.card', (els) => els.map((e) => [e.dataset.tool, e.querySelector('.by-person')?.textContent ?? null]));
  assert.deepEqual(by.filter(([, who]) => who).map(([tool, who]) => `${tool}: ${who}`),
    ['read_file', 'list_dir', 'query_csv', 'view_image'].map((t) => `${t}: by you · web`));
  assert.ok(by.length > 4);
  const before = await timelineText();
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  assert.equal(await timelineText(), before);
  await server.stop();
  server = await serve(d, server.port);
  await open(`/sessions/${sessions.kinds}`);
  assert.equal(await timelineText(), before);
  // Media still play after the restart.
  await page.waitForFunction(() => [...document.querySelectorAll('audio, video')].every((x) => x.readyState >= 1), null, { timeout: 10000 });
  await page.waitForFunction(() => [...document.querySelectorAll('img.tw-image')].every((i) => i.complete && i.naturalWidth > 0));
});

test('the session list links to sessions', async () => {
  await open('/');
  assert.ok(await page.locator(`li[data-session-id="${sessions.kinds}"] a`).isVisible());
  await shot(page, 'session-list');
});

test('a result from another process arrives live, and a dropped feed loses nothing', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'live' });
  await open(`/sessions/${s.id}`);
  await until(() => page.evaluate(() => document.getElementById('conn').dataset.state === 'live'), 5000, 'feed open');
  cli(d, ['call', '--data-dir', '@data', '--workspace', '@ws', '--session', s.id, 'read_file', '{"path":"main.rs"}']);
  await page.waitForSelector('.card[data-tool="read_file"][data-state="output-available"]', { timeout: 5000 });
  // Drop the feed, add two results meanwhile, reconnect: both arrive, once each.
  await page.evaluate(() => window.toolwireView.source.close());
  cli(d, ['call', '--data-dir', '@data', '--workspace', '@ws', '--session', s.id, 'list_dir', '{}']);
  cli(d, ['call', '--data-dir', '@data', '--workspace', '@ws', '--session', s.id, 'read_file', '{"path":"cities.csv"}']);
  await page.evaluate(() => window.toolwireView.reconnect());
  await page.waitForFunction(() => document.querySelectorAll('.card[data-state="output-available"]').length === 3, null, { timeout: 5000 });
  const ids = await page.$$eval('.card', (cs) => cs.map((c) => c.dataset.callId));
  assert.equal(new Set(ids).size, ids.length, 'no card twice');
  assert.equal(ids.length, 3);
});

test('approving in the page resumes the tool', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'approval' });
  await open(`/sessions/${s.id}`);
  // The playground builds a form from write_file's inputSchema.
  await page.selectOption('.playground select[name="tool"]', 'write_file');
  await page.fill('.playground [name="path"]', 'approved.txt');
  await page.fill('.playground [name="content"]', 'written after approval\n');
  await page.click('.playground button[type="submit"]');
  const card = page.locator('.card[data-tool="write_file"]');
  await card.locator('button.approve').waitFor({ timeout: 5000 });
  assert.equal(await card.getAttribute('data-state'), 'approval-requested');
  await shot(page, 'approval');
  // The person takes a moment: that wait is shown apart from the call's duration.
  await page.waitForTimeout(1200);
  await card.locator('button.approve').click();
  await page.waitForSelector('.card[data-tool="write_file"][data-state="output-available"]', { timeout: 5000 });
  assert.match(await card.locator('.waited').innerText(), /^waited for you (1\.\d|[2-9]\.\d) s$/);
  assert.match(await card.locator('.duration').innerText(), /^\d+ ms$/);
  // The result is drawn when its card nears the viewport (an IntersectionObserver, after
  // the state changes): wait for the drawing, not only for the state.
  await card.locator('.tw-value[data-kind="diff"]').waitFor({ timeout: 5000 });
  assert.ok(await card.locator('.tw-value[data-kind="diff"]').isVisible());
  const read = cli(d, ['call', '--data-dir', '@data', '--workspace', '@ws', 'read_file', '{"path":"approved.txt"}']);
  assert.ok(read.includes('written after approval'), read);
});

/** What the window shows (not the whole page): where a card is on screen. */
function windowShot(name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/** Whether the last card of `tool` shows whole between the filter bar and the composer
 * (its top just under the bar when it is taller than the room). */
function cardInView(tool) {
  return page.evaluate((tool) => {
    const cards = document.querySelectorAll(`.card[data-tool="${tool}"]`);
    const card = cards[cards.length - 1];
    if (!card || card.hidden) return false;
    const top = document.querySelector('.filters').getBoundingClientRect().bottom;
    const bottom = document.querySelector('.composer').getBoundingClientRect().top;
    const r = card.getBoundingClientRect();
    return r.height > bottom - top ? r.top >= top - 1 && r.top < top + 40 : r.top >= top - 1 && r.bottom <= bottom + 1;
  }, tool);
}

test('the call you just made is brought into view; when the filter hides it, a line says so and shows it', async () => {
  for (const [scheme, width] of [['light', 1280], ['dark', 1280], ['light', 400], ['dark', 400]]) {
    const s = await api(server.base, '/api/sessions', { title: `in view ${scheme} ${width}` });
    await Promise.all(Array.from({ length: 25 }, () => api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'list_dir', input: {} })));
    await until(async () => (await api(server.base, `/api/sessions/${s.id}`)).messages.filter((m) => m.role === 'tool_result').length === 25, 10000, '25 results');
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width, height: 900 });
    await open(`/sessions/${s.id}`);
    await until(() => page.evaluate(() => document.getElementById('conn').dataset.state === 'live'), 5000, 'feed open');
    await page.selectOption('.playground select[name="tool"]', 'read_file');
    await page.fill('.playground [name="path"]', 'main.rs');
    await page.click('.playground button[type="submit"]');
    const made = page.locator('.card[data-tool="read_file"]');
    await made.locator('.tw-value').waitFor({ timeout: 10000 });
    await until(() => cardInView('read_file'), 5000, `the new card in view (${scheme}, ${width} px)`);
    await windowShot(`call-in-view-${scheme}-${width}`);
    // The filter shows list_dir only: the next call's card is hidden, and a line says so.
    await page.selectOption('.filters select[name="tool"]', 'list_dir');
    await page.click('.playground button[type="submit"]');
    const note = page.locator('.reveal-note');
    await note.waitFor({ timeout: 10000 });
    assert.equal(await note.locator(':scope').evaluate((n) => n.firstChild.textContent), 'Your call to read_file is hidden by the filter.');
    assert.equal(await made.count(), 2);
    assert.ok(await made.nth(1).isHidden());
    await windowShot(`call-hidden-note-${scheme}-${width}`);
    await note.locator('button[data-role="show-call"]').click();
    assert.equal(await page.locator('.filters select[name="tool"]').inputValue(), '');
    assert.ok(await made.nth(1).isVisible());
    await until(() => cardInView('read_file'), 5000, 'the hidden card shown and in view');
    assert.equal(await note.count(), 0);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1200, height: 900 });
});

test('the sidebar\'s counts follow the session live', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'counts' });
  await open(`/sessions/${s.id}`);
  await until(() => page.evaluate(() => document.getElementById('conn').dataset.state === 'live'), 5000, 'feed open');
  const counts = page.locator(`.sidebar li[data-session-id="${s.id}"] .counts`);
  assert.equal(await counts.innerText(), '0 calls');
  // Far sooner than the list's 15-second poll.
  const says = (text, what) => until(async () => (await counts.innerText()) === text, 4000, `the sidebar to say "${text}" (${what})`);
  const { callId } = await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'write_file', input: { path: 'counted.txt', content: 'x' } });
  await page.locator(`.card[data-call-id="${callId}"] button.approve`).waitFor({ timeout: 10000 });
  await says('1 call · 1 waiting', 'asked');
  await page.locator(`.card[data-call-id="${callId}"] button.approve`).click();
  await says('1 call', 'answered');
  await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'read_file', input: { path: 'nowhere.txt' } });
  await says('2 calls · 1 failed', 'failed');
});

test('at 400 px every control of the filter bar is in reach', async () => {
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width: 400, height: 900 });
    await open(`/sessions/${sessions.kinds}`);
    // Each control of the filter bar lies within the bar and the window, none clipped.
    const outside = await page.evaluate(() => {
      const bar = document.querySelector('.filters');
      const b = bar.getBoundingClientRect();
      return [...bar.querySelectorAll(':scope > :is(input, select, button)')].filter((c) => !c.hidden)
        .map((c) => [c.getAttribute('name') || c.dataset.role, c.getBoundingClientRect()])
        .filter(([, r]) => r.width === 0 || r.left < Math.max(0, b.left) - 0.5 || r.right > Math.min(innerWidth, b.right) + 0.5
          || r.top < b.top - 0.5 || r.bottom > b.bottom + 0.5)
        .map(([name, r]) => `${name} at ${Math.round(r.left)}..${Math.round(r.right)}`);
    });
    assert.deepEqual(outside, [], `${scheme}: controls out of reach at 400 px`);
    // (The server filter shows only with MCP servers: none here.)
    assert.equal(await page.locator('.filters > :is(input, select, button):not([hidden])').count(), 8);
    await windowShot(`filters-400-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1200, height: 900 });
});

test('hostile results never run script', async () => {
  const s = await api(server.base, '/api/sessions', { title: '<img src=x onerror="window.__pwned=1">' });
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="window.__pwned=1"><script>window.__pwned=1</script><rect width="10" height="10"/></svg>');
  const evil = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>';
  store(d, s.id, {
    callId: 'call_evil', toolName: 'evil', status: 'success',
    output: [
      { kind: 'text', mimeType: 'text/markdown', data: { content: `${evil}\n\n[click](javascript:window.__pwned=1) <a href="javascript:window.__pwned=1">x</a> <iframe src="javascript:window.__pwned=1"></iframe>` } },
      { kind: 'text', data: { content: evil } },
      { kind: 'table', data: { columns: [{ key: evil, label: evil }], rows: [{ [evil]: evil }] } },
      { kind: 'file_list', data: { path: evil, entries: [{ name: evil, type: 'file', size: 1 }] } },
      { kind: 'file_content', data: { path: `${evil}.html`, content: evil, size: evil.length } },
      { kind: 'image', mimeType: 'image/svg+xml', data: { source: { base64: b64(svg) } } },
      { kind: 'resource_link', data: { uri: 'javascript:window.__pwned=1', name: evil } },
      { kind: evil.replace(/[^a-z]/g, '') || 'custom', data: { html: evil } },
    ],
    widgets: [{ widget: evil, data: { html: evil }, fallback: evil }],
  }, 'evil');
  store(d, s.id, { content: [{ type: 'image', data: b64(svg), mimeType: 'image/svg+xml' }] }, 'evil_svg');
  await open(`/sessions/${s.id}`);
  await page.waitForSelector('.card[data-tool="evil_svg"] .tw-value');
  // Click every link and the image; nothing may run.
  for (const a of await page.locator('.tw-result a').all()) await a.click({ modifiers: ['Control'] }).catch(() => {});
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await onlySandboxFrames();
  assert.equal(await page.locator('.tw-result script, .tw-result [onerror]').count(), 0);
  assert.equal(await page.locator('.tw-result a[href^="javascript:"]').count(), 0);
  // The text is shown as text.
  await page.locator('.card[data-tool="evil"] .tw-value').first().waitFor({ timeout: 5000 });
  assert.ok((await page.locator('.card[data-tool="evil"]').innerText()).includes('<script>'));
  await shot(page, 'hostile');
});

test('a 1,000-result session and a 100,000-row table render whole', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'a thousand results' });
  const batch = [];
  for (let i = 0; i < 1000; i += 1) {
    batch.push(api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'read_file', input: { path: 'main.rs' } }));
    if (batch.length === 50) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
  await until(async () => (await api(server.base, `/api/sessions/${s.id}`)).messages.filter((m) => m.role === 'tool_result').length === 1000, 60000, '1,000 results');
  // How fast is measured by `scripts/bench --only web_render` (tests/web/bench_render.mjs)
  // against a release server, beside a static page of the same text; here, only that
  // every card and every row is there.
  await open(`/sessions/${s.id}`);
  assert.equal(await page.locator('.card').count(), 1000);

  const t = await api(server.base, '/api/sessions', { title: 'a big table' });
  const rows = [];
  for (let i = 0; i < 100000; i += 1) rows.push({ id: i, name: `row ${i}`, value: (i * 7919) % 100003 });
  store(d, t.id, {
    callId: 'call_big', toolName: 'big', status: 'success',
    output: [{ kind: 'table', data: { columns: [{ key: 'id', type: 'number' }, { key: 'name' }, { key: 'value', type: 'number' }], rows } }],
  }, 'big');
  await open(`/sessions/${t.id}`);
  assert.match(await page.locator('.tw-count').innerText(), /^100000 of 100000/);
  await shot(page, 'big-table');
});

test('an MCP elicitation form answered in the page resumes the call', async () => {
  const e = dirs();
  const mcp = await serve(e, undefined, everythingMcp());
  try {
    const s = await api(mcp.base, '/api/sessions', { title: 'elicitation' });
    await page.goto(`${mcp.base}/sessions/${s.id}`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.selectOption('.playground select[name="tool"]', 'ev__trigger-elicitation-request');
    await page.click('.playground button[type="submit"]');
    const card = page.locator('.card[data-tool="ev__trigger-elicitation-request"]');
    const approve = card.locator('button.approve');
    const form = card.locator('.ask form');
    await Promise.race([approve.waitFor({ timeout: 15000 }), form.waitFor({ timeout: 15000 })]);
    if (await approve.isVisible()) await approve.click();
    await form.waitFor({ timeout: 15000 });
    assert.equal(await card.getAttribute('data-state'), 'input-requested');
    // The form is built from the server's requestedSchema, defaults and choices included.
    assert.equal(await form.locator('[name="integer"]').inputValue(), '42');
    assert.equal(await form.locator('[name="email"]').getAttribute('type'), 'email');
    await form.locator('[name="name"]').fill('Ada Lovelace');
    await form.locator('[name="legacyTitledEnum"]').selectOption({ label: 'Dogs' });
    await shot(page, 'elicitation');
    await form.locator('button.answer').click();
    await page.waitForSelector('.card[data-tool="ev__trigger-elicitation-request"][data-state="output-available"]', { timeout: 15000 });
    // The result is drawn when its card nears the viewport: wait for it, not for the state.
    await card.locator('.result').filter({ hasText: 'Name: Ada Lovelace' }).waitFor({ timeout: 5000 });
    const text = await card.locator('.result').innerText();
    assert.match(text, /Name: Ada Lovelace/);
    assert.match(text, /Favorite Integer: 42/);
  } finally {
    await mcp.stop();
  }
});

test('an MCP App gets tool input and result, resizes, calls a tool through the host, and is walled off', async () => {
  const e = dirs();
  const apps = await serve(e, undefined, ['--mcp', `app=node ${join(ROOT, 'tests/web/app_server.mjs')}`]);
  try {
    const info = await api(apps.base, '/api/info');
    assert.match(info.sandboxOrigin, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(info.sandboxOrigin, apps.base);
    const s = await api(apps.base, '/api/sessions', { title: 'apps' });
    await page.goto(`${apps.base}/sessions/${s.id}`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.selectOption('.playground select[name="tool"]', 'app__show_app');
    await page.fill('.playground [name="api"]', apps.base);
    await page.click('.playground button[type="submit"]');
    const card = page.locator('.card[data-tool="app__show_app"]');
    const approve = card.locator('button.approve');
    await Promise.race([approve.waitFor({ timeout: 15000 }).catch(() => {}), card.locator('iframe.tw-app-frame').waitFor({ timeout: 15000 })]);
    if (await approve.isVisible()) await approve.click();
    const frame = card.locator('iframe.tw-app-frame');
    await frame.waitFor({ timeout: 15000 });
    const log = page.frameLocator('.card[data-tool="app__show_app"] iframe.tw-app-frame').frameLocator('iframe').locator('#log');
    // The app's call of a tool only apps may call (visibility ["app"]) is the app's
    // business once it runs: it is not put to the person again.
    await until(async () => (await log.innerText().catch(() => '')).includes('done'), 20000, 'the app to finish, asking nothing');
    assert.equal((await api(apps.base, `/api/sessions/${s.id}/suspensions`)).length, 0);
    assert.equal(await page.locator('.card[data-tool="app__app_only"] button.approve').count(), 0);
    const text = await log.innerText();
    assert.match(text, /^context \{"theme":"(light|dark)","displayMode":"inline","locale":"string","width":"number"\}$/m);
    assert.match(text, new RegExp(`^input \\{"api":"${apps.base.replace(/[.]/g, '\\.')}"\\}$`, 'm'));
    assert.match(text, /^result \{"count":3\} the app is shown$/m);
    assert.match(text, /^parent: blocked$/m);
    assert.match(text, /^fetch: blocked$/m);
    // Blocked by the sandbox's policy (connect-src 'none'), not merely by CORS.
    assert.match(text, /^violation connect-src$/m);
    assert.match(text, /^call pong ping$/m);
    assert.match(text, /^read text\/html;profile=mcp-app$/m);
    assert.match(text, /^model_only: (refused|error)$/m);
    assert.match(text, /^worker ok$/m);
    // The host resized the frame to the grown view, and stored the app's call as a card.
    const height = await frame.evaluate((f) => f.getBoundingClientRect().height);
    assert.ok(height > 600, `frame height ${height}`);
    assert.equal(await page.locator('.card[data-tool="app__app_only"][data-state="output-available"]').count(), 1);
    assert.equal(await page.locator('.card[data-tool="app__model_only"]').count(), 0);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    // The server, not only the page, keeps an app to its own server's tools that apps may
    // call: refused when the tool's visibility leaves out "app", unknown off its server.
    await assert.rejects(api(apps.base, `/api/sessions/${s.id}/calls`, { tool: 'model_only', input: {}, app: 'app__show_app' }), /403 .*not callable by apps/);
    await assert.rejects(api(apps.base, `/api/sessions/${s.id}/calls`, { tool: 'app__app_only', input: {}, app: 'app__show_app' }), /404 .*no tool .*app__app_only.* on MCP server .*app/);
    const tools = await api(apps.base, '/api/tools');
    assert.deepEqual(tools.find((t) => t.name === 'app__app_only').origin, { source: 'app', name: 'app_only' });
    // The sidebar says which tools are the app's alone.
    await until(async () => (await page.locator('.sidebar li[data-tool-name="app__app_only"] .badge').count()) > 0, 10000, 'the app-only badge');
    assert.deepEqual(await page.locator('.sidebar li[data-tool-name="app__app_only"] .badge').allInnerTexts(), ['app only']);
    await shot(page, 'mcp-app');
  } finally {
    await apps.stop();
  }
});

/** Runs `tool` in session `s` through the API (as `app`'s view when given), approving
 * it if it asks, and waits for its stored result. */
async function callApproved(base, s, tool, input, app) {
  const { callId } = await api(base, `/api/sessions/${s}/calls`, { tool, input, ...(app ? { app } : {}) });
  return until(async () => {
    for (const p of await api(base, `/api/sessions/${s}/suspensions`)) {
      if (p.call.id === callId) await api(base, `/api/sessions/${s}/suspensions/${p.suspension.id}`, { type: 'approve' }).catch(() => {});
    }
    const { messages } = await api(base, `/api/sessions/${s}`);
    return messages.find((m) => m.role === 'tool_result' && m.content.callId === callId);
  }, 15000, `the result of ${tool}`);
}

test('opening a session with an MCP App calls no tool and stores nothing; the app calls once the person uses it', async () => {
  const e = dirs();
  const apps = await serve(e, undefined, ['--mcp', `app=node ${join(ROOT, 'tests/web/app_server.mjs')}`]);
  try {
    const s = (await api(apps.base, '/api/sessions', { title: 'an app in history' })).id;
    // History: the app's call, and the call its view made on load.
    await callApproved(apps.base, s, 'app__show_app', { api: apps.base });
    await callApproved(apps.base, s, 'app_only', { word: 'ping' }, 'app__show_app');
    const stored = async () => {
      const { messages } = await api(apps.base, `/api/sessions/${s}`);
      return { messages: messages.length, waiting: (await api(apps.base, `/api/sessions/${s}/suspensions`)).length };
    };
    const before = await stored();
    assert.deepEqual(before.waiting, 0);
    await page.goto(`${apps.base}/sessions/${s}`);
    await page.waitForSelector('body[data-ready="true"]');
    const app = page.frameLocator('.card[data-tool="app__show_app"] iframe.tw-app-frame').frameLocator('iframe');
    const log = app.locator('#log');
    await until(async () => (await log.innerText().catch(() => '')).includes('done'), 20000, 'the app to load');
    // Its view got the stored input and result, and its call on load was answered from
    // the stored one: nothing ran, nothing was stored, nothing waits.
    const text = await log.innerText();
    assert.match(text, new RegExp(`^input \\{"api":"${apps.base.replace(/[.]/g, '\\.')}"\\}$`, 'm'));
    assert.match(text, /^result \{"count":3\} the app is shown$/m);
    assert.match(text, /^call pong ping$/m);
    await page.waitForTimeout(500);
    assert.deepEqual(await stored(), before);
    assert.equal(await page.locator('.card').count(), 2);
    // Reloading changes nothing either.
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await until(async () => (await log.innerText().catch(() => '')).includes('done'), 20000, 'the app to load again');
    await page.waitForTimeout(500);
    assert.deepEqual(await stored(), before);
    // The person uses the app: its call runs like any (asking for approval first).
    await app.locator('#again').click();
    // It asks for approval like any call: approve it whenever it asks.
    const deadline = Date.now() + 20000;
    while (!(await log.innerText()).includes('again ')) {
      const approve = page.locator('.card[data-tool="app__app_only"] button.approve');
      if (await approve.isVisible().catch(() => false)) await approve.click().catch(() => {});
      if (Date.now() > deadline) throw new Error(`the app's call did not end: ${await log.innerText()}`);
      await page.waitForTimeout(100);
    }
    assert.match(await log.innerText(), /^again pong again$/m);
    const after = await stored();
    assert.equal(after.messages, before.messages + 2, 'the call and its result');
    assert.equal(after.waiting, 0);
  } finally {
    await apps.stop();
  }
});

test('an MCP App\'s HTML is stored once and fetched by its key; a result stored with it inline still draws', async () => {
  const e = dirs();
  const apps = await serve(e, undefined, ['--mcp', `app=node ${join(ROOT, 'tests/web/app_server.mjs')}`]);
  try {
    const s = (await api(apps.base, '/api/sessions', { title: 'one page, two calls' })).id;
    const first = await callApproved(apps.base, s, 'app__show_app', { api: apps.base });
    const second = await callApproved(apps.base, s, 'app__show_app', { api: apps.base });
    // Each result names the page by its key; neither carries it.
    const app1 = first.content.widgets[0].app;
    const app2 = second.content.widgets[0].app;
    assert.match(app1.htmlBlob, /^blake3:[0-9a-f]{64}$/);
    assert.equal(app2.htmlBlob, app1.htmlBlob);
    assert.equal(app1.html, undefined);
    assert.equal(app2.html, undefined);
    const r = await fetch(`${apps.base}/api/resources/${app1.htmlBlob}/content`);
    const html = await r.text();
    assert.match(html, /<title>test app<\/title>/);
    const drawn = async (nth) => {
      const log = page.frameLocator('.card[data-tool="app__show_app"] iframe.tw-app-frame').nth(nth).frameLocator('iframe').locator('#log');
      await until(async () => (await log.innerText().catch(() => '')).includes('done'), 20000, `app ${nth} to draw`);
      assert.match(await log.innerText(), /^result \{"count":3\} the app is shown$/m);
    };
    await page.goto(`${apps.base}/sessions/${s}`);
    await page.waitForSelector('body[data-ready="true"]');
    await drawn(0);
    await drawn(1);
    // A result stored before pages were kept by key holds its HTML inline: it draws the same.
    execFileSync('python3', ['-c', `
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
(body,) = db.execute("select body from messages where session_id = ? and role = 'tool_result' and call_id = ?", (sys.argv[2], sys.argv[3])).fetchone()
result = json.loads(body)
app = result["widgets"][0]["app"]
del app["htmlBlob"]
app["html"] = sys.stdin.read()
db.execute("update messages set body = ? where session_id = ? and call_id = ? and role = 'tool_result'", (json.dumps(result), sys.argv[2], sys.argv[3]))
db.commit()
`, join(e.data, 'history.db'), s, first.content.callId], { input: html });
    const { messages } = await api(apps.base, `/api/sessions/${s}`);
    const old = messages.find((m) => m.role === 'tool_result' && m.content.callId === first.content.callId);
    assert.equal(old.content.widgets[0].app.html, html, 'the row is an old one now');
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await drawn(0);
    await drawn(1);
  } finally {
    await apps.stop();
  }
});

// server-pdf's viewer reads its PDF through an app-only tool whose structuredContent holds
// the bytes as base64, and parses it with pdf.js, whose worker script is a data: URL.
test('server-pdf\'s viewer, a real MCP App, reads its bytes and draws its document', async () => {
  const e = dirs();
  const file = join(e.workspace, 'test.pdf');
  writeFileSync(file, pdf('toolwire test page'));
  // The server reads only the file it is given (no network: the test runs offline).
  const entry = join(ROOT, 'tests/mcp/node_modules/@modelcontextprotocol/server-pdf/dist/index.js');
  const apps = await serve(e, undefined, ['--mcp', `pdf=node ${entry} --stdio ${file}`]);
  try {
    const s = await api(apps.base, '/api/sessions', { title: 'a PDF' });
    await page.goto(`${apps.base}/sessions/${s.id}`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.selectOption('.playground select[name="tool"]', 'pdf__display_pdf');
    await page.fill('.playground [name="url"]', file);
    await page.click('.playground button[type="submit"]');
    const card = page.locator('.card[data-tool="pdf__display_pdf"]');
    const approve = card.locator('button.approve');
    await Promise.race([approve.waitFor({ timeout: 20000 }).catch(() => {}), card.locator('iframe.tw-app-frame').waitFor({ timeout: 20000 })]);
    if (await approve.isVisible()) await approve.click();
    const viewer = page.frameLocator('.card[data-tool="pdf__display_pdf"] iframe.tw-app-frame').frameLocator('iframe');
    // The page is drawn: its text layer (pdf.js, from the worker's parse) holds the text,
    // and the viewer no longer says it is loading.
    await until(async () => (await viewer.locator('#text-layer').innerText().catch(() => '')).includes('toolwire test page'), 30000, 'the PDF\'s page to be drawn');
    assert.match(await viewer.locator('#total-pages').innerText(), /\b1$/);
    // And its canvas holds the page's drawing: the blue bar.
    const inner = page.frames().find((f) => f.url() === 'about:srcdoc' && f.parentFrame() && f.parentFrame().url().includes('/sandbox'));
    await until(() => inner.evaluate(() => {
      const c = document.getElementById('pdf-canvas');
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      for (let i = 0; i < data.length; i += 4) if (data[i + 2] > 150 && data[i] < 80) return true;
      return false;
    }), 10000, 'the page\'s blue bar on the canvas');
    assert.equal(await viewer.locator('#loading').isVisible(), false);
    // The server list says which revision it speaks.
    assert.match(await page.locator('.sidebar details.server[data-server="pdf"] .server-target').innerText(), / · MCP 2025-11-25$/);
    // Its byte reads are the app's own calls (visibility ["app"]): nothing waits.
    assert.equal((await api(apps.base, `/api/sessions/${s.id}/suspensions`)).length, 0);
    // The viewer itself, the call form out of its way.
    const hide = page.locator('.playground button', { hasText: 'Hide form' });
    if (await hide.isVisible()) await hide.click();
    mkdirSync(SCREENSHOTS, { recursive: true });
    await card.locator('iframe.tw-app-frame').screenshot({ path: join(SCREENSHOTS, 'mcp-app-pdf.png') });
  } finally {
    await apps.stop();
  }
});

// server-system-monitor's app polls its app-only tool (poll-system-stats, visibility
// ["app"]) every 2 s once it has the system's description, and draws what comes back: the
// memory bar and figures, the uptime, a CPU chart on a canvas. Each poll is the app's own
// business once the person let it run (issue 45 item 1): none waits for an Approve.
test('server-system-monitor, a real MCP App, polls its app-only tool with no approval and draws what it reads', async () => {
  const e = dirs();
  const entry = join(ROOT, 'tests/mcp/node_modules/@modelcontextprotocol/server-system-monitor/dist/index.js');
  const apps = await serve(e, undefined, ['--mcp', `sm=node ${entry} --stdio`]);
  try {
    const s = await api(apps.base, '/api/sessions', { title: 'system monitor' });
    await page.goto(`${apps.base}/sessions/${s.id}`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.selectOption('.playground select[name="tool"]', 'sm__get-system-info');
    await page.click('.playground button[type="submit"]');
    const card = page.locator('.card[data-tool="sm__get-system-info"]');
    const approve = card.locator('button.approve');
    await Promise.race([approve.waitFor({ timeout: 20000 }).catch(() => {}), card.locator('iframe.tw-app-frame').waitFor({ timeout: 20000 })]);
    if (await approve.isVisible()) await approve.click();
    const app = page.frameLocator('.card[data-tool="sm__get-system-info"] iframe.tw-app-frame').frameLocator('iframe');
    // What its first tool said: this machine's name.
    await until(async () => (await app.locator('#info-hostname').innerText().catch(() => '')) === hostname(), 30000, 'the host name in the app');
    // Three polls answered (about 4 s), none of them waiting for a person at any point.
    const polls = async () => (await api(apps.base, `/api/sessions/${s.id}`)).messages
      .filter((m) => m.role === 'tool_result' && m.content.toolName === 'sm__poll-system-stats' && m.content.status === 'success').length;
    await until(async () => {
      const waiting = await api(apps.base, `/api/sessions/${s.id}/suspensions`);
      assert.equal(waiting.length, 0, `waiting for approval: ${JSON.stringify(waiting)}`);
      return (await polls()) >= 3;
    }, 20000, 'three polls of poll-system-stats');
    assert.equal(await page.locator('.card button.approve').count(), 0);
    // What the polls drew: the memory's share and sizes, the uptime, the time of the last poll.
    assert.match(await app.locator('#memory-percent').innerText(), /^\d+(\.\d+)?%$/);
    assert.match(await app.locator('#memory-detail').innerText(), /^\d+\.\d (B|KB|MB|GB|TB) \/ \d+\.\d (KB|MB|GB|TB)$/);
    assert.notEqual(await app.locator('#info-uptime').innerText(), '--');
    assert.match(await app.locator('#status-text').innerText(), /^\d\d:\d\d:\d\d$/);
    const width = await app.locator('#memory-bar-fill').evaluate((el) => parseFloat(el.style.width));
    assert.ok(width > 0 && width <= 100, `memory bar at ${width}%`);
    // And its chart: Chart.js drew the first core's legend box, in its blue, on the canvas.
    const inner = page.frames().find((f) => f.url() === 'about:srcdoc' && f.parentFrame() && f.parentFrame().url().includes('/sandbox'));
    await until(() => inner.evaluate(() => {
      const c = document.getElementById('cpu-chart');
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      for (let i = 0; i < data.length; i += 4) if (data[i + 3] > 128 && data[i + 2] > 200 && data[i] < 110 && data[i + 1] > 100 && data[i + 1] < 160) return true;
      return false;
    }), 10000, 'the CPU chart on its canvas');
    // The sidebar says the polling tool is the app's alone.
    await until(async () => (await page.locator('.sidebar li[data-tool-name="sm__poll-system-stats"] .badge').count()) > 0, 10000, 'the app-only badge');
    assert.ok((await page.locator('.sidebar li[data-tool-name="sm__poll-system-stats"] .badge').allInnerTexts()).includes('app only'));
    // The polls fold into the newest one's card, which says how many came before and shows
    // them on request; a page opened afterwards folds them the same way from the stored calls.
    const pollCards = '.card[data-tool="sm__poll-system-stats"]';
    const folded = async (on) => {
      await until(async () => {
        const note = /^\+(\d+) earlier calls?$/.exec(await on.locator(`${pollCards} button.series`).innerText().catch(() => ''));
        return (await on.locator(`${pollCards}:visible`).count()) === 1 && note && Number(note[1]) >= 2;
      }, 10000, 'one poll card with the earlier ones folded into it');
      assert.equal(await on.locator(`${pollCards} button.series`).getAttribute('aria-expanded'), 'false');
    };
    await folded(page);
    // The app made these calls, not the person: the card says so.
    assert.equal(await page.locator(`${pollCards}:visible .by-person`).innerText(), 'by the sm__get-system-info app');
    // The button goes with the newest card as the polls come (every 2 s), the same
    // element: focus on it stays through a poll, and one click does it, whenever the next
    // poll lands.
    const button = await page.locator(`${pollCards} button.series`).elementHandle();
    await button.focus();
    const count = async () => Number(/\d+/.exec(await button.innerText())[0]);
    const seen = await count();
    await until(async () => (await count()) > seen, 10000, 'a poll while the button has focus');
    assert.ok(await button.evaluate((el) => el.isConnected && document.activeElement === el && !el.closest('.card').hidden), 'the same button, focused, on the shown card');
    const toggle = async (want) => {
      const button = page.locator(`${pollCards} button.series`);
      await button.click();
      await until(async () => (await button.getAttribute('aria-expanded')) === want, 5000, `the earlier polls ${want === 'true' ? 'shown' : 'folded'}`);
    };
    await toggle('true');
    assert.ok((await page.locator(`${pollCards}:visible`).count()) >= 3, 'the earlier polls shown');
    assert.match(await page.locator(`${pollCards} button.series`).innerText(), /^fold \d+ earlier calls$/);
    await toggle('false');
    await folded(page);
    const later = await browser.newPage();
    try {
      await later.goto(`${apps.base}/sessions/${s.id}`);
      await later.waitForSelector('body[data-ready="true"]');
      await folded(later);
      // Polls made while this page is open come on its feed, and fold as they come.
      const before = await later.locator(pollCards).count();
      await until(async () => (await later.locator(pollCards).count()) >= before + 2, 10000, 'two more polls on the second page');
      await folded(later);
    } finally {
      await later.close();
    }
  } finally {
    await apps.stop();
  }
});

// mcp-echarts' generate_echarts takes its option as a JSON string, which people write on
// several lines (issue 45 item 2): Edit & re-run gives it back in a text area, lines and
// indentation kept, and calling again sends exactly that. Its chart comes as an image
// block (base64 PNG), drawn as an image, never as its base64.
test('mcp-echarts: a multi-line echartsOption keeps its lines through Edit & re-run, and its chart is an image', async () => {
  const e = dirs();
  const entry = join(ROOT, 'tests/mcp/node_modules/mcp-echarts/build/index.js');
  const charts = await serve(e, undefined, ['--mcp', `ec=node ${entry}`]);
  try {
    const s = (await api(charts.base, '/api/sessions', { title: 'a chart' })).id;
    const echartsOption = '{\n  "title": {"text": "Sales"},\n  "xAxis": {"data": ["north", "south"]},\n  "yAxis": {},\n  "series": [{"type": "bar", "data": [5, 20]}]\n}';
    const input = { echartsOption, width: 400, height: 300 };
    await callApproved(charts.base, s, 'ec__generate_echarts', input);
    await page.goto(`${charts.base}/sessions/${s}`);
    await page.waitForSelector('body[data-ready="true"]');
    const card = page.locator('.card[data-tool="ec__generate_echarts"]').first();
    const img = card.locator('.tw-result img');
    await img.waitFor({ timeout: 15000 });
    // Drawn from the stored PNG: 1200×900, the server's pixel ratio of 3.
    await until(() => img.evaluate((i) => i.complete && i.naturalWidth === 1200 && i.naturalHeight === 900), 10000, 'the chart image');
    assert.ok(!(await card.innerText()).includes('iVBORw0KGgo'), 'base64 shown');
    await card.locator('[data-rerun="edit"]').click();
    const field = page.locator('.playground [name="echartsOption"]');
    assert.equal(await field.evaluate((el) => el.tagName), 'TEXTAREA');
    assert.equal(await field.inputValue(), echartsOption);
    await page.click('.playground button[type="submit"]');
    const approve = page.locator('.card[data-tool="ec__generate_echarts"] button.approve');
    await until(async () => {
      if (await approve.first().isVisible().catch(() => false)) await approve.first().click().catch(() => {});
      const { messages } = await api(charts.base, `/api/sessions/${s}`);
      return messages.filter((m) => m.role === 'tool_result').length === 2;
    }, 20000, 'the second chart');
    const inputs = (await api(charts.base, `/api/sessions/${s}`)).messages.flatMap((m) => m.content.toolCalls || []).map((c) => c.input);
    // The fields the first call left out (theme and outputType, which have defaults) stay
    // out: the call made again is the one made before.
    assert.deepEqual(inputs, [input, input]);
  } finally {
    await charts.stop();
  }
});

test('media a tool returns play live, after a reload and after a restart', async () => {
  const e = dirs();
  writeFileSync(join(e.base, 'tone.wav'), wav(2));
  writeFileSync(join(e.base, 'clip.webm'), webm());
  let media = await serve(e, undefined, ['--mcp', `app=node ${join(ROOT, 'tests/web/app_server.mjs')}`]);
  const plays = async () => {
    const card = page.locator('.card[data-tool="app__media"][data-state="output-available"]');
    await card.waitFor({ timeout: 15000 });
    // Each player loads through the resource route and actually advances when played.
    await page.waitForFunction(() => {
      const m = [...document.querySelectorAll('.card[data-tool="app__media"] audio, .card[data-tool="app__media"] video')];
      return m.length === 2 && m.every((x) => x.readyState >= 1 && x.duration > 0);
    }, null, { timeout: 10000 });
    await page.evaluate(() => Promise.all([...document.querySelectorAll('.card[data-tool="app__media"] audio, .card[data-tool="app__media"] video')]
      .map((x) => { x.muted = true; return x.play(); })));
    await page.waitForFunction(() => [...document.querySelectorAll('.card[data-tool="app__media"] audio, .card[data-tool="app__media"] video')]
      .every((x) => x.currentTime > 0.2), null, { timeout: 10000 });
    // Seeking works: the server answers Range requests.
    const seekable = await page.evaluate(() => [...document.querySelectorAll('.card[data-tool="app__media"] audio, .card[data-tool="app__media"] video')]
      .every((x) => x.seekable.length > 0));
    assert.ok(seekable, 'media are seekable');
  };
  try {
    const s = await api(media.base, '/api/sessions', { title: 'media' });
    await page.goto(`${media.base}/sessions/${s.id}`);
    await page.waitForSelector('body[data-ready="true"]');
    await until(() => page.evaluate(() => document.getElementById('conn').dataset.state === 'live'), 5000, 'feed open');
    await page.selectOption('.playground select[name="tool"]', 'app__media');
    await page.fill('.playground [name="audio"]', join(e.base, 'tone.wav'));
    await page.fill('.playground [name="video"]', join(e.base, 'clip.webm'));
    await page.click('.playground button[type="submit"]');
    // The tool is not marked read-only, so it asks first; the question comes on the feed,
    // after the click: wait for it or for the result, whichever is first.
    const approve = page.locator('.card[data-tool="app__media"] button.approve');
    const done = page.locator('.card[data-tool="app__media"][data-state="output-available"]');
    await Promise.race([approve.waitFor({ timeout: 15000 }), done.waitFor({ timeout: 15000 })]).catch(() => {});
    if (await approve.isVisible().catch(() => false)) await approve.click();
    await plays();
    await shot(page, 'media-live');
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await plays();
    await media.stop();
    media = await serve(e, media.port, ['--mcp', `app=node ${join(ROOT, 'tests/web/app_server.mjs')}`]);
    await page.goto(`${media.base}/sessions/${s.id}`);
    await page.waitForSelector('body[data-ready="true"]');
    await plays();
  } finally {
    await media.stop();
  }
});

test('the hostile corpus (tests/hostile) through the server and the page', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'hostile corpus' });
  const dir = join(ROOT, 'tests/hostile');
  let stored = 0;
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    try {
      cli(d, ['normalize', '--data-dir', '@data', '--store', '--session', s.id, '--tool', name.replace(/\W/g, '_'), '--compact', join(dir, name)]);
      stored += 1;
    } catch {
      // Refused with a clear error (e.g. JSON nested 100,000 deep): nothing to show.
    }
  }
  assert.ok(stored >= 5, `${stored} payloads stored`);
  // The API serves the session and every model view of it.
  for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'gemini']) {
    const r = await fetch(`${server.base}/api/sessions/${s.id}/export?provider=${provider}`);
    assert.equal(r.status, 200, provider);
  }
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await open(`/sessions/${s.id}`);
  assert.equal(await page.locator('.card').count(), stored);
  // Draw every card (results are drawn as they near the viewport).
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await onlySandboxFrames();
  assert.equal(await page.locator('.tw-result script, .tw-result [onerror], .tw-result [onload]').count(), 0);
  assert.deepEqual(errors, []);
  await shot(page, 'hostile-corpus');
});

test('with a provider, the chat box runs a turn and its reply streams into the page', async () => {
  // A local stand-in for the OpenAI chat completions API: the wire format, streamed.
  const asked = [];
  const mock = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      asked.push(JSON.parse(body));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta, finish) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'mock', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.write(chunk({ role: 'assistant', content: 'Hello ' }, null));
      res.write(chunk({ content: 'from the <b>mock</b>' }, null));
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise((r) => mock.listen(0, '127.0.0.1', r));
  const e = dirs();
  const chat = await serve(e, undefined, ['--provider', 'openai-chat', '--base-url', `http://127.0.0.1:${mock.address().port}`, '--model', 'mock-model']);
  try {
    const info = await api(chat.base, '/api/info');
    assert.equal(info.provider, 'openai-chat');
    const s = await api(chat.base, '/api/sessions', { title: 'chat' });
    await page.goto(`${chat.base}/sessions/${s.id}`);
    await page.waitForSelector('body[data-ready="true"]');
    assert.equal(await page.locator('.playground').count(), 0);
    await page.fill('form.chat textarea', 'Say hello');
    await page.click('form.chat button[type="submit"]');
    await page.waitForFunction(() => [...document.querySelectorAll('.msg.assistant')].some((m) => m.textContent === 'Hello from the <b>mock</b>'), null, { timeout: 10000 });
    assert.equal(await page.locator('.msg.assistant b').count(), 0, 'model text is text');
    const last = asked[asked.length - 1];
    assert.equal(last.model, 'mock-model');
    assert.ok(last.messages.some((m) => m.role === 'user' && JSON.stringify(m.content).includes('Say hello')));
    // After the turn the page is drawn from the stored messages: the same text, once.
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    assert.equal(await page.locator('.msg.assistant').count(), 1);
    assert.equal(await page.locator('.msg.user').innerText(), 'Say hello');
    await shot(page, 'chat');
  } finally {
    await chat.stop();
    mock.close();
  }
});
