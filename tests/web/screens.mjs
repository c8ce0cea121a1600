// Screenshots of the real app for people (the README, reviews): the session list, a
// session with every kind, a pending approval, an elicitation form and resource links
// read, light and dark, at 1280 and 400 px wide, under target/screenshots/app-*.png.
// With --readme it also writes the README's screenshots to docs/screens/ (the list, every
// kind, dark, narrow, an approval, resource links read), so they always show the app as
// it is: run it after changing how the app looks, and commit the PNGs.
// Usage: TOOLWIRE_BIN=… node screens.mjs [--readme]
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, shot, ROOT } from './lib.mjs';
import { seeded, elicitationForm } from './seed.mjs';

const { server, sessions } = await seeded();
const browser = await launchBrowser();
const README = join(ROOT, 'docs', 'screens');
const readme = process.argv.includes('--readme');
if (readme) mkdirSync(README, { recursive: true });

/** The README's views: (file, scheme, width, path, what to do before the shot). */
const README_SHOTS = [
  ['session-list', 'light', 1280, '/', null],
  ['every-kind', 'light', 1280, `/sessions/${sessions.kinds}`, async (page) => {
    // Past the file, directory and table at the top (the dark shot shows those), to the
    // image, the failed call, the audio and the notes (markdown, diff, JSON tree).
    await page.locator('.card[data-tool="view_image"]').evaluate((c) => c.scrollIntoView({ block: 'start' }));
    await page.evaluate(() => scrollBy(0, -70));
  }],
  ['every-kind-dark', 'dark', 1280, `/sessions/${sessions.kinds}`, null],
  ['approval-dark', 'dark', 1280, `/sessions/${sessions.approval}`, (page) => page.locator('button.approve').waitFor({ timeout: 15000 })],
  ['resource-links', 'light', 1280, `/sessions/${sessions.links}`, async (page) => {
    // Not the ones already drawn (kept from an earlier read): Read would hide those.
    for (const read of await page.locator('.tw-link [data-role="read"]').all()) {
      if (await read.getAttribute('aria-expanded') === 'false') await read.click();
    }
    await page.locator('.tw-link-contents .tw-value').first().waitFor({ timeout: 10000 });
  }],
  ['narrow', 'light', 400, `/sessions/${sessions.kinds}`, null],
  ['narrow-dark', 'dark', 400, `/sessions/${sessions.approval}`, (page) => page.locator('button.approve').waitFor({ timeout: 15000 })],
];

try {
  for (const [file, scheme, width, path, before] of readme ? README_SHOTS : []) {
    const page = await browser.newPage({ viewport: { width, height: width < 600 ? 860 : 820 }, colorScheme: scheme });
    await page.goto(`${server.base}${path}`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForTimeout(400);
    if (before) await before(page);
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(README, `${file}.png`) });
    await page.close();
  }
  for (const scheme of ['light', 'dark']) {
    for (const width of [1280, 400]) {
      const page = await browser.newPage({ viewport: { width, height: 900 }, colorScheme: scheme });
      const open = async (path) => {
        await page.goto(`${server.base}${path}`);
        await page.waitForSelector('body[data-ready="true"]');
        await page.waitForTimeout(400);
      };
      const name = (what) => `app-${what}-${scheme}-${width}`;
      await open('/');
      await page.screenshot({ path: `${process.env.SCREENS || '../../target/screenshots'}/${name('list')}.png` });
      await open(`/sessions/${sessions.kinds}`);
      await shot(page, name('kinds'));
      await page.screenshot({ path: `${process.env.SCREENS || '../../target/screenshots'}/${name('kinds-top')}.png` });
      await open(`/sessions/${sessions.approval}`);
      await page.locator('button.approve').waitFor({ timeout: 15000 });
      await page.screenshot({ path: `${process.env.SCREENS || '../../target/screenshots'}/${name('approval')}.png` });
      if (scheme === 'light' && width === 1280) {
        await elicitationForm(page, server, sessions);
      } else {
        await open(`/sessions/${sessions.elicitation}`);
        await page.locator('.ask').first().waitFor({ timeout: 15000 });
      }
      await page.screenshot({ path: `${process.env.SCREENS || '../../target/screenshots'}/${name('elicitation')}.png` });
      await open(`/sessions/${sessions.links}`);
      // Not the ones already drawn (kept from an earlier read): Read would hide those.
    for (const read of await page.locator('.tw-link [data-role="read"]').all()) {
      if (await read.getAttribute('aria-expanded') === 'false') await read.click();
    }
      await page.locator('.tw-link-contents .tw-value').first().waitFor({ timeout: 10000 });
      await page.screenshot({ path: `${process.env.SCREENS || '../../target/screenshots'}/${name('links')}.png` });
      if (width === 400) {
        await page.click('#nav-toggle');
        await page.waitForTimeout(300);
        await page.screenshot({ path: `${process.env.SCREENS || '../../target/screenshots'}/${name('drawer')}.png` });
      }
      await page.close();
    }
  }
} finally {
  await browser.close();
  await server.stop();
}
