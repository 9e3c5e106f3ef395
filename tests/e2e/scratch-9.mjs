import { startServer, launchBrowser, openPage } from './harness.mjs';
const server = await startServer();
const browser = await launchBrowser();
const { page, seen } = await openPage(browser, server.url, { viewport: { width: 1400, height: 900 } });
for (const j of ['rollback', 'wal']) {
  await page.goto(server.url + '?s=idem-deferred&journal=' + j);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  await page.click('#run'); await page.locator('#run:enabled').waitFor({ timeout: 60000 });
  const items = await page.locator('#explanation li').allInnerTexts();
  console.log(j, items.length, items);
  const box = await page.evaluate(() => { const e = document.getElementById('explanation'); return { sh: e.scrollHeight, ch: e.clientHeight, ov: getComputedStyle(e).overflowY }; });
  console.log(box);
  const expl = await page.evaluate(() => { const e = document.getElementById('scenario-explanation'); return { sh: e.scrollHeight, ch: e.clientHeight, ov: getComputedStyle(e).overflowY, text: e.textContent }; });
  console.log(expl);
}
await browser.close(); server.stop();
