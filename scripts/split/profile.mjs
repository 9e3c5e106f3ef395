// Which functions of a whole (unsplit) module a first visit of the
// playground's permalink runs before the page is interactive: V8 compiles a
// function lazily on its first call, so a trace of its compile events names
// every function that ran. Prints their indices as JSON.
// Usage: node profile.mjs WWW_DIR (a copy of www/ whose pkg holds the whole module)
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { launchBrowser } = await import(path.join(root, 'tests', 'e2e', 'harness.mjs'));
// The benchmark's permalink: the first visit the split is measured by.
const PERMALINK = '?s=idem-check-then-write&schedule=A6B3AB4';
const server = spawn('python3', [path.join(root, 'scripts', 'serve.py'), '--root', process.argv[2], '--port', '0'],
  { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve) => {
  let out = '';
  server.stdout.on('data', (c) => { out += c; const m = out.match(/at (http:\/\/127\.0\.0\.1:\d+\/)/); if (m) resolve(m[1]); });
});
const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  await browser.startTracing(page, { categories: ['v8.wasm', 'blink.user_timing'] });
  await page.goto(url + PERMALINK);
  await page.locator('body[data-ready="true"]').waitFor({ state: 'attached', timeout: 60000 });
  const trace = JSON.parse((await browser.stopTracing()).toString('utf8'));
  const events = Array.isArray(trace) ? trace : trace.traceEvents;
  const until = events.find((e) => e.name === 'replayground-interactive')?.ts;
  if (until === undefined) throw new Error('the trace has no replayground-interactive mark');
  const functions = [...new Set(events
    .filter((e) => e.name === 'wasm.CompileLazy' && e.ts <= until && Number.isInteger(e.args?.func_index))
    .map((e) => e.args.func_index))].sort((a, b) => a - b);
  if (functions.length < 100) throw new Error(`the trace shows ${functions.length} functions compiled lazily`);
  process.stdout.write(`${JSON.stringify(functions)}\n`);
} finally {
  await browser.close();
  server.kill();
}
