// The playground page in Debian's Chromium: every scenario runs with its
// checks on screen, an interleaving is stepped by hand, a permalink replays
// the same trace, an exploration is cancelled, bad links fall back cleanly,
// and text from links stays text. Screenshots go to tests/e2e/artifacts/.
import fs from 'node:fs';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openReady, screenshot, serveAndLaunch } from './harness.mjs';

const env = serveAndLaunch();

// Opens the page at `query` and waits until the scenario is loaded.
function open(query, viewport = { width: 1500, height: 1000 }) {
  return openReady(env, query, viewport);
}

// The text of every step box, in order.
async function traceText(page) {
  return page.locator('#lanes .step').allTextContents();
}

// Runs the chosen strategy and waits for the status line to settle.
async function run(page, strategy) {
  await page.selectOption('#strategy', strategy);
  await page.click('#run');
  await page.locator('#run:enabled').waitFor({ timeout: 60000 });
  return page.locator('#run-status').textContent();
}

test('every scenario runs, with its checks on screen', async () => {
  const { context, page, seen } = await open('?s=idem-race');
  const catalog = await page.locator('#catalog [role="option"]').evaluateAll((buttons) => buttons.map((b) => ({
    id: b.dataset.scenario, fails: b.querySelector('.tag-fails') !== null,
  })));
  assert.ok(catalog.length >= 25, `${catalog.length} scenarios`);
  for (const { id, fails } of catalog) {
    await page.click(`#catalog [role="option"][data-scenario="${id}"]`);
    await page.locator(`#catalog [role="option"][data-scenario="${id}"][aria-selected="true"]`).waitFor();
    const text = await run(page, 'exhaustive');
    if (fails) {
      assert.match(text, /^Fails, as declared\. Counterexample in .+, exhaustive \(shortest/, `${id}: ${text}`);
      assert.equal(await page.locator('#verdict').getAttribute('data-kind'), 'fail', id);
      assert.ok(await page.locator('#checks tr.fail').count() > 0, `${id} shows its failing checks`);
      assert.ok(await page.locator('#explanation li').count() > 0, `${id} explains each step`);
    } else {
      assert.match(text, /^Holds, as declared\. No violation in .+, exhaustive \(every schedule covered: .+\)\. Shown: one completed run\.$/, `${id}: ${text}`);
      // The clean search shows a completed run with its checks passing, not an unfinished one.
      assert.equal(await page.locator('#verdict').getAttribute('data-kind'), 'pass', id);
      assert.ok(await page.locator('#lanes .step').count() > 0, `${id} shows the run's steps`);
      assert.equal(await page.locator('#checks tr.fail').count(), 0, id);
      assert.ok(await page.locator('#checks tr.pass').count() >= 2, id);
    }
  }
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.foreignRequests, []);
  await context.close();
});

test('an interleaving stepped by hand shows the lock queue and the tables', async () => {
  const { context, page } = await open('?s=idem-race&attempts=2');
  await page.keyboard.press('a'); // A: BEGIN IMMEDIATE
  await page.locator('.step[data-step="0"]').waitFor();
  assert.equal(await page.locator('.lane-head .lock').first().textContent(), 'RESERVED');
  await page.keyboard.press('b'); // B: refused, waits
  await page.locator('.step.blocked[data-step="1"]').waitFor();
  assert.equal(await page.locator('.lane-head .lane-status').nth(1).textContent(), 'waiting for a lock');
  assert.ok(await page.locator('.lane-head button[data-attempt="1"]').isDisabled(), 'a blocked attempt cannot be chosen');
  for (const step of ['2', '3', '4']) {
    await page.keyboard.press('a');
    await page.locator(`.step[data-step="${step}"]`).waitFor();
  }
  assert.equal(await page.locator('table.data caption').first().textContent(), 'effects (0)', 'not committed yet');
  await screenshot(page, 'playground-mid-interleaving');
  await page.locator('#lanes').scrollIntoViewIfNeeded();
  await screenshot(page, 'playground-mid-interleaving-view', false);
  await page.keyboard.press('a'); // A: COMMIT
  await page.locator('.step[data-step="5"]').waitFor();
  assert.equal(await page.locator('table.data caption').first().textContent(), 'effects (1)');
  assert.equal(await page.locator('table.data tr.changed').count(), 2, 'the commit makes the effect and the receipt visible');
  await page.keyboard.press('u');
  await page.locator('.step[data-step="5"]').waitFor({ state: 'detached' });
  assert.equal(await page.locator('table.data caption').first().textContent(), 'effects (0)');
  await context.close();
});

