//! The `replayground` VFS: in-memory files with SQLite's real locking, shared
//! by every connection to the same database name, and connections that can
//! be killed as if their process called `_exit`.
//!
//! Built on `rsqlite-vfs`'s traits (the toolkit `sqlite-wasm-rs` itself uses),
//! so the same code runs natively, linked against rusqlite's bundled SQLite,
//! and in the browser.
//!
//! Names are `/<store>/<file>`: a store is a directory of files (databases and
//! their rollback journals) that can be snapshotted and restored as a whole.
//! Stores live in a thread-local registry: SQLite calls the VFS on the thread
//! that uses the connection, and a [`super::Store`] cannot leave its thread.
//!
//! Connections open plain file names (`main.db`, and `aux.db` in `ATTACH`),
//! never paths or URIs (both builds have URI filenames off): `xFullPathname`
//! places a name in the store of the connection making the call (see
//! [`ActiveConn`]) and refuses anything else, so no name leaves the store.
//! Every file SQLite opens for a connection (its databases, their journals,
//! a super-journal) belongs to that connection: a kill releases its locks on
//! all of them and discards all their later writes.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use std::ffi::{c_int, c_void};

use rsqlite_vfs::ffi::{
    sqlite3_file, sqlite3_io_methods, SQLITE_BUSY, SQLITE_FCNTL_LOCKSTATE, SQLITE_FCNTL_MMAP_SIZE,
    SQLITE_IOERR_SHMLOCK, SQLITE_IOERR_SHMMAP, SQLITE_IOERR_SHMOPEN, SQLITE_NOTFOUND, SQLITE_OK,
    SQLITE_SHM_EXCLUSIVE, SQLITE_SHM_UNLOCK,
};
use rsqlite_vfs::{
    AccessMode, DeviceCharacteristics, FileKind, LockLevel, OpenAccess, OpenOptions, OpenRequest,
    OpenedFile, OsCallback, SQLiteIoMethods, SQLiteVfs, SQLiteVfsFile, SectorSize, SyncOptions,
    VfsAppData, VfsError, VfsErrorCode, VfsFile, VfsResult, VfsStore,
};

use super::footprint::{self, Part};
use super::locks::FileLocks;
use super::shm::{ShmLocks, ShmNode, ShmRequest, SLOTS as SHM_SLOTS};

/// The name of the VFS, which connections open their database with.
pub const VFS_NAME: &str = "replayground";

/// The most bytes one file of a store (a database, its journal, its log)
/// may hold: a write past it is SQLite's `SQLITE_FULL`, "database or disk
/// is full", an error a scenario sees as it would on a full disk.
pub const MAX_FILE_BYTES: usize = 64 << 20;

/// The most bytes SQLite may have allocated at once, every connection of the
/// process together (`sqlite3_hard_heap_limit64`).
pub const SQLITE_HEAP_LIMIT: i64 = 1 << 30;

/// The error of a write past [`MAX_FILE_BYTES`].
fn too_large() -> VfsError {
    VfsError::new(
        VfsErrorCode::Full,
        format!(
            "a file of a store may hold at most {} MiB",
            MAX_FILE_BYTES >> 20
        )
        .into(),
    )
}

/// The least a file grows by when a write goes past its end (bytes).
const MIN_GROWTH: usize = 32 * 1024;

/// Identifies a connection within the thread; 0 means "not attributed".
pub type ConnId = u64;

/// foldhash with a fixed seed: equal bytes (or state) hash equal in every
/// worker of a split search, and faster than SipHash, which took about a
/// tenth of a search. File bytes and the search's state keys both use it.
pub fn fixed_hasher() -> impl std::hash::Hasher {
    std::hash::BuildHasher::build_hasher(&foldhash::quality::FixedState::default())
}

/// The contents of one file.
type FileData = Rc<FileCell>;

/// A file's bytes, with what is known of them until they next change: their
/// hash, and the snapshot bytes they are a copy of.
#[derive(Debug, Default)]
pub(crate) struct FileCell {
    bytes: RefCell<Vec<u8>>,
    hash: Cell<Option<u64>>,
    /// The snapshot image last restored into it or copied from it, while
    /// unchanged since.
    copy_of: RefCell<Option<Rc<Image>>>,
    /// Which bytes it holds: a number no other bytes of any file had, taken
    /// anew at each change (0: never changed). Equal versions, equal bytes.
    version: Cell<u64>,
}

impl FileCell {
    fn new(bytes: Vec<u8>) -> Self {
        FileCell {
            bytes: RefCell::new(bytes),
            ..FileCell::default()
        }
    }

    fn borrow(&self) -> std::cell::Ref<'_, Vec<u8>> {
        self.bytes.borrow()
    }

    /// The bytes, to change: what was known of them is forgotten.
    fn borrow_mut(&self) -> std::cell::RefMut<'_, Vec<u8>> {
        self.hash.set(None);
        self.copy_of.take();
        self.version.set(NEXT_VERSION.with(|n| {
            let version = n.get();
            n.set(version + 1);
            version
        }));
        self.bytes.borrow_mut()
    }

    /// Now holds `image`'s bytes: their hash, if the image knows it, and
    /// their version (the image's, or a new one it keeps).
    fn took(&self, image: &Image) {
        if image.hash.get().is_some() {
            self.hash.set(image.hash.get());
        }
        match image.version.get() {
            0 => image.version.set(self.version.get()),
            version => self.version.set(version),
        }
    }

    /// The hash of the bytes as [`StoreInner::hash_files`] needs it,
    /// computed once per change.
    fn hash(&self, wal: bool, is_journal: bool) -> u64 {
        if let Some(hash) = self.hash.get() {
            return hash;
        }
        // A file of a few pages is hashed again after every step that
        // writes it: SipHash spent about 6% of a search there.
        let mut hasher = fixed_hasher();
        let data = self.bytes.borrow();
        if wal {
            hash_wal(&data, &mut hasher);
        } else if is_journal {
            hash_journal(&data, &mut hasher);
        } else {
            std::hash::Hasher::write(&mut hasher, &data);
        }
        let hash = std::hash::Hasher::finish(&hasher);
        self.hash.set(Some(hash));
        if let Some(image) = self.copy_of.borrow().as_ref() {
            image.hash.set(Some(hash));
        }
        hash
    }
}

