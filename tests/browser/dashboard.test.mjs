// kbench serve in Chromium: the index lists the store's swprofiles, picking a
// base and a test in its form and submitting opens compare's report (which
// renders: its plots embedded, no console errors), and the trend form opens
// the trend. Screenshots of the index and both reports go to $KBENCH_ARTIFACTS.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { browserTest, openPage, requireEnv, runProgram, screenshot, waitReady } from './lib.mjs';

const kbench = requireEnv('KBENCH');
const storeFixture = requireEnv('STORE_FIXTURE');
const dir = mkdtempSync(join(tmpdir(), 'kbench-dashboard-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

// Two boots of base, two of a 30% slower kernel; a second benchmark unchanged.
const session = (swprofile, getpid, getppid) => ({
  swprofile,
  benchmarks: [
    { name: 'syscall/getpid', results: [{ class: 'mean', unit: 'ns', better: 'lower', values: getpid }] },
    { name: 'syscall/getppid', results: [{ class: 'mean', unit: 'ns', better: 'lower', values: getppid }] },
  ],
});
const spec = {
  sut: 'vm',
  sut_class: 'lab-small',
  sessions: [
    session('base', [100, 101, 99, 100], [80, 81, 79, 80]),
    session('base', [100, 102, 98, 101], [80, 80, 81, 79]),
    session('slow', [130, 131, 129, 130], [80, 81, 80, 79]),
    session('slow', [131, 130, 132, 129], [81, 80, 79, 80]),
  ],
};
const db = join(dir, 'results.db');
writeFileSync(join(dir, 'spec.json'), JSON.stringify(spec));
runProgram(storeFixture, [db, join(dir, 'spec.json')]);

const server = spawn(kbench, ['serve', '--store', `sqlite://${db}`, '--listen', '127.0.0.1:0'],
                     { stdio: ['ignore', 'pipe', 'inherit'] });
// browserTest ends the process itself on a failure: the server must not outlive it
// (ctest would wait for the stderr it holds).
process.on('exit', () => server.kill('SIGTERM'));
const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve({ code, signal })));
// The first line on stdout is the URL it listens on.
const url = await new Promise((resolve, reject) => {
  createInterface({ input: server.stdout }).once('line', resolve);
  server.once('exit', (code) => reject(new Error(`kbench serve exited ${code} before printing its URL`)));
});
assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);

try {
  await browserTest(async (browser) => {
    const page = await openPage(browser, url);
    assert.deepEqual(await page.$$eval('#swprofiles tbody tr td:first-child', (cells) => cells.map((c) => c.textContent)),
                     ['base', 'slow']);
    assert.equal(await page.$eval('#suts tbody tr td:nth-child(2)', (cell) => cell.textContent), 'lab-small');
    await screenshot(page, 'dashboard_index');

    await page.select('#compare-form select[name=base]', 'base');
    await page.click('#compare-form input[name=test][value=slow]');
    await page.type('#compare-form input[name=benchmark]', 'syscall/*');
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('#compare-form button[type=submit]')]);
    const compared = new URL(page.url());
    assert.equal(compared.pathname, '/compare');
    assert.equal(compared.searchParams.get('base'), 'base');
    assert.deepEqual(compared.searchParams.getAll('test'), ['slow']);
    assert.equal(compared.searchParams.get('benchmark'), 'syscall/*');
    await waitReady(page);
    const text = await page.$eval('main', (main) => main.textContent);
    assert.ok(text.includes('syscall/getpid') && text.includes('syscall/getppid'), 'the report lacks its rows');
    assert.ok(await page.evaluate(() => Object.keys(window.kbenchViews).length) >= 1, 'the report drew no plot');
    await screenshot(page, 'dashboard_compare');

    await page.goto(url, { waitUntil: 'load' });
    await waitReady(page);
    await page.select('#trend-form select[name=order]', 'store');
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('#trend-form button[type=submit]')]);
    assert.equal(new URL(page.url()).pathname, '/trend');
    await waitReady(page);
    assert.ok((await page.$eval('main', (main) => main.textContent)).includes('syscall/getpid'), 'the trend lacks its row');
    await screenshot(page, 'dashboard_trend');
  });
} finally {
  server.kill('SIGTERM');
  const { code, signal } = await exited;
  if (code !== 0) {
    console.error(`FAILED: kbench serve ended with ${code ?? signal} on SIGTERM`);
    process.exitCode = 1;
  }
}
