// Runs the engine benchmark page in Debian's Chromium and prints its JSON
// report on stdout. Usage: node bench.mjs ROUNDS ITERATIONS
import fs from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser, launchPersistent, openLongDesign, PERMALINK, startServer, traceFirstVisit } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
// The browser SQLite builds people use, pinned in package.json, served on the
// page's own origin under /peers/ (never from a CDN); the engine's package is
// served the same way for the first-query pages, so that every build's files
// come through the same path.
const PEERS = {
  'sqlite-wasm': path.join(here, 'node_modules', '@sqlite.org', 'sqlite-wasm', 'dist'),
  'sql.js': path.join(here, 'node_modules', 'sql.js', 'dist'),
  replayground: path.join(here, '..', '..', 'www', 'pkg'),
  // The whole module the split one was cut from, with the same glue
  // (scripts/bench.sh puts them there): the split is measured against it.
  whole: path.join(here, '..', '..', 'target', 'bench', 'whole'),
  // SQLite alone, built as the module builds it (scripts/sqlite-alone).
  'sqlite-alone': path.join(here, '..', '..', 'target', 'sqlite-alone', 'pkg'),
};
const TYPES = { '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm' };

// Pages that load one build and answer a first query (each opens an
// in-memory database and asks SQLite its version: the engine's `versions()`
// does, and the playground marks its engine answering when it has), then put
// the time since navigation started in their title: how soon each build answers.
const FIRST_QUERY = {
  replayground: `<script type="module">
import init, { versions } from '/peers/replayground/replayground.js';
await init();
versions();
document.title = 'answered ' + performance.now();
</script>`,
  'SQLite alone': `<script type="module">
import init, { version } from '/peers/sqlite-alone/sqlite_alone.js';
await init();
version();
document.title = 'answered ' + performance.now();
</script>`,
  'sql.js': `<script src="/peers/sql.js/sql-wasm-browser.js"></script>
<script type="module">
const SQL = await initSqlJs({ locateFile: (file) => '/peers/sql.js/' + file });
new SQL.Database().exec('SELECT sqlite_version()');
document.title = 'answered ' + performance.now();
</script>`,
  '@sqlite.org/sqlite-wasm': `<script type="module">
import sqlite3InitModule from '/peers/sqlite-wasm/index.mjs';
const sqlite3 = await sqlite3InitModule({ print: () => {}, printErr: () => {} });
new sqlite3.oo1.DB(':memory:').exec('SELECT sqlite_version()');
document.title = 'answered ' + performance.now();
</script>`,
};

// The body and type of /peers/first-query/N (N an index into FIRST_QUERY)
// or /peers/NAME/FILE (a pinned package's file); null when there is none.
async function peerFile(pathname) {
  const first = pathname.match(/^\/peers\/first-query\/(\d+)$/);
  if (first) {
    const html = Object.values(FIRST_QUERY)[Number(first[1])];
    return html === undefined ? null
      : { body: `<!doctype html><title>loading</title>${html}`, contentType: 'text/html', modified: STARTED };
  }
  const [, name, file] = pathname.match(/^\/peers\/([^/]+)\/(.+)$/) ?? [];
  const dir = PEERS[name];
  if (!dir || file.includes('..')) return null;
  try {
    const full = path.join(dir, file);
    return {
      body: await readFile(full),
      contentType: TYPES[path.extname(file)] ?? 'application/octet-stream',
      modified: (await stat(full)).mtime,
    };
  } catch {
    return null;
  }
}
const STARTED = new Date();

// Serves the peers to the benchmark page (same origin, through the page's route).
async function servePeers(target) {
  await target.route('**/peers/**', async (route) => {
    const found = await peerFile(new URL(route.request().url()).pathname);
    if (!found) return route.fulfill({ status: 404 });
    return route.fulfill({ status: 200, body: found.body, contentType: found.contentType });
  });
}

