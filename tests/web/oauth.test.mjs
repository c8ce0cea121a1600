// Logging in to a protected MCP server that toolwire did not write: the official Python
// SDK's MCPServer with its OAuth routes and an in-memory provider (tests/mcp/oauth_server.py,
// PyPI's `mcp`, in tests/mcp/venv). Chromium drives the web app's "Log in": the
// authorization page in a new tab, "Approve", the redirect back to `toolwire serve`. Then
// `toolwire call` uses the stored token, refreshes it after it expires, and is refused
// after `toolwire mcp logout`. The token never shows in logs, outputs or the history.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, dirs, serve, launchBrowser, until, freePort, toolwireBin } from './lib.mjs';

const PYTHON = join(ROOT, 'tests/mcp/venv/bin/python');
// Short-lived access tokens, so that the test sees one refreshed.
const TOKEN_SECONDS = 4;

const missing = !existsSync(PYTHON);
if (missing && process.env.CI) {
  throw new Error(`no ${PYTHON}, and CI is set: run .ci/run's setup (python3 -m venv tests/mcp/venv; pip install -r tests/mcp/requirements.txt)`);
}
const skip = missing ? `no Python venv at ${PYTHON} (pip install -r tests/mcp/requirements.txt; set CI to make this a failure)` : false;

let protectedServer; let base; let d; let config;

before(async () => {
  if (skip) return;
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  protectedServer = spawn(PYTHON, [join(ROOT, 'tests/mcp/oauth_server.py'), String(port), '--token-seconds', String(TOKEN_SECONDS)], { stdio: 'ignore' });
  await until(async () => {
    try { return (await fetch(`${base}/stats`)).ok; } catch { return false; }
  }, 30000, 'the protected MCP server');
  d = dirs();
  config = join(d.base, 'mcp.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { guarded: { url: `${base}/mcp` } } }));
});

after(() => { if (protectedServer) protectedServer.kill(); });

/** `toolwire ARGS` on the test's data dir: its exit status, stdout and stderr. */
function run(args) {
  try {
    const stdout = execFileSync(toolwireBin(), ['--data-dir', d.data, ...args], { cwd: d.workspace, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
    return { status: 0, stdout, stderr: '' };
  } catch (e) {
    return { status: e.status, stdout: String(e.stdout), stderr: String(e.stderr) };
  }
}

const stats = async () => (await fetch(`${base}/stats`)).json();

test('log in through the web app, call with the stored token, refresh it, log out', { skip }, async () => {
  const app = await serve(d, 0, ['--mcp-config', config]);
  const browser = await launchBrowser();
  let outputs = '';
  try {
    const listed = await (await fetch(`${app.base}/api/servers`)).json();
    assert.equal(listed.servers[0].state, 'needs_login');
    assert.match(listed.servers[0].reason, /toolwire mcp login guarded/);

    // The API around it: an unknown server, a forged redirect, a server one cannot log in to.
    const nobody = await fetch(`${app.base}/api/servers/nobody/login`, { method: 'POST' });
    assert.equal(nobody.status, 404);
    const forged = await fetch(`${app.base}/oauth/callback?code=stolen&state=forged`);
    assert.equal(forged.status, 400);
    assert.match(await forged.text(), /No login started here waits for this redirect/);

    const page = await browser.newPage();
    await page.goto(app.base);
    const group = page.locator('details.server[data-server="guarded"]');
    await group.locator('.state-pill[data-state="needs_login"]').waitFor();
    const [tab] = await Promise.all([
      page.context().waitForEvent('page'),
      group.locator('button.server-login').click(),
    ]);
    // The authorization server's own page, where a person approves.
    await tab.locator('#approve').click();
    await tab.locator('#login-result').waitFor();
    assert.equal(await tab.locator('#login-result').innerText(), 'Logged in');
    assert.equal(await tab.locator('#login-result').getAttribute('data-status'), '200');
    // The app, still open, sees the server come up with its tool.
    await group.locator('.state-pill[data-state="ready"]').waitFor({ timeout: 20000 });
    await group.locator('li[data-tool-name="guarded__whoami"]').waitFor();
  } finally {
    await browser.close();
    await app.stop();
    outputs += app.log();
  }

  // The token is in an owner-only file of the data dir, and nowhere else.
  const authDir = join(d.data, 'mcp-auth');
  const [file] = readdirSync(authDir);
  assert.equal(statSync(authDir).mode & 0o777, 0o700);
  assert.equal(statSync(join(authDir, file)).mode & 0o777, 0o600);
  const stored = JSON.parse(readFileSync(join(authDir, file), 'utf8'));
  const firstToken = stored.credentials.token_response.access_token;
  assert.ok(firstToken.length > 20);

  const called = run(['call', 'guarded__whoami', '{}', '--yes', '--mcp-config', config]);
  assert.equal(called.status, 0, called.stderr);
  assert.match(called.stdout, /hello from the protected server/);
  outputs += called.stdout + called.stderr;

  // Past the access token's life: the call still works, on a refreshed token.
  const before = await stats();
  await new Promise((r) => setTimeout(r, (TOKEN_SECONDS + 1) * 1000));
  const later = run(['call', 'guarded__whoami', '{}', '--yes', '--mcp-config', config]);
  assert.equal(later.status, 0, later.stderr);
  assert.match(later.stdout, /hello from the protected server/);
  outputs += later.stdout + later.stderr;
  assert.ok((await stats()).refreshed > before.refreshed, 'the expired token was refreshed');
  const refreshed = JSON.parse(readFileSync(join(authDir, file), 'utf8')).credentials.token_response.access_token;
  assert.notEqual(refreshed, firstToken);

  const tools = run(['tools', '--mcp-config', config]);
  outputs += tools.stdout + tools.stderr;
  const history = readFileSync(join(d.data, 'history.db'));
  for (const token of [firstToken, refreshed]) {
    assert.ok(!outputs.includes(token), 'a token was printed or logged');
    assert.ok(!history.includes(Buffer.from(token)), 'a token was stored in the history');
  }

  const out = run(['mcp', 'logout', 'guarded', '--mcp-config', config]);
  assert.equal(out.status, 0, out.stderr);
  assert.ok(!existsSync(join(authDir, file)));
  const refused = run(['call', 'guarded__whoami', '{}', '--yes', '--mcp-config', config]);
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /requires a login \(OAuth\): run `toolwire mcp login guarded`/);
});
