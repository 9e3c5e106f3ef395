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
//!
//! This file is the VFS's face: its name and registration, and the names the
//! rest of the crate uses, re-exported from the files that hold them:
//! `vfs_bytes.rs` (a file's bytes, their versions and hashes),
//! `vfs_durable.rs` (what is synced, which a power loss keeps),
//! `vfs_store.rs` (a store's shared state and the thread's registry of
//! stores), `vfs_snapshot.rs` (a store's files as a whole), `vfs_file.rs`
//! (a file handle: reads, writes, locks), `vfs_shm.rs` (the shared-memory
//! methods) and `vfs_methods.rs` (the callbacks SQLite calls on the VFS).

use std::sync::OnceLock;

use rsqlite_vfs::{
    AccessMode, OpenOptions, OpenRequest, OpenedFile, SQLiteVfs, VfsAppData, VfsResult, VfsStore,
};

use super::vfs_methods::fixed_os;

pub(crate) use super::vfs_bytes::fixed_hasher;
pub(crate) use super::vfs_bytes::Image;
pub(crate) use super::vfs_durable::DurableImage;
pub(crate) use super::vfs_file::{LockingFile, MAX_FILE_BYTES};
pub(crate) use super::vfs_methods::{
    is_store_file_name, FixedOs, LockingIo, LockingStore, VfsData,
};
pub(crate) use super::vfs_store::ConnId;
pub(crate) use super::vfs_store::{next_id, ActiveConn, Pooled, StoreInner};

/// The name of the VFS, which connections open their database with.
pub(crate) const VFS_NAME: &str = "replayground";

/// The most bytes SQLite may have allocated at once, every connection of the
/// process together (`sqlite3_hard_heap_limit64`).
pub(crate) const SQLITE_HEAP_LIMIT: i64 = 1 << 30;

/// The VFS itself.
pub(crate) struct LockingVfs;

impl SQLiteVfs<LockingIo> for LockingVfs {
    type Os = FixedOs;

    fn os(data: &VfsData) -> &FixedOs {
        &data.os
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
