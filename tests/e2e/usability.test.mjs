// The page as a new user meets it, at 1280×800 and at phone width, by mouse
// and keyboard: the step just taken is in view, every lane can be reached,
// the address follows the run (Back and Forward, a copy button, a link to a
// counterexample that explains itself), the keyboard reaches everything,
// and axe-core finds no serious or critical violation on the page, the docs
// page or an embed.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openPage, openReady, screenshot, serveAndLaunch } from './harness.mjs';

const env = serveAndLaunch();
const here = path.dirname(fileURLToPath(import.meta.url));

function open(query, viewport = { width: 1280, height: 800 }, options = {}) {
  return openReady(env, query, viewport, options);
}

// Whether `locator`'s box is inside the window.
async function inWindow(page, locator) {
  const box = await locator.boundingBox();
  const { width, height } = page.viewportSize();
  return box !== null && box.y >= 0 && box.y + Math.min(box.height, 40) <= height && box.x >= 0 && box.x < width;
}

test('at 1280×800 the step just taken, the lane heads and every lane stay within reach', async () => {
  const { context, page, seen } = await open('?s=idem-race');
  // Eight lanes, stepped by key: each new step is on screen when it is taken.
  for (const key of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'a', 'a']) {
    const before = await page.locator('#lanes .step').count();
    await page.keyboard.press(key);
    await page.locator(`#lanes .step[data-step="${before}"]`).waitFor();
    assert.ok(await inWindow(page, page.locator('#lanes .step.selected')), `step ${before + 1} (${key}) is in view`);
  }
  // The lane heads with their Step buttons stay visible, and so does the
  // timeline's horizontal scrollbar (its box ends inside the window).
  for (let i = 0; i < 8; i += 1) {
    const head = page.locator('#lanes .lane-head').nth(i);
    await head.scrollIntoViewIfNeeded();
    assert.ok(await inWindow(page, head), `lane ${i} head reachable`);
  }
  const wrap = await page.locator('.lanes-wrap').boundingBox();
  assert.ok(wrap.y + wrap.height <= 800, `the timeline box ends at ${wrap.y + wrap.height}px`);
  // Eight lanes at 1280: those shown are whole, the next starts at the edge.
  const edges = await page.locator('.lanes-wrap').evaluate((wrap) => {
    // The inside of its border: where the scrolled lanes are cut.
    const edge = wrap.getBoundingClientRect().left + wrap.clientLeft + wrap.clientWidth;
    return [...wrap.querySelectorAll('.lane-head')].map((h) => ({ left: h.getBoundingClientRect().left, right: h.getBoundingClientRect().right, edge }));
  });
  assert.deepEqual(edges.filter((l) => l.left < l.edge - 1 && l.right > l.edge + 1), [], 'no lane is cut at the edge');
  // After a whole run, the verdict is in the window where Run was pressed,
  // and the last step in view inside the timeline's box; the page is no
  // wider than the window.
  await page.selectOption('#strategy', 'round-robin');
  await page.click('#run');
  await page.locator('#run:enabled').waitFor();
  assert.ok(await inWindow(page, page.locator('#run-status')));
  const inside = await page.locator('#lanes .step.selected').evaluate((step) => {
    const b = step.getBoundingClientRect();
    const s = step.closest('.lanes-wrap').getBoundingClientRect();
    return b.top >= s.top && b.top < s.bottom && b.left >= s.left && b.right <= s.right;
  });
  assert.ok(inside, 'the last step is in view inside the timeline');
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 1280);
  // The lane status is what the selected step left, as its lock badge is.
  await page.locator('#lanes .step[data-step="0"]').click();
  // It says so, since the Step buttons act at the run's end.
  assert.equal(await page.locator('#lanes .lane-head .lane-status').nth(7).textContent(), 'after step 1: not started');
  assert.match(await page.locator('#lanes .lane-head .step-button').nth(7).getAttribute('title'), /at the run's end \(step \d+\)/);
  assert.equal(await page.locator('#lanes .lane-head .lock').nth(0).textContent(), 'RESERVED');
  await screenshot(page, 'playground-1280x800', false);
  assert.deepEqual(seen.errors, []);
  await context.close();
});

