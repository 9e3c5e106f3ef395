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
  // An embed given no schedule searched the design first: a passing run
  // ends with what the search found against the design's declaration.
  await player(page, 'crash').locator('button[data-control="run"]').click();
  await player(page, 'crash').locator('.verdict[data-kind="pass"]').waitFor();
  assert.match(await player(page, 'crash').locator('.verdict').textContent(), / Searched: holds, as declared\.$/);
  // One given a schedule says nothing of the others.
  assert.doesNotMatch(await player(page, 'race').locator('.verdict').textContent(), /Searched/);
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
    [{ scenario: 'idem-race', params: '{"attempts":17}' }, /^replayground: invalid attempts: 17 is out of range/],
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
  assert.match(await bare.textContent(), /give a scenario: scenario="idem-race", src="design.toml"/);
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

// Packs a scenario source as the `source` attribute and embed.html take it,
// in the page (CompressionStream), with the page's own code.
async function packed(page, source) {
  return page.evaluate(async (text) => (await import('/js/parts/pack.js')).pack(text), source);
}

test('an embed runs a scenario file: inline, from src, and packed in embed.html', async () => {
  const { context, page, seen } = await openPage(env.browser, env.server.url);
  await page.goto(`${env.server.url}docs/`);
  // Inline: the explorer's counterexample, played to the end, fails.
  assert.equal(await settled(player(page, 'inline')), 'ready');
  assert.equal(await player(page, 'inline').locator('.title').textContent(), 'A seat booked by check-then-insert');
  await player(page, 'inline').locator('button[data-control="run"]').click();
  await player(page, 'inline').locator('.verdict[data-kind="fail"]').waitFor();
  assert.match(await player(page, 'inline').locator('.verdict').textContent(), /seat 7 is booked once: expected 1, got 2/);
  // From src, on the same origin, opened at its second step.
  assert.equal(await settled(player(page, 'src')), 'ready');
  assert.equal(await player(page, 'src').locator('.step').count(), 2);
  assert.equal(await player(page, 'src').locator('.title').textContent(), 'Broken: a seat booked by check-then-insert');
  await player(page, 'inline').scrollIntoViewIfNeeded();
  await screenshot(page, 'docs-own-design', false);
  // Packed, in embed.html's query.
  const source = await (await fetch(`${env.server.url}docs/seats.toml`)).text();
  const frame = await context.newPage();
  await frame.goto(`${env.server.url}embed.html?source=${await packed(page, source)}&step=3`);
  const inner = frame.locator('replayground-scenario');
  await inner.locator('.frame[data-state="ready"]').waitFor({ timeout: 30000 });
  assert.equal(await inner.locator('.step').count(), 3);
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.foreignRequests, []);
  await context.close();
});

