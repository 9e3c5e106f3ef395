// The wasm exports called from JavaScript in Debian's Chromium, as a page or
// a documentation embed calls them: the reference scenarios pass, and bad
// input gets an Error with a sentence and changes nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openPage, serveAndLaunch } from './harness.mjs';

let page;
let seen;

// One page, with the engine loaded, for every test of this file.
serveAndLaunch(async (env) => {
  ({ page, seen } = await openPage(env.browser, env.server.url));
  await page.goto(env.server.url);
  await page.locator('#engine-status[data-state="ready"]').waitFor({ timeout: 30000 });
});

// The page's own wasm module (already instantiated by the page), inside page.evaluate.
const MODULE = '/pkg/replayground.js';

test('each reference idempotency scenario passes with the reference counts', async () => {
  const results = await page.evaluate(async (url) => { const m = await import(url); await m.default(); return ['idem-race', 'idem-scope', 'idem-failure', 'idem-lost-reply', 'idem-retention']
    .map((id) => {
      const run = m.runScenario(id, { strategy: 'random', seed: 7 });
      return [id, run.passed, run.checks.find((c) => c.name === '(effects, receipts)').actual];
    }); }, MODULE);
  assert.deepEqual(results, [
    ['idem-race', true, '(1, 1)'],
    ['idem-scope', true, '(4, 4)'],
    ['idem-failure', true, '(5, 5)'],
    ['idem-lost-reply', true, '(6, 6)'],
    ['idem-retention', true, '(7, 6)'],
  ]);
});

test('the explorer catches check-then-write from JavaScript', async () => {
  const report = await page.evaluate(async (url) => { const m = await import(url); await m.default(); return m.exploreScenario('idem-check-then-write'); }, MODULE);
  assert.equal(report.complete, true);
  assert.equal(report.counterexample.schedule, 'A6B3AB4');
  assert.ok(report.counterexample.explanation.some((s) => s.includes('because A had not committed yet')));
});

test('bad requests from JavaScript get an Error and leave the database byte for byte unchanged', async () => {
  const outcome = await page.evaluate(async (url) => {
    const m = await import(url);
    await m.default();
    const session = new m.IdempotencySession();
    const good = { tenant: 'north', operation: 'web-order', key: 'k', quantity: 2, now: 0 };
    session.execute(good);
    const before = Array.from(session.databaseBytes());
    const bad = [
      { ...good, quantity: 0 }, { ...good, quantity: -1 }, { ...good, quantity: 2.5 },
      { ...good, quantity: NaN }, { ...good, quantity: '2' }, { ...good, quantity: 2 ** 53 },
      { ...good, quantity: Infinity }, { ...good, key: '' }, { ...good, key: 'k'.repeat(256) },
      { ...good, key: 'x'.repeat(1 << 20) }, { ...good, key: '\uD800' },
      { tenant: 'north', operation: 'web-order', key: 'k', now: 0 },
      { ...good, tenant: 5 }, { ...good, extra: true }, null, undefined, 'north', 42, [good],
    ];
    const errors = bad.map((input) => {
      try {
        session.execute(input);
        return 'accepted';
      } catch (error) {
        return error instanceof Error ? error.message : `not an Error: ${error}`;
      }
    });
    const afterBytes = Array.from(session.databaseBytes());
    return { errors, unchanged: JSON.stringify(before) === JSON.stringify(afterBytes), counts: session.counts() };
  }, MODULE);
  assert.equal(outcome.errors.length, 19);
  for (const message of outcome.errors) {
    assert.match(message, /^invalid [a-z]+: /, message);
  }
  assert.match(outcome.errors[0], /positive whole number/);
  assert.match(outcome.errors[8], /Stripe limits keys to 255 characters/);
  assert.match(outcome.errors[10], /lone surrogate/);
  assert.equal(outcome.unchanged, true);
  assert.deepEqual(outcome.counts, { effects: 1, receipts: 1 });
  assert.deepEqual(seen.errors, [], 'no panic or console error');
});

