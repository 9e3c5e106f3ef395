//! The counterexamples taken home: for every built-in that is meant to fail
//! and every failing design of the conformance set, the shortest
//! counterexample exported as a Python script and run with `python3` on real
//! SQLite files (Python's own SQLite, one process per attempt, real locks and
//! real kills) gives every step's result and the final tables the playground
//! showed.
#![cfg(not(target_family = "wasm"))]

use replayground::format;
use replayground::scenarios;
use replayground::sim::explore::Explorer;
use replayground::sim::scheduler::dfs;
use replayground::sim::{Scenario, Schedule};

/// Exports `scenario`'s shortest counterexample, runs it, and returns how
/// many results the script compared.
fn reproduce(name: &str, scenario: Box<dyn Scenario>) -> usize {
    let explorer = Explorer::new(scenario).unwrap();
    let report = explorer
        .exhaustive(dfs::Options::default(), 1000, |_| true)
        .unwrap();
    let counterexample = report
        .counterexample
        .unwrap_or_else(|| panic!("{name} has no counterexample"));
    let schedule = Schedule::decode(&counterexample.schedule).unwrap();
    let script = replayground::export::python(&explorer, &schedule).unwrap();
    let path = std::env::temp_dir().join(format!("replayground-export-{name}.py"));
    std::fs::write(&path, script).unwrap();
    let output = std::process::Command::new("python3")
        .arg(&path)
        .output()
        .expect("python3 runs the exported script");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{name} {}: the script on real SQLite differs\n{stdout}\n{stderr}",
        counterexample.schedule
    );
    assert!(
        stdout.contains("the playground's check failed"),
        "{name}: the script names the violated check\n{stdout}"
    );
    let _ = std::fs::remove_file(&path);
    let summary = stdout
        .lines()
        .find(|l| l.ends_with(" different"))
        .unwrap_or_else(|| panic!("{name}: no summary\n{stdout}"));
    summary
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap()
}

#[test]
fn every_counterexample_reproduces_on_real_sqlite_with_python() {
    let mut compared = 0;
    let mut scripts = 0;
    for entry in scenarios::catalog().iter().filter(|e| e.fails) {
        compared += reproduce(entry.id, scenarios::build(entry.id).unwrap());
        scripts += 1;
    }
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/conformance");
    let mut designs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    designs.sort();
    for path in designs {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let file = format::parse(&std::fs::read_to_string(&path).unwrap(), &name).unwrap();
        if !file.fails {
            continue;
        }
        compared += reproduce(&name, file.build(&serde_json::Value::Null).unwrap());
        scripts += 1;
    }
    eprintln!("{scripts} counterexamples reproduced on real SQLite: {compared} results compared");
    assert!(scripts >= 12, "{scripts} scripts");
}
