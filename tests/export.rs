//! The counterexamples taken home: for every built-in that is meant to fail
//! and every failing design of the conformance set, the shortest
//! counterexample exported as a Python script and run with `python3` on real
//! SQLite files (Python's own SQLite, one process per attempt, real locks and
//! real kills), and exported as a Rust test and run with `cargo test` against
//! rusqlite's bundled SQLite, gives every step's result and the final tables
//! the playground showed.
#![cfg(not(target_family = "wasm"))]

use replayground::catalog;
use replayground::file;
use replayground::search;
use replayground::search::Explorer;
use replayground::{Scenario, Schedule};

/// Exports `scenario`'s shortest counterexample, runs the Python script,
/// writes the Rust test into `crate_dir/tests/`, and returns how many
/// results the script compared.
fn reproduce(name: &str, scenario: Box<dyn Scenario>, crate_dir: &std::path::Path) -> usize {
    let explorer = Explorer::new(scenario).unwrap();
    let report = explorer
        .exhaustive(search::Options::default(), 1000, |_| true)
        .unwrap();
    let counterexample = report
        .counterexample
        .unwrap_or_else(|| panic!("{name} has no counterexample"));
    let schedule = Schedule::decode(&counterexample.schedule).unwrap();
    let test = replayground::reproduce::rust(&explorer, &schedule).unwrap();
    std::fs::write(
        crate_dir
            .join("tests")
            .join(format!("{}.rs", name.replace('-', "_"))),
        test,
    )
    .unwrap();
    let script = replayground::reproduce::python(&explorer, &schedule).unwrap();
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

/// A crate for the exported Rust tests, kept between runs (its build is
/// then quick), depending on rusqlite as replayground does.
fn test_crate() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("reproductions");
    let tests = dir.join("tests");
    let _ = std::fs::remove_dir_all(&tests);
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "").unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"reproductions\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[workspace]\n\n[dev-dependencies]\nrusqlite = { version = \"0.43\", features = [\"bundled\"] }\n\n[profile.dev]\ndebug = \"line-tables-only\"\n\n[profile.dev.package.\"*\"]\ndebug = false\n",
    )
    .unwrap();
    dir
}

#[test]
fn every_counterexample_reproduces_on_real_sqlite_with_python_and_rust() {
    let crate_dir = test_crate();
    let mut compared = 0;
    let mut scripts = 0;
    let mut refused = 0;
    for entry in catalog::all().iter().filter(|e| e.fails) {
        let explorer = Explorer::new(catalog::build(entry.id).unwrap()).unwrap();
        if let Some(fault) = explorer.machine_fault() {
            // A power loss, a full disk: no script can do that where the
            // playground does, and the export says so rather than pretending.
            let error = replayground::reproduce::python(&explorer, &Schedule::decode("A").unwrap())
                .unwrap_err()
                .to_string();
            let says = if fault == "power-loss" {
                "cuts a machine's power"
            } else {
                "injects an I/O fault"
            };
            assert!(error.contains(says), "{error}");
            refused += 1;
            continue;
        }
        compared += reproduce(entry.id, catalog::build(entry.id).unwrap(), &crate_dir);
        scripts += 1;
        // The same design in WAL mode: the exported databases carry the mode.
        let wal = serde_json::json!({ file::JOURNAL_PARAM: "wal" });
        compared += reproduce(
            &format!("{}-wal", entry.id),
            catalog::build_with(entry.id, &wal).unwrap(),
            &crate_dir,
        );
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
        let file = catalog::parse(&std::fs::read_to_string(&path).unwrap(), &name).unwrap();
        if !file.fails {
            continue;
        }
        compared += reproduce(
            &name,
            file.build(&serde_json::Value::Null).unwrap(),
            &crate_dir,
        );
        scripts += 1;
    }
    eprintln!(
        "{scripts} counterexamples reproduced with Python's SQLite: {compared} results compared"
    );
    assert!(scripts >= 19, "{scripts} scripts");
    assert_eq!(refused, 3, "the power-loss and disk-full designs");
    // The same counterexamples as Rust tests, built and run offline with the
    // crates replayground itself was built with.
    let output = std::process::Command::new(env!("CARGO"))
        .args([
            "test",
            "--offline",
            "-q",
            "--",
            "--nocapture",
            "--test-threads=1",
        ])
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", crate_dir.join("target"))
        .output()
        .expect("cargo runs the exported Rust tests");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Rust reproductions differ\n{stdout}\n{stderr}"
    );
    let summaries: Vec<&str> = stdout
        .lines()
        .filter(|l| l.ends_with(" different"))
        .collect();
    assert_eq!(summaries.len(), scripts, "{stdout}");
    assert!(
        summaries.iter().all(|l| l.ends_with(", 0 different")),
        "{stdout}"
    );
    let rust_compared: usize = summaries
        .iter()
        .filter_map(|l| l.split(' ').next().and_then(|n| n.parse::<usize>().ok()))
        .sum();
    eprintln!(
        "{scripts} counterexamples reproduced with rusqlite: {rust_compared} results compared"
    );
    assert_eq!(rust_compared, compared);
}
