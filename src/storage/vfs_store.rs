//! The shared state of one store ([`StoreInner`]): its files, the locks on
//! its databases, the handles and connections open on it, its pool of idle
//! connections; and the thread's registry of stores, ids, and the connection
//! whose SQLite call is running ([`ActiveConn`]).

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::{Rc, Weak};

use rsqlite_vfs::{LockLevel, VfsError, VfsErrorCode, VfsResult};

use super::footprint;
use super::locks::FileLocks;
use super::shm::{ShmLocks, ShmNode};
use super::vfs_bytes::FileData;

/// Identifies a connection within the thread; 0 means "not attributed".
pub(crate) type ConnId = u64;

thread_local! {
    /// Every store of the thread, by name (looked up at every file access:
    /// foldhash rather than SipHash).
    static STORES: RefCell<HashMap<String, Weak<StoreInner>, foldhash::fast::FixedState>> =
        RefCell::new(HashMap::default());
    static NEXT_ID: Cell<u64> = const { Cell::new(1) };
    /// The connection whose SQLite call is running: `xFullPathname` places
    /// names in its store, `xOpen` gives it the file, and `xDelete` of a dead
    /// one deletes nothing. The other callbacks know their connection from
    /// the file handle.
    pub(super) static ACTIVE_CONN: Cell<ConnId> = const { Cell::new(0) };
}

/// A new id, unique within the thread.
pub(crate) fn next_id() -> u64 {
    NEXT_ID.with(|n| {
        let id = n.get();
        n.set(id + 1);
        id
    })
}

/// Marks `conn` as the connection making SQLite calls until the guard drops.
pub(crate) struct ActiveConn(ConnId);

impl ActiveConn {
    pub(crate) fn set(conn: ConnId) -> Self {
        ActiveConn(ACTIVE_CONN.with(|c| c.replace(conn)))
    }
}

impl Drop for ActiveConn {
    fn drop(&mut self) {
        ACTIVE_CONN.with(|c| c.set(self.0));
    }
}

/// One open file handle as the store tracks it.
#[derive(Debug, Clone)]
pub(crate) struct HandleState {
    pub conn: ConnId,
    pub file: String,
    pub level: LockLevel,
    /// The file's version when it last gave up its locks (0: never): what
    /// its connection's page cache holds, if the file still has it.
    pub seen: u64,
}

/// One connection as the store tracks it.
#[derive(Debug, Clone)]
pub(crate) struct ConnState {
    pub label: String,
    pub killed: bool,
}

/// An idle connection kept for reuse (see [`super::Store::set_pooling`]).
pub(crate) struct Pooled {
    pub id: ConnId,
    pub db: String,
    pub sqlite: rusqlite::Connection,
    /// Whether it carries the bounds of [`super::Conn::bound`].
    pub bounded: bool,
    /// The flag PRAGMAs it ran (see [`super::Conn::apply_pragmas`]).
    pub flags: String,
    /// Its `PRAGMA synchronous` (see [`super::Conn::set_synchronous`]).
    pub synchronous: super::modes::Synchronous,
    /// Whether it ever changed a row (`total_changes()` is not 0): only one
    /// that never did can be handed to a program that reads the counters.
    pub changed: bool,
}

impl std::fmt::Debug for Pooled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pooled({}, {})", self.id, self.db)
    }
}

/// The shared state of one store: its files, the locks on its databases, and
/// the handles and connections open on it.
#[derive(Debug)]
pub(crate) struct StoreInner {
    /// Whether idle connections are kept for reuse.
    pub pooling: Cell<bool>,
    /// Whether a pooled connection keeps its page cache when reused (see
    /// [`super::Store::set_pooling_keeping_caches`]).
    pub pool_keeps_caches: Cell<bool>,
    /// The idle connections kept for reuse.
    pub pool: RefCell<Vec<Pooled>>,
    pub name: String,
    /// Whether new connections record the rows each statement changes.
    pub track_changes: Cell<bool>,
    pub(super) files: RefCell<BTreeMap<String, FileData>>,
    /// The shared memory (wal-index) of WAL databases, by file name
    /// (`main.db-shm`): a namespace of its own, as its bytes are mapped.
    pub(super) shm: RefCell<BTreeMap<String, Rc<ShmNode>>>,
    pub(super) locks: RefCell<BTreeMap<String, FileLocks>>,
    pub(super) handles: RefCell<BTreeMap<u64, HandleState>>,
    conns: RefCell<BTreeMap<ConnId, ConnState>>,
    /// The footprint slot of each database, by index (see
    /// [`StoreInner::slot`]).
    slots: RefCell<Vec<String>>,
    /// The durable directory, once the store keeps durability (see
    /// `vfs_durable.rs`): each name a power loss would leave, and its file.
    pub(super) durable_dir: RefCell<Option<BTreeMap<String, FileData>>>,
    /// The file operations that reach the disk, while they are logged.
    pub(super) io_log: RefCell<Option<Vec<String>>>,
    /// How many power losses it went through.
    pub(super) power_losses: Cell<u64>,
    /// The I/O faults pending (see `vfs_faults.rs`).
    pub(super) faults: RefCell<super::faults::Faults>,
    /// A death armed for the statement running (see `vfs_faults.rs`).
    pub(super) armed: RefCell<Option<super::faults::Armed>>,
    /// The armed death, once it fired.
    pub(super) fired: RefCell<Option<super::faults::Death>>,
    /// Idle connections a power loss killed, closed once no SQLite call
    /// of another connection is under way ([`StoreInner::bury`]).
    pub(super) graveyard: RefCell<Vec<Pooled>>,
}

