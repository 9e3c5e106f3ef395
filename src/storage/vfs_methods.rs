//! What SQLite calls on the VFS: opening, closing, asking after and
//! deleting files by name ([`LockingStore`]), the I/O method table and its
//! file controls ([`LockingIo`]), where a name goes, and the platform
//! services that make runs reproducible ([`FixedOs`]).

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rsqlite_vfs::ffi::{
    sqlite3_file, sqlite3_io_methods, SQLITE_FCNTL_LOCKSTATE, SQLITE_FCNTL_MMAP_SIZE,
    SQLITE_NOTFOUND, SQLITE_OK,
};
use rsqlite_vfs::{
    AccessMode, LockLevel, OpenOptions, OpenRequest, OpenedFile, OsCallback, SQLiteIoMethods,
    SQLiteVfsFile, VfsError, VfsErrorCode, VfsResult, VfsStore,
};

use super::footprint::{self, Part};
use super::vfs_file::{cant_open, LockingFile};
use super::vfs_shm::{shm_barrier, shm_lock, shm_map, shm_unmap};
use super::vfs_store::{is_shm_name, StoreInner, ACTIVE_CONN};

/// Callback-wide data: where names without a store prefix go (only the
/// `rsqlite-vfs` test suite uses that), and the platform services.
pub(crate) struct VfsData {
    pub(super) default_store: Option<Rc<StoreInner>>,
    pub(super) os: FixedOs,
}

/// Platform services that make runs reproducible: time is fixed, randomness
/// is a fixed sequence, and sleeping returns at once (SQLite only sleeps in a
/// busy handler, and connections here have none: BUSY goes to the scheduler).
pub(crate) struct FixedOs {
    random_state: AtomicU64,
}

/// 2026-01-01T00:00:00Z: what `datetime('now')` says inside the playground.
pub(crate) const FIXED_EPOCH_MS: i64 = 1_767_225_600_000;

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

pub(super) fn fixed_os() -> FixedOs {
    FixedOs {
        random_state: AtomicU64::new(0x5EED),
    }
}

/// Whether `name` can name a file of a store: 1 to 64 ASCII letters, digits,
/// '-', '_' or '.', not starting with '.' (no path, no URI, no `..`) and not
/// ending in `-shm` (the name of a database's shared memory).
pub(crate) fn is_store_file_name(name: &str) -> bool {
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
pub(crate) struct LockingStore;

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
                drop(files);
                store.log_io("delete", &file.file, false);
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

    fn delete_file(data: &VfsData, name: &str, sync_dir: bool) -> VfsResult<()> {
        let (store, file) = resolve(data, name).ok_or_else(|| {
            VfsError::new(
                VfsErrorCode::IoDeleteNoEntry,
                format!("no store holds {name:?}").into(),
            )
        })?;
        footprint::write(store.slot(file), footprint::part_of(file));
        store.delete(file, sync_dir)
    }
}

/// The I/O method table of the VFS.
pub(crate) struct LockingIo;

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
