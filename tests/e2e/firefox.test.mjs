// A smoke suite in Firefox (Debian's firefox-esr, driven through WebDriver
// BiDi by puppeteer-core): the playground opens a link, steps and searches;
// the book's players run; nothing fails in the console and nothing is asked
// of another origin. The other end-to-end tests run in Chromium.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import puppeteer from 'puppeteer-core';
import { startServer } from './harness.mjs';

const env = { server: null, browser: null };
before(async () => {
  env.server = await startServer();
  env.browser = await puppeteer.launch({
    browser: 'firefox',
    protocol: 'webDriverBiDi',
    executablePath: process.env.REPLAYGROUND_FIREFOX || '/usr/bin/firefox-esr',
    headless: true,
  });
});
after(async () => {
  await env.browser?.close();
  env.server?.stop();
});

// A page that records console errors, page errors and requests to other origins.
async function open(query) {
  const context = await env.browser.createBrowserContext();
  const page = await context.newPage();
  const seen = { errors: [], foreign: [] };
  page.on('console', (m) => { if (m.type() === 'error') seen.errors.push(m.text()); });
  page.on('pageerror', (e) => seen.errors.push(String(e)));
  page.on('request', (r) => {
    const url = r.url();
    if (!url.startsWith(env.server.url) && !url.startsWith('data:') && !url.startsWith('blob:')) seen.foreign.push(url);
  });
  await page.setViewport({ width: 1280, height: 800 });
  await page.goto(`${env.server.url}${query}`);
  return { context, page, seen };
}

const text = (page, selector) => page.$eval(selector, (e) => e.textContent);

test('Firefox: a link opens its run, a step is taken, and an exhaustive search finds the counterexample', async () => {
  const { context, page, seen } = await open('?s=idem-check-then-write&schedule=A6B3AB4');
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
  // The link's run: its 14 steps, the last the second charge.
  assert.equal(await page.$$eval('#lanes .step', (s) => s.length), 14);
  await page.click('[data-action="reset"]');
  await page.waitForFunction(() => document.querySelectorAll('#lanes .step').length === 0, { timeout: 30000 });
  await page.click('#lanes [data-action="step"][data-attempt="1"]');
  await page.waitForFunction(() => document.querySelectorAll('#lanes .step').length === 1, { timeout: 30000 });
  await page.select('#strategy', 'exhaustive');
  await page.click('#run');
  await page.waitForSelector('#run:enabled', { timeout: 120000 });
  assert.match(await text(page, '#run-status'), /exhaustive/);
  assert.match(await text(page, '#verdict'), /[Ff]ails/);
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.foreign, []);
  await context.close();
});

test('Firefox: the book opens and its players run', async () => {
  const { context, page, seen } = await open('book/write-your-own.html');
  await page.waitForSelector('main h1');
  const players = await page.$$('main replayground-scenario');
  assert.ok(players.length >= 3, `${players.length} players`);
  const state = (i) => page.evaluate((n) => document.querySelectorAll('main replayground-scenario')[n]
    .shadowRoot?.querySelector('.frame')?.dataset.state, i);
  for (let i = 0; i < players.length; i += 1) {
    await page.waitForFunction((n) => {
      const s = document.querySelectorAll('main replayground-scenario')[n].shadowRoot?.querySelector('.frame')?.dataset.state;
      return s && s !== 'loading';
    }, { timeout: 60000 }, i);
    assert.equal(await state(i), 'ready', `player ${i + 1}`);
  }
  // Run the first design to its end: it fails its check, as declared.
  await page.evaluate(() => document.querySelector('main replayground-scenario').shadowRoot
    .querySelector('button[data-control="run"]').click());
  await page.waitForFunction(() => document.querySelector('main replayground-scenario').shadowRoot
    .querySelector('.verdict[data-kind="fail"]'), { timeout: 60000 });
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.foreign, []);
  await context.close();
});
