// Helpers for the browser tests (tests/browser/<area>.test.mjs, each the
// ctest browser_<area>): Debian's Chromium, headless, driven by puppeteer-core
// (pinned in package-lock.json, installed by the build into
// $KBENCH_BROWSER_MODULES). A test fails on any console error, page error or
// failed request of any page it opened; it is skipped (exit 77, as
// tests/e2e/lib.bash's skip) only when there is no Chromium.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const SKIP_STATUS = 77;
export const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
export const artifactsDir = resolve(process.env.KBENCH_ARTIFACTS || 'build/artifacts');

function loadPuppeteer() {
  const modules = process.env.KBENCH_BROWSER_MODULES;
  if (!modules || !existsSync(join(modules, 'puppeteer-core'))) {
    throw new Error(`no puppeteer-core in KBENCH_BROWSER_MODULES=${modules ?? '(unset)'}: ` +
                    'run the tests through ctest after building (the build installs it)');
  }
  return createRequire(join(modules, 'package.json'))('puppeteer-core');
}

// The pages opened so far, what went wrong in each and what each requested.
const opened = [];
const records = new WeakMap();

function describeProblems() {
  return opened.flatMap(({ url, problems }) => problems.map((problem) => `${url}: ${problem}`));
}

// Runs body(browser) with a fresh headless Chromium; fails (exit 1) when body
// throws or any opened page reported a problem; prints "passed" otherwise.
export async function browserTest(body) {
  if (!existsSync(chromiumPath)) {
    console.log(`skipped: no Chromium at ${chromiumPath} (Debian package chromium)`);
    process.exit(SKIP_STATUS);
  }
  const puppeteer = loadPuppeteer();
  const browser = await puppeteer.launch({
    executablePath: chromiumPath,
    headless: true,
    // CI runs as root, where Chromium's sandbox cannot start.
    args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
  });
  let failure = null;
  try {
    await body(browser);
  } catch (error) {
    failure = error;
  } finally {
    await browser.close();
  }
  const problems = describeProblems();
  if (failure || problems.length > 0) {
    if (failure) console.error(`FAILED: ${failure.stack || failure}`);
    for (const problem of problems) console.error(`FAILED: ${problem}`);
    process.exit(1);
  }
  console.log('passed');
}

// Opens url (a path is made a file:// URL) in a new tab, recording console
// errors, page errors and failed requests; with ready (the default) waits
// until the page shell has embedded every eager plot (kbenchReady).
export async function openPage(browser, url, { ready = true, timeoutMs = 60000 } = {}) {
  if (!/^[a-z]+:/.test(url)) url = pathToFileURL(resolve(url)).href;
  const page = await browser.newPage();
  const record = { url, problems: [], requests: [] };
  opened.push(record);
  records.set(page, record);
  page.on('request', (request) => record.requests.push(request.url()));
  page.on('console', (message) => {
    const where = message.location()?.url ? ` (${message.location().url}:${message.location().lineNumber})` : '';
    if (message.type() === 'error' || message.type() === 'assert') {
      record.problems.push(`console.${message.type()}: ${message.text()}${where}`);
    } else if (message.type() === 'warn') {
      console.log(`console.warn: ${message.text()}${where}`);
    }
  });
  page.on('pageerror', (error) => record.problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) =>
    record.problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`));
  page.on('response', (response) => {
    if (response.status() >= 400) record.problems.push(`HTTP ${response.status()} for ${response.url()}`);
  });
  const response = await page.goto(url, { waitUntil: 'load', timeout: timeoutMs });
  if (response && !response.ok() && response.status() !== 0) {
    throw new Error(`${url}: HTTP ${response.status()}`);
  }
  if (ready) await waitReady(page, { timeoutMs });
  return page;
}

// Waits for document.body.dataset.kbenchReady; throws unless it is "1".
export async function waitReady(page, { timeoutMs = 60000 } = {}) {
  try {
    await page.waitForFunction(() => document.body && document.body.dataset.kbenchReady, { timeout: timeoutMs });
  } catch (error) {
    throw new Error(`${page.url()}: the page never set kbenchReady (${error.message}); ` +
                    `problems so far: ${describeProblems().join('; ') || 'none'}`);
  }
  const ready = await page.evaluate(() => document.body.dataset.kbenchReady);
  if (ready !== '1') throw new Error(`${page.url()}: kbenchReady is "${ready}": a plot could not be embedded`);
}

// The problems recorded for page so far (tests that provoke one can look).
export function problemsOf(page) {
  return records.get(page)?.problems ?? [];
}

// Takes the problems of page that match pattern out of its record (so they
// do not fail the test) and returns them: for tests that provoke errors.
export function takeProblems(page, pattern) {
  const record = records.get(page);
  const taken = record.problems.filter((problem) => pattern.test(problem));
  record.problems = record.problems.filter((problem) => !pattern.test(problem));
  return taken;
}

// Every URL page requested (its own document first).
export function requestsOf(page) {
  return records.get(page)?.requests ?? [];
}

// A full-page PNG in $KBENCH_ARTIFACTS; returns its path.
export async function screenshot(page, name) {
  mkdirSync(artifactsDir, { recursive: true });
  const path = join(artifactsDir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot: ${path}`);
  return path;
}

// The SVG items of mark type (rect, symbol, line, rule, text, ...) drawn in
// the plot with element id: one per datum for most marks.
export async function markCount(page, id, type) {
  return page.$$eval(`#${id} svg g.mark-${type}.role-mark > *`, (items) => items.length);
}

// The data tuples of a named dataset of the embedded view id (Vega-Lite names
// an inline one "source_0"; its transforms "data_0", ...).
export async function viewData(page, id, dataset = 'source_0') {
  return page.evaluate((id, dataset) => window.kbenchViews[id].data(dataset), id, dataset);
}

// Runs a program (e.g. $KBENCH) and returns its stdout; throws with its stderr.
export function runProgram(program, args, options = {}) {
  try {
    return execFileSync(program, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
  } catch (error) {
    throw new Error(`${program} ${args.join(' ')} failed (${error.status ?? error.signal}): ${error.stderr || error.message}`);
  }
}

// The value of a required environment variable (set by ctest).
export function requireEnv(name) {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is not set (run this test through ctest)`);
  return value;
}
