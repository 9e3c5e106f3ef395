// Generated with the expectations by `REPLAYGROUND_BLESS=1 cargo test --release
// --test builtin_files`; do not edit by hand.

/// Each built-in's expected figures (JSON), by id.
pub const EXPECTED: &[(&str, &str)] = &[
    ("idem-race", include_str!("idem-race.json")),
    ("idem-scope", include_str!("idem-scope.json")),
    ("idem-failure", include_str!("idem-failure.json")),
    ("idem-lost-reply", include_str!("idem-lost-reply.json")),
    ("idem-retention", include_str!("idem-retention.json")),
    ("idem-check-then-write", include_str!("idem-check-then-write.json")),
    ("idem-deferred", include_str!("idem-deferred.json")),
    ("idem-deferred-retry", include_str!("idem-deferred-retry.json")),
    ("idem-no-fingerprint", include_str!("idem-no-fingerprint.json")),
    ("idem-receipt-later", include_str!("idem-receipt-later.json")),
    ("idem-profiles", include_str!("idem-profiles.json")),
    ("idem-in-flight", include_str!("idem-in-flight.json")),
    ("idem-power-loss", include_str!("idem-power-loss.json")),
    ("idem-disk-full", include_str!("idem-disk-full.json")),
    ("outbox-producer-rollback", include_str!("outbox-producer-rollback.json")),
    ("outbox-relay-crash", include_str!("outbox-relay-crash.json")),
    ("outbox-redelivery", include_str!("outbox-redelivery.json")),
    ("inbox-subscriber-scope", include_str!("inbox-subscriber-scope.json")),
    ("inbox-payload-conflict", include_str!("inbox-payload-conflict.json")),
    ("inbox-consumer-rollback", include_str!("inbox-consumer-rollback.json")),
    ("inbox-lost-history", include_str!("inbox-lost-history.json")),
    ("outbox-two-relays", include_str!("outbox-two-relays.json")),
    ("outbox-two-relays-no-inbox", include_str!("outbox-two-relays-no-inbox.json")),
    ("outbox-crash-sweep", include_str!("outbox-crash-sweep.json")),
    ("outbox-crash-sweep-no-inbox", include_str!("outbox-crash-sweep-no-inbox.json")),
    ("inbox-retention", include_str!("inbox-retention.json")),
    ("inbox-retention-remedy", include_str!("inbox-retention-remedy.json")),
    ("outbox-power-loss", include_str!("outbox-power-loss.json")),
];
