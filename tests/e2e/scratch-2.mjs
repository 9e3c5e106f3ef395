import { startServer, launchBrowser, openPage } from './harness.mjs';
const server = await startServer();
const browser = await launchBrowser();
const { page, seen } = await openPage(browser, server.url, { viewport: { width: 1400, height: 900 } });
await page.goto(server.url + '?s=idem-deferred&journal=wal');
await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
const heads = async () => (await page.locator('#lanes .lane-head, #lanes [class*=head]').allInnerTexts()).map(s=>s.replace(/\n/g,' | ')).join(' || ');
console.log('initial locks:', JSON.stringify(await page.locator('#locks').innerText()));
const seq = process.argv[2] || 'aaaabbbabbb';
let i = 0;
await page.locator('body').click({ position: { x: 5, y: 5 } });
for (const k of seq) {
  await page.keyboard.press(k);
  await page.waitForTimeout(250);
  i++;
  const last = await page.locator('#lanes .step').last().innerText().catch(()=> '');
  console.log(`--- ${i} key ${k}  url=${new URL(page.url()).search}`);
  console.log('status:', (await page.locator('#run-status').innerText()).slice(0,300));
  console.log('locks:', JSON.stringify(await page.locator('#locks').innerText()));
  console.log('heads:', await heads());
  console.log('last step:', JSON.stringify(last.slice(-400)));
  await page.screenshot({ path: `/tmp/newuser/step-${String(i).padStart(2,'0')}.png` });
}
console.log('checks', await page.locator('#checks').innerText());
console.log('errors', seen);
await browser.close(); server.stop();
