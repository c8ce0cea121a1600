// The application shell in Chromium: the sidebar (sessions, tools with their badges), the
// filter bar and its URL, folding, the compact view, keyboard shortcuts, and axe-core
// finding no serious or critical violation in either theme on every page: the session
// list, a session with every kind, a pending approval, an elicitation form, the composer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, until, api, store, SCREENSHOTS } from './lib.mjs';
import { seeded, elicitationForm } from './seed.mjs';

const require = createRequire(import.meta.url);
const AXE = require.resolve('axe-core/axe.min.js');

let d;
let server;
let sessions;
let browser;

before(async () => {
  ({ d, server, sessions } = await seeded());
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

/** A page in its own context: axe is injected as a script, which the app's CSP refuses. */
async function newPage(colorScheme = 'light', width = 1280) {
  const context = await browser.newContext({ bypassCSP: true, colorScheme, viewport: { width, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.errors = errors;
  return page;
}

async function open(page, path) {
  await page.goto(`${server.base}${path}`);
  await page.waitForSelector('body[data-ready="true"]');
}

/** Draws every card (each is drawn as it nears the viewport) and lays every one out, so
 * axe checks all of them and not only those on screen. */
async function drawAll(page) {
  await page.addStyleTag({ content: '.chunk { content-visibility: visible !important; }' });
  await page.waitForFunction(() => {
    const view = window.toolwireView;
    if (!view) return true;
    const next = view.pendingDraw.keys().next();
    if (!next.done) next.value.scrollIntoView();
    return view.pendingDraw.size === 0;
  }, null, { timeout: 10000, polling: 50 });
  await page.evaluate(() => window.scrollTo(0, 0));
}

/** axe-core's serious and critical violations of the page, one line each; `rules`
 * turns on rules axe leaves off by default (WCAG 2.2's `target-size`). */
async function violations(page, rules = {}) {
  await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async (rules) => {
    // Result frames hold untrusted content on another origin: not the app's markup.
    const r = await window.axe.run({ exclude: [['iframe']] }, { iframes: false, resultTypes: ['violations'], rules });
    return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 4).map((n) => `${n.target.join(' ')} ${n.failureSummary.split('\n').slice(1, 2).join('')}`).join(' | ')}`);
  }, rules);
  return found;
}

test('the sidebar lists sessions newest first and tools with their badges', async () => {
  const page = await newPage();
  await open(page, `/sessions/${sessions.kinds}`);
  const ids = await page.locator('.sidebar li[data-session-id]').evaluateAll((ls) => ls.map((l) => l.dataset.sessionId));
  assert.deepEqual(ids, [sessions.links, sessions.elicitation, sessions.approval, sessions.kinds]);
  assert.equal(await page.locator(`.sidebar li[data-session-id="${sessions.kinds}"] a`).getAttribute('aria-current'), 'page');
  // Counts of calls, not messages: seven results, one of them failed; one call waiting.
  const counts = (id) => page.locator(`.sidebar li[data-session-id="${id}"] .counts`).innerText();
  assert.equal(await counts(sessions.kinds), '7 calls · 1 failed');
  assert.equal(await counts(sessions.approval), '1 call · 1 waiting');
  // The session search narrows the list.
  await page.fill('.sidebar input[aria-label="Search sessions"]', 'approval');
  assert.deepEqual(await page.locator('.sidebar li[data-session-id]').evaluateAll((ls) => ls.map((l) => l.dataset.sessionId)), [sessions.approval]);
  // write_file needs approval and is destructive; read_file is read-only.
  const badges = (name) => page.locator(`.sidebar li[data-tool-name="${name}"] .badge`).allInnerTexts();
  assert.deepEqual(await badges('write_file'), ['needs approval', 'destructive']);
  assert.deepEqual(await badges('read_file'), ['read-only']);
  await page.fill('.sidebar input[aria-label="Search tools"]', 'csv');
  assert.deepEqual(await page.locator('.sidebar li[data-tool-name]').evaluateAll((ls) => ls.map((l) => l.dataset.toolName)), ['query_csv']);
  // Picking a tool opens its form in the composer.
  await page.click('.sidebar li[data-tool-name="query_csv"] button');
  assert.equal(await page.inputValue('.playground select[name="tool"]'), 'query_csv');
  assert.ok(await page.locator('.playground [name="path"]').isVisible());
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('the filter narrows the timeline, lives in the URL, and survives a reload', async () => {
  const page = await newPage();
  await open(page, `/sessions/${sessions.kinds}`);
  const shown = () => page.locator('.timeline .card:not([hidden])').evaluateAll((cs) => cs.map((c) => c.dataset.tool));
  const all = await shown();
  assert.equal(all.length, 7, all.join());
  await page.selectOption('.filters select[name="status"]', 'errors');
  assert.deepEqual(await shown(), ['read_file']);
  assert.match(page.url(), /[?&]status=errors/);
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  assert.deepEqual(await shown(), ['read_file']);
  assert.equal(await page.inputValue('.filters select[name="status"]'), 'errors');
  await page.selectOption('.filters select[name="status"]', '');
  // Text searches the tool, the arguments and the result.
  await page.fill('.filters input[name="q"]', 'city07');
  await until(async () => (await shown()).join() === 'query_csv', 5000, 'the text filter');
  await page.fill('.filters input[name="q"]', '');
  await until(async () => (await shown()).length === 7, 5000, 'the text filter cleared');
  await page.selectOption('.filters select[name="kind"]', 'diff');
  assert.deepEqual(await shown(), ['notes']);
  await page.selectOption('.filters select[name="kind"]', '');
  // Newest first reverses the order the cards are shown in.
  await page.click('.filters [data-role="order"]');
  assert.match(page.url(), /order=newest/);
  const tops = await page.locator('.timeline .card').evaluateAll((cs) => cs.map((c) => c.getBoundingClientRect().top));
  assert.ok(tops[0] > tops[tops.length - 1], 'the first card is drawn last');
  await page.context().close();
});

test('cards fold one by one and all at once, and the compact view is one line each', async () => {
  const page = await newPage();
  await open(page, `/sessions/${sessions.kinds}`);
  const first = page.locator('.timeline .card').first();
  const fold = first.locator('header .fold');
  assert.equal(await fold.getAttribute('aria-expanded'), 'true');
  await fold.click();
  assert.equal(await fold.getAttribute('aria-expanded'), 'false');
  assert.equal(await first.locator('.body').isVisible(), false);
  await fold.click();
  assert.ok(await first.locator('.body').isVisible());
  await page.click('.filters [data-role="fold-all"]');
  assert.equal(await page.locator('.timeline .card .fold[aria-expanded="true"]').count(), 0);
  await page.click('.filters [data-role="fold-all"]');
  assert.equal(await page.locator('.timeline .card .fold[aria-expanded="false"]').count(), 0);
  await page.click('.filters [data-role="compact"]');
  assert.equal(await page.getAttribute('.filters [data-role="compact"]', 'aria-pressed'), 'true');
  const heights = await page.locator('.timeline .card').evaluateAll((cs) => cs.map((c) => c.getBoundingClientRect().height));
  for (const hgt of heights) assert.ok(hgt < 60, `a compact card is one line (${hgt} px)`);
  await page.context().close();
});

test('a card folded before it is drawn is drawn when unfolded, not before', async () => {
  const page = await newPage();
  await open(page, `/sessions/${sessions.kinds}?view=compact`);
  await page.waitForTimeout(300);
  // Compact: every card folded, none of their results drawn, their sizes shown.
  assert.equal(await page.locator('.timeline .card .tw-result').count(), 0);
  assert.match(await page.locator('.timeline .card .size').first().innerText(), /\d/);
  const first = page.locator('.timeline .card').first();
  await first.locator('header .fold').click();
  await first.locator('.tw-result').waitFor({ timeout: 5000 });
  assert.equal(await page.locator('.timeline .card .tw-result').count(), 1);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a long session is held in chunks of 50, and a chunk the filter empties takes no room', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'chunks' });
  for (let i = 0; i < 60; i += 10) {
    await Promise.all(Array.from({ length: 10 }, () => api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'read_file', input: { path: 'main.rs' } })));
  }
  const { callId } = await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'list_dir', input: {} });
  await until(async () => (await api(server.base, '/api/sessions')).sessions.find((x) => x.id === s.id).callCount === 61, 15000, '61 calls');
  const page = await newPage();
  await open(page, `/sessions/${s.id}`);
  const sizes = () => page.locator('.timeline > .chunk').evaluateAll((cs) => cs.map((c) => [c.children.length, c.hidden]));
  assert.deepEqual(await sizes(), [[50, false], [11, false]]);
  // Only list_dir's chunk is left; the first one would otherwise be a page of blank.
  await open(page, `/sessions/${s.id}?tool=list_dir`);
  assert.deepEqual(await sizes(), [[50, true], [11, false]]);
  assert.ok(await page.locator(`.card[data-call-id="${callId}"]`).isVisible());
  assert.equal(await page.locator('.title-row .shown').innerText(), '1 of 61 calls');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

/** Runs `act(view)` in the page at the `toolwire-rendered` mark, before any later task:
 * `performance.mark` is wrapped before the page's scripts run. `act` is the source of a
 * function; what it returns is kept as `window.atMark`. */
async function atMark(page, act) {
  await page.addInitScript((source) => {
    const mark = performance.mark.bind(performance);
    performance.mark = (name, ...rest) => {
      if (name === 'toolwire-rendered' && window.toolwireView) {
        // eslint-disable-next-line no-new-func
        window.atMark = new Function('view', source)(window.toolwireView);
      }
      return mark(name, ...rest);
    };
  }, act);
}

test('a long session: its first screen is drawn before the mark and the rest made after, and the filter, keyboard and fold all reach every card', async () => {
  const n = 160;
  const s = await api(server.base, '/api/sessions', { title: 'a long session' });
  // One failed call far beyond the first chunk of 50 items.
  for (let i = 0; i < n; i += 20) {
    await Promise.all(Array.from({ length: 20 }, (_, j) => api(server.base, `/api/sessions/${s.id}/calls`,
      { tool: 'read_file', input: { path: i + j === n - 5 ? 'no-such-file.rs' : 'main.rs' } })));
  }
  const stored = await until(async () => {
    const got = await api(server.base, `/api/sessions/${s.id}`);
    return got.messages.filter((m) => m.role === 'tool_result').length === n && got;
  }, 30000, `${n} results`);
  const failed = stored.messages.find((m) => m.role === 'tool_result' && m.content.status === 'error').content.callId;

  // At the mark: part of the cards made, the count of every call, and every card in the
  // window drawn.
  let page = await newPage();
  await atMark(page, `
    const cards = [...document.querySelectorAll('.timeline .card')];
    const inView = cards.filter((c) => { const r = c.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; });
    return {
      made: cards.length,
      shown: document.querySelector('.title-row .shown').textContent,
      inView: inView.length,
      undrawn: inView.filter((c) => view.pendingDraw.has(c) || !c.querySelector('.result').childElementCount).length,
    };`);
  await open(page, `/sessions/${s.id}`);
  const first = await page.evaluate(() => window.atMark);
  assert.ok(first.made > 0 && first.made < n, `${first.made} of ${n} cards made at the mark`);
  assert.equal(first.shown, `${n} calls`);
  assert.ok(first.inView >= 3, `${first.inView} cards in the window`);
  assert.equal(first.undrawn, 0, 'every card in the window is drawn at the mark');
  // Once ready, every card.
  assert.equal(await page.locator('.timeline .card').count(), n);
  assert.equal(await page.locator('.title-row .shown').innerText(), `${n} calls`);
  assert.deepEqual(page.errors, []);
  await page.context().close();

  // At the mark, before the rest is made: the next error (e), the status filter and fold
  // all each reach the cards not made yet.
  page = await newPage();
  await atMark(page, `
    document.dispatchEvent(new KeyboardEvent('keydown', { key: 'e', bubbles: true }));
    const error = document.activeElement.closest('.card');
    view.filters.set('status', 'errors');
    const filtered = document.querySelector('.title-row .shown').textContent;
    view.filters.set('status', '');
    view.filters.foldAll();
    return {
      error: error && error.dataset.callId,
      filtered,
      folded: document.querySelectorAll('.timeline .card > .body[hidden]').length,
    };`);
  await open(page, `/sessions/${s.id}`);
  const acted = await page.evaluate(() => window.atMark);
  assert.equal(acted.error, failed);
  assert.equal(acted.filtered, `1 of ${n} calls`);
  assert.equal(acted.folded, n);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('keyboard: skip link, j and k between cards, e to the next error, / to the filter', async () => {
  const page = await newPage();
  await open(page, `/sessions/${sessions.kinds}`);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.className), 'skip-link');
  await page.evaluate(() => document.activeElement.blur());
  const focused = () => page.evaluate(() => {
    const c = document.activeElement.closest('.card');
    return c ? c.dataset.callId : document.activeElement.getAttribute('name');
  });
  const order = await page.locator('.timeline .card').evaluateAll((cs) => cs.map((c) => c.dataset.callId));
  await page.keyboard.press('j');
  assert.equal(await focused(), order[0]);
  await page.keyboard.press('j');
  assert.equal(await focused(), order[1]);
  await page.keyboard.press('k');
  assert.equal(await focused(), order[0]);
  await page.keyboard.press('e');
  const error = await page.locator('.timeline .card[data-state="output-error"]').first().getAttribute('data-call-id');
  assert.equal(await focused(), error);
  await page.keyboard.press('/');
  assert.equal(await focused(), 'q');
  await page.context().close();
});

test('a small image is enlarged, pixelated and captioned, and opens at full size; audio shows its length', async () => {
  const page = await newPage();
  await open(page, `/sessions/${sessions.kinds}`);
  const card = page.locator('.card[data-tool="view_image"]');
  const img = card.locator('img.tw-image');
  await img.waitFor();
  await page.waitForFunction(() => { const i = document.querySelector('.card[data-tool="view_image"] img.tw-image'); return i && i.complete && i.naturalWidth > 0; });
  // pic.png is 48×32: drawn twice its size, with hard pixel edges.
  const box = await img.evaluate((i) => ({ w: i.getBoundingClientRect().width, cls: i.className, alt: i.alt }));
  assert.equal(box.w, 96);
  assert.match(box.cls, /tw-pixelated/);
  assert.notEqual(box.alt, '');
  // Type and size are its text; what loading tells is drawn from an attribute, so the
  // caption's text does not change as the image loads.
  const caption = card.locator('figcaption');
  await until(async () => (await caption.getAttribute('data-loaded')) !== null, 5000, 'the caption');
  assert.equal(await caption.innerText(), 'image/png · 3.0 kB');
  assert.equal(await caption.getAttribute('data-loaded'), '48×32 px · shown ×2');
  // Audio says its type, size and length.
  const audio = page.locator('.card[data-tool="media"] figcaption');
  await audio.scrollIntoViewIfNeeded();
  await until(async () => (await audio.getAttribute('data-loaded')) === '0:01', 10000, 'the audio length');
  assert.match(await audio.innerText(), /^audio\/wav · [\d.]+ kB$/);
  await card.locator('.tw-image-open').click();
  const dialog = page.locator('dialog.tw-lightbox');
  await dialog.waitFor();
  assert.ok(await dialog.evaluate((d) => d.open));
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  await page.context().close();
});

test('a form says what is wrong beside the field before anything is sent', async () => {
  const page = await newPage();
  await open(page, `/sessions/${sessions.approval}`);
  const cards = await page.locator('.card').count();
  await page.selectOption('.playground select[name="tool"]', 'write_file');
  await page.click('.playground button[type="submit"]');
  const path = page.locator('.playground [name="path"]');
  assert.equal(await path.getAttribute('aria-invalid'), 'true');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('name')), 'path');
  const error = page.locator(`#${await path.getAttribute('aria-describedby')}`);
  assert.match(await error.innerText(), /path: required/);
  assert.equal(await page.locator('.card').count(), cards, 'nothing was called');
  await path.fill('x.txt');
  await page.fill('.playground [name="content"]', 'x');
  await page.selectOption('.playground select[name="tool"]', 'read_file');
  await page.fill('.playground [name="path"]', 'main.rs');
  await page.fill('.playground [name="offset"]', '-1');
  await page.click('.playground button[type="submit"]');
  // read_file's offset counts from 1 (its schema's minimum).
  const offset = page.locator('.playground [name="offset"]');
  assert.equal(await offset.getAttribute('aria-invalid'), 'true');
  assert.match(await page.locator(`#${await offset.getAttribute('aria-describedby')}`).innerText(), /offset: at least 1/);
  assert.equal(await page.locator('.playground [name="path"]').getAttribute('aria-invalid'), 'false');
  assert.equal(await page.locator('.card').count(), cards, 'nothing was called');
  await page.context().close();
});

test('copy and download a call\'s arguments and result', async () => {
  const page = await newPage();
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.base });
  await open(page, `/sessions/${sessions.kinds}`);
  const card = page.locator('.card[data-tool="read_file"]').first();
  // Copy and Download are menus (a popover each): open, pick, and it closes.
  const copyMenu = card.locator('[data-menu="copy"]');
  // The popover's toggle event, which says the menu is open, comes a task after the click.
  const expanded = (want) => copyMenu.evaluate((b, w) => new Promise((resolve, reject) => {
    const until = Date.now() + 5000;
    (function check() {
      if (b.getAttribute('aria-expanded') === w) resolve(true);
      else if (Date.now() > until) reject(new Error(`aria-expanded is ${b.getAttribute('aria-expanded')}, not ${w}`));
      else requestAnimationFrame(check);
    })();
  }), want);
  assert.equal(await copyMenu.getAttribute('aria-expanded'), 'false');
  await copyMenu.click();
  assert.ok(await expanded('true'));
  await card.locator('[data-copy="input"]').click();
  assert.ok(await expanded('false'));
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), JSON.stringify({ path: 'main.rs' }, null, 2));
  // The keyboard too: the first item has focus once the menu opens.
  await copyMenu.focus();
  await page.keyboard.press('Enter');
  assert.ok(await expanded('true'));
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  assert.match(await page.evaluate(() => navigator.clipboard.readText()), /println!\("hello"\)/);
  await card.locator('[data-menu="download"]').click();
  const [download] = await Promise.all([page.waitForEvent('download'), card.locator('[data-download="json"]').click()]);
  assert.match(download.suggestedFilename(), /^read_file-.*\.json$/);
  const stored = JSON.parse(await (await import('node:fs')).promises.readFile(await download.path(), 'utf8'));
  assert.equal(stored.toolName, 'read_file');
  await page.context().close();
});

