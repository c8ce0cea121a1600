// Issue 24's page side, in Chromium against a real `toolwire serve`: no byte of a result
// becomes a URL of the app's origin that could run as a page (inline SVG is drawn on the
// sandbox origin, and only passive media become blob: URLs), markdown fetches only from
// the app's origin (srcset and posters too), an MCP App's `ui/open-link` never reaches the
// server's own origins and cannot stack dialogs, an app's concurrent tool calls are all
// answered, and the sandbox's policy names no origin Chromium rejects.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { join } from 'node:path';
import { ROOT, launchBrowser, dirs, serve, api, store, until, shot } from './lib.mjs';
import { png } from './media.mjs';

let browser;

before(async () => {
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

const b64 = (text) => Buffer.from(text).toString('base64');

// What the renderer may turn into a blob: URL (toolwire-render.js PASSIVE_MEDIA).
const PASSIVE = /^(image\/(png|jpeg|gif|webp|avif|bmp)|audio\/[a-z0-9.-]+|video\/[a-z0-9.-]+)$/;

// Each payload marks the app origin's storage if its script ever runs there.
const mark = (what) => `try { localStorage.setItem('pwned', '${what}'); } catch (e) {} window.__pwned = '${what}';`;
const SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><script>${mark('svg')}</script><rect width="40" height="30" fill="#2563eb"/></svg>`;
const XHTML = `<html xmlns="http://www.w3.org/1999/xhtml"><body><script>${mark('xml')}</script></body></html>`;
const HTML = `<!doctype html><p>page</p><script>${mark('html')}</script>`;

/** A context whose pages record every object URL they make, with its type. */
async function recordingContext() {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  await context.addInitScript(() => {
    const made = [];
    const create = URL.createObjectURL;
    URL.createObjectURL = (o) => {
      const url = create.call(URL, o);
      made.push({ url, type: o && o.type });
      return url;
    };
    window.__objectUrls = made;
  });
  return context;
}

/** Opens each URL as a page of its own, as a person opening an image or link in a new tab. */
async function openEach(context, urls) {
  for (const url of urls) {
    const p = await context.newPage();
    // Downloads and refused navigations throw: neither runs anything.
    await p.goto(url, { timeout: 5000 }).catch(() => {});
    await p.waitForTimeout(200);
    await p.close();
  }
}

/** Every blob: and data: URL in the page's elements and every object URL it made. */
async function urlsOf(page) {
  const made = await page.evaluate(() => window.__objectUrls);
  const inDom = await page.evaluate(() => [...document.querySelectorAll('[src], [href]')]
    .map((e) => e.getAttribute('src') || e.getAttribute('href'))
    .filter((u) => /^(blob|data):/.test(u)));
  return { made, all: [...new Set([...made.map((m) => m.url), ...inDom])] };
}

async function pwned(page) {
  return page.evaluate(() => localStorage.getItem('pwned') || window.__pwned || null);
}

async function ready(page, url) {
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
}

/** The inner frame of a sandbox proxy (`sandboxOrigin`/sandbox) for which `check` holds. */
function sandboxed(page, sandboxOrigin, check, what) {
  return until(async () => {
    for (const f of page.frames()) {
      const parent = f.parentFrame();
      if (f.url() !== 'about:srcdoc' || !parent || !parent.url().startsWith(`${sandboxOrigin}/sandbox?`)) continue;
      const v = await f.evaluate(check).catch(() => null);
      if (v) return { frame: f, value: v };
    }
    return null;
  }, 20000, what);
}

test('inline SVG is drawn on the sandbox origin, and no blob: or data: URL of a result runs on the app origin', async () => {
  const d = dirs();
  const server = await serve(d);
  const context = await recordingContext();
  const page = await context.newPage();
  try {
    const info = await api(server.base, '/api/info');
    const s = await api(server.base, '/api/sessions', { title: 'svg' });
    const small = png(8, 8);
    assert.ok(small.length < 1024, 'kept inline by the store');
    store(d, s.id, {
      callId: 'call_svg', toolName: 'svg', status: 'success',
      output: [
        { kind: 'image', mimeType: 'image/svg+xml', data: { source: { base64: b64(SVG) }, alt: 'a blue box' } },
        { kind: 'image', mimeType: 'image/png', data: { source: { base64: small.toString('base64') } } },
      ],
    }, 'svg');
    await ready(page, `${server.base}/sessions/${s.id}`);
    // Drawn: an <img> of the SVG, loaded, in the proxy's inner frame on the sandbox origin,
    // and the frame sized to it.
    const { value: size } = await sandboxed(page, info.sandboxOrigin, () => {
      const i = document.images[0];
      return i && i.complete && i.naturalWidth > 0 ? [i.naturalWidth, i.naturalHeight] : null;
    }, 'the SVG drawn in the sandbox');
    assert.deepEqual(size, [40, 30]);
    const frame = page.locator('.card[data-tool="svg"] iframe.tw-svg-frame');
    assert.equal(await frame.count(), 1);
    assert.equal(new URL(await frame.getAttribute('src')).origin, info.sandboxOrigin);
    await until(async () => {
      const r = await frame.evaluate((f) => f.getBoundingClientRect());
      return Math.round(r.width) === 40 && Math.round(r.height) === 30;
    }, 5000, 'the frame sized to the image');
    // The passive PNG is still an image of a blob: URL; nothing else became one.
    const { made, all } = await urlsOf(page);
    assert.ok(made.some((m) => m.type === 'image/png'), JSON.stringify(made));
    for (const m of made) assert.match(m.type, PASSIVE);
    assert.equal(await page.locator('.card[data-tool="svg"] img.tw-image[src^="blob:"]').count(), 1);
    await shot(page, 'hardening-svg');
    // Opened as pages of their own, none runs on the app origin.
    await openEach(context, all);
    assert.equal(await pwned(page), null);
  } finally {
    await context.close();
    await server.stop();
  }
});

test('the renderer makes blob: URLs of passive media only, whatever a value claims', async () => {
  const d = dirs();
  const server = await serve(d);
  const context = await recordingContext();
  const page = await context.newPage();
  try {
    const info = await api(server.base, '/api/info');
    await ready(page, `${server.base}/`);
    const values = [
      // An XML subtype is an XML document to Chromium: its XHTML script would run.
      { kind: 'file', mimeType: 'audio/x-evil+xml', data: { source: { base64: b64(XHTML) }, mediaKind: 'audio', filename: 'a.xml' } },
      { kind: 'file', mimeType: 'text/html', data: { source: { base64: b64(HTML) }, mediaKind: 'document', filename: 'page.html' } },
      { kind: 'file', mimeType: 'image/svg+xml', data: { source: { base64: b64(SVG) }, mediaKind: 'document', filename: 'box.svg' } },
      // Typed as a PNG, HTML inside: the blob keeps the claimed type and is never sniffed.
      { kind: 'image', mimeType: 'image/png', data: { source: { base64: b64(HTML) } } },
      { kind: 'image', mimeType: 'image/svg+xml', data: { source: { base64: b64(SVG) } } },
    ];
    await page.evaluate(async ({ values, sandboxOrigin }) => {
      const r = await import('/web/toolwire-render.js');
      for (const opts of [{ sandboxOrigin }, {}]) {
        const el = document.createElement('div');
        el.className = 'direct';
        document.body.append(el);
        r.renderResult(el, { callId: 'c', toolName: 't', status: 'success', output: values }, opts);
      }
    }, { values, sandboxOrigin: info.sandboxOrigin });
    const { made, all } = await urlsOf(page);
    assert.deepEqual(made.map((m) => m.type), ['image/png', 'image/png']);
    // Without a sandbox origin (the renderer in another page), an SVG is an <img> of a
    // data: URL: an image runs no script, and a data: URL is no origin's.
    assert.equal(await page.locator('.direct img[src^="data:image/svg+xml;base64,"]').count(), 1);
    assert.equal(await page.locator('.direct iframe.tw-svg-frame').count(), 1);
    // The rest are downloads of bytes typed octet-stream: the XML "audio", the HTML, the SVG
    // file, in each of the two renderings.
    const downloads = await page.locator('.direct .tw-download a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    assert.equal(downloads.length, 6);
    for (const href of downloads) assert.match(href, /^data:application\/octet-stream;base64,/);
    await openEach(context, all);
    assert.equal(await pwned(page), null);
  } finally {
    await context.close();
    await server.stop();
  }
});

test('markdown fetches only from the app origin: srcset candidates, sources and posters too', async () => {
  const d = dirs();
  const server = await serve(d);
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    const s = await api(server.base, '/api/sessions', { title: 'srcset' });
    const md = [
      '<img src="/web/a.png" srcset="https://evil.example/1.png 1x, /web/b.png 2x" alt="mixed">',
      '<img srcset="https://evil.example/2.png 2x, https://evil.example/2b.png 3x" alt="remote only">',
      '<picture><source srcset="https://evil.example/3.png"><img src="/web/c.png" alt="pic"></picture>',
      '<video poster="https://evil.example/4.png" src="https://evil.example/5.mp4"></video>',
      '<img src="https://evil.example/6.png" srcset="/web/d.png 1x" alt="remote src">',
      '<img src="/web/e.png" srcset="https://evil.example/7.png 2x,/web/f.png 1x" alt="tight commas">',
    ].join('\n\n');
    store(d, s.id, { callId: 'call_md', toolName: 'md', status: 'success', output: [{ kind: 'text', mimeType: 'text/markdown', data: { content: md } }] }, 'md');
    // Anything the page tries to fetch from elsewhere is refused by its policy: the event
    // says so. (Without that policy, in another page, it would have gone out.)
    await context.addInitScript(() => {
      window.__blocked = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__blocked.push(e.blockedURI));
    });
    await ready(page, `${server.base}/sessions/${s.id}`);
    const box = page.locator('.card[data-tool="md"] .tw-markdown');
    await box.waitFor({ timeout: 10000 });
    await page.waitForTimeout(500);
    const attrs = await box.evaluate((el) => [...el.querySelectorAll('*')].flatMap((n) => ['src', 'srcset', 'poster', 'background']
      .filter((a) => n.hasAttribute(a)).map((a) => [n.tagName.toLowerCase(), a, n.getAttribute(a)])));
    const origin = server.base;
    for (const [tag, attr, value] of attrs) {
      const urls = attr === 'srcset' ? value.split(/,\s+/).map((c) => c.split(/\s+/)[0]) : [value];
      for (const u of urls) assert.equal(new URL(u, origin).origin, origin, `${tag} ${attr}="${value}"`);
    }
    const img = (alt) => box.locator(`img[alt="${alt}"]`);
    assert.equal(await img('mixed').getAttribute('srcset'), `${origin}/web/b.png 2x`);
    assert.equal(await img('remote only').count(), 0, 'an image with nothing of this origin is its alt text');
    assert.ok((await box.innerText()).includes('remote only'));
    assert.equal(await img('remote src').getAttribute('src'), null);
    assert.equal(await img('remote src').getAttribute('srcset'), `${origin}/web/d.png 1x`);
    assert.equal(await img('tight commas').getAttribute('srcset'), `${origin}/web/f.png 1x`);
    assert.equal(await box.locator('source[srcset]').count(), 0);
    assert.equal(await box.locator('video[poster], video[src]').count(), 0);
    const blocked = await page.evaluate(() => window.__blocked);
    assert.deepEqual(blocked.filter((u) => u.includes('evil.example')), []);
  } finally {
    await context.close();
    await server.stop();
  }
});

test('an MCP App: open-link never reaches the server, one dialog at a time naming the app; concurrent tool calls all answered; no CSP error', async () => {
  const d = dirs();
  const server = await serve(d, undefined, ['--mcp', `hard=node ${join(ROOT, 'tests/web/hardening_server.mjs')}`]);
  // Somewhere else on loopback that an app may send the person to.
  const landing = http.createServer((req, res) => res.end('landing'));
  await new Promise((r) => landing.listen(0, '127.0.0.1', r));
  const target = `http://127.0.0.1:${landing.address().port}/landing`;
  const context = await browser.newContext();
  const page = await context.newPage();
  const consoleLines = [];
  page.on('console', (m) => consoleLines.push(m.text()));
  const dialogs = [];
  let accept = false;
  page.on('dialog', (dl) => {
    dialogs.push(dl.message());
    return accept ? dl.accept() : dl.dismiss();
  });
  try {
    const info = await api(server.base, '/api/info');
    const s = await api(server.base, '/api/sessions', { title: 'app hardening' });
    await ready(page, `${server.base}/sessions/${s.id}`);
    await until(() => page.evaluate(() => document.getElementById('conn').dataset.state === 'live'), 5000, 'feed open');
    await api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'hard__show', input: {} });
    const { frame: app } = await sandboxed(page, info.sandboxOrigin, () => !!window.app, 'the app connected');

    // Five calls at once, twice: every one gets its own answer. The second time the answers
    // to the POSTs that start the calls reach the page late, after the results' events,
    // as they can on a busy machine.
    for (let round = 0; round < 2; round += 1) {
      if (round === 1) {
        await page.route('**/api/sessions/*/calls', async (route) => {
          const response = await route.fetch();
          await new Promise((r) => setTimeout(r, 500));
          await route.fulfill({ response });
        });
      }
      const answers = await app.evaluate(() => Promise.race([
        Promise.all([0, 1, 2, 3, 4].map((i) => window.app.callServerTool({ name: 'echo', arguments: { word: String(i) } })
          .then((r) => r.content[0].text))),
        new Promise((resolve) => setTimeout(() => resolve('timed out'), 15000)),
      ]));
      assert.deepEqual(answers, ['echo 0', 'echo 1', 'echo 2', 'echo 3', 'echo 4'], `round ${round}`);
    }

    // The server's own origins, under any loopback name, and its API: refused, no dialog.
    const port = new URL(server.base).port;
    const sandboxPort = new URL(info.sandboxOrigin).port;
    for (const url of [
      `${server.base}/`,
      `${server.base}/api/sessions/${s.id}/suspensions`,
      `http://localhost:${port}/api/sessions`,
      `http://[::1]:${port}/`,
      `http://127.0.0.2:${port}/`,
      `http://2130706433:${port}/`,
      `http://LOCALHOST.:${port}/`,
      `${info.sandboxOrigin}/sandbox`,
      `http://localhost:${sandboxPort}/sandbox.js`,
      `http://toolwire.example@127.0.0.1:${landing.address().port}/landing`,
      'javascript:alert(1)',
    ]) {
      const r = await app.evaluate((u) => window.app.openLink({ url: u }), url);
      assert.equal(r.isError, true, url);
    }
    assert.deepEqual(dialogs, []);

    // Five at once: one dialog (declined), which names the app and the link; the rest refused.
    const five = await app.evaluate((u) => Promise.all([0, 1, 2, 3, 4].map(() => window.app.openLink({ url: u }))), target);
    assert.equal(dialogs.length, 1, dialogs.join('\n---\n'));
    assert.ok(five.every((r) => r.isError), JSON.stringify(five));
    assert.match(dialogs[0], /tool "show" \(MCP server "hard"\)/);
    assert.ok(dialogs[0].includes(target), dialogs[0]);
    // Right after, still refused; after the pause the app may ask again, and once the
    // person agrees the link opens.
    assert.equal((await app.evaluate((u) => window.app.openLink({ url: u }), target)).isError, true);
    assert.equal(dialogs.length, 1);
    await page.waitForTimeout(2100);
    accept = true;
    const opened = context.waitForEvent('page');
    assert.equal((await app.evaluate((u) => window.app.openLink({ url: u }), target)).isError, false);
    assert.equal(dialogs.length, 2);
    const popup = await opened;
    await popup.waitForLoadState();
    assert.equal(popup.url(), target);

    // The sandbox's policy: only the asking page may frame it, and no IPv6 literal for a
    // page on 127.0.0.1, which Chromium would reject with an error for every app.
    const proxy = await fetch(`${info.sandboxOrigin}/sandbox?host=${encodeURIComponent(server.base)}`);
    const csp = proxy.headers.get('content-security-policy');
    assert.ok(csp.endsWith(`frame-ancestors ${server.base}`), csp);
    assert.ok(!csp.includes('['), csp);
    assert.deepEqual(consoleLines.filter((l) => /\[::1\]|source expression|invalid source/i.test(l)), []);
    await shot(page, 'hardening-app');
  } finally {
    await context.close();
    landing.close();
    await server.stop();
  }
});