test('a permalink reproduces the same run step by step', async () => {
  const first = await open('?s=idem-check-then-write');
  await run(first.page, 'exhaustive');
  const url = first.page.url();
  assert.match(url, /schedule=A6B3AB4/);
  const trace = await traceText(first.page);
  await screenshot(first.page, 'playground-counterexample');
  await first.context.close();
  const second = await open(url.slice(env.server.url.length));
  assert.deepEqual(await traceText(second.page), trace);
  assert.match(await second.page.locator('#verdict').textContent(), /failed for schedule A6B3AB4/);
  await second.context.close();
});

test('an exploration can be cancelled', async () => {
  const { context, page } = await open('?s=idem-race');
  await page.selectOption('#strategy', 'random');
  await page.fill('#runs', '100000');
  await page.click('#run');
  await page.locator('#run-status', { hasText: 'Exploring:' }).waitFor({ timeout: 30000 });
  await page.click('#cancel');
  await page.locator('#run:enabled').waitFor({ timeout: 30000 });
  assert.match(await page.locator('#run-status').textContent(), /^No violation in 1\. Concurrent requests, one key, random \(seed 1\) \(cancelled after [\d,]+ runs?\)/);
  await context.close();
});

test('a bad part of a link is dropped and named; the rest of the link still opens', async () => {
  const broken = 'Broken: check in one transaction, write in another';
  for (const [query, reason, title] of [
    ['?s=no-such-scenario', 'unknown scenario "no-such-scenario"', broken],
    ['?s=idem-check-then-write&schedule=Q9!', 'the schedule was dropped: invalid schedule', broken],
    ['?s=idem-check-then-write&schedule=ZZZ', 'there is no attempt Z: this scenario has attempts A, B', broken],
    ['?s=idem-check-then-write&schedule=A99', 'the schedule was dropped: invalid schedule: step 8 does not fit', broken],
    ['?s=idem-check-then-write&schedule=A6B3AB4&step=999', 'the step was dropped: step 999 is not in this run', broken],
    ['?s=idem-race&attempts=2&schedule=A9B9', 'does not fit', '1. Concurrent requests, one key'],
    ['?s=idem-race&attempts=many', 'attempts was dropped: invalid attempts: expected a whole number, got "many"', '1. Concurrent requests, one key'],
    ['?s=idem-race&attempts=20', 'invalid attempts: 20 is out of range (1 to 16)', '1. Concurrent requests, one key'],
    ['?s=idem-race&clock=5', 'has no parameter "clock"', '1. Concurrent requests, one key'],
    ['?schedule=A6B3AB4', 'the link names no scenario', broken],
  ]) {
    const { context, page, seen } = await open(query);
    const message = await page.locator('#link-error').textContent();
    assert.ok(message.startsWith('Part of this link was dropped: '), message);
    assert.ok(message.includes(reason), `${query}: ${message}`);
    assert.equal(await page.locator('#scenario-title').textContent(), title, query);
    assert.deepEqual(seen.errors, []);
    await context.close();
  }
  // The good parts stay: the linked scenario, its parameters and a schedule that fits.
  const { context, page } = await open('?s=idem-race&attempts=2&key=zeta&schedule=A2B&step=x');
  assert.equal(await page.locator('input[name="key"]').inputValue(), 'zeta');
  assert.equal(await page.locator('input[name="attempts"]').inputValue(), '2');
  assert.match(await page.locator('#link-error').textContent(), /the step was dropped/);
  // Picking another scenario clears the notice.
  await page.click('[data-action="pick"][data-scenario="idem-failure"]');
  await page.locator('#link-error').waitFor({ state: 'hidden' });
  await context.close();
});

