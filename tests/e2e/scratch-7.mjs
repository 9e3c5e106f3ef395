import { startServer, launchBrowser, openPage } from './harness.mjs';
import { readFileSync } from 'node:fs';
const base = readFileSync('/tmp/newuser/src/base.toml', 'utf8');
const server = await startServer();
const browser = await launchBrowser();
const { page, seen } = await openPage(browser, server.url, { viewport: { width: 1400, height: 900 } });
await page.goto(server.url + 'bench.html');
const variants = {
  wal: 'journal = "wal"\n' + base,
  bogus: 'journal = "bogus"\n' + base,
  WALcaps: 'journal = "WAL"\n' + base,
  num: 'journal = 1\n' + base,
  paramsJournal: base + '\n[params.journal]\ntype = "choice"\noptions = ["rollback", "wal"]\ndefault = "wal"\nmeaning = "x"\n',
  paramsJournalInline: base.replace('fails = true', 'fails = true\nparams.journal = {}'),
  pragmaLock: "journal = \"wal\"\n" + base.replace("[databases.main]", "[databases.main]\npragmas = \"PRAGMA locking_mode = EXCLUSIVE\""),
  pragmaSync: "journal = \"wal\"\n" + base.replace("[databases.main]", "[databases.main]\npragmas = \"PRAGMA synchronous = OFF; PRAGMA query_only = 1\""),
  walnoteHtml: 'journal = "wal"\nwal-note = "<img src=x onerror=alert(1)>"\n' + base,
  walnoteNoJournal: 'wal-note = "<b>bold</b>"\n' + base,
  walnoteNum: 'wal-note = 5\n' + base,
  walnoteHuge: 'wal-note = "' + 'x'.repeat(200000) + '"\n' + base,
  journalInDb: base.replace('[databases.main]', '[databases.main]\njournal = "wal"'),
  pragmaWal: base.replace('[databases.main]', '[databases.main]\npragmas = "PRAGMA journal_mode = WAL"'),
  pragmaDelete: 'journal = "wal"\n' + base.replace('[databases.main]', '[databases.main]\npragmas = "PRAGMA journal_mode = DELETE"'),
  stepPragma: 'journal = "wal"\n' + base.replace('{ name = "begin", sql = "BEGIN" },', '{ name = "mode", sql = "PRAGMA journal_mode = delete" },\n  { name = "begin", sql = "BEGIN" },'),
  stepPragmaRead: 'journal = "wal"\n' + base.replace('{ name = "begin", sql = "BEGIN" },', '{ name = "mode", sql = "PRAGMA journal_mode", capture = "m", note = "mode is {m}" },\n  { name = "begin", sql = "BEGIN" },'),
  tvfPragma: 'journal = "wal"\n' + base.replace('{ name = "begin", sql = "BEGIN" },', '{ name = "mode", sql = "SELECT * FROM pragma_journal_mode", capture = "m", note = "mode is {m}" },\n  { name = "begin", sql = "BEGIN" },'),
  ckpt: 'journal = "wal"\n' + base.replace('{ name = "begin", sql = "BEGIN" },', '{ name = "ck", sql = "PRAGMA wal_checkpoint(TRUNCATE)" },\n  { name = "begin", sql = "BEGIN" },'),
  ckptSel: 'journal = "wal"\n' + base.replace('{ name = "begin", sql = "BEGIN" },', '{ name = "ck", sql = "SELECT * FROM pragma_wal_checkpoint" },\n  { name = "begin", sql = "BEGIN" },'),
  attachWal: 'journal = "wal"\n' + base.replace('{ name = "begin", sql = "BEGIN" },', '{ name = "att", sql = "ATTACH \'other.db\' AS o" },\n  { name = "begin", sql = "BEGIN" },'),
  vacuum: 'journal = "wal"\n' + base.replace('{ name = "begin", sql = "BEGIN" },', '{ name = "vac", sql = "VACUUM" },\n  { name = "begin", sql = "BEGIN" },'),
  exclusive: 'journal = "wal"\n' + base.replace('sql = "BEGIN" }', 'sql = "BEGIN EXCLUSIVE" }'),
};
const out = await page.evaluate(async (variants) => {
  const m = await import('/pkg/replayground.js');
  await m.default();
  const res = [];
  for (const [k, source] of Object.entries(variants)) {
    let d, r, e;
    try { d = m.describeScenario({ source, name: k }); } catch (x) { e = 'describe: ' + x.message; }
    if (!e) {
      try { r = m.exploreScenario({ source, name: k }, {}); } catch (x) { e = 'explore: ' + x.message; }
    }
    let rr;
    if (!e) { try { rr = m.runScenario({ source, name: k }, { params: { journal: 'wal' } }); } catch (x) { rr = { err: x.message }; } }
    res.push({ k, e, walNote: d?.walNote?.slice?.(0, 80), params: d?.params?.map(p => p.name + '=' + p.default), keys: d && Object.keys(d), explore: r && { cx: r.counterexample?.schedule, stats: r.stats?.runs, reason: r.counterexample?.reason?.slice?.(0,100) }, steps: rr && (rr.err ?? rr.trace?.map(s => (s.note ?? '') + ' [' + JSON.stringify(s.result).slice(0,120) + ']').slice(0, 4)), statuses: rr?.statuses && JSON.stringify(rr.statuses).slice(0, 300) });
  }
  return res;
}, variants);
for (const r of out) console.log(JSON.stringify(r, null, 0).slice(0, 1500) + '\n');
console.log(seen.errors);
await browser.close(); server.stop();
