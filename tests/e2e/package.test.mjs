// The element as a package: `npm pack` in www/ makes a tarball of the
// element alone (its module, worker, wasm and glue, stylesheet and types);
// installed offline into a small site outside www/, served by a plain static
// server with a strict Content-Security-Policy (no 'unsafe-inline'), it runs
// a built-in and a design of the page's own in Chromium and in Firefox.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';
import { launchBrowser } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const POLICY = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; worker-src 'self'; connect-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'";
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json', '.toml': 'text/plain' };

// A design of the page's own, inline: a conformance design, read where it lives.
const DESIGN = readFileSync(path.join(root, 'tests', 'conformance', 'seat-check-then-insert.toml'), 'utf8');

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A site of its own</title><link rel="icon" href="data:,">
<script type="module" src="node_modules/replayground-element/js/embed.js"></script></head>
<body><main>
<h1>Two designs</h1>
<replayground-scenario scenario="idem-check-then-write" schedule="A6B3AB4"></replayground-scenario>
<replayground-scenario schedule="ABAB"><script type="application/toml">
${DESIGN}</script></replayground-scenario>
</main></body></html>
`;

const env = { server: null, url: null, files: null };

before(() => {
  const work = mkdtempSync(path.join(tmpdir(), 'replayground-package-'));
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: path.join(root, 'www'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'],
  }));
  env.files = packed.files.map((f) => f.path);
  env.version = packed.version;
  const site = path.join(work, 'site');
  execFileSync('mkdir', ['-p', site]);
  writeFileSync(path.join(site, 'package.json'), '{ "private": true }\n');
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', path.join(work, packed.filename)], {
    cwd: site, stdio: ['ignore', 'ignore', 'inherit'],
  });
  writeFileSync(path.join(site, 'index.html'), PAGE);
  env.server = createServer((request, response) => {
    const file = path.join(site, decodeURIComponent(new URL(request.url, 'http://x').pathname));
    if (!file.startsWith(site)) return response.writeHead(403).end();
    const target = file.endsWith(path.sep) ? path.join(file, 'index.html') : file;
    try {
      const body = readFileSync(target);
      response.writeHead(200, {
        'Content-Type': TYPES[path.extname(target)] ?? 'application/octet-stream',
        'Content-Security-Policy': POLICY,
      });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolve) => env.server.listen(0, '127.0.0.1', () => {
    env.url = `http://127.0.0.1:${env.server.address().port}/`;
    resolve();
  }));
});
after(() => env.server?.close());

test('npm pack makes the element alone, at the crate\'s version', () => {
  const cargo = readFileSync(path.join(root, 'Cargo.toml'), 'utf8').match(/^version = "([^"]+)"/m)[1];
  assert.equal(env.version, cargo);
  for (const file of ['js/embed.js', 'js/worker.js', 'js/engine.js', 'pkg/replayground_bg.wasm', 'pkg/replayground_rest.wasm', 'pkg/replayground.js', 'css/embed.css', 'types/embed.d.ts', 'README.md']) {
    assert.ok(env.files.includes(file), `${file} is packed`);
  }
  for (const file of env.files) {
    assert.doesNotMatch(file, /\.html$|^book\/|^docs\/|^js\/app\.js$/, `${file} is the playground's, not the element's`);
  }
});

test('the installed element runs a built-in and a design in a site of its own under a strict CSP, in Chromium', async () => {
  const browser = await launchBrowser();
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  const foreign = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith(env.url) && !r.url().startsWith('blob:')) foreign.push(r.url()); });
  await page.goto(env.url);
  const players = page.locator('replayground-scenario');
  assert.equal(await players.count(), 2);
  for (let i = 0; i < 2; i += 1) {
    await players.nth(i).locator('.frame[data-state="ready"]').waitFor({ timeout: 60000 });
  }
  for (let i = 0; i < 2; i += 1) {
    await players.nth(i).locator('button[data-control="run"]').click();
    await players.nth(i).locator('.verdict[data-kind="fail"]').waitFor({ timeout: 60000 });
  }
  assert.match(await players.nth(1).locator('.verdict').textContent(), /seat 7 is booked once/);
  assert.deepEqual(errors, []);
  assert.deepEqual(foreign, []);
  await browser.close();
});

test('the installed element runs in Firefox too', async () => {
  const browser = await puppeteer.launch({
    browser: 'firefox', protocol: 'webDriverBiDi', headless: true,
    executablePath: process.env.REPLAYGROUND_FIREFOX || '/usr/bin/firefox-esr',
  });
  const page = await browser.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(env.url);
  await page.waitForFunction(() => [...document.querySelectorAll('replayground-scenario')]
    .every((p) => p.shadowRoot?.querySelector('.frame')?.dataset.state === 'ready'), { timeout: 60000 });
  await page.evaluate(() => document.querySelectorAll('replayground-scenario')[1].shadowRoot
    .querySelector('button[data-control="run"]').click());
  await page.waitForFunction(() => document.querySelectorAll('replayground-scenario')[1].shadowRoot
    .querySelector('.verdict[data-kind="fail"]'), { timeout: 60000 });
  assert.deepEqual(errors, []);
  await browser.close();
});
