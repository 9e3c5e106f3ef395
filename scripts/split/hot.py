#!/usr/bin/env python3
"""Chooses the functions the split keeps in the primary beside the first
visit's, so that the calls the benchmark's work makes most often do not
cross from one part into the other.

Usage: hot.py EDGES.tsv COUNTS.json FIRST_VISIT.txt -> one name per line,
sorted (hot-calls.txt). EDGES.tsv is `replayground-split count`'s list,
COUNTS.json what scripts/split/calls.mjs counted.

Each workload's calls are weighed by its own total, so that a short search
counts as much as a long one: a function's gain is the weight of its calls
to and from the primary less those to and from the rest. Greedily, the
function of the highest gain per instruction moves to the primary, until
BUDGET instructions have moved. Small functions are in both parts (the
splitter copies them into the rest), so their calls never cross; nor do
calls to the module's imports, which either part calls directly.
"""
import collections
import json
import sys

# Instructions moved into the primary: about 40 KB brotli, what the primary
# and its glue (about 459 KB) may grow by and stay under the official
# sqlite-wasm build with its glue (496.5 KB; issue 45's size target).
BUDGET = 40_000


def main():
    edges_tsv, counts_json, first_visit = sys.argv[1:4]
    size = collections.Counter()
    pinned = {}  # name -> the split keeps every copy in the primary anyway
    edges = []
    for line in open(edges_tsv):
        fields = line.rstrip("\n").split("\t")
        if fields[0] == "=":
            _, name, instructions, stays = fields
            size[name] += int(instructions)
            pinned[name] = pinned.get(name, True) and stays == "1"
        else:
            edges.append((fields[0], fields[1]))
    listed = {line.strip() for line in open(first_visit) if line.strip()}
    small = {n for n, stays in pinned.items() if stays and n not in listed}
    primary = {n for n, stays in pinned.items() if stays or n in listed}

    weight = collections.defaultdict(collections.Counter)
    for counters in json.load(open(counts_json)).values():
        total = sum(counters.values())
        for k, calls in counters.items():
            f, g = edges[int(k)]
            # A call to an import (JS) costs the same from either part.
            if f != g and f in pinned and g in pinned and f not in small and g not in small:
                weight[f][g] += calls / total
                weight[g][f] += calls / total

    def gain(name):
        return sum(w if other in primary else -w for other, w in weight[name].items())

    candidates = {n for n in weight if n not in primary}
    spent = 0
    chosen = []
    while True:
        best = max(
            ((gain(n) / max(size[n], 1), n) for n in candidates if size[n] <= BUDGET - spent),
            default=None,
        )
        if best is None or best[0] <= 0:
            break
        _, name = best
        candidates.discard(name)
        primary.add(name)
        spent += size[name]
        chosen.append(name)
    print(f"hot: {len(chosen)} names, {spent:,} instructions of {BUDGET:,}", file=sys.stderr)
    sys.stdout.write("".join(f"{n}\n" for n in sorted(chosen)))


if __name__ == "__main__":
    main()
