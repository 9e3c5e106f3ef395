// The exported API as a library user calls it from JS: every call crosses
// the boundary (its argument converted in, its result object out). Each
// entry makes a fresh object and returns one call. The benchmark page times
// them (bench.js); scripts/split/calls.mjs counts what they run, to choose
// where the module is split. `wasm` is the module's glue (its exports).
/** @param {typeof import('../pkg/replayground.js')} wasm */
export function calls(wasm) {
  return {
    'IdempotencySession.execute(), a new key each call': () => {
      const session = new wasm.IdempotencySession();
      let key = 0;
      return () => session.execute({ tenant: 'north', operation: 'web-order', key: `k${key += 1}`, quantity: 2, now: 0 });
    },
    'IdempotencySession.execute(), a replay of one key': () => {
      const session = new wasm.IdempotencySession();
      const request = { tenant: 'north', operation: 'web-order', key: 'bench-key', quantity: 2, now: 0 };
      session.execute(request);
      return () => session.execute(request);
    },
    'OutboxSession.createOrder(), a new order each call': () => {
      const session = new wasm.OutboxSession();
      let n = 0;
      return () => session.createOrder({ orderId: `o${n += 1}`, amount: 5 });
    },
    'OutboxSession.createOrder() then relay() of its event': () => {
      const session = new wasm.OutboxSession();
      let n = 0;
      return () => { session.createOrder({ orderId: `r${n += 1}`, amount: 5 }); session.relay(); };
    },
    'OutboxSession.deliver(), a new event each call': () => {
      const session = new wasm.OutboxSession();
      let n = 0;
      return () => {
        n += 1;
        session.deliver({ subscriber: 'audit', event: { eventId: `e${n}`, payload: { order_id: `order:${n}`, amount: 5 } } });
      };
    },
    'Exploration.advance(1): one random run of the 2-attempt race': () => {
      const search = new wasm.Exploration('idem-race', { params: { attempts: 2 }, strategy: 'random', runs: 1e7, seed: 1 });
      return () => search.advance(1);
    },
    'Stepper.step(): the 2-attempt race stepped to its end, a new Stepper per run': () => {
      let stepper = null;
      let runnable = [];
      return () => {
        if (runnable.length === 0) {
          stepper = new wasm.Stepper('idem-race', { params: { attempts: 2 } });
          ({ runnable } = stepper.state());
        }
        ({ runnable } = stepper.step(runnable[0]));
      };
    },
  };
}

// A design of two attempts of `steps` statements each, every statement a
// recursive query that counts to `rows`: a long run whose steps are all
// heavy (Stepper.step() replayed its run from the start at every step, and
// took 47 s for these 400 steps in Node). The benchmark and the end-to-end
// suite step it by hand.
export function longDesign(steps = 200, rows = 2000) {
  const statement = (letter, i) => `  { name = "${letter}${i}", database = "app", sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${rows}) SELECT count(*) AS n FROM c" },`;
  const attempt = (letter) => ['[[attempts]]', 'steps = [', ...Array.from({ length: steps }, (_, i) => statement(letter, i)), ']'];
  return [
    `title = "${2 * steps} heavy steps"`,
    '',
    '[databases.app]',
    'schema = "CREATE TABLE t (k INTEGER PRIMARY KEY);"',
    '',
    ...attempt('a'),
    '',
    ...attempt('b'),
    '',
  ].join('\n');
}

// Stepping by hand, timed step by step: each scenario stepped to its end on
// a fresh Stepper (the attempts in turn), every call timed: Stepper.step()
// (answered with the whole view) and Stepper.stepChanges() (answered with
// the new step, as the page asks); then, for comparison, what a step cost
// when the stepper replayed its run from the start (a fresh Stepper set to
// the schedule so far, one replay) at a few depths. Milliseconds.
/** @param {typeof import('../pkg/replayground.js')} wasm */
export function stepping(wasm) {
  const long = longDesign();
  /** @type {Array<[string, () => import('../pkg/replayground.js').Stepper]>} */
  const scenarios = [
    ['the 2-attempt race', () => new wasm.Stepper('idem-race', { params: { attempts: 2 } })],
    ['400 heavy steps', () => new wasm.Stepper({ source: long }, {})],
  ];
  const sorted = (values) => [...values].sort((a, b) => a - b);
  const figures = (times) => {
    const s = sorted(times);
    return { totalMs: times.reduce((a, b) => a + b, 0), medianMs: s[s.length >> 1], maxMs: s[s.length - 1] };
  };
  return scenarios.map(([name, make]) => {
    // Each call's time, and the schedule after it.
    /** @param {'step' | 'stepChanges'} method */
    const stepped = (method) => {
      const stepper = make();
      let view = stepper.state();
      const times = [];
      const schedules = [];
      while (view.runnable.length > 0) {
        const attempt = view.runnable[times.length % view.runnable.length];
        const start = performance.now();
        view = stepper[method](attempt);
        times.push(performance.now() - start);
        schedules.push(view.schedule);
      }
      stepper.free();
      return { times, schedules };
    };
    const { times, schedules } = stepped('step');
    const changes = stepped('stepChanges');
    const depths = [...new Set([1, 100, 200, 300, schedules.length].filter((d) => d <= schedules.length))];
    const replayedFromStart = Object.fromEntries(depths.map((depth) => {
      const fresh = make();
      const start = performance.now();
      fresh.setSchedule(schedules[depth - 1]);
      const ms = performance.now() - start;
      fresh.free();
      return [depth, ms];
    }));
    return {
      name,
      steps: times.length,
      step: figures(times),
      stepChanges: figures(changes.times),
      replayedFromStartMs: replayedFromStart,
    };
  });
}
