//! The words and lines several subcommands print.

use replayground::search::RunResult;

/// A run, its explanation step by step and its checks.
pub(super) fn print_run(result: &RunResult) {
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
pub(super) fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
