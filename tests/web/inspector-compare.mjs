// toolwire's web app side by side with MCP Inspector (the version under tests/mcp-hosts)
// on the same server-everything calls, for docs/web.md's comparison: both in Debian's
// chromium at 1280 and 400 px, light and dark. It makes the same calls in both (echo,
// get-sum, get-tiny-image, get-structured-content, get-annotated-message,
// get-resource-links, trigger-elicitation-request), measures what each point of the
// comparison can be measured by (the image's drawn size, the elicitation form's checks,
// axe-core's serious and critical findings, sideways overflow at 400 px, what a reload
// keeps, …), takes screenshots of both, and prints the measurements as JSON.
// Not part of the test run: it drives another project's UI, which changes under it.
// Usage: TOOLWIRE_BIN=… node inspector-compare.mjs [--docs]
//   screenshots go to target/screenshots/compare/; with --docs the few that docs/web.md
//   cites are also written, side by side and halved, to docs/screens/compare-*.png.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser, dirs, serve, api, until, freePort, everythingScript, ROOT, SCREENSHOTS } from './lib.mjs';

const require = createRequire(import.meta.url);
const AXE = require.resolve('axe-core/axe.min.js');
const INSPECTOR = join(ROOT, 'tests/mcp-hosts/node_modules/@modelcontextprotocol/inspector');
// By a neutral path (a link under the temp dir): both show the command in their pages.
const EVERYTHING = everythingScript();
const EVERYTHING_PKG = join(ROOT, 'tests/mcp/node_modules/@modelcontextprotocol/server-everything');
for (const p of [INSPECTOR, EVERYTHING]) if (!existsSync(p)) throw new Error(`no ${p}: npm ci --prefix tests/mcp-hosts and tests/mcp`);
const OUT = join(SCREENSHOTS, 'compare');
mkdirSync(OUT, { recursive: true });
const DOCS = process.argv.includes('--docs');
const version = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;

/** The same calls in both, as (tool, arguments). */
const CALLS = [
  ['echo', { message: 'hello from the comparison' }],
  ['get-sum', { a: 2, b: 3 }],
  ['get-tiny-image', {}],
  ['get-structured-content', { location: 'Chicago' }],
  ['get-annotated-message', { messageType: 'success', includeImage: true }],
  ['get-resource-links', { count: 3 }],
];

/** MCP Inspector's web UI on free ports, with server-everything as its ad-hoc server, its
 * secrets in memory and its files under a temp HOME (never this machine's). */
async function startInspector() {
  const [client, sandbox, origin] = [await freePort(), await freePort(), await freePort()];
  const home = mkdtempSync(join(tmpdir(), 'inspector-home-'));
  const child = spawn(process.execPath, [join(INSPECTOR, 'clients/launcher/build/index.js'), '--web', 'node', EVERYTHING, 'stdio'], {
    env: { ...process.env, HOME: home, CLIENT_PORT: String(client), MCP_SANDBOX_PORT: String(sandbox), MCP_APP_ORIGIN_PORT: String(origin),
      MCP_AUTO_OPEN_ENABLED: 'false', DANGEROUSLY_OMIT_AUTH: 'true', MCP_INSPECTOR_SECRET_STORE: 'memory', MCP_STORAGE_DIR: join(home, 'storage') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (b) => { log += b; });
  child.stderr.on('data', (b) => { log += b; });
  await until(() => /is up and running/.test(log) || child.exitCode !== null, 30000, 'MCP Inspector to start');
  if (child.exitCode !== null) throw new Error(`MCP Inspector exited: ${log}`);
  return { base: `http://127.0.0.1:${client}`, stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }) };
}

async function axe(page) {
  await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => {
    const r = await window.axe.run({ exclude: [['iframe']] }, { iframes: false, resultTypes: ['violations'] });
    const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    return { count: bad.reduce((n, v) => n + v.nodes.length, 0), rules: bad.map((v) => `${v.id} ×${v.nodes.length}`) };
  });
}

/** How far the page scrolls sideways (0: it fits its width). */
const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** The first image of `scope` as drawn: natural and shown size, smoothing, text alternative. */
const imageFacts = (img) => img.evaluate((i) => ({
  natural: `${i.naturalWidth}×${i.naturalHeight}`,
  shown: `${Math.round(i.getBoundingClientRect().width)}×${Math.round(i.getBoundingClientRect().height)}`,
  rendering: getComputedStyle(i).imageRendering, alt: i.alt,
}));

// ---- MCP Inspector ------------------------------------------------------------------------

