// Reads the counters of a module written by `replayground-split count`
// (scripts/split/src/count.rs), for calls.mjs and the split's tests.

// The counters an edge list (EDGES.tsv) declares, in order: a line per
// counter, after the functions' lines (which start with `=`), each
// [caller, callee] (caller `>` for a function's entry counter).
export function counterEdges(edgesText) {
  return edgesText.split('\n').filter((l) => l && !l.startsWith('=\t')).map((l) => l.split('\t'));
}

// The number of counters an edge list declares.
export function counterCount(edgesText) {
  return counterEdges(edgesText).length;
}

// A function that returns every counter of the counted module whose raw
// exports are `raw` (what initSync returns), as BigInts in edge-list order.
export function counterReader(raw, edgesText) {
  const count = counterCount(edgesText);
  return () => {
    const bytes = count * 8;
    const ptr = raw.__wbindgen_malloc(bytes, 8);
    raw.__count_dump(ptr);
    const counters = new BigInt64Array(raw.memory.buffer, ptr, count).slice();
    raw.__wbindgen_free(ptr, bytes, 8);
    return counters;
  };
}
