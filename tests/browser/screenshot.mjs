// A screenshot of any kbench page for a report or a mailing-list post, taken
// with the browser tests' Chromium (not a test: ctest runs *.test.mjs only).
//   KBENCH_BROWSER_MODULES=build/tests/browser/node_modules \
//     node tests/browser/screenshot.mjs URL-OR-FILE OUT.png [DETAILS-TO-OPEN]
// Opens the first DETAILS-TO-OPEN (default 0) <details> of the page (a
// report's rows: their sample plots) before the full-page PNG is taken.
import { resolve } from 'node:path';

const [url, out, open = '0'] = process.argv.slice(2);
if (!url || !out || !/^[0-9]+$/.test(open)) {
  console.error('usage: node tests/browser/screenshot.mjs URL-OR-FILE OUT.png [DETAILS-TO-OPEN]');
  process.exit(2);
}
// lib.mjs reads KBENCH_ARTIFACTS when it is loaded: set it first.
process.env.KBENCH_ARTIFACTS = resolve(out, '..');
const { browserTest, openPage, screenshot } = await import('./lib.mjs');
await browserTest(async (browser) => {
  const page = await openPage(browser, url);
  await page.setViewport({ width: 1280, height: 900 });
  await page.$$eval('details', (all, n) => all.slice(0, n).forEach((d) => { d.open = true; }), Number(open));
  // Lazy plots embed on the toggle event: give them their time.
  await new Promise((done) => setTimeout(done, 1500));
  await screenshot(page, resolve(out).split('/').pop().replace(/\.png$/, ''));
});
