//! The shared-memory methods of the VFS (`xShmMap`, `xShmLock`,
//! `xShmBarrier`, `xShmUnmap`), which WAL mode needs: each hands the call to
//! the database's [`ShmNode`](super::shm::ShmNode) (see [`super::shm`]), as
//! the unix VFS does between processes.

use std::ffi::{c_int, c_void};
use std::rc::Rc;

use rsqlite_vfs::ffi::{
    sqlite3_file, SQLITE_BUSY, SQLITE_IOERR_SHMLOCK, SQLITE_IOERR_SHMMAP, SQLITE_IOERR_SHMOPEN,
    SQLITE_OK, SQLITE_SHM_EXCLUSIVE, SQLITE_SHM_UNLOCK,
};
use rsqlite_vfs::SQLiteVfsFile;

use super::footprint::Part;
use super::shm::{ShmRequest, SLOTS as SHM_SLOTS};
use super::vfs_file::LockingFile;
use super::vfs_store::shm_name;

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
pub(super) unsafe extern "C" fn shm_map(
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
pub(super) unsafe extern "C" fn shm_lock(
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
pub(super) unsafe extern "C" fn shm_barrier(_file: *mut sqlite3_file) {}

/// `xShmUnmap`, as `unixShmUnmap`: the connection's mapping and locks go;
/// with `delete` (the last connection closing after a checkpoint), the file
/// goes too once nobody maps it. A dead connection deletes nothing.
pub(super) unsafe extern "C" fn shm_unmap(file: *mut sqlite3_file, delete: c_int) -> c_int {
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