// Serves the first-query pages and every build's files over HTTP, with the
// caching headers scripts/serve.py gives the playground's files (stored,
// revalidated on each load: Cache-Control no-cache, Last-Modified, 304), so
// that a returning visitor's browser reads them from its HTTP cache and V8
// may use the code it cached for a module. Resolves to { url, stop }.
function startPeerServer() {
  const server = http.createServer(async (request, response) => {
    const found = await peerFile(new URL(request.url, 'http://x').pathname);
    if (!found) {
      response.writeHead(404).end();
      return;
    }
    const modified = new Date(Math.floor(found.modified.getTime() / 1000) * 1000);
    const since = Date.parse(request.headers['if-modified-since'] ?? '');
    const headers = { 'Cache-Control': 'no-cache', 'Last-Modified': modified.toUTCString() };
    if (!Number.isNaN(since) && since >= modified.getTime()) {
      response.writeHead(304, headers).end();
      return;
    }
    response.writeHead(200, { ...headers, 'Content-Type': found.contentType }).end(found.body);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({
      url: `http://127.0.0.1:${server.address().port}/`,
      stop: () => server.close(),
    }));
  });
}

// Loads `url` in a new page of `context`, waits for `ready(page)` and returns
// `measure(page)`.
async function load(context, url, ready, measure) {
  const page = await context.newPage();
  try {
    await page.goto(url);
    await ready(page);
    return await measure(page);
  } finally {
    await page.close();
  }
}

// The playground's marks, ms since navigation started.
const playgroundReady = (page) => page.locator('body[data-ready="true"]').waitFor({ timeout: 60000 });
const playgroundMarks = (page) => page.evaluate(() => {
  const mark = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
  return {
    engineAnswering: mark('replayground-engine-answering'),
    firstResult: mark('replayground-first-result'),
    catalog: mark('replayground-interactive'),
  };
});

// Whether a first visit of `url` needed the module's rest before the page was
// interactive (scripts/split: the glue marks when it instantiates the rest,
// in the worker, whose marks a trace shows): a first visit should run on the
// primary alone. `{ restBeforeInteractive }`, or `{ error }`.
async function firstVisitRest(url) {
  const { events, until } = await traceFirstVisit(url, []);
  if (until === undefined) return { error: 'the trace has no replayground-interactive mark' };
  const rest = events.find((e) => e.name === 'replayground-rest-instantiated')?.ts;
  return { restBeforeInteractive: rest !== undefined && rest <= until };
}

// A first-query page's answer, ms since navigation started.
const firstQueryReady = (page) => page.waitForFunction(() => document.title.startsWith('answered'), null, { timeout: 60000 });
const firstQueryMs = async (page) => Number((await page.title()).split(' ')[1]);
// How long a returning visitor's first load stays open: V8 writes a module's
// compiled code to Chromium's cache once enough of it is optimised or about
// two seconds after it was compiled (its --wasm-caching-timeout-ms).
const CODE_CACHE_WAIT_MS = 3000;

// Runs in a page: the module under /peers/`build`/ (the split one, or the
// whole one it was cut from) doing what the benchmark times of it: each reach
// design and the 8-attempt race searched whole, and each of the benchmark
// page's JS calls (www/js/bench-calls.js). Medians: ms per search, µs per call.
async function splitOrWhole({ build, designs }) {
  const m = await import(`/peers/${build}/replayground.js`);
  await m.default();
  if (build !== 'whole') await m.loadRest();
  const { calls } = await import('/js/bench-calls.js');
  const median = (values) => values.sort((a, b) => a - b)[values.length >> 1];
  const time = (f) => { const start = performance.now(); f(); return performance.now() - start; };
  const figures = {};
  const searches = [...Object.entries(designs).map(([name, source]) => [name, { source }]), ['idem-race', 'idem-race']];
  for (const [name, scenario] of searches) {
    const search = () => m.exploreScenario(scenario, {});
    // The first search untimed; then about a second of them, at least
    // three samples, each of enough searches to last 20 ms (the page's
    // timer resolves to 0.1 ms).
    const batch = Math.max(1, Math.ceil(20 / Math.max(time(search), 0.1)));
    const times = [];
    for (let i = 0; i < 3 || (i < 50 && times.reduce((a, b) => a + b, 0) * batch < 1000); i += 1) {
      times.push(time(() => { for (let j = 0; j < batch; j += 1) search(); }) / batch);
    }
    figures[`search of ${name}, ms`] = median(times);
  }
  for (const [name, make] of Object.entries(calls(m))) {
    const call = make();
    for (let i = 0; i < 200; i += 1) call();
    const rounds = Array.from({ length: 5 }, () => time(() => { for (let i = 0; i < 200; i += 1) call(); }) * 5);
    figures[`${name}, µs`] = median(rounds);
  }
  return figures;
}

