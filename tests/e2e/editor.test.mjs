// A design of one's own in the page: edit a copy of a built-in, see mistakes
// at their line and column as one types, run the design with every strategy,
// share it in a link that opens the same run, keep drafts in the browser
// (deleting one asks first), and open hostile or too-long designs safely.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openPage, openReady, screenshot, serveAndLaunch } from './harness.mjs';

const env = serveAndLaunch();
const here = path.dirname(fileURLToPath(import.meta.url));
const SEATS = readFileSync(path.join(here, '../conformance/seat-check-then-insert.toml'), 'utf8');

function open(query, viewport = { width: 1280, height: 800 }) {
  return openReady(env, query, viewport);
}

const packed = (page, source) => page.evaluate(async (text) => (await import('/js/parts/pack.js')).pack(text), source);

test('edit a copy, see mistakes as you type, run the design, and share it in a link', async () => {
  const opened = await openPage(env.browser, env.server.url, { acceptDownloads: true });
  const { context, page, seen } = opened;
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${env.server.url}?s=idem-check-then-write`);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  await page.click('#edit-copy');
  await page.locator('#editor').waitFor();
  assert.match(await page.locator('#source').inputValue(), /id = "idem-check-then-write"/);
  await page.locator('#source-status[data-kind="pass"]').waitFor();
  // A mistake is named at its line and column while typing.
  await page.locator('#source').fill('title = "x"\n[databases.app]\nschema = 5\n');
  await page.locator('#source-status[data-kind="fail"]').waitFor();
  assert.match(await page.locator('#source-status').textContent(), /line 3, column 10/);
  // An SQL typo is named at its place in the file before anything runs.
  await page.locator('#source').fill(SEATS.replace('"SELECT 1 WHERE NOT EXISTS', '"SELEC 1 WHERE NOT EXISTS'));
  await page.locator('#source-status[data-kind="fail"]', { hasText: 'SELEC' }).waitFor();
  assert.match(await page.locator('#source-status').textContent(), /line 14, column 8: step "check" of attempt A: near "SELEC": syntax error/);
  // Tab indents and undo takes it back.
  await page.locator('#source').fill('');
  await page.locator('#source').pressSequentially('a = 1');
  await page.locator('#source').press('Enter');
  await page.locator('#source').press('Tab');
  assert.equal(await page.locator('#source').inputValue(), 'a = 1\n  ');
  // Undo takes the indent back (with whatever typing the browser groups with it).
  await page.keyboard.press('Control+z');
  const undone = await page.locator('#source').inputValue();
  assert.ok('a = 1\n'.startsWith(undone), JSON.stringify(undone));
  // Escape, then Tab, leaves the editor for the next control: the button
  // to the mistake (this text has no title), then Run this design.
  await page.locator('#source-goto:visible').waitFor();
  await page.locator('#source').press('Escape');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.action), 'goto-mistake');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.action), 'apply-source');
  // The seat design, run as the scenario shown.
  await page.locator('#source').fill(SEATS);
  await page.locator('#source-status[data-kind="pass"]').waitFor();
  await page.click('[data-action="apply-source"]');
  await page.locator('#scenario-title', { hasText: 'Broken: a seat booked by check-then-insert' }).waitFor();
  assert.match(page.url(), /[?&]src=/);
  // Stepped by hand, as a built-in is.
  await page.click('#lanes [data-action="step"][data-attempt="1"]');
  await page.locator('#lanes .step[data-step="0"]').waitFor();
  assert.match(await page.locator('#lanes .step[data-step="0"]').textContent(), /B checks whether seat 7 is free/);
  // Every strategy works on it: exhaustive finds the double booking.
  await page.selectOption('#strategy', 'exhaustive');
  await page.click('#run');
  await page.locator('#run:enabled').waitFor({ timeout: 60000 });
  assert.match(page.url(), /schedule=ABAB/);
  assert.match(await page.locator('#run-status').textContent(), /Counterexample in Broken: a seat booked by check-then-insert, exhaustive \(shortest, 4 steps, schedule ABAB/);
  assert.match(await page.locator('#checks').textContent(), /seat 7 is booked once/);
  await page.selectOption('#strategy', 'random');
  await page.click('#run');
  await page.locator('#run:enabled').waitFor({ timeout: 60000 });
  await page.selectOption('#strategy', 'exhaustive');
  await page.click('#run');
  await page.locator('#run:enabled').waitFor({ timeout: 60000 });
  await screenshot(page, 'editor-design', false);
  // The design's counterexample, reproduced on real SQLite by the downloaded script.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-python')]);
  const folder = mkdtempSync(path.join(tmpdir(), 'replayground-design-'));
  try {
    const script = path.join(folder, download.suggestedFilename());
    await download.saveAs(script);
    const out = execFileSync('python3', [script], { encoding: 'utf8' });
    assert.match(out, /the playground's check failed: seat 7 is booked once: expected 1, got 2/);
    assert.match(out, /, 0 different/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  // The link opens the same run in a fresh page.
  const link = page.url();
  const other = await context.newPage();
  await other.goto(link);
  await other.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  assert.equal(await other.locator('#scenario-title').textContent(), 'Broken: a seat booked by check-then-insert');
  assert.equal(await other.locator('#lanes .step').count(), 4);
  assert.match(await other.locator('#run-status').textContent(), /failing run/);
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.foreignRequests, []);
  await context.close();
});

test('drafts survive a reload and deleting one asks first', async () => {
  const { context, page } = await open('?s=idem-race');
  await page.click('[data-action="new-design"]');
  await page.locator('#source-status[data-kind="pass"]').waitFor();
  await page.click('[data-action="save-draft"]');
  await page.locator('#drafts li', { hasText: 'My design' }).waitFor();
  await page.reload();
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  assert.equal(await page.locator('#drafts li').count(), 1);
  await page.click('#drafts [data-action="open-draft"]');
  await page.locator('#scenario-title', { hasText: 'My design' }).waitFor();
  // Asked, and declined (the harness dismisses dialogs): the draft stays.
  await page.click('#drafts [data-action="delete-draft"]');
  assert.equal(await page.locator('#drafts li').count(), 1);
  page.removeAllListeners('dialog');
  const asked = [];
  page.on('dialog', (dialog) => { asked.push(dialog.message()); dialog.accept(); });
  await page.click('#drafts [data-action="delete-draft"]');
  await page.locator('#drafts li').first().waitFor({ state: 'detached' });
  assert.match(asked[0], /Delete the draft "My design"\?/);
  await context.close();
});

test('a hostile design by link is text and bounded; a too-long one is refused, not cut', async () => {
  const { context, page, seen } = await open('?s=idem-race');
  const hostile = `
title = "<img src=x onerror=\\"window.pwned = 1\\">"
explanation = "<script>window.pwned = 2</script>"
[databases.app]
schema = "CREATE TABLE t (x);"
[[attempts]]
steps = [ { name = "<b>forever</b>", sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", note = '<img src=y onerror="window.pwned = 3">' } ]
`;
  const other = await context.newPage();
  await other.goto(`${env.server.url}?src=${await packed(page, hostile)}`);
  await other.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  assert.equal(await other.locator('#scenario-title').textContent(), '<img src=x onerror="window.pwned = 1">', await other.locator('#link-error').textContent());
  assert.equal(await other.locator('#scenario-explanation').textContent(), '<script>window.pwned = 2</script>');
  await other.selectOption('#strategy', 'round-robin');
  await other.click('#run');
  await other.locator('#run:enabled').waitFor({ timeout: 60000 });
  assert.match(await other.locator('#lanes').textContent(), /ran a statement of more than 20000000 SQLite instructions/);
  assert.match(await other.locator('#lanes').textContent(), /<b>forever<\/b>/);
  assert.equal(await other.locator('#lanes img, #lanes b, #scenario-title img').count(), 0);
  assert.equal(await other.evaluate(() => window.pwned), undefined);
  // SQL that tries to leave its store is refused, and says why.
  const escape = `
title = "escape"
[databases.app]
schema = "CREATE TABLE t (x);"
[[attempts]]
steps = [ { name = "attach", sql = "ATTACH '/etc/passwd' AS p" }, { name = "wait", sql = "PRAGMA busy_timeout = 100000" } ]
`;
  // Setting a pragma the engine keeps is refused before anything runs, at its place.
  await other.goto(`${env.server.url}?src=${await packed(page, escape)}`);
  await other.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  assert.match(await other.locator('#link-error').textContent(), /line 6, column 91: step "wait" of attempt A: PRAGMA busy_timeout may not be set in a scenario/);
  // Asked to run anyway, it runs, and each statement fails in the run.
  await other.goto(`${env.server.url}?src=${await packed(page, escape.replace('[databases.app]', 'allow-sql-errors = true\n[databases.app]'))}`);
  await other.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  assert.equal(await other.locator('#scenario-title').textContent(), 'escape');
  await other.selectOption('#strategy', 'round-robin');
  await other.click('#run');
  await other.locator('#run:enabled').waitFor({ timeout: 60000 });
  assert.match(await other.locator('#lanes').textContent(), /unable to open database/);
  // A link whose design would unpack to more than the format takes is refused.
  await other.goto(`${env.server.url}?src=${await packed(page, '#'.repeat(300 * 1024))}`);
  await other.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  assert.match(await other.locator('#link-error').textContent(), /unpacks to more than 262144 bytes/);
  assert.equal(await other.locator('#scenario-title').textContent(), 'Broken: check in one transaction, write in another');
  // A damaged link says so and opens the default scenario.
  await other.goto(`${env.server.url}?src=@@@`);
  await other.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  assert.match(await other.locator('#link-error').textContent(), /could not be opened: the packed source is not base64url/);
  // Too long for a link: refused with a message; the address keeps the last run that fit.
  const noise = Array.from({ length: 9000 }, (_, i) => ((i * 2654435761) >>> 0).toString(36)).join('');
  await page.click('[data-action="new-design"]');
  await page.locator('#source').fill(`${await page.locator('#source').inputValue()}\n# ${noise}\n`);
  await page.click('[data-action="apply-source"]');
  await page.locator('#scenario-title', { hasText: 'My design' }).waitFor();
  assert.match(await page.locator('#link-error').textContent(), /too long for a link \([\d,]+ characters; links keep to 8,000\)/);
  assert.doesNotMatch(page.url(), /src=/);
  assert.deepEqual(seen.errors, []);
  await context.close();
});

// Two attempts that each wait for the other to go first: every schedule
// goes round for ever.
const LIVELOCK = readFileSync(path.join(here, '../designs/after-you.toml'), 'utf8');

test('a design that never completes is a counterexample, not a proof, whatever the strategy', async () => {
  const { page, seen } = await open('?s=idem-race', { width: 1440, height: 900 });
  await page.click('[data-action="new-design"]');
  await page.locator('#source').fill(LIVELOCK);
  await page.locator('#source-status[data-kind="pass"]').waitFor();
  await page.click('[data-action="apply-source"]');
  await page.locator('#scenario-title', { hasText: 'After you' }).waitFor();
  for (const [strategy, counted] of [
    ['exhaustive', /2 runs came back to a state of their own path/],
    ['random', /1 run was stopped by the step bound of an attempt/],
    ['pct', /1 run was stopped by the step bound of an attempt/],
    ['round-robin', null],
  ]) {
    await page.selectOption('#strategy', strategy);
    if (strategy === 'random' || strategy === 'pct') await page.locator('#runs').fill('1');
    await page.click('#run');
    await page.locator('#run:enabled').waitFor({ timeout: 60000 });
    const text = await page.locator('#run-status').textContent();
    assert.equal(await page.locator('#run-status').getAttribute('data-kind'), 'fail', `${strategy}: ${text}`);
    if (counted) {
      assert.match(text, /^Fails, but this design is declared to hold\. Counterexample/, `${strategy}: ${text}`);
      assert.match(text, counted, `${strategy}: ${text}`);
    }
    assert.match(await page.locator('#checks').textContent(), /the run completes/, strategy);
    if (strategy === 'exhaustive') {
      // The search saw the run come back: the counterexample is the lasso,
      // a step and its cycle, not the run unrolled to the step bound.
      assert.match(await page.locator('#checks').textContent(), /goes round for ever: after step 1 it is back in the state it started in/, strategy);
      assert.match(text, /schedule \(A\)/, text);
      assert.match(await page.locator('#verdict').textContent(), /Step 1 repeats for ever: the run never completes\./);
      assert.match(await page.locator('#explanation').textContent(), /Then step 1 again and again, for ever/);
      await screenshot(page, 'livelock-counterexample', false);
      // The link to the lasso opens it explained, the steps that repeat said.
      const linked = await open(new URL(page.url()).search, { width: 1440, height: 900 });
      await linked.page.locator('#explanation li.after-steps', { hasText: 'Then step 1 again and again, for ever' }).waitFor();
      assert.match(await linked.page.locator('#verdict').textContent(), /Step 1 repeats for ever/);
      await linked.context.close();
      // A step taken from the lasso is a run of its own: not over, and the
      // lasso's explanation is put away.
      await page.click('[data-action="step"][data-attempt="1"]');
      await page.locator('#verdict', { hasText: '2 steps taken; the run is not over' }).waitFor();
      assert.equal(await page.locator('#explanation').isVisible(), false);
      assert.match(new URL(page.url()).searchParams.get('schedule'), /^AB$/);
    } else {
      assert.match(await page.locator('#checks').textContent(), /stopped by a bound: A took more than 1000 steps/, strategy);
    }
    // A schedule run to the step bound is cut in the sentence (the link keeps it whole).
    if (strategy === 'round-robin') assert.match(text, /schedule ABABAB[AB]*… \(2,002 characters\)/, text);
  }
  assert.deepEqual(seen.errors, []);
});

test('the editor as a new user met it: a blank design puts the old run away, line numbers, no wrapping, the caret to the mistake, words kept whole', async () => {
  const { page, seen } = await open('?s=idem-check-then-write', { width: 1440, height: 900 });
  // The checks table after a run: "completed" is one word on one line.
  await page.selectOption('#strategy', 'round-robin');
  await page.click('#run');
  await page.locator('#run:enabled').waitFor({ timeout: 60000 });
  const broken = await page.evaluate(() => [...document.querySelectorAll('#checks td')]
    .filter((td) => /\bcompleted\b/.test(td.textContent))
    .map((td) => {
      const text = td.firstChild;
      const at = text.textContent.indexOf('completed');
      const range = document.createRange();
      range.setStart(text, at);
      range.setEnd(text, at + 'completed'.length);
      return range.getClientRects().length;
    }));
  assert.ok(broken.length > 0, 'a cell says completed');
  assert.ok(broken.every((lines) => lines === 1), `"completed" spans ${broken} lines`);
  // New design: the scenario shown is put away until the design runs.
  await page.click('[data-action="new-design"]');
  await page.locator('#source-status[data-kind="pass"]').waitFor();
  assert.equal(await page.locator('#lanes').isVisible(), false);
  assert.equal(await page.locator('#params').isVisible(), false);
  assert.equal(await page.locator('aside.database').isVisible(), false);
  assert.equal(await page.locator('#drafting-note').isVisible(), true);
  // Line numbers, one per line; long lines do not wrap.
  const source = await page.locator('#source').inputValue();
  assert.equal(await page.locator('#source-lines span').count(), source.split('\n').length);
  assert.equal(await page.locator('#source').getAttribute('wrap'), 'off');
  // A mistake far along a line: its line number is marked, and a button puts the caret there.
  const typo = source.replace('INSERT INTO items (name) VALUES (:label)', 'INSERT INTO items (name) VALUES (:label) RETURNING nope');
  await page.locator('#source').fill(typo);
  await page.locator('#source-status[data-kind="fail"]', { hasText: 'no such column: nope' }).waitFor();
  const status = await page.locator('#source-status').textContent();
  const [, line, column] = /line (\d+), column (\d+)/.exec(status).map(Number);
  assert.equal(await page.locator('#source-lines span.mistake').textContent(), `${line}\n`);
  // Its message is beside its line, inside the text's box (the status line
  // below the editor may be out of view).
  const note = page.locator('#source-note');
  await note.waitFor();
  assert.match(await note.textContent(), /no such column: nope/);
  const noteBox = await note.boundingBox();
  const textBox = await page.locator('#source').boundingBox();
  assert.ok(noteBox.y >= textBox.y - 1 && noteBox.y + noteBox.height <= textBox.y + textBox.height + 1, `the note at ${noteBox.y}..${noteBox.y + noteBox.height} is outside the text at ${textBox.y}..${textBox.y + textBox.height}`);
  await page.click('#source-goto');
  const caret = await page.locator('#source').evaluate((t) => t.selectionStart);
  const lines = typo.split('\n');
  assert.equal(caret, lines.slice(0, line - 1).join('\n').length + 1 + column - 1);
  assert.equal(typo.slice(caret, caret + 4), 'nope');
  await screenshot(page, 'editor-mistake-marked', false);
  // Run this design: its own run, timeline and tables come back.
  await page.locator('#source').fill(source);
  await page.locator('#source-status[data-kind="pass"]').waitFor();
  assert.equal(await note.isVisible(), false);
  await page.click('[data-action="apply-source"]');
  await page.locator('#scenario-title', { hasText: 'My design' }).waitFor();
  assert.equal(await page.locator('#lanes').isVisible(), true);
  assert.equal(await page.locator('aside.database').isVisible(), true);
  assert.equal(await page.locator('#drafting-note').isVisible(), false);
  // At 1440×900, with the editor still open, the run's controls (the whole
  // row, Download trace included) and the lane heads are in view.
  for (const selector of ['#run', '#download-trace', '#lanes .lane-head']) {
    const box = await page.locator(selector).first().boundingBox();
    assert.ok(box && box.y >= 0 && box.y + box.height <= 900, `${selector}: ${JSON.stringify(box)}`);
  }
  await screenshot(page, 'editor-design-run-1440', false);
  assert.deepEqual(seen.errors, []);
});

test('attempts labelled with single letters go by them: in schedules, in links and on the keyboard', async () => {
  const { page, seen } = await open('?s=idem-race');
  await page.click('[data-action="new-design"]');
  await page.locator('#source').fill(`title = "Labelled"
[databases.app]
schema = "CREATE TABLE t (x);"
[[attempts]]
label = "R"
steps = [ { name = "r1", sql = "INSERT INTO t VALUES (1)" }, { name = "r2", sql = "INSERT INTO t VALUES (2)" } ]
[[attempts]]
label = "S"
steps = [ { name = "s1", sql = "INSERT INTO t VALUES (3)" } ]
`);
  await page.locator('#source-status[data-kind="pass"]').waitFor();
  await page.click('[data-action="apply-source"]');
  await page.locator('#scenario-title', { hasText: 'Labelled' }).waitFor();
  // s steps S, r steps R; the link's schedule reads as the lanes do.
  await page.locator('#lanes').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('s');
  await page.locator('#lanes .step[data-step="0"]').waitFor();
  await page.keyboard.press('r');
  await page.locator('#lanes .step[data-step="1"]').waitFor();
  assert.match(await page.locator('#lanes .step[data-step="0"]').textContent(), /s1/);
  assert.match(await page.locator('#lanes .step[data-step="1"]').textContent(), /r1/);
  await page.waitForFunction(() => new URLSearchParams(location.search).get('schedule') === 'SR');
  assert.match(await page.locator('#lanes [data-action="step"][data-attempt="0"]').getAttribute('title'), /\(r\)$/);
  // A link written in the attempts' own letters opens the same run.
  const link = new URL(page.url());
  link.searchParams.set('schedule', 'BA');
  await page.goto(link.href);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  await page.locator('#lanes .step[data-step="1"]').waitFor();
  assert.match(await page.locator('#lanes .step[data-step="0"]').textContent(), /s1/);
  assert.deepEqual(seen.errors, []);
});

test('the editor at phone width', async () => {
  const { context, page } = await open('?s=idem-race', { width: 390, height: 844 });
  await page.click('#edit-copy');
  await page.locator('#source-status[data-kind="pass"]').waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 390);
  await page.locator('#editor').scrollIntoViewIfNeeded();
  await screenshot(page, 'editor-phone', false);
  await context.close();
});

test('what a new user hit: null params, a dropped step, a schema error, copying a too-long link, drafts and the editor kept in step', async () => {
  const { context, page, seen } = await open('?s=idem-race');
  const seats = await packed(page, SEATS);
  // params=null is dropped and named; the page works.
  await page.goto(`${env.server.url}?src=${seats}&params=null&step=999`);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  const dropped = await page.locator('#link-error').textContent();
  assert.match(dropped, /the params were dropped: they are not a JSON object/);
  assert.match(dropped, /the step was dropped: step "999" is not in this run/);
  await page.selectOption('#strategy', 'round-robin');
  await page.click('#run');
  await page.locator('#run:enabled').waitFor({ timeout: 60000 });
  assert.equal(await page.locator('#lanes .step').count(), 4);
  // A schema that fails is shown in the editor, before and after Run this design.
  await page.click('[data-action="new-design"]');
  await page.locator('#source').fill(SEATS.replace('CREATE TABLE bookings', 'CREATE TABL bookings'));
  await page.locator('#source-status[data-kind="fail"]').waitFor();
  assert.match(await page.locator('#source-status').textContent(), /the schema of database theatre failed/);
  await page.click('[data-action="apply-source"]');
  assert.match(await page.locator('#source-status').textContent(), /schema of database theatre failed/);
  // Saving over a different draft of the same title asks first.
  await page.locator('#source').fill(SEATS);
  await page.click('[data-action="save-draft"]');
  await page.locator('#drafts li').first().waitFor();
  await page.locator('#source').fill(SEATS.replace('expect = 1', 'expect = 2'));
  const asked = [];
  page.removeAllListeners('dialog');
  page.on('dialog', (dialog) => { asked.push(dialog.message()); dialog.dismiss(); });
  // The question comes once the engine has read the design's title.
  const question = async () => {
    for (let i = 0; i < 100 && asked.length === 0; i += 1) await page.waitForTimeout(50);
    return asked.pop() ?? '';
  };
  await page.click('[data-action="save-draft"]');
  assert.match(await question(), /A draft called "Broken: a seat booked by check-then-insert" exists\. Replace it/);
  assert.equal(JSON.parse(await page.evaluate(() => localStorage.getItem('replayground.drafts')))[0].source, SEATS);
  // Replacing unsaved text asks first; declined, the text stays.
  await page.click('[data-action="new-design"]');
  assert.match(await question(), /Replace the text in the editor\?/);
  assert.match(await page.locator('#source').inputValue(), /expect = 2/);
  // A design too long for a link: Copy link says so and copies nothing.
  await page.evaluate(() => navigator.clipboard.writeText('unchanged').catch(() => {}));
  const noise = Array.from({ length: 9000 }, (_, i) => ((i * 2654435761) >>> 0).toString(36)).join('');
  await page.locator('#source').fill(`${SEATS}\n# ${noise}\n`);
  await page.click('[data-action="apply-source"]');
  await page.locator('#scenario-title', { hasText: 'Broken: a seat booked' }).waitFor();
  await page.click('#copy-link');
  assert.match(await page.locator('#run-status').textContent(), /Nothing was copied: this design is too long for a link/);
  // Opening a built-in closes the editor once its design has been run.
  await page.locator('#catalog [data-scenario="idem-race"]').click();
  await page.locator('#scenario-title', { hasText: '1. Concurrent requests, one key' }).waitFor();
  assert.equal(await page.locator('#editor').isHidden(), true);
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('a misspelled outcome in a check, or a program not declared, is refused at its line with the names there are', async () => {
  const { page, seen } = await open('?s=idem-check-then-write');
  await page.click('#edit-copy');
  await page.locator('#source-status[data-kind="pass"]').waitFor();
  const source = await page.locator('#source').inputValue();
  // The built-in's check on how many attempts ended "created", misspelled:
  // it ran and failed as "expected 1, actual 0" before; now it is named.
  const misspelled = source.replace('outcome = "created"', 'outcome = "creatd"');
  assert.notEqual(misspelled, source);
  await page.locator('#source').fill(misspelled);
  await page.locator('#source-status[data-kind="fail"]', { hasText: 'creatd' }).waitFor();
  const status = await page.locator('#source-status').textContent();
  assert.match(status, /no attempt can end with outcome "creatd"; the declared ones are "created", /);
  const [, line] = /line (\d+), column (\d+)/.exec(status).map(Number);
  assert.match(misspelled.split('\n')[line - 1], /outcome = "creatd"/);
  assert.equal(await page.locator('#source-lines span.mistake').textContent(), `${line}\n`);
  // A program name that is not declared lists those that are, closest first.
  const unknown = source.replace('program = "check-then-write"', 'program = "check-and-write"');
  await page.locator('#source').fill(unknown);
  await page.locator('#source-status[data-kind="fail"]', { hasText: 'check-and-write' }).waitFor();
  assert.match(await page.locator('#source-status').textContent(), /program "check-and-write" is not declared; the declared ones are "check-then-write", /);
  assert.deepEqual(seen.errors, []);
});

// One way to run: Run runs what the editor holds (the design becomes the
// scenario shown first), from the button or with Ctrl+Enter anywhere, the
// editor too; the button shows the keys; focus stays where the visitor was
// (it fell to <body> when Run, pressed by Enter, was disabled during the run).
test('one Run runs the editor\'s design, by button or Ctrl+Enter, and focus stays', async () => {
  const { page, seen } = await open('?s=idem-race&attempts=2');
  assert.match(await page.locator('#run').textContent(), /^Run (Ctrl\+Enter|⌘ Enter)$/);
  // Said to assistive technology as a shortcut, not as the button's name.
  assert.match(await page.locator('#run').getAttribute('aria-keyshortcuts'), /^(Control|Meta)\+Enter$/);
  await page.getByRole('button', { name: 'Run', exact: true }).waitFor();
  // A touch screen without a mouse is not shown keys it has no keyboard for.
  const touch = await openPage(env.browser, env.server.url, { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  await touch.page.goto(`${env.server.url}?s=idem-race&attempts=2`);
  await touch.page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  assert.equal(await touch.page.locator('#run-keys').isVisible(), false);
  assert.equal(await page.locator('#run-keys').isVisible(), true);
  await touch.context.close();
  // Enter on Run: the search runs, and focus is on Run afterwards.
  await page.focus('#run');
  await page.keyboard.press('Enter');
  await page.locator('#run-status', { hasText: /No violation in|Counterexample in/ }).waitFor({ timeout: 60000 });
  await page.locator('#run:enabled').waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'run');
  // A design in the editor: Ctrl+Enter while typing in it runs it, with no
  // other button pressed; the verdict is the design's.
  await page.click('#edit-copy');
  await page.locator('#source').fill(SEATS);
  await page.locator('#source-status[data-kind="pass"]').waitFor();
  await page.locator('#source').focus();
  await page.keyboard.press('Control+Enter');
  await page.locator('#scenario-title', { hasText: /seat/i }).waitFor({ timeout: 60000 });
  await page.locator('#run-status', { hasText: 'Counterexample in' }).waitFor({ timeout: 60000 });
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'source');
  // Changed again, the Run button runs the new text: its title is shown.
  await page.locator('#source').fill(SEATS.replace(/^title = ".*"$/m, 'title = "Seats, renamed"'));
  await page.locator('#source-status[data-kind="pass"]').waitFor();
  await page.click('#run');
  await page.locator('#scenario-title', { hasText: 'Seats, renamed' }).waitFor({ timeout: 60000 });
  await page.locator('#run-status', { hasText: 'Counterexample in Seats, renamed' }).waitFor({ timeout: 60000 });
  // A design that does not parse is not run: the editor says why, the scenario shown stays.
  await page.locator('#source').fill('title = ');
  await page.locator('#source-status[data-kind="fail"]').waitFor();
  await page.keyboard.press('Control+Enter');
  await page.locator('#source-status[data-kind="fail"]').waitFor();
  assert.equal(await page.locator('#scenario-title').textContent(), 'Seats, renamed');
  assert.deepEqual(seen.errors, []);
});

// A built-in's bug fixed from the page alone: "Edit a copy" writes the
// library it includes into the file (its programs, commented, under
// [libraries.NAME]); making the check and the write one IMMEDIATE
// transaction in the copy makes the design hold.
test('fix the broken idempotency built-in from the page alone and see it hold', async () => {
  const { page, seen } = await open('?s=idem-check-then-write');
  await page.click('#edit-copy');
  await page.locator('#source-status[data-kind="pass"]').waitFor({ timeout: 30000 });
  const copy = await page.locator('#source').inputValue();
  assert.match(copy, /^include = \["idempotency"\]$/m);
  assert.match(copy, /^\[\[libraries\.idempotency\.programs\.check-then-write\.steps\]\]$/m);
  // The library's own comments come along: what each program does.
  assert.match(copy, /# Check in one transaction, write in another/);
  // As it is, the copy fails as the built-in does.
  await page.click('#run');
  await page.locator('#run-status', { hasText: 'Counterexample in' }).waitFor({ timeout: 60000 });
  // The fix: one IMMEDIATE transaction from the check to the commit.
  const program = copy.indexOf('[[libraries.idempotency.programs.check-then-write.steps]]');
  const fixed = copy.slice(0, program) + copy.slice(program)
    .replace('sql = "BEGIN"\n', 'sql = "BEGIN IMMEDIATE"\n')
    .replace('name = "end check"\nsql = "COMMIT"', 'name = "end check"\nsql = "SELECT 1"')
    .replace('name = "begin write"\nsql = "BEGIN IMMEDIATE"', 'name = "begin write"\nsql = "SELECT 1"');
  assert.notEqual(fixed, copy);
  assert.equal(fixed.split('SELECT 1"').length - copy.split('SELECT 1"').length, 2);
  await page.locator('#source').fill(fixed);
  await page.locator('#source-status[data-kind="pass"]').waitFor();
  await page.click('#run');
  await page.locator('#run-status', { hasText: 'No violation in' }).waitFor({ timeout: 60000 });
  assert.match(await page.locator('#run-status').textContent(), /^Holds, but this design is declared to fail\. .*every schedule covered/);
  await screenshot(page, 'editor-built-in-fixed', false);
  // It still declares fails = true: the editor offers to flip it, and runs it so.
  await page.locator('#flip-fails').waitFor();
  await page.click('#flip-fails');
  await page.locator('#flip-fails').waitFor({ state: 'hidden' });
  assert.match(await page.locator('#source').inputValue(), /^fails = false$/m);
  await page.click('#run');
  await page.locator('#run-status', { hasText: /^Holds, as declared\. No violation in/ }).waitFor({ timeout: 60000 });
  assert.equal(await page.locator('#flip-fails').isVisible(), false);
  assert.deepEqual(seen.errors, []);
});
