// Counts the calls the benchmark's work makes inside the module, caller by
// callee, so that the split keeps the busiest calls on one side (a call
// from one part into the other is never inlined and goes through an import
// or the table: split where a search's hot calls cross, the searches ran
// 5-10% slower than the whole module's).
//
// Usage: node calls.mjs COUNTED.wasm EDGES.tsv GLUE_DIR > counts.json
// COUNTED.wasm and EDGES.tsv are `replayground-split count`'s output; the
// glue is www/pkg's (it loads a whole module as well as a split one).
// Output: { workload: { counter index: calls } }, one workload per search
// the benchmark times (the reach designs and the 8-attempt race, explored
// as the page's worker does, in slices), per call of the benchmark page's
// (www/js/bench-calls.js) and the engine's own benchmark; hot.py weighs
// each workload by its own total, so that a short one counts as much as a
// long one.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { counterReader } from './counters.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const [counted, edgesFile, glueDir] = process.argv.slice(2);
const m = await import(pathToFileURL(path.join(glueDir, 'replayground.js')).href);
const { calls } = await import(pathToFileURL(path.join(root, 'www', 'js', 'bench-calls.js')).href);
const raw = m.initSync({ module: readFileSync(counted) });
// Every counter, as BigInts.
const dump = counterReader(raw, readFileSync(edgesFile, 'utf8'));

// An exhaustive search as the page's worker runs one: slices of 200 runs.
const explore = (scenario) => () => {
  const search = new m.Exploration(scenario, {});
  while (!search.advance(200).done);
  search.free();
};

// Calls of the benchmark page's, each kind on a fresh object.
const CALLS_PER_KIND = 2000;

const workloads = {};
const reach = path.join(root, 'src', 'scenarios', 'reach');
for (const file of readdirSync(reach).filter((f) => f.endsWith('.toml')).sort()) {
  workloads[`search of ${file}`] = explore({ source: readFileSync(path.join(reach, file), 'utf8') });
}
workloads['search of idem-race'] = explore('idem-race');
for (const [name, make] of Object.entries(calls(m))) {
  workloads[name] = () => {
    const call = make();
    for (let i = 0; i < CALLS_PER_KIND; i += 1) call();
  };
}
workloads['the engine benchmark'] = () => m.benchEngine(1, 200);

const counts = {};
let last = dump();
for (const [name, run] of Object.entries(workloads)) {
  run();
  const now = dump();
  const delta = {};
  now.forEach((n, k) => { if (n !== last[k]) delta[k] = Number(n - last[k]); });
  last = now;
  counts[name] = delta;
  const total = Object.values(delta).reduce((a, b) => a + b, 0);
  process.stderr.write(`calls: ${name}: ${total.toLocaleString('en')} counted (calls and entries)\n`);
}
process.stdout.write(JSON.stringify(counts));
