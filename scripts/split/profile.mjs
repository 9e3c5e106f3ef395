// Which functions of a whole (unsplit) module a first visit of the
// playground's permalink runs before the page is interactive: V8 compiles a
// function lazily on its first call, so a trace of its compile events names
// every function that ran. Prints their indices as JSON.
// Usage: node profile.mjs WWW_DIR (a copy of www/ whose pkg holds the whole module)
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { PERMALINK, startServer, traceFirstVisit } = await import(path.join(root, 'tests', 'e2e', 'harness.mjs'));
const server = await startServer(process.argv[2]);
try {
  const { events, until } = await traceFirstVisit(server.url + PERMALINK, ['v8.wasm']);
  if (until === undefined) throw new Error('the trace has no replayground-interactive mark');
  const functions = [...new Set(events
    .filter((e) => e.name === 'wasm.CompileLazy' && e.ts <= until && Number.isInteger(e.args?.func_index))
    .map((e) => e.args.func_index))].sort((a, b) => a - b);
  if (functions.length < 100) throw new Error(`the trace shows ${functions.length} functions compiled lazily`);
  process.stdout.write(`${JSON.stringify(functions)}\n`);
} finally {
  server.stop();
}
