// The journal mode on the page, in links and in embeds: the switch beside the
// scenario (mouse and keyboard), the deferred BEGIN failing its own way in
// each mode, the WAL locks and snapshots in the lock view, a search
// interrupted by a switch, and the docs page's section on the two modes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openPage, screenshot, serveAndLaunch } from './harness.mjs';

const env = serveAndLaunch();

async function open(query, viewport = { width: 1400, height: 1000 }) {
  const opened = await openPage(env.browser, env.server.url, { viewport });
  await opened.page.goto(`${env.server.url}${query}`);
  await opened.page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  return opened;
}

async function run(page, strategy) {
  await page.selectOption('#strategy', strategy);
  await page.click('#run');
  await page.locator('#run:enabled').waitFor({ timeout: 60000 });
  return page.locator('#run-status').textContent();
}

const checkedMode = (page) => page.locator('#journal input:checked').getAttribute('value');
const query = async (page) => new URLSearchParams(await page.evaluate(() => location.search));

test('the deferred BEGIN deadlocks with a rollback journal and goes stale in WAL, switched on the page', async () => {
  const { context, page, seen } = await open('?s=idem-deferred');
  assert.equal(await checkedMode(page), 'rollback');
  assert.equal(await page.locator('#wal-note').isHidden(), true);
  let verdict = await run(page, 'exhaustive');
  assert.match(verdict, /^Fails, as declared\. Counterexample in Broken: a deferred BEGIN, exhaustive/);
  assert.match(await page.locator('#checks').textContent(), /deadlock/);
  // The switch applies at once: the scenario starts over in WAL mode.
  await page.locator('#journal input[value="wal"]').check();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('journal') === 'wal');
  assert.equal(await page.locator('#wal-note').isVisible(), true);
  assert.match(await page.locator('#wal-note').textContent(), /SQLITE_BUSY_SNAPSHOT/);
  verdict = await run(page, 'exhaustive');
  assert.match(verdict, /^Counterexample in Broken: a deferred BEGIN \(journal wal\), exhaustive/, verdict);
  const checks = await page.locator('#checks').textContent();
  assert.doesNotMatch(checks, /deadlock/);
  assert.match(await page.locator('#lanes').textContent(), /SQLITE_BUSY_SNAPSHOT/);
  // The lock view: after A's fourth step A is the WAL writer, with a snapshot.
  await page.locator('#lanes .step[data-step="3"]').click();
  const locks = await page.locator('#locks').textContent();
  assert.match(locks, /WAL writer/);
  assert.match(locks, /reads the file, no log|reads \d+ frames? of the log/);
  await screenshot(page, 'journal-wal-deferred', false);
  // The link holds the mode: a fresh page opens the same run in WAL mode.
  const link = await page.evaluate(() => location.href);
  const again = await openPage(env.browser, env.server.url);
  await again.page.goto(link);
  await again.page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  assert.equal(await checkedMode(again.page), 'wal');
  assert.deepEqual(
    await again.page.locator('#lanes .step').allTextContents(),
    await page.locator('#lanes .step').allTextContents(),
  );
  // And back: rollback is the default, so the link drops the parameter.
  await page.locator('#journal input[value="rollback"]').check();
  await page.waitForFunction(() => !new URLSearchParams(location.search).has('journal'));
  assert.equal(await page.locator('#wal-note').isHidden(), true);
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(again.seen.errors, []);
  await again.context.close();
  await context.close();
});

test('the switch applies only the journal: edits not yet applied stay edits, and Edit a copy keeps the mode', async () => {
  const { context, page, seen } = await open('?s=idem-race&attempts=2');
  await page.fill('#params [name="attempts"]', '99');
  await page.locator('#journal input[value="wal"]').check();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('journal') === 'wal');
  const q = await query(page);
  assert.equal(q.get('attempts'), '2', 'the unapplied 99 was not applied');
  assert.equal(await checkedMode(page), 'wal');
  // A stale snapshot says so: after A commits, B still reads the old one.
  await page.goto(`${env.server.url}?s=idem-deferred&journal=wal&schedule=A4B2A&step=7`);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  assert.match(await page.locator('#locks').textContent(), /stale/);
  // Edit a copy: the copy runs in WAL mode too.
  await page.click('#edit-copy');
  await page.waitForFunction(() => document.getElementById('source').value.length > 0);
  assert.match(await page.locator('#source').inputValue(), /^journal = "wal"/);
  await page.click('[data-action="apply-source"]');
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  await page.waitForFunction(() => document.querySelector('#journal input:checked')?.value === 'wal');
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('the journal switch works from the keyboard and at phone width', async () => {
  const { context, page, seen } = await open('?s=idem-deferred-retry', { width: 390, height: 844 });
  await page.locator('#journal input[value="rollback"]').focus();
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('journal') === 'wal');
  assert.equal(await checkedMode(page), 'wal');
  assert.equal((await query(page)).get('s'), 'idem-deferred-retry');
  const verdict = await run(page, 'exhaustive');
  assert.match(verdict, /^No violation in Fixed: a deferred BEGIN with the right retry policy \(journal wal\)/, verdict);
  const box = await page.locator('#journal').boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 390, `the switch fits the screen: ${JSON.stringify(box)}`);
  await page.locator('#journal').scrollIntoViewIfNeeded();
  await screenshot(page, 'journal-phone', false);
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('switching the mode during a search cancels it; no verdict lands on the other mode', async () => {
  const { context, page, seen } = await open('?s=idem-race');
  await page.selectOption('#strategy', 'random');
  await page.fill('#runs', '100000');
  await page.click('#run');
  await page.locator('#run-status', { hasText: 'Exploring:' }).waitFor({ timeout: 30000 });
  await page.locator('#journal input[value="wal"]').check();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('journal') === 'wal');
  await page.waitForTimeout(1500);
  const text = await page.locator('#run-status').textContent();
  assert.doesNotMatch(text, /No violation|Counterexample|Exploring/, text);
  assert.equal(await page.locator('#progress').isHidden(), true);
  const verdict = await run(page, 'round-robin');
  assert.match(verdict, /journal wal/, verdict);
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('the docs page shows both modes side by side, each player in its own mode', async () => {
  const { context, page, seen } = await openPage(env.browser, env.server.url, { viewport: { width: 1200, height: 900 } });
  await page.goto(`${env.server.url}docs/#journal-modes`);
  const player = (example) => page.locator(`replayground-scenario[data-example="${example}"]`);
  for (const example of ['wal-race', 'rollback-deadlock', 'wal-stale', 'wal-retry']) {
    await player(example).locator('.frame:not([data-state="loading"])').waitFor({ timeout: 30000 });
    assert.equal(await player(example).locator('.frame').getAttribute('data-state'), 'ready', example);
  }
  assert.match(await player('wal-stale').locator('.params').textContent(), /journal wal/);
  assert.equal(await player('rollback-deadlock').locator('.params').count(), 0);
  // The same schedule: a deadlock with a rollback journal, a stale snapshot in WAL.
  assert.match(await player('wal-stale').locator('.frame').textContent(), /SQLITE_BUSY_SNAPSHOT/);
  assert.doesNotMatch(await player('rollback-deadlock').locator('.frame').textContent(), /SQLITE_BUSY_SNAPSHOT/);
  assert.match(await player('wal-race').locator('.frame').textContent(), /WAL writer/);
  await page.locator('#journal-modes').scrollIntoViewIfNeeded();
  await screenshot(page, 'docs-journal-modes', false);
  assert.deepEqual(seen.errors, []);
  await context.close();
});
