import { startServer, launchBrowser, openPage } from './harness.mjs';
import { readFileSync } from 'node:fs';
const server = await startServer();
const browser = await launchBrowser();
const html = readFileSync('/work/main/www/index.html', 'utf8');
for (const len of [60000, 100000]) {
  const { page, seen, context } = await openPage(browser, server.url, { viewport: { width: 1400, height: 900 } });
  await page.route(u => u.search.length > 1000, route => route.fulfill({ status: 200, contentType: 'text/html', body: html }));
  const t0 = Date.now();
  await page.goto(server.url + '?s=idem-race&journal=' + 'w'.repeat(len) + '&attempts=2');
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
  await page.waitForTimeout(300);
  console.log(len, Date.now() - t0, 'ms; mode', await page.locator('#journal input:checked').getAttribute('value'), 'url', new URL(page.url()).search.slice(0, 80));
  const notice = await page.locator('#link-error').innerText();
  console.log('  notice', notice.length, notice.slice(0, 300));
  console.log('  errors', seen.errors);
  await page.screenshot({ path: `/tmp/newuser/link-big-${len}.png` });
  await page.keyboard.press('a');
  await page.waitForTimeout(300);
  console.log('  after a', new URL(page.url()).search);
  await context.close();
}
await browser.close(); server.stop();
