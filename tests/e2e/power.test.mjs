// Power loss on the page and in an embed, in Debian's Chromium: the step
// where the power went out is marked in words (a badge, and its accessible
// name) and says which committed rows it destroyed; the tables mark the rows
// not yet on disk at the commit before it and, at the power loss, show the
// lost rows struck through; a design's values stay text; the keyboard
// reaches the step; nothing overflows at 390 px. Screenshots go to
// tests/e2e/artifacts/ (power-*.png).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { openPage, openReady, repoRoot, screenshot, serveAndLaunch } from './harness.mjs';

const env = serveAndLaunch();

// idem-power-loss's counterexample: A commits (step 6), the server loses
// power (step 7) and takes the order and the receipt A committed, B retries.
const POWER_STEP = 6;
const COMMIT_STEP = 5;
const LOST_SENTENCE = 'Lost 2 committed rows: server.db orders (1, 1); server.db receipts (order-7, created order 1).';

// Opens the page at ?s=idem-power-loss, `viewport` wide, and runs it (the
// exhaustive search, the page's default: its counterexample is shown).
async function openAndRun(viewport, query = '?s=idem-power-loss') {
  const opened = await openReady(env, query, viewport);
  await opened.page.click('#run');
  await opened.page.locator('#run:enabled').waitFor({ timeout: 60000 });
  await opened.page.locator(`#lanes .step[data-step="${POWER_STEP}"]`).waitFor();
  return opened;
}

// What the tables of the page (or an embed: `root`) show: each data row's
// cells, its classes, and whether its values are struck through.
function tableRows(root) {
  return root.locator('table.data tr:has(td)').evaluateAll((rows) => rows.map((tr) => ({
    cells: [...tr.querySelectorAll('td')].map((td) => td.textContent),
    classes: [...tr.classList].sort(),
    struck: getComputedStyle(tr.querySelector('td')).textDecorationLine === 'line-through',
  })));
}

// How far the page scrolls sideways (0 when nothing overflows).
const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