test('text from a link is shown as text, never run as HTML', async () => {
  const tenant = '<img src=x onerror=alert(1)>';
  const { context, page, seen } = await open(`?s=idem-race&attempts=2&tenant=${encodeURIComponent(tenant)}&key=${encodeURIComponent('"; DROP TABLE receipts; --')}`);
  assert.equal(await page.locator('input[name="tenant"]').inputValue(), tenant);
  await run(page, 'round-robin');
  const cells = await page.locator('table.data td').allTextContents();
  assert.ok(cells.includes(tenant), 'the tenant appears literally in the tables');
  assert.equal(await page.locator('#tables img, #lanes img').count(), 0);
  assert.deepEqual(seen.dialogs, []);
  assert.deepEqual(seen.foreignRequests, []);
  await context.close();
});

test('the page is readable at phone width with long keys', async () => {
  const key = 'k'.repeat(255);
  const { context, page } = await open(`?s=idem-race&attempts=2&key=${key}`, { width: 390, height: 844 });
  await run(page, 'round-robin');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px`);
  await screenshot(page, 'playground-phone');
  await context.close();
});

test('switching scenario during a search cancels it; no verdict lands on the new scenario', async () => {
  const { context, page, seen } = await open('?s=idem-race');
  await page.selectOption('#strategy', 'random');
  await page.fill('#runs', '100000');
  await page.click('#run');
  await page.locator('#run-status', { hasText: 'Exploring:' }).waitFor({ timeout: 30000 });
  await page.click('#catalog [role="option"][data-scenario="idem-receipt-later"]');
  await page.locator('#catalog [role="option"][data-scenario="idem-receipt-later"][aria-selected="true"]').waitFor();
  // Long enough for the old search to have finished had it gone on.
  await page.waitForTimeout(1500);
  const text = await page.locator('#run-status').textContent();
  assert.doesNotMatch(text, /No violation|Counterexample|Exploring/, text);
  assert.equal(await page.locator('#progress').isHidden(), true);
  // The engine is free: the broken design's own search finds its counterexample.
  const verdict = await run(page, 'exhaustive');
  assert.match(verdict, /^Fails, as declared\. Counterexample in Broken: the receipt in a second transaction, exhaustive/);
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('runs = 0 is refused with a sentence, not run silently', async () => {
  const { context, page } = await open('?s=idem-race&attempts=2');
  await page.selectOption('#strategy', 'random');
  await page.fill('#runs', '0');
  await page.click('#run');
  await page.locator('#run:enabled').waitFor({ timeout: 30000 });
  assert.equal(await page.locator('#run-status').textContent(), 'runs must be a whole number from 1 to 100000 (got 0)');
  await context.close();
});

test('the crash point offers exactly the declared choices, and a link selects one', async () => {
  const { context, page } = await open('?s=idem-receipt-later&crashPoint=before-receipt');
  const options = await page.locator('select[name="crashPoint"] option').evaluateAll((o) => o.map((x) => x.value));
  assert.deepEqual(options, ['before-receipt', 'none']);
  assert.equal(await page.locator('select[name="crashPoint"]').inputValue(), 'before-receipt');
  assert.equal(await page.locator('#link-error').isHidden(), true);
  await page.selectOption('select[name="crashPoint"]', 'none');
  await page.locator('#params button[type="submit"]').click();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('crashPoint') === 'none');
  const verdict = await run(page, 'exhaustive');
  assert.match(verdict, /^No violation in Broken: the receipt in a second transaction \(crash point none\), exhaustive/);
  await context.close();
});

test('a built-in shows what its catalog entry declares beside the run: the profiles table, the crash-point sweep', async () => {
  const { context, page } = await open('?s=idem-profiles');
  await page.locator('#scenario-extra table.profiles').waitFor();
  assert.ok(await page.locator('#scenario-extra table.profiles tr').count() > 2);
  assert.equal(await page.locator('#scenario-extra [data-action="sweep"]').count(), 0);
  // Each sweep runs its own scenario's subscribers: with an inbox none fails,
  // without one some crash point does.
  for (const [id, failing] of [['outbox-crash-sweep', false], ['outbox-crash-sweep-no-inbox', true]]) {
    await page.click(`#catalog [role="option"][data-scenario="${id}"]`);
    await page.locator('#scenario-extra [data-action="sweep"]').click();
    await page.locator('#scenario-extra table.sweep').waitFor();
    assert.ok(await page.locator('#scenario-extra table.sweep tr').count() > 3, id);
    assert.equal(await page.locator('#scenario-extra table.profiles').count(), 0, id);
    assert.equal(await page.locator('#scenario-extra table.sweep tr.fail').count() > 0, failing, id);
  }
  await context.close();
});

