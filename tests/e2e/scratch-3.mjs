import { startServer, launchBrowser, openPage } from './harness.mjs';
const server = await startServer();
const browser = await launchBrowser();
const { page, seen } = await openPage(browser, server.url, { viewport: { width: 1400, height: 900 } });
await page.goto(server.url + 'bench.html');
const out = await page.evaluate(async () => {
  const m = await import('/pkg/replayground.js');
  await m.default();
  const res = [];
  const t = (name, f) => { try { const r = f(); res.push([name, 'OK', JSON.stringify(r)?.slice(0, 300)]); } catch (e) { res.push([name, 'THROW', (e && e.constructor && e.constructor.name) + ': ' + String(e && e.message !== undefined ? e.message : e).slice(0, 300)]); } };
  const bad = {
    x: { journal: 'x' }, one: { journal: 1 }, nul: { journal: null }, undef: { journal: undefined },
    WAL: { journal: 'WAL' }, empty: { journal: '' }, walsp: { journal: 'wal ' }, big: { journal: 'w'.repeat(100000) },
    proxy: new Proxy({}, { get() { throw new Error('trap!'); }, ownKeys() { throw new Error('ownKeys trap'); }, getOwnPropertyDescriptor() { throw new Error('gopd trap'); } }),
    proxyGetOnly: new Proxy({ journal: 'wal' }, { get() { throw new Error('get trap'); } }),
    toStr: { journal: { toString() { throw new Error('toString!'); } } },
    toStrStr: { journal: { toString() { return 'wal'; } } },
    boxed: { journal: new String('wal') },
    arr: { journal: ['wal'] },
    getter: Object.defineProperty({}, 'journal', { get() { throw new Error('getter'); }, enumerable: true }),
    nullproto: Object.assign(Object.create(null), { journal: 'wal' }),
    sym: { journal: Symbol('wal') },
    nested: { journal: { journal: 'wal' } },
    nul0: { journal: 'wal\u0000' },
  };
  for (const [k, p] of Object.entries(bad)) {
    t('run ' + k, () => { const r = m.runScenario('idem-race', { params: p }); return { params: r.params, ok: r.passed ?? r.verdict ?? Object.keys(r) }; });
  }
  for (const k of ['x', 'proxy', 'toStr', 'getter', 'big']) {
    t('stepper ' + k, () => { const s = new m.Stepper('idem-race', { params: bad[k] }); return s.state().params; });
    t('explore ' + k, () => { const s = new m.Exploration('idem-race', { params: bad[k] }); return s.advance(1); });
    t('exportPython ' + k, () => m.exportPython('idem-race', { schedule: 'A', params: bad[k] }).slice(0, 50));
    t('exploreScenario ' + k, () => Object.keys(m.exploreScenario('idem-deferred', { params: bad[k] })));
  }
  // describeScenario with params? 
  t('describe deferred', () => m.describeScenario('idem-deferred'));
  // options proxy whole
  t('options proxy', () => m.runScenario('idem-race', new Proxy({}, { get() { throw new Error('opt get'); }, ownKeys() { throw new Error('opt keys'); } })));
  t('params proxy revoked', () => { const r = Proxy.revocable({}, {}); r.revoke(); return m.runScenario('idem-race', { params: r.proxy }); });
  // good ones
  t('run wal', () => { const r = m.runScenario('idem-deferred', { params: { journal: 'wal' } }); return { params: r.params, keys: Object.keys(r) }; });
  t('stepper wal', () => { const s = new m.Stepper('idem-deferred', { params: { journal: 'wal' } }); s.step(0); s.step(0); return s.state().params; });
  t('explore deferred wal', () => { const r = m.exploreScenario('idem-deferred', { params: { journal: 'wal' } }); return { stats: r.stats, cx: r.counterexample?.schedule, keys: Object.keys(r) }; });
  t('exportPython wal', () => m.exportPython('idem-deferred', { schedule: 'A4B3AB', params: { journal: 'wal' } }).split('\n').filter(l => /wal|WAL|journal/i.test(l)).slice(0, 20).join('\n'));
  t('parsePermalink', () => m.parsePermalink('s=idem-race&journal=WAL'));
  t('parsePermalink dup', () => m.parsePermalink('s=idem-race&journal=wal&journal=rollback'));
  t('parsePermalink empty', () => m.parsePermalink('s=idem-race&journal='));
  t('parsePermalink nul', () => m.parsePermalink('s=idem-race&journal=%00'));
  t('after all, run ok', () => m.runScenario('idem-race', {}).params);
  return res;
});
for (const r of out) console.log(r.join(' | '));
console.log('errors', seen);
await browser.close(); server.stop();
