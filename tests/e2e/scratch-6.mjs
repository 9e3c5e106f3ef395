import { startServer, launchBrowser, openPage } from './harness.mjs';
const server = await startServer();
const browser = await launchBrowser();
const { page, seen, context } = await openPage(browser, server.url, { viewport: { width: 1400, height: 900 } });
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
const q = () => new URL(page.url()).search;
const mode = () => page.locator('#journal input:checked').getAttribute('value');
const st = async () => (await page.locator('#run-status').innerText()).slice(0, 250);
await page.goto(server.url + '?s=idem-race');
await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
// long random search
await page.selectOption('#strategy', 'random');
await page.fill('#runs', '100000');
await page.click('#run');
await page.waitForTimeout(1500);
console.log('during search:', await st(), 'progress', await page.locator('#progress').getAttribute('value'));
await page.screenshot({ path: '/tmp/newuser/20-search-running.png' });
const t0 = Date.now();
await page.locator('#journal input[value="wal"]').click();
await page.waitForTimeout(200);
console.log('after switch 200ms:', await st(), 'run enabled', await page.locator('#run').isEnabled(), 'cancel enabled', await page.locator('#cancel').isEnabled(), 'progress hidden', await page.locator('#progress').isHidden(), q(), await mode());
await page.locator('#run:enabled').waitFor({ timeout: 30000 });
console.log('run re-enabled after', Date.now() - t0, 'ms', await st());
await page.screenshot({ path: '/tmp/newuser/21-after-switch-during-search.png' });
// start search in WAL and switch back quickly, twice
await page.click('#run');
await page.waitForTimeout(800);
console.log('wal search:', await st());
await page.locator('#journal input[value="rollback"]').click();
await page.locator('#journal input[value="wal"]').click();
await page.locator('#journal input[value="rollback"]').click();
await page.waitForTimeout(1500);
console.log('after triple switch:', await st(), q(), await mode(), 'lanes', (await page.locator('#lanes .step').count()));
// Run a full WAL random search to completion with small runs, measure time
await page.locator('#journal input[value="wal"]').click();
await page.waitForTimeout(500);
await page.fill('#runs', '2000');
let t1 = Date.now();
await page.click('#run'); await page.locator('#run:enabled').waitFor({ timeout: 120000 });
console.log('WAL random 2000 runs took', Date.now() - t1, await st());
await page.locator('#journal input[value="rollback"]').click();
await page.waitForTimeout(500);
t1 = Date.now();
await page.click('#run'); await page.locator('#run:enabled').waitFor({ timeout: 120000 });
console.log('RB random 2000 runs took', Date.now() - t1, await st());
// stepping then switch
await page.locator('#journal input[value="rollback"]').click();
await page.click('#reset').catch(()=>{});
await page.waitForTimeout(300);
console.log('before stepping', q());
for (const k of 'aabbc') { await page.keyboard.press(k); await page.waitForTimeout(150); }
console.log('after stepping', q(), 'steps', await page.locator('#lanes .step').count());
await page.click('#undo'); await page.waitForTimeout(300);
console.log('after undo', q(), 'steps', await page.locator('#lanes .step').count());
await page.locator('#journal input[value="wal"]').click(); await page.waitForTimeout(500);
console.log('after switch post-undo', q(), 'steps', await page.locator('#lanes .step').count(), await st());
await page.screenshot({ path: '/tmp/newuser/22-switch-after-undo.png' });
for (const k of 'ab') { await page.keyboard.press(k); await page.waitForTimeout(150); }
console.log('stepped in wal', q());
// back/forward
const hist = [];
for (let i = 0; i < 6; i++) { await page.goBack(); await page.waitForTimeout(500); hist.push(`${q()} mode=${await mode()} steps=${await page.locator('#lanes .step').count()} note=${await page.locator('#wal-note').isVisible()}`); }
console.log('BACK:\n  ' + hist.join('\n  '));
const fwd = [];
for (let i = 0; i < 6; i++) { await page.goForward(); await page.waitForTimeout(500); fwd.push(`${q()} mode=${await mode()} steps=${await page.locator('#lanes .step').count()} note=${await page.locator('#wal-note').isVisible()}`); }
console.log('FWD:\n  ' + fwd.join('\n  '));
// copy link
await page.click('#copy-link'); await page.waitForTimeout(300);
const clip = await page.evaluate(() => navigator.clipboard.readText()).catch(e => 'clip err ' + e.message);
console.log('clipboard:', clip, 'url', page.url());
const p2 = await context.newPage();
await p2.goto(clip.startsWith('http') ? clip : page.url());
await p2.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
await p2.waitForTimeout(500);
console.log('fresh page', new URL(p2.url()).search, await p2.locator('#journal input:checked').getAttribute('value'), 'steps', await p2.locator('#lanes .step').count(), 'same lanes', JSON.stringify(await p2.locator('#lanes .step').allInnerTexts()) === JSON.stringify(await page.locator('#lanes .step').allInnerTexts()));
console.log('errors', seen.errors);
await browser.close(); server.stop();