// Runs in the page: the same SQL as the engine's benchmark, through each
// peer's JS API with prepared statements reused, `rounds` rounds of
// `iterations` operations, the peers' order rotated each round; medians.
async function peerBench({ sql, rounds, iterations }) {
  const loadScript = (src) => new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = src;
    script.onload = resolve;
    script.onerror = () => reject(new Error(`cannot load ${src}`));
    document.head.append(script);
  });
  const sqlite3InitModule = (await import('/peers/sqlite-wasm/index.mjs')).default;
  const sqlite3 = await sqlite3InitModule({ print: () => {}, printErr: () => {} });
  await loadScript('/peers/sql.js/sql-wasm-browser.js');
  const SQL = await globalThis.initSqlJs({ locateFile: (file) => `/peers/sql.js/${file}` });
  // One adapter per peer: open, exec, prepare -> { run(values), get(values) }.
  const adapters = {
    '@sqlite.org/sqlite-wasm': {
      version: sqlite3.version.libVersion,
      open() {
        const db = new sqlite3.oo1.DB(':memory:');
        return {
          exec: (text) => db.exec(text),
          prepare(text) {
            const st = db.prepare(text);
            return {
              run(values) { if (values.length) st.bind(values); st.step(); st.reset(true); },
              get(values) { if (values.length) st.bind(values); const row = st.step() ? st.get([]) : null; st.reset(true); return row; },
            };
          },
        };
      },
    },
    'sql.js': {
      version: SQL.Database ? new SQL.Database().exec('SELECT sqlite_version()')[0].values[0][0] : '?',
      open() {
        const db = new SQL.Database();
        return {
          exec: (text) => db.exec(text),
          prepare(text) {
            const st = db.prepare(text);
            return {
              run(values) { if (values.length) st.bind(values); st.step(); st.reset(); },
              get(values) { if (values.length) st.bind(values); const row = st.step() ? st.get() : null; st.reset(); return row; },
            };
          },
        };
      },
    },
  };
  // Runs the recorded `statements` (each with its values) on `db` once per
  // call, the recorded order and event ids replaced by the call's own.
  function outboxOperation(db, schema, statements) {
    db.exec(schema);
    const prepared = statements.map((s) => ({ st: db.prepare(s.sql), params: s.params }));
    let n = 0;
    return () => {
      n += 1;
      const own = { [sql.outbox.orderId]: `order:peer${n}`, [sql.outbox.eventId]: `order-created:peer${n}` };
      for (const { st, params } of prepared) {
        const values = params.map((v) => (typeof v === 'string' && v in own ? own[v] : v));
        st.run(values);
      }
    };
  }
  // The operations, as the engine's benchmark has them.
  const operations = {
    'write transaction (BEGIN IMMEDIATE; INSERT; COMMIT)': (db) => {
      db.exec(sql.schema);
      const [begin, insert, commit] = ['BEGIN IMMEDIATE', sql.insert, 'COMMIT'].map((t) => db.prepare(t));
      return () => { begin.run([]); insert.run(['north', 'web-order', 2]); commit.run([]); };
    },
    "the reference's execute transaction": (db) => {
      db.exec(sql.ordersSchema);
      // The effect's id comes back through RETURNING (sql.js has no
      // last_insert_rowid call); the engine reads it from the connection.
      const [begin, select, insert, receipt, commit] = ['BEGIN IMMEDIATE', sql.selectReceipt, `${sql.insert} RETURNING id`, sql.insertReceipt, 'COMMIT'].map((t) => db.prepare(t));
      let key = 0;
      return () => {
        key += 1;
        const scope = ['north', 'web-order', `k${key}`];
        begin.run([]);
        select.get(scope);
        const [id] = insert.get(['north', 'web-order', 2]);
        receipt.run([...scope, '{"quantity":2}', `{"effect_id":${id},"quantity":2}`, 60]);
        commit.run([]);
      };
    },
    // The outbox session's transactions, statement by statement as the
    // library's programs ran them, each operation with its own ids.
    "OutboxSession.createOrder()'s transaction": (db) => outboxOperation(db, sql.outbox.producerPragmas + sql.outbox.producerSchema, sql.outbox.createOrder),
    "OutboxSession.deliver()'s transaction": (db) => outboxOperation(db, sql.outbox.consumerSchema, sql.outbox.deliver),
    [`point select on a table of ${sql.pointRows.toLocaleString('en')} rows`]: (db) => {
      db.exec(sql.schema);
      const [begin, insert, commit] = ['BEGIN', sql.insert, 'COMMIT'].map((t) => db.prepare(t));
      begin.run([]);
      for (let i = 0; i < sql.pointRows; i += 1) insert.run(['north', 'web-order', 2]);
      commit.run([]);
      const select = db.prepare(sql.pointSelect);
      let id = 0;
      return () => { id = (id % sql.pointRows) + 1; select.get([id]); };
    },
  };
  const names = Object.keys(adapters);
  const results = {};
  for (const [operation, make] of Object.entries(operations)) {
    const ops = Object.fromEntries(names.map((name) => [name, make(adapters[name].open())]));
    // Warm-up: one untimed round each, as the engine's benchmark does.
    for (const name of names) for (let i = 0; i < Math.min(iterations, 100); i += 1) ops[name]();
    const means = Object.fromEntries(names.map((name) => [name, []]));
    for (let round = 0; round < rounds; round += 1) {
      const order = names.map((_, i) => names[(i + round) % names.length]);
      for (const name of order) {
        const op = ops[name];
        const start = performance.now();
        for (let i = 0; i < iterations; i += 1) op();
        means[name].push(((performance.now() - start) * 1000) / iterations);
      }
    }
    results[operation] = Object.fromEntries(names.map((name) => {
      const sorted = means[name].sort((a, b) => a - b);
      return [name, { medianUs: sorted[sorted.length >> 1], minUs: sorted[0], maxUs: sorted[sorted.length - 1] }];
    }));
  }
  return { versions: Object.fromEntries(names.map((n) => [n, adapters[n].version])), results, crossOriginIsolated: globalThis.crossOriginIsolated };
}