test('axe-core with WCAG 2.2 target size: a busy result (long text, a JSON tree) has no serious violation, in both themes', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'busy' });
  const long = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} of a long log`).join('\n');
  const tree = { a: { b: [1, 2, { c: 'd', e: [true, false, null] }], f: 'g' }, list: Array.from({ length: 30 }, (_, i) => ({ i, name: `n${i}` })) };
  const source = Array.from({ length: 300 }, (_, i) => `let x${i} = ${i};`).join('\n');
  store(d, s.id, { callId: 'call_busy', toolName: 'busy', status: 'success', output: [
    { kind: 'text', data: { content: long } },
    { kind: 'structured', data: tree },
    { kind: 'file_content', data: { path: 'big.rs', content: source, size: source.length } },
  ] }, 'busy');
  await until(async () => (await api(server.base, `/api/sessions/${s.id}`)).messages.length >= 1, 10000, 'the busy result');
  for (const scheme of ['light', 'dark']) {
    const page = await newPage(scheme);
    await open(page, `/sessions/${s.id}`);
    await page.locator('.tw-long-text').waitFor({ timeout: 10000 });
    // The long text scrolls as one box, numbers and lines together, from the keyboard.
    const text = await page.locator('.tw-long-text .tw-text').evaluate((t) => [getComputedStyle(t).overflowY, getComputedStyle(t).lineHeight]);
    assert.equal(text[0], 'visible', 'the text does not scroll apart from its line numbers');
    assert.equal(text[1], await page.locator('.tw-long-text .tw-gutter').evaluate((g) => getComputedStyle(g).lineHeight));
    // Code too: one box, numbers and lines.
    assert.equal(await page.locator('.tw-code .tw-source').evaluate((t) => getComputedStyle(t).overflowY), 'visible');
    assert.deepEqual(await violations(page, { 'target-size': { enabled: true } }), [], scheme);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, `busy-axe-${scheme}.png`) });
    await page.context().close();
  }
});

test('long text: the line number beside a line is its own, also far down and after find', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'a long log' });
  const long = Array.from({ length: 8000 }, (_, i) => `line ${i + 1} of a long log`).join('\n');
  store(d, s.id, { callId: 'call_log', toolName: 'log', status: 'success', output: [{ kind: 'text', data: { content: long } }] }, 'log');
  await until(async () => (await api(server.base, `/api/sessions/${s.id}`)).messages.length >= 1, 10000, 'the long log');
  const page = await newPage();
  await open(page, `/sessions/${s.id}`);
  const box = page.locator('.tw-long-text');
  await box.waitFor({ timeout: 10000 });
  await page.locator('[data-role="find"]').fill('line 7761 of');
  await page.locator('.tw-long-text mark').waitFor({ timeout: 5000 });
  // Find scrolled the box to the mark: the number beside it is 7761 (where the gutter
  // lays out its text "7761", read through a Range, against the mark).
  const beside = await box.evaluate((b) => {
    const mark = b.querySelector('mark').getBoundingClientRect();
    const text = b.querySelector('.tw-gutter').firstChild;
    const at = `\n${text.data}\n`.indexOf('\n7761\n');
    const range = document.createRange();
    range.setStart(text, at);
    range.setEnd(text, at + 4);
    const number = range.getBoundingClientRect();
    const shown = b.getBoundingClientRect();
    return { apart: Math.round(Math.abs(number.top - mark.top)), inBox: mark.top >= shown.top && mark.bottom <= shown.bottom };
  });
  assert.ok(beside.inBox, 'the line found is in view');
  assert.ok(beside.apart <= 2, `number 7761 is ${beside.apart} px from its line`);
  await page.context().close();
});

test('what the model saw: the block each provider is sent for a call', async () => {
  const page = await newPage();
  await open(page, `/sessions/${sessions.kinds}`);
  const card = page.locator('.card[data-tool="read_file"]').first();
  const callId = await card.getAttribute('data-call-id');
  await card.locator('[data-show="model"]').click();
  const block = card.locator('.model-view pre');
  await until(async () => (await block.innerText()).includes(callId), 10000, 'the Anthropic block');
  const anthropic = JSON.parse(await block.innerText());
  assert.equal(anthropic.type, 'tool_result');
  assert.equal(anthropic.tool_use_id, callId);
  assert.match(JSON.stringify(anthropic.content), /println!/);
  assert.equal(await card.locator('.model-cut').getAttribute('data-cut'), 'false');
  await card.locator('.model-view select').selectOption('openai-chat');
  await until(async () => (await block.innerText()).includes('"tool_call_id"'), 10000, 'the OpenAI block');
  assert.equal(JSON.parse(await block.innerText()).tool_call_id, callId);
  await page.context().close();
});

test('what the model saw for Gemini is the functionResponse part exactly as the export sends it', async () => {
  const page = await newPage();
  await open(page, `/sessions/${sessions.kinds}`);
  const card = page.locator('.card[data-tool="read_file"]').first();
  const callId = await card.getAttribute('data-call-id');
  const { request } = await api(server.base, `/api/sessions/${sessions.kinds}/export?provider=gemini&diagnostics=true`);
  const parts = request.contents.flatMap((c) => c.parts || []);
  const sent = parts.find((p) => p.functionResponse && p.functionResponse.id === callId);
  assert.ok(sent, JSON.stringify(request).slice(0, 2000));
  // The first view's export (Anthropic's, the default) answers late: Gemini, picked
  // meanwhile, must still be what shows.
  let late = false;
  await page.route(/\/export\?provider=anthropic/, async (route) => {
    await new Promise((r) => setTimeout(r, 800));
    await route.continue();
    late = true;
  });
  await card.locator('[data-show="model"]').click();
  await card.locator('.model-view select').selectOption('gemini');
  const block = card.locator('.model-view pre');
  await until(async () => (await block.innerText()).includes('functionResponse'), 10000, 'the Gemini block');
  await until(() => late, 5000, 'the late Anthropic export');
  await page.waitForTimeout(300);
  assert.equal(await card.locator('.model-view select').inputValue(), 'gemini');
  assert.deepEqual(JSON.parse(await block.innerText()), sent);
  await page.context().close();
});

test('what the model saw says whether and how the result was cut', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'a long log' });
  // A real call (a stored result alone answers no call, and is left out of the request).
  const log = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} of a long build log, ${'with enough words to pass the budget'.repeat(2)}`).join('\n');
  writeFileSync(join(d.workspace, 'build.log'), log);
  const { callId } = await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'read_file', input: { path: 'build.log' } });
  await until(async () => (await api(server.base, `/api/sessions/${s.id}`)).messages.some((m) => m.role === 'tool_result' && m.content.callId === callId), 15000, 'the long read');
  const page = await newPage();
  await open(page, `/sessions/${s.id}`);
  const card = page.locator(`.card[data-call-id="${callId}"]`);
  await card.locator('[data-show="model"]').click();
  const cut = card.locator('.model-cut');
  await cut.waitFor({ timeout: 10000 });
  const said = await cut.innerText();
  assert.equal(await cut.getAttribute('data-cut'), 'true', `${said}\n${await card.locator('.model-view').innerText()}`.slice(0, 3000));
  assert.match(said, /Cut: result of read_file cut to 60,000 of [\d,]+ chars by the per-result budget/);
  assert.ok(said.includes(`the model can read it with read_result {"callId":"${callId}","part":0,"offset":`), said);
  assert.match(said, /Left out: [\d,]+ (chars|lines)/);
  await page.context().close();
});

