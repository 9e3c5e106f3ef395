//! What a connection holds, as a run reads it after every step: its lock on
//! its database, its locks on the WAL's shared memory, and in WAL mode the
//! log's length and the snapshot it reads.

use std::rc::Rc;

use super::conn::Conn;
use super::locks::LockLevel;
use super::shm;
use super::vfs::ConnId;

impl Conn {
    /// The lock each of `conns` holds on its database, as
    /// [`Conn::lock_level`] gives it one by one. Connections of another
    /// store are asked their own.
    pub fn lock_levels(conns: &[&Conn]) -> Vec<LockLevel> {
        let Some(first) = conns.first() else {
            return Vec::new();
        };
        if conns.iter().any(|c| !Rc::ptr_eq(&c.store, &first.store)) {
            return conns.iter().map(|c| c.lock_level()).collect();
        }
        let pairs: Vec<(ConnId, &str)> = conns.iter().map(|c| (c.id, c.db.as_str())).collect();
        first.store.lock_levels(&pairs)
    }

    /// The lock this connection holds on its database.
    pub fn lock_level(&self) -> LockLevel {
        self.store.lock_level(self.id, &self.db)
    }

    /// The locks this connection holds on its database's WAL shared memory
    /// (none in a rollback journal mode).
    pub fn shm_locks(&self) -> shm::ShmLocks {
        self.store.shm_locks(self.id, &self.db)
    }

    /// In WAL mode: how many frames the log of its database holds now (the
    /// wal-index header's `mxFrame`).
    pub fn log_frames(&self) -> Option<u32> {
        self.store.log_frames(&self.db)
    }

    /// In WAL mode, while it holds a read slot: the snapshot it reads, as
    /// the number of WAL frames it sees (the slot's read mark; 0 for the
    /// database file alone).
    pub fn read_snapshot(&self) -> Option<u32> {
        let slot = (0..5).find(|i| self.shm_locks().shared & (1 << (3 + i)) != 0)?;
        if slot == 0 {
            return Some(0);
        }
        self.store.read_mark(&self.db, slot)
    }
}