// On a phone two lanes of eight are shown; stepping H scrolls the timeline
// to the last two, whole: nothing of a lane is cut at either edge.
test('at 390 px the timeline scrolls by whole lanes', async () => {
  const { context, page, seen } = await open('?s=idem-race', { width: 390, height: 844 });
  for (const key of 'abcdefgh') await page.keyboard.press(key);
  await page.locator('#lanes .step[data-step="7"]').waitFor();
  const cut = await page.locator('.lanes-wrap').evaluate((wrap) => {
    const left = wrap.getBoundingClientRect().left + wrap.clientLeft;
    const right = left + wrap.clientWidth;
    return [...wrap.querySelectorAll('.lane-head, .step')].map((e) => e.getBoundingClientRect())
      .filter((b) => (b.left < left - 0.5 && b.right > left + 0.5) || (b.left < right - 0.5 && b.right > right + 0.5))
      .map((b) => `${Math.round(b.left)}..${Math.round(b.right)} of ${Math.round(left)}..${Math.round(right)}`);
  });
  assert.deepEqual(cut, []);
  assert.equal(await page.locator('#lanes .lane-head').nth(7).evaluate((h) => {
    const b = h.getBoundingClientRect();
    const w = h.closest('.lanes-wrap').getBoundingClientRect();
    return b.left >= w.left && b.right <= w.right;
  }), true, 'lane H is in view');
  assert.deepEqual(seen.errors, []);
  await context.close();
});

test('the sweep table stays inside the page at 1280 px', async () => {
  const { context, page } = await open('?s=outbox-crash-sweep-no-inbox');
  await page.click('[data-action="sweep"]');
  await page.locator('table.sweep tr.fail').first().waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 1280);
  const column = await page.locator('table.sweep td').first().boundingBox();
  assert.ok(column.width > 100, `the crash point column is ${column.width}px wide`);
  await screenshot(page, 'playground-sweep-1280', false);
  await context.close();
});

test('only the settings the chosen strategy uses are shown', async () => {
  const { context, page } = await open('?s=idem-race&attempts=2', { width: 390, height: 844 });
  const shown = async () => page.evaluate(() => ['seed', 'runs', 'depth'].filter((id) => {
    const label = document.getElementById(id).closest('label');
    return label.getBoundingClientRect().height > 0;
  }));
  for (const [strategy, expected] of [['exhaustive', []], ['round-robin', []], ['random', ['seed', 'runs']], ['pct', ['seed', 'runs', 'depth']]]) {
    await page.selectOption('#strategy', strategy);
    assert.deepEqual(await shown(), expected, strategy);
  }
  await context.close();
});

test('a key whose attempt cannot step says why', async () => {
  const { context, page } = await open('?s=idem-race&attempts=2');
  await page.keyboard.press('a');
  await page.locator('#lanes .step[data-step="0"]').waitFor();
  await page.keyboard.press('b');
  await page.locator('#lanes .step.blocked').waitFor();
  await page.keyboard.press('b');
  assert.equal(await page.locator('#run-status').textContent(), 'B cannot step now: it is waiting for a lock (A holds RESERVED).');
  // Single-key shortcuts can be turned off, and then keys do nothing.
  await page.uncheck('#shortcuts');
  const steps = await page.locator('#lanes .step').count();
  await page.keyboard.press('a');
  await page.waitForTimeout(300);
  assert.equal(await page.locator('#lanes .step').count(), steps);
  await context.close();
});

