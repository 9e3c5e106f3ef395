//! The search proves the same under every configuration on the designs a
//! configuration once called wrong ([`common::SOUNDNESS_DESIGNS`]), natively
//! and in Chromium: with every reduction, with none, with each one off, replaying
//! every run from the start, and split across 2 and 3 workers with and
//! without their shared cache. Each gives the verdict its file declares and
//! the same set of final states as the unreduced search. (Debug builds, which
//! both targets' tests are, also replay every run a search ends from a fresh
//! store: a run that inherited an earlier one's connection fails there.)

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use std::collections::HashSet;

use replayground::catalog;
use replayground::search::Options;
use replayground::Scenario;

mod common;

/// A configuration: its name, its options, and how many workers split it
/// (1: not split) and whether they share a cache.
type Configuration = (&'static str, Options, usize, bool);

/// The configuration every other is compared with.
const UNREDUCED: &str = "no reduction";

fn configurations() -> Vec<Configuration> {
    let all = Options::default();
    vec![
        ("every reduction", all, 1, false),
        (UNREDUCED, Options::NONE, 1, false),
        (
            "without state caching",
            Options {
                state_caching: false,
                ..all
            },
            1,
            false,
        ),
        (
            "without symmetry",
            Options {
                symmetry: false,
                ..all
            },
            1,
            false,
        ),
        (
            "without partial-order reduction",
            Options {
                partial_order: false,
                ..all
            },
            1,
            false,
        ),
        (
            "replaying every run from the start",
            Options {
                rewind: false,
                ..all
            },
            1,
            false,
        ),
        ("2 workers sharing a cache", all, 2, true),
        ("2 workers", all, 2, false),
        ("3 workers sharing a cache", all, 3, true),
        ("3 workers", all, 3, false),
    ]
}

/// Whether some run violated the checks, the set of final states, and
/// whether some run went round for ever.
fn prove(
    build: &dyn Fn() -> Box<dyn Scenario>,
    (what, options, workers, share): Configuration,
) -> (bool, HashSet<u64>, bool) {
    let (report, parts) = common::search_in_turn(what, build, options, workers, share);
    let finals = parts
        .iter()
        .flat_map(|p| p.final_state_keys().unwrap())
        .collect();
    (report.stats.violations > 0, finals, report.stats.loops())
}

fn every_configuration_proves_what_each_design_declares() {
    for (name, source) in common::SOUNDNESS_DESIGNS {
        let file = catalog::parse(source, name).unwrap();
        let build = || file.build(&serde_json::Value::Null).unwrap();
        let declared = build().declared().expect("each declares its verdict");
        let unreduced = configurations()
            .into_iter()
            .find(|(what, ..)| *what == UNREDUCED)
            .unwrap();
        let (violated, finals, loops) = prove(&build, unreduced);
        assert_eq!(
            declared.agrees(violated, true),
            Some(true),
            "{name}: the unreduced search's verdict is not the one it declares"
        );
        for configuration in configurations()
            .into_iter()
            .filter(|(what, ..)| *what != UNREDUCED)
        {
            let what = configuration.0;
            let (v, f, l) = prove(&build, configuration);
            assert_eq!(v, violated, "{name}, {what}: the verdict differs");
            // A run that goes round for ever has no final state, and
            // searches stop it in different places (partial-order reduction
            // without state caching at the step bound): the verdict and
            // that some run loops are compared, not the final states.
            assert_eq!(l, loops, "{name}, {what}: whether a run loops differs");
            if !loops {
                assert_eq!(f, finals, "{name}, {what}: the final states differ");
            }
        }
    }
}

#[cfg(not(target_family = "wasm"))]
#[test]
fn every_configuration_proves_what_each_soundness_design_declares() {
    every_configuration_proves_what_each_design_declares();
}

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
#[wasm_bindgen_test::wasm_bindgen_test]
async fn every_configuration_proves_what_each_soundness_design_declares() {
    common::let_the_browser_run().await;
    every_configuration_proves_what_each_design_declares();
}
