#!/usr/bin/env python3
"""Combines the native and browser benchmark results into report.json and report.md."""
import json
import os
import platform
import subprocess
import sys


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "os": platform.platform()}


def check(path):
    """Exits non-zero unless `path` is a well-formed report."""
    report = json.load(open(path))
    problems = []
    if not report.get("rows"):
        problems.append("no rows")
    for row in report.get("rows", []):
        for side in ("native", "wasm"):
            m = row.get(side, {})
            if not all(isinstance(m.get(k), (int, float)) and m.get(k) >= 0 for k in ("medianUs", "minUs", "maxUs")):
                problems.append(f"{row.get('name')}: {side} figures missing or negative")
            elif not m["minUs"] <= m["medianUs"] <= m["maxUs"]:
                problems.append(f"{row.get('name')}: {side} median outside min..max")
    size = report.get("size") or {}
    if not all(isinstance(size.get(k), int) and size[k] > 0 for k in ("raw", "gzip", "brotli")):
        problems.append("module size missing")
    if not isinstance(size.get("restBrotli"), int) or size["restBrotli"] <= 0:
        problems.append("the module's rest missing")
    pairs = report.get("splitVsWhole") or []
    if not pairs or not all(p.get("split") and p.get("split").keys() == (p.get("whole") or {}).keys() for p in pairs):
        problems.append("the split module against the whole one missing")
    if not isinstance((report.get("firstVisitRest") or {}).get("restBeforeInteractive"), bool):
        problems.append("whether a first visit needed the module's rest missing")
    nav = (report.get("navigation") or {}).get("firstResultAfterAnsweringMs")
    if not nav or not nav.get("median", 0) > 0:
        problems.append("navigation timing missing")
    back = ((report.get("returning") or {}).get("navigation") or {}).get("firstResultAfterAnsweringMs")
    if not back or not back.get("median", 0) > 0:
        problems.append("a returning visitor's navigation timing missing")
    stepping = report.get("stepping") or []
    if len(stepping) != 2 or not all(s.get("steps", 0) > 0 and (s.get("stepChanges") or {}).get("maxMs") is not None for s in stepping):
        problems.append("stepping by hand (Stepper.step, Stepper.stepChanges) missing")
    if (report.get("pageStepping") or {}).get("steps") != 400:
        problems.append("the page's 400 steps by keyboard missing")
    versions = report.get("sqliteVersion", {})
    if not versions.get("native") or versions.get("native") != versions.get("wasm"):
        problems.append(f"SQLite versions differ: {versions}")
    if problems:
        sys.exit("bench report: " + "; ".join(problems))
    print(f"bench report: {len(report['rows'])} operations, well-formed")


def spread(values):
    """Median, min, max and count of `values` (None when there are none)."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    return {"median": values[len(values) // 2], "min": values[0], "max": values[-1], "n": len(values)}


def navigation(samples):
    """The playground's marks over loads; `firstResultAfterAnsweringMs` is each
    load's own difference: its first result after its engine answered."""
    after = [
        s["firstResult"] - s["engineAnswering"]
        for s in samples
        if s.get("firstResult") is not None and s.get("engineAnswering") is not None
    ]
    return {
        "engineAnsweringMs": spread([s.get("engineAnswering") for s in samples]),
        "firstResultMs": spread([s.get("firstResult") for s in samples]),
        "firstResultAfterAnsweringMs": spread(after),
        "catalogMs": spread([s.get("catalog") for s in samples]),
    }


def first_query(by_build):
    return {name: spread(v) for name, v in by_build.items() if v}


# Issue 45's start targets, in ms: replayground's first query at most this
# much after SQLite alone's; the linked scenario drawn at most this long
# after the playground's engine answered.
FIRST_QUERY_OVER_ALONE_MS = 20
DRAWN_AFTER_ANSWERING_MS = 150


