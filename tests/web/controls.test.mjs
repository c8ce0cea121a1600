// A call's controls in the page: what a tool says of itself (asks for approval, read-only,
// destructive) beside the playground's form; Stop on a call that waits for approval or
// runs, which then gets its one cancelled result; and an MCP server's question dismissed
// with Cancel (MCP's third answer, beside accept and decline).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, dirs, serve, api, until, shot, everythingMcp } from './lib.mjs';

let d;
let server;
let browser;
let page;

before(async () => {
  d = dirs();
  // A server whose command is missing, beside one that works: the page shows both states.
  server = await serve(d, undefined, [...everythingMcp(), '--mcp', 'gone=/nonexistent/toolwire-web-test']);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

async function open(id) {
  await page.goto(`${server.base}/sessions/${id}`);
  await page.waitForSelector('body[data-ready="true"]');
}

/** The stored result of `callId`, once there is one. */
async function storedResult(id, callId) {
  return until(async () => {
    const s = await api(server.base, `/api/sessions/${id}`);
    const m = s.messages.find((x) => x.role === 'tool_result' && x.content.callId === callId);
    return m && m.content;
  }, 15000, `the result of ${callId}`);
}

test('each MCP server is listed with its state', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'servers' });
  await open(s.id);
  const ev = page.locator('details.server[data-server="ev"]');
  await ev.locator('.state-pill[data-state="ready"]').waitFor();
  // Its tools are grouped under it, not with the built-in ones.
  await ev.locator('li[data-tool-name="ev__echo"]').waitFor();
  const gone = page.locator('details.server[data-server="gone"]');
  // A server that failed is tried again, with backoff, when a call or a listing asks for
  // it (an earlier test's turn may have): between a try's start and its failure it shows
  // `restarting`, and the page, polling fast while one is, shows it settle.
  await gone.locator('.state-pill[data-state="failed"]').waitFor({ timeout: 15000 });
  assert.match(await gone.locator('.server-reason').innerText(), /command "\/nonexistent\/toolwire-web-test" was not found/);
});

test('the playground shows what each tool says of itself', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'hints' });
  await open(s.id);
  const hints = page.locator('.playground .tool-hints');
  await page.selectOption('.playground select[name="tool"]', 'write_file');
  assert.deepEqual(await hints.locator('.hint').allInnerTexts(), ['asks for approval', 'destructive', 'idempotent']);
  await page.selectOption('.playground select[name="tool"]', 'ev__get-sum');
  const sum = await hints.locator('.hint').allInnerTexts();
  assert.ok(sum.includes('read-only') && !sum.includes('asks for approval'), sum.join());
  // server-everything's elicitation tool is not marked read-only: it asks first.
  await page.selectOption('.playground select[name="tool"]', 'ev__trigger-elicitation-request');
  assert.ok((await hints.locator('.hint').allInnerTexts()).includes('asks for approval'));
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, 400]) {
      await page.setViewportSize({ width, height: 900 });
      await shot(page, `controls-hints-${scheme}-${width}`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
});

test('Stop ends a call that waits for approval, and one that runs', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'stop' });
  await open(s.id);
  const waiting = await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'write_file', input: { path: 'never.txt', content: 'x' } });
  const card = page.locator(`.card[data-call-id="${waiting.callId}"]`);
  await card.locator('button.approve').waitFor({ timeout: 15000 });
  assert.ok(await card.locator('button.stop').isVisible());
  await shot(page, 'controls-stop-waiting');
  await card.locator('button.stop').click();
  const cancelled = await storedResult(s.id, waiting.callId);
  assert.equal(cancelled.error.code, 'cancelled');
  await card.locator('button.stop').waitFor({ state: 'hidden', timeout: 10000 });
  assert.equal(existsSync(join(d.workspace, 'never.txt')), false);

  const running = await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'run', input: { command: 'sleep 30' } });
  const runCard = page.locator(`.card[data-call-id="${running.callId}"]`);
  await runCard.locator('button.approve').click({ timeout: 15000 });
  await until(async () => (await runCard.getAttribute('data-state')) === 'approval-responded', 10000, 'running');
  const started = Date.now();
  await runCard.locator('button.stop').click();
  const stopped = await storedResult(s.id, running.callId);
  assert.equal(stopped.error.code, 'cancelled');
  assert.ok(Date.now() - started < 10000, 'stopped, not run to its end');
});

