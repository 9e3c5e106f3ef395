// Documentation embeds in Debian's Chromium: the docs page's players run
// independently on one engine, the iframe embed works, and a broken
// attribute shows its message in the embed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openPage, screenshot, serveAndLaunch } from './harness.mjs';

const env = serveAndLaunch();

// The player element of an example on the docs page.
const player = (page, example) => page.locator(`replayground-scenario[data-example="${example}"]`);

// Waits until a player has drawn itself (or its message).
async function settled(locator) {
  await locator.locator('.frame:not([data-state="loading"])').waitFor({ timeout: 30000 });
  return locator.locator('.frame').getAttribute('data-state');
}

test('the docs page runs several embeds independently on one engine', async () => {
  const { context, page, seen } = await openPage(env.browser, env.server.url);
  await page.goto(`${env.server.url}docs/`);
  const examples = ['race', 'broken', 'retention', 'crash', 'history'];
  for (const example of examples) {
    assert.equal(await settled(player(page, example)), 'ready', example);
  }
  assert.ok(examples.length >= 3);
  // The broken design opens at its 8th step, as its attribute asks.
  assert.equal(await player(page, 'broken').locator('.step').count(), 8);
  const before = await Promise.all(examples.map((e) => player(page, e).locator('.step').count()));
  await player(page, 'race').locator('button[data-control="step"]').click();
  await player(page, 'race').locator('.step').nth(before[0]).waitFor();
  await player(page, 'race').locator('button[data-control="step"]').click();
  await player(page, 'race').locator('.step').nth(before[0] + 1).waitFor();
  const afterSteps = await Promise.all(examples.map((e) => player(page, e).locator('.step').count()));
  assert.equal(afterSteps[0], before[0] + 2);
  assert.deepEqual(afterSteps.slice(1), before.slice(1), 'the other embeds did not move');
  // The second step of the race is B being refused the lock.
  assert.ok(await player(page, 'race').locator('.step.blocked').count() >= 1);
  await player(page, 'broken').locator('button[data-control="run"]').click();
  await player(page, 'broken').locator('.verdict[data-kind="fail"]').waitFor();
  assert.match(await player(page, 'broken').locator('.verdict').textContent(), /\(effects, receipts\): expected \(1, 1\), got \(2, 1\)/);
  await player(page, 'race').locator('button[data-control="run"]').click();
  await player(page, 'race').locator('.verdict[data-kind="pass"]').waitFor();
  await screenshot(page, 'docs-page');
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.foreignRequests, []);
  await context.close();
});

test('the iframe embed works from its URL parameters', async () => {
  const { context, page, seen } = await openPage(env.browser, env.server.url);
  await page.goto(`${env.server.url}docs/`);
  const frame = page.frameLocator('iframe.embed-frame');
  const inner = frame.locator('replayground-scenario');
  await inner.locator('.frame[data-state="ready"]').waitFor({ timeout: 30000 });
  assert.equal(await inner.locator('.step').count(), 7);
  await inner.locator('button[data-control="run"]').click();
  await inner.locator('.verdict[data-kind="pass"]').waitFor();
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('a broken attribute shows its message in the embed', async () => {
  const { context, page, seen } = await openPage(env.browser, env.server.url);
  await page.goto(`${env.server.url}docs/`);
  await settled(player(page, 'crash'));
  const cases = [
    [{ scenario: 'nope' }, /^replayground: unknown scenario "nope"; known: idem-race/],
    [{ scenario: 'idem-race', params: '{attempts:2}' }, /^replayground: the params attribute must be JSON/],
    [{ scenario: 'idem-race', params: '{"attempts":9}' }, /^replayground: invalid attempts: 9 is out of range/],
    [{ scenario: 'idem-race', params: '{}', controls: 'step fly' }, /^replayground: unknown control "fly"/],
    [{ scenario: 'idem-race', controls: 'step', schedule: 'A0' }, /^replayground: the schedule attribute does not fit scenario idem-race: invalid schedule/],
    [{ scenario: 'idem-check-then-write', schedule: 'A99' }, /^replayground: the schedule attribute does not fit scenario idem-check-then-write: invalid schedule: step 8 does not fit/],
  ];
  for (const [attributes, expected] of cases) {
    await player(page, 'crash').evaluate((element, attrs) => {
      element.removeAttribute('params');
      element.removeAttribute('controls');
      element.removeAttribute('schedule');
      for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, value);
    }, attributes);
    const frame = player(page, 'crash').locator('.frame[data-state="error"]');
    await frame.waitFor({ timeout: 30000 });
    assert.match(await frame.textContent(), expected);
  }
  assert.deepEqual(seen.errors, [], 'no uncaught exception');
  // An embed without any attribute also explains itself.
  await page.evaluate(() => document.body.append(document.createElement('replayground-scenario')));
  const bare = page.locator('replayground-scenario:not([data-example]) .frame[data-state="error"]');
  await bare.waitFor();
  assert.match(await bare.textContent(), /the scenario attribute is required/);
  await context.close();
});

test("an embed without a schedule shows the scenario's point, in the page's words, with icons that render", async () => {
  const { context, page, seen } = await openPage(env.browser, env.server.url);
  // A correct design: a round-robin run, where the attempts contend for the lock.
  await page.goto(`${env.server.url}embed.html?scenario=idem-race&params=${encodeURIComponent('{"attempts":3}')}`);
  const race = page.locator('replayground-scenario');
  await race.locator('.frame[data-state="ready"]').waitFor({ timeout: 30000 });
  assert.deepEqual(await race.locator('.lane-status').allTextContents(), ['can step', 'can step', 'can step']);
  await race.locator('button[data-control="run"]').click();
  await race.locator('.verdict[data-kind="pass"]').waitFor();
  assert.ok(await race.locator('.step.blocked').count() >= 1, 'the default schedule shows contention');
  // Every control carries an SVG icon and a word; none depends on a font's glyphs.
  for (const control of ['step', 'run', 'reset']) {
    const button = race.locator(`button[data-control="${control}"]`);
    assert.equal(await button.locator('svg.icon').count(), 1, control);
    assert.match(await button.textContent(), /^ (Step|Run|Reset)$/);
  }
  // The page's vocabulary: "can step" / "waiting for a lock", never "runnable/blocked".
  await race.locator('button[data-control="reset"]').click();
  await race.locator('button[data-control="step"]').click();
  await race.locator('button[data-control="step"]').click();
  const words = await race.locator('.lane-status').allTextContents();
  for (const word of words) assert.doesNotMatch(word, /^(runnable|blocked)$/, word);
  // A failing design opens on its shortest counterexample.
  await page.goto(`${env.server.url}embed.html?scenario=idem-check-then-write`);
  const broken = page.locator('replayground-scenario');
  await broken.locator('.frame[data-state="ready"]').waitFor({ timeout: 30000 });
  await broken.locator('button[data-control="run"]').click();
  await broken.locator('.verdict[data-kind="fail"]').waitFor();
  assert.equal(await broken.locator('.step').count(), 14, 'A6B3AB4 has 14 steps');
  await screenshot(page, 'embed-counterexample');
  assert.deepEqual(seen.errors, []);
  await context.close();
});
