//! A counting shim over SQLite's unix VFS, for `sql-worker --io-log`: every
//! file operation that reaches the disk (writes, syncs, truncations,
//! deletions) is noted as the replayground VFS notes it
//! (`Store::take_io_log`), so that the differential test compares what
//! real SQLite asks of real files with what it asks of the store.
//!
//! The shim is registered as the default VFS under the name `io-log`. Each
//! file it opens is the unix VFS's own, allocated beside the shim's handle;
//! every method is passed on to it. Whether a sync also syncs the directory
//! is what `unixOpen` decides (`syncDir`: a main journal, a super-journal or
//! a WAL opened with `SQLITE_OPEN_CREATE`, at its first sync), which the
//! unix VFS does inside `xSync`, out of a shim's sight.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use std::sync::Mutex;

use rusqlite::ffi;

/// The operations noted since the last [`take`].
static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The operations noted since the last call.
pub(super) fn take() -> Vec<String> {
    std::mem::take(&mut *LOG.lock().unwrap_or_else(|e| e.into_inner()))
}

fn note(op: &str, file: &str, dir: bool) {
    let event = if dir {
        format!("{op} {file} +dir")
    } else {
        format!("{op} {file}")
    };
    let mut log = LOG.lock().unwrap_or_else(|e| e.into_inner());
    // A run of writes to one file is one event, as the store notes them.
    if op == "write" && log.last() == Some(&event) {
        return;
    }
    log.push(event);
}

/// A file of the shim: SQLite's `sqlite3_file` first, then the unix file
/// it passes every call on to.
#[repr(C)]
struct ShimFile {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    /// The file's name without its directory; null for a temporary file,
    /// which is not noted.
    name: *mut String,
    /// Whether its next sync also syncs the directory.
    dir_sync: bool,
}

/// The unix VFS, found once at registration.
static UNIX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

fn unix() -> *mut ffi::sqlite3_vfs {
    *UNIX.get().expect("registered") as *mut ffi::sqlite3_vfs
}

/// Registers the shim as the default VFS.
pub(super) fn register() -> Result<(), String> {
    // SAFETY: plain lookups and one registration of a VFS that lives as
    // long as the process (leaked), filled from the unix VFS's own fields.
    unsafe {
        let real = ffi::sqlite3_vfs_find(c"unix".as_ptr());
        if real.is_null() {
            return Err("no unix VFS".into());
        }
        UNIX.get_or_init(|| real as usize);
        let vfs = Box::leak(Box::new(ffi::sqlite3_vfs {
            iVersion: 2,
            szOsFile: std::mem::size_of::<ShimFile>() as c_int,
            mxPathname: (*real).mxPathname,
            pNext: ptr::null_mut(),
            zName: c"io-log".as_ptr(),
            pAppData: ptr::null_mut(),
            xOpen: Some(open),
            xDelete: Some(delete),
            xAccess: Some(access),
            xFullPathname: Some(full_pathname),
            xDlOpen: None,
            xDlError: None,
            xDlSym: None,
            xDlClose: None,
            xRandomness: Some(randomness),
            xSleep: Some(sleep),
            xCurrentTime: Some(current_time),
            xGetLastError: Some(last_error),
            xCurrentTimeInt64: Some(current_time_64),
            xSetSystemCall: None,
            xGetSystemCall: None,
            xNextSystemCall: None,
        }));
        match ffi::sqlite3_vfs_register(vfs, 1) {
            ffi::SQLITE_OK => Ok(()),
            rc => Err(format!("sqlite3_vfs_register: {rc}")),
        }
    }
}

/// The part of `path` after its last `/`.
fn base_name(path: *const c_char) -> Option<String> {
    if path.is_null() {
        return None;
    }
    // SAFETY: SQLite passes a NUL-terminated name.
    let path = unsafe { CStr::from_ptr(path) }.to_string_lossy();
    Some(path.rsplit('/').next().unwrap_or(&path).to_string())
}

unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let unix = unix();
    // SAFETY: SQLite gives `file` szOsFile bytes; the unix file gets its own.
    unsafe {
        let real = ffi::sqlite3_malloc((*unix).szOsFile).cast::<ffi::sqlite3_file>();
        if real.is_null() {
            (*file).pMethods = ptr::null();
            return ffi::SQLITE_NOMEM;
        }
        ptr::write_bytes(real.cast::<u8>(), 0, (*unix).szOsFile as usize);
        let rc = ((*unix).xOpen.expect("unix xOpen"))(unix, name, real, flags, out_flags);
        if rc != ffi::SQLITE_OK {
            ffi::sqlite3_free(real.cast());
            (*file).pMethods = ptr::null();
            return rc;
        }
        let kind = flags & 0x0FFF_FF00;
        let created = flags & ffi::SQLITE_OPEN_CREATE != 0;
        let dir_sync = created
            && matches!(
                kind,
                ffi::SQLITE_OPEN_MAIN_JOURNAL
                    | ffi::SQLITE_OPEN_SUPER_JOURNAL
                    | ffi::SQLITE_OPEN_WAL
            );
        let name = match base_name(name) {
            Some(name) if flags & ffi::SQLITE_OPEN_DELETEONCLOSE == 0 => {
                Box::into_raw(Box::new(name))
            }
            _ => ptr::null_mut(),
        };
        ptr::write(
            file.cast::<ShimFile>(),
            ShimFile {
                base: ffi::sqlite3_file { pMethods: &METHODS },
                real,
                name,
                dir_sync,
            },
        );
        ffi::SQLITE_OK
    }
}

unsafe extern "C" fn delete(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    let unix = unix();
    // SAFETY: passed on as SQLite gave it.
    let rc = unsafe { ((*unix).xDelete.expect("unix xDelete"))(unix, name, sync_dir) };
    if rc == ffi::SQLITE_OK {
        if let Some(name) = base_name(name) {
            note("delete", &name, sync_dir != 0);
        }
    }
    rc
}

unsafe extern "C" fn access(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    flags: c_int,
    out: *mut c_int,
) -> c_int {
    let unix = unix();
    unsafe { ((*unix).xAccess.expect("unix xAccess"))(unix, name, flags, out) }
}

unsafe extern "C" fn full_pathname(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    n: c_int,
    out: *mut c_char,
) -> c_int {
    let unix = unix();
    unsafe { ((*unix).xFullPathname.expect("unix xFullPathname"))(unix, name, n, out) }
}

unsafe extern "C" fn randomness(_vfs: *mut ffi::sqlite3_vfs, n: c_int, out: *mut c_char) -> c_int {
    let unix = unix();
    unsafe { ((*unix).xRandomness.expect("unix xRandomness"))(unix, n, out) }
}

unsafe extern "C" fn sleep(_vfs: *mut ffi::sqlite3_vfs, micros: c_int) -> c_int {
    let unix = unix();
    unsafe { ((*unix).xSleep.expect("unix xSleep"))(unix, micros) }
}

unsafe extern "C" fn current_time(_vfs: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
    let unix = unix();
    unsafe { ((*unix).xCurrentTime.expect("unix xCurrentTime"))(unix, out) }
}

unsafe extern "C" fn last_error(_vfs: *mut ffi::sqlite3_vfs, n: c_int, out: *mut c_char) -> c_int {
    let unix = unix();
    unsafe { ((*unix).xGetLastError.expect("unix xGetLastError"))(unix, n, out) }
}

unsafe extern "C" fn current_time_64(_vfs: *mut ffi::sqlite3_vfs, out: *mut i64) -> c_int {
    let unix = unix();
    unsafe { ((*unix).xCurrentTimeInt64.expect("unix xCurrentTimeInt64"))(unix, out) }
}

