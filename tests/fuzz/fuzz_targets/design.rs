//! Designs that run, not only parse (issue 41): the fuzzer's bytes choose a
//! design from the pieces hostile designs are made of (loops and gotos,
//! retries, big values, recursive SQL, captures written into notes, results
//! and logs, transactions left open, many attempts), which is then built
//! and run under the engine's budgets: a recorded round-robin run, a random
//! run and a small exhaustive search. Never a panic; every run ends with a
//! verdict or a sentence, within what a run may spend.
#![no_main]

use libfuzzer_sys::fuzz_target;
use replayground::catalog;
use replayground::search::Explorer;
use replayground::RoundRobin;
use replayground::strategy::{Kind, Strategy};
use replayground::BUDGETS;

/// Reads choices from the fuzzer's bytes (zeros once they run out).
struct Choices<'a>(&'a [u8]);

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n
    }

    fn pick<'s>(&mut self, items: &[&'s str]) -> &'s str {
        items[self.below(items.len())]
    }
}

/// A statement of a step.
fn statement(c: &mut Choices<'_>) -> String {
    let rows = [1u64, 10, 1_000, 100_000, 1_000_000][c.below(5)];
    let bytes = [1u64, 1_000, 1_000_000, 16_000_000][c.below(4)];
    match c.below(10) {
        0 => "SELECT 1 AS v".into(),
        1 => "INSERT INTO t (x) VALUES (:label)".into(),
        2 => "UPDATE t SET x = x || 'y' WHERE rowid = 1".into(),
        3 => format!("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT {rows}) SELECT count(*) AS v FROM c"),
        4 => format!("SELECT zeroblob({bytes}) AS v"),
        5 => format!("SELECT hex(zeroblob({})) AS v", bytes / 2),
        6 => format!("INSERT INTO t (x) WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT {}) SELECT zeroblob({bytes}) FROM c", rows.min(100)),
        7 => "BEGIN IMMEDIATE".into(),
        8 => "COMMIT".into(),
        _ => "SELECT x AS v FROM t ORDER BY rowid DESC LIMIT 1".into(),
    }
}

/// A handler of a step's result, going to one of `steps` steps.
fn handler(c: &mut Choices<'_>, steps: usize) -> String {
    match c.below(7) {
        0 => format!("{{ goto = \"s{}\" }}", c.below(steps)),
        1 => format!("{{ goto = \"s{}\", back-off = true }}", c.below(steps)),
        2 => "\"retry\"".into(),
        3 => "\"next\"".into(),
        4 => "{ finish = \"done\", result = \"{v}\" }".into(),
        5 => format!("{{ goto = \"s{}\", log = \"{{v}}{{log}}\" }}", c.below(steps)),
        _ => "{ fail = \"no\" }".into(),
    }
}

/// A whole design.
fn design(c: &mut Choices<'_>) -> String {
    let mut text = String::from(
        "title = \"fuzzed\"\n[databases.app]\nschema = \"CREATE TABLE t (x);\"\n",
    );
    let programs = 1 + c.below(3);
    for _ in 0..programs {
        let replicas = [1, 1, 2, 3, 8, 26][c.below(6)];
        let steps = 1 + c.below(4);
        text.push_str(&format!("[[attempts]]\nreplicas = {replicas}\nsteps = [\n"));
        for i in 0..steps {
            let sql = statement(c);
            let note = c.pick(&["", ", note = \"{v}\"", ", note = \"{label} {log} {v}{v}\""]);
            let capture = if c.byte() % 2 == 0 { ", capture = [\"v\"]" } else { "" };
            let on = c.pick(&["rows", "ok", "none", "error", "busy"]);
            let handler = handler(c, steps);
            text.push_str(&format!(
                "  {{ name = \"s{i}\", sql = \"{sql}\"{capture}{note}, on.{on} = {handler} }},\n"
            ));
        }
        text.push_str("]\n");
    }
    if c.byte() % 2 == 0 {
        text.push_str("[[checks]]\noutcome = \"done\"\ncount = 1\n");
    }
    text
}

fuzz_target!(|data: &[u8]| {
    let source = design(&mut Choices(data));
    if std::env::var_os("REPLAYGROUND_PRINT_DESIGN").is_some() {
        eprintln!("{source}");
    }
    let file = match catalog::parse(&source, "fuzzed") {
        Ok(file) => file,
        // A design the generator got wrong (a capture a statement does not
        // return, say) is refused with a sentence, never a panic.
        Err(error) => {
            assert!(error.to_string().starts_with("invalid "), "{error}");
            return;
        }
    };
    let scenario = match file.build(&serde_json::Value::Null) {
        Ok(scenario) => scenario,
        Err(error) => {
            assert!(!error.to_string().is_empty());
            return;
        }
    };
    let explorer = Explorer::new(scenario).expect("a built design makes an explorer");
    // A recorded run, as the page's round-robin run: a verdict, within budget.
    let run = explorer.run(&mut RoundRobin, true).expect("a run ends with a verdict");
    assert!(
        run.spent.instructions <= BUDGETS.run_instructions + 1000
            && run.spent.bytes <= BUDGETS.run_bytes,
        "{:?}\n{source}",
        run.spent
    );
    // A sampled run and a small exhaustive search: a report each.
    for strategy in [
        Strategy {
            runs: Some(1),
            ..Strategy::of(Kind::Random)
        },
        Strategy {
            runs: Some(20),
            ..Strategy::of(Kind::Exhaustive)
        },
    ] {
        strategy
            .search()
            .run_to_end(&explorer)
            .expect("a search ends with a report");
    }
});
