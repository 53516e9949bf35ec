// kbench trend --format html in Chromium: ten kernels written by
// store-fixture with a 10 % step planted at 6.13-rc1 in one row and none in
// another. The page embeds one plot per row without console errors; the
// stepped row's view holds one change point, at the planted place, drawn as
// one dashed rule with its label, and the flat row's none; the step table has
// that one step, marked R with its letter.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { browserTest, openPage, requestsOf, requireEnv, runProgram, screenshot, viewData } from './lib.mjs';

const kbench = requireEnv('KBENCH');
const storeFixture = requireEnv('STORE_FIXTURE');
const dir = mkdtempSync(join(tmpdir(), 'kbench-trend-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

// Newest first (store order is not version order); a deterministic wobble, no RNG.
const kernels = ['v6.15', '6.14', '6.13', '6.13-rc1', '6.12', '6.12-rc2', '6.11', '6.11-rc3', '6.11-rc1', '6.10'];
const stepped = new Set(['v6.15', '6.14', '6.13', '6.13-rc1']);
const sessions = [];
kernels.forEach((kernel, k) => {
  for (let s = 0; s < 3; s++) {
    const level = 100 * (stepped.has(kernel) ? 1.10 : 1) * (1 + 0.004 * Math.sin(k * 2.1)) *
                  (1 + 0.003 * Math.sin(k * 5.3 + s * 1.7));
    const repeats = [0, 1, 2, 3, 4];
    sessions.push({
      swprofile: kernel,
      benchmarks: [{
        name: 'syscall/getpid',
        results: [
          { class: 'mean', unit: 'ns', better: 'lower',
            values: repeats.map((r) => level * (1 + 0.002 * Math.sin(r * 3.9 + s + k))) },
          { class: 'p99', unit: 'ns', better: 'lower',
            values: repeats.map((r) => 250 * (1 + 0.005 * Math.sin(k * 1.3 + s * 2.9 + r))) },
        ],
      }],
    });
  }
});
const spec = join(dir, 'spec.json');
writeFileSync(spec, JSON.stringify({ sut: 'vm', sessions }));
const store = join(dir, 'trend.db');
runProgram(storeFixture, [store, spec]);
const file = join(dir, 'trend.html');
writeFileSync(file, runProgram(kbench, ['trend', '--swprofile', '*', '--format', 'html', '--store', `sqlite://${store}`]));

await browserTest(async (browser) => {
  const page = await openPage(browser, file);
  assert.deepEqual(await page.evaluate(() => Object.keys(window.kbenchViews).sort()), ['trend-plot-0', 'trend-plot-1']);
  const headings = await page.$$eval('section.trend-row h2', (h) => h.map((e) => e.textContent));
  assert.deepEqual(headings, ['syscall/getpid mean (ns) on SUT vm', 'syscall/getpid p99 (ns) on SUT vm']);

  // The stepped row: one change point, where it was planted, a regression.
  const changepoints = await viewData(page, 'trend-plot-0', 'changepoints');
  assert.equal(changepoints.length, 1, JSON.stringify(changepoints));
  assert.equal(changepoints[0].at, '6.13-rc1');
  assert.equal(changepoints[0].before, '6.10..6.12');
  assert.equal(changepoints[0].verdict, 'R');
  assert.match(changepoints[0].label, /^\(R\) -(9|10|11)\.\d\d%$/);
  assert.equal(await page.$$eval('#trend-plot-0 svg g.changepoint_rules_marks > *', (m) => m.length), 1);
  const label = await page.$$eval('#trend-plot-0 svg g.changepoint_labels_marks text', (t) => t.map((e) => e.textContent));
  assert.deepEqual(label, [changepoints[0].label]);
  // Ten swprofiles in version order, a point and a CI bar each.
  const points = await viewData(page, 'trend-plot-0', 'points');
  assert.deepEqual(points.map((p) => p.swprofile),
                   ['6.10', '6.11-rc1', '6.11-rc3', '6.11', '6.12-rc2', '6.12', '6.13-rc1', '6.13', '6.14', 'v6.15']);
  assert.equal(await page.$$eval('#trend-plot-0 svg g.trend_ci_marks > *', (m) => m.length), 10);
  assert.match(await page.$eval('#trend-plot-0', (plot) => plot.getAttribute('aria-label')),
               /change point 6\.10\.\.6\.12 -> 6\.13-rc1\.\.v6\.15: \(R\) -/);

  // The flat row: no change point, no rule.
  assert.deepEqual(await viewData(page, 'trend-plot-1', 'changepoints'), []);
  assert.equal(await page.$$eval('#trend-plot-1 svg g.changepoint_rules_marks > *', (m) => m.length), 0);

  // The step table: one row, at 6.13-rc1, its verdict letter printed.
  const steps = await page.$$eval('#trend-steps tr.trend-step', (rows) =>
    rows.map((row) => ({ at: row.dataset.at, verdict: row.dataset.verdict, mark: row.querySelector('.verdict')?.textContent })));
  assert.deepEqual(steps, [{ at: '6.13-rc1', verdict: 'R', mark: 'R' }]);

  await screenshot(page, 'trend');
  assert.deepEqual(requestsOf(page), [page.url()], 'the page loaded something besides itself');
});
