// The engine adapter: the only module that knows the wasm exports.
// The rest of the page is wasm-agnostic and talks to these functions.
import init, * as wasm from '../pkg/replayground.js';

let loading = null;

// Loads and instantiates the wasm module once; later calls share it.
export function load() {
  loading ??= init().then(() => wasm);
  return loading;
}

// Crate and SQLite versions of the loaded module: { replayground, sqlite, sqliteSourceId }.
export async function versions() {
  return (await load()).versions();
}

// Writes `note` through connection A and reads it back through connection B.
export async function roundTrip(note) {
  return (await load()).roundTrip(note);
}

// The scenario catalog: [{ id, pattern, title, explanation, fails, params, reference }].
export async function scenarios() {
  return (await load()).scenarios();
}

// The response profiles side by side.
export async function profiles() {
  return (await load()).profiles();
}

// Runs a scenario once: { params, strategy, seed, depth, schedule } -> result with trace.
export async function runScenario(id, options) {
  return (await load()).runScenario(id, options);
}

// A sliced search: call advance(runs) until done, then report().
export async function exploration(id, options) {
  return new (await load()).Exploration(id, options);
}

// Manual stepping of a scenario: step(attempt), undo(), setSchedule(text), state().
export async function stepper(id, options) {
  return new (await load()).Stepper(id, options);
}

// A database of receipts that takes single requests.
export async function idempotencySession() {
  return new (await load()).IdempotencySession();
}

// Measures the engine in this browser; see `replayground bench` for the native twin.
export async function benchEngine(rounds, iterations) {
  return (await load()).benchEngine(rounds, iterations);
}