test('bad scenario arguments from JavaScript get an Error', async () => {
  const errors = await page.evaluate(async (url) => { const m = await import(url); await m.default(); return [
    () => m.runScenario('nope'),
    () => m.runScenario('idem-race', { params: { attempts: 17 } }),
    () => m.runScenario('idem-race', { params: { clock: 5 } }),
    () => m.runScenario('idem-race', { strategy: 'replay', schedule: 'A0' }),
    () => m.runScenario('idem-race', { strategy: 'replay', schedule: 'Z' }),
    () => m.runScenario('idem-race', { strategy: 'fastest' }),
    () => m.runScenario(undefined),
    () => new m.Stepper('idem-race').step(-1),
    () => m.runScenario('idem-race', { trace: 'no' }),
    () => m.runScenario('idem-race', { strategy: 'replay', schedule: 'A6B6', trace: 0 }),
  ].map((call) => {
    try {
      call();
      return 'accepted';
    } catch (error) {
      return error.message;
    }
  }); }, MODULE);
  assert.deepEqual(errors.map((e) => e.split(':')[0]), [
    'invalid scenario', 'invalid attempts', 'invalid params', 'invalid schedule',
    'invalid schedule', 'invalid strategy', 'invalid scenario', 'invalid attempt',
    'invalid trace', 'invalid trace',
  ]);
});

test('a run without its trace has the same schedule, verdict and checks as with it', async () => {
  const runs = await page.evaluate(async (url) => {
    const m = await import(url);
    await m.default();
    return [true, false].flatMap((trace) => [
      m.runScenario('idem-check-then-write', { strategy: 'random', seed: 4, trace }),
      m.runScenario('idem-check-then-write', { strategy: 'replay', schedule: 'A6B3AB4', trace }),
    ]);
  }, MODULE);
  const [tracedRandom, tracedReplay, random, replay] = runs;
  for (const [traced, bare] of [[tracedRandom, random], [tracedReplay, replay]]) {
    assert.ok(traced.trace.length > 0);
    assert.equal(bare.trace, null);
    for (const key of ['schedule', 'steps', 'verdict', 'statuses', 'checks', 'passed']) {
      assert.deepEqual(bare[key], traced[key], key);
    }
  }
  assert.equal(replay.passed, false, 'the replayed counterexample still fails');
});

test('each reference outbox scenario passes from JavaScript, and the sweep has no failing point', async () => {
  const result = await page.evaluate(async (url) => {
    const m = await import(url);
    await m.default();
    const ids = m.scenarios().filter((e) => e.suite === 'outbox' && e.reference).map((e) => e.id);
    const runs = ids.map((id) => [id, m.runScenario(id, { strategy: 'pct', seed: 3 }).passed]);
    const sweep = m.crashSweep();
    const broken = m.crashSweep({ inbox: false });
    return { runs, points: sweep.length, failing: sweep.filter((r) => !r.passed).length, brokenFailing: broken.filter((r) => !r.passed).length };
  }, MODULE);
  assert.equal(result.runs.length, 7);
  assert.ok(result.runs.every(([, passed]) => passed), JSON.stringify(result.runs));
  assert.ok(result.points >= 13);
  assert.equal(result.failing, 0);
  assert.equal(result.brokenFailing, 4);
});

