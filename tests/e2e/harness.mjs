// Shared set-up for the end-to-end tests: serves www/ with scripts/serve.py and
// drives Debian's Chromium through playwright-core (never a downloaded browser).
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..');
export const artifacts = path.join(here, 'artifacts');

// Flags that keep Chromium quiet on a closed network (see ../shared/TOOLCHAIN.md).
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

// Starts scripts/serve.py on a free port, serving `root` (www/ unless
// given); resolves to { url, stop }.
export function startServer(root = null) {
  const args = [path.join(repoRoot, 'scripts', 'serve.py'), '--port', '0', ...(root ? ['--root', root] : [])];
  const server = spawn('python3', args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve.py printed no URL: ${out}`)), 10000);
    server.once('exit', (code) => reject(new Error(`serve.py exited with ${code}: ${out}`)));
    server.stdout.on('data', (chunk) => {
      out += chunk;
      const match = out.match(/at (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1], stop: () => server.kill() });
      }
    });
  });
}

// Launches Debian's Chromium headless.
export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.REPLAYGROUND_CHROMIUM || '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
}

// The permalink a first visit is measured by: the benchmark's start figures
// and the module's split (scripts/split/profile.mjs) both load it.
export const PERMALINK = '?s=idem-check-then-write&schedule=A6B3AB4';

// A first visit of `url` traced with Chromium's `categories`, in a browser of
// its own (no earlier load's compiled module reused), until the playground is
// ready: its trace events, and the time of its `replayground-interactive`
// mark (undefined if it has none).
export async function traceFirstVisit(url, categories) {
  const browser = await launchBrowser();
  try {
    const page = await (await browser.newContext()).newPage();
    await browser.startTracing(page, { categories: [...categories, 'blink.user_timing'] });
    await page.goto(url);
    await page.locator('body[data-ready="true"]').waitFor({ timeout: 60000 });
    const trace = JSON.parse((await browser.stopTracing()).toString('utf8'));
    const events = Array.isArray(trace) ? trace : trace.traceEvents;
    return { events, until: events.find((e) => e.name === 'replayground-interactive')?.ts };
  } finally {
    await browser.close();
  }
}

// Launches Debian's Chromium headless with a profile on disk (`userDataDir`):
// its HTTP cache and V8's code cache persist between loads, as a returning
// visitor's do (an ordinary context is off the record).
export function launchPersistent(userDataDir) {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.REPLAYGROUND_CHROMIUM || '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
}

// Opens a page (in a new context with `contextOptions`) that records console errors, page errors, dialogs and every
// request that leaves `origin`; the test asserts on them.
export async function openPage(browser, origin, contextOptions = {}) {
  const context = await browser.newContext(contextOptions);
  const page = await context.newPage();
  const seen = { errors: [], dialogs: [], foreignRequests: [] };
  page.on('console', (msg) => { if (msg.type() === 'error') seen.errors.push(msg.text()); });
  page.on('pageerror', (error) => seen.errors.push(String(error)));
  page.on('dialog', (dialog) => { seen.dialogs.push(dialog.message()); dialog.dismiss(); });
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith('data:')) seen.foreignRequests.push(url);
  });
  return { context, page, seen };
}

// Opens the playground at `query` (a page of openPage's, `viewport` wide)
// on `env`'s server, once the page says it is ready.
export async function openReady(env, query, viewport, contextOptions = {}) {
  const opened = await openPage(env.browser, env.server.url, contextOptions);
  await opened.page.setViewportSize(viewport);
  await opened.page.goto(`${env.server.url}${query}`);
  await opened.page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  return opened;
}

// In a ready playground `page`, opens the benchmark's long design
// (www/js/bench-calls.js: two attempts of 200 heavy statements) as a design
// of one's own, and puts the focus on the lanes, ready for step keys. The
// end-to-end suite and the benchmark step it by keyboard.
export async function openLongDesign(page, timeout = 30000) {
  const source = await page.evaluate(async () => (await import('/js/bench-calls.js')).longDesign());
  await page.click('[data-action="new-design"]');
  await page.locator('#source').fill(source);
  await page.locator('#source-status[data-kind="pass"]').waitFor({ timeout });
  await page.click('[data-action="apply-source"]');
  await page.locator('#scenario-title', { hasText: '400 heavy steps' }).waitFor({ timeout });
  await page.locator('#lanes').click({ position: { x: 5, y: 5 } });
}

// Saves a screenshot under tests/e2e/artifacts/ (the whole page unless `fullPage` is false).
export async function screenshot(page, name, fullPage = true) {
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage });
}

// Serves www/ and launches Chromium before the tests of one file (then runs
// `ready(env)`, if given) and closes both after them; returns
// { server, browser }, filled in once they run.
export function serveAndLaunch(ready = null) {
  const env = { server: null, browser: null };
  before(async () => {
    env.server = await startServer();
    env.browser = await launchBrowser();
    await ready?.(env);
  });
  after(async () => {
    await env.browser?.close();
    env.server?.stop();
  });
  return env;
}
