//! The native command line: `replayground --help`.

/// See Cargo.toml: searches allocate at every step.
#[cfg(not(target_family = "wasm"))]
#[global_allocator]
static ALLOCATOR: alloc::Mi = alloc::Mi;

#[cfg(not(target_family = "wasm"))]
mod alloc {
    use std::alloc::{GlobalAlloc, Layout};
    use std::ffi::c_void;

    use libmimalloc_sys as mi;

    /// mimalloc, asked for an alignment only when its plain allocation
    /// would not give it. `mimalloc::MiMalloc` calls `mi_malloc_aligned`
    /// for every allocation, whose extra checks took about 3% of an
    /// exhaustive search; a plain block is aligned to 16 bytes when it is
    /// at least 16 bytes long, and to 8 otherwise (mimalloc's
    /// `MI_MAX_ALIGN_SIZE`), the rule Rust's own `System` allocator
    /// applies to `malloc`.
    pub struct Mi;

    const PLAIN_ALIGN: usize = 16;

    fn plain(layout: &Layout) -> bool {
        layout.align() <= PLAIN_ALIGN && layout.align() <= layout.size()
    }

    // SAFETY: each call forwards to mimalloc with a size and alignment it
    // accepts; blocks from either path are freed by `mi_free`.
    unsafe impl GlobalAlloc for Mi {
        #[inline]
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if plain(&layout) {
                mi::mi_malloc(layout.size()).cast()
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }

        #[inline]
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            if plain(&layout) {
                mi::mi_zalloc(layout.size()).cast()
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }

        #[inline]
        unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
            mi::mi_free(ptr.cast::<c_void>());
        }