test('the power-loss step is marked in words and says which committed rows it lost', async () => {
  const { context, page, seen } = await openAndRun({ width: 1280, height: 900 });
  // One step is the power loss, and it is the one the scenario put there.
  const marked = page.locator('#lanes .step.power-loss');
  assert.equal(await marked.count(), 1);
  assert.equal(await marked.getAttribute('data-step'), String(POWER_STEP));
  await marked.click();
  await page.locator('#lanes .step.power-loss.selected').waitFor();
  // A badge in words (not a colour alone), in the button's accessible name.
  assert.equal(await marked.locator('.power-badge').textContent(), 'power loss');
  assert.ok(await marked.locator('.power-badge').isVisible());
  const named = page.locator('#lanes').getByRole('button', { name: /power loss/i });
  assert.equal(await named.count(), 1, 'one step box is named a power loss');
  assert.equal(await named.getAttribute('data-step'), String(POWER_STEP));
  // Its detail lists the committed rows the power loss destroyed.
  assert.equal(await marked.locator('.step-lost').textContent(), LOST_SENTENCE);
  // No other step claims to have lost anything.
  assert.equal(await page.locator('#lanes .step-lost').count(), 1);
  // The database view: the lost rows struck through and marked lost after
  // the rows that are left; the card's charge (another machine) not yet on disk.
  assert.equal(await page.locator('#selected-step').textContent(), 'after step 7 (power: power loss)');
  assert.deepEqual(await page.locator('#tables table.data caption').allTextContents(), ['charges (1)', 'orders (0; 1 lost)', 'receipts (0; 1 lost)']);
  assert.deepEqual(await tableRows(page.locator('#tables')), [
    { cells: ['1', 'order-7', '30', 'not yet'], classes: ['volatile'], struck: false },
    { cells: ['1', '1', 'lost'], classes: ['lost'], struck: true },
    { cells: ['order-7', 'created order 1', 'lost'], classes: ['lost'], struck: true },
  ]);
  assert.match(await page.locator('#tables .legend-lost').textContent(), /^The power went out at this step and took 2 committed rows \(struck through, marked "lost"\)/);
  // The step after it shows the rows as they are: nothing lost there.
  await page.locator(`#lanes .step[data-step="${POWER_STEP + 1}"]`).click();
  assert.equal(await page.locator('#tables tr.lost').count(), 0);
  assert.equal(await page.locator('#tables .legend-lost').count(), 0);
  await page.locator(`#lanes .step[data-step="${POWER_STEP}"]`).click();
  await screenshot(page, 'power-1280', false);
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('the rows committed but not yet on disk are marked at the commit before the power loss', async () => {
  const { context, page, seen } = await openAndRun({ width: 1280, height: 900 });
  // Before the card is charged nothing is committed: no row, no legend.
  await page.locator('#lanes .step[data-step="1"]').click();
  assert.equal(await page.locator('#tables tr.volatile').count(), 0);
  assert.equal(await page.locator('#tables .disk-legend').count(), 0);
  // The charge commits at once (another machine), and is not yet on disk.
  await page.locator('#lanes .step[data-step="2"]').click();
  assert.equal(await page.locator('#tables tr.volatile').count(), 1);
  // A's COMMIT returned: the order and the receipt are committed, not on disk.
  await page.locator(`#lanes .step[data-step="${COMMIT_STEP}"]`).click();
  assert.deepEqual(await tableRows(page.locator('#tables')), [
    { cells: ['1', 'order-7', '30', 'not yet'], classes: ['volatile'], struck: false },
    { cells: ['1', '1', 'not yet'], classes: ['changed', 'volatile'], struck: false },
    { cells: ['order-7', 'created order 1', 'not yet'], classes: ['changed', 'volatile'], struck: false },
  ]);
  assert.equal(await page.locator('#tables .legend-volatile').textContent(),
    '3 committed rows not yet on disk (marked "not yet"): a power loss of their machine now would lose them.');
  assert.match(await page.locator('#tables td.disk-volatile').first().getAttribute('title'), /not yet on disk/);
  // No power loss at the commit: the step box has no badge.
  assert.equal(await page.locator(`#lanes .step[data-step="${COMMIT_STEP}"] .power-badge`).count(), 0);
  await screenshot(page, 'power-commit-1280', false);
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('a power loss that takes nothing says so, and every row is on disk', async () => {
  // At synchronous = FULL in WAL mode every commit is synced before it returns.
  const { context, page, seen } = await openReady(env, '?s=idem-power-loss&synchronous=full&schedule=A6BC3&step=7', { width: 1280, height: 900 });
  await page.locator('#lanes .step.power-loss.selected').waitFor();
  assert.equal(await page.locator('#lanes .step-lost.lost-none').textContent(), 'Lost no committed row: everything committed was on disk.');
  assert.deepEqual(await tableRows(page.locator('#tables')), [
    { cells: ['1', 'order-7', '30', 'yes'], classes: [], struck: false },
    { cells: ['1', '1', 'yes'], classes: [], struck: false },
    { cells: ['order-7', 'created order 1', 'yes'], classes: [], struck: false },
  ]);
  assert.deepEqual(await page.locator('#tables .disk-legend').allTextContents(), ['The power went out at this step and took no committed row: all of them were on disk.']);
  // A long list of lost rows is cut in the step box; the tables have them all.
  const sentence = await page.evaluate(async () => {
    const { lostSentence } = await import('/js/parts/power.js');
    const rows = [1, 2, 3, 4, 5, 6].map((n) => [n, null]);
    return lostSentence({ powerLoss: { lost: { 'a.db': { t: rows }, 'b.db': { empty: [] } } } });
  });
  assert.equal(sentence, 'Lost 6 committed rows: a.db t (1, NULL); a.db t (2, NULL); a.db t (3, NULL); a.db t (4, NULL); and 2 more rows (the tables show them).');
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('the keyboard reaches the power-loss step, by Tab and by the arrow keys', async () => {
  const { context, page, seen } = await openAndRun({ width: 1280, height: 900 });
  // From the timeline's region, Tab goes through the step boxes in order.
  await page.locator('.lanes-wrap').focus();
  let reached = false;
  for (let i = 0; i < 30 && !reached; i += 1) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement?.matches('#lanes .step.power-loss') ?? false);
  }
  assert.ok(reached, 'Tab reaches the power-loss step');
  await page.keyboard.press('Enter');
  await page.locator('#lanes .step.power-loss.selected').waitFor();
  assert.equal(await page.locator('#tables tr.lost').count(), 2);
  // The arrow keys move the selection from the commit onto the power loss.
  await page.locator(`#lanes .step[data-step="${COMMIT_STEP}"]`).click();
  await page.keyboard.press('ArrowRight');
  await page.locator('#lanes .step.power-loss.selected').waitFor();
  assert.equal(await page.locator('#selected-step').textContent(), 'after step 7 (power: power loss)');
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('at 390 px the marked step and the lost rows fit: nothing overflows', async () => {
  const { context, page, seen } = await openAndRun({ width: 390, height: 844 });
  const marked = page.locator('#lanes .step.power-loss');
  await marked.click();
  await page.locator('#lanes .step.power-loss.selected').waitFor();
  assert.ok(await overflow(page) <= 1, `the page scrolls sideways by ${await overflow(page)}px`);
  // The step box, its badge and its lost rows are inside the window's width.
  for (const part of [marked, marked.locator('.power-badge'), marked.locator('.step-lost')]) {
    await part.scrollIntoViewIfNeeded();
    const box = await part.boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= 390, `${JSON.stringify(box)} is inside 390 px`);
  }
  // Every table, its lost rows included, fits in its own scroll box.
  const tables = await page.locator('#tables .table-scroll').evaluateAll((boxes) => boxes.map((b) => b.getBoundingClientRect().right));
  assert.ok(tables.every((right) => right <= 390), `tables end at ${tables}`);
  assert.equal(await page.locator('#tables tr.lost').count(), 2);
  await page.locator('#tables').scrollIntoViewIfNeeded();
  await screenshot(page, 'power-390');
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('a design\'s values in the lost rows stay text, never HTML', async () => {
  // The built-in with a receipt of the design's own: markup that would run.
  const hostile = '<img src=x onerror=alert(1)>';
  const source = readFileSync(path.join(repoRoot, 'src', 'scenarios', 'builtin', 'idem-power-loss.toml'), 'utf8')
    .replace("'created order ' || last_insert_rowid()", `'${hostile}'`);
  assert.ok(source.includes(hostile));
  const { context, page, seen } = await openPage(env.browser, env.server.url);
  await page.goto(env.server.url);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  const packed = await page.evaluate(async (text) => (await import('/js/parts/pack.js')).pack(text), source);
  await page.goto(`${env.server.url}?src=${packed}&schedule=A6BC6&step=7`);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  await page.locator('#lanes .step.power-loss.selected').waitFor();
  assert.match(await page.locator('#lanes .step-lost').textContent(), new RegExp(`receipts \\(order-7, ${hostile.replace(/[()]/g, '\\$&')}\\)\\.$`));
  assert.ok((await page.locator('#tables tr.lost td').allTextContents()).includes(hostile));
  assert.equal(await page.locator('img').count(), 0);
  assert.deepEqual(seen.dialogs, []);
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('a database a torn write broke is said to be unreadable, and the run still ends', async () => {
  // tests/designs/torn.toml at OFF, tearing 1: the power loss leaves a
  // database SQLite cannot read; the page says so (as text) and shows the
  // failed check, instead of an error in place of the run.
  const source = readFileSync(path.join(repoRoot, 'tests', 'designs', 'torn.toml'), 'utf8')
    .replace('default = 0', 'default = 1');
  assert.ok(source.includes('default = 1'));
  const { context, page, seen } = await openPage(env.browser, env.server.url);
  await page.goto(env.server.url);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  const packed = await page.evaluate(async (text) => (await import('/js/parts/pack.js')).pack(text), source);
  await page.goto(`${env.server.url}?src=${packed}&schedule=AAB&step=3`);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  await page.locator('#tables p.disk-legend', { hasText: 'could not be read' }).waitFor({ timeout: 30000 });
  const said = await page.locator('#tables p.disk-legend', { hasText: 'could not be read' }).textContent();
  assert.match(said, /^app\.db could not be read after this step: .*malformed/);
  assert.match(await page.locator('#checks').textContent(), /the database is sound/);
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('the embed marks the power loss and its lost rows, at 1280 and 390 px, by mouse and keyboard', async () => {
  for (const width of [1280, 390]) {
    const { context, page, seen } = await openPage(env.browser, env.server.url);
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${env.server.url}embed.html?scenario=idem-power-loss`);
    const player = page.locator('replayground-scenario');
    await player.locator('.frame[data-state="ready"]').waitFor({ timeout: 30000 });
    // Its default schedule is the counterexample: Run plays it to the end.
    await player.locator('button[data-control="run"]').click();
    await player.locator('.verdict[data-kind="fail"]').waitFor();
    const marked = player.locator('.step.power-loss');
    assert.equal(await marked.count(), 1);
    assert.equal(await marked.locator('.power-badge').textContent(), 'power loss');
    assert.equal(await marked.locator('.step-lost').textContent(), LOST_SENTENCE);
    // The keyboard: the commit box, then Tab onto the power loss, Enter selects it.
    await player.locator(`.step[data-step="${COMMIT_STEP}"]`).focus();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.querySelector('replayground-scenario').shadowRoot.activeElement?.dataset.step), String(POWER_STEP));
    await page.keyboard.press('Enter');
    await player.locator('.step.power-loss.selected').waitFor();
    assert.deepEqual((await tableRows(player.locator('.tables'))).map((r) => r.classes.join(' ')), ['volatile', 'lost', 'lost']);
    assert.equal(await player.locator('.legend-lost').count(), 1);
    // Clicking the commit shows its rows not yet on disk.
    await player.locator(`.step[data-step="${COMMIT_STEP}"]`).click();
    assert.equal(await player.locator('tr.volatile').count(), 3);
    await player.locator(`.step[data-step="${POWER_STEP}"]`).click();
    assert.ok(await overflow(page) <= 1, `the embed's page scrolls sideways by ${await overflow(page)}px at ${width}`);
    await screenshot(page, `power-embed-${width}`);
    assert.deepEqual(seen.errors, []);
    await context.close();
  }
});
