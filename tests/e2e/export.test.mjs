// Taking a counterexample home: the page's "Reproduce in Python" button
// downloads a Python script, and python3 replays the run on real SQLite files
// with every step's result as the playground showed it; "Reproduce in Rust"
// downloads the Rust test the command line writes (tests/export.rs builds and
// runs those with cargo).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openPage, repoRoot, screenshot, serveAndLaunch } from './harness.mjs';

const env = serveAndLaunch();

test('a counterexample downloads as a script that reproduces it on real SQLite', async () => {
  const { context, page, seen } = await openPage(env.browser, env.server.url, { acceptDownloads: true });
  await page.goto(`${env.server.url}?s=idem-check-then-write`);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  // Before the run is over, the button says what to do instead.
  await page.click('#export-python');
  assert.match(await page.locator('#run-status').textContent(), /Run to the end first/);
  // The explorer's counterexample, then the script.
  await page.selectOption('#strategy', 'exhaustive');
  await page.click('#run');
  await page.locator('#run:enabled').waitFor({ timeout: 60000 });
  assert.match(page.url(), /schedule=A6B3AB4/);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-python')]);
  assert.equal(download.suggestedFilename(), 'idem-check-then-write-A6B3AB4.py');
  const folder = mkdtempSync(path.join(tmpdir(), 'replayground-e2e-'));
  try {
    const script = path.join(folder, download.suggestedFilename());
    await download.saveAs(script);
    assert.match(readFileSync(script, 'utf8'), /^#!\/usr\/bin\/env python3/);
    const out = execFileSync('python3', [script], { encoding: 'utf8' });
    assert.match(out, /14\. B: commit {2}ok {2}\(as in the playground\)/);
    assert.match(out, /the playground's check failed: created: expected 1, got 2/);
    assert.match(out, /16 results compared, 0 different/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  assert.match(await page.locator('#run-status').textContent(), /replays this run on real SQLite files/);
  // The trace as JSON: every step with its SQL, values, result, locks and tables.
  const [traceFile] = await Promise.all([page.waitForEvent('download'), page.click('#download-trace')]);
  assert.equal(traceFile.suggestedFilename(), 'idem-check-then-write-A6B3AB4.json');
  const tracePath = path.join(tmpdir(), `replayground-trace-${process.pid}.json`);
  await traceFile.saveAs(tracePath);
  const trace = JSON.parse(readFileSync(tracePath, 'utf8'));
  rmSync(tracePath, { force: true });
  assert.equal(trace.schedule, 'A6B3AB4');
  assert.equal(trace.trace.length, 14);
  const insert = trace.trace.find((s) => s.name === 'insert receipt');
  assert.ok(insert.sql.startsWith('INSERT OR REPLACE INTO receipts'));
  assert.deepEqual(insert.params.slice(0, 3), ['north', 'web-order', 'intent-a']);
  assert.ok(insert.locks.length === 2 && insert.tables['orders.db'].receipts);
  assert.match(await page.locator('#run-status').textContent(), /holds the 14 steps of this run/);
  // The Rust test: the command line's export of the same run, byte for byte.
  const [rustFile] = await Promise.all([page.waitForEvent('download'), page.click('#export-rust')]);
  assert.equal(rustFile.suggestedFilename(), 'idem-check-then-write-A6B3AB4.rs');
  const rustPath = path.join(tmpdir(), `replayground-export-${process.pid}.rs`);
  await rustFile.saveAs(rustPath);
  const fromPage = readFileSync(rustPath, 'utf8');
  rmSync(rustPath, { force: true });
  const fromCli = execFileSync('cargo', ['run', '-q', '--locked', '--bin', 'replayground', '--', 'export', 'idem-check-then-write', 'A6B3AB4', '--rust'], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.match(fromPage, /^\/\/! Reproduces one replayground run on real SQLite files: scenario idem-check-then-write/);
  assert.equal(fromPage, fromCli);
  assert.match(await page.locator('#run-status').textContent(), /is a test: put it in a crate's tests\/ folder/);
  await screenshot(page, 'export-python', false);
  assert.deepEqual(seen.errors, []);
  await context.close();
});
