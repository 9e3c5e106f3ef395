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

// What the page does by key and by layout, where browsers differ: the
// landing with no link, 14 step keys sent at once all applied in order,
// Ctrl+Enter runs and the focus stays, the verdict whole, and eight lanes
// shown whole (none cut at the timeline's edge).
test('Firefox: the landing, queued keys, Ctrl+Enter with the focus kept, whole lanes', async () => {
  const { context, page, seen } = await open('');
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
  assert.equal(await text(page, '#scenario-title'), 'Broken: check in one transaction, write in another');
  assert.equal(await page.$eval('#landing-hint', (e) => e.hidden), false);
  await page.click('#lanes');
  // The counterexample's schedule, A6B3AB4.
  const keys = [...'aaaaaabbbabbbb'];
  for (const key of keys) await page.keyboard.press(key);
  await page.waitForSelector('#lanes .step[data-step="13"]', { timeout: 60000 });
  const order = await page.$$eval('#lanes .step', (steps) => steps
    .sort((x, y) => Number(x.dataset.step) - Number(y.dataset.step))
    .map((s) => s.closest('.step').style.gridColumn));
  assert.equal(order.length, 14);
  assert.deepEqual(order.map((column) => (column === '1' ? 'a' : 'b')), keys);
  // Ctrl+Enter from the strategy select runs the exhaustive search; the
  // focus is where it was.
  await page.select('#strategy', 'exhaustive');
  await page.focus('#strategy');
  await page.keyboard.down('Control');
  await page.keyboard.press('Enter');
  await page.keyboard.up('Control');
  await page.waitForFunction(() => /^Fails, as declared\. Counterexample in/.test(document.querySelector('#run-status').textContent), { timeout: 120000 });
  await page.waitForSelector('#run:enabled');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'strategy');
  const cut = await page.$eval('#run-status', (e) => e.scrollHeight - e.clientHeight);
  assert.ok(cut <= 1, `the verdict is cut by ${cut}px`);
  // Eight lanes: those shown are whole, the next starts at the edge.
  await page.goto(`${env.server.url}?s=idem-race`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
  const lanes = await page.$eval('.lanes-wrap', (wrap) => {
    // The inside of its border: where the scrolled lanes are cut.
    const edge = wrap.getBoundingClientRect().left + wrap.clientLeft + wrap.clientWidth;
    return [...wrap.querySelectorAll('.lane-head')].map((h) => {
      const b = h.getBoundingClientRect();
      return { left: b.left, right: b.right, edge };
    });
  });
  assert.equal(lanes.length, 8);
  const cutLanes = lanes.filter((l) => l.left < l.edge - 1 && l.right > l.edge + 1);
  assert.deepEqual(cutLanes, [], 'no lane is cut at the edge');
  assert.ok(lanes.filter((l) => l.right <= l.edge).length >= 4, 'four lanes or more are shown whole');
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.foreign, []);
  await context.close();
});