/// A file's bytes as a snapshot keeps them, with the version and hash of
/// the file they were copied from or restored into (so that a file put back
/// to them has its hash without hashing them again, and the same version:
/// a connection that last read these very bytes keeps its page cache).
#[derive(Debug, Default)]
pub(crate) struct Image {
    bytes: Box<[u8]>,
    /// The version of the bytes (0: none yet, a new one is taken when they
    /// are restored).
    version: Cell<u64>,
    hash: Cell<Option<u64>>,
}

impl Image {
    fn of(bytes: &[u8]) -> Image {
        Image {
            bytes: bytes.into(),
            ..Image::default()
        }
    }
}

impl std::ops::Deref for Image {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

thread_local! {
    /// Every store of the thread, by name (looked up at every file access:
    /// foldhash rather than SipHash).
    static STORES: RefCell<HashMap<String, Weak<StoreInner>, foldhash::fast::FixedState>> =
        RefCell::new(HashMap::default());
    static NEXT_ID: Cell<u64> = const { Cell::new(1) };
    /// The next [`FileCell::version`].
    static NEXT_VERSION: Cell<u64> = const { Cell::new(1) };
    /// The connection whose SQLite call is running: `xFullPathname` places
    /// names in its store, `xOpen` gives it the file, and `xDelete` of a dead
    /// one deletes nothing. The other callbacks know their connection from
    /// the file handle.
    static ACTIVE_CONN: Cell<ConnId> = const { Cell::new(0) };
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
    files: RefCell<BTreeMap<String, FileData>>,
    /// The shared memory (wal-index) of WAL databases, by file name
    /// (`main.db-shm`): a namespace of its own, as its bytes are mapped.
    shm: RefCell<BTreeMap<String, Rc<ShmNode>>>,
    locks: RefCell<BTreeMap<String, FileLocks>>,
    handles: RefCell<BTreeMap<u64, HandleState>>,
    conns: RefCell<BTreeMap<ConnId, ConnState>>,
    /// The footprint slot of each database, by index (see
    /// [`StoreInner::slot`]).
    slots: RefCell<Vec<String>>,
}

fn cant_open(message: String) -> VfsError {
    VfsError::new(VfsErrorCode::CantOpen, message.into())
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
    fn of_conn(conn: ConnId) -> Option<Rc<StoreInner>> {
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
        self.lock_levels(&[(conn, file)])[0]
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

    /// Every file's name and size, the shared-memory files included.
    pub(crate) fn file_names(&self) -> Vec<(String, usize)> {
        let mut names: Vec<(String, usize)> = self
            .files
            .borrow()
            .iter()
            .map(|(name, data)| (name.clone(), data.borrow().len()))
            .collect();
        names.extend(
            self.shm
                .borrow()
                .iter()
                .map(|(name, node)| (name.clone(), node.len())),
        );
        names.sort();
        names
    }

    /// Hashes every file's name and bytes, the wal-index included. The
    /// salts and checksums of a WAL and its wal-index are left out: SQLite
    /// draws the salts at random whenever it starts a log, so two runs that
    /// reach the same state write different salts (see [`hash_wal`]).
    pub(crate) fn hash_files(&self, state: &mut dyn std::hash::Hasher) {
        for (name, data) in self.files.borrow().iter() {
            state.write(name.as_bytes());
            state.write_usize(name.len());
            state.write_u64(data.hash(name.ends_with("-wal"), name.ends_with("-journal")));
            state.write_usize(data.borrow().len());
        }
        for (name, node) in self.shm.borrow().iter() {
            state.write(name.as_bytes());
            state.write_usize(name.len());
            hash_wal_index(&node.bytes(), state);
        }
    }

    pub(crate) fn file_bytes(&self, name: &str) -> Option<Vec<u8>> {
        match self.files.borrow().get(name) {
            Some(data) => Some(data.borrow().clone()),
            None => self.shm.borrow().get(name).map(|node| node.bytes()),
        }
    }

    /// Copies every file's bytes, the wal-index included. A file unchanged
    /// since it was last copied or restored is not copied again: it shares
    /// those bytes.
    pub(crate) fn snapshot_files(&self) -> BTreeMap<String, Rc<Image>> {
        // Inserted one by one: collecting would sort the entries first (a
        // stable sort compiled for this one kind of entry), and a store
        // holds a few files.
        let mut files = BTreeMap::new();
        for (name, data) in self.files.borrow().iter() {
            let mut copy_of = data.copy_of.borrow_mut();
            let image = copy_of.get_or_insert_with(|| {
                let image = Image::of(&data.bytes.borrow());
                image.version.set(data.version.get());
                image.hash.set(data.hash.get());
                Rc::new(image)
            });
            files.insert(name.clone(), Rc::clone(image));
        }
        for (name, node) in self.shm.borrow().iter() {
            files.insert(name.clone(), Rc::new(Image::of(&node.bytes())));
        }
        files
    }

    /// Puts every file back to `files`. Files that exist are rewritten in
    /// place, so that the handles of pooled idle connections read the new
    /// bytes (a handle keeps its file's data, as an open file descriptor does).
    pub(crate) fn restore_files(&self, files: &BTreeMap<String, Rc<Image>>) {
        self.rewind_files(files, &[]);
        self.locks.borrow_mut().clear();
    }

    /// Puts every file back to `files` as [`StoreInner::restore_files`]
    /// does, but the files named in `keep`; the locks stay as they are.
    pub(crate) fn rewind_files(&self, files: &BTreeMap<String, Rc<Image>>, keep: &[String]) {
        let mut shm = self.shm.borrow_mut();
        shm.retain(|name, _| files.contains_key(name));
        let mut current = self.files.borrow_mut();
        current.retain(|name, _| files.contains_key(name) || keep.contains(name));
        for (name, bytes) in files {
            if is_shm_name(name) {
                shm.entry(name.clone()).or_default().set_bytes(bytes);
                continue;
            }
            match current.get(name) {
                // Unchanged since it was restored from these same bytes.
                Some(data)
                    if data
                        .copy_of
                        .borrow()
                        .as_ref()
                        .is_some_and(|from| Rc::ptr_eq(from, bytes)) => {}
                Some(data) => {
                    let (hash, version) = (data.hash.get(), data.version.get());
                    let mut copy = data.borrow_mut();
                    let same = copy.as_slice() == &bytes[..];
                    if !same {
                        copy.clear();
                        copy.extend_from_slice(bytes);
                    }
                    drop(copy);
                    if same {
                        data.hash.set(hash);
                        data.version.set(version);
                    } else {
                        data.took(bytes);
                    }
                    *data.copy_of.borrow_mut() = Some(Rc::clone(bytes));
                }
                None => {
                    let data = Rc::new(FileCell::new(bytes.to_vec()));
                    data.took(bytes);
                    *data.copy_of.borrow_mut() = Some(Rc::clone(bytes));
                    current.insert(name.clone(), data);
                }
            }
        }
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

    fn open(
        self: &Rc<Self>,
        file: &str,
        conn: ConnId,
        options: OpenOptions,
    ) -> VfsResult<LockingFile> {
        let killed = self.is_killed(conn);
        let data = {
            let mut files = self.files.borrow_mut();
            match files.get(file) {
                Some(_) if options.exclusive() => {
                    return Err(cant_open(format!("file already exists: {file:?}")));
                }
                Some(data) => data.clone(),
                None if options.create() && !killed => {
                    footprint::write(self.slot(file), footprint::part_of(file));
                    let data = FileData::default();
                    files.insert(file.to_string(), data.clone());
                    data
                }
                None => {
                    return Err(cant_open(format!(
                        "no file {file:?} in store {:?}",
                        self.name
                    )))
                }
            }
        };
        let handle = next_id();
        self.handles.borrow_mut().insert(
            handle,
            HandleState {
                conn,
                file: file.to_string(),
                level: LockLevel::None,
                seen: 0,
            },
        );
        Ok(LockingFile {
            store: Some(self.clone()),
            data,
            handle,
            file: file.to_string(),
            conn,
            main_db: options.kind() == Some(FileKind::MainDb),
            read_only: options.access() == OpenAccess::ReadOnly,
            mmap_limit: 0,
            shm: None,
            slot: Some(self.slot(file)),
            part: footprint::part_of(file),
        })
    }

    fn close(&self, handle: u64) {
        if let Some(mut state) = self.handles.borrow_mut().remove(&handle) {
            // Closing a file releases its locks, as unixClose does.
            if let Some(file) = self.locks.borrow_mut().get_mut(&state.file) {
                file.unlock(&mut state.level, LockLevel::None);
            }
        }
    }

    fn lock(
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
        let locks = locks.entry(file.to_string()).or_default();
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

    fn unlock(&self, handle: u64, file: &str, to: LockLevel, version: u64) {
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

    fn reserved(&self, file: &str) -> bool {
        self.locks
            .borrow()
            .get(file)
            .is_some_and(FileLocks::reserved)
    }

    fn delete(&self, file: &str) -> VfsResult<()> {
        if self.is_killed(ACTIVE_CONN.with(Cell::get)) {
            // A dead process deletes nothing: its hot journal stays for the next connection.
            return Ok(());
        }
        match self.files.borrow_mut().remove(file) {
            Some(_) => Ok(()),
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

/// A file handle of the VFS.
pub struct LockingFile {
    /// The owning store; `None` for an anonymous temporary file.
    store: Option<Rc<StoreInner>>,
    data: FileData,
    handle: u64,
    file: String,
    conn: ConnId,
    main_db: bool,
    read_only: bool,
    /// The memory-mapping limit SQLite set (`SQLITE_FCNTL_MMAP_SIZE`). Nothing
    /// is mapped (`xFetch` declines); it is kept to answer as the unix VFS does.
    mmap_limit: i64,
    /// The WAL shared memory this handle (of a main database) maps.
    shm: Option<Rc<ShmNode>>,
    /// The footprint slot of its database (`None` for a temporary file).
    slot: Option<u8>,
    /// Which part of the database its bytes are.
    part: Part,
}

/// The size of a WAL's header and of each frame's header.
const WAL_HEADER: usize = 32;
const WAL_FRAME_HEADER: usize = 24;

/// Hashes a WAL file as SQLite reads it, without its salts and checksums:
/// the header's magic, version, page size and checkpoint sequence; then
/// each frame's page number, commit size, page, and whether its salts are
/// the header's (a frame of an older log is not part of this one). Salts
/// are drawn at random, and checksums are seeded by them; any two logs that
/// differ only there behave alike.
/// The magic number a rollback journal's header begins with.
const JOURNAL_MAGIC: [u8; 8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];

/// Hashes a rollback journal as SQLite reads it back, without its nonce and
/// checksums: SQLite draws the nonce at random for every journal, and seeds
/// each page record's checksum with it, so two transactions that wrote the
/// same pages leave journals that differ only there and roll back alike.
/// Anything but one header (magic or zeros, record count, nonce, initial
/// size, sector size, page size, padded to a sector) followed by whole
/// records (page number, page, checksum) is hashed byte for byte.
pub(crate) fn hash_journal(data: &[u8], state: &mut dyn std::hash::Hasher) {
    let whole = |state: &mut dyn std::hash::Hasher| {
        state.write_u8(0);
        state.write(data);
    };
    // SQLite leaves the magic (and the record count) zero until it syncs
    // the journal, at commit.
    if data.len() < 28 || (data[..8] != JOURNAL_MAGIC && data[..8] != [0; 8]) {
        return whole(state);
    }
    let word = |at: usize| u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
    let (sector, page) = (word(20) as usize, word(24) as usize);
    let record = page + 8;
    if sector < 28 || page == 0 || data.len() < sector || (data.len() - sector) % record != 0 {
        return whole(state);
    }
    state.write_u8(1);
    state.write(&data[..12]);
    state.write(&data[16..sector]);
    for r in data[sector..].chunks(record) {
        state.write(&r[..4 + page]);
    }
}

pub(crate) fn hash_wal(data: &[u8], state: &mut dyn std::hash::Hasher) {
    if data.len() < WAL_HEADER {
        state.write(data);
        return;
    }
    state.write(&data[..16]);
    let salts = &data[16..24];
    let page = u32::from_be_bytes([data[8], data[9], data[10], data[11]]) as usize;
    if page == 0 {
        state.write(&data[16..]);
        return;
    }
    let frame = WAL_FRAME_HEADER + page;
    let mut frames = data[WAL_HEADER..].chunks(frame);
    for f in &mut frames {
        if f.len() < frame {
            state.write_u8(0xff);
            state.write(f);
            break;
        }
        state.write(&f[..8]);
        state.write_u8(u8::from(&f[8..16] == salts));
        state.write(&f[WAL_FRAME_HEADER..]);
    }
}

/// Hashes a wal-index without the salts and checksums its header copies
/// (`aFrameCksum`, `aSalt`, `aCksum`, bytes 24 to 48 of each 48-byte copy),
/// but with whether the two copies agree (SQLite trusts the header only
/// then).
pub(crate) fn hash_wal_index(data: &[u8], state: &mut dyn std::hash::Hasher) {
    const COPY: usize = 48;
    if data.len() < 2 * COPY {
        state.write(data);
        return;
    }
    state.write_u8(u8::from(data[..COPY] == data[COPY..2 * COPY]));
    for copy in [&data[..COPY], &data[COPY..2 * COPY]] {
        state.write(&copy[..24]);
    }
    state.write(&data[2 * COPY..]);
}

/// Where the wal-index keeps its read marks (`WalCkptInfo.aReadMark`,
/// after the two copies of the 48-byte header and `nBackfill`).
const READ_MARKS: usize = 2 * 48 + 4;

/// The name of the shared-memory file of database `file`.
pub(crate) fn shm_name(file: &str) -> String {
    format!("{file}-shm")
}

/// Whether `name` names a shared-memory file.
fn is_shm_name(name: &str) -> bool {
    name.ends_with("-shm")
}

/// `SQLITE_MAX_MMAP_SIZE` on 64-bit Linux (the unix VFS's ceiling for
/// `PRAGMA mmap_size`); both builds are compiled with it.
pub const MAX_MMAP_SIZE: i64 = 0x7fff_0000;

impl LockingFile {
    fn note_read(&self, part: Part) {
        if let Some(slot) = self.slot {
            footprint::read(slot, part);
        }
    }

    fn note_write(&self, part: Part) {
        if let Some(slot) = self.slot {
            footprint::write(slot, part);
        }
    }

    /// Notes a lock call: `from` the level held before, `to` the level
    /// asked for (or lowered to), `granted` its answer. See
    /// [`footprint`] for which part each call reads or writes.
    fn note_lock(&self, from: LockLevel, to: LockLevel, granted: bool) {
        let Some(slot) = self.slot else {
            return;
        };
        if self.shm.is_some() {
            // WAL mode: whether RESERVED or EXCLUSIVE is granted also
            // depends on who maps the shared memory.
            footprint::write_all_of(slot);
            return;
        }
        use footprint::{read, write};
        match (to > from, to) {
            // Lowering: from above SHARED changes the writer's state; a
            // reader leaving only changes the readers' count.
            (false, _) if from > LockLevel::Shared => {
                write(slot, Part::Reserved);
                write(slot, Part::Exclusive);
            }
            (false, _) => read(slot, Part::Exclusive),
            (true, LockLevel::Shared) => read(slot, Part::Exclusive),
            (true, LockLevel::Reserved) if granted => {
                write(slot, Part::Reserved);
                read(slot, Part::Exclusive);
            }
            (true, LockLevel::Reserved) => {
                read(slot, Part::Reserved);
                read(slot, Part::Exclusive);
            }
            // EXCLUSIVE (through PENDING from RESERVED, kept if refused).
            (true, _) if granted || from == LockLevel::Reserved => {
                write(slot, Part::Reserved);
                write(slot, Part::Exclusive);
            }
            (true, _) => {
                read(slot, Part::Reserved);
                read(slot, Part::Exclusive);
            }
        }
    }

    fn anonymous(options: OpenOptions) -> Self {
        LockingFile {
            store: None,
            data: FileData::default(),
            handle: 0,
            file: String::new(),
            conn: 0,
            main_db: false,
            read_only: options.access() == OpenAccess::ReadOnly,
            mmap_limit: 0,
            shm: None,
            slot: None,
            part: Part::Data,
        }
    }

    /// The lock this handle holds (`SQLITE_FCNTL_LOCKSTATE`).
    fn lock_state(&self) -> LockLevel {
        match &self.store {
            Some(store) => store
                .handles
                .borrow()
                .get(&self.handle)
                .map_or(LockLevel::None, |h| h.level),
            None => LockLevel::None,
        }
    }

    /// `SQLITE_FCNTL_MMAP_SIZE` as `unixFileControl` answers it: sets the
    /// limit to `requested` (at most [`MAX_MMAP_SIZE`]; a negative request
    /// only asks) and returns the previous limit.
    fn set_mmap_limit(&mut self, requested: i64) -> i64 {
        let previous = self.mmap_limit;
        let requested = requested.min(MAX_MMAP_SIZE);
        if requested >= 0 {
            self.mmap_limit = requested;
        }
        previous
    }

    /// Whether writes through this handle must vanish (its connection is dead).
    fn discards_writes(&self) -> bool {
        self.store.as_ref().is_some_and(|s| s.is_killed(self.conn))
    }

    fn check_writable(&self) -> VfsResult<()> {
        if self.read_only {
            return Err(VfsError::new(
                VfsErrorCode::ReadOnly,
                "file is open read-only".into(),
            ));
        }
        Ok(())
    }
}

impl VfsFile for LockingFile {
    fn sector_size(&self) -> SectorSize {
        // As SQLite's unix VFS reports for ordinary files.
        SectorSize::DEFAULT
    }

    fn device_characteristics(&self) -> DeviceCharacteristics {
        // The unix VFS's default (SQLITE_POWERSAFE_OVERWRITE=1).
        DeviceCharacteristics::POWERSAFE_OVERWRITE
    }

    fn read(&mut self, buf: &mut [u8], offset: u64) -> VfsResult<usize> {
        self.note_read(self.part);
        let data = self.data.borrow();
        let Ok(start) = usize::try_from(offset) else {
            return Ok(0);
        };
        if start >= data.len() {
            return Ok(0);
        }
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        Ok(n)
    }

    fn write(&mut self, buf: &[u8], offset: u64) -> VfsResult<()> {
        self.note_write(self.part);
        self.check_writable()?;
        if self.discards_writes() {
            return Ok(());
        }
        let start = usize::try_from(offset)
            .map_err(|_| VfsError::new(VfsErrorCode::Full, "offset too large".into()))?;
        let end = start
            .checked_add(buf.len())
            .filter(|&end| end <= MAX_FILE_BYTES)
            .ok_or_else(too_large)?;
        let mut data = self.data.borrow_mut();
        if data.capacity() < end {
            // A journal grows page by page from nothing in every write
            // transaction: room for several pages at once, not a copy of
            // the whole file at each doubling.
            let more = (end - data.len()).max(MIN_GROWTH);
            data.reserve(more);
        }
        if start == data.len() {
            data.extend_from_slice(buf);
        } else {
            if data.len() < end {
                data.resize(end, 0);
            }
            data[start..end].copy_from_slice(buf);
        }
        Ok(())
    }

    fn truncate(&mut self, size: u64) -> VfsResult<()> {
        self.note_write(self.part);
        self.check_writable()?;
        if self.discards_writes() {
            return Ok(());
        }
        let size = usize::try_from(size)
            .ok()
            .filter(|&size| size <= MAX_FILE_BYTES)
            .ok_or_else(too_large)?;
        // Like ftruncate: shrinks, or extends with zeros.
        self.data.borrow_mut().resize(size, 0);
        Ok(())
    }

    fn sync(&mut self, _options: SyncOptions) -> VfsResult<()> {
        // Memory is the durable medium here; a crash is a kill, not a power cut.
        Ok(())
    }

    fn size(&self) -> VfsResult<u64> {
        self.note_read(self.part);
        Ok(self.data.borrow().len() as u64)
    }

    fn lock(&mut self, level: LockLevel) -> VfsResult<()> {
        let from = self.lock_state();
        let taken = self.lock_at(level);
        if self.main_db {
            self.note_lock(from, level, taken.is_ok());
        }
        taken
    }

    fn unlock(&mut self, level: LockLevel) -> VfsResult<()> {
        if self.main_db {
            self.note_lock(self.lock_state(), level, true);
        }
        if let Some(store) = &self.store {
            if self.main_db && !store.is_killed(self.conn) {
                store.unlock(self.handle, &self.file, level, self.data.version.get());
            }
        }
        Ok(())
    }

    fn check_reserved_lock(&self) -> VfsResult<bool> {
        self.note_read(Part::Reserved);
        self.note_read(Part::Exclusive);
        Ok(self.store.as_ref().is_some_and(|s| s.reserved(&self.file)))
    }
}

impl LockingFile {
    fn lock_at(&mut self, level: LockLevel) -> VfsResult<()> {
        match &self.store {
            // A dead connection gets no lock: it only closes, and a close
            // that got EXCLUSIVE would checkpoint a WAL database (and write
            // its shared memory, which no kill can take back).
            Some(store) if self.main_db && store.is_killed(self.conn) => Err(VfsError::new(
                VfsErrorCode::Busy,
                "the connection was killed".into(),
            )),
            Some(store) if self.main_db => {
                store.lock(self.handle, &self.file, level, self.shm.as_deref())
            }
            // SQLite locks only main databases.
            _ => Ok(()),
        }
    }
}

/// Callback-wide data: where names without a store prefix go (only the
/// `rsqlite-vfs` test suite uses that), and the platform services.
pub struct VfsData {
    default_store: Option<Rc<StoreInner>>,
    os: FixedOs,
}

/// Platform services that make runs reproducible: time is fixed, randomness
/// is a fixed sequence, and sleeping returns at once (SQLite only sleeps in a
/// busy handler, and connections here have none: BUSY goes to the scheduler).
pub struct FixedOs {
    random_state: AtomicU64,
}

/// 2026-01-01T00:00:00Z: what `datetime('now')` says inside the playground.
pub const FIXED_EPOCH_MS: i64 = 1_767_225_600_000;

impl OsCallback for FixedOs {
    fn sleep(&self, _duration: Duration) {}

    fn random(&self, buf: &mut [u8]) -> usize {
        for byte in buf.iter_mut() {
            // splitmix64
            let mut z = self
                .random_state
                .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
                .wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            *byte = (z ^ (z >> 31)) as u8;
        }
        buf.len()
    }

    fn epoch_timestamp_in_ms(&self) -> VfsResult<i64> {
        Ok(FIXED_EPOCH_MS)
    }
}

/// Whether `name` can name a file of a store: 1 to 64 ASCII letters, digits,
/// '-', '_' or '.', not starting with '.' (no path, no URI, no `..`) and not
/// ending in `-shm` (the name of a database's shared memory).
pub fn is_store_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.')
        && !is_shm_name(name)
}

/// `xFullPathname`: a plain file name, placed in the store of the connection
/// making the call (or the default store of the `rsqlite-vfs` test suite).
fn full_name(data: &VfsData, name: &str) -> VfsResult<String> {
    if !is_store_file_name(name) {
        return Err(cant_open(format!(
            "{name:?} is not a file name of this store: use 1 to 64 ASCII letters, digits, '-', '_' or '.', not starting with '.' nor ending in '-shm' (no paths, no URIs)"
        )));
    }
    let store = StoreInner::of_conn(ACTIVE_CONN.with(Cell::get))
        .or_else(|| data.default_store.clone())
        .ok_or_else(|| cant_open(format!("no connection of a store is opening {name:?}")))?;
    Ok(format!("/{}/{name}", store.name))
}

fn resolve<'n>(data: &VfsData, name: &'n str) -> Option<(Rc<StoreInner>, &'n str)> {
    match name.strip_prefix('/') {
        Some(rest) => {
            let (store, file) = rest.split_once('/')?;
            Some((StoreInner::find(store)?, file))
        }
        None => data.default_store.clone().map(|s| (s, name)),
    }
}

/// The `VfsStore` of the VFS.
pub struct LockingStore;

impl VfsStore for LockingStore {
    type File = LockingFile;
    type AppData = VfsData;

    fn open_file(data: &VfsData, request: OpenRequest<'_>) -> VfsResult<OpenedFile<LockingFile>> {
        let options = request.options;
        let Some(filename) = request.filename else {
            return Ok(OpenedFile {
                file: LockingFile::anonymous(options),
                access: options.access(),
            });
        };
        let path = filename.path();
        let (store, file) = resolve(data, path)
            .ok_or_else(|| cant_open(format!("no store on this thread holds {path:?}")))?;
        let conn = ACTIVE_CONN.with(Cell::get);
        let file = store.open(file, conn, options)?;
        Ok(OpenedFile {
            file,
            access: options.access(),
        })
    }

    fn close_file(
        _data: &VfsData,
        _name: Option<&str>,
        file: LockingFile,
        options: OpenOptions,
    ) -> VfsResult<()> {
        let Some(store) = &file.store else {
            return Ok(());
        };
        if options.delete_on_close() {
            file.note_write(file.part);
        }
        if file.shm.is_some() {
            file.note_write(Part::Data);
        }
        if file.main_db {
            // Closing releases what the handle still holds.
            file.note_lock(file.lock_state(), LockLevel::None, true);
        }
        if let Some(node) = &file.shm {
            // SQLite unmaps before it closes; closing the descriptor would
            // release the locks anyway.
            node.detach(file.handle);
        }
        store.close(file.handle);
        if options.delete_on_close() && !store.is_killed(file.conn) {
            let mut files = store.files.borrow_mut();
            if files
                .get(&file.file)
                .is_some_and(|current| Rc::ptr_eq(current, &file.data))
            {
                files.remove(&file.file);
            }
        }
        Ok(())
    }

    /// `xAccess`, as `unixAccess`: a file of zero bytes does not exist for
    /// `SQLITE_ACCESS_EXISTS` (SQLite asks so of a journal or a log, and an
    /// empty one left by `journal_mode = TRUNCATE`, or a log no transaction
    /// has been written to, is not hot); for read-write access the name is
    /// enough.
    fn access(data: &VfsData, name: &str, mode: AccessMode) -> VfsResult<bool> {
        let Some((store, file)) = resolve(data, name) else {
            return Ok(false);
        };
        let slot = store.slot(file);
        let main = footprint::database_of(file);
        if footprint::part_of(file) == Part::Log && main != file && store.reserved(main) {
            // Only a hot journal matters, and none is hot while a writer
            // holds the lock: what is read is that lock.
            footprint::read(slot, Part::Reserved);
        } else {
            footprint::read(slot, footprint::part_of(file));
        }
        let files = store.files.borrow();
        let exists = match mode {
            AccessMode::Exists => files
                .get(file)
                .is_some_and(|data| !data.borrow().is_empty()),
            AccessMode::Read | AccessMode::ReadWrite => files.contains_key(file),
        };
        Ok(exists)
    }

    fn full_pathname(data: &VfsData, name: &str) -> VfsResult<String> {
        full_name(data, name)
    }

    fn delete_file(data: &VfsData, name: &str, _sync_dir: bool) -> VfsResult<()> {
        let (store, file) = resolve(data, name).ok_or_else(|| {
            VfsError::new(
                VfsErrorCode::IoDeleteNoEntry,
                format!("no store holds {name:?}").into(),
            )
        })?;
        footprint::write(store.slot(file), footprint::part_of(file));
        store.delete(file)
    }
}

/// The I/O method table of the VFS.
pub struct LockingIo;

impl SQLiteIoMethods for LockingIo {
    type Store = LockingStore;

    /// Version 3, as the unix VFS: version 2 brings the shared-memory
    /// methods WAL mode needs, and only from version 3 on does SQLite tell
    /// the VFS the `PRAGMA mmap_size` limit. The inherited `xFetch` declines
    /// every mapping, so pages are still read with `xRead`.
    const VERSION: c_int = 3;

    /// The inherited methods, with the shared memory of [`super::shm`].
    const METHODS: sqlite3_io_methods = sqlite3_io_methods {
        iVersion: Self::VERSION,
        xClose: Some(Self::xClose),
        xRead: Some(Self::xRead),
        xWrite: Some(Self::xWrite),
        xTruncate: Some(Self::xTruncate),
        xSync: Some(Self::xSync),
        xFileSize: Some(Self::xFileSize),
        xLock: Some(Self::xLock),
        xUnlock: Some(Self::xUnlock),
        xCheckReservedLock: Some(Self::xCheckReservedLock),
        xFileControl: Some(Self::xFileControl),
        xSectorSize: Some(Self::xSectorSize),
        xDeviceCharacteristics: Some(Self::xDeviceCharacteristics),
        xShmMap: Some(shm_map),
        xShmLock: Some(shm_lock),
        xShmBarrier: Some(shm_barrier),
        xShmUnmap: Some(shm_unmap),
        xFetch: Some(Self::xFetch),
        xUnfetch: Some(Self::xUnfetch),
    };

    /// The file controls the unix VFS answers and this VFS needs:
    ///
    /// - `SQLITE_FCNTL_MMAP_SIZE`: the limit, as `unixFileControl` keeps it,
    ///   so that `PRAGMA mmap_size` answers as on real files.
    /// - `SQLITE_FCNTL_LOCKSTATE`: the handle's lock.
    ///
    /// Anything else is `SQLITE_NOTFOUND`, as before (the size hint included:
    /// this VFS does not use it; `SQLITE_FCNTL_PERSIST_WAL` unanswered is
    /// the unix VFS's default, a WAL deleted by the last connection).
    unsafe extern "C" fn xFileControl(
        file: *mut sqlite3_file,
        op: c_int,
        arg: *mut c_void,
    ) -> c_int {
        // SAFETY: SQLite passes a file this VFS opened, and the argument the
        // operation documents (sqlite3_int64*, int*).
        let file = unsafe { (*SQLiteVfsFile::from_file(file)).handle_mut::<LockingFile>() };
        match op {
            SQLITE_FCNTL_MMAP_SIZE => {
                let size = arg.cast::<i64>();
                unsafe { *size = file.set_mmap_limit(*size) };
                SQLITE_OK
            }
            SQLITE_FCNTL_LOCKSTATE => {
                let level = match file.lock_state() {
                    LockLevel::None => 0,
                    LockLevel::Shared => 1,
                    LockLevel::Reserved => 2,
                    LockLevel::Pending => 3,
                    LockLevel::Exclusive => 4,
                };
                unsafe { *arg.cast::<c_int>() = level };
                SQLITE_OK
            }
            _ => SQLITE_NOTFOUND,
        }
    }
}

/// The handle SQLite passes to a shared-memory method.
///
/// # Safety
/// `file` is a file this VFS opened and has not closed.
unsafe fn locking_file<'a>(file: *mut sqlite3_file) -> &'a mut LockingFile {
    unsafe { (*SQLiteVfsFile::from_file(file)).handle_mut::<LockingFile>() }
}

/// `xShmMap`, as `unixShmMap`: opens the database's shared memory on first
/// use (`unixOpenSharedMemory`: the DMS, and the truncation by the first
/// mapper), then hands out region `region`, extending the file if `extend`,
/// or NULL if the region does not exist yet.
unsafe extern "C" fn shm_map(
    file: *mut sqlite3_file,
    region: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    // SAFETY: SQLite passes a main-database file of this VFS and an out pointer.
    let file = unsafe { locking_file(file) };
    file.note_write(Part::Data);
    unsafe { *out = std::ptr::null_mut() };
    let (Some(store), true) = (file.store.clone(), file.main_db) else {
        return SQLITE_IOERR_SHMOPEN;
    };
    if file.shm.is_none() {
        if store.is_killed(file.conn) {
            // A dead process opens nothing.
            return SQLITE_IOERR_SHMOPEN;
        }
        let node = store
            .shm
            .borrow_mut()
            .entry(shm_name(&file.file))
            .or_default()
            .clone();
        if node.attach(file.handle).is_err() {
            return SQLITE_BUSY;
        }
        file.shm = Some(node);
    }
    let (Some(node), Ok(region), Ok(size)) = (
        file.shm.as_ref(),
        usize::try_from(region),
        usize::try_from(size),
    ) else {
        return SQLITE_IOERR_SHMMAP;
    };
    match node.map(file.handle, region, size, extend != 0) {
        Ok(Some(pointer)) => {
            unsafe { *out = pointer.cast() };
            SQLITE_OK
        }
        Ok(None) => SQLITE_OK,
        Err(_) => SQLITE_IOERR_SHMMAP,
    }
}

/// `xShmLock`, as `unixShmLock` between processes (see [`super::shm`]). A
/// dead connection's requests are refused and its unlocks do nothing: its
/// locks went with it.
unsafe extern "C" fn shm_lock(
    file: *mut sqlite3_file,
    offset: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    // SAFETY: SQLite passes a main-database file of this VFS.
    let file = unsafe { locking_file(file) };
    file.note_write(Part::Data);
    let (Some(store), Some(node)) = (&file.store, &file.shm) else {
        return SQLITE_IOERR_SHMLOCK;
    };
    let (Ok(first), Ok(n)) = (usize::try_from(offset), usize::try_from(n)) else {
        return SQLITE_IOERR_SHMLOCK;
    };
    if n == 0 || first + n > SHM_SLOTS {
        return SQLITE_IOERR_SHMLOCK;
    }
    let request = if flags & SQLITE_SHM_UNLOCK != 0 {
        ShmRequest::Unlock
    } else if flags & SQLITE_SHM_EXCLUSIVE != 0 {
        ShmRequest::LockExclusive
    } else {
        ShmRequest::LockShared
    };
    if store.is_killed(file.conn) {
        return if request == ShmRequest::Unlock {
            SQLITE_OK
        } else {
            SQLITE_BUSY
        };
    }
    match node.lock(file.handle, first, n, request) {
        Ok(()) => SQLITE_OK,
        Err(_) => SQLITE_BUSY,
    }
}

/// `xShmBarrier`: one thread runs every connection of a store, so there is
/// nothing to order.
unsafe extern "C" fn shm_barrier(_file: *mut sqlite3_file) {}

/// `xShmUnmap`, as `unixShmUnmap`: the connection's mapping and locks go;
/// with `delete` (the last connection closing after a checkpoint), the file
/// goes too once nobody maps it. A dead connection deletes nothing.
unsafe extern "C" fn shm_unmap(file: *mut sqlite3_file, delete: c_int) -> c_int {
    // SAFETY: SQLite passes a main-database file of this VFS.
    let file = unsafe { locking_file(file) };
    file.note_write(Part::Data);
    let Some(node) = file.shm.take() else {
        return SQLITE_OK;
    };
    node.detach(file.handle);
    if let Some(store) = &file.store {
        if delete != 0 && !store.is_killed(file.conn) && !node.is_mapped() {
            let mut shm = store.shm.borrow_mut();
            let name = shm_name(&file.file);
            if shm
                .get(&name)
                .is_some_and(|current| Rc::ptr_eq(current, &node))
            {
                shm.remove(&name);
            }
        }
    }
    SQLITE_OK
}

/// The VFS itself.
pub struct LockingVfs;

impl SQLiteVfs<LockingIo> for LockingVfs {
    type Os = FixedOs;

    fn os(data: &VfsData) -> &FixedOs {
        &data.os
    }
}

fn fixed_os() -> FixedOs {
    FixedOs {
        random_state: AtomicU64::new(0x5EED),
    }
}

/// Registers the VFS with SQLite once per process.
pub(crate) fn ensure_registered() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            // SQLite's own allocations, every connection together, are
            // bounded: past the limit an allocation fails as SQLITE_NOMEM,
            // a sentence, before the module's memory runs out (wasm32 has
            // 4 GiB, and a trap would lose every object of the module).
            // SAFETY: a plain call that only sets a limit.
            unsafe {
                rusqlite::ffi::sqlite3_hard_heap_limit64(SQLITE_HEAP_LIMIT);
            }
            let data = VfsData {
                default_store: None,
                os: fixed_os(),
            };
            // SAFETY: the method table, file layout and app data all come from
            // the same rsqlite-vfs trait implementations; the registration is
            // kept for the life of the process (into_raw). The app data holds
            // no store (default_store is None), so no thread-local state is
            // reached through it from another thread.
            unsafe { rsqlite_vfs::register_vfs::<LockingIo, LockingVfs>(VFS_NAME, data, false) }
                .map(|registration| {
                    registration.into_raw();
                })
                .map_err(|e| format!("cannot register the {VFS_NAME} VFS: {e}"))
        })
        .clone()
}

/// Runs `rsqlite-vfs`'s reusable VFS test suite against this VFS's store,
/// in a fresh store of its own.
///
/// The suite asks `access(EXISTS)` of a file it has just created and not yet
/// written, and expects `true`; this VFS answers as `unixAccess` does (a file
/// of zero bytes does not exist for that question), which the differential
/// suite checks against real files. The suite therefore runs on
/// [`NamesAsStored`], the same store whose `EXISTS` asks only for the name:
/// every other callback is this VFS's own.
pub fn run_rsqlite_vfs_test_suite() -> Result<(), String> {
    let store = StoreInner::create("vfs-test-suite");
    let data = VfsAppData::new(VfsData {
        default_store: Some(store),
        os: fixed_os(),
    });
    rsqlite_vfs::test_suite::test_vfs_store::<NamesAsStored>(data).map_err(|e| e.to_string())
}

/// [`LockingStore`] with `access(EXISTS)` answering whether the name is
/// stored, as the `rsqlite-vfs` test suite expects (see
/// [`run_rsqlite_vfs_test_suite`]).
struct NamesAsStored;

impl VfsStore for NamesAsStored {
    type File = LockingFile;
    type AppData = VfsData;

    fn open_file(data: &VfsData, request: OpenRequest<'_>) -> VfsResult<OpenedFile<LockingFile>> {
        LockingStore::open_file(data, request)
    }

    fn close_file(
        data: &VfsData,
        name: Option<&str>,
        file: LockingFile,
        options: OpenOptions,
    ) -> VfsResult<()> {
        LockingStore::close_file(data, name, file, options)
    }

    fn access(data: &VfsData, name: &str, mode: AccessMode) -> VfsResult<bool> {
        let mode = match mode {
            AccessMode::Exists => AccessMode::ReadWrite,
            other => other,
        };
        LockingStore::access(data, name, mode)
    }

    fn full_pathname(data: &VfsData, name: &str) -> VfsResult<String> {
        LockingStore::full_pathname(data, name)
    }

    fn delete_file(data: &VfsData, name: &str, sync_dir: bool) -> VfsResult<()> {
        LockingStore::delete_file(data, name, sync_dir)
    }
}
