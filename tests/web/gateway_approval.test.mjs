// A `toolwire gateway` whose host cannot ask (the Python SDK's client, with no
// elicitation) sends its person to the web app of a `toolwire serve` on the same data
// directory: the gateway's waiting call shows up in the page with an Approve button, and
// clicking it runs the call, whose result reaches the host.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, launchBrowser, dirs, serve, api, until, toolwireBin } from './lib.mjs';

const python = join(ROOT, 'tests/mcp/venv/bin/python');
const missing = !existsSync(python);
if (missing && process.env.CI === 'true') throw new Error(`no ${python}: .ci/run makes the venv of tests/mcp`);

let d;
let server;
let browser;
let config;

before(async () => {
  if (missing) return;
  d = dirs();
  config = join(d.base, 'mcp.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { py: {
    command: python,
    args: [join(ROOT, 'tests/mcp/fastmcp_server.py')],
    approval: 'never',
    tools: { long_note: { approval: 'always' } },
  } } }));
  server = await serve(d, 0, ['--mcp-config', config]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** The Python SDK client driving a gateway on `d`'s data dir through `steps`; resolves
 * to its JSON lines once it exits. */
function host(steps) {
  const child = spawn(python, [join(ROOT, 'tests/mcp/gateway_client.py'), toolwireBin(), d.data, 'generic', '--mcp-config', config, '--ask-timeout', '60'], {
    cwd: join(ROOT, 'tests/mcp'),
    env: { ...process.env, GATEWAY_STEPS: JSON.stringify(steps), GATEWAY_ANSWERS: '[]' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (b) => { out += b; });
  child.stderr.on('data', (b) => { err += b; });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => (code === 0
      ? resolve(out.trim().split('\n').map((l) => JSON.parse(l)))
      : reject(new Error(`the client failed (${code}): ${out}\n${err}`))));
  });
}

test('a gateway call waiting for approval is approved in the page', { skip: missing && 'no tests/mcp/venv' }, async () => {
  const done = host([{ tool: 'py__long_note', args: { words: 4 } }]);
  const session = await until(async () => {
    const { sessions } = await api(server.base, '/api/sessions');
    return sessions.find((s) => s.title === 'gateway: gateway-python-host');
  }, 30000, "the gateway's session in serve");
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  await page.goto(`${server.base}/sessions/${session.id}`);
  await page.waitForSelector('body[data-ready="true"]');
  const card = page.locator('.card[data-tool="py__long_note"]');
  // Live, or on a reload when the page opened before the call began to wait.
  let reloads = 0;
  await until(async () => {
    const shown = await card.locator('button.approve').waitFor({ timeout: 3000 }).then(() => true, () => false);
    if (shown) return true;
    reloads += 1;
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    return false;
  }, 30000, 'the Approve button');
  console.log(`the waiting call showed up after ${reloads} reload(s)`);
  await card.locator('button.approve').click();
  const got = await done;
  const result = got[2].result;
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.equal(result.structuredContent.words, 4, JSON.stringify(result));
  await page.waitForSelector('.card[data-tool="py__long_note"][data-state="output-available"]', { timeout: 15000 });
  await page.close();
});
