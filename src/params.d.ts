// Generated from the parameter declarations in src/scenarios by
// `REPLAYGROUND_BLESS=1 cargo test --lib params`; do not edit by hand.

/** Parameters of scenario `idem-race`. */
export interface IdemRaceParams {
  /** how many clients send the request at once, each on its own connection (1 to 16; default 8). */
  attempts?: number;
  /** the tenant the requests come from (part of the key's scope) (1 to 255 characters; default "north"). */
  tenant?: string;
  /** the idempotency key the client sends (1 to 255 characters; default "intent-a"). */
  key?: string;
  /** the quantity ordered; the receipt's fingerprint covers it (1 to 9007199254740991; default 2). */
  quantity?: number;
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `idem-scope`. */
export interface IdemScopeParams {
  /** the quantity ordered; the receipt's fingerprint covers it (1 to 9007199254740991; default 3). */
  quantity?: number;
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `idem-failure`. */
export interface IdemFailureParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `idem-lost-reply`. */
export interface IdemLostReplyParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `idem-retention`. */
export interface IdemRetentionParams {
  /** the virtual clock when the request arrives (0 to 315360000 seconds; default 60). */
  clock?: number;
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `idem-check-then-write`. */
export interface IdemCheckThenWriteParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `idem-deferred`. */
export interface IdemDeferredParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `idem-deferred-retry`. */
export interface IdemDeferredRetryParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `idem-no-fingerprint`. */
export interface IdemNoFingerprintParams {
  /** the quantity ordered; the receipt's fingerprint covers it (1 to 9007199254740991; default 3). */
  quantity?: number;
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `idem-receipt-later`. */
export interface IdemReceiptLaterParams {
  /** where the process dies: between the effect's commit and the receipt's, or not at all (default "before-receipt"). */
  crashPoint?: "before-receipt" | "none";
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `idem-profiles`. */
export interface IdemProfilesParams {
  /** whose rules answer replays, conflicts and errors (default "ietf"). */
  profile?: "reference" | "ietf" | "stripe" | "powertools";
  /** the virtual clock when the request arrives (0 to 315360000 seconds; default 30). */
  clock?: number;
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `idem-in-flight`. */
export interface IdemInFlightParams {
  /** whose rules answer replays, conflicts and errors (default "ietf"). */
  profile?: "reference" | "ietf" | "stripe" | "powertools";
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `idem-power-loss`. */
export interface IdemPowerLossParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "wal"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "normal"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `idem-disk-full`. */
export interface IdemDiskFullParams {
  /** what the request does when its COMMIT fails: retry the COMMIT (broken), or roll back and start again from BEGIN, at most 3 times (default "retry-commit"). */
  onCommitError?: "retry-commit" | "start-over";
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `outbox-producer-rollback`. */
export interface OutboxProducerRollbackParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `outbox-relay-crash`. */
export interface OutboxRelayCrashParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `outbox-redelivery`. */
export interface OutboxRedeliveryParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `inbox-subscriber-scope`. */
export interface InboxSubscriberScopeParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `inbox-payload-conflict`. */
export interface InboxPayloadConflictParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `inbox-consumer-rollback`. */
export interface InboxConsumerRollbackParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `inbox-lost-history`. */
export interface InboxLostHistoryParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `outbox-two-relays`. */
export interface OutboxTwoRelaysParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `outbox-two-relays-no-inbox`. */
export interface OutboxTwoRelaysNoInboxParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `outbox-crash-sweep`. */
export interface OutboxCrashSweepParams {
  /** how many of its steps the relay takes before it is killed (none: it is not) (default "6"). */
  crashPoint?: "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "10" | "11" | "12" | "none";
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `outbox-crash-sweep-no-inbox`. */
export interface OutboxCrashSweepNoInboxParams {
  /** how many of its steps the relay takes before it is killed (none: it is not) (default "6"). */
  crashPoint?: "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "none";
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `inbox-retention`. */
export interface InboxRetentionParams {
  /** how long the inbox keeps an event's row before the retention job prunes it (300 to 86400 seconds, multiples of 300; default 300). */
  window?: number;
  /** the longest a restarted relay may wait before it redelivers (300 to 86400 seconds, multiples of 300; default 900). */
  delay?: number;
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `inbox-retention-remedy`. */
export interface InboxRetentionRemedyParams {
  /** how long the inbox keeps an event's row before the retention job prunes it (300 to 86400 seconds, multiples of 300; default 3600). */
  window?: number;
  /** the longest a restarted relay may wait before it redelivers (300 to 86400 seconds, multiples of 300; default 900). */
  delay?: number;
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "rollback"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "full"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Parameters of scenario `outbox-power-loss`. */
export interface OutboxPowerLossParams {
  /** the journal mode: SQLite's rollback journal, or its write-ahead log (WAL), where readers keep a snapshot beside one writer (default "wal"). */
  journal?: "rollback" | "wal";
  /** PRAGMA synchronous on every connection: which writes SQLite waits for the disk to keep, and so what a power loss leaves (off: nothing is synced; normal: in WAL mode a commit is not synced; full, SQLite's default: every commit is; extra: as full, and the directory after a rollback journal is deleted) (default "normal"). */
  synchronous?: "off" | "normal" | "full" | "extra";
}
/** Each scenario's parameters, by scenario id. */
export interface ScenarioParamsById {
  "idem-race": IdemRaceParams;
  "idem-scope": IdemScopeParams;
  "idem-failure": IdemFailureParams;
  "idem-lost-reply": IdemLostReplyParams;
  "idem-retention": IdemRetentionParams;
  "idem-check-then-write": IdemCheckThenWriteParams;
  "idem-deferred": IdemDeferredParams;
  "idem-deferred-retry": IdemDeferredRetryParams;
  "idem-no-fingerprint": IdemNoFingerprintParams;
  "idem-receipt-later": IdemReceiptLaterParams;
  "idem-profiles": IdemProfilesParams;
  "idem-in-flight": IdemInFlightParams;
  "idem-power-loss": IdemPowerLossParams;
  "idem-disk-full": IdemDiskFullParams;
  "outbox-producer-rollback": OutboxProducerRollbackParams;
  "outbox-relay-crash": OutboxRelayCrashParams;
  "outbox-redelivery": OutboxRedeliveryParams;
  "inbox-subscriber-scope": InboxSubscriberScopeParams;
  "inbox-payload-conflict": InboxPayloadConflictParams;
  "inbox-consumer-rollback": InboxConsumerRollbackParams;
  "inbox-lost-history": InboxLostHistoryParams;
  "outbox-two-relays": OutboxTwoRelaysParams;
  "outbox-two-relays-no-inbox": OutboxTwoRelaysNoInboxParams;
  "outbox-crash-sweep": OutboxCrashSweepParams;
  "outbox-crash-sweep-no-inbox": OutboxCrashSweepNoInboxParams;
  "inbox-retention": InboxRetentionParams;
  "inbox-retention-remedy": InboxRetentionRemedyParams;
  "outbox-power-loss": OutboxPowerLossParams;
}
/** A scenario of the catalog. */
export type ScenarioId = keyof ScenarioParamsById;
/** Any scenario's parameters (each scenario takes the ones its interface lists). */
export type ScenarioParams = ScenarioParamsById[ScenarioId];
