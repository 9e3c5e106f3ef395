// The playground page in Debian's Chromium: it loads the wasm module, reports
// the SQLite version the module runs, and runs SQL through two connections.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openPage, screenshot, serveAndLaunch } from './harness.mjs';

// Waits until the engine has loaded or failed; returns the status element.
async function engineSettled(page) {
  const status = page.locator('#engine-status:not([data-state="loading"])');
  await status.waitFor({ timeout: 30000 });
  return status;
}

// Waits for the engine and fails with the page's own message if it did not load.
async function engineReady(page) {
  const status = await engineSettled(page);
  assert.equal(await status.getAttribute('data-state'), 'ready', await status.textContent());
}

const env = serveAndLaunch();

test('the page shows the SQLite version it got from wasm, the same as the native build', async () => {
  const expected = process.env.REPLAYGROUND_EXPECT_SQLITE;
  assert.ok(expected, 'set REPLAYGROUND_EXPECT_SQLITE to the native build\'s SQLite version (scripts/test.sh does)');
  const { context, page, seen } = await openPage(env.browser, env.server.url);
  await page.goto(env.server.url);
  assert.equal(await page.title(), 'replayground');
  const status = await engineSettled(page);
  assert.equal(await status.getAttribute('data-state'), 'ready', await status.textContent());
  assert.equal(await status.getAttribute('data-sqlite-version'), expected);
  assert.equal(await status.textContent(), `SQLite ${expected} (WebAssembly)`);
  await screenshot(page, 'page-loaded');
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.foreignRequests, []);
  await context.close();
});

test('a note written through connection A is read through connection B, as text', async () => {
  const { context, page, seen } = await openPage(env.browser, env.server.url);
  await page.goto(env.server.url);
  await engineReady(page);
  await page.click('summary');
  const note = '<img src=x onerror=alert(1)> \'; DROP TABLE notes; --';
  await page.fill('#note', note);
  await page.click('#round-trip-run');
  const lines = page.locator('#round-trip-log li');
  await lines.nth(3).waitFor();
  assert.deepEqual(await lines.allTextContents(), [
    'A inserts row 1 in an open transaction (A holds RESERVED)',
    'B reads before A commits: []',
    'A commits',
    `B reads after A commits: ${JSON.stringify([note])}`,
  ]);
  assert.equal(await page.locator('#round-trip-log img').count(), 0, 'the note must not become HTML');
  assert.deepEqual(seen.dialogs, []);
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('an empty note gets a clear error from the wasm module and no result', async () => {
  const { context, page } = await openPage(env.browser, env.server.url);
  await page.goto(env.server.url);
  await engineReady(page);
  await page.click('summary');
  await page.fill('#note', '');
  await page.click('#round-trip-run');
  const error = page.locator('#round-trip-error');
  await error.waitFor({ state: 'visible' });
  assert.equal(await error.textContent(), 'invalid note: use 1 to 1000 characters (got 0)');
  assert.equal(await page.locator('#round-trip-log li').count(), 0);
  await context.close();
});
