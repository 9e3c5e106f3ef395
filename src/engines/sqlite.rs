//! SQLite over the VFS store, the seam's first engine: a session is a
//! [`Conn`].

use super::{Bind, Change, Counters, LockLevel, Rows, Session, ShmLocks, SqlValue};
use crate::storage::Conn;
use crate::Result;

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
