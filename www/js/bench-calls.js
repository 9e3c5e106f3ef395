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