impl StoreInner {
    /// The footprint slot of database `name` (a file name or a database's
    /// name): its place among this store's databases, in the order they were
    /// named by [`StoreInner::assign_slots`] or first touched. It depends
    /// only on the store's own history, so two workers' explorers of one
    /// scenario number databases alike (footprints cross between them).
    pub(crate) fn slot(&self, name: &str) -> u8 {
        let db = footprint::database_of(name);
        let mut slots = self.slots.borrow_mut();
        let index = match slots.iter().position(|s| s == db) {
            Some(index) => index,
            None => {
                slots.push(db.to_string());
                slots.len() - 1
            }
        };
        u8::try_from(index).unwrap_or(u8::MAX)
    }

    /// Numbers `names` first, in this order (those not numbered yet).
    pub(crate) fn assign_slots<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        for name in names {
            self.slot(name);
        }
    }

    /// The databases in slot order.
    pub(crate) fn slot_names(&self) -> Vec<String> {
        self.slots.borrow().clone()
    }

    /// Creates and registers an empty store under a new unique name.
    pub(crate) fn create(label: &str) -> Rc<StoreInner> {
        let name = format!("{label}-{}", next_id());
        let store = Rc::new(StoreInner {
            pooling: Cell::new(false),
            pool_keeps_caches: Cell::new(false),
            pool: RefCell::default(),
            name: name.clone(),
            track_changes: Cell::new(false),
            files: RefCell::default(),
            shm: RefCell::default(),
            locks: RefCell::default(),
            handles: RefCell::default(),
            conns: RefCell::default(),
            slots: RefCell::default(),
            durable_dir: RefCell::default(),
            io_log: RefCell::default(),
            power_losses: Cell::new(0),
            faults: RefCell::default(),
            armed: RefCell::default(),
            fired: RefCell::default(),
            graveyard: RefCell::default(),
        });
        STORES.with(|stores| {
            let mut stores = stores.borrow_mut();
            stores.retain(|_, weak| weak.strong_count() > 0);
            stores.insert(name, Rc::downgrade(&store));
        });
        store
    }

    /// The store registered under `name` on this thread.
    pub(crate) fn find(name: &str) -> Option<Rc<StoreInner>> {
        STORES.with(|stores| stores.borrow().get(name).and_then(Weak::upgrade))
    }

    /// The store on this thread that connection `conn` is open on.
    pub(super) fn of_conn(conn: ConnId) -> Option<Rc<StoreInner>> {
        if conn == 0 {
            return None;
        }
        STORES.with(|stores| {
            stores
                .borrow()
                .values()
                .filter_map(Weak::upgrade)
                .find(|store| store.conns.borrow().contains_key(&conn))
        })
    }

    pub(crate) fn add_conn(&self, conn: ConnId, label: &str) {
        self.conns.borrow_mut().insert(
            conn,
            ConnState {
                label: label.to_string(),
                killed: false,
            },
        );
    }

    pub(crate) fn remove_conn(&self, conn: ConnId) {
        self.conns.borrow_mut().remove(&conn);
    }

    pub(crate) fn is_killed(&self, conn: ConnId) -> bool {
        conn != 0 && self.conns.borrow().get(&conn).is_some_and(|c| c.killed)
    }

    /// Kills `conn`: its locks vanish at once, as a dead process's do, and
    /// every write its handles make from now on is discarded.
    pub(crate) fn kill(&self, conn: ConnId) {
        footprint::global();
        if let Some(state) = self.conns.borrow_mut().get_mut(&conn) {
            state.killed = true;
        }
        let mut locks = self.locks.borrow_mut();
        let shm = self.shm.borrow();
        for (&id, handle) in self.handles.borrow_mut().iter_mut() {
            if handle.conn == conn {
                if let Some(file) = locks.get_mut(&handle.file) {
                    file.unlock(&mut handle.level, LockLevel::None);
                }
                for node in shm.values() {
                    node.drop_locks(id);
                }
            }
        }
    }

    /// Closes the idle connections a power loss killed.
    pub(crate) fn bury(&self) {
        let dead: Vec<Pooled> = self.graveyard.borrow_mut().drain(..).collect();
        drop(dead);
    }

    /// Closes every file `conn` still has open, as the death of its process
    /// closes its descriptors and unmaps its shared memory: for a killed
    /// connection whose handle SQLite could not close (a statement was still
    /// open), so that nothing it held outlives it. The handle itself is
    /// never used again.
    pub(crate) fn close_all_of(&self, conn: ConnId) {
        let mut locks = self.locks.borrow_mut();
        let shm = self.shm.borrow();
        self.handles.borrow_mut().retain(|&id, handle| {
            if handle.conn != conn {
                return true;
            }
            if let Some(file) = locks.get_mut(&handle.file) {
                file.unlock(&mut handle.level, LockLevel::None);
            }
            for node in shm.values() {
                node.detach(id);
            }
            false
        });
    }

    /// The shared memory of database `file`, if it has any (asked after
    /// every step: a store in rollback mode answers without naming it).
    fn shm_node(&self, file: &str) -> Option<Rc<ShmNode>> {
        let shm = self.shm.borrow();
        if shm.is_empty() {
            return None;
        }
        shm.get(&shm_name(file)).cloned()
    }

    /// The locks `conn` holds on the shared memory of database `file`.
    pub(crate) fn shm_locks(&self, conn: ConnId, file: &str) -> ShmLocks {
        let Some(node) = self.shm_node(file) else {
            return ShmLocks::default();
        };
        self.handles
            .borrow()
            .iter()
            .filter(|(_, h)| h.conn == conn && h.file == file)
            .map(|(&id, _)| node.locks(id))
            .find(|locks| !locks.is_empty())
            .unwrap_or_default()
    }

    /// Read mark `slot` (1 to 4) of database `file`'s wal-index: the WAL
    /// frame count a reader in that slot sees.
    pub(crate) fn read_mark(&self, file: &str, slot: usize) -> Option<u32> {
        self.shm_node(file)?.read_u32(READ_MARKS + 4 * slot)
    }

    /// The frame count of database `file`'s log as its wal-index header
    /// says (`mxFrame`, at byte 16 of the first copy).
    pub(crate) fn log_frames(&self, file: &str) -> Option<u32> {
        self.shm_node(file)?.read_u32(16)
    }

    /// The strongest lock each of `conns` (a connection and its database)
    /// holds, in one pass over the open files: a run reads every
    /// connection's after each step.
    pub(crate) fn lock_levels(&self, conns: &[(ConnId, &str)]) -> Vec<LockLevel> {
        let mut levels = vec![LockLevel::None; conns.len()];
        for h in self.handles.borrow().values() {
            if h.level == LockLevel::None {
                continue;
            }
            for (level, (conn, file)) in levels.iter_mut().zip(conns) {
                if h.conn == *conn && h.file == *file && h.level > *level {
                    *level = h.level;
                }
            }
        }
        levels
    }

    /// The strongest lock `conn` holds on database `file`.
    pub(crate) fn lock_level(&self, conn: ConnId, file: &str) -> LockLevel {
        self.handles
            .borrow()
            .values()
            .filter(|h| h.conn == conn && h.file == file)
            .map(|h| h.level)
            .max()
            .unwrap_or(LockLevel::None)
    }

    /// The labels of the live connections that hold a lock.
    pub(crate) fn lock_holders(&self) -> Vec<String> {
        let conns = self.conns.borrow();
        let mut holders: Vec<String> = self
            .handles
            .borrow()
            .values()
            .filter(|h| h.level > LockLevel::None)
            .filter_map(|h| conns.get(&h.conn).map(|c| c.label.clone()))
            .collect();
        holders.dedup();
        holders
    }

    /// The labels of the connections open on the store.
    pub(crate) fn open_conns(&self) -> Vec<String> {
        self.conns
            .borrow()
            .values()
            .map(|c| c.label.clone())
            .collect()
    }

    /// Handles open for connections that are in use (not idle in the pool).
    pub(crate) fn open_handles(&self) -> usize {
        let pooled: Vec<ConnId> = self.pool.borrow().iter().map(|p| p.id).collect();
        self.handles
            .borrow()
            .values()
            .filter(|h| !pooled.contains(&h.conn))
            .count()
    }

    pub(super) fn close(&self, handle: u64) {
        if let Some(mut state) = self.handles.borrow_mut().remove(&handle) {
            // Closing a file releases its locks, as unixClose does.
            if let Some(file) = self.locks.borrow_mut().get_mut(&state.file) {
                file.unlock(&mut state.level, LockLevel::None);
            }
        }
    }

    pub(super) fn lock(
        &self,
        handle: u64,
        file: &str,
        want: LockLevel,
        shm: Option<&ShmNode>,
    ) -> VfsResult<()> {
        let mut handles = self.handles.borrow_mut();
        let Some(state) = handles.get_mut(&handle) else {
            return Err(VfsError::new(VfsErrorCode::IoLock, "unknown handle".into()));
        };
        let mut locks = self.locks.borrow_mut();
        // Looked up before it is made: a name is only copied once per file.
        if !locks.contains_key(file) {
            locks.insert(file.to_string(), FileLocks::default());
        }
        let Some(locks) = locks.get_mut(file) else {
            return Err(VfsError::new(VfsErrorCode::IoLock, "unknown file".into()));
        };
        let sharing_shm = shm.is_some_and(|node| node.shared_with_others(handle));
        match locks.lock(&mut state.level, want, sharing_shm) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_busy)) => Err(VfsError::new(
                VfsErrorCode::Busy,
                "database is locked".into(),
            )),
            Err(_) => Err(VfsError::new(
                VfsErrorCode::IoLock,
                format!("SQLite never requests {want:?}").into(),
            )),
        }
    }

    pub(super) fn unlock(&self, handle: u64, file: &str, to: LockLevel, version: u64) {
        if let Some(state) = self.handles.borrow_mut().get_mut(&handle) {
            if let Some(locks) = self.locks.borrow_mut().get_mut(file) {
                locks.unlock(&mut state.level, to);
            }
            if to == LockLevel::None {
                state.seen = version;
            }
        }
    }

    /// Whether the file `conn` has open as database `file` holds the bytes
    /// it held when that connection last gave up its locks: then its page
    /// cache is of these bytes (a transaction's pages are read under a lock).
    /// Never while the database has a journal or a WAL beside it: a hot
    /// journal is rolled back, and a WAL read, before the cache is used.
    pub(crate) fn cache_is_current(&self, conn: ConnId, file: &str) -> bool {
        let files = self.files.borrow();
        let Some(version) = files.get(file).map(|d| d.version.get()) else {
            return false;
        };
        // A journal or log beside it: the files named `file` and more
        // follow it in name order.
        let beside = files
            .range::<str, _>((std::ops::Bound::Excluded(file), std::ops::Bound::Unbounded))
            .map(|(name, _)| name)
            .take_while(|name| name.starts_with(file))
            .any(|name| matches!(&name[file.len()..], "-journal" | "-wal"));
        if beside {
            return false;
        }
        drop(files);
        version != 0
            && self
                .handles
                .borrow()
                .values()
                .any(|h| h.conn == conn && h.file == file && h.seen == version)
    }

    pub(super) fn reserved(&self, file: &str) -> bool {
        self.locks
            .borrow()
            .get(file)
            .is_some_and(FileLocks::reserved)
    }

    /// `xDelete` of `file`; with `sync_dir`, the directory is synced after.
    pub(super) fn delete(&self, file: &str, sync_dir: bool) -> VfsResult<()> {
        if self.is_killed(ACTIVE_CONN.with(Cell::get)) {
            // A dead process deletes nothing: its hot journal stays for the next connection.
            return Ok(());
        }
        let removed = self.files.borrow_mut().remove(file);
        match removed {
            Some(_) => {
                self.log_io("delete", file, sync_dir);
                if sync_dir {
                    self.sync_dir(file);
                }
                Ok(())
            }
            None => Err(VfsError::new(
                VfsErrorCode::IoDeleteNoEntry,
                format!("no file {file:?} to delete").into(),
            )),
        }
    }
}

impl Drop for StoreInner {
    fn drop(&mut self) {
        // Unregister, unless the thread is already tearing down its registry.
        let _ = STORES.try_with(|stores| {
            if let Ok(mut stores) = stores.try_borrow_mut() {
                stores.remove(&self.name);
            }
        });
    }
}

/// Where the wal-index keeps its read marks (`WalCkptInfo.aReadMark`,
/// after the two copies of the 48-byte header and `nBackfill`).
const READ_MARKS: usize = 2 * 48 + 4;

/// The name of the shared-memory file of database `file`.
pub(crate) fn shm_name(file: &str) -> String {
    format!("{file}-shm")
}

/// Whether `name` names a shared-memory file.
pub(super) fn is_shm_name(name: &str) -> bool {
    name.ends_with("-shm")
}
