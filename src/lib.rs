//! replayground: SQLite in the browser that shows how idempotency keys, the
//! transactional outbox and the idempotent inbox survive retries, races and
//! crashes.
//!
//! The core is plain Rust and compiles and tests natively; `wasm` is the only
//! module that knows about JavaScript.
//!
//! The modules that hold the code are private. What the front ends (the
//! command line, `src/cli/`) and the tests use is named below, once: the
//! engine's types at the crate's root, and each group of functions in a
//! module of its own. A `pub` item nothing here reaches is a mistake the
//! build refuses (`unreachable_pub`).
#![warn(unreachable_pub)]

// Benchmarks of the engine, the same code natively and in the browser.
mod bench;
// The seam between the search and a database engine, and its engines.
mod engines;
// The error every fallible function of the crate returns.
mod error;
// A run taken home: a script that replays it on real SQLite files.
mod export;
// Scenarios as data: scenario files a person writes, and the engine that runs them.
mod format;
// Checking what callers send, with a sentence for anything wrong.
mod input;
mod json;
// Scenario parameters, declared once: what the format and the catalog read.
mod params;
// Idempotency receipts, outbox and inbox: a request or event run alone, counts.
mod patterns;
// The soundness fuzzer: random designs, every configuration of the search compared.
mod fuzz;
// Soundness bugs put back on demand, in the library's unit tests only.
#[cfg(test)]
mod reintroduced;
// The catalog of built-in scenarios (scenario files), the crash sweep.
mod scenarios;
// Attempts as step machines, schedulers, schedules and the search.
mod sim;
// SQLite stores with real locking, connections that can be killed, snapshots.
mod storage;
/// The only module with `#[wasm_bindgen]`: the exports the page calls.
#[cfg(target_family = "wasm")]
pub mod wasm;

pub use error::{Error, Result};
pub use sim::scheduler::{Manual, Pct, Random, RoundRobin, Scheduler};
pub use sim::{
    AsDeclared, Bound, Budgets, Check, Declared, Ending, Outcome, Progress, Run, Scenario,
    Schedule, SqlResult, Status, StepReport, TraceStep, Verdict, BUDGETS, MAX_ALONE_STEPS,
};

/// The search of every schedule, and its report.
pub mod search {
    pub use crate::sim::search::cache::SharedCache;
    pub use crate::sim::search::split::Part;
    #[cfg(not(target_family = "wasm"))]
    pub use crate::sim::search::Watch;
    pub use crate::sim::search::{
        in_turn, Bounded, Counterexample, Dfs, ExploreReport, Explorer, Frontier, LiveRun, Options,
        RunResult, Shard, Stats, Used,
    };
}

/// How a search or a run chooses its schedules.
pub mod strategy {
    pub use crate::sim::search::strategy::{
        Kind, Reduction, Strategy, Without, DEFAULT_DEPTH, DEFAULT_SEED,
    };
}

/// Many seeded runs of every built-in, checking its invariants.
pub mod soak {
    pub use crate::scenarios::sweep::soak::{soak_all, soak_scenario, SoakRow, CATCH_BUDGET};
}

/// A process killed at every step: the reference check, and a built-in's.
pub mod sweep {
    pub use crate::scenarios::sweep::crash::{
        documented, power_sweep_all, sweep_all, CrashReport, PowerReport, TEARINGS,
    };
    pub use crate::scenarios::sweep::{crash_sweep, SweepRow};
}

/// The search checks itself: random designs explored under every
/// configuration and compared with the unreduced search.
pub mod soundness {
    pub use crate::fuzz::{
        configurations, design_seed, design_source, fuzz, judge, Configuration, Disagreement,
        Found, Proof, Report, Search, Verdict, UNREDUCED, UNREDUCED_RUNS, UNREDUCED_STEPS,
    };
}

/// A throwaway PostgreSQL cluster: the second engine's server (native only).
#[cfg(not(target_family = "wasm"))]
pub mod postgres {
    pub use crate::engines::postgres::{alive, bin_dir, Cluster, SETTINGS};
}

/// The built-in scenarios, and a person's scenario files checked against them.
pub mod catalog {
    pub use crate::scenarios::{
        build, build_in, build_resolved, build_with, catalog as all, default_options,
        editable_source, entry, parse, parsed_builtins, Entry, Extra, Named, CATALOG, LANDING,
    };
}

/// Scenario files: their declarations as written, what they may ask for,
/// and a library program run alone.
pub mod file {
    pub use crate::format::file::*;
    pub use crate::format::{parse_listing_sql, run_alone, SqlMistake, MAX_ATTEMPTS};
}

/// Scenario parameters, declared once.
pub mod parameters {
    pub use crate::params::{Kind, Param, Params};
}

/// Caller input read as the exports and links read it.
pub mod inputs {
    pub use crate::input::{delivery, form_pairs, order, permalink, request, Permalink};
}

/// Idempotency receipts: a request run alone, the response profiles.
pub mod idempotency {
    pub use crate::patterns::idempotency::*;
}

/// The outbox and the inbox: an order, the relay and a delivery run alone.
pub mod outbox {
    pub use crate::patterns::outbox::*;
}

/// A run taken home: the scripts that replay it on real SQLite.
pub mod reproduce {
    pub use crate::export::{python, rust};
}

/// The engine's benchmark.
pub mod benchmark {
    pub use crate::bench::{engine, warm_up, Budget, EngineReport};
}

/// SQLite stores with real locking: stores, connections, locks, versions.
pub mod store {
    pub use crate::storage::shm::ShmLocks;
    pub use crate::storage::vfs::run_rsqlite_vfs_test_suite;
    pub use crate::storage::{
        round_trip, run_sql, seeded_tearing, sqlite_memory_used, sqlite_version, ChangeOp, Conn,
        Death, EngineOptions, IoCall, Journal, LockLevel, RoundTrip, SqlValue, Store, Synchronous,
        Versions, MAX_NOTE_CHARS, SQLITE_VERSION,
    };
}

/// The crate's version, as the page and the command line report it.
pub const CRATE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A whole number's digits with thousands separators, as the project shows
/// counts ("16,000,000").
pub(crate) fn grouped(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