test('bad outbox inputs from JavaScript get an Error and leave both databases unchanged', async () => {
  const outcome = await page.evaluate(async (url) => {
    const m = await import(url);
    await m.default();
    const session = new m.OutboxSession();
    session.createOrder({ orderId: 'o1', amount: 100 });
    const before = Array.from(session.databaseBytes());
    const event = { eventId: 'order-created:o1', payload: { order_id: 'o1', amount: 100 } };
    const calls = [
      () => session.deliver({ subscriber: 'billing', event }),
      () => session.deliver({ subscriber: 'audit', event: { ...event, eventId: '' } }),
      () => session.deliver({ subscriber: 'audit', event: { ...event, payload: 'amount=100' } }),
      () => session.deliver({ subscriber: 'audit', event: { ...event, payload: [100] } }),
      () => session.deliver({ subscriber: 'audit', event: { ...event, payload: { order_id: 'o1', amount: 0 } } }),
      () => session.deliver({ subscriber: 'audit', event: { ...event, payload: { order_id: 'o1', amount: 2.5 } } }),
      () => session.deliver({ subscriber: 'audit', event: { ...event, payload: { order_id: 'o1', amount: '100' } } }),
      () => session.deliver({ subscriber: 'audit' }),
      () => session.createOrder({ orderId: '', amount: 1 }),
      () => session.createOrder({ orderId: 'o2', amount: -1 }),
      () => session.createOrder({ orderId: 'o2', amount: NaN }),
      () => session.createOrder(null),
    ];
    const errors = calls.map((call) => {
      try {
        call();
        return 'accepted';
      } catch (error) {
        return error.message;
      }
    });
    return { errors, unchanged: JSON.stringify(before) === JSON.stringify(Array.from(session.databaseBytes())) };
  }, MODULE);
  assert.equal(outcome.errors.length, 12);
  for (const message of outcome.errors) assert.match(message, /^invalid [a-zA-Z_]+: /, message);
  assert.match(outcome.errors[0], /unknown subscriber "billing"; use audit or search/);
  assert.match(outcome.errors[2], /payload: expected an object/);
  assert.equal(outcome.unchanged, true);
});

test('every export answers hostile input with an Error or a valid result, never a panic', async () => {
  const consoleBefore = seen.errors.length;
  const outcome = await page.evaluate(async (url) => {
    const m = await import(url);
    await m.default();
    let nested = { x: 1 };
    for (let i = 0; i < 50; i += 1) nested = { x: nested };
    const hostile = [
      undefined, null, NaN, Infinity, -Infinity, -1, 2.5, 2 ** 53, 2 ** 60, '', 'x'.repeat(1 << 20),
      '\uD800', '\uDC00x', "'; DROP TABLE receipts; --", 'SELECT * FROM sqlite_schema', { }, [], nested,
      () => 1, 10n, true, { params: nested }, { strategy: 'replay', schedule: 'A'.repeat(300000) },
    ];
    const idem = new m.IdempotencySession();
    idem.execute({ tenant: 'north', operation: 'web-order', key: 'k', quantity: 2, now: 0 });
    const outbox = new m.OutboxSession();
    outbox.createOrder({ orderId: 'o1', amount: 100 });
    const idemBefore = JSON.stringify(Array.from(idem.databaseBytes()));
    const outboxBefore = JSON.stringify(Array.from(outbox.databaseBytes()));
    const calls = {
      roundTrip: (v) => m.roundTrip(v),
      'runScenario(id)': (v) => m.runScenario(v),
      'runScenario(options)': (v) => m.runScenario('idem-race', v),
      'runScenario(params)': (v) => m.runScenario('idem-race', { params: v }),
      'runScenario(schedule)': (v) => m.runScenario('idem-race', { strategy: 'replay', schedule: v }),
      'exploreScenario(id)': (v) => m.exploreScenario(v),
      'exploreScenario(runs)': (v) => m.exploreScenario('idem-race', { strategy: 'random', runs: v }),
      'Exploration(id)': (v) => new m.Exploration(v),
      'Exploration.advance': (v) => new m.Exploration('idem-race', {}).advance(v),
      'Stepper(id)': (v) => new m.Stepper(v),
      'Stepper(options)': (v) => new m.Stepper('idem-race', v),
      'Stepper.step': (v) => new m.Stepper('idem-race').step(v),
      'Stepper.setSchedule': (v) => new m.Stepper('idem-race').setSchedule(v),
      crashSweep: (v) => m.crashSweep(v),
      'benchEngine(rounds)': (v) => (v === undefined || v === null ? 'skipped' : m.benchEngine(v, 1)),
      'warmUp(ms)': (v) => m.warmUp(v),
      'IdempotencySession.execute': (v) => idem.execute(v),
      'OutboxSession.createOrder': (v) => outbox.createOrder(v),
      'OutboxSession.deliver': (v) => outbox.deliver(v),
    };
    const results = [];
    for (const [name, call] of Object.entries(calls)) {
      for (const [i, value] of hostile.entries()) {
        try {
          call(value);
          results.push([name, i, 'accepted']);
        } catch (error) {
          results.push([name, i, error instanceof Error && !(error instanceof WebAssembly.RuntimeError)
            ? `Error: ${error.message}` : `NOT AN ERROR: ${String(error)}`]);
        }
      }
    }
    return {
      results,
      idemUnchanged: JSON.stringify(Array.from(idem.databaseBytes())) === idemBefore,
      outboxUnchanged: JSON.stringify(Array.from(outbox.databaseBytes())) === outboxBefore,
    };
  }, MODULE);
  const bad = outcome.results.filter(([, , r]) => r.startsWith('NOT AN ERROR'));
  assert.deepEqual(bad, [], 'every failure is an Error with a message, not a trap');
  const errors = outcome.results.filter(([, , r]) => r.startsWith('Error'));
  assert.ok(errors.length > 300, `${errors.length} refusals`);
  for (const [name, i, r] of errors) assert.match(r, /^Error: (invalid [a-zA-Z ]+: |the exploration)/, `${name} #${i}: ${r.slice(0, 200)}`);
  assert.equal(outcome.idemUnchanged, true);
  assert.equal(outcome.outboxUnchanged, true);
  const panics = seen.errors.slice(consoleBefore).filter((e) => /panicked|unreachable/.test(e));
  assert.deepEqual(panics, [], 'no panic reached the console');
  console.log(`hostile inputs: ${outcome.results.length} calls, ${errors.length} refused with an Error, no panic`);
});