test('stored markup behind a link is never a page of the app origin, whatever it claims', async () => {
  const d = dirs();
  const server = await serve(d);
  const context = await recordingContext();
  const page = await context.newPage();
  try {
    const s = await api(server.base, '/api/sessions', { title: 'stored markup' });
    // Big enough to be stored as blobs: an XHTML document behind `<?xml`, HTML, and SVG.
    const pad = (text) => `${text}<!--${'x'.repeat(300000)}-->`;
    const docs = {
      xhtml: `<?xml version="1.0"?>${pad(XHTML)}`,
      html: pad(HTML),
      svg: pad(SVG),
    };
    store(d, s.id, {
      callId: 'call_docs', toolName: 'docs', status: 'success',
      output: Object.entries(docs).map(([name, text]) => ({
        kind: 'file', mimeType: name === 'svg' ? 'image/svg+xml' : 'text/html',
        data: { source: { base64: b64(text) }, mediaKind: 'document', filename: `${name}.html` },
      })),
    }, 'docs');
    const stored = await api(server.base, `/api/sessions/${s.id}`);
    const keys = [...JSON.stringify(stored).matchAll(/blake3:[0-9a-f]{64}/g)].map((m) => m[0]);
    assert.ok(new Set(keys).size >= 3, `three blobs stored: ${keys.length}`);
    await ready(page, `${server.base}/sessions/${s.id}`);
    for (const key of new Set(keys)) {
      const url = `${server.base}/api/resources/${key}/content`;
      const r = await fetch(url);
      // Active types are downloads; markup the sniffer cannot name is plain text, which
      // nosniff keeps from ever being parsed as a document.
      const type = r.headers.get('content-type') || '';
      assert.ok(r.headers.get('content-disposition') === 'attachment' || type.startsWith('text/plain'), `${url}: ${type}`);
      assert.match(r.headers.get('content-security-policy') || '', /^sandbox/);
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
      // Opened as a person would, in a tab of the app's origin: a download, no script.
      await openEach(context, [url]);
    }
    assert.equal(await pwned(page), null);
  } finally {
    await context.close();
    await server.stop();
  }
});
