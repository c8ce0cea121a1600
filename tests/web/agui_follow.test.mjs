// The web app as the viewer of an AG-UI agent toolwire did not write: a Pydantic AI agent
// served by Pydantic AI's own AG-UI adapter (tests/agui/agents.py, PyPI packages in
// tests/agui/venv), followed by `toolwire serve --agui-follow`. A front end's runs go
// through the proxy; the session's page shows the agent's calls and results (text, JSON,
// the image from the blob store), and the front-end tool's result of the next run arrives
// on the open page live.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT, dirs, serve, launchBrowser, until } from './lib.mjs';

const PYTHON = join(ROOT, 'tests/agui/venv/bin/python');
const missing = !existsSync(PYTHON);
if (missing && process.env.CI) {
  throw new Error(`no ${PYTHON}, and CI is set: run .ci/run's setup (python3 -m venv tests/agui/venv; pip install -r tests/agui/requirements.txt)`);
}
const skip = missing ? `no Python venv at ${PYTHON} (pip install -r tests/agui/requirements.txt; set CI to make this a failure)` : false;

let agent; let agentUrl; let server; let browser;

before(async () => {
  if (skip) return;
  agent = spawn(PYTHON, [join(ROOT, 'tests/agui/agents.py')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: agent.stdout }).once('line', resolve);
    agent.once('exit', (code) => reject(new Error(`agents.py exited ${code}`)));
  });
  agentUrl = `http://127.0.0.1:${/listening on (\d+)/.exec(line)[1]}/`;
  server = await serve(dirs(), 0, ['--agui-follow', agentUrl]);
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
  if (agent) agent.kill();
});

/** One run through the proxy, as a front end posts it; the AG-UI event types it got. */
async function run(threadId, runId, messages, tools) {
  const r = await fetch(`${server.base}/api/agui/follow`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ threadId, runId, messages, tools, context: [], state: {}, forwardedProps: {} }),
  });
  assert.equal(r.status, 200, await r.clone().text());
  const events = (await r.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
  return events;
}

test('the session of a followed AG-UI agent shows in the web app, live', { skip }, async () => {
  const thread = 'thread-web-1';
  const tools = [{ name: 'pick_color', description: 'Asks the person for a colour.', parameters: { type: 'object', properties: {} } }];
  const user = { id: 'u1', role: 'user', content: 'What is the weather?' };
  const first = await run(thread, 'run-1', [user], tools);
  assert.equal(first.at(-1).type, 'RUN_FINISHED');

  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('pageerror', (e) => console.log('page error:', e.message));
  await page.goto(`${server.base}/sessions/${thread}`);
  await page.waitForSelector('body[data-ready="true"]');
  const timeline = page.locator('.timeline');
  await until(async () => (await timeline.textContent()).includes('sunny in a'), 10000, 'the text result');
  const text = await timeline.textContent();
  for (const expected of ['What is the weather?', 'weather', 'forecast', 'radar', 'high']) {
    assert.ok(text.includes(expected), `${expected} missing: ${text}`);
  }
  // The image, drawn from the blob store.
  await page.waitForFunction(() => {
    const imgs = [...document.querySelectorAll('img.tw-image')];
    return imgs.length > 0 && imgs.every((i) => i.complete && i.naturalWidth === 32);
  }, null, { timeout: 10000 });
  const src = await page.locator('img.tw-image').first().getAttribute('src');
  assert.match(src, /\/api\/resources\/blake3:/);
  assert.ok(!text.includes('blue'));

  // The front end answers its tool in the next run; the open page shows it as it lands.
  const calls = first.filter((e) => e.type === 'TOOL_CALL_START');
  const pick = calls.find((c) => c.toolCallName === 'pick_color');
  assert.ok(pick, JSON.stringify(calls));
  const assistant = {
    id: 'a1', role: 'assistant', content: '',
    toolCalls: calls.map((c) => ({ id: c.toolCallId, type: 'function', function: { name: c.toolCallName, arguments: '{}' } })),
  };
  const results = first.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => ({ id: e.messageId, role: 'tool', toolCallId: e.toolCallId, content: e.content }));
  const second = await run(thread, 'run-2', [user, assistant, ...results, { id: 't1', role: 'tool', toolCallId: pick.toolCallId, content: 'blue' }], tools);
  assert.equal(second.at(-1).type, 'RUN_FINISHED');
  await until(async () => (await timeline.textContent()).includes('blue'), 10000, 'the front-end result, live');
  await page.close();
});