/// The shim file behind `file`, and the unix file's methods.
///
/// # Safety
/// `file` must be a file [`open`] opened and not yet closed.
unsafe fn parts<'a>(
    file: *mut ffi::sqlite3_file,
) -> (
    &'a mut ShimFile,
    *mut ffi::sqlite3_file,
    &'a ffi::sqlite3_io_methods,
) {
    let shim = unsafe { &mut *file.cast::<ShimFile>() };
    let real = shim.real;
    let methods = unsafe { &*(*real).pMethods };
    (shim, real, methods)
}

fn name_of(shim: &ShimFile) -> Option<&str> {
    // SAFETY: set at open, freed only at close.
    (!shim.name.is_null()).then(|| unsafe { (*shim.name).as_str() })
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    unsafe {
        let (shim, real, methods) = parts(file);
        let rc = (methods.xClose.expect("xClose"))(real);
        ffi::sqlite3_free(real.cast());
        if !shim.name.is_null() {
            drop(Box::from_raw(shim.name));
            shim.name = ptr::null_mut();
        }
        rc
    }
}

unsafe extern "C" fn read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    n: c_int,
    at: i64,
) -> c_int {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods.xRead.expect("xRead"))(real, buf, n, at)
    }
}

unsafe extern "C" fn write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    n: c_int,
    at: i64,
) -> c_int {
    unsafe {
        let (shim, real, methods) = parts(file);
        if let Some(name) = name_of(shim) {
            note("write", name, false);
        }
        (methods.xWrite.expect("xWrite"))(real, buf, n, at)
    }
}

unsafe extern "C" fn truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    unsafe {
        let (shim, real, methods) = parts(file);
        if let Some(name) = name_of(shim) {
            note("truncate", name, false);
        }
        (methods.xTruncate.expect("xTruncate"))(real, size)
    }
}

unsafe extern "C" fn sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    unsafe {
        let (shim, real, methods) = parts(file);
        let dir = std::mem::take(&mut shim.dir_sync);
        if let Some(name) = name_of(shim) {
            note("sync", name, dir);
        }
        (methods.xSync.expect("xSync"))(real, flags)
    }
}

unsafe extern "C" fn file_size(file: *mut ffi::sqlite3_file, out: *mut i64) -> c_int {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods.xFileSize.expect("xFileSize"))(real, out)
    }
}

unsafe extern "C" fn lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods.xLock.expect("xLock"))(real, level)
    }
}

unsafe extern "C" fn unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods.xUnlock.expect("xUnlock"))(real, level)
    }
}

unsafe extern "C" fn check_reserved(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods.xCheckReservedLock.expect("xCheckReservedLock"))(real, out)
    }
}

unsafe extern "C" fn file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods.xFileControl.expect("xFileControl"))(real, op, arg)
    }
}

unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods.xSectorSize.expect("xSectorSize"))(real)
    }
}

unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods
            .xDeviceCharacteristics
            .expect("xDeviceCharacteristics"))(real)
    }
}

unsafe extern "C" fn shm_map(
    file: *mut ffi::sqlite3_file,
    region: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods.xShmMap.expect("xShmMap"))(real, region, size, extend, out)
    }
}

unsafe extern "C" fn shm_lock(
    file: *mut ffi::sqlite3_file,
    offset: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods.xShmLock.expect("xShmLock"))(real, offset, n, flags)
    }
}

unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods.xShmBarrier.expect("xShmBarrier"))(real)
    }
}

unsafe extern "C" fn shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods.xShmUnmap.expect("xShmUnmap"))(real, delete)
    }
}

unsafe extern "C" fn fetch(
    file: *mut ffi::sqlite3_file,
    at: i64,
    n: c_int,
    out: *mut *mut c_void,
) -> c_int {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods.xFetch.expect("xFetch"))(real, at, n, out)
    }
}

unsafe extern "C" fn unfetch(file: *mut ffi::sqlite3_file, at: i64, page: *mut c_void) -> c_int {
    unsafe {
        let (_, real, methods) = parts(file);
        (methods.xUnfetch.expect("xUnfetch"))(real, at, page)
    }
}

/// The shim's methods: version 3, as the unix VFS's.
static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: Some(fetch),
    xUnfetch: Some(unfetch),
};
