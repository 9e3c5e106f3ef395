//! SQLite over the VFS store, the seam's first engine: a session is a
//! [`Conn`].

use super::{
    Bind, Change, Counters, Death, Engine, Faults, IoCall, LockLevel, Opening, Rows, Session,
    ShmLocks, SqlValue,
};
use crate::storage::{Conn, Store};
use crate::Result;

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
