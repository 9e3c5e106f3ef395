// Runs the engine benchmark page in Debian's Chromium and prints its JSON
// report on stdout. Usage: node bench.mjs ROUNDS ITERATIONS
import { launchBrowser, startServer } from './harness.mjs';

const [rounds = '15', iterations = '2000'] = process.argv.slice(2);
const server = await startServer();
const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  await page.goto(`${server.url}bench.html?rounds=${rounds}&iterations=${iterations}`);
  const report = page.locator('#report[data-state]');
  await report.waitFor({ state: 'attached', timeout: 600000 });
  const json = JSON.parse(await report.textContent());
  json.browser = `Chromium ${browser.version()}`;
  // Navigation timing: a fresh context per repetition, so nothing is cached.
  const samples = [];
  for (let i = 0; i < 5; i += 1) {
    const context = await browser.newContext();
    const fresh = await context.newPage();
    await fresh.goto(`${server.url}?s=idem-check-then-write&schedule=A6B3AB4`);
    await fresh.locator('body[data-ready="true"]').waitFor({ timeout: 60000 });
    samples.push(await fresh.evaluate(() => {
      const mark = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
      return { engineReady: mark('replayground-engine-ready'), interactive: mark('replayground-interactive') };
    }));
    await context.close();
  }
  json.navigation = samples;
  process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  if (json.error) process.exitCode = 1;
} finally {
  await browser.close();
  server.stop();
}
