// Every parameter of every scenario, set to a value other than its default
// through every entry point of the browser: the JS export, a permalink, the
// page's control (then Apply) and an embed's params attribute. Each time the
// engine must report that the run uses the value. (The command line and the
// library are covered by tests/params.rs.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openPage, serveAndLaunch } from './harness.mjs';

let page;
let seen;
let base;

serveAndLaunch(async (env) => {
  base = env.server.url;
  ({ page, seen } = await openPage(env.browser, base));
  await page.goto(base);
  await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
});

// A valid value other than the default, by the declaration alone.
function otherValue(param) {
  if (param.type === 'whole' && param.marks.length) return param.marks.find((m) => m !== param.default);
  if (param.type === 'whole') {
    const up = param.default + param.multipleOf;
    return up <= param.max ? up : param.default - param.multipleOf;
  }
  if (param.type === 'text') return 'zeta';
  return param.options.find((o) => o !== param.default);
}

// Every (scenario, parameter, value) of the catalog.
async function cases() {
  const catalog = await page.evaluate(async () => (await import('/js/engine.js')).scenarios());
  return catalog.flatMap((entry) => entry.params.map((param) => ({ id: entry.id, param, value: otherValue(param) })));
}

test('the JS export runs with every parameter it is given', async () => {
  const all = await cases();
  // The scenarios' own 18, and every scenario's journal mode and synchronous level.
  const catalogSize = await page.evaluate(async () => (await (await import('/js/engine.js')).scenarios()).length);
  assert.equal(all.length, 18 + 2 * catalogSize);
  // The engine's parameters come last in every entry, as the page's words say.
  const { engineLast, expected } = await page.evaluate(async () => {
    const { ENGINE_PARAMS } = await import('/js/parts/words.js');
    const catalog = await (await import('/js/engine.js')).scenarios();
    return {
      engineLast: catalog.map((e) => e.params.slice(-ENGINE_PARAMS.length).map((p) => p.name).join(',')),
      expected: ENGINE_PARAMS.join(','),
    };
  });
  assert.deepEqual(new Set(engineLast), new Set([expected]));
  const used = await page.evaluate(async (all) => {
    const m = await import('/pkg/replayground.js');
    await m.default();
    return all.map(({ id, param, value }) => m.runScenario(id, { params: { [param.name]: value } }).params[param.name]);
  }, all);
  assert.deepEqual(used, all.map((c) => c.value));
});

// What the page's control for `name` shows.
async function controlValue(name) {
  return page.evaluate((name) => {
    // The journal mode is a switch beside the scenario.
    if (name === 'journal') return document.querySelector('#journal input:checked').value;
    const input = document.querySelector(`#params [name="${name}"]`);
    if (input.dataset.marks) return JSON.parse(input.dataset.marks)[Number(input.value)];
    return input.type === 'number' ? Number(input.value) : input.value;
  }, name);
}

// What the engine says the page's run uses.
const pageRunValue = (name) => page.evaluate(async (name) => {
  const engine = await import('/js/engine.js');
  // The address holds the run; the engine's own parser reads it back.
  const link = await engine.parsePermalink(location.search);
  return link.params[name];
}, name);

test('a permalink sets every parameter, and the control shows the value in use', async () => {
  for (const { id, param, value } of await cases()) {
    const query = new URLSearchParams({ s: id, [param.name]: String(value) });
    await page.goto(`${base}?${query}`);
    await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
    assert.equal(await page.locator('#link-error').isHidden(), true, `${id} ${param.name}: ${await page.locator('#link-error').textContent()}`);
    assert.equal(await controlValue(param.name), value, `${id} ${param.name}`);
  }
  assert.deepEqual(seen.errors, []);
});

test('the page control and Apply set every parameter', async () => {
  for (const { id, param, value } of await cases()) {
    await page.goto(`${base}?s=${id}`);
    await page.locator('body[data-ready="true"]').waitFor({ timeout: 30000 });
    assert.equal(await controlValue(param.name), param.default, `${id} ${param.name} shows its default`);
    if (param.name === 'journal') {
      // The switch applies at once.
      await page.locator(`#journal input[value="${value}"]`).check();
    } else {
      const control = page.locator(`#params [name="${param.name}"]`);
      const marks = await control.getAttribute('data-marks');
      if (marks) await control.fill(String(JSON.parse(marks).indexOf(value)));
      else if (param.type === 'choice') await control.selectOption(String(value));
      else await control.fill(String(value));
      await page.locator('#params button[type="submit"]').click();
    }
    await page.waitForFunction(([name, v]) => new URLSearchParams(location.search).get(name) === v, [param.name, String(value)], { timeout: 5000 })
      .catch(async () => assert.fail(`${id} ${param.name}=${value}: the address is ${await page.evaluate(() => location.search)}, status ${await page.locator('#run-status').textContent()}`));
    assert.equal(await pageRunValue(param.name), value, `${id} ${param.name}`);
    assert.equal(await controlValue(param.name), value, `${id} ${param.name} after Apply`);
  }
  assert.deepEqual(seen.errors, []);
});

test('an embed params attribute sets every parameter', async () => {
  for (const { id, param, value } of await cases()) {
    const query = new URLSearchParams({ scenario: id, params: JSON.stringify({ [param.name]: value }) });
    await page.goto(`${base}embed.html?${query}`);
    const shown = page.locator('replayground-scenario').locator('.params');
    await shown.waitFor({ timeout: 30000 });
    assert.equal(await shown.textContent(), `${param.name} ${value}`, `${id} ${param.name}`);
  }
  assert.deepEqual(seen.errors, []);
});
