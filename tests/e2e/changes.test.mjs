// A stepper answers a step or an undo with what changed (Stepper.stepChanges,
// Stepper.undoChanges), and the page's adapter puts the whole view together
// (www/js/parts/changes.js). Along seeded random walks of steps, undos and
// jumps, on built-ins and a long design, the view put together is the whole
// view Stepper.step and Stepper.undo give, field for field. In Node.js, on
// the module the page loads.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = path.join(root, 'www/pkg');
const m = await import(path.join(pkg, 'replayground.js'));
m.initSync({ module: readFileSync(path.join(pkg, 'replayground_bg.wasm')) });
m.provideRest(readFileSync(path.join(pkg, 'replayground_rest.wasm')));
const { withChanges } = await import(path.join(root, 'www/js/parts/changes.js'));
const { longDesign } = await import(path.join(root, 'www/js/bench-calls.js'));

// A small seeded generator (mulberry32), so that a failure can be replayed.
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Walks `scenario` with two steppers, one answering whole views and one
// answering changes; returns how many views were compared.
function walk(scenario, options, seed, moves) {
  const whole = new m.Stepper(scenario, options);
  const parts = new m.Stepper(scenario, options);
  const next = random(seed);
  let expected = whole.state();
  let view = parts.state();
  assert.deepEqual(view, expected);
  let compared = 1;
  for (let i = 0; i < moves; i += 1) {
    const roll = next();
    if (roll < 0.2 && expected.trace.length > 0) {
      expected = whole.undo();
      view = withChanges(view, parts.undoChanges());
    } else if (roll < 0.25 && expected.trace.length > 1) {
      // A jump back, as a link or Reset does: a whole view.
      const schedule = expected.schedule;
      expected = whole.setSchedule('');
      view = parts.setSchedule('');
      assert.deepEqual(view, expected, `${seed}: reset`);
      expected = whole.setSchedule(schedule);
      view = parts.setSchedule(schedule);
    } else if (expected.runnable.length > 0) {
      const attempt = expected.runnable[Math.floor(next() * expected.runnable.length)];
      expected = whole.step(attempt);
      view = withChanges(view, parts.stepChanges(attempt));
    } else {
      expected = whole.undo();
      view = withChanges(view, parts.undoChanges());
    }
    assert.deepEqual(view, expected, `seed ${seed}, move ${i + 1}`);
    compared += 1;
  }
  // A step refused changes neither.
  const idle = expected.statuses.findIndex((_, a) => !expected.runnable.includes(a));
  if (idle >= 0) {
    assert.throws(() => parts.stepChanges(idle), /cannot take a step now/);
    assert.deepEqual(withChanges(view, parts.undoChanges()), whole.undo());
  }
  whole.free();
  parts.free();
  return compared;
}

test('a view put together from changes is the whole view, along random walks', () => {
  let compared = 0;
  for (const id of ['idem-race', 'idem-check-then-write', 'outbox-crash-sweep-no-inbox', 'outbox-two-relays', 'idem-power-loss']) {
    for (const seed of [1, 2, 3]) compared += walk(id, {}, seed, 60);
  }
  compared += walk({ source: longDesign(20, 200) }, {}, 9, 120);
  assert.ok(compared > 1000, `${compared} views compared`);
});

test('a step answered with changes holds the new step only, however long the run', () => {
  const stepper = new m.Stepper({ source: longDesign(30, 10) }, {});
  let view = stepper.state();
  assert.equal(view.traceFrom, 0);
  assert.ok('initialTables' in view);
  for (let i = 0; i < 60; i += 1) {
    const changes = stepper.stepChanges(i % 2);
    assert.equal(changes.traceFrom, i);
    assert.equal(changes.trace.length, 1);
    assert.equal(changes.trace[0].index, i);
    assert.equal(changes.explanation.length, 1);
    assert.ok(!('initialTables' in changes));
    view = withChanges(view, changes);
  }
  const back = stepper.undoChanges();
  assert.equal(back.traceFrom, 59);
  assert.deepEqual(back.trace, []);
  assert.deepEqual(withChanges(view, back), stepper.state());
  stepper.free();
});