test('the address follows the run: Back and Forward, a copy button, a counterexample link that explains itself', async () => {
  const { context, page } = await open('?s=idem-race&attempts=2');
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.server.url });
  await page.keyboard.press('a');
  await page.locator('#lanes .step[data-step="0"]').waitFor();
  await page.keyboard.press('a');
  await page.locator('#lanes .step[data-step="1"]').waitFor();
  assert.match(page.url(), /schedule=A2/);
  await page.click('#catalog [data-scenario="idem-check-then-write"]');
  await page.locator('#scenario-title', { hasText: 'Broken: check in one transaction' }).waitFor();
  await page.goBack();
  await page.locator('#scenario-title', { hasText: '1. Concurrent requests, one key' }).waitFor();
  await page.locator('#lanes .step[data-step="1"]').waitFor();
  assert.match(page.url(), /s=idem-race/);
  await page.goBack();
  await page.locator('#lanes .step[data-step="1"]').waitFor({ state: 'detached' });
  assert.equal(await page.locator('#lanes .step').count(), 1);
  await page.goForward();
  await page.locator('#lanes .step[data-step="1"]').waitFor();
  // The copy button copies the address, which holds the run shown.
  await page.click('#copy-link');
  await page.locator('#run-status', { hasText: 'copied' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), page.url());
  await context.close();
  // A link to a counterexample opens with its summary and one sentence per step.
  const linked = await open('?s=idem-check-then-write&schedule=A6B3AB4');
  assert.match(await linked.page.locator('#run-status').textContent(), /^This link shows a failing run of Broken: check in one transaction, write in another, schedule A6B3AB4: .*\(effects, receipts\): expected \(1, 1\), got \(2, 1\)/);
  assert.equal(await linked.page.locator('#explanation li').count(), 14);
  await linked.context.close();
});

test('the keyboard reaches the scenario controls in a few tab stops; the catalog is one', async () => {
  const { context, page } = await open('?s=idem-race');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.className), 'skip-link');
  // From the catalog's one tab stop, the arrow keys move and Enter opens.
  await page.locator('#catalog [aria-selected="true"]').focus();
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.scenario), 'idem-scope');
  await page.keyboard.press('Enter');
  await page.locator('#scenario-title', { hasText: '2. Changed parameters conflict' }).waitFor();
  assert.equal(await page.evaluate(() => document.activeElement.dataset.scenario), 'idem-scope');
  // One Tab leaves the catalog for the scenario's controls.
  await page.keyboard.press('Tab');
  const next = await page.evaluate(() => document.activeElement.closest('#catalog') === null);
  assert.ok(next, 'one Tab leaves the catalog');
  assert.equal(await page.locator('#catalog [tabindex="0"]').count(), 1);
  await context.close();
});

