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
  // The page's own search, through its Run button: a random search of the
  // 2-attempt race, timed from the click to the verdict; then how soon a
  // Cancel is heard. Fresh contexts, as a user's first search.
  const runs = Number(iterations) >= 1000 ? 10000 : 200;
  const searches = [];
  for (let i = 0; i < 3; i += 1) {
    const context = await browser.newContext();
    const fresh = await context.newPage();
    await fresh.goto(`${server.url}?s=idem-race&attempts=2`);
    await fresh.locator('body[data-ready="true"]').waitFor({ timeout: 60000 });
    await fresh.selectOption('#strategy', 'random');
    await fresh.fill('#runs', String(runs));
    // A warm-up search, so that the timed one runs on compiled code.
    await fresh.click('#run');
    await fresh.locator('#run:enabled').waitFor({ timeout: 600000 });
    const ms = await fresh.evaluate(async () => {
      const start = performance.now();
      document.getElementById('run').click();
      await new Promise((resolve) => {
        const check = () => (document.getElementById('run').disabled ? setTimeout(check, 1) : resolve());
        setTimeout(check, 1);
      });
      return performance.now() - start;
    });
    const status = await fresh.locator('#run-status').textContent();
    // A search long enough to cancel: how long until the page is free again.
    await fresh.fill('#runs', '100000');
    await fresh.click('#run');
    await fresh.locator('#run-status', { hasText: 'Exploring:' }).waitFor({ timeout: 30000 });
    const cancelMs = await fresh.evaluate(async () => {
      const start = performance.now();
      document.getElementById('cancel').click();
      await new Promise((resolve) => {
        const check = () => (document.getElementById('run').disabled ? setTimeout(check, 1) : resolve());
        setTimeout(check, 1);
      });
      return performance.now() - start;
    });
    searches.push({ runs, ms, runsPerSecond: (runs * 1000) / ms, cancelMs, status });
    await context.close();
  }
  json.pageSearch = searches;
  process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  if (json.error) process.exitCode = 1;
} finally {
  await browser.close();
  server.stop();
}