test('a hostile scenario file in an embed is text, bounded, and leaves the page working', async () => {
  const { context, page, seen } = await openPage(env.browser, env.server.url);
  await page.goto(`${env.server.url}docs/`);
  await settled(player(page, 'race'));
  const hostile = `
title = "<img src=x onerror=\\"window.pwned = 1\\"><b>bold</b>"
fails = true
[databases.app]
schema = "CREATE TABLE t (x);"
[[attempts]]
steps = [ { name = "<i>forever</i>", sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", note = "<script>window.pwned = 2</script>" } ]
[[attempts]]
steps = [ { name = "escape", sql = "ATTACH '/etc/passwd' AS p" } ]
`;
  const cases = {
    inline: hostile,
    twoSources: null,
    crossOrigin: null,
    badPacked: null,
    bomb: null,
  };
  await page.evaluate(async ({ text, bomb }) => {
    const add = (name, setup) => {
      const element = document.createElement('replayground-scenario');
      element.dataset.example = name;
      setup(element);
      document.querySelector('main').append(element);
    };
    add('hostile', (e) => {
      const script = document.createElement('script');
      script.type = 'application/toml';
      script.textContent = text;
      e.append(script);
    });
    add('two-sources', (e) => { e.setAttribute('scenario', 'idem-race'); e.setAttribute('src', 'seats.toml'); });
    add('cross-origin', (e) => e.setAttribute('src', 'https://example.com/design.toml'));
    add('bad-packed', (e) => e.setAttribute('source', 'not base64url!'));
    add('bomb', (e) => e.setAttribute('source', bomb));
  }, { text: hostile, bomb: await packed(page, 'x'.repeat(300 * 1024)) });
  assert.ok(Object.keys(cases).length === 5);
  // The hostile file runs: its HTML is text, its endless query is stopped.
  assert.equal(await settled(player(page, 'hostile')), 'ready');
  assert.equal(await player(page, 'hostile').locator('.title').textContent(), '<img src=x onerror="window.pwned = 1"><b>bold</b>');
  assert.equal(await player(page, 'hostile').locator('.frame').locator('img, b, i, script').count(), 0);
  await player(page, 'hostile').locator('button[data-control="run"]').click();
  await player(page, 'hostile').locator('.verdict').waitFor();
  await player(page, 'hostile').locator('.step').nth(1).waitFor();
  const steps = await player(page, 'hostile').locator('.step').allTextContents();
  assert.ok(steps.some((s) => s.includes('ran a statement of more than 20000000 SQLite instructions')), `${steps.join('\n')} / ${await player(page, 'hostile').locator('.frame').textContent()}`);
  assert.ok(steps.some((s) => s.includes('unable to open database')), steps.join('\n'));
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  // Each wrong source says what is wrong, in the embed.
  const message = async (name) => {
    assert.equal(await settled(player(page, name)), 'error', name);
    return player(page, name).locator('.message').textContent();
  };
  assert.match(await message('two-sources'), /give one scenario, not scenario and src/);
  assert.match(await message('cross-origin'), /src must be on this page's origin/);
  assert.match(await message('bad-packed'), /not base64url/);
  assert.match(await message('bomb'), /unpacks to more than 262144 bytes/);
  // The page's other players still work.
  await player(page, 'race').locator('button[data-control="run"]').click();
  await player(page, 'race').locator('.verdict[data-kind="pass"]').waitFor();
  assert.deepEqual(seen.foreignRequests, []);
  await context.close();
});

// A page of one's own beside the project's, as a reader of the embedding
// docs writes it: its own style attributes and inline script, two embeds.
test('a host page of its own, with inline styles and script, embeds scenarios under the policy the docs give', async () => {
  const { writeFileSync, rmSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const name = `host-page-test-${process.pid}.html`;
  const file = fileURLToPath(new URL(`../../www/${name}`, import.meta.url));
  writeFileSync(file, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>My notes</title><link rel="icon" href="data:,">
<script type="module" src="/js/embed.js"></script></head>
<body style="background: #fdf6e3">
<p style="color: #b58900" id="mine">My notes on idempotency.</p>
<script>document.getElementById('mine').dataset.inline = 'ran';</script>
<replayground-scenario data-example="race" scenario="idem-check-then-write" schedule="A6B3AB4"></replayground-scenario>
<replayground-scenario data-example="seats" src="/docs/seats.toml"></replayground-scenario>
</body></html>
`);
  try {
    const { context, page, seen } = await openPage(env.browser, env.server.url);
    const violations = [];
    await page.exposeFunction('cspViolation', (v) => violations.push(v));
    await page.addInitScript(() => document.addEventListener('securitypolicyviolation', (e) => window.cspViolation(`${e.violatedDirective}: ${e.blockedURI}`)));
    const response = await page.goto(`${env.server.url}${name}`);
    assert.match(response.headers()['content-security-policy'], /style-src 'self' 'unsafe-inline'/);
    assert.equal(await settled(player(page, 'race')), 'ready');
    assert.equal(await settled(player(page, 'seats')), 'ready');
    await player(page, 'race').locator('button[data-control="run"]').click();
    await player(page, 'race').locator('.verdict[data-kind="fail"]').waitFor();
    assert.equal(await page.locator('#mine').getAttribute('data-inline'), 'ran');
    assert.equal(await page.locator('#mine').evaluate((p) => getComputedStyle(p).color), 'rgb(181, 137, 0)');
    assert.deepEqual(violations, []);
    assert.deepEqual(seen.errors, []);
    // The project's own pages keep their strict policy.
    const own = await page.goto(`${env.server.url}docs/`);
    assert.match(own.headers()['content-security-policy'], /style-src 'self';/);
    await context.close();
  } finally {
    rmSync(file, { force: true });
  }
});