test('an exhaustive search stopped by its budget says what it covered, and Continue finishes it with the same result', async () => {
  const { context, page } = await open('?s=idem-check-then-write');
  await page.selectOption('#strategy', 'exhaustive');
  assert.equal(await page.locator('#budget').isVisible(), true);
  assert.equal(await page.locator('#continue').isVisible(), false);
  // The whole search at once, for comparison.
  const whole = await run(page, 'exhaustive');
  assert.match(whole, /every schedule covered: 14 runs, 37 distinct states/);
  assert.equal(await page.locator('#continue').isVisible(), false);

  await page.fill('#budget', '3');
  const stopped = await run(page, 'exhaustive');
  assert.match(stopped, /^Fails, as declared\. Counterexample in Broken: check in one transaction, write in another, exhaustive \(shortest, \d+ steps, schedule [A-Z0-9]+; not every schedule: stopped at its budget of 3 runs, \d+ distinct states and \d+ final states? reached, runs up to \d+ steps long; \d+ known branch(es)? left, the shallowest from step \d+; Continue goes on from there\)\.$/, stopped);
  await screenshot(page, 'search-stopped-at-budget');
  // Continue by mouse, then by keyboard, until nothing is left.
  let continues = 0;
  let text = stopped;
  while (await page.locator('#continue').isVisible()) {
    if (continues % 2 === 0) {
      await page.click('#continue');
    } else {
      await page.focus('#continue');
      await page.keyboard.press('Enter');
    }
    continues += 1;
    await page.locator('#run:enabled').waitFor({ timeout: 30000 });
    text = await page.locator('#run-status').textContent();
    assert.ok(continues < 10, text);
  }
  assert.ok(continues >= 2, `${continues} continues`);
  // The same counts and the same shortest counterexample as the whole search.
  assert.equal(text, whole);

  // A stopped search belongs to the scenario it ran on.
  await run(page, 'exhaustive');
  assert.equal(await page.locator('#continue').isVisible(), true);
  await page.click('#catalog [role="option"][data-scenario="idem-race"]');
  await page.locator('#catalog [role="option"][data-scenario="idem-race"][aria-selected="true"]').waitFor();
  await page.locator('#run:enabled').waitFor({ timeout: 30000 });
  assert.equal(await page.locator('#continue').isVisible(), false);
  await page.fill('#budget', '0');
  await page.click('#run');
  await page.locator('#run:enabled').waitFor({ timeout: 30000 });
  assert.equal(await page.locator('#run-status').textContent(), 'the budget must be a whole number from 1 to 1000000 (got 0)');
  await context.close();
});