test('axe-core finds no serious or critical violation on the page, the docs page, an embed and the book', async () => {
  const axe = readFileSync(path.join(here, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  const pages = [
    ['playground', '?s=idem-race&attempts=2&schedule=AB'],
    ['docs', 'docs/'],
    ['embed', 'embed.html?scenario=idem-check-then-write'],
  ];
  // Every page of the book, from its table of contents.
  const book = readdirSync(path.join(here, '..', '..', 'www', 'book'))
    .filter((f) => f.endsWith('.html') && !['404.html', 'print.html', 'toc.html'].includes(f));
  assert.ok(book.length >= 18, `${book.length} pages of the book`);
  for (const file of book.sort()) pages.push([`the book's ${file}`, `book/${file}`]);
  for (const [name, query] of pages) {
    // axe is injected as an inline script, which the pages' CSP forbids:
    // this one test bypasses it; the others run under it.
    const { context, page } = await openPage(env.browser, env.server.url, { bypassCSP: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${env.server.url}${query}`);
    if (name === 'playground') await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
    else if (name.startsWith('the book')) {
      await page.locator('main h1').first().waitFor();
      const players = page.locator('main replayground-scenario');
      for (let i = 0; i < await players.count(); i += 1) {
        await players.nth(i).locator('.frame:not([data-state="loading"])').waitFor({ timeout: 30000 });
      }
    } else await page.locator('replayground-scenario .frame[data-state="ready"]').first().waitFor({ timeout: 30000 });
    await page.addScriptTag({ content: axe });
    const violations = await page.evaluate(async () => {
      const result = await window.axe.run(document, { resultTypes: ['violations'] });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')), help: v.help }));
    });
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(serious, [], `${name}: ${JSON.stringify(serious)}`);
    await context.close();
  }
});

test('counts read as sentences: no "1 runs", no "A: A began"', async () => {
  const { context, page } = await open('?s=idem-failure');
  const texts = [];
  for (const strategy of ['exhaustive', 'random', 'pct', 'round-robin']) {
    await page.selectOption('#strategy', strategy);
    if (strategy === 'random' || strategy === 'pct') await page.fill('#runs', '1');
    await page.click('#run');
    await page.locator('#run:enabled').waitFor({ timeout: 30000 });
    texts.push(await page.locator('#run-status').textContent(), await page.locator('#verdict').textContent());
  }
  await page.goto(`${env.server.url}?s=idem-check-then-write&schedule=A6B3AB4`);
  await page.locator('body[data-ready="true"]').waitFor();
  texts.push(...await page.locator('#explanation li').allTextContents());
  for (const text of texts) {
    assert.doesNotMatch(text, /(^|[^\d.,])1 (runs|violations|states|distinct states|steps|checks|interleavings|sampled runs)\b/, text);
    assert.doesNotMatch(text, /\b([A-Z]): \1 /, text);
    assert.doesNotMatch(text, /: \d+ runs?: /, text);
  }
  assert.ok(texts.some((t) => /1 sampled run\b/.test(t)), texts.join('\n'));
  await context.close();
});

// A counterexample of eight steps is explained in eight lines, all in view
// in the box without scrolling it (the box once showed 6 of 7 steps at
// 1440x900).
test('a counterexample of eight steps is explained without scrolling its box', async () => {
  const { page, seen } = await open('?s=idem-deferred', { width: 1440, height: 900 });
  await page.selectOption('#strategy', 'exhaustive');
  await page.click('#run');
  await page.locator('#run:enabled').waitFor({ timeout: 60000 });
  await page.locator('#explanation li').first().waitFor();
  const box = await page.evaluate(() => {
    const list = document.getElementById('explanation');
    return { items: list.querySelectorAll('li').length, scroll: list.scrollHeight, client: list.clientHeight };
  });
  assert.equal(box.items, 8);
  assert.ok(box.scroll <= box.client + 1, `the box scrolls: ${box.scroll} px of content in ${box.client} px`);
  assert.deepEqual(seen.errors, []);
});

// The modules app.js imports, every level down, as paths under www/.
function importClosure(entry) {
  const www = path.join(here, '..', '..', 'www');
  const seen = new Set();
  const todo = [entry];
  while (todo.length) {
    const file = todo.shift();
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(path.join(www, file), 'utf8');
    for (const [, spec] of text.matchAll(/^import\s(?:[^;]*?\sfrom\s)?'(\.{1,2}\/[^']+)';/gm)) {
      todo.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)));
    }
  }
  seen.delete(entry);
  return [...seen].sort();
}

test('the page preloads exactly the modules its script imports, and the engine it compiles', async () => {
  const html = readFileSync(path.join(here, '..', '..', 'www', 'index.html'), 'utf8');
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]).sort();
  assert.ok(preloaded.length > 10, `${preloaded.length} modules preloaded`);
  assert.deepEqual(preloaded, importClosure('js/app.js'));
  assert.match(html, /<link rel="preload" href="pkg\/replayground_bg\.wasm" as="fetch" type="application\/wasm" crossorigin>/);
  // The page uses what it preloaded: no warning of a preload left unused.
  const { context, page, seen } = await open('?s=idem-race');
  const warnings = [];
  page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
  await page.waitForTimeout(3500);
  assert.deepEqual(warnings.filter((w) => /preload/i.test(w)), []);
  assert.deepEqual(seen.errors, []);
  await context.close();
});

// The counterexample's sentences and its timeline go together: the selected
// step's sentence is marked, a click on a sentence selects its step (and
// the arrow keys move both); after Reset the list stays while the run
// steps along it (steps not taken yet greyed), and goes once a step leaves it.
test('the sentences follow the selection and stepping, and a click selects a step', async () => {
  const { context, page, seen } = await open('?s=idem-check-then-write&schedule=A6B3AB4');
  const sentences = page.locator('#explanation button.sentence');
  assert.equal(await sentences.count(), 14);
  const current = page.locator('#explanation button.sentence[aria-current="step"]');
  assert.equal(await current.count(), 1);
  assert.equal(await current.getAttribute('data-step'), '13');
  await sentences.nth(2).click();
  await page.locator('#selected-step', { hasText: 'after step 3 (' }).waitFor();
  assert.equal(await page.locator('#lanes .step.selected').getAttribute('data-step'), '2');
  assert.equal(await current.getAttribute('data-step'), '2');
  await page.locator('#lanes').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('ArrowRight');
  await page.locator('#selected-step', { hasText: 'after step 4 (' }).waitFor();
  assert.equal(await current.getAttribute('data-step'), '3');
  // The first step, selected from the end of the run: the lane heads,
  // sticky at the timeline's top, do not hide it.
  await sentences.nth(13).click();
  await sentences.nth(0).click();
  await page.locator('#selected-step', { hasText: 'after step 1 (' }).waitFor();
  const box = await page.locator('#lanes .step.selected').boundingBox();
  const head = await page.locator('#lanes .lane-head').first().boundingBox();
  assert.ok(box.y >= head.y + head.height - 1, `the selected step at ${box.y} is under the lane heads, which end at ${head.y + head.height}`);
  await sentences.nth(3).click();
  // Reset: the list stays, every sentence greyed; stepping along lights them.
  await page.click('#reset');
  await page.locator('#lanes .step').first().waitFor({ state: 'detached' });
  assert.equal(await page.locator('#explanation').isVisible(), true);
  assert.equal(await page.locator('#explanation button.sentence:disabled').count(), 14);
  await page.keyboard.press('a');
  await page.locator('#lanes .step[data-step="0"]').waitFor();
  assert.equal(await page.locator('#explanation button.sentence:disabled').count(), 13);
  assert.equal(await current.getAttribute('data-step'), '0');
  // B now is off the counterexample's way (its second step is A's).
  await page.keyboard.press('b');
  await page.locator('#lanes .step[data-step="1"]').waitFor();
  await page.locator('#explanation').waitFor({ state: 'hidden' });
  assert.deepEqual(seen.errors, []);
  await context.close();
});

// A search's verdict (the status line) is shown whole, not cut in a small
// box of its own ("…where 120 interleavings are"), at a laptop's and a
// phone's size, for a counterexample and for a design that holds.
// The first visit, with no link: a short broken design and one sentence of
// what to do, in the first screen at both widths; Run shows how it fails.
// The sentence is not shown for a link, and goes when another scenario opens.
test('a visitor with no link lands on a short broken design, told what to do', async () => {
  for (const viewport of [{ width: 1366, height: 900 }, { width: 390, height: 844 }]) {
    const { context, page, seen } = await open('', viewport);
    assert.equal(await page.locator('#scenario-title').textContent(), 'Broken: check in one transaction, write in another');
    assert.equal(await page.locator('#lanes .lane-head').count(), 2);
    const hint = page.locator('#landing-hint');
    assert.match(await hint.textContent(), /^This design is broken: press Run to see the interleaving that breaks it/);
    assert.ok(await inWindow(page, hint), `at ${viewport.width} the sentence is in the first screen`);
    await page.locator('#run').click();
    await page.locator('#run-status[data-kind="fail"]', { hasText: /^Fails, as declared. Counterexample in/ }).waitFor({ timeout: 60000 });
    assert.ok(await page.locator('#explanation li').count() >= 4);
    await screenshot(page, `landing-run-${viewport.width}`, false);
    // Edit a copy: the whole file with its libraries (some 600 lines), yet
    // the text's box, its status line and the editor's buttons fit in one
    // window (they were 11,000 px apart).
    await page.click('#edit-copy');
    await page.locator('#source-status[data-kind="pass"]').waitFor({ timeout: 30000 });
    assert.ok((await page.locator('#source').inputValue()).split('\n').length > 300);
    const top = (await page.locator('.source-box').boundingBox()).y;
    const buttons = await page.locator('[data-action="apply-source"]').boundingBox();
    assert.ok(buttons.y + buttons.height - top <= viewport.height, `at ${viewport.width} the editor spans ${buttons.y + buttons.height - top}px`);
    // Opened, the editor is brought to the window's top: its text, status
    // and buttons are in view, and on a laptop Run too.
    for (const selector of ['#source', '#source-status', '[data-action="apply-source"]', ...(viewport.width > 1000 ? ['#run'] : [])]) {
      assert.ok(await inWindow(page, page.locator(selector)), `at ${viewport.width} ${selector} is in the window`);
    }
    await page.locator('#catalog [data-scenario="idem-race"]').click();
    await page.locator('#scenario-title', { hasText: '1. Concurrent requests, one key' }).waitFor();
    assert.equal(await hint.isHidden(), true);
    assert.deepEqual(seen.errors, []);
    await context.close();
  }
  const { context, page } = await open('?s=idem-check-then-write');
  assert.equal(await page.locator('#landing-hint').isHidden(), true);
  await context.close();
});

test('the verdict of a search is shown whole at 1366×900 and 390×844', async () => {
  for (const viewport of [{ width: 1366, height: 900 }, { width: 390, height: 844 }]) {
    for (const id of ['idem-check-then-write', 'idem-race']) {
      const { context, page, seen } = await open(`?s=${id}`, viewport);
      await page.selectOption('#strategy', 'exhaustive');
      await page.click('#run');
      await page.locator('#run-status', { hasText: /Counterexample in|No violation in/ }).waitFor({ timeout: 120000 });
      await page.locator('#run:enabled').waitFor();
      const status = page.locator('#run-status');
      await status.scrollIntoViewIfNeeded();
      const cut = await status.evaluate((e) => e.scrollHeight - e.clientHeight);
      assert.ok(cut <= 1, `${id} at ${viewport.width}: the verdict is cut by ${cut}px`);
      const box = await status.boundingBox();
      assert.ok(box.y >= 0 && box.y + box.height <= viewport.height, `${id} at ${viewport.width}: the verdict at ${box.y}..${box.y + box.height} is not all in the window`);
      await screenshot(page, `verdict-${id}-${viewport.width}`, false);
      assert.deepEqual(seen.errors, []);
      await context.close();
    }
  }
});

// The scenario's explanation on a wide screen: its first three lines and
// More for the rest (it was cut in a small box that scrolled on its own);
// on a phone, whole.
test('the scenario explanation shows three lines and More on a laptop, whole on a phone', async () => {
  const { context, page, seen } = await open('?s=idem-race', { width: 1366, height: 900 });
  const text = page.locator('#scenario-explanation');
  const more = page.locator('#explanation-more');
  const cut = () => text.evaluate((e) => e.scrollHeight - e.clientHeight);
  await more.waitFor();
  assert.ok(await cut() > 1, 'clamped to its first lines');
  assert.equal(await text.evaluate((e) => getComputedStyle(e).overflowY), 'hidden');
  await more.click();
  assert.ok(await cut() <= 1, 'More shows it whole');
  assert.equal(await more.textContent(), 'Less');
  assert.equal(await more.getAttribute('aria-expanded'), 'true');
  await more.click();
  assert.ok(await cut() > 1);
  // A scenario whose explanation fits has no More.
  await page.click('#catalog [data-scenario="idem-check-then-write"]');
  await page.locator('#scenario-title', { hasText: 'Broken: check in one transaction' }).waitFor();
  assert.equal(await more.isVisible(), await cut() > 1);
  assert.deepEqual(seen.errors, []);
  await context.close();
  const phone = await open('?s=idem-race', { width: 390, height: 844 });
  assert.ok(await phone.page.locator('#scenario-explanation').evaluate((e) => e.scrollHeight - e.clientHeight) <= 1);
  assert.equal(await phone.page.locator('#explanation-more').isVisible(), false);
  await phone.context.close();
});
