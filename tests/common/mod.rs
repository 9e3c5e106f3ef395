//! What more than one test file uses: the conformance set's designs, a
//! design's explorer, and a pause that lets the browser run. Each test
//! binary uses part of it.
#![allow(dead_code)]

use replayground::catalog;
use replayground::search::Explorer;

/// The explorer of the design `source`, named `name`, at its defaults.
pub fn explorer(source: &str, name: &str) -> Explorer {
    let file = catalog::parse(source, name).unwrap();
    Explorer::new(file.build(&serde_json::Value::Null).unwrap()).unwrap()
}

/// Waits for a `setTimeout(0)`: the page's event loop (and the test
/// runner's WebDriver calls, which time out after 20 s) run meanwhile. In
/// Chromium a test that runs long lets the browser run first, as the runner
/// only yields between tests that wait for something.
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
pub async fn let_the_browser_run() {
    use wasm_bindgen::JsCast;
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let global = js_sys::global();
        let set_timeout = js_sys::Reflect::get(&global, &"setTimeout".into()).unwrap();
        set_timeout
            .unchecked_into::<js_sys::Function>()
            .call2(&global, &resolve, &0.into())
            .unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

macro_rules! designs {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../conformance/", $name, ".toml")))),*]
    };
}

/// The conformance set: each design's name and scenario file.
pub const DESIGNS: &[(&str, &str)] = designs![
    "claim-on-conflict",
    "counter-deferred",
    "counter-immediate",
    "seat-check-then-insert",
    "seat-unique",
    "outbox-mark-before-deliver",
    "inbox-shared-key",
    "inbox-per-consumer",
    "optimistic-version",
    "check-then-write",
    "receipt-in-one-transaction",
    "transfer-two-statements",
    "transfer-one-transaction",
    "lost-reply-retry",
    "lost-reply-no-key",
];

/// Designs a configuration of the search once called wrong. Four leave
/// state in their connections that no file or lock shows (issue 65): a
/// deferred transaction still open after a `goto` (holding no lock), a
/// savepoint still open after one, a TEMP table, and `last_insert_rowid()`.
/// A search whose state left the connection out called the first three
/// right; one that handed a run an earlier run's connection saw its rowid.
/// The fifth goes round for ever through states the split search's top
/// first reached along different prefixes (found by the fuzzer, issue 66):
/// split across workers, the search called it right. In the sixth (found by
/// the fuzzer too), a statement on a missing table waits for the lock to
/// read the schema on a new connection, and failed at once on a pooled one
/// that had read it. In the seventh, a transaction holding no lock was kept
/// across a rewind with a page cache of the branch left. In the eighth, a
/// query with no FROM read the schema on a new connection and not on one
/// made to forget the schema it had read (SQLite keeps the encoding fixed).
pub const SOUNDNESS_DESIGNS: &[(&str, &str)] = &[
    (
        "goto-open-transaction",
        include_str!("../designs/goto-open-transaction.toml"),
    ),
    (
        "savepoint-goto",
        include_str!("../designs/savepoint-goto.toml"),
    ),
    (
        "temp-table-goto",
        include_str!("../designs/temp-table-goto.toml"),
    ),
    ("fresh-rowid", include_str!("../designs/fresh-rowid.toml")),
    (
        "split-cycle-disk-full",
        include_str!("../designs/split-cycle-disk-full.toml"),
    ),
    (
        "pooled-schema",
        include_str!("../designs/pooled-schema.toml"),
    ),
    (
        "stale-cache-savepoint",
        include_str!("../designs/stale-cache-savepoint.toml"),
    ),
    (
        "encoding-fixed",
        include_str!("../designs/encoding-fixed.toml"),
    ),
];

/// A search of `build`'s scenario with `options`, split across `workers`
/// shards (1: the whole search) that share a cache of finished states if
/// `share`, advanced a few runs each in turn as threads or the page's
/// workers would be (in one order of many): the merged report (asserted
/// complete) and the shards' parts. `what` names it in a failure.
pub fn search_in_turn(
    what: &str,
    build: &dyn Fn() -> Box<dyn replayground::Scenario>,
    options: replayground::search::Options,
    workers: usize,
    share: bool,
) -> (
    replayground::search::ExploreReport,
    Vec<replayground::search::Part>,
) {
    let explorer = || Explorer::new(build());
    let (explorers, parts) =
        replayground::search::in_turn(&explorer, options, workers, share, 7, &|_| false)
            .unwrap_or_else(|e| panic!("{what}: {e}"))
            .expect("no limit");
    let report = explorers[0].report_parts(&parts, false).unwrap();
    assert!(report.complete, "{what}: the search must finish");
    (report, parts)
}
