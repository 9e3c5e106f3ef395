// The book (docs/, built into www/book/ by scripts/build-book.sh) as a reader
// meets it beside the playground: every chapter in its table of contents
// opens with its title, nothing fails in the console and nothing is asked of
// another origin; the README's sections are chapters; it reads at desktop and
// phone width. Screenshots go to tests/e2e/artifacts/.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openPage, screenshot, serveAndLaunch } from './harness.mjs';

const env = serveAndLaunch();

test('every chapter of the book opens from its table of contents, with no error and nothing from elsewhere', async () => {
  const { context, page, seen } = await openPage(env.browser, env.server.url);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${env.server.url}book/`);
  await page.locator('main h1').first().waitFor();
  assert.equal(await page.locator('main h1').first().textContent(), 'replayground');
  const chapters = await page.locator('#sidebar a[href$=".html"]').evaluateAll(
    (links) => [...new Set(links.map((a) => new URL(a.href).pathname))],
  );
  assert.ok(chapters.length >= 15, `${chapters.length} chapters`);
  // Every player on every page draws itself: its design ran in the engine.
  let players = 0;
  const pages = [];
  for (const chapter of chapters) {
    await page.goto(`${env.server.url}${chapter.slice(1)}`);
    const title = await page.locator('main h1').first().textContent();
    assert.ok(title.trim().length > 0, `${chapter} has a title`);
    const here = page.locator('main replayground-scenario');
    const count = await here.count();
    for (let i = 0; i < count; i += 1) {
      assert.equal(await settled(here.nth(i)), 'ready', `${chapter}, player ${i + 1}`);
    }
    players += count;
    if (count) pages.push(chapter);
  }
  assert.ok(players >= 10 && pages.length >= 4, `${players} players on ${pages.join(', ')}`);
  // The reference is there, and its examples read as code.
  await page.goto(`${env.server.url}book/write-your-own.html`);
  assert.ok(await page.locator('main h2', { hasText: 'Reference' }).count() >= 1);
  assert.ok(await page.locator('main pre code').count() >= 3);
  await screenshot(page, 'book-write-your-own-1280', false);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await page.locator('main h1').first().waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `the chapter is ${overflow}px wider than a phone`);
  await screenshot(page, 'book-write-your-own-390', false);
  // The picture the introduction shows is served beside the book.
  await page.goto(`${env.server.url}book/`);
  const image = page.locator('main img').first();
  assert.ok(await image.evaluate((img) => img.complete && img.naturalWidth > 0), 'the picture loads');
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.foreignRequests, []);
  await context.close();
});

// Waits until a player has drawn itself (or its message); its state.
async function settled(player) {
  await player.locator('.frame:not([data-state="loading"])').waitFor({ timeout: 30000 });
  return player.locator('.frame').getAttribute('data-state');
}

test('the format reference chapter holds live players that step and run, on one module', async () => {
  const { context, page, seen } = await openPage(env.browser, env.server.url);
  await page.setViewportSize({ width: 1280, height: 800 });
  const modules = [];
  page.on('request', (request) => { if (request.url().endsWith('/js/embed.js')) modules.push(request.url()); });
  await page.goto(`${env.server.url}book/write-your-own.html`);
  const players = page.locator('main replayground-scenario');
  const count = await players.count();
  assert.ok(count >= 3, `${count} players`);
  for (let i = 0; i < count; i += 1) assert.equal(await settled(players.nth(i)), 'ready', `player ${i + 1}`);
  assert.equal(modules.length, 1, 'the element\'s module is loaded once');
  // The inline design: stepped along its counterexample, then run: it fails its check.
  const seats = players.nth(0);
  await seats.locator('button[data-control="step"]').click();
  await seats.locator('.step').first().waitFor();
  await seats.locator('button[data-control="run"]').click();
  await seats.locator('.verdict[data-kind="fail"]').waitFor();
  assert.match(await seats.locator('.verdict').textContent(), /seat 7 is booked once/);
  // The fixed design, read from its file: the same schedule books the seat once.
  const unique = players.nth(1);
  await unique.locator('button[data-control="run"]').click();
  await unique.locator('.verdict[data-kind="pass"]').waitFor();
  // The built-in at its counterexample charges twice.
  const builtin = players.nth(2);
  await builtin.locator('button[data-control="run"]').click();
  await builtin.locator('.verdict[data-kind="fail"]').waitFor();
  // The players' text is the chapter's body size, or nearly: it was
  // 0.68-0.75 of the book's root size (10 px), smaller than anything else.
  const body = await page.locator('main p').first().evaluate((p) => parseFloat(getComputedStyle(p).fontSize));
  for (const selector of ['.step-note', '.step-name', 'td', '.verdict']) {
    const size = await seats.locator(selector).first().evaluate((e) => parseFloat(getComputedStyle(e).fontSize));
    assert.ok(size >= 0.8 * body, `${selector} is ${size}px beside the chapter's ${body}px`);
  }
  // Each player opens what it shows in the playground, at its run: the
  // design packed whole in the link, or the built-in by its id.
  for (const player of [seats, builtin]) {
    const link = player.locator('a.open');
    assert.equal(await link.textContent(), 'Open in the playground');
    const href = await link.getAttribute('href');
    const url = new URL(href);
    assert.equal(url.origin + url.pathname, `${env.server.url}`);
    assert.ok(url.searchParams.get('schedule'), href);
    const title = await player.locator('.title').textContent();
    const steps = await player.locator('.step').count();
    const opened = await context.newPage();
    await opened.goto(href);
    await opened.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
    assert.equal(await opened.locator('#scenario-title').textContent(), title);
    assert.equal(await opened.locator('#link-error').isVisible(), false);
    assert.equal(await opened.locator('#lanes .step').count(), steps);
    await opened.close();
  }
  assert.ok(new URL(await builtin.locator('a.open').getAttribute('href')).searchParams.has('s'));
  assert.ok(new URL(await seats.locator('a.open').getAttribute('href')).searchParams.has('src'));
  await seats.scrollIntoViewIfNeeded();
  await screenshot(page, 'book-players-1280', false);
  assert.deepEqual(seen.errors, []);
  assert.deepEqual(seen.foreignRequests, []);
  await context.close();
  // A phone opening the chapter: the players fit its width.
  const phone = await openPage(env.browser, env.server.url, { viewport: { width: 390, height: 844 } });
  await phone.page.goto(`${env.server.url}book/write-your-own.html`);
  const first = phone.page.locator('main replayground-scenario').first();
  assert.equal(await settled(first), 'ready');
  await first.scrollIntoViewIfNeeded();
  const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `the chapter with its players is ${overflow}px wider than a phone`);
  await screenshot(phone.page, 'book-players-390', false);
  assert.deepEqual(phone.seen.errors, []);
  await phone.context.close();
});
