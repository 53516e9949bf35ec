// kbench compare --format html in Chromium, on a store store-fixture wrote
// with an outlier boot planted in one profile: no console errors, the forest
// plot has one mark per row and test column, opening a row embeds its samples
// plot with one point per sample (the outlier boot among them), closing and
// reopening it keeps the one plot; screenshots go to $KBENCH_ARTIFACTS.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { browserTest, markCount, openPage, requestsOf, requireEnv, runProgram, screenshot, viewData } from './lib.mjs';

const kbench = requireEnv('KBENCH');
const storeFixture = requireEnv('STORE_FIXTURE');
const dir = mkdtempSync(join(tmpdir(), 'kbench-html-report-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

// base, patched and patched-v2: 4 boots of 5 repeats each. syscall/getpid:
// patched's boot 3 is an outlier 30% slower; sched/pipe: both patches 10%
// slower; mem/copy: unchanged.
const repeats = 5;
const boots = 4;
const sessions = [];
for (const profile of ['base', 'patched', 'patched-v2']) {
  for (let boot = 0; boot < boots; ++boot) {
    const series = (level, step) => Array.from({ length: repeats }, (_, r) => level + boot * step + r * step / 2);
    const getpid = profile === 'patched' && boot === 2 ? series(130, 0.2) : series(100, 0.2);
    const pipe = series(profile === 'base' ? 50 : 55, 0.1);
    const copy = series(2000, 1);
    sessions.push({
      swprofile: profile,
      benchmarks: [
        { name: 'syscall/getpid', results: [{ class: 'mean', unit: 'ns', better: 'lower', values: getpid }] },
        { name: 'sched/pipe', results: [{ class: 'latency', unit: 'us', better: 'lower', values: pipe }] },
        { name: 'mem/copy', results: [{ class: 'bandwidth', unit: 'MB/s', better: 'higher', values: copy }] },
      ],
    });
  }
}
writeFileSync(join(dir, 'spec.json'), JSON.stringify({ sut: 'vm', sessions }));
const store = join(dir, 'store.db');
runProgram(storeFixture, [store, join(dir, 'spec.json')]);
const file = join(dir, 'report.html');
writeFileSync(file, runProgram(kbench, ['compare', 'base', 'patched', 'patched-v2', '--format', 'html',
                                        '--store', `sqlite://${store}`]));

await browserTest(async (browser) => {
  const page = await openPage(browser, file);
  assert.deepEqual(requestsOf(page), [page.url()], 'the page loaded something besides itself');

  // The forest plot: 3 rows x 2 test columns, one point (and one CI rule) each.
  assert.equal((await viewData(page, 'forest-0', 'rows')).length, 6);
  assert.equal(await markCount(page, 'forest-0', 'symbol'), 6, 'one point per row and test column');
  assert.equal(await markCount(page, 'forest-0', 'rule'), 6 + 1, 'one CI per point, and the zero line');
  const rows = await page.$$eval('#grid-0 tbody tr', (trs) => trs.map((tr) => tr.textContent));
  assert.equal(rows.length, 3 + 1, 'three rows and the geomean');
  assert.match(rows.find((row) => row.includes('latency (us)')), /\(R\) -9\.95%\(R\) -9\.95%/);

  // Open syscall/getpid's row: its samples, 3 profiles x 4 boots x 5 repeats.
  const getpid = await page.$$eval('#grid-0 details', (all) =>
    all.findIndex((details) => details.querySelector('summary').textContent === 'mean (ns)'));
  assert.ok(getpid >= 0, 'no row for syscall/getpid mean (ns)');
  const id = `samples-0-${getpid}`;
  assert.equal(await page.$(`#${id}`), null, 'a samples plot before its row was opened');
  await page.click(`#grid-0 details[data-row="${getpid}"] summary`);
  await page.waitForFunction((id) => window.kbenchViews[id] !== undefined, { timeout: 30000 }, id);
  assert.equal(await markCount(page, id, 'symbol'), 3 * boots * repeats, 'one point per sample');
  const points = await viewData(page, id, 'points');
  const outlier = points.filter((point) => point.profile === 'patched' && point.session === '#3');
  assert.equal(outlier.length, repeats);
  assert.ok(outlier.every((point) => point.value >= 130), 'the outlier boot is not in the plot');
  assert.equal((await viewData(page, id, 'means')).length, 3, 'a mean and CI per profile');
  assert.match(await page.$eval(`#${id}`, (plot) => plot.getAttribute('aria-label')),
               /^Samples of syscall\/getpid mean \(ns\) by session\. base \(mean 100\.5, 95% CI 100\.373 to 100\.627\): #1: 5 values, mean 100\.2;.* patched \(mean 108, .*#3: 5 values, mean 130\.6;/);
  await screenshot(page, 'html_report');

  // Closing hides the row; reopening shows the same plot, embedded once.
  // (the toggle event comes after the click, as a task of its own).
  const holderHidden = (hidden) => page.waitForFunction(
    (id, hidden) => document.getElementById(`holder-${id}`).hidden === hidden, { timeout: 10000 }, id, hidden);
  await page.click(`#grid-0 details[data-row="${getpid}"] summary`);
  await holderHidden(true);
  await page.click(`#grid-0 details[data-row="${getpid}"] summary`);
  await holderHidden(false);
  assert.equal(await page.$$eval(`#holder-${id}`, (all) => all.length), 1);
  assert.equal(await markCount(page, id, 'symbol'), 3 * boots * repeats);
});