def start_lines(label, nav, first):
    """The report's sentences on the first query and the playground's start."""
    lines = []
    if first:
        ranked = sorted(first.items(), key=lambda kv: kv[1]["median"])
        over = ""
        if "replayground" in first and "SQLite alone" in first:
            d = first["replayground"]["median"] - first["SQLite alone"]["median"]
            over = (
                f"; replayground {d:+.0f} ms against SQLite alone (target within "
                f"{FIRST_QUERY_OVER_ALONE_MS} ms: {'met' if d <= FIRST_QUERY_OVER_ALONE_MS else 'not met'})"
            )
        lines += ["", (
            f"Navigation to a first query answered, {label}: a page per build that loads it, opens an in-memory "
            "database and asks SQLite its version, every build's files served over the same HTTP server "
            f"({ranked[0][1]['n']} loads each, the builds' order rotated), medians ms (min..max): "
            + "; ".join(f"{n} {v['median']:.0f} ({v['min']:.0f}..{v['max']:.0f})" for n, v in ranked)
            + over
        )]
    a, f, d, c = (nav.get(k) for k in ("engineAnsweringMs", "firstResultMs", "firstResultAfterAnsweringMs", "catalogMs"))
    if a and f and d and c:
        lines += ["", (
            f"The playground page, a permalink, {label}, {a['n']} loads (medians ms, min..max): "
            f"its worker's engine answering {a['median']:.0f} ({a['min']:.0f}..{a['max']:.0f}); the linked scenario's "
            f"result drawn and interactive {f['median']:.0f} ({f['min']:.0f}..{f['max']:.0f}), "
            f"{d['median']:.0f} ms ({d['min']:.0f}..{d['max']:.0f}) after the engine answered (target "
            f"{DRAWN_AFTER_ANSWERING_MS} ms: {'met' if d['median'] <= DRAWN_AFTER_ANSWERING_MS else 'not met'}); "
            f"the whole catalog drawn {c['median']:.0f} ({c['min']:.0f}..{c['max']:.0f})"
        )]
    return lines


