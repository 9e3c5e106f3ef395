#!/usr/bin/env python3
"""Chooses the functions the split keeps in the primary beside the first
visit's, so that the calls the benchmark's work makes most often do not
cross from one part into the other.

Usage: hot.py EDGES.tsv COUNTS.json FIRST_VISIT.txt -> one name per line,
sorted (hot-calls.txt). EDGES.tsv is `replayground-split count`'s list,
COUNTS.json what scripts/split/calls.mjs counted.

Where each function runs (count.rs writes its `place`):
- `primary`: only in the primary (no name, or it touches a segment);
- `copied`: small; the primary has it and the rest a copy of it wherever
  its bodies call it, so it runs in its caller's part. Its own calls are
  therefore counted as its callers' calls, in proportion to how often each
  called it;
- `listed`: in the primary if a list names it, else in the rest.
A function entered other than by a direct call (through the table or from
JS: the functions' entry counters less their direct calls) is entered in the
primary, where the table's slots and the exports are: those entries count as
calls from a function fixed in the primary. Calls to the module's imports
cost the same from either part and are left out.

Each workload's calls are weighed by its own total, so that a short search
counts as much as a long one: a function's gain is the weight of its calls
to and from the primary less those to and from the rest. Greedily, the
function of the highest gain per instruction moves to the primary, until
BUDGET instructions have moved.
"""
import collections
import json
import sys

# Instructions moved into the primary: about 40 KB brotli, what the primary
# and its glue (about 459 KB) may grow by and stay under the official
# sqlite-wasm build with its glue (496.5 KB; issue 45's size target).
BUDGET = 40_000

# The caller of the entries that are not direct calls: always the primary.
OUTSIDE = ">"

# A function's places, from the most mobile to the least (count.rs's `Place`).
PLACES = ["listed", "copied", "primary"]


def contract_copied(calls, copied):
    """`calls` ({(caller, callee): weight}) with each copied function's
    calls attributed to its callers, in proportion to how often each called
    it, until no weight is left on a copied function's calls (a copied
    function calling another passes its share on)."""
    calls = collections.Counter(calls)
    for _ in range(100):
        into = collections.defaultdict(collections.Counter)
        for (f, g), w in calls.items():
            if g in copied and f != g:
                into[g][f] += w
        moved = False
        for (s, g), w in list(calls.items()):
            if s not in copied:
                continue
            del calls[(s, g)]
            if s == g or not into[s]:
                # Recursion stays where it is; a copied function nothing
                # called directly was entered from the primary (the table).
                if s != g:
                    calls[(OUTSIDE, g)] += w
                continue
            total = sum(into[s].values())
            for f, n in into[s].items():
                calls[(f, g)] += w * n / total
            moved = True
        if not moved:
            break
    return {(f, g): w for (f, g), w in calls.items() if f not in copied and g not in copied}


def main():
    edges_tsv, counts_json, first_visit = sys.argv[1:4]
    size = collections.Counter()
    place = {}  # name -> copied | primary | listed (monomorphised copies share a name)
    edges = []  # counter index -> (caller, callee); caller OUTSIDE for an entry counter
    for line in open(edges_tsv):
        fields = line.rstrip("\n").split("\t")
        if fields[0] == "=":
            _, name, instructions, where = fields
            size[name] += int(instructions)
            # A name some of whose copies are pinned: the least mobile wins.
            place[name] = max(place.get(name, "listed"), where, key=PLACES.index)
        elif fields[0] == OUTSIDE:
            edges.append((OUTSIDE, fields[1]))
        else:
            edges.append((fields[0], fields[1]))
    listed = {line.strip() for line in open(first_visit) if line.strip()}
    copied = {n for n, p in place.items() if p == "copied"}
    primary = {OUTSIDE} | {n for n, p in place.items() if p == "primary" or (p == "listed" and n in listed)}

    workloads = json.load(open(counts_json))
    weight = collections.defaultdict(collections.Counter)
    for counters in workloads.values():
        direct = collections.Counter()
        entered = collections.Counter()
        for k, n in counters.items():
            f, g = edges[int(k)]
            if f == OUTSIDE:
                entered[g] += n
            elif f in place and g in place:  # not an import
                direct[(f, g)] += n
        total = sum(direct.values())
        if total == 0:
            continue
        into = collections.Counter()
        for (f, g), n in direct.items():
            into[g] += n
        for g, n in entered.items():
            if n > into[g]:
                direct[(OUTSIDE, g)] += n - into[g]
        for (f, g), w in contract_copied(direct, copied).items():
            if f != g:
                weight[f][g] += w / total
                weight[g][f] += w / total

    def gain(name):
        return sum(w if other in primary else -w for other, w in weight[name].items())

    def crossing():
        return sum(w for f in weight for g, w in weight[f].items() if (f in primary) != (g in primary)) / 2

    crossing_before = crossing()
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
    print(
        f"hot: {len(chosen)} names, {spent:,} instructions of {BUDGET:,}; crossing calls per workload "
        f"{crossing_before / len(workloads):.1%} -> {crossing() / len(workloads):.1%}",
        file=sys.stderr,
    )
    sys.stdout.write("".join(f"{n}\n" for n in sorted(chosen)))


if __name__ == "__main__":
    main()
