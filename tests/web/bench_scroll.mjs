// Scrolling a long session in Chromium: a session of N read_file calls on a real
// `toolwire serve` (TOOLWIRE_BIN), opened, then scrolled from top to bottom at a steady
// speed while every animation frame's time is recorded. Prints one JSON object: the
// first render, and the frame times while scrolling (median, p95, p99, worst, and the
// share of frames slower than 60 fps's 16.7 ms and than 33 ms), in full and compact view.
// Usage: TOOLWIRE_BIN=… node bench_scroll.mjs [CALLS=10000] [PX_PER_FRAME=120]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, dirs, serve, api, until } from './lib.mjs';

const calls = Number(process.argv[2] || 10000);
const step = Number(process.argv[3] || 120);

/** Scrolls the page by `px` each frame to the bottom (or `maxFrames`) and returns the
 * gaps between frames, in ms. Runs in the page. */
async function scrollFrames(page, px, maxFrames) {
  return page.evaluate(([px, maxFrames]) => new Promise((resolve) => {
    const gaps = [];
    let last = 0;
    const frame = (t) => {
      if (last) gaps.push(t - last);
      last = t;
      const end = document.scrollingElement.scrollHeight - innerHeight;
      if (scrollY >= end - 1 || gaps.length >= maxFrames) {
        resolve(gaps);
        return;
      }
      scrollBy(0, px);
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }), [px, maxFrames]);
}

function stats(gaps) {
  const s = [...gaps].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  const r = (x) => Math.round(x * 10) / 10;
  return {
    frames: s.length,
    medianMs: r(q(0.5)),
    p95Ms: r(q(0.95)),
    p99Ms: r(q(0.99)),
    worstMs: r(s[s.length - 1]),
    // A frame that took more than one and a half 60 fps frames: at least one was dropped.
    droppedPct: r((100 * s.filter((g) => g > 25).length) / s.length),
    over33Pct: r((100 * s.filter((g) => g > 33.4).length) / s.length),
  };
}

const d = dirs();
writeFileSync(join(d.workspace, 'main.rs'), 'fn main() {\n    println!("hello");\n}\n');
const server = await serve(d);
const browser = await launchBrowser();
try {
  const s = await api(server.base, '/api/sessions', { title: `${calls} calls` });
  const batch = [];
  for (let i = 0; i < calls; i += 1) {
    batch.push(api(server.base, `/api/sessions/${s.id}/calls`, { tool: 'read_file', input: { path: 'main.rs' } }));
    if (batch.length === 100) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
  await until(async () => (await api(server.base, '/api/sessions')).sessions.find((x) => x.id === s.id).callCount === calls, 900000, `${calls} results`);
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${server.base}/sessions/${s.id}`);
  await page.waitForFunction(() => performance.getEntriesByName('toolwire-rendered').length > 0, null, { timeout: 300000 });
  const firstRender = await page.evaluate(() => performance.getEntriesByName('toolwire-rendered')[0].startTime);
  // The rest of the cards are made after the first render, in idle slices; scrolling is
  // measured once they all are (`data-ready`).
  await page.waitForSelector('body[data-ready="true"]', { timeout: 300000 });
  const built = await page.evaluate(() => (performance.getEntriesByName('toolwire-built')[0] || { startTime: NaN }).startTime);
  const cards = await page.locator('.card').count();
  if (cards !== calls) throw new Error(`${cards} cards, ${calls} expected`);
  await page.waitForTimeout(500);
  // The frames a person sees: the top few thousand pixels a second, as a quick flick does.
  const full = stats(await scrollFrames(page, step, 1200));
  await page.evaluate(() => scrollTo(0, 0));
  await page.click('.filters [data-role="compact"]');
  await page.waitForTimeout(500);
  const compact = stats(await scrollFrames(page, step, 1200));
  console.log(JSON.stringify({ calls, pxPerFrame: step, firstRenderMs: Math.round(firstRender), builtMs: Math.round(built), full, compact }));
} finally {
  await browser.close();
  await server.stop();
}