async function inspectorOpen(browser, base, scheme, width) {
  const context = await browser.newContext({ bypassCSP: true, colorScheme: scheme, viewport: { width, height: 900 } });
  const page = await context.newPage();
  await page.goto(base);
  const sw = page.getByRole('switch').first();
  await sw.waitFor({ timeout: 20000 });
  await sw.check({ force: true });
  await page.getByText('Connected', { exact: true }).first().waitFor({ timeout: 20000 });
  // Its theme is Mantine's: follow the system unless toggled; make sure it is `scheme`.
  const current = await page.evaluate(() => document.documentElement.getAttribute('data-mantine-color-scheme'));
  if (current && current !== scheme) await page.getByRole('button', { name: 'Toggle color scheme' }).click();
  return page;
}

async function inspectorTools(page) {
  const tab = page.getByText('Tools', { exact: true }).first();
  if (await tab.isVisible()) await tab.click();
  else await page.getByRole('radio', { name: 'Tools' }).first().click({ force: true });
  await page.getByRole('button', { name: 'Execute Tool' }).or(page.getByText('Search tools...')).or(page.getByPlaceholder('Search tools...')).first().waitFor({ timeout: 10000 }).catch(() => {});
}

/** Picks `tool`, types its arguments in the JSON editor, runs it, waits for its result. */
async function inspectorCall(page, tool, args) {
  await page.getByRole('button', { name: new RegExp(`\\b${tool}$`) }).first().click();
  if (Object.keys(args).length) {
    const json = page.getByRole('switch', { name: 'Edit as JSON' });
    if (!(await json.isChecked())) await json.check({ force: true });
    const editor = page.locator('.ace_text-input').first();
    await editor.focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(JSON.stringify(args));
  }
  await page.getByRole('button', { name: 'Execute Tool' }).click();
  await page.getByText('Results', { exact: true }).first().waitFor({ timeout: 15000 });
  await page.waitForTimeout(600);
}

// ---- toolwire -------------------------------------------------------------------------------

async function toolwireSession(server) {
  await until(async () => (await api(server.base, '/api/tools')).some((t) => t.name === 'ev__get-tiny-image'), 30000, 'server-everything in toolwire');
  const s = await api(server.base, '/api/sessions', { title: 'server-everything, side by side with MCP Inspector' });
  for (const [tool, input] of CALLS) {
    const { callId } = await api(server.base, `/api/sessions/${s.id}/calls`, { tool: `ev__${tool}`, input });
    await until(async () => (await api(server.base, `/api/sessions/${s.id}`)).messages.some((m) => m.role === 'tool_result' && m.content.callId === callId), 15000, tool);
  }
  return s.id;
}

