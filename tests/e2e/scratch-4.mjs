import { startServer, launchBrowser, openPage } from './harness.mjs';
const server = await startServer();
const browser = await launchBrowser();
const big = 'w'.repeat(100000);
const links = [
  ['WAL', '?s=idem-race&journal=WAL'],
  ['empty', '?s=idem-race&journal='],
  ['dup', '?s=idem-race&journal=wal&journal=rollback'],
  ['dup2', '?s=idem-race&journal=rollback&journal=wal'],
  ['dupattempts', '?s=idem-race&attempts=2&attempts=3'],
  ['nul', '?s=idem-race&journal=%00'],
  ['big', '?s=idem-race&journal=' + big],
  ['nojournal-scn', '?journal=wal'],
  ['wal-sched', '?s=idem-deferred&journal=wal&schedule=A4B3AB&step=5'],
  ['rb-sched-wal', '?s=idem-deferred&journal=rollback&schedule=A4B3AB'],
  ['wal-bad-sched', '?s=idem-deferred&journal=wal&schedule=A4B2ABBBBB'],
  ['params-json', '?s=idem-race&params=%7B%22journal%22%3A%22wal%22%7D'],
  ['Journal-case', '?s=idem-race&Journal=wal'],
  ['plus', '?s=idem-race&journal=wal+'],
  ['encoded', '?s=idem-race&journal=%77al'],
];
let n = 0;
for (const [name, q] of links) {
  const { page, seen, context } = await openPage(browser, server.url, { viewport: { width: 1400, height: 900 } });
  const t0 = Date.now();
  try {
    await page.goto(server.url + q);
    await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
    await page.waitForTimeout(500);
    const notice = await page.locator('#link-error').isVisible() ? await page.locator('#link-error').innerText() : '(no notice)';
    const mode = await page.locator('#journal input:checked').getAttribute('value');
    const title = await page.locator('#scenario-title').innerText();
    const url = new URL(page.url()).search;
    console.log(`[${name}] ${Date.now()-t0}ms title=${title} mode=${mode} url=${url.slice(0,120)} (len ${url.length})\n   notice: ${notice.slice(0,400)} (len ${notice.length})\n   walnote visible: ${await page.locator('#wal-note').isVisible()} status: ${(await page.locator('#run-status').innerText()).slice(0,200)}\n   errors: ${JSON.stringify(seen.errors).slice(0,300)}`);
    await page.screenshot({ path: `/tmp/newuser/link-${name}.png` });
    // page keeps working: step A
    await page.locator('#lanes button').first().click().catch(e => console.log('   step click failed', e.message.slice(0,100)));
    await page.waitForTimeout(300);
    console.log('   after step url:', new URL(page.url()).search.slice(0, 120));
  } catch (e) { console.log(`[${name}] FAIL ${e.message.slice(0,300)}`); await page.screenshot({ path: `/tmp/newuser/link-${name}-fail.png` }); }
  await context.close();
}
await browser.close(); server.stop();