test('Export downloads each provider\'s request, the stored session and the MCP results as received', async () => {
  const page = await newPage();
  await open(page, `/sessions/${sessions.links}`);
  const menu = page.locator('.session-head [data-menu="export"]');
  const download = async (what) => {
    await menu.click();
    const [file] = await Promise.all([page.waitForEvent('download'), page.locator(`[data-export="${what}"]`).click()]);
    const text = await (await import('node:fs')).promises.readFile(await file.path(), 'utf8');
    return [file.suggestedFilename(), JSON.parse(text)];
  };
  for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'gemini']) {
    const [name, body] = await download(provider);
    assert.equal(name, `${sessions.links}-${provider}.json`);
    assert.deepEqual(body, await api(server.base, `/api/sessions/${sessions.links}/export?provider=${provider}`), provider);
  }
  const [, stored] = await download('session');
  assert.deepEqual(stored.messages, (await api(server.base, `/api/sessions/${sessions.links}`)).messages);
  const [rawName, raw] = await download('raw');
  assert.equal(rawName, `${sessions.links}-mcp-results.json`);
  const callId = await page.locator('.card[data-tool="ev__get-resource-links"]').getAttribute('data-call-id');
  assert.deepEqual(raw.results.map((r) => [r.callId, r.toolName]), [[callId, 'ev__get-resource-links']]);
  // The payload as server-everything sent it: MCP content blocks, resource links among them.
  assert.ok(raw.results[0].raw.content.some((c) => c.type === 'resource_link'), JSON.stringify(raw).slice(0, 500));
  await menu.click();
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, 'export-menu.png') });
  await page.context().close();
});

