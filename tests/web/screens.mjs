// Screenshots of the real app for people (the README, reviews): the session list, a
// session with every kind, a pending approval, an elicitation form and resource links
// read, light and dark, at 1280 and 400 px wide, under target/screenshots/app-*.png.
// Usage: TOOLWIRE_BIN=… node screens.mjs
import { launchBrowser, shot } from './lib.mjs';
import { seeded, elicitationForm } from './seed.mjs';

const { server, sessions } = await seeded();
const browser = await launchBrowser();
try {
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
      for (const read of await page.locator('.tw-link [data-role="read"][aria-expanded="false"]').all()) await read.click();
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