test('a cancelled call is shown and counted as cancelled, not as a failure', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'cancelled' });
  await open(s.id);
  const waiting = await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'write_file', input: { path: 'never.txt', content: 'x' } });
  const card = page.locator(`.card[data-call-id="${waiting.callId}"]`);
  await card.locator('button.stop').click({ timeout: 15000 });
  const running = await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'run', input: { command: 'sleep 30' } });
  const runCard = page.locator(`.card[data-call-id="${running.callId}"]`);
  await runCard.locator('button.approve').click({ timeout: 15000 });
  await until(async () => (await runCard.getAttribute('data-state')) === 'approval-responded', 10000, 'running');
  await runCard.locator('button.stop').click();
  const looks = async () => {
    for (const c of [card, runCard]) {
      await until(async () => (await c.getAttribute('data-state')) === 'output-cancelled', 15000, 'the cancelled state');
      assert.equal(await c.locator('.status').textContent(), 'cancelled');
      await c.locator('.tw-cancelled').waitFor({ timeout: 5000 });
      assert.equal(await c.locator('.tw-error, [role="alert"]').count(), 0, 'no error shown');
    }
    assert.equal(await runCard.locator('.tw-cancelled').textContent(), 'Cancelled: interrupted before completion');
    assert.match(await card.locator('.tw-cancelled').textContent(), /^Cancelled: The user dismissed write_file/);
    // Not among the errors: the filter, the count and "Next error" leave them out.
    assert.ok(await page.locator('[data-role="next-error"]').isDisabled());
    await page.selectOption('.filters select[name="status"]', 'errors');
    await until(async () => (await page.locator('.shown').textContent()) === '0 of 2 calls', 5000, 'no errors');
    await page.selectOption('.filters select[name="status"]', 'cancelled');
    await until(async () => (await page.locator('.shown').textContent()) === '2 of 2 calls', 5000, 'two cancelled');
    await page.selectOption('.filters select[name="status"]', '');
    // The session list counts them as calls, none failed.
    const counts = page.locator(`.sidebar li[data-session-id="${s.id}"] .counts`);
    await until(async () => (await counts.innerText()) === '2 calls', 20000, 'the sidebar to say "2 calls"');
  };
  await looks();
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, 400]) {
      await page.setViewportSize({ width, height: 900 });
      await shot(page, `controls-cancelled-${scheme}-${width}`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
  // Drawn from the stored history, the same.
  await open(s.id);
  await looks();
});

test('an MCP question dismissed with Cancel answers cancel', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'cancel' });
  await open(s.id);
  const call = await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'ev__trigger-elicitation-request', input: {} });
  const card = page.locator(`.card[data-call-id="${call.callId}"]`);
  await card.locator('button.approve').click({ timeout: 15000 });
  await card.locator('.ask form button.cancel').click({ timeout: 15000 });
  const result = await storedResult(s.id, call.callId);
  assert.match(JSON.stringify(result), /cancel/);
  assert.doesNotMatch(JSON.stringify(result), /"action":\s*"decline"/);
});

test('a question a task asks midway reaches the page, and its answer the task', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'task question' });
  await open(s.id);
  const call = await api(server.base, `/api/sessions/${s.id}/calls`,
    { tool: 'ev__simulate-research-query', input: { topic: 'bridges', ambiguous: true } });
  const card = page.locator(`.card[data-call-id="${call.callId}"]`);
  await card.locator('button.approve').click({ timeout: 15000 });
  const form = card.locator('.ask form');
  await form.waitFor({ timeout: 20000 });
  assert.match(await card.locator('.ask').innerText(), /could have multiple interpretations/);
  await form.locator('select[name="interpretation"]').selectOption({ label: 'Historical perspective' });
  await form.locator('button[type="submit"]').click();
  const result = await storedResult(s.id, call.callId);
  assert.match(JSON.stringify(result), /\*\*Clarification\*\*: historical/);
});

test('a deleted session ends its page feed instead of reopening it forever', async () => {
  const s = await api(server.base, '/api/sessions', { title: 'to delete' });
  await open(s.id);
  await until(async () => (await page.getAttribute('#conn', 'data-state')) === 'live', 10000, 'live');
  const r = await fetch(`${server.base}/api/sessions/${s.id}`, { method: 'DELETE' });
  assert.ok(r.ok, String(r.status));
  await until(async () => (await page.getAttribute('#conn', 'data-state')) === 'ended', 15000, 'ended');
});