test('Re-run calls again; Edit & re-run puts the arguments in the composer', async () => {
  const s = await api(server.base, '/api/sessions', { title: 're-run' });
  const { callId } = await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'read_file', input: { path: 'main.rs', limit: 2 } });
  const page = await newPage();
  await open(page, `/sessions/${s.id}`);
  const card = page.locator(`.card[data-call-id="${callId}"]`);
  await card.locator('[data-rerun="same"]').click();
  await until(async () => (await page.locator('.card[data-tool="read_file"][data-state="output-available"]').count()) === 2, 10000, 'the second call');
  const inputs = (await api(server.base, `/api/sessions/${s.id}`)).messages.flatMap((m) => m.content.toolCalls || []).map((c) => c.input);
  assert.deepEqual(inputs, [{ path: 'main.rs', limit: 2 }, { path: 'main.rs', limit: 2 }]);
  await card.locator('[data-rerun="edit"]').click();
  assert.equal(await page.inputValue('.playground select[name="tool"]'), 'read_file');
  assert.equal(await page.inputValue('.playground [name="path"]'), 'main.rs');
  assert.equal(await page.inputValue('.playground [name="limit"]'), '2');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('name')), 'path');
  await page.context().close();
});

test('a field given several lines keeps them: Edit & re-run and a pasted block', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'lines' });
  const message = 'first line\n  second, indented\nthird';
  const { callId } = await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'ev__echo', input: { message } });
  const page = await newPage();
  await open(page, `/sessions/${s.id}`);
  const card = page.locator(`.card[data-call-id="${callId}"]`);
  await card.locator('[data-rerun="edit"]').waitFor({ timeout: 15000 });
  await card.locator('[data-rerun="edit"]').click();
  const field = page.locator('.playground [name="message"]');
  assert.equal(await field.evaluate((el) => el.tagName), 'TEXTAREA');
  assert.equal(await field.inputValue(), message);
  await page.click('.playground button[type="submit"]');
  await until(async () => (await api(server.base, `/api/sessions/${s.id}`)).messages.flatMap((m) => m.content.toolCalls || []).length === 2, 10000, 'the second call');
  const inputs = (await api(server.base, `/api/sessions/${s.id}`)).messages.flatMap((m) => m.content.toolCalls || []).map((c) => c.input);
  assert.deepEqual(inputs, [{ message }, { message }]);
  // A one-line field that gets a pasted block turns into a text area holding all of it.
  await page.selectOption('.playground select[name="tool"]', 'read_file');
  await page.selectOption('.playground select[name="tool"]', 'ev__echo');
  const fresh = page.locator('.playground [name="message"]');
  assert.equal(await fresh.evaluate((el) => el.tagName), 'INPUT');
  await fresh.focus();
  await fresh.evaluate((el, text) => {
    const data = new DataTransfer();
    data.setData('text/plain', text);
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, 'a\nb');
  const pasted = page.locator('.playground [name="message"]');
  assert.equal(await pasted.evaluate((el) => el.tagName), 'TEXTAREA');
  assert.equal(await pasted.inputValue(), 'a\nb');
  await page.context().close();
});

