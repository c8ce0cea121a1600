// Shared pieces of the browser tests: a real `toolwire serve` on a free loopback port over
// temp dirs, the CLI beside it, and Debian's chromium driven by playwright-core.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, existsSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { chromium } from 'playwright-core';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// Under the checkout's target/, wherever cargo's own build output goes.
export const SCREENSHOTS = join(ROOT, 'target', 'screenshots');

export function toolwireBin() {
  const bin = process.env.TOOLWIRE_BIN;
  if (!bin || !existsSync(bin)) throw new Error('set TOOLWIRE_BIN to a built toolwire binary (cargo test runs this with it set)');
  return bin;
}

export function chromiumPath() {
  const path = process.env.TOOLWIRE_CHROMIUM || '/usr/bin/chromium';
  if (!existsSync(path)) throw new Error(`no chromium at ${path}: apt-get install chromium (or set TOOLWIRE_CHROMIUM)`);
  return path;
}

export async function launchBrowser() {
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--headless', '--autoplay-policy=no-user-gesture-required'] });
  // TOOLWIRE_WEB_DIR=web: the page's assets (`/web/*`) come from that folder instead of the
  // binary, so looking at a change to the app needs no rebuild. For iterating only: the
  // tests and screenshots that count run against the assets embedded in the binary.
  const dir = process.env.TOOLWIRE_WEB_DIR;
  if (dir) {
    const { readFileSync } = await import('node:fs');
    const types = { js: 'text/javascript', mjs: 'text/javascript', css: 'text/css', svg: 'image/svg+xml', html: 'text/html' };
    const newContext = browser.newContext.bind(browser);
    const route = async (target) => {
      await target.route(/\/web\/[^?#]+$/, (r) => {
        const rel = new URL(r.request().url()).pathname.replace(/^\/web\/(v-[0-9a-f]{16}\/)?/, '');
        if (rel.includes('..')) return r.abort();
        try {
          const body = readFileSync(join(dir, rel));
          return r.fulfill({ body, contentType: types[rel.split('.').pop()] || 'text/plain' });
        } catch {
          return r.continue();
        }
      });
      return target;
    };
    browser.newContext = async (opts) => {
      const context = await route(await newContext(opts));
      context.toolwireRouted = true;
      return context;
    };
    const newPage = browser.newPage.bind(browser);
    browser.newPage = async (opts) => {
      const page = await newPage(opts);
      if (page.context().toolwireRouted) return page;
      return route(page);
    };
  }
  return browser;
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Temp data and workspace dirs, shared by the server and the CLI. */
export function dirs() {
  const base = mkdtempSync(join(tmpdir(), 'toolwire-web-'));
  const data = join(base, 'data');
  const workspace = join(base, 'ws');
  mkdirSync(workspace, { recursive: true });
  return { base, data, workspace };
}

/** Starts `toolwire serve` on `d` and waits until it answers and its MCP servers (which
 * connect in the background) are each ready or failed. */
export async function serve(d, port, extra = []) {
  port = port || await freePort();
  const child = spawn(toolwireBin(), ['--data-dir', d.data, 'serve', '--addr', `127.0.0.1:${port}`, '--workspace', d.workspace, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (b) => { log += b; });
  child.stderr.on('data', (b) => { log += b; });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i += 1) {
    try {
      const r = await fetch(`${base}/api/info`);
      if (r.ok) break;
    } catch { /* not up yet */ }
    if (child.exitCode !== null) throw new Error(`toolwire serve exited: ${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  if (extra.some((a) => a.startsWith('--mcp'))) {
    await until(async () => {
      const r = await fetch(`${base}/api/servers`);
      const { servers } = await r.json();
      // A server that needs a login has settled too: it waits for a person.
      return servers.every((s) => ['ready', 'failed', 'needs_login'].includes(s.state));
    }, 60000, 'the MCP servers to be ready, failed or waiting for a login');
  }
  const stop = () => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  return { base, port, child, stop, log: () => log };
}

/** server-everything from tests/mcp (npm ci --prefix tests/mcp), as a --mcp argument. */
export function everythingMcp(name = 'ev') {
  return ['--mcp', `${name}=node ${everythingScript()} stdio`];
}

/** server-everything's script, by a neutral path: a link under the temp dir
 * (`/tmp/toolwire-mcp/server-everything.js`), so the command the app shows beside the
 * server (and screenshots keep) names no folder of this machine's checkout. Node runs the
 * linked file from where it really is. */
export function everythingScript() {
  const script = join(ROOT, 'tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  if (!existsSync(script)) throw new Error(`no ${script}: npm ci --prefix tests/mcp`);
  const dir = join(tmpdir(), 'toolwire-mcp');
  const link = join(dir, 'server-everything.js');
  try {
    mkdirSync(dir, { recursive: true });
    if (!existsSync(link) || realpathSync(link) !== realpathSync(script)) {
      rmSync(link, { force: true });
      symlinkSync(script, link);
    }
    return link;
  } catch {
    return script;
  }
}

/** Calls the API as a client (a tool, not a browser: no Origin). */
export async function api(base, path, body) {
  const init = body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  const r = await fetch(`${base}${path}`, init);
  const text = await r.text();
  if (!r.ok) throw new Error(`${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Runs the CLI on the same data dir, as another process would. */
export function cli(d, args, input) {
  return execFileSync(toolwireBin(), args.map((a) => (a === '@data' ? d.data : a === '@ws' ? d.workspace : a)),
    { input, cwd: d.workspace, env: { ...process.env, TOOLWIRE_DATA_DIR: d.data }, maxBuffer: 64 << 20 }).toString();
}

/** Stores a canonical or raw result in `session` through `toolwire normalize --store`. */
export function store(d, session, payload, tool = 'seeded') {
  const file = join(d.base, `payload-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(payload));
  return cli(d, ['normalize', '--data-dir', '@data', '--store', '--session', session, '--tool', tool, '--compact', file]);
}

/** Waits until `check()` is truthy (or throws after `ms`). */
export async function until(check, ms = 10000, what = 'condition') {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function shot(page, name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
