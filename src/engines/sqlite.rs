//! SQLite over the VFS store, the seam's first engine: a session is a
//! [`Conn`].

use std::any::Any;

use super::{
    Bind, Change, Checkpoints, Counters, Death, Engine, Faults, IoCall, LockLevel, Moment, Opening,
    Rows, Session, ShmLocks, SqlValue,
};
use crate::storage::{Conn, EngineOptions, Journal, Snapshot, Store};
use crate::{Error, Result};

impl Engine for Store {
    fn open(&self, opening: &Opening<'_>) -> Result<Box<dyn Session>> {
        // A connection as new to what the program may run: no run sees
        // another's counters or loaded schema.
        let conn = self.connect_for(opening.db, opening.label, opening.local)?;
        if let Some(level) = opening.synchronous {
            conn.set_synchronous(level)?;
        }
        conn.bound(opening.max_value_bytes)?;
        if !opening.pragmas.trim().is_empty() {
            conn.apply_pragmas(opening.pragmas)?;
        }
        Ok(Box::new(conn))
    }

    fn faults(&self) -> Option<&dyn Faults> {
        Some(self)
    }

    fn create(
        &self,
        db: &str,
        options: EngineOptions,
        max_value_bytes: i32,
    ) -> Result<Box<dyn Session>> {
        let conn = self.connect(db, "setup")?;
        conn.execute(crate::storage::SCENARIO_PAGE_SIZE, &[])?;
        // Before the bounds: a scenario's own SQL may not change the mode.
        if options.journal != Journal::default() {
            conn.execute(options.journal.pragma(), &[])?;
        }
        conn.bound(max_value_bytes)?;
        Ok(Box::new(conn))
    }

    fn checkpoints(&self) -> Option<&dyn Checkpoints> {
        Some(self)
    }

    fn track_changes(&self, on: bool) {
        self.set_track_changes(on);
    }

    fn digest(&self, into: &mut dyn std::hash::Hasher) -> bool {
        self.hash_files(into);
        true
    }

    fn moment(&self) -> Result<Moment> {
        Ok(std::rc::Rc::new(self.snapshot()))
    }

    fn at(&self, moment: &Moment) -> Result<Box<dyn Engine>> {
        let snapshot = moment
            .downcast_ref::<Snapshot>()
            .ok_or_else(|| Error::Defect("a moment of another engine".to_string()))?;
        Ok(Box::new(Store::from_snapshot("at-end", snapshot)?))
    }

    fn copy(&self, durable: bool) -> Result<Box<dyn Engine>> {
        let copy = Store::new("copy")?;
        self.copy_into(&copy, durable)?;
        Ok(Box::new(copy))
    }

    fn copy_into(&self, into: &dyn Engine, durable: bool) -> Result<()> {
        let into = into
            .as_any()
            .downcast_ref::<Store>()
            .ok_or_else(|| Error::Defect("a copy into another engine".to_string()))?;
        if durable {
            into.copy_durable_files_from(self)
        } else {
            into.copy_files_from(self)
        }
    }

