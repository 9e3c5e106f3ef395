//! What a recorded run keeps of each step: locks, changed rows, tables.

use std::collections::BTreeMap;

use serde::Serialize;

use super::StepReport;
use crate::engines::Session;
use crate::storage::{LevelName, LockLevel, SqlValue};

/// One connection's lock after a step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LockView {
    /// The attempt owning the connection.
    pub attempt: String,
    /// Its lock level, written `NONE`, `SHARED`, `RESERVED`, `PENDING` or
    /// `EXCLUSIVE` in the JSON and the trace.
    #[serde(serialize_with = "serialize_level")]
    pub level: LockLevel,
    /// In WAL mode, its locks on the wal-index: `WRITE` (the one writer),
    /// `CKPT` (checkpointing), `RECOVER`, and `READ0`..`READ4` (the read
    /// slot its snapshot is pinned by); empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wal: Vec<String>,
    /// In WAL mode, the snapshot it reads: the number of WAL frames it sees
    /// (0: the database file alone), while it holds a read slot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<u32>,
    /// With a snapshot: how many frames the log holds now (more than the
    /// snapshot sees: the snapshot is stale, and its holder may not write).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_frames: Option<u32>,
}

impl LockView {
    /// What attempt `label` holds through its connections `conns`.
    pub(super) fn of(label: &str, conns: &[&dyn Session]) -> LockView {
        let level = conns
            .iter()
            .map(|c| c.lock_level())
            .max()
            .unwrap_or(LockLevel::None);
        let mut wal = Vec::new();
        let mut snapshot = None;
        let mut log_frames = None;
        for conn in conns {
            let shm = conn.shm_locks();
            for (i, name) in crate::storage::shm::SLOT_NAMES.iter().enumerate() {
                let bit = 1u8 << i;
                if (shm.shared | shm.exclusive) & bit != 0 && !wal.iter().any(|w| w == name) {
                    wal.push((*name).to_string());
                }
            }
            if snapshot.is_none() {
                snapshot = conn.read_snapshot();
                log_frames = snapshot.and_then(|_| conn.log_frames());
            }
        }
        LockView {
            attempt: label.to_string(),
            level,
            wal,
            snapshot,
            log_frames,
        }
    }
}

/// A row changed by a step, as the stepping connection sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RowChange {
    /// The database file.
    pub db: String,
    /// The table.
    pub table: String,
    /// What the step did to the row (`insert`, `update`, `delete`).
    pub op: crate::storage::ChangeOp,
    /// The rowid.
    pub rowid: i64,
}

/// One step of a recorded run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceStep {
    /// Step number, from 0.
    pub index: usize,
    /// The attempt that stepped (its index).
    pub attempt: usize,
    /// The attempt's label.
    pub label: String,
    /// What the attempt reported.
    #[serde(flatten)]
    pub report: StepReport,
    /// Every attempt's locks after the step.
    pub locks: Vec<LockView>,
    /// Rows the step changed.
    pub changes: Vec<RowChange>,
    /// Committed contents of every table after the step, by database and
    /// table (empty when left out: see `tables_left_out`).
    pub tables: BTreeMap<String, BTreeMap<String, Table>>,
    /// Whether the tables were left out because the trace already held
    /// what a recorded run may keep of them ([`crate::sim::Budgets::trace_bytes`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tables_left_out: bool,
    /// In a scenario that can lose power: by database and table, the
    /// indices (in `tables`) of the committed rows that are not yet on
    /// disk (a power loss now would lose them).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub volatile: BTreeMap<String, BTreeMap<String, Vec<usize>>>,
    /// The power went out at this step: what it lost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_loss: Option<PowerLossView>,
    /// The databases SQLite could not read after the step, and why (a
    /// power loss tore one: "database disk image is malformed"); their
    /// tables are not in `tables`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub unreadable: BTreeMap<String, String>,
}

/// What a power loss lost: the committed rows of the step before that are
/// gone, by database and table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PowerLossView {
    /// The rows gone, by database and table.
    pub lost: BTreeMap<String, BTreeMap<String, Vec<Vec<SqlValue>>>>,
}

/// Every database's committed tables, by name.
pub(crate) type Tables = BTreeMap<String, BTreeMap<String, Table>>;

/// The indices of the rows of `tables` that `durable` lacks (a power loss
/// would lose them), by database and table; tables with none are left out.
pub(crate) fn volatile_rows(
    tables: &Tables,
    durable: &Tables,
) -> BTreeMap<String, BTreeMap<String, Vec<usize>>> {
    let mut out = BTreeMap::new();
    for (db, by_name) in tables {
        for (name, table) in by_name {
            let kept = durable.get(db).and_then(|d| d.get(name));
            let gone: Vec<usize> = table
                .rows
                .iter()
                .enumerate()
                .filter(|(_, row)| !kept.is_some_and(|k| k.rows.contains(row)))
                .map(|(i, _)| i)
                .collect();
            if !gone.is_empty() {
                out.entry(db.clone())
                    .or_insert_with(BTreeMap::new)
                    .insert(name.clone(), gone);
            }
        }
    }
    out
}

/// The rows of `before` that `after` lacks, by database and table.
pub(crate) fn lost_rows(
    before: &Tables,
    after: &Tables,
) -> BTreeMap<String, BTreeMap<String, Vec<Vec<SqlValue>>>> {
    let mut out = BTreeMap::new();
    for (db, by_name) in before {
        for (name, table) in by_name {
            let now = after.get(db).and_then(|d| d.get(name));
            let gone: Vec<Vec<SqlValue>> = table
                .rows
                .iter()
                .filter(|row| !now.is_some_and(|n| n.rows.contains(row)))
                .cloned()
                .collect();
            if !gone.is_empty() {
                out.entry(db.clone())
                    .or_insert_with(BTreeMap::new)
                    .insert(name.clone(), gone);
            }
        }
    }
    out
}

/// About how many bytes the values of `tables` take (each database's
/// tables by name), to hold them to [`crate::sim::Budgets::trace_bytes`].
pub(crate) fn tables_size(tables: &BTreeMap<String, BTreeMap<String, Table>>) -> u64 {
    tables
        .values()
        .flat_map(BTreeMap::values)
        .flat_map(|t| &t.rows)
        .flatten()
        .map(|v| v.size() as u64)
        .sum()
}

/// A table's committed rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Table {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows in rowid order.
    pub rows: Vec<Vec<SqlValue>>,
}

pub(super) fn serialize_level<S: serde::Serializer>(
    level: &LockLevel,
    out: S,
) -> Result<S::Ok, S::Error> {
    out.serialize_str(level.name())
}