        #[inline]
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let new = Layout::from_size_align_unchecked(new_size, layout.align());
            if plain(&new) {
                mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

#[cfg(not(target_family = "wasm"))]
mod cli {
    use clap::{Parser, Subcommand};
    use replayground::sim::search::{Explorer, RunResult};
    use replayground::storage::{self, Versions};

    /// SQLite that shows how idempotency keys, the transactional outbox and
    /// the idempotent inbox survive retries, races and crashes.
    #[derive(Parser)]
    #[command(name = "replayground", version, about)]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    use replayground::sim::strategy::{self, Kind as StrategyKind, Reduction, Strategy, Without};

    #[derive(Subcommand)]
    enum Command {
        /// Print the crate and SQLite versions of this build.
        Version {
            /// Print JSON instead of text.
            #[arg(long)]
            json: bool,
        },
        /// Check a scenario file: parse it, check its references, build it with
        /// its default parameters, and run it once (round-robin).
        Check {
            /// The scenario file (TOML).
            file: std::path::PathBuf,
            /// Print JSON instead of text.
            #[arg(long)]
            json: bool,
        },
        /// List the scenarios.
        Scenarios {
            /// Print JSON instead of text.
            #[arg(long)]
            json: bool,
        },
        /// Explore a scenario's interleavings and report any counterexample.
        Explore {
            /// The scenario's id (see `replayground scenarios`) or a scenario file.
            scenario: String,
            /// The scenario's parameters as JSON, e.g. '{"profile":"stripe","clock":90000}'.
            #[arg(long)]
            params: Option<String>,
            /// How to choose runs.
            #[arg(long, value_enum, default_value_t = StrategyKind::Exhaustive)]
            strategy: StrategyKind,
            /// Seed of the random and PCT strategies.
            #[arg(long, default_value_t = strategy::DEFAULT_SEED)]
            seed: u64,
            /// Runs for sampling strategies (default 1000); run budget for exhaustive search.
            #[arg(long)]
            runs: Option<u64>,
            /// PCT's bug depth.
            #[arg(long, default_value_t = strategy::DEFAULT_DEPTH)]
            depth: u32,
            /// Exhaustive search: at most this many preemptions per run.
            #[arg(long)]
            preemption_bound: Option<u32>,
            /// Exhaustive search without any reduction (slow; for comparison).
            #[arg(long)]
            no_reduction: bool,
            /// Exhaustive search without this reduction (repeatable; for comparison).
            #[arg(long, value_enum)]
            without: Vec<Reduction>,
            /// Exhaustive search: split it across this many threads (1 to 16;
            /// 0: one per core). Without a budget: a budget stops the
            /// search at a point that depends on each thread's speed.
            #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(0..=16))]
            workers: u16,
            /// Print JSON instead of text.
            #[arg(long)]
            json: bool,
        },
        /// Run the reference checks of `idempotency` or `outbox`, each proved over
        /// every schedule, or one scenario once (round-robin) with its trace.
        Run {
            /// `idempotency`, `outbox`, a scenario id or a scenario file.
            target: String,
            /// The scenario's parameters as JSON (a single scenario only).
            #[arg(long)]
            params: Option<String>,
            /// How to choose the run's interleaving (a single scenario only).
            #[arg(long, value_enum, default_value_t = StrategyKind::RoundRobin)]
            strategy: StrategyKind,
            /// Seed of the random and PCT strategies.
            #[arg(long, default_value_t = strategy::DEFAULT_SEED)]
            seed: u64,
            /// PCT's bug depth.
            #[arg(long, default_value_t = strategy::DEFAULT_DEPTH)]
            depth: u32,
            /// Print JSON instead of text.
            #[arg(long)]
            json: bool,
        },
        /// Run every correct design under many random and PCT schedules (none may
        /// fail) and every broken one until it is caught (within 1000 runs).
        Soak {
            /// Schedules in all, split over the correct scenarios.
            #[arg(long, default_value_t = 1_000_000)]
            runs: u64,
            /// First seed.
            #[arg(long, default_value_t = 1)]
            seed: u64,
            /// Print JSON instead of a table.
            #[arg(long)]
            json: bool,
        },
        /// Kill the outbox relay after every possible step, restart it, and
        /// print what happened at each crash point.
        Sweep {
            /// Subscribers without an inbox (to see which crash points fail).
            #[arg(long)]
            no_inbox: bool,
            /// Instead: crash every attempt of every scenario after each of its
            /// steps and check what survives.
            #[arg(long)]
            all: bool,
            /// Print JSON instead of a table.
            #[arg(long)]
            json: bool,
        },
        /// Search every scenario exhaustively and compare its verdict with its
        /// declaration (`fails`): one line per scenario, then `N passed, N
        /// failed`; exits 0 only when every scenario behaves as declared.
        Test {
            /// Scenario files, folders of them (every `*.toml` file in them and
            /// below, `*.lib.toml` libraries excepted), or built-in ids.
            #[arg(required = true)]
            paths: Vec<String>,
            /// At most this many runs per search (default: none). A search that
            /// stops on it without a failing run has proved nothing: it fails.
            #[arg(long)]
            runs: Option<u64>,
            /// Print JSON (one object per scenario, and the counts) instead of text.
            #[arg(long)]
            json: bool,
        },
        /// Replay an encoded schedule step by step.
        Replay {
            /// The scenario's id or a scenario file.
            scenario: String,
            /// The schedule, as `explore` prints it (e.g. A3B2A).
            schedule: String,
            /// The scenario's parameters as JSON.
            #[arg(long)]
            params: Option<String>,
            /// Print JSON instead of text.
            #[arg(long)]
            json: bool,
        },
        /// Write a run as a standalone Python script (or a Rust test) that
        /// replays it on real SQLite files, one process per attempt, and
        /// compares every result.
        Export {
            /// The scenario's id or a scenario file.
            scenario: String,
            /// The schedule, as `explore` prints it (e.g. A6B3AB4).
            schedule: String,
            /// The scenario's parameters as JSON.
            #[arg(long)]
            params: Option<String>,
            /// A Python script using only the standard library's sqlite3 (the default).
            #[arg(long, conflicts_with = "rust")]
            python: bool,
            /// A Rust test using rusqlite (put it in a crate's tests/ folder).
            #[arg(long)]
            rust: bool,
        },
        /// Measure the engine: write transactions, connection opens, snapshot and restore.
        Bench {
            /// Timed rounds per measurement.
            #[arg(long, default_value_t = 15)]
            rounds: u32,
            /// Operations per round.
            #[arg(long, default_value_t = 2000)]
            iterations: u32,
            /// Print JSON instead of a table.
            #[arg(long)]
            json: bool,
        },
        /// Serve one SQLite connection to a real database file: each stdin line
        /// is a JSON string of SQL, each stdout line its JSON result. The
        /// differential tests run one per connection, to compare the VFS with
        /// SQLite's unix VFS on real files across real processes.
        #[command(hide = true)]
        SqlWorker {
            /// The database file.
            db: std::path::PathBuf,
        },
        /// Write a note through one SQLite connection and read it through another.
        RoundTrip {
            /// The note to write.
            #[arg(default_value = "hello from connection A")]
            note: String,
            /// Print JSON instead of text.
            #[arg(long)]
            json: bool,
        },
    }

    fn print_run(result: &RunResult) {
        println!(
            "scenario {}  schedule {}  ({})",
            result.scenario,
            result.schedule,
            count(result.steps as u64, "step")
        );
        for line in result.explanation() {
            println!("  {line}");
        }
        for check in &result.checks {
            let mark = if check.pass { "pass" } else { "FAIL" };
            println!(
                "  [{mark}] {}: expected {}, actual {}",
                check.name, check.expected, check.actual
            );
        }
        if let Some(declaration) = &result.declaration {
            println!("  verdict: {}", declaration.verdict_as_declared);
        }
    }

    /// "1 run", "2 runs".
    fn count(n: u64, noun: &str) -> String {
        if n == 1 {
            format!("1 {noun}")
        } else {
            format!("{n} {noun}s")
        }
    }

    /// `replayground run`: a pattern's reference checks, or one scenario.
    fn run_target(
        target: &str,
        params: Option<&str>,
        strategy: Strategy,
        json: bool,
    ) -> Result<(), Box<dyn std::error::Error>> {
        use replayground::scenarios;
        use replayground::sim::scheduler::RoundRobin;
        use replayground::sim::search;
        let pattern_ids: Vec<&str> = scenarios::catalog()
            .into_iter()
            .filter(|e| e.reference && e.suite == target)
            .map(|e| e.id)
            .collect();
        if pattern_ids.is_empty() {
            let strategy = strategy.checked()?;
            if strategy.kind == StrategyKind::Exhaustive {
                return Err(
                    "run makes one run; use `replayground explore` to search every interleaving"
                        .into(),
                );
            }
            let scenario = build_scenario(target, params)?;
            let explorer = Explorer::new(scenario)?;
            let result = explorer.run(strategy.scheduler(0)?.as_mut(), true)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&result)?);
            } else {
                print_run(&result);
            }
            return if result.passed {
                Ok(())
            } else {
                Err("the run fails its checks".into())
            };
        }
        if params.is_some() {
            return Err(
                "--params applies to a single scenario, not to a pattern's reference checks".into(),
            );
        }
        if !json {
            println!("SQLite {}", storage::sqlite_version());
        }
        let mut all_passed = true;
        let mut results = Vec::new();
        for id in pattern_ids {
            let entry = scenarios::catalog()
                .into_iter()
                .find(|e| e.id == id)
                .expect("listed");
            let scenario = scenarios::build(id)?;
            let explorer = Explorer::new(scenario)?;
            let report = explorer.exhaustive(search::Options::default(), 10_000, |_| true)?;
            let sample = explorer.run(&mut RoundRobin, false)?;
            let passed = report.counterexample.is_none() && report.complete && sample.passed;
            all_passed &= passed;
            if !json {
                let mark = if passed { "PASS" } else { "FAIL" };
                println!(
                    "[{mark}] {}: every one of its schedules checked ({} runs, {} distinct states)",
                    entry.title, report.stats.runs, report.stats.distinct_states
                );
                for check in &sample.checks {
                    let mark = if check.pass { "ok" } else { "FAIL" };
                    println!(
                        "       [{mark}] {}: expected {}, actual {}",
                        check.name, check.expected, check.actual
                    );
                }
                if let Some(c) = &report.counterexample {
                    println!("       counterexample {}:", c.schedule);
                    for line in &c.explanation {
                        println!("         {line}");
                    }
                }
            }
            results.push(serde_json::json!({
                "scenario": id, "title": entry.title, "passed": passed,
                "exhaustive": report, "checks": sample.checks,
            }));
        }
        if json {
            println!("{}", serde_json::to_string_pretty(&results)?);
        } else if all_passed {
            println!("PASS: every reference check holds under every schedule");
        }
        if all_passed {
            Ok(())
        } else {
            Err("a reference check failed".into())
        }
    }

    /// `replayground soak`: many schedules of every scenario, on every core.
    fn soak(runs: u64, seed: u64, json: bool) -> Result<(), Box<dyn std::error::Error>> {
        use replayground::sim::soak::{soak_scenario, SoakRow, CATCH_BUDGET};
        let catalog = replayground::scenarios::catalog();
        use replayground::storage::Journal;
        // Every scenario in both journal modes; the runs are shared out
        // among the correct designs' pairs.
        let modes = [Journal::Rollback, Journal::Wal];
        let correct = catalog.iter().filter(|e| !e.fails).count().max(1) as u64;
        let per_scenario = runs.div_ceil(correct * modes.len() as u64);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let ids: Vec<(&'static str, Journal)> = catalog
            .iter()
            .flat_map(|e| modes.map(|journal| (e.id, journal)))
            .collect();
        let start = std::time::Instant::now();
        // Stores are per thread: each worker builds its own scenarios.
        let mut rows: Vec<SoakRow> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let ids = &ids;
                    scope.spawn(move || {
                        ids.iter()
                            .enumerate()
                            .filter(|(i, _)| i % threads == t)
                            .map(|(_, (id, journal))| {
                                soak_scenario(id, *journal, per_scenario, seed)
                                    .map_err(|e| e.to_string())
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| {
                    h.join()
                        .unwrap_or_else(|_| vec![Err("a soak thread panicked".to_string())])
                })
                .collect::<Result<Vec<_>, String>>()
        })?;
        rows.sort_by_key(|r| {
            ids.iter()
                .position(|(id, journal)| *id == r.scenario && *journal == r.journal)
        });
        let elapsed = start.elapsed().as_secs_f64();
        let total: u64 = rows.iter().map(|r| r.runs).sum();
        if json {
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "runs": total, "seconds": elapsed, "catchBudget": CATCH_BUDGET, "rows": rows,
                }))?
            );
        } else {
            println!("| scenario | journal | design | runs | violations | verdict |");
            println!("|---|---|---|---|---|---|");
            for r in &rows {
                let design = if r.expected_to_fail {
                    "broken"
                } else {
                    "correct"
                };
                let verdict = match (r.expected_to_fail, r.ok) {
                    (false, true) => "no violation".to_string(),
                    (false, false) => format!(
                        "VIOLATED by {}",
                        r.first_failing_schedule.as_deref().unwrap_or("?")
                    ),
                    (true, true) => format!(
                        "caught at run {} ({})",
                        r.caught_at.unwrap_or(0),
                        r.first_failing_schedule.as_deref().unwrap_or("")
                    ),
                    (true, false) => format!("NOT caught within {CATCH_BUDGET} runs"),
                };
                println!(
                    "| {} | {} | {design} | {} | {} | {verdict} |",
                    r.scenario,
                    r.journal.name(),
                    r.runs,
                    r.violations
                );
            }
            println!("{total} schedules in {elapsed:.1} s on {threads} threads");
        }
        if rows.iter().all(|r| r.ok) {
            Ok(())
        } else {
            Err("the soak found a problem".into())
        }
    }

    /// What `target` names: a scenario file (a path to a file, or one that
    /// ends in .toml), read and parsed, or a built-in's id.
    fn named(target: &str) -> Result<replayground::scenarios::Named, Box<dyn std::error::Error>> {
        let path = std::path::Path::new(target);
        if !path.is_file() && !target.ends_with(".toml") {
            return Ok(replayground::scenarios::Named::Builtin(target.to_string()));
        }
        let (source, stem) = read_scenario_source(target)?;
        Ok(replayground::scenarios::Named::file(&source, &stem)
            .map_err(|e| format!("{target}: {e}"))?)
    }

    /// A scenario file's text, and the id its name gives it.
    fn read_scenario_source(target: &str) -> Result<(String, String), Box<dyn std::error::Error>> {
        let path = std::path::Path::new(target);
        let source =
            std::fs::read_to_string(path).map_err(|e| format!("cannot read {target}: {e}"))?;
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("scenario");
        Ok((source, stem.to_string()))
    }

    /// The scenarios `replayground test` runs for `targets`: files, every
    /// scenario file under a folder (sorted), built-in ids.
    fn test_targets(targets: &[String]) -> Result<Vec<String>, Box<dyn std::error::Error>> {
        fn walk(dir: &std::path::Path, out: &mut Vec<String>) -> std::io::Result<()> {
            let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
            entries.sort_by_key(|e| e.file_name());
            for entry in entries {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().into_owned();
                if path.is_dir() {
                    walk(&path, out)?;
                } else if name.ends_with(".toml") && !name.ends_with(".lib.toml") {
                    out.push(path.to_string_lossy().into_owned());
                }
            }
            Ok(())
        }
        let mut out = Vec::new();
        for target in targets {
            let path = std::path::Path::new(target);
            if path.is_dir() {
                walk(path, &mut out).map_err(|e| format!("cannot read {target}: {e}"))?;
            } else {
                out.push(target.clone());
            }
        }
        Ok(out)
    }

    /// `replayground test`: each scenario searched exhaustively, its verdict
    /// against its declaration.
    fn test(
        targets: &[String],
        runs: Option<u64>,
        json: bool,
    ) -> Result<(), Box<dyn std::error::Error>> {
        if runs == Some(0) {
            return Err("invalid --runs: use at least 1".into());
        }
        let strategy = Strategy {
            runs,
            ..Strategy::of(StrategyKind::Exhaustive)
        }
        .checked()?;
        let (mut passed, mut failed) = (0u64, 0u64);
        let mut lines = Vec::new();
        let targets = test_targets(targets)?;
        // A gate that tested nothing must not pass.
        if targets.is_empty() {
            return Err(
                "no scenario files (.toml) under the paths given: nothing was tested".into(),
            );
        }
        for target in targets {
            let start = std::time::Instant::now();
            let outcome = build_scenario(&target, None)
                .and_then(|scenario| Ok(Explorer::new(scenario)?))
                .and_then(|explorer| Ok(strategy.search().run_to_end(&explorer)?));
            let elapsed = start.elapsed().as_secs_f64() * 1000.0;
            let (ok, text, value) = match outcome {
                Ok(report) => {
                    let verdict = report.declaration.as_ref().map_or_else(
                        || "its parameters are not its defaults: no declaration applies".into(),
                        |d| d.verdict_as_declared.clone(),
                    );
                    let verdict = match &report.bounded_by {
                        Some(bound) if report.counterexample.is_none() => {
                            format!("{verdict} (stopped by the {bound})")
                        }
                        _ => verdict,
                    };
                    let s = &report.stats;
                    let text = format!(
                        "{verdict}; {}, {}, {elapsed:.0} ms{}",
                        count(s.runs, "run"),
                        count(s.distinct_states, "state"),
                        report
                            .counterexample
                            .as_ref()
                            .map(|c| format!("; counterexample {}", c.schedule))
                            .unwrap_or_default()
                    );
                    let value = serde_json::json!({
                        "scenario": target,
                        "declared": report.declaration.as_ref().map(|d| d.declared),
                        "asDeclared": report.declaration.as_ref().and_then(|d| d.as_declared),
                        "complete": report.complete,
                        "boundedBy": report.bounded_by, "runs": s.runs,
                        "states": s.distinct_states, "cycles": s.cycles, "elapsedMs": elapsed,
                        "counterexample": report.counterexample.as_ref().map(|c| &c.schedule),
                        "verdict": verdict,
                    });
                    let ok = report
                        .declaration
                        .as_ref()
                        .is_some_and(|d| d.as_declared == Some(true));
                    (ok, text, value)
                }
                Err(e) => (
                    false,
                    // The error names the file itself (`PATH: …`): once is enough.
                    e.to_string()
                        .strip_prefix(&format!("{target}: "))
                        .map_or_else(|| e.to_string(), str::to_string),
                    serde_json::json!({ "scenario": target, "error": e.to_string(), "elapsedMs": elapsed }),
                ),
            };
            if ok {
                passed += 1;
            } else {
                failed += 1;
            }
            if json {
                lines.push(value);
            } else {
                println!("{} {target}: {text}", if ok { "ok  " } else { "FAIL" });
            }
        }
        if json {
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "scenarios": lines, "passed": passed, "failed": failed,
                }))?
            );
        } else {
            println!("{passed} passed, {failed} failed");
        }
        if failed > 0 {
            std::process::exit(1);
        }
        Ok(())
    }

    /// A scenario by id or file, with parameters given as JSON.
    fn build_scenario(
        id: &str,
        params: Option<&str>,
    ) -> Result<Box<dyn replayground::sim::Scenario>, Box<dyn std::error::Error>> {
        Ok(scenario_builder(id, params)?()?)
    }

    /// What builds scenario `id` (a built-in, or a file read once) with
    /// `params`, as often as asked, on any thread.
    fn scenario_builder(
        id: &str,
        params: Option<&str>,
    ) -> Result<
        impl Fn() -> replayground::Result<Box<dyn replayground::sim::Scenario>> + Sync,
        Box<dyn std::error::Error>,
    > {
        let params: serde_json::Value = match params {
            Some(json) => {
                serde_json::from_str(json).map_err(|e| format!("invalid --params: {e}"))?
            }
            None => serde_json::Value::Null,
        };
        let named = named(id)?;
        Ok(move || named.build(&params))
    }

    fn explore(
        id: &str,
        params: Option<&str>,
        strategy: Strategy,
        workers: usize,
        json: bool,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let strategy = strategy.checked()?;
        if workers > 1 && strategy.kind != StrategyKind::Exhaustive {
            return Err(
                "invalid --workers: only the exhaustive search is split across threads".into(),
            );
        }
        if workers > 1 && strategy.runs.is_some() {
            return Err("invalid --workers: a run budget stops a split search at a point that depends on each thread's speed; use one worker with --runs".into());
        }
        let build = scenario_builder(id, params)?;
        let explorer = Explorer::new(build()?)?;
        let start = std::time::Instant::now();
        let report = if workers > 1 {
            let make = || build().and_then(Explorer::new);
            split_with_progress(make, strategy, workers)?
        } else {
            search_with_progress(&explorer, strategy)?
        };
        let elapsed = start.elapsed();
        let interrupted = report.cancelled;
        if json {
            let mut value = serde_json::to_value(&report)?;
            value["elapsedMs"] = serde_json::json!(elapsed.as_secs_f64() * 1000.0);
            println!("{}", serde_json::to_string_pretty(&value)?);
        } else {
            let s = &report.stats;
            println!("scenario {}  strategy {}", report.scenario, report.strategy);
            let states = if strategy.kind == StrategyKind::Exhaustive {
                format!(
                    ", {}, {}",
                    count(s.distinct_states, "distinct state"),
                    count(s.final_states, "final state")
                )
            } else {
                String::new()
            };
            println!(
                "  {}, {}{states}, {} in {:.1} ms",
                count(s.runs, "run"),
                count(s.terminal_runs, "ending run"),
                count(s.steps, "step"),
                elapsed.as_secs_f64() * 1000.0
            );
            for (n, what) in [
                (
                    s.stopped_by_steps,
                    "an attempt took more than the steps an attempt may take",
                ),
                (
                    s.stopped_by_instructions,
                    "a statement ran more than the SQLite instructions a statement may run",
                ),
                (
                    s.stopped_by_run_budget,
                    "the run spent more than a whole run may (its SQLite instructions or its bytes of values)",
                ),
            ] {
                if n > 0 {
                    println!("  {} stopped by a bound: {what}", count(n, "run"));
                }
            }
            if s.cycles > 0 {
                println!(
                    "  {} came back to a state of {} own path: a schedule that can go round for ever, which never completes",
                    count(s.cycles, "run"),
                    if s.cycles == 1 { "its" } else { "their" }
                );
            }
            if s.loops() {
                println!("  naive interleavings: unbounded (an attempt can loop)");
            } else {
                println!(
                    "  naive interleavings: {}{} for these runs' step counts; {} as (NK)!/(K!)^N",
                    if report.naive_is_upper_bound {
                        "at most "
                    } else {
                        ""
                    },
                    report.naive_interleavings,
                    report.naive_interleavings_uniform
                );
            }
            if !report.reductions.is_empty() {
                let words: Vec<String> =
                    report.reductions.iter().map(ToString::to_string).collect();
                println!("  reductions: {}", words.join(", "));
            }
            match &report.bounded_by {
                None => println!("  complete: every schedule covered"),
                Some(reason) => println!("  bounded: {reason}"),
            }
            if let Some(f) = &report.frontier {
                println!(
                    "  left: {} known branch(es), the shallowest from step {}; runs up to {} long so far",
                    f.branches,
                    f.shallowest + 1,
                    count(s.max_depth, "step")
                );
            }
            if let Some(declaration) = &report.declaration {
                println!("  verdict: {}", declaration.verdict_as_declared);
            }
            match &report.counterexample {
                None => println!("  no violation found"),
                Some(c) => {
                    let kind = if c.shortest {
                        "shortest"
                    } else {
                        "first found"
                    };
                    println!(
                        "  counterexample ({kind}, {}): {}",
                        count(c.steps as u64, "step"),
                        c.schedule
                    );
                    print_run(&c.run);
                }
            }
        }
        if report.counterexample.is_some() {
            return Err("a schedule violates the scenario's checks".into());
        }
        if interrupted {
            eprintln!(
                "replayground: interrupted (Ctrl-C); the lines above say what was covered. To go further, run it again with a budget (--runs N) or on every core (--workers 0)"
            );
            std::process::exit(130);
        }
        Ok(())
    }

    /// Set by Ctrl-C while a search runs ([`search_with_progress`]).
    static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    extern "C" fn on_interrupt(_signal: libc::c_int) {
        // Only an atomic store: all a signal handler may do.
        INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Catches Ctrl-C until [`let_ctrl_c_end`]: it then only sets [`INTERRUPTED`].
    fn catch_ctrl_c() {
        INTERRUPTED.store(false, std::sync::atomic::Ordering::SeqCst);
        // SAFETY: the handler only stores to an atomic.
        unsafe {
            libc::signal(
                libc::SIGINT,
                on_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }

    /// Back to the default action: a second Ctrl-C ends the process.
    fn let_ctrl_c_end() {
        // SAFETY: restores the default disposition.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
        }
    }

    /// The progress display on standard error when it is a terminal: a bar
    /// of `planned` runs, or a spinner.
    fn progress_bar(planned: Option<u64>) -> Option<indicatif::ProgressBar> {
        use std::io::IsTerminal;
        std::io::stderr().is_terminal().then(|| {
            let bar = match planned {
                Some(planned) => indicatif::ProgressBar::new(planned).with_style(
                    indicatif::ProgressStyle::with_template(
                        "{elapsed:>4} [{bar:30}] {pos}/{len} runs, {msg} (Ctrl-C stops)",
                    )
                    .expect("a valid template")
                    .progress_chars("=> "),
                ),
                None => indicatif::ProgressBar::new_spinner().with_style(
                    indicatif::ProgressStyle::with_template(
                        "{spinner} {elapsed:>4} {pos} runs, {msg} (Ctrl-C stops)",
                    )
                    .expect("a valid template"),
                ),
            };
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
            bar.set_message("starting");
            bar
        })
    }

    /// Shows runs and what they covered on `bar`.
    fn show_progress(
        bar: &indicatif::ProgressBar,
        runs: u64,
        states: u64,
        steps: u64,
        since: std::time::Instant,
    ) {
        let rate = runs as f64 / since.elapsed().as_secs_f64().max(1e-3);
        // Without state caching no state is told apart: steps then.
        let covered = if states > 0 {
            format!("{states} distinct states")
        } else {
            format!("{steps} steps")
        };
        bar.set_position(runs);
        bar.set_message(format!("{covered}, {rate:.0} runs/s"));
    }

    /// A search split across `workers` threads, with its progress shown
    /// and Ctrl-C stopping every worker (the report then says `cancelled`).
    fn split_with_progress<F>(
        make: F,
        strategy: Strategy,
        workers: usize,
    ) -> Result<replayground::sim::search::ExploreReport, Box<dyn std::error::Error>>
    where
        F: Fn() -> replayground::Result<Explorer> + Sync,
    {
        use std::sync::atomic::Ordering;
        let watch = replayground::sim::search::Watch::default();
        catch_ctrl_c();
        let bar = progress_bar(None);
        let since = std::time::Instant::now();
        let report = std::thread::scope(|scope| {
            let search = scope.spawn(|| {
                Explorer::exhaustive_parallel_watched(
                    &make,
                    strategy.dfs_options(),
                    workers,
                    &watch,
                )
            });
            while !search.is_finished() {
                std::thread::sleep(std::time::Duration::from_millis(100));
                if INTERRUPTED.load(Ordering::SeqCst) {
                    watch.stop.store(true, Ordering::SeqCst);
                }
                if let Some(bar) = &bar {
                    let runs = watch.runs.load(Ordering::Relaxed);
                    show_progress(bar, runs, watch.states.load(Ordering::Relaxed), 0, since);
                }
            }
            search.join()
        });
        let_ctrl_c_end();
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        Ok(report.map_err(|_| "a search thread panicked")??)
    }

    /// Runs a one-thread search to its end, or until Ctrl-C (the report then
    /// says `cancelled` and what was left), showing its progress on standard
    /// error when that is a terminal: runs (of the budget, when there is
    /// one), distinct states, runs a second.
    fn search_with_progress(
        explorer: &Explorer,
        strategy: Strategy,
    ) -> Result<replayground::sim::search::ExploreReport, Box<dyn std::error::Error>> {
        use std::sync::atomic::Ordering;
        let mut search = strategy.search();
        catch_ctrl_c();
        // A sampler's runs, or an exhaustive search's budget of runs.
        let bar = progress_bar(search.planned().or(strategy.runs));
        let started = std::time::Instant::now();
        let result = (|| -> replayground::Result<bool> {
            loop {
                // Small slices: Ctrl-C and the display answer within one.
                if search.advance(explorer, 200)? {
                    return Ok(false);
                }
                if INTERRUPTED.load(Ordering::SeqCst) {
                    return Ok(true);
                }
                if let Some(bar) = &bar {
                    let stats = search.stats();
                    show_progress(bar, stats.runs, stats.distinct_states, stats.steps, started);
                }
            }
        })();
        let_ctrl_c_end();
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        let cancelled = result?;
        Ok(search.report(explorer, cancelled)?)
    }

    /// The lock the unix VFS holds for `connection` on its main database
    /// (0 NONE to 4 EXCLUSIVE): `SQLITE_FCNTL_LOCKSTATE`, the handle's `eFileLock`.
    fn unix_lock_state(connection: &rusqlite::Connection) -> i32 {
        use rusqlite::ffi;
        let mut state: std::ffi::c_int = -1;
        // SAFETY: the handle is open for the whole call; LOCKSTATE writes one int.
        let rc = unsafe {
            ffi::sqlite3_file_control(
                connection.handle(),
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_LOCKSTATE,
                (&mut state as *mut std::ffi::c_int).cast(),
            )
        };
        if rc == ffi::SQLITE_OK {
            state
        } else {
            -1
        }
    }

    /// Runs statements on a plain rusqlite connection (unix VFS, no busy
    /// timeout), one JSON line in and one JSON line out per statement. Each
    /// reply also tells the lock the connection holds afterwards.
    ///
    /// A line is the statement as a JSON string, or `{"open": SQL}`: prepare
    /// it, step it once and leave it open (the reply's `stepped` is what
    /// `sqlite3_step` returned). Open statements are finalized at the end of
    /// the input, before the connection closes; a killed worker never does.
    fn sql_worker(db: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
        use rusqlite::ffi;
        use std::io::{BufRead, Write};
        let connection = rusqlite::Connection::open(db)?;
        connection.busy_timeout(std::time::Duration::ZERO)?;
        let mut open: Vec<*mut ffi::sqlite3_stmt> = Vec::new();
        let stdout = std::io::stdout();
        for line in std::io::stdin().lock().lines() {
            let request: serde_json::Value = serde_json::from_str(&line?)?;
            let lock = |connection: &rusqlite::Connection| unix_lock_state(connection);
            let reply = if let Some(sql) = request.get("open").and_then(|s| s.as_str()) {
                let sql = std::ffi::CString::new(sql)?;
                let db = unsafe { connection.handle() };
                let mut statement = std::ptr::null_mut();
                // SAFETY: the connection is open for the whole loop; the
                // statement is finalized below before it closes.
                let rc = unsafe {
                    ffi::sqlite3_prepare_v2(
                        db,
                        sql.as_ptr(),
                        -1,
                        &mut statement,
                        std::ptr::null_mut(),
                    )
                };
                let rc = if rc != ffi::SQLITE_OK {
                    unsafe { ffi::sqlite3_extended_errcode(db) }
                } else {
                    open.push(statement);
                    match unsafe { ffi::sqlite3_step(statement) } {
                        rc @ (ffi::SQLITE_ROW | ffi::SQLITE_DONE) => rc,
                        _ => unsafe { ffi::sqlite3_extended_errcode(db) },
                    }
                };
                serde_json::json!({ "stepped": rc, "lock": lock(&connection) })
            } else {
                let sql = request
                    .as_str()
                    .ok_or("a line is a JSON string or {\"open\": SQL}")?;
                match storage::run_sql(&connection, sql, &[]) {
                    Ok(rows) => serde_json::json!({ "rows": rows.rows, "lock": lock(&connection) }),
                    Err(e) => serde_json::json!({
                        "code": e.sqlite_code().unwrap_or(-1),
                        "lock": lock(&connection),
                    }),
                }
            };
            let mut out = stdout.lock();
            writeln!(out, "{reply}")?;
            out.flush()?;
        }
        for statement in open {
            // SAFETY: prepared on this connection, which is still open.
            unsafe { ffi::sqlite3_finalize(statement) };
        }
        Ok(())
    }

    pub fn main() -> Result<(), Box<dyn std::error::Error>> {
        match Cli::parse().command {
            Command::Version { json } => {
                let versions = Versions::current();
                if json {
                    println!("{}", serde_json::to_string(&versions)?);
                } else {
                    println!("replayground {}", versions.replayground);
                    println!("SQLite {} ({})", versions.sqlite, versions.sqlite_source_id);
                }
            }
            Command::SqlWorker { db } => sql_worker(&db)?,
            Command::Check { file, json } => {
                let target = file.to_string_lossy().to_string();
                let (source, stem) = read_scenario_source(&target)?;
                let (parsed, mistakes) = replayground::format::parse_listing_sql(
                    &source,
                    &stem,
                    &replayground::scenarios::CATALOG,
                )
                .map_err(|e| format!("{target}: {e}"))?;
                let templates = mistakes.iter().any(|m| m.template);
                if !mistakes.is_empty() && (!parsed.allow_sql_errors || templates) {
                    if json {
                        println!(
                            "{}",
                            serde_json::to_string_pretty(&serde_json::json!({
                                "id": parsed.id(), "sqlErrors": mistakes,
                            }))?
                        );
                    } else {
                        for mistake in &mistakes {
                            eprintln!("{target}: {mistake}");
                        }
                    }
                    let hint = if templates {
                        "a template in SQL is refused even with allow-sql-errors = true: bind :NAME"
                    } else {
                        "allow-sql-errors = true runs the file anyway"
                    };
                    return Err(format!(
                        "{target}: {} in its SQL ({hint})",
                        count(mistakes.len() as u64, "mistake")
                    )
                    .into());
                }
                for mistake in &mistakes {
                    eprintln!("{target}: allowed: {mistake}");
                }
                let explorer = Explorer::new(parsed.build(&serde_json::Value::Null)?)?;
                let result = explorer.run(&mut replayground::sim::scheduler::RoundRobin, false)?;
                if json {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&serde_json::json!({
                            "id": parsed.id(), "title": parsed.title, "fails": parsed.fails,
                            "attempts": result.labels.len(), "roundRobin": result,
                            "sqlErrors": mistakes,
                        }))?
                    );
                } else {
                    println!(
                        "{target}: ok: scenario {} ({}, declared to {}); one round-robin run {}",
                        parsed.id(),
                        count(result.labels.len() as u64, "attempt"),
                        if parsed.fails { "fail" } else { "hold" },
                        if result.passed {
                            "passes its checks"
                        } else {
                            "fails its checks"
                        }
                    );
                }
            }
            Command::Scenarios { json } => {
                let catalog = replayground::scenarios::catalog();
                if json {
                    println!("{}", serde_json::to_string_pretty(&catalog)?);
                } else {
                    for entry in catalog {
                        let mark = if entry.fails { "fails" } else { "holds" };
                        println!("{:<36} {mark}  {}", entry.id, entry.title);
                    }
                }
            }
            Command::Explore {
                scenario,
                params,
                strategy,
                seed,
                runs,
                depth,
                preemption_bound,
                no_reduction,
                without,
                workers,
                json,
            } => {
                let strategy = Strategy {
                    kind: strategy,
                    seed,
                    runs,
                    depth,
                    preemption_bound,
                    without: if no_reduction {
                        Without::everything()
                    } else {
                        without.into_iter().collect()
                    },
                    shard: None,
                };
                let workers = match workers {
                    0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(16)),
                    n => usize::from(n),
                };
                return explore(&scenario, params.as_deref(), strategy, workers, json);
            }
            Command::Test { paths, runs, json } => return test(&paths, runs, json),
            Command::Soak { runs, seed, json } => {
                if runs == 0 {
                    return Err("invalid --runs: use at least 1".into());
                }
                return soak(runs, seed, json);
            }
            Command::Sweep {
                all: true, json, ..
            } => {
                let reports = replayground::sim::crash::sweep_all()?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&reports)?);
                } else {
                    println!("| scenario | journal | crash points | violations |");
                    println!("|---|---|---|---|");
                    for r in &reports {
                        let v = if r.violations.is_empty() {
                            "none".to_string()
                        } else {
                            r.violations.join("; ")
                        };
                        println!(
                            "| {} | {} | {} | {v} |",
                            r.scenario,
                            r.journal.name(),
                            r.crash_points
                        );
                    }
                }
                let points: u64 = reports.iter().map(|r| r.crash_points).sum();
                let bad: usize = reports.iter().map(|r| r.violations.len()).sum();
                println!(
                    "{points} crash points in {} scenarios, {bad} violations (each scenario in both journal modes)",
                    reports.len() / 2
                );
                if bad > 0 {
                    return Err(
                        "a crash lost committed data, kept uncommitted data, or broke a database"
                            .into(),
                    );
                }
            }
            Command::Sweep { no_inbox, json, .. } => {
                let id = if no_inbox {
                    "outbox-crash-sweep-no-inbox"
                } else {
                    "outbox-crash-sweep"
                };
                let rows = replayground::scenarios::sweep::crash_sweep(id)?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&rows)?);
                } else {
                    println!("| crash point | committed when the relay died | what the restart did | verdict |");
                    println!("|---|---|---|---|");
                    for row in &rows {
                        println!(
                            "| {} | {} | {} | {} |",
                            row.crash_point, row.committed, row.restart, row.verdict
                        );
                    }
                }
                let failing = rows.iter().filter(|r| !r.passed).count();
                if failing > 0 {
                    return Err(format!("{failing} of {} crash points fail", rows.len()).into());
                }
            }
            Command::Run {
                target,
                params,
                strategy,
                seed,
                depth,
                json,
            } => {
                let strategy = Strategy {
                    kind: strategy,
                    seed,
                    depth,
                    ..Strategy::of(strategy)
                };
                return run_target(&target, params.as_deref(), strategy, json);
            }
            Command::Replay {
                scenario,
                schedule,
                params,
                json,
            } => {
                let scenario = build_scenario(&scenario, params.as_deref())?;
                let explorer = Explorer::new(scenario)?;
                let schedule = explorer.parse_schedule(&schedule)?;
                let result = explorer.replay(&schedule, true)?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&result)?);
                } else {
                    print_run(&result);
                }
                if !result.passed {
                    return Err("the run fails its checks".into());
                }
            }
            Command::Export {
                scenario,
                schedule,
                params,
                python: _,
                rust,
            } => {
                let scenario = build_scenario(&scenario, params.as_deref())?;
                let explorer = Explorer::new(scenario)?;
                let schedule = explorer.parse_schedule(&schedule)?;
                let text = if rust {
                    replayground::export::rust(&explorer, &schedule)?
                } else {
                    replayground::export::python(&explorer, &schedule)?
                };
                print!("{text}");
            }
            Command::Bench {
                rounds,
                iterations,
                json,
            } => {
                let start = std::time::Instant::now();
                let clock = move || start.elapsed().as_secs_f64() * 1000.0;
                let budget = replayground::bench::Budget { rounds, iterations };
                let report = replayground::bench::engine(budget, &clock)?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&report)?);
                } else {
                    println!("SQLite {} (native)", report.sqlite_version);
                    for m in &report.measurements {
                        println!(
                            "{:>10.2} us median ({:.2}..{:.2}, {} rounds x {})  {}",
                            m.median_us, m.min_us, m.max_us, m.rounds, m.iterations, m.name
                        );
                    }
                    let e = &report.exploration;
                    println!(
                        "exploration of {}: complete {}, {} runs, {} distinct states, {} steps, naive {} ({} uniform), {} violations",
                        e.scenario, e.complete, e.runs, e.distinct_states, e.steps,
                        e.naive_interleavings, e.naive_interleavings_uniform, e.violations
                    );
                }
            }
            Command::RoundTrip { note, json } => {
                let trip = storage::round_trip(&note)?;
                if json {
                    println!("{}", serde_json::to_string(&trip)?);
                } else {
                    println!("SQLite {}", trip.sqlite_version);
                    println!(
                        "A inserts row {} in an open transaction (A holds {})",
                        trip.written_id, trip.writer_lock
                    );
                    println!("B reads before A commits: {:?}", trip.read_during_write);
                    println!("A commits");
                    println!("B reads after A commits:  {:?}", trip.read_after_commit);
                }
            }
        }
        Ok(())
    }
}

#[cfg(not(target_family = "wasm"))]
fn main() -> std::process::ExitCode {
    // Rust ignores SIGPIPE, so a closed pipe (`replayground … | head`) makes
    // every later print panic. Unix tools end quietly instead: restore the
    // default action, which ends the process when the reader has gone.
    #[cfg(unix)]
    // SAFETY: called first thing, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    match cli::main() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("replayground: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The command line is native only; the wasm build exports a library.
#[cfg(target_family = "wasm")]
fn main() {}