    fn databases(&self) -> Vec<String> {
        self.files().into_iter().map(|(name, _)| name).collect()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Checkpoints for Store {
    fn save(&self, journals: &[String]) -> (Box<dyn Any>, Option<Box<dyn Any>>) {
        let files = self.snapshot();
        if journals.is_empty() {
            return (Box::new(files), None);
        }
        let apart = files.only(journals);
        (Box::new(files.without(journals)), Some(Box::new(apart)))
    }

    fn owns(&self, saved: &dyn Any) -> bool {
        saved
            .downcast_ref::<Snapshot>()
            .is_some_and(|s| s.is_of(self))
    }

    fn rewind(&self, saved: &dyn Any, keep: &[String]) -> Result<()> {
        Store::rewind(self, snapshot(saved)?, keep)
    }

    fn without_faults(&self, redo: &mut dyn FnMut() -> Result<bool>) -> Result<bool> {
        let faults = self.suspend_faults();
        let redone = redo();
        self.resume_faults(faults);
        redone
    }

    fn put_back_missing(&self, journals: &dyn Any) -> Result<()> {
        Store::put_back_missing(self, snapshot(journals)?)
    }
}

/// The VFS store `engine` is, for what only it does (the crash sweep's
/// I/O log and copies).
pub(crate) fn store_of(engine: &dyn Engine) -> Result<&Store> {
    engine
        .as_any()
        .downcast_ref::<Store>()
        .ok_or_else(|| Error::Refused("this needs SQLite's VFS store".to_string()))
}

/// A checkpoint's files, as this engine saved them.
fn snapshot(saved: &dyn Any) -> Result<&Snapshot> {
    saved
        .downcast_ref::<Snapshot>()
        .ok_or_else(|| Error::Defect("a checkpoint of another engine".to_string()))
}

impl Faults for Store {
    fn arm(&self, session: u64, at: u32, death: Death) {
        self.arm_session(session, at, death);
    }
    fn disarm(&self) -> std::result::Result<Death, u32> {
        self.disarm_counting()
    }
    fn power_loss(
        &self,
        databases: &[String],
        torn: Option<&mut dyn FnMut() -> bool>,
    ) -> Result<usize> {
        Store::power_loss(self, databases, torn)
    }
    fn set_disk_full(&self, databases: &[String], full: bool) {
        Store::set_disk_full(self, databases, full);
    }
    fn fail_next(&self, databases: &[String], call: IoCall) {
        Store::fail_next(self, databases, call);
    }
    fn arm_any(&self, at: u32, death: Death) {
        Store::arm_any(self, at, death);
    }
    fn disarm_any(&self) -> Option<Death> {
        Store::disarm(self)
    }
    fn power_losses(&self) -> u64 {
        Store::power_losses(self)
    }
    fn keeps_durability(&self) -> bool {
        Store::keeps_durability(self)
    }
}

impl Session for Conn {
    fn id(&self) -> u64 {
        Conn::id(self)
    }
    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<Rows> {
        Conn::execute(self, sql, params)
    }
    fn execute_discarding(&self, sql: &str, params: &[SqlValue]) -> Result<()> {
        Conn::execute_discarding(self, sql, params)
    }
    fn execute_named_bound(&self, sql: &str, bind: Bind<'_>) -> (Vec<SqlValue>, Result<Rows>) {
        Conn::execute_named_bound(self, sql, bind)
    }
    fn prepare(&self, sql: &str) -> Result<()> {
        let sqlite = self.sqlite()?;
        sqlite.prepare(sql).map(drop).map_err(crate::Error::from)
    }
    fn execute_batch(&self, sql: &str) -> Result<()> {
        Conn::execute_batch(self, sql)
    }
    fn apply_pragmas(&self, sql: &str) -> Result<()> {
        Conn::apply_pragmas(self, sql)
    }
    fn in_transaction(&self) -> bool {
        Conn::in_transaction(self)
    }
    fn roll_back(&self) -> Result<bool> {
        Conn::roll_back(self)
    }
    fn lost_power(&self) -> bool {
        Conn::lost_power(self)
    }
    fn kill(&mut self) -> Result<()> {
        Conn::kill(self)
    }
    fn holds_local_state(&self) -> bool {
        Conn::holds_local_state(self)
    }
    fn local_image(&self) -> Option<Vec<u8>> {
        Conn::temp_image(self)
    }
    fn local_state_known(&self) -> bool {
        Conn::local_state_known(self)
    }
    fn schema_loaded(&self) -> bool {
        Conn::schema_loaded(self)
    }
    fn load_schema(&self) -> Result<bool> {
        Conn::load_schema(self)
    }
    fn counters(&self) -> Counters {
        Conn::counters(self)
    }
    fn set_last_insert_rowid(&self, rowid: i64) {
        Conn::set_last_insert_rowid(self, rowid)
    }
    fn forget_stale_cache(&self) -> Result<()> {
        Conn::forget_stale_cache(self)
    }
    fn lock_level(&self) -> LockLevel {
        Conn::lock_level(self)
    }
    fn shm_locks(&self) -> ShmLocks {
        Conn::shm_locks(self)
    }
    fn log_frames(&self) -> Option<u32> {
        Conn::log_frames(self)
    }
    fn read_snapshot(&self) -> Option<u32> {
        Conn::read_snapshot(self)
    }
    fn journal(&self) -> String {
        Conn::journal(self)
    }
    fn take_changes(&self) -> Vec<Change> {
        Conn::take_changes(self)
    }
    fn db(&self) -> &str {
        Conn::db(self)
    }
}
