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

// Measures the engine in this browser; see `replayground bench` for the native twin.
export async function benchEngine(rounds, iterations) {
  return (await load()).benchEngine(rounds, iterations);
}
