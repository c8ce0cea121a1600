// Arrays of like records in the web app: a table, not a tree. 3,000 records drawn as a tree
// made a card about 9,000 px tall; as the table view they are one scrolled box. An object
// holding one such array beside scalars (ruff's `{"issues": [..]}`) gets its array as a
// table too; irregular arrays stay trees. Screenshots: records-*.png under target/screenshots.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, dirs, serve, api, store, shot } from './lib.mjs';

let d;
let server;
let browser;

before(async () => {
  d = dirs();
  server = await serve(d);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Diagnostics as `ruff check --output-format json` writes them. */
function ruffIssues(n) {
  return Array.from({ length: n }, (_, i) => ({
    cell: null,
    code: i % 2 ? 'E501' : 'F401',
    end_location: { column: 10, row: i + 1 },
    filename: `src/pkg/mod_${i}.py`,
    fix: i % 2 ? null : { applicability: 'safe', message: 'Remove unused import' },
    location: { column: 1, row: i + 1 },
    message: i % 2 ? `Line too long (${89 + i} > 88)` : '`os` imported but unused',
    noqa_row: i + 1,
    url: 'https://docs.astral.sh/ruff/rules/unused-import',
  }));
}

async function session(title, output) {
  const s = await api(server.base, '/api/sessions', { title });
  store(d, s.id, { callId: 'call_1', toolName: 'lint', status: 'success', output }, 'lint');
  return s.id;
}

async function openSession(id, colorScheme = 'light', width = 1280) {
  const context = await browser.newContext({ colorScheme, viewport: { width, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${server.base}/sessions/${id}`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('.card .tw-value');
  return { context, page };
}

test('3,000 like records are a table, not a 9,000 px tree', async () => {
  const id = await session('records', [{ kind: 'structured', data: ruffIssues(3000) }]);
  for (const colorScheme of ['light', 'dark']) {
    for (const width of [1280, 400]) {
      const { context, page } = await openSession(id, colorScheme, width);
      try {
        const body = page.locator('.tw-value[data-kind="structured"] .tw-body');
        assert.equal(await body.getAttribute('data-view'), 'table');
        assert.equal(await body.locator('[role="table"]').count(), 1);
        assert.equal(await body.locator('details.tw-node').count(), 0, 'no tree nodes');
        assert.match(await body.locator('.tw-count').innerText(), /^3000 of 3000 rows/);
        // Columns in the order first seen; `cell`, null in every row, left out.
        const heads = await body.locator('[role="columnheader"]').allInnerTexts();
        assert.deepEqual(heads, ['code', 'end_location', 'filename', 'fix', 'location', 'message', 'noqa_row', 'url']);
        const box = await page.locator('.card').first().boundingBox();
        if (width === 1280) assert.ok(box.height < 1500, `card is ${box.height} px tall`);
        await shot(page, `records-table-${colorScheme}-${width}`);
      } finally {
        await context.close();
      }
    }
  }
});

test('an object holding like records shows them as a table beside its scalars; irregular arrays stay trees', async () => {
  const id = await session('ruff', [
    { kind: 'structured', data: { tool: 'ruff', issues: ruffIssues(7), fixable: 4 } },
    { kind: 'structured', data: [{ a: 1, b: 2, c: 3, d: 4 }, { e: 5 }] },
    { kind: 'structured', data: ruffIssues(7), display: { preferredView: 'tree' } },
  ]);
  const { context, page } = await openSession(id);
  try {
    const views = await page.locator('.tw-value[data-kind="structured"] .tw-body').evaluateAll((bs) => bs.map((b) => b.dataset.view));
    assert.deepEqual(views, ['table', 'tree', 'tree']);
    const held = page.locator('.tw-value[data-kind="structured"]').first();
    assert.equal(await held.locator('.tw-records-title code').innerText(), 'issues');
    assert.match(await held.locator('.tw-count').innerText(), /^7 of 7 rows/);
    const text = await held.innerText();
    assert.ok(text.indexOf('tool') < text.indexOf('issues') && text.indexOf('issues') < text.indexOf('fixable'), text);
    await shot(page, 'records-held');
  } finally {
    await context.close();
  }
});
