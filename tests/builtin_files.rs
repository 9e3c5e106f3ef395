//! The built-in scenarios written as files behave as the compiled ones:
//! the same verdicts, outcomes and steps under round-robin, and the same
//! exhaustive-search figures.

use replayground::format;
use replayground::scenarios;
use replayground::sim::explore::Explorer;
use replayground::sim::scheduler::{dfs, RoundRobin};

/// The built-ins whose search figures differ, with the compiled and the
/// file's (runs, distinct states) at their defaults.
const EXPLAINED: &[(&str, (u64, u64), (u64, u64))] = &[
    ("outbox-two-relays", (57, 112), (76, 148)),
    ("outbox-two-relays-no-inbox", (53, 108), (54, 109)),
];

fn compare(id: &str, params: serde_json::Value) {
    let source = scenarios::BUILTIN_FILES
        .iter()
        .find(|(n, _)| *n == id)
        .unwrap()
        .1;
    let file = format::parse(source, id).unwrap_or_else(|e| panic!("{id}: {e}"));
    let from_file = Explorer::new(file.build(&params).unwrap()).unwrap();
    let compiled = Explorer::new(scenarios::build_with(id, &params).unwrap()).unwrap();
    let a = compiled.run(&mut RoundRobin, true).unwrap();
    let b = from_file.run(&mut RoundRobin, true).unwrap();
    let names = |r: &replayground::sim::explore::RunResult| -> Vec<String> {
        r.trace
            .iter()
            .flatten()
            .map(|s| format!("{}: {} | {}", s.label, s.report.name, s.report.note))
            .collect()
    };
    if names(&a) != names(&b) {
        for (x, y) in names(&a).iter().zip(names(&b).iter()) {
            let mark = if x == y { " " } else { "*" };
            eprintln!("{mark} {x}\n{mark} {y}");
        }
    }
    assert_eq!(a.schedule, b.schedule, "{id} {params}: round-robin schedule");
    let steps = |r: &replayground::sim::explore::RunResult| -> Vec<String> {
        r.trace
            .iter()
            .flatten()
            .map(|s| format!("{}: {}", s.label, s.report.name))
            .collect()
    };
    assert_eq!(steps(&a), steps(&b), "{id} {params}: step names");
    assert_eq!(a.statuses, b.statuses, "{id} {params}: statuses");
    assert_eq!(a.passed, b.passed, "{id} {params}: verdict {:?}", b.checks);
    let x = compiled.exhaustive(dfs::Options::default(), 1000, |_| true).unwrap();
    let y = from_file.exhaustive(dfs::Options::default(), 1000, |_| true).unwrap();
    eprintln!(
        "{id} {params}: compiled {} runs {} states {:?}; file {} runs {} states {:?}",
        x.stats.runs,
        x.stats.distinct_states,
        x.counterexample.as_ref().map(|c| &c.schedule),
        y.stats.runs,
        y.stats.distinct_states,
        y.counterexample.as_ref().map(|c| &c.schedule)
    );
    assert_eq!(
        x.counterexample.as_ref().map(|c| &c.schedule),
        y.counterexample.as_ref().map(|c| &c.schedule),
        "{id} {params}: counterexample"
    );
    let figures = |r: &replayground::sim::explore::ExploreReport| (r.stats.runs, r.stats.distinct_states);
    match EXPLAINED.iter().find(|(i, ..)| *i == id) {
        // The relay's log of deliveries (its result) is part of its state in
        // a file; the compiled relay left it out, merging paths that had
        // delivered differently. More runs, the same verdict and counterexample.
        Some((_, before, after)) if params.is_null() => {
            assert_eq!((figures(&x), figures(&y)), (*before, *after), "{id}");
        }
        Some(_) => assert!(figures(&y) >= figures(&x), "{id} {params}"),
        None => assert_eq!(figures(&x), figures(&y), "{id} {params}: runs and states"),
    }
}

/// The values worth trying of one parameter: its marks or options, or its
/// ends and default when it has few values.
fn variants(param: &replayground::scenarios::Param) -> Vec<serde_json::Value> {
    use replayground::scenarios::params::Kind;
    match param.kind {
        Kind::Choice { options } => options.iter().map(|o| serde_json::json!(o)).collect(),
        Kind::Whole { marks, .. } if !marks.is_empty() => {
            marks.iter().map(|m| serde_json::json!(m)).collect()
        }
        Kind::Whole { min, max, .. } if max - min <= 8 => {
            (min..=max).map(|m| serde_json::json!(m)).collect()
        }
        Kind::Whole { min, .. } => vec![serde_json::json!(min), serde_json::json!(min + 1)],
        Kind::Text { .. } => vec![serde_json::json!("x"), serde_json::json!("intent-b")],
    }
}

#[test]
fn every_builtin_file_behaves_as_the_compiled_scenario() {
    for (id, _) in scenarios::BUILTIN_FILES {
        compare(id, serde_json::Value::Null);
        let declared = scenarios::entry(id).unwrap().params;
        // Every parameter's values one at a time, and every pair of them.
        for (i, a) in declared.iter().enumerate() {
            for va in variants(a) {
                compare(id, serde_json::json!({ a.name: va }));
                for b in &declared[i + 1..] {
                    for vb in variants(b) {
                        compare(id, serde_json::json!({ a.name: va, b.name: vb }));
                    }
                }
            }
        }
    }
}