async function toolwireOpen(browser, base, path, scheme, width) {
  const context = await browser.newContext({ bypassCSP: true, colorScheme: scheme, viewport: { width, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${base}${path}`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForTimeout(400);
  return page;
}

// ---- the run ------------------------------------------------------------------------------

const d = dirs();
const server = await serve(d, undefined, ['--mcp', `ev=node ${EVERYTHING} stdio`]);
const inspector = await startInspector();
const browser = await launchBrowser();
const facts = { versions: { inspector: version(INSPECTOR), serverEverything: version(EVERYTHING_PKG), chromium: browser.version() }, inspector: {}, toolwire: {} };
const shot = (page, name) => page.screenshot({ path: join(OUT, `${name}.png`) });
try {
  const session = await toolwireSession(server);
  for (const scheme of ['light', 'dark']) {
    for (const width of [1280, 400]) {
      const tag = `${scheme}-${width}`;
      // Inspector: every call, the screenshots after the image, the links and the elicitation form.
      const ip = await inspectorOpen(browser, inspector.base, scheme, width);
      const ins = (facts.inspector[tag] = {});
      await shot(ip, `inspector-servers-${tag}`);
      await inspectorTools(ip);
      for (const [tool, args] of CALLS) {
        await inspectorCall(ip, tool, args);
        if (tool === 'get-tiny-image') {
          // The result's image (the header's logo is a data: URL too, in the dark theme).
          ins.image = await imageFacts(ip.locator('img[src^="data:image/png"]').last()).catch((e) => `none (${e.message.split('\n')[0]})`);
          await shot(ip, `inspector-image-${tag}`);
        }
        if (tool === 'get-structured-content') {
          const text = await ip.locator('body').innerText();
          ins.structured = { showsStructuredContent: /structured/i.test(text), showsTemperature: /temperature/i.test(text), showsSchemaCheck: /output ?schema|valid/i.test(text) };
          await shot(ip, `inspector-structured-${tag}`);
        }
        if (tool === 'get-annotated-message') {
          const text = await ip.locator('body').innerText();
          ins.annotations = { priority: /priority/i.test(text), audience: /audience/i.test(text) };
          await shot(ip, `inspector-annotations-${tag}`);
        }
        if (tool === 'get-resource-links') {
          ins.links = { shown: await ip.getByText(/demo:\/\/resource/).count() };
          await shot(ip, `inspector-links-${tag}`);
          if (tag === 'light-1280') {
            // Its links' expand control (↕): does it read the resource in place?
            const before = (await ip.locator('body').innerText()).length;
            const row = ip.locator('div', { has: ip.getByText('demo://resource/dynamic/text/2', { exact: true }) }).last();
            await row.locator('button, [role=button]').last().click({ timeout: 5000 }).catch(() => {});
            await ip.waitForTimeout(1500);
            const after = await ip.locator('body').innerText();
            ins.links.readInPlace = after.length > before + 20;
            ins.links.afterExpand = after.slice(after.indexOf('Text Resource 2'), after.indexOf('Text Resource 2') + 200);
            await shot(ip, `inspector-links-read-${tag}`);
          }
        }
      }
      if (tag === 'light-1280') {
        // The JSON-RPC traffic, which it shows in its Protocol tab.
        await ip.getByText('Protocol', { exact: true }).first().click().catch(() => {});
        await ip.waitForTimeout(800);
        ins.protocolTab = (await ip.locator('body').innerText()).match(/tools\/call/gi)?.length || 0;
        await shot(ip, `inspector-protocol-${tag}`);
      }
      // Calls shown at once after six calls (a history of results, or only the last?).
      ins.resultsShownAfterSixCalls = await ip.getByText('Results', { exact: true }).count();
      ins.overflowX = await overflow(ip);
      ins.axe = await axe(ip);
      // The elicitation form: the asking server named, Submit with a required field empty.
      await inspectorCall(ip, 'trigger-elicitation-request', {}).catch(() => {});
      const submit = ip.getByRole('button', { name: 'Submit' });
      await submit.waitFor({ timeout: 15000 }).catch(() => {});
      if (await submit.isVisible()) {
        const text = await ip.locator('body').innerText();
        ins.elicitation = { namesServer: /server .node. is requesting/i.test(text), decline: await ip.getByRole('button', { name: 'Decline' }).count() > 0,
          cancel: await ip.getByRole('button', { name: 'Cancel' }).count() > 0 };
        await shot(ip, `inspector-elicitation-${tag}`);
        ins.axeElicitation = await axe(ip);
        // Its Submit stays disabled while a required field is empty (no message says why).
        ins.elicitation.submitDisabledWhileRequiredEmpty = await submit.isDisabled();
        if (!ins.elicitation.submitDisabledWhileRequiredEmpty) {
          await submit.click();
          await ip.waitForTimeout(600);
          ins.elicitation.emptyRequiredBlocked = await submit.isVisible();
        }
        // A malformed email with the required field filled: checked before it is sent?
        await ip.getByRole('textbox').first().fill('Ada').catch(() => {});
        const email = ip.getByLabel(/email/i).first();
        if (await email.count()) await email.fill('not an email').catch(() => {});
        await ip.waitForTimeout(300);
        ins.elicitation.submitDisabledWithBadEmail = await submit.isDisabled();
        ins.elicitation.message = await ip.locator('[class*="error" i], [role=alert]').allInnerTexts().then((t) => t.join(' | ').slice(0, 200));
        await shot(ip, `inspector-elicitation-checked-${tag}`);
        await ip.getByRole('button', { name: 'Cancel' }).last().click().catch(() => {});
      }
      // What a reload keeps.
      await ip.reload();
      await ip.waitForTimeout(2500);
      ins.afterReload = { connected: await ip.getByText('Connected', { exact: true }).count() > 0, resultsShown: await ip.getByText('Results', { exact: true }).count() };
      await ip.context().close();

      // toolwire: the same calls in one session.
      const tp = await toolwireOpen(browser, server.base, `/sessions/${session}`, scheme, width);
      const tw = (facts.toolwire[tag] = {});
      await shot(tp, `toolwire-top-${tag}`);
      const card = (tool) => tp.locator(`.card[data-tool="ev__${tool}"]`).first();
      await card('get-tiny-image').scrollIntoViewIfNeeded();
      await tp.waitForTimeout(300);
      tw.image = await imageFacts(card('get-tiny-image').locator('img').first()).catch((e) => `none (${e.message.split('\n')[0]})`);
      tw.imageCaption = await card('get-tiny-image').locator('figcaption').first().innerText().catch(() => '');
      await card('get-tiny-image').evaluate((c) => c.scrollIntoView({ block: 'start' }));
      await tp.evaluate(() => scrollBy(0, -70));
      await shot(tp, `toolwire-image-${tag}`);
      await card('get-structured-content').evaluate((c) => c.scrollIntoView({ block: 'start' }));
      await tp.evaluate(() => scrollBy(0, -70));
      await tp.waitForTimeout(300);
      tw.structured = { schemaCheck: await card('get-structured-content').locator('.schema-check').getAttribute('title') };
      await shot(tp, `toolwire-structured-${tag}`);
      tw.links = { chips: await card('get-resource-links').locator('.tw-link').count() };
      await card('get-resource-links').evaluate((c) => c.scrollIntoView({ block: 'start' }));
      await tp.evaluate(() => scrollBy(0, -70));
      await tp.waitForTimeout(300);
      await shot(tp, `toolwire-links-${tag}`);
      tw.overflowX = await overflow(tp);
      tw.axe = await axe(tp);
      tw.footerRows = await card('get-tiny-image').locator('.footer-row').evaluate((r) => Math.round(r.getBoundingClientRect().height));
      await tp.reload();
      await tp.waitForSelector('body[data-ready="true"]');
      tw.afterReload = { cards: await tp.locator('.card').count() };
      await tp.context().close();
    }
  }
  // toolwire's elicitation: the same tool, its form (after toolwire's approval of the call).
  const e = await api(server.base, '/api/sessions', { title: 'An MCP elicitation' });
  const call = await api(server.base, `/api/sessions/${e.id}/calls`, { tool: 'ev__trigger-elicitation-request', input: {} });
  for (const scheme of ['light', 'dark']) {
    const tp = await toolwireOpen(browser, server.base, `/sessions/${e.id}`, scheme, 1280);
    const c = tp.locator(`.card[data-call-id="${call.callId}"]`);
    const approve = c.locator('button.approve');
    const form = c.locator('.ask form');
    await Promise.race([approve.waitFor({ timeout: 15000 }), form.waitFor({ timeout: 15000 })]);
    if (await approve.isVisible()) await approve.click();
    await form.waitFor({ timeout: 15000 });
    await tp.waitForTimeout(300);
    await c.evaluate((x) => x.scrollIntoView({ block: 'start' }));
    await tp.evaluate(() => scrollBy(0, -70));
    await shot(tp, `toolwire-elicitation-${scheme}-1280`);
    const text = await c.innerText();
    const tw = facts.toolwire[`${scheme}-1280`];
    tw.axeElicitation = await axe(tp);
    await c.locator('button.answer').click();
    tw.elicitation = { namesServer: /MCP server "ev" asks/.test(text), decline: await c.locator('button.deny').count() > 0, cancel: await c.locator('button.cancel').count() > 0,
      emptyRequiredBlocked: await form.isVisible(), message: (await c.locator('.field-error:not([hidden])').allInnerTexts()).join(' | ').slice(0, 200) };
    // A malformed email with the required field filled: checked before it is sent.
    await form.getByRole('textbox').first().fill('Ada');
    await form.getByLabel(/email/i).first().fill('not an email');
    await c.locator('button.answer').click();
    tw.elicitation.badEmailBlocked = await form.isVisible();
    tw.elicitation.badEmailMessage = (await c.locator('.field-error:not([hidden])').allInnerTexts()).join(' | ').slice(0, 200);
    await shot(tp, `toolwire-elicitation-checked-${scheme}-1280`);
    await tp.context().close();
  }
  if (DOCS) {
    // Side by side, halved: Inspector left, toolwire right.
    const pairs = [['image-light-1280', 'inspector-image-light-1280', 'toolwire-image-light-1280'], ['links-dark-1280', 'inspector-links-dark-1280', 'toolwire-links-dark-1280'],
      ['narrow-light-400', 'inspector-image-light-400', 'toolwire-image-light-400'], ['elicitation-light-1280', 'inspector-elicitation-light-1280', 'toolwire-elicitation-light-1280']];
    const page = await browser.newPage({ viewport: { width: 1280, height: 460 } });
    for (const [name, left, right] of pairs) {
      const src = (f) => `data:image/png;base64,${readFileSync(join(OUT, `${f}.png`)).toString('base64')}`;
      const narrow = name.startsWith('narrow');
      await page.setViewportSize({ width: narrow ? 420 : 1280, height: narrow ? 460 : 460 });
      await page.setContent(`<body style="margin:0;display:flex;gap:0;background:#888">
        <img src="${src(left)}" style="width:50%;display:block"><img src="${src(right)}" style="width:50%;display:block"></body>`);
      await page.waitForTimeout(200);
      const file = join(ROOT, 'docs/screens', `compare-${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
    }
    await page.close();
  }
  console.log(JSON.stringify(facts, null, 1));
} finally {
  await browser.close();
  await inspector.stop();
  await server.stop();
}