test('a resource link is a chip: type, copy URI, and Read through the tool\'s server', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'links' });
  const { callId } = await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'ev__get-resource-links', input: { count: 2 } });
  const page = await newPage();
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.base });
  await open(page, `/sessions/${s.id}`);
  const card = page.locator(`.card[data-call-id="${callId}"]`);
  const approve = card.locator('button.approve');
  const links = card.locator('.tw-link');
  await Promise.race([approve.waitFor({ timeout: 15000 }), links.first().waitFor({ timeout: 15000 })]);
  if (await approve.isVisible()) await approve.click();
  await until(async () => (await links.count()) === 2, 15000, 'two resource links');
  const uri = await links.first().locator('.tw-link-uri').innerText();
  assert.match(uri, /^demo:\/\//);
  await links.first().locator('[data-role="copy-uri"]').click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), uri);
  // Read draws the contents the server returns for that URI, below the chip.
  for (const link of await links.all()) {
    await link.locator('[data-role="read"]').click();
    await link.locator('.tw-link-contents .tw-value').first().waitFor({ timeout: 10000 });
    assert.equal(await link.locator('[data-role="read"]').getAttribute('aria-expanded'), 'true');
  }
  const readTexts = await card.locator('.tw-link-contents').allInnerTexts();
  assert.ok(readTexts.join('').length > 0);
  // What was read is kept with the result: a reload draws it again, without reading.
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await until(async () => (await card.locator('.tw-link-contents .tw-value').count()) === 2, 10000, 'the kept reads');
  assert.deepEqual(await card.locator('.tw-link-contents').allInnerTexts(), readTexts);
  assert.deepEqual(await card.locator('[data-role="read"]').evaluateAll((bs) => bs.map((b) => b.getAttribute('aria-expanded'))), ['true', 'true']);
  // A read is kept only with a result that links to what was read.
  const kept = async () => (await api(server.base, `/api/sessions/${s.id}`)).messages.filter((m) => m.role === 'widget').length;
  const before = await kept();
  assert.equal(before, 2);
  const refused = await fetch(`${server.base}/api/tools/ev__get-resource-links/resource`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ uri: 'demo://resource/static/document/architecture.md', keep: { sessionId: s.id, callId } }),
  });
  assert.equal(refused.status, 404);
  assert.equal(await kept(), before);
  // The MCP result exactly as server-everything sent it, kept beside the stored result.
  await card.locator('[data-menu="download"]').click();
  const [raw] = await Promise.all([page.waitForEvent('download'), card.locator('[data-download="raw"]').click()]);
  assert.match(raw.suggestedFilename(), /^ev__get-resource-links-.*\.mcp\.json$/);
  const sent = JSON.parse(await (await import('node:fs')).promises.readFile(await raw.path(), 'utf8'));
  assert.equal(sent.content.filter((c) => c.type === 'resource_link').length, 2, JSON.stringify(sent));
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('content tools: JSON expand all and find, table as CSV, long text find and wrap', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'content tools' });
  const log = Array.from({ length: 60 }, (_, i) => `line ${i + 1}${i === 41 ? ' needle here' : ''}`).join('\n');
  store(d, s.id, {
    callId: 'call_content', toolName: 'content', status: 'success',
    output: [
      { kind: 'structured', data: { a: { b: { c: { d: { deep: 'treasure' } } } }, list: [1, 2, 3] } },
      { kind: 'table', data: { columns: [{ key: 'name' }, { key: 'n', type: 'number' }], rows: [{ name: 'x, "quoted"', n: 2 }, { name: 'y', n: 1 }] } },
      { kind: 'text', mimeType: 'text/plain', data: { content: log } },
      // Markdown declared by the display hint, not a MIME type.
      { kind: 'text', data: { content: '# Declared\n\n**by its language**' }, display: { language: 'markdown' } },
      { kind: 'file_content', data: { path: 'docs/README.md', content: '# Read me\n\nsome *text*\n', size: 22 } },
    ],
  }, 'content');
  const page = await newPage();
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.base });
  await open(page, `/sessions/${s.id}`);
  const card = page.locator('.card[data-tool="content"]');
  const tree = card.locator('.tw-tree');
  await tree.waitFor();
  // 'deep' sits below the levels open at first.
  assert.equal(await tree.locator('[data-key="deep"]').count(), 0);
  await tree.locator('[data-role="expand-all"]').click();
  assert.ok(await tree.locator('[data-key="deep"]').isVisible());
  await tree.locator('[data-role="collapse-all"]').click();
  assert.equal(await tree.locator('[data-key="deep"]').isVisible(), false);
  await tree.locator('[data-role="tree-find"]').fill('treasure');
  await tree.locator('.tw-hit[data-key="deep"]').waitFor();
  assert.ok(await tree.locator('.tw-hit[data-key="deep"]').isVisible());
  // The path of what was found, or of what is clicked, copied as JSONPath-like text.
  assert.equal(await tree.locator('[data-role="path"]').innerText(), '$.a.b.c.d.deep');
  await tree.locator('[data-role="copy-path"]').click();
  await until(async () => (await page.evaluate(() => navigator.clipboard.readText())) === '$.a.b.c.d.deep', 5000, 'the path');
  await tree.locator('[data-key="list"] > summary').click();
  assert.equal(await tree.locator('[data-role="path"]').innerText(), '$.list');
  await tree.locator('[data-key="list"] > [data-key="1"]').click();
  assert.equal(await tree.locator('[data-role="path"]').innerText(), '$.list[1]');
  // The table's shown rows, as CSV with quoting.
  await card.locator('[data-role="copy-csv"]').click();
  await until(async () => (await page.evaluate(() => navigator.clipboard.readText())).startsWith('name,n'), 5000, 'the CSV');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'name,n\n"x, ""quoted""",2\ny,1\n');
  // Long text: numbered, found, wrapped on demand.
  const text = card.locator('.tw-value[data-kind="text"]');
  assert.equal((await text.locator('.tw-gutter').innerText()).split('\n').length, 60);
  await text.locator('[data-role="find"]').fill('needle');
  await text.locator('mark.tw-mark').waitFor();
  assert.equal(await text.locator('mark.tw-mark').innerText(), 'needle');
  assert.match(await text.locator('[role="status"]').innerText(), /^1 found$/);
  await text.locator('[data-role="wrap"]').click();
  assert.equal(await text.locator('.tw-long-text').getAttribute('data-wrap'), 'true');
  assert.equal(await text.locator('.tw-gutter').isVisible(), false);
  // Markdown by the display hint is drawn; a .md file is source, drawn on request.
  assert.equal(await card.locator('.tw-markdown h1').first().innerText(), 'Declared');
  const file = card.locator('.tw-value[data-kind="file_content"]');
  assert.equal(await file.locator('.tw-markdown').count(), 0);
  await file.locator('[data-role="render-markdown"]').click();
  assert.equal(await file.locator('.tw-markdown h1').innerText(), 'Read me');
  assert.equal(await file.locator('[data-role="render-markdown"]').getAttribute('aria-pressed'), 'true');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('Cancel beside a running call\'s progress stops it', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'progress' });
  const page = await newPage();
  await open(page, `/sessions/${s.id}`);
  const { callId } = await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'ev__trigger-long-running-operation', input: { duration: 60, steps: 60 } });
  const card = page.locator(`.card[data-call-id="${callId}"]`);
  const approve = card.locator('button.approve');
  const cancel = card.locator('[data-role="cancel-progress"]');
  await Promise.race([approve.waitFor({ timeout: 15000 }), cancel.waitFor({ timeout: 15000 })]);
  if (await approve.isVisible()) await approve.click();
  await cancel.waitFor({ timeout: 15000 });
  assert.ok(await card.locator('.progress progress').isVisible());
  await cancel.click();
  const result = await until(async () => {
    const got = await api(server.base, `/api/sessions/${s.id}`);
    const m = got.messages.find((x) => x.role === 'tool_result' && x.content.callId === callId);
    return m && m.content;
  }, 15000, 'the cancelled result');
  assert.equal(result.error.code, 'cancelled');
  await card.locator('.progress').waitFor({ state: 'hidden', timeout: 10000 });
  await page.context().close();
});

