//! `replayground test`: each scenario searched exhaustively, its verdict
//! against its declaration, as a user's CI runs it.

use clap::Args;
use replayground::search::Explorer;
use replayground::strategy::{Kind as StrategyKind, Strategy};

use super::args::{Json, RunBudget};
use super::scenario;
use super::text::count;

// The arguments of `replayground test`.
#[derive(Args)]
#[command(
    mut_arg("runs", |runs| runs.help(
        "At most this many runs per search (default: none). A search that stops on it \
         without a failing run has proved nothing: it fails"
    )),
    mut_arg("json", |json| json.help(
        "Print JSON (one object per scenario, and the counts) instead of text"
    )),
)]
pub(super) struct Test {
    /// Scenario files, folders of them (every `*.toml` file in them and
    /// below, `*.lib.toml` libraries excepted), or built-in ids.
    #[arg(required = true)]
    paths: Vec<String>,
    #[command(flatten)]
    budget: RunBudget,
    #[command(flatten)]
    out: Json,
}

impl Test {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        test(&self.paths, self.budget.runs, self.out.json)
    }
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
        return Err("no scenario files (.toml) under the paths given: nothing was tested".into());
    }
    for target in targets {
        let start = std::time::Instant::now();
        let outcome = scenario::build(&target, None)
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
