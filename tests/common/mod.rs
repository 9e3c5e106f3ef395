//! What more than one test file uses: the conformance set's designs.

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
