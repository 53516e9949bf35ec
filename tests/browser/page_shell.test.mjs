// The page shell (src/report/html_page.h) in Chromium, on the page
// html-page-demo writes: no console errors, the eager bar chart embedded with
// a bar per datum and its text alternative, kbenchViews filled, the lazy plot
// embedded when its <details> opens, nothing loaded from anywhere; and on a
// broken page, a plot that cannot be embedded and a request for the network
// are errors the harness sees (kbenchReady "failed").
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  browserTest, markCount, openPage, requestsOf, requireEnv, runProgram, screenshot, takeProblems, viewData, waitReady,
} from './lib.mjs';

const demo = requireEnv('KBENCH_HTML_PAGE_DEMO');
const dir = mkdtempSync(join(tmpdir(), 'kbench-page-shell-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'demo.html');
runProgram(demo, [file]);
const brokenFile = join(dir, 'broken.html');
runProgram(demo, ['--broken', brokenFile]);

await browserTest(async (browser) => {
  const page = await openPage(browser, file);

  assert.equal(await page.title(), 'kbench page shell <demo> & test');
  assert.equal(await markCount(page, 'changes', 'rect'), 5, 'one bar per benchmark');
  const bars = await viewData(page, 'changes');
  assert.deepEqual(bars.map((bar) => bar.benchmark),
                   ['syscall/getpid', 'mem/bandwidth', 'sched/pipe', 'sock/tcp_rr', 'perf/execve']);
  assert.equal(await page.$eval('#changes', (plot) => plot.getAttribute('aria-label')),
               'change per benchmark; the numbers are in the table');
  assert.deepEqual(await page.evaluate(() => Object.keys(window.kbenchViews)), ['changes']);

  // Verdict marks carry their letter: readable without colour.
  assert.deepEqual(await page.$$eval('.verdict', (marks) => marks.map((mark) => mark.textContent)),
                   ['I', 'R', 'U', 'Q']);
  const colours = await page.$$eval('.verdict', (marks) => marks.map((mark) => getComputedStyle(mark).color));
  assert.equal(new Set(colours).size, 4, `four verdict colours, got ${colours}`);

  // Lazy: nothing in the closed <details>, its plot once opened.
  assert.equal(await page.$('#samples svg'), null);
  await page.click('#samples-details summary');
  await page.waitForFunction(() => window.kbenchViews.samples !== undefined, { timeout: 30000 });
  assert.equal(await markCount(page, 'samples', 'symbol'), 12, 'one point per sample');
  assert.equal(await page.$eval('#samples', (plot) => plot.getAttribute('aria-label')),
               '12 samples in 3 boots; boot 3 is about 30 ns slower');

  await screenshot(page, 'page_shell');
  assert.deepEqual(requestsOf(page), [page.url()], 'the page loaded something besides itself');

  const broken = await openPage(browser, brokenFile, { ready: false });
  await assert.rejects(waitReady(broken), /kbenchReady is "failed"/);
  assert.equal(takeProblems(broken, /console\.error: kbench: no element #missing for its plot/).length, 1);
  assert.ok(takeProblems(broken, /Content Security Policy|example\.com/).length >= 1,
            'the image from the network was not refused');
});
