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
  for (const chapter of chapters) {
    await page.goto(`${env.server.url}${chapter.slice(1)}`);
    const title = await page.locator('main h1').first().textContent();
    assert.ok(title.trim().length > 0, `${chapter} has a title`);
  }
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