test('split across 2 and 3 workers, the page proves on random designs what the command line proves', async () => {
  // tests/designs/split-sample: designs of `replayground fuzz --seed 11`,
  // with the command line's answers (tests/cli.rs keeps them true): the
  // verdict, whether a run loops, and a digest of the set of final states
  // that does not depend on the machine (their tables and outcomes).
  const folder = new URL('../designs/split-sample/', import.meta.url);
  const expected = JSON.parse(fs.readFileSync(new URL('expected.json', folder), 'utf8'));
  const designs = Object.keys(expected).map((name) => ({ name, source: fs.readFileSync(new URL(name, folder), 'utf8') }));
  assert.ok(designs.length >= 10, `${designs.length} designs`);
  const { context, page, seen } = await open('?s=idem-race');
  const answers = await page.evaluate(async (designs) => {
    const engine = await import('/js/engine.js');
    const answer = (report) => ({
      violated: report.counterexample != null,
      loops: report.loops,
      finalStates: report.stats.finalStates,
      finalDigest: report.finalDigest,
      complete: report.complete,
      workers: report.workers,
    });
    const out = {};
    for (const { name, source } of designs) {
      const scenario = { source, name: name.replace(/\.toml$/, '') };
      out[name] = {};
      for (const count of [2, 3]) {
        out[name][count] = answer(await engine.exploreSplit(scenario, { finalDigests: true }, null, count).promise);
      }
    }
    return out;
  }, designs);
  for (const [name, want] of Object.entries(expected)) {
    for (const count of ['2', '3']) {
      const got = answers[name][count];
      assert.equal(got.complete, true, `${name}, ${count} workers: incomplete`);
      assert.equal(got.workers, Number(count), `${name}: not split ${count} ways`);
      const { violated, loops, finalStates, finalDigest } = got;
      assert.deepEqual({ violated, loops, finalStates, finalDigest }, want, `${name}, split across ${count} workers`);
    }
  }
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('a long exhaustive search is split across the workers and proves what one worker proves, before and after the helpers warm up', async () => {
  const { context, page, seen } = await open('?s=idem-race');
  const cold = await page.evaluate(() => document.body.dataset.searchWorkers ?? 'not yet');
  const source = fs.readFileSync(new URL('../../src/scenarios/reach/three-producers-two-relays.toml', import.meta.url), 'utf8');
  await page.click('[data-action="new-design"]');
  await page.fill('#source', source);
  await page.click('[data-action="apply-source"]');
  await page.locator('#run:enabled').waitFor({ timeout: 30000 });
  await page.selectOption('#strategy', 'exhaustive');
  await page.fill('#budget', '1000000');
  const workers = await page.evaluate(() => Math.min(navigator.hardwareConcurrency || 1, 4));
  const searchWhole = async () => {
    await page.click('#run');
    if (workers > 1) {
      await page.locator('#run-status', { hasText: `split across ${workers} workers` }).waitFor({ timeout: 30000 });
    }
    await page.locator('#run:enabled').waitFor({ timeout: 180000 });
    const text = await page.locator('#run-status').textContent();
    // One worker reaches 2,982 final states with no violation (the release
    // tests and the command line say so); split, the same.
    assert.match(text, /^Holds, as declared\. No violation in Three producers and two relays, exhaustive \(every schedule covered: [\d,]+ runs, [\d,]+ distinct states, 2,982 final states, where/, text);
    if (workers > 1) assert.match(text, new RegExp(`; split across ${workers} workers, counts summed\\)`), text);
  };
  await searchWhole();
  if (workers > 1) {
    // The helpers start about a second after the page is ready and search
    // a small design; the body says when (cold: one could not).
    assert.equal(cold, 'not yet', 'the helpers warmed up before the page was ready');
    await page.locator('body[data-search-workers="warm"]').waitFor({ timeout: 30000 });
    await searchWhole();
  }
  assert.deepEqual(seen.errors, []);
  await context.close();
});