def split_vs_whole(pairs):
    """Report lines: the split module against the whole one, pair by pair."""
    if not pairs:
        return []
    lines = [
        "",
        f"The split module against the whole one it was cut from (the same glue), in {len(pairs)} "
        "alternated pairs of fresh pages doing the same work (target: nothing slower; on this machine "
        "one figure moves by a few percent between pages): medians of the pages' medians, and in how "
        "many pairs the split page was the faster",
        "",
        "| work | split | whole | split / whole | split faster in |",
        "|---|---|---|---|---|",
    ]
    for name in pairs[0]["split"]:
        split = sorted(p["split"][name] for p in pairs)
        whole = sorted(p["whole"][name] for p in pairs)
        faster = sum(p["split"][name] < p["whole"][name] for p in pairs)
        s, w = split[len(split) // 2], whole[len(whole) // 2]
        ratio = f"{s / w:.2f}x" if w > 0 else "n/a"
        lines.append(f"| {name} | {s:.2f} | {w:.2f} | {ratio} | {faster} of {len(pairs)} |")
    return lines


def main():
    if sys.argv[1] == "--check":
        return check(sys.argv[2])
    native_path, wasm_path, out = sys.argv[1:4]
    native = json.load(open(native_path))
    wasm = json.load(open(wasm_path))
    if "error" in wasm:
        sys.exit(f"bench: the browser run failed: {wasm['error']}")
    by_name = {m["name"]: m for m in wasm["measurements"]}
    rows = []
    for n in native["measurements"]:
        w = by_name.get(n["name"])
        if w is None:
            sys.exit(f"bench: the browser did not measure {n['name']!r}")
        rows.append({
            "name": n["name"],
            "native": n,
            "wasm": w,
            "ratio": w["medianUs"] / n["medianUs"] if n["medianUs"] > 0 else None,
        })
    size_path = os.path.join(out, "size.json")
    size = json.load(open(size_path)) if os.path.exists(size_path) else None
    returning = wasm.get("returning") or {}
    page_search = wasm.get("pageSearch") or []
    peers = wasm.get("peers")
    report = {
        "stepping": wasm.get("stepping") or [],
        "pageStepping": wasm.get("pageStepping"),
        "pageSearch": page_search,
        "pageSplit": wasm.get("pageSplit") or [],
        "splitVsWhole": wasm.get("splitVsWhole") or [],
        "calls": wasm.get("calls"),
        "breakdown": json.load(open(os.path.join(out, "breakdown.json")))
        if os.path.exists(os.path.join(out, "breakdown.json")) else None,
        "firstVisitRest": wasm.get("firstVisitRest"),
        "peers": peers,
        "size": size,
        "navigation": navigation(wasm.get("navigation") or []),
        "firstQuery": first_query(wasm.get("firstQuery") or {}),
        # The same, loaded a second time in a profile on disk (HTTP cache, V8's code cache).
        "returning": {
            "navigation": navigation(returning.get("navigation") or []),
            "firstQuery": first_query(returning.get("firstQuery") or {}),
        },
        "machine": machine(),
        "browser": wasm.get("browser"),
        "exploration": {"native": native.get("exploration"), "wasm": wasm.get("exploration")},
        "reach": [
            {"native": n, "wasm": w}
            for n, w in zip(native.get("reach") or [], wasm.get("reach") or [])
        ],
        "split": native.get("split") or [],
        "sqliteVersion": {"native": native["sqliteVersion"], "wasm": wasm["sqliteVersion"]},
        "rows": rows,
    }
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    report["timer"] = wasm.get("timer")
    m = report["machine"]
    lines = [
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['os']}; {report['browser']}; "
        f"SQLite {native['sqliteVersion']} (native) / {wasm['sqliteVersion']} (wasm)",
        "",
        "| operation | native median µs (min..max) | wasm median µs (min..max) | wasm / native | rounds × ops |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        n, w = r["native"], r["wasm"]
        if "one random schedule" in r["name"] and n["medianUs"] > 0 and w["medianUs"] > 0:
            r["schedulesPerSecond"] = {"native": 1e6 / n["medianUs"], "wasm": 1e6 / w["medianUs"]}
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "n/a"
        lines.append(
            f"| {r['name']} | {n['medianUs']:.2f} ({n['minUs']:.2f}..{n['maxUs']:.2f}) "
            f"| {w['medianUs']:.2f} ({w['minUs']:.2f}..{w['maxUs']:.2f}) | {ratio} "
            f"| {n['rounds']} × {n['iterations']} |"
        )
    for side in ("native", "wasm"):
        e = report["exploration"][side] or {}
        lines.append("")
        lines.append(
            f"Exhaustive exploration of {e.get('scenario')} ({side}): complete {e.get('complete')}, "
            f"{e.get('runs')} runs, {e.get('distinctStates')} distinct states, {e.get('steps')} steps, "
            f"{e.get('violations')} violations; naive interleavings {e.get('naiveInterleavings')} "
            f"for the runs' step counts, {e.get('naiveInterleavingsUniform')} as (NK)!/(K!)^N"
        )
    if report["reach"]:
        lines += [
            "",
            "Reach: exhaustive searches of larger designs, with every reduction and without "
            "partial-order reduction (goal: each complete within 1 s natively and 2 s in Chromium):",
            "",
            "| scenario | reductions | complete | runs | distinct states | final states | steps | native ms | Chromium ms |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for pair in report["reach"]:
            n, w = pair["native"], pair["wasm"]
            lines.append(
                f"| {n['scenario']} | {n['reductions']} | {'yes' if n['complete'] and w['complete'] else 'no (run cap)'} "
                f"| {n['runs']:,} | {n['distinctStates']:,} | {n['finalStates']:,} | {n['steps']:,} "
                f"| {n['ms']:.0f} | {w['ms']:.0f} |"
            )
    if report["split"]:
        # One worker's time: the same search with every reduction above.
        alone = {p["native"]["scenario"]: p["native"] for p in report["reach"]
                 if "partial-order" in p["native"]["reductions"]}
        lines += [
            "",
            "Both cores (native): the same searches split across 2 threads sharing a cache of finished "
            "states, against one thread (the page's split search is reported below):",
            "",
            "| scenario | complete | runs | distinct states | final states | 2 threads ms | 1 thread ms | speed-up |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for n in report["split"]:
            one = alone.get(n["scenario"])
            same = one is not None and one["complete"] and n["complete"]
            speedup = f"{one['ms'] / n['ms']:.2f}x" if same and n["ms"] > 0 else "n/a"
            lines.append(
                f"| {n['scenario']} | {'yes' if n['complete'] else 'no (run cap)'} | {n['runs']:,} "
                f"| {n['distinctStates']:,} | {n['finalStates']:,} | {n['ms']:.0f} "
                f"| {one['ms']:.0f} | {speedup} |" if one else
                f"| {n['scenario']} | {'yes' if n['complete'] else 'no (run cap)'} | {n['runs']:,} "
                f"| {n['distinctStates']:,} | {n['finalStates']:,} | {n['ms']:.0f} | n/a | n/a |"
            )
    for r in rows:
        if "schedulesPerSecond" in r:
            sps = r["schedulesPerSecond"]
            lines.append("")
            lines.append(
                f"Schedules of the 2-attempt idempotency race per second: native {sps['native']:.0f}, "
                f"Chromium {sps['wasm']:.0f} (target at least 10,000 in Chromium: {'met' if sps['wasm'] >= 10000 else 'not met'})"
            )
    if peers:
        names = list(peers["versions"])
        lines.append("")
        lines.append(
            "Side by side in the same Chromium session, the same SQL (medians µs; the engine's loop runs "
            "inside Rust, each peer's statements are called from JS through its API with prepared "
            "statements reused; the peers take the effect's id through RETURNING, sql.js having no "
            "last_insert_rowid call; peers' order rotated each round): "
            + ", ".join(f"{n} {peers['versions'][n]}" for n in names)
        )
        lines.append("")
        lines.append("| operation | replayground (wasm) | " + " | ".join(f"{n} | {n} / replayground" for n in names) + " |")
        lines.append("|---|---|" + "---|---|" * len(names))
        for op, by_peer in peers["results"].items():
            mine = next((r["wasm"]["medianUs"] for r in rows if r["name"].startswith(op)), None)
            cells = [f"{mine:.2f}" if mine else "n/a"]
            for n in names:
                theirs = by_peer[n]["medianUs"]
                cells.append(f"{theirs:.2f}")
                cells.append(f"{theirs / mine:.2f}x" if mine else "n/a")
            lines.append(f"| {op} | " + " | ".join(cells) + " |")
    engine_rate = next((r["schedulesPerSecond"]["wasm"] for r in rows if "schedulesPerSecond" in r), None)
    if page_search:
        rates = sorted(p["runsPerSecond"] for p in page_search)
        cancels = sorted(p["cancelMs"] for p in page_search)
        median = rates[len(rates) // 2]
        share = f"{median / engine_rate:.0%} of the engine's {engine_rate:.0f}/s in the same browser" if engine_rate else "no engine figure"
        lines.append("")
        lines.append(
            f"The page's own search (Run, random, {page_search[0]['runs']} runs of the 2-attempt race, "
            f"{len(rates)} fresh pages): median {median:.0f} runs/s ({rates[0]:.0f}..{rates[-1]:.0f}), {share} "
            f"(target at least 80%: {'met' if engine_rate and median >= 0.8 * engine_rate else 'not met'}); "
            f"Cancel heard in {cancels[len(cancels) // 2]:.0f} ms ({cancels[0]:.0f}..{cancels[-1]:.0f}; target within 100 ms: "
            f"{'met' if cancels[-1] <= 100 else 'not met'})"
        )
    for s in report["stepping"]:
        before = ", ".join(f"at step {k}: {v:.1f} ms" for k, v in s["replayedFromStartMs"].items())
        lines.append("")
        lines.append(
            f"Stepping {s['name']} by hand in Chromium, {s['steps']} steps on a fresh Stepper, each call timed: "
            f"Stepper.step() (the whole view) median {s['step']['medianMs']:.2f} ms, max {s['step']['maxMs']:.2f} ms, "
            f"{s['step']['totalMs']:.0f} ms in all; Stepper.stepChanges() (the new step, as the page asks) median "
            f"{s['stepChanges']['medianMs']:.2f} ms, max {s['stepChanges']['maxMs']:.2f} ms, {s['stepChanges']['totalMs']:.0f} ms "
            f"in all. Before the stepper kept its run, a step replayed the run from the start: {before}"
            + (f" (target for the 400 steps: under 2 s in all: {'met' if s['stepChanges']['totalMs'] < 2000 else 'not met'})"
               if s["steps"] >= 400 else "")
        )
    ps = report.get("pageStepping")
    if ps:
        lines.append("")
        lines.append(
            f"The page stepped by keyboard: {ps['steps']} keys sent at once on the 400-step design, all applied in "
            f"{ps['wallMs'] / 1000:.1f} s; each step's handling (the engine's answer and the drawing) median "
            f"{ps['medianMs']:.1f} ms, slowest {ps['maxMs']:.1f} ms (target under 100 ms: "
            f"{'met' if ps['maxMs'] < 100 else 'not met'})"
        )
    page_split = report["pageSplit"]
    if len(page_split) == 2 and page_split[1]["ms"] > 0:
        one, split = page_split
        lines.append("")
        lines.append(
            f"The page's exhaustive search of three producers and two relays (Run, from the click to the verdict "
            f"and a run drawn, in a fresh page): one worker {one['ms'] / 1000:.2f} s (no helpers: the page's first "
            f"large search runs while its code compiles); split across {split['workers']} workers "
            f"(after its first {split.get('splitAfterMs', '?')} ms; "
            f"{'its helpers warmed up first' if split.get('warmed') else 'its helpers not warmed up'}) "
            f"{split['ms'] / 1000:.2f} s: {one['ms'] / split['ms']:.2f}x"
        )
    lines += split_vs_whole(report["splitVsWhole"])
    calls = wasm.get("calls") or []
    if calls:
        execute_js = None
        if peers:
            execute_js = peers["results"].get("the reference's execute transaction", {}).get("@sqlite.org/sqlite-wasm", {}).get("medianUs")
        lines.append("")
        lines.append(
            "The exported JS API called from JS in the same page (each call converts its argument in and "
            "its result object out; each kind of call first runs the engine's round of calls, at most a second of "
            "them, untimed on an object of its own, so that V8 has optimised the code it runs; "
            "medians µs of the same rounds × ops)"
            + ("; each session call is compared with @sqlite.org/sqlite-wasm running the same transaction "
               "from JS in the same run (target: within 2x)" if execute_js else "")
            + ":"
        )
        lines.append("")
        lines.append("| call | median µs (min..max) | rounds × ops |")
        lines.append("|---|---|---|")
        # Each call and the peers' operation that runs its transaction.
        same = {
            "IdempotencySession.execute()": "the reference's execute transaction",
            "OutboxSession.createOrder(), a new order": "OutboxSession.createOrder()'s transaction",
            "OutboxSession.deliver()": "OutboxSession.deliver()'s transaction",
        }
        for c in calls:
            verdict = ""
            op = next((v for k, v in same.items() if c["name"].startswith(k)), None)
            theirs = (peers or {}).get("results", {}).get(op, {}).get("@sqlite.org/sqlite-wasm", {}).get("medianUs") if op else None
            if theirs:
                verdict = (
                    f" ({c['medianUs'] / theirs:.1f}x sqlite-wasm's transaction, {theirs:.1f} µs: "
                    f"{'met' if c['medianUs'] <= 2 * theirs else 'not met'})"
                )
            lines.append(
                f"| {c['name']} | {c['medianUs']:.2f} ({c['minUs']:.2f}..{c['maxUs']:.2f}){verdict} "
                f"| {c['rounds']} × {c['iterations']} |"
            )
    if size:
        lines.append("")
        lines.append(f"wasm module: {size['raw']} bytes raw, {size['gzip']} gzip, {size['brotli']} brotli")
        glue = size.get("withGlueBrotli")
        official = (glue or {}).get("@sqlite.org/sqlite-wasm")
        if glue:
            lines.append("")
            lines.append(
                "wasm + JS glue, brotli -q 11: "
                + ", ".join(f"{n} {v:,} bytes" for n, v in sorted(glue.items(), key=lambda kv: kv[1]))
                + (f" (target: replayground no larger than @sqlite.org/sqlite-wasm: "
                   f"{'met' if glue['replayground'] <= official else 'not met'})" if official else "")
                + ("; SQLite alone is scripts/sqlite-alone, SQLite built as the module builds it (the same "
                   "crates and SQLite flags, one export that opens an in-memory database and asks its "
                   "version): the floor of any module with this SQLite in it"
                   if "SQLite alone" in glue else "")
            )
        if size.get("restBrotli") and glue:
            visit = report.get("firstVisitRest") or {}
            lines.append("")
            lines.append(
                f"The module is split in two (scripts/split): what a first visit runs, which a page loads "
                f"first (above: {glue['replayground']:,} bytes with the glue), and its rest, "
                f"{size['restRaw']:,} bytes raw, {size['restBrotli']:,} brotli, which the glue compiles "
                f"after the start; both with the glue {glue['replayground'] + size['restBrotli']:,} bytes. "
                + ("A first visit of the playground's permalink needed the rest before it was interactive"
                   if visit.get("restBeforeInteractive") else
                   "A first visit of the playground's permalink did not need the rest before it was interactive"
                   if visit.get("restBeforeInteractive") is False else
                   f"Whether a first visit needed the rest is not known ({visit.get('error', 'not measured')})")
            )
    breakdown = report.get("breakdown")
    if breakdown:
        lines.append("")
        lines.append(
            f"Where the module's bytes go (code of the linked module before wasm-opt, "
            f"{breakdown['codeBytes']:,} bytes of code and {breakdown['dataBytes']:,} of data): "
            + "; ".join(f"{g['name']} {g['share']:.0%}" for g in breakdown["groups"] if g["share"] >= 0.005)
        )
    lines += start_lines("a first visit (a fresh context each load)", report["navigation"], report["firstQuery"])
    back = report["returning"]
    lines += start_lines(
        "a returning visitor (the second load in a profile on disk, after the first load stayed open "
        f"{(wasm.get('returning') or {}).get('codeCacheWaitMs', '?')} ms)",
        back["navigation"], back["firstQuery"],
    )
    timer = report.get("timer")
    if timer:
        lines.append("")
        lines.append(
            f"Method: every measurement first runs untimed, a round's operations and at least 250 ms of them "
            f"(V8 optimises a function only after it has run a while); the benchmark page is "
            f"{'cross-origin isolated' if timer['crossOriginIsolated'] else 'NOT cross-origin isolated'} "
            f"(timer resolution {timer['resolutionUs']:.1f} µs)"
        )
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
