import { startServer, launchBrowser, openPage } from './harness.mjs';
import { readFileSync } from 'node:fs';
const base = readFileSync('/tmp/newuser/src/base.toml', 'utf8');
const server = await startServer();
const browser = await launchBrowser();
for (const vp of [{ width: 1400, height: 900 }, { width: 390, height: 844 }]) {
const tag = vp.width;
const { page, seen, context } = await openPage(browser, server.url, { viewport: vp });
const q = () => new URL(page.url()).search;
await page.goto(server.url + '?s=idem-deferred&journal=wal');
await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
await page.click('#edit-copy');
await page.waitForTimeout(800);
const copied = await page.locator('#source').inputValue();
console.log(tag, 'edit-copy has journal line?', /^journal/m.test(copied), 'first lines:', copied.split('\n').slice(0, 4).join(' / '));
console.log(tag, 'status', await page.locator('#source-status').innerText());
const tryit = async (name, src) => {
  await page.fill('#source', src);
  await page.waitForTimeout(900);
  console.log(tag, name, 'status:', (await page.locator('#source-status').innerText()).slice(0, 300));
};
await tryit('bogus', 'journal = "bogus"\n' + base);
await page.screenshot({ path: `/tmp/newuser/ed-${tag}-bogus.png` });
await tryit('paramsJournal', base + '\n[params.journal]\ntype = "choice"\noptions = ["rollback", "wal"]\ndefault = "wal"\nmeaning = "x"\n');
await page.screenshot({ path: `/tmp/newuser/ed-${tag}-params.png` });
await tryit('pragma', base.replace('[databases.main]', '[databases.main]\npragmas = "PRAGMA journal_mode = WAL"'));
await tryit('html', 'journal = "wal"\nwal-note = "<img src=x onerror=alert(1)> <b>bold</b>"\n' + base);
await page.click('[data-action="apply-source"]');
await page.waitForTimeout(1500);
console.log(tag, 'after apply url', q().slice(0, 100), 'mode', await page.locator('#journal input:checked').getAttribute('value'));
console.log(tag, 'wal-note text', await page.locator('#wal-note').innerText(), 'imgs in note', await page.locator('#wal-note img').count(), 'b', await page.locator('#wal-note b').count());
console.log(tag, 'title', await page.locator('#scenario-title').innerText());
await page.screenshot({ path: `/tmp/newuser/ed-${tag}-html-applied.png` });
// switch to rollback for a wal-default design
await page.locator('#journal input[value="rollback"]').click();
await page.waitForTimeout(800);
console.log(tag, 'after rollback url', decodeURIComponent(q()).slice(-80), 'note visible', await page.locator('#wal-note').isVisible());
await page.click('#run'); await page.locator('#run:enabled').waitFor({ timeout: 60000 });
console.log(tag, 'rb run', await page.locator('#run-status').innerText());
await page.locator('#journal input[value="wal"]').click();
await page.waitForTimeout(800);
console.log(tag, 'after wal url', decodeURIComponent(q()).slice(-80));
await page.click('#run'); await page.locator('#run:enabled').waitFor({ timeout: 60000 });
console.log(tag, 'wal run', await page.locator('#run-status').innerText());
await page.screenshot({ path: `/tmp/newuser/ed-${tag}-wal-run.png`, fullPage: tag === 390 });
// reopen link
const link = page.url();
const p2 = await context.newPage();
await p2.goto(link); await p2.locator('body[data-ready="true"]').waitFor({ timeout: 30000 }); await p2.waitForTimeout(800);
console.log(tag, 'reopen mode', await p2.locator('#journal input:checked').getAttribute('value'), 'note', await p2.locator('#wal-note').innerText(), 'notice', await p2.locator('#link-error').isVisible() ? await p2.locator('#link-error').innerText() : '-');
// New design template: does it mention journal?
await page.click('[data-action="new-design"]');
await page.waitForTimeout(800);
const tmpl = await page.locator('#source').inputValue();
console.log(tag, 'template mentions journal?', /journal/.test(tmpl), /wal-note/.test(tmpl));
console.log(tag, 'errors', seen.errors, seen.dialogs);
await context.close();
}
await browser.close(); server.stop();