test('the exports take a scenario file where they take an id', async () => {
  const outcome = await page.evaluate(async (url) => {
    const m = await import(url);
    await m.default();
    const source = [
      'title = "Broken: a seat booked by check-then-insert <b>bold</b>"',
      'fails = true',
      '[databases.theatre]',
      'schema = "CREATE TABLE bookings (seat INTEGER NOT NULL, client TEXT NOT NULL);"',
      '[[attempts]]',
      'replicas = 2',
      'steps = [',
      '  { name = "check", sql = "SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM bookings WHERE seat = 7)", on.none = { finish = "sold-out" } },',
      '  { name = "book", sql = "INSERT INTO bookings VALUES (7, :label)", on.ok = { finish = "booked" } },',
      ']',
      '[[checks]]',
      'name = "seat 7 is booked once"',
      'sql = "SELECT count(*) FROM bookings WHERE seat = 7"',
      'expect = 1',
    ].join('\n');
    const run = m.runScenario({ source, name: 'seats' }, { strategy: 'round-robin' });
    const report = m.exploreScenario({ source, name: 'seats' });
    const stepper = new m.Stepper({ source }, {});
    const state = stepper.step(0);
    stepper.free();
    let error = '';
    try { m.runScenario({ source: 'title = "x"\n[databases.app]\nschema = 5\n' }); } catch (e) { error = e.message; }
    let unknown = '';
    try { m.runScenario({ source, extra: 1 }); } catch (e) { unknown = e.message; }
    return {
      scenario: run.scenario, passed: run.passed, counterexample: report.counterexample?.schedule,
      complete: report.complete, expectedToFail: state.expectedToFail, error, unknown,
    };
  }, MODULE);
  assert.equal(outcome.scenario, 'seats');
  assert.equal(outcome.passed, false, 'round-robin interleaves the check and the booking');
  assert.equal(outcome.complete, true);
  assert.equal(outcome.counterexample, 'ABAB');
  assert.equal(outcome.expectedToFail, true);
  assert.match(outcome.error, /^invalid scenario: line 3, column 10: /);
  assert.match(outcome.unknown, /^invalid scenario: unknown field "extra"; expected source, name$/);
});
