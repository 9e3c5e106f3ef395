//! The fuzzer finds each soundness bug fixed in issue 65 when it is put
//! back ([`crate::reintroduced`]), within a bounded number of designs, and
//! finds nothing without them.

use super::*;
use crate::reintroduced::{self, Bug};

/// Designs the bounded slice of a test compares: each bug put back was
/// found within the first 63 of seed 1 (44, 63 and 21 designs).
const SLICE: u64 = 80;

/// Judges designs `0..limit` of the run seeded `seed` until one disagrees;
/// returns how many designs that took.
fn first_disagreement(seed: u64, limit: u64) -> Option<(u64, Disagreement)> {
    let configurations = configurations();
    (0..limit).find_map(|index| {
        match judge_with(&design(seed, index).to_toml(""), &configurations) {
            Verdict::Disagreed(d) => Some((index + 1, d)),
            _ => None,
        }
    })
}

// Both are searches of many designs under every configuration: the test
// command runs them in release (`cargo test --release --lib fuzz`); in debug
// builds the checks on every run (and the debug assertions, which stop a
// reintroduced bug with a panic rather than a disagreement) make them slow.
#[test]
#[cfg_attr(debug_assertions, ignore = "run in release by the test command")]
fn a_slice_of_random_designs_agrees_under_every_configuration() {
    let mut counts = (0, 0, 0);
    let report = fuzz(1, &mut |designs| designs < SLICE, &mut |r| {
        counts = (r.compared, r.too_large, r.refused)
    });
    assert!(report.found.is_none(), "{:#?}", report.found);
    // Most designs are compared, not left out.
    assert!(
        report.compared * 4 >= report.designs * 3,
        "compared {} of {} (too large {}, refused {})",
        report.compared,
        report.designs,
        report.too_large,
        report.refused
    );
    assert_eq!(counts, (report.compared, report.too_large, report.refused));
}

/// Each bug put back is found within the slice; the note of issue 66 gives
/// how many designs each took.
#[test]
#[cfg_attr(debug_assertions, ignore = "run in release by the test command")]
fn each_reintroduced_bug_is_found() {
    for bug in [
        Bug::KeyWithoutConnection,
        Bug::InheritedConnection,
        Bug::KillWithoutRace,
    ] {
        let found = reintroduced::with(bug, || first_disagreement(1, SLICE));
        let Some((designs, disagreement)) = found else {
            panic!("{bug:?}: no disagreement in {SLICE} designs");
        };
        eprintln!(
            "{bug:?}: found after {designs} designs: {} ({} against unreduced {})",
            disagreement.configuration, disagreement.other, disagreement.unreduced
        );
    }
    assert!(!reintroduced::on(Bug::KillWithoutRace));
}

/// A design the generator writes is a file the format reads, and the same
/// seed and index give the same design.
#[test]
fn designs_are_files_and_seeded() {
    for index in 0..50 {
        assert_eq!(design(7, index), design(7, index));
        let text = design(7, index).to_toml("a header");
        assert!(text.starts_with("# a header\n"));
        crate::scenarios::parse(&text, "fuzz").unwrap_or_else(|e| panic!("{text}\n{e}"));
    }
    assert_ne!(design(7, 0), design(8, 0));
}