for (const scheme of ['light', 'dark']) {
  test(`axe-core: no serious or critical violation, ${scheme}`, async () => {
    const page = await newPage(scheme);
    const report = {};
    await open(page, '/');
    report.list = await violations(page);
    await open(page, `/sessions/${sessions.kinds}`);
    await drawAll(page);
    report.kinds = await violations(page);
    await open(page, `/sessions/${sessions.approval}`);
    await page.locator('button.approve').first().waitFor({ timeout: 15000 });
    report.approval = await violations(page);
    // The composer, open on its form.
    await page.click('.playground .composer-head button[aria-controls]');
    await page.selectOption('.playground select[name="tool"]', 'write_file');
    report.composer = await violations(page);
    await elicitationForm(page, server, sessions);
    report.elicitation = await violations(page);
    await open(page, `/sessions/${sessions.links}`);
    // Read in the first pass, they are kept: the second finds them drawn.
    // Not the ones already drawn (kept from an earlier read): Read would hide those.
    for (const read of await page.locator('.tw-link [data-role="read"]').all()) {
      if (await read.getAttribute('aria-expanded') === 'false') await read.click();
    }
    await page.locator('.tw-link-contents .tw-value').first().waitFor({ timeout: 10000 });
    report.links = await violations(page);
    await open(page, `/sessions/${sessions.kinds}`);
    await page.click('.filters [data-role="compact"]');
    report.compact = await violations(page);
    // The narrow layout, its drawer open.
    await page.setViewportSize({ width: 400, height: 900 });
    await page.click('#nav-toggle');
    report.drawer = await violations(page);
    for (const [where, found] of Object.entries(report)) assert.deepEqual(found, [], `${where} (${scheme})`);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
}