const [rounds = '15', iterations = '2000'] = process.argv.slice(2);
// Loads per measurement of the start (odd, for a median). A first visit's
// times move by tens of ms from one load to the next, so a full run takes
// more of them; a quick run only checks that each measurement works. A
// returning visitor's loads each wait for V8's code cache (CODE_CACHE_WAIT_MS).
const FULL = Number(iterations) >= 1000;
const LOADS = { playground: FULL ? 11 : 5, firstQuery: FULL ? 15 : 7, returning: FULL ? 5 : 1 };
const server = await startServer();
const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  await servePeers(page);
  await page.goto(`${server.url}bench.html?rounds=${rounds}&iterations=${iterations}`);
  const report = page.locator('#report[data-state]');
  await report.waitFor({ state: 'attached', timeout: 600000 });
  const json = JSON.parse(await report.textContent());
  json.browser = `Chromium ${browser.version()}`;
  // The same SQL through the other browser builds, in the same session.
  if (json.sql) {
    json.peers = await page.evaluate(peerBench, { sql: json.sql, rounds: Number(rounds), iterations: Number(iterations) });
  }
  // The split module against the whole one it was cut from: alternated
  // fresh pages, each doing the same work (the split must cost no speed:
  // calls that cross between its two parts are never inlined).
  const designsDir = path.join(here, '..', '..', 'src', 'scenarios', 'reach');
  const designs = Object.fromEntries(fs.readdirSync(designsDir).filter((f) => f.endsWith('.toml')).sort()
    .map((f) => [f.replace(/\.toml$/, ''), fs.readFileSync(path.join(designsDir, f), 'utf8')]));
  const pairs = [];
  for (let i = 0; i < (FULL ? 4 : 1); i += 1) {
    const pair = {};
    for (const build of i % 2 ? ['whole', 'replayground'] : ['replayground', 'whole']) {
      const context = await browser.newContext();
      const fresh = await context.newPage();
      await servePeers(fresh);
      await fresh.goto(`${server.url}pkg/README.md`);
      pair[build === 'whole' ? 'whole' : 'split'] = await fresh.evaluate(splitOrWhole, { build, designs });
      await context.close();
    }
    pairs.push(pair);
  }
  json.splitVsWhole = pairs;
  // Navigation timing: a fresh context per repetition, so nothing is cached.
  const samples = [];
  for (let i = 0; i < LOADS.playground; i += 1) {
    const context = await browser.newContext();
    samples.push(await load(context, `${server.url}${PERMALINK}`, playgroundReady, playgroundMarks));
    await context.close();
  }
  json.navigation = samples;
  json.firstVisitRest = await firstVisitRest(`${server.url}${PERMALINK}`);
  // How soon each build answers a first query: a fresh context per load,
  // the builds' order rotated each repetition.
  const peerServer = await startPeerServer();
  const names = Object.keys(FIRST_QUERY);
  const firstQuery = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < LOADS.firstQuery; i += 1) {
    for (let j = 0; j < names.length; j += 1) {
      const k = (i + j) % names.length;
      const context = await browser.newContext();
      firstQuery[names[k]].push(await load(context, `${peerServer.url}peers/first-query/${k}`, firstQueryReady, firstQueryMs));
      await context.close();
    }
  }
  json.firstQuery = firstQuery;
  // A returning visitor: a profile on disk per repetition; each page (the
  // permalink, each build's first query) loaded once and left open while V8
  // caches its module's code, then loaded again: the second load is measured.
  const returning = { navigation: [], firstQuery: Object.fromEntries(names.map((n) => [n, []])) };
  for (let i = 0; i < LOADS.returning; i += 1) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'replayground-returning-'));
    const context = await launchPersistent(dir);
    try {
      const twice = async (url, ready, measure) => {
        await load(context, url, ready, async (page) => {
          await page.waitForTimeout(CODE_CACHE_WAIT_MS);
          return measure(page);
        });
        return load(context, url, ready, measure);
      };
      returning.navigation.push(await twice(`${server.url}${PERMALINK}`, playgroundReady, playgroundMarks));
      for (let j = 0; j < names.length; j += 1) {
        const k = (i + j) % names.length;
        returning.firstQuery[names[k]].push(await twice(`${peerServer.url}peers/first-query/${k}`, firstQueryReady, firstQueryMs));
      }
    } finally {
      await context.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  json.returning = { ...returning, codeCacheWaitMs: CODE_CACHE_WAIT_MS };
  peerServer.stop();
  // The page's own search, through its Run button: a random search of the
  // 2-attempt race, timed from the click to the verdict; then how soon a
  // Cancel is heard. Fresh contexts, as a user's first search.
  const runs = FULL ? 10000 : 200;
  const searches = [];
  for (let i = 0; i < 3; i += 1) {
    const context = await browser.newContext();
    const fresh = await context.newPage();
    await fresh.goto(`${server.url}?s=idem-race&attempts=2`);
    await fresh.locator('body[data-ready="true"]').waitFor({ timeout: 60000 });
    await fresh.selectOption('#strategy', 'random');
    await fresh.fill('#runs', String(runs));
    // A warm-up search, so that the timed one runs on compiled code.
    await fresh.click('#run');
    await fresh.locator('#run:enabled').waitFor({ timeout: 600000 });
    const ms = await fresh.evaluate(async () => {
      const start = performance.now();
      document.getElementById('run').click();
      await new Promise((resolve) => {
        const check = () => (document.getElementById('run').disabled ? setTimeout(check, 1) : resolve());
        setTimeout(check, 1);
      });
      return performance.now() - start;
    });
    const status = await fresh.locator('#run-status').textContent();
    // A search long enough to cancel: how long until the page is free again.
    await fresh.fill('#runs', '100000');
    await fresh.click('#run');
    await fresh.locator('#run-status', { hasText: 'Exploring:' }).waitFor({ timeout: 30000 });
    const cancelMs = await fresh.evaluate(async () => {
      const start = performance.now();
      document.getElementById('cancel').click();
      await new Promise((resolve) => {
        const check = () => (document.getElementById('run').disabled ? setTimeout(check, 1) : resolve());
        setTimeout(check, 1);
      });
      return performance.now() - start;
    });
    searches.push({ runs, ms, runsPerSecond: (runs * 1000) / ms, cancelMs, status });
    await context.close();
  }
  json.pageSearch = searches;
  // Stepping by hand in the page: the long design of 400 heavy steps
  // (bench-calls.js) stepped by 400 keys sent at once, the attempts in
  // turn; each step's handling (the engine's answer and the drawing) as the
  // page measures it ('replayground:step', www/js/run.js), in a fresh page.
  {
    const context = await browser.newContext();
    const fresh = await context.newPage();
    await fresh.setViewportSize({ width: 1280, height: 800 });
    await fresh.goto(`${server.url}?s=idem-race`);
    await fresh.locator('body[data-ready="true"]').waitFor({ timeout: 60000 });
    await openLongDesign(fresh, 60000);
    const started = Date.now();
    for (let i = 0; i < 400; i += 1) await fresh.keyboard.press(i % 2 ? 'b' : 'a');
    await fresh.locator('#lanes .step[data-step="399"]').waitFor({ timeout: 600000 });
    const wallMs = Date.now() - started;
    const handling = await fresh.evaluate(() => performance.getEntriesByName('replayground:step').map((e) => e.duration));
    const sorted = [...handling].sort((a, b) => a - b);
    json.pageStepping = {
      steps: handling.length,
      medianMs: sorted[sorted.length >> 1],
      maxMs: sorted[sorted.length - 1],
      totalMs: handling.reduce((a, b) => a + b, 0),
      wallMs,
    };
    await context.close();
  }
  // The page's exhaustive search of a large design, on one worker and split
  // across the workers the page uses (full budget only: about a minute).
  if (FULL) {
    const design = fs.readFileSync(path.join(here, '..', '..', 'src', 'scenarios', 'reach', 'three-producers-two-relays.toml'), 'utf8');
    const split = [];
    for (const cores of [1, null]) {
      const context = await browser.newContext();
      if (cores) await context.addInitScript((n) => Object.defineProperty(navigator, 'hardwareConcurrency', { get: () => n }), cores);
      const fresh = await context.newPage();
      await fresh.goto(`${server.url}?s=idem-race&attempts=2`);
      await fresh.locator('body[data-ready="true"]').waitFor({ timeout: 60000 });
      await fresh.click('[data-action="new-design"]');
      await fresh.fill('#source', design);
      await fresh.click('[data-action="apply-source"]');
      await fresh.locator('#run:enabled').waitFor({ timeout: 60000 });
      await fresh.selectOption('#strategy', 'exhaustive');
      await fresh.fill('#budget', '1000000');
      const workers = await fresh.evaluate(() => Math.min(Number(navigator.hardwareConcurrency) || 1, 4));
      // A page with helpers starts them about a second after it is ready
      // and has them warm up on a bundled design (engine.prepareSearches),
      // as a user's page has by the time they have written a design.
      const warmed = workers > 1 && await fresh.locator('body[data-search-workers="warm"]')
        .waitFor({ timeout: 30000 }).then(() => true, () => false);
      const ms = await fresh.evaluate(async () => {
        const start = performance.now();
        document.getElementById('run').click();
        await new Promise((resolve) => {
          const check = () => (document.getElementById('run').disabled ? setTimeout(check, 5) : resolve());
          setTimeout(check, 5);
        });
        return performance.now() - start;
      });
      // When the page splits a search (the page's own constant).
      const splitAfterMs = await fresh.evaluate(async (warm) => {
        const engine = await import('./js/engine.js');
        return warm ? engine.SPLIT_WARM_MS : engine.SPLIT_AFTER_MS;
      }, warmed);
      split.push({ workers, warmed, ms, splitAfterMs, status: await fresh.locator('#run-status').textContent() });
      await context.close();
    }
    json.pageSplit = split;
  }
  process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  if (json.error) process.exitCode = 1;
} finally {
  await browser.close();
  server.stop();
}
