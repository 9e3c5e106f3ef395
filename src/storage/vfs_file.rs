//! A file handle of the VFS ([`LockingFile`]): opened on a store's file, it
//! reads and writes the file's bytes (a dead connection's writes vanish),
//! takes SQLite's locks on a main database, and notes each call in the
//! step's footprint.

use std::rc::Rc;

use rsqlite_vfs::{
    DeviceCharacteristics, FileKind, LockLevel, OpenAccess, OpenOptions, SectorSize, SyncOptions,
    VfsError, VfsErrorCode, VfsFile, VfsResult,
};

use super::faults::IoCall;
use super::footprint::{self, Part};
use super::shm::ShmNode;
use super::vfs_bytes::FileData;
use super::vfs_store::{next_id, ConnId, HandleState, StoreInner};

/// The most bytes one file of a store (a database, its journal, its log)
/// may hold: a write past it is SQLite's `SQLITE_FULL`, "database or disk
/// is full", an error a scenario sees as it would on a full disk.
pub(crate) const MAX_FILE_BYTES: usize = 64 << 20;

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

pub(super) fn cant_open(message: String) -> VfsError {
    VfsError::new(VfsErrorCode::CantOpen, message.into())
}

/// A file handle of the VFS.
pub(crate) struct LockingFile {
    /// The owning store; `None` for an anonymous temporary file.
    pub(super) store: Option<Rc<StoreInner>>,
    pub(super) data: FileData,
    pub(super) handle: u64,
    pub(super) file: String,
    pub(super) conn: ConnId,
    pub(super) main_db: bool,
    read_only: bool,
    /// The memory-mapping limit SQLite set (`SQLITE_FCNTL_MMAP_SIZE`). Nothing
    /// is mapped (`xFetch` declines); it is kept to answer as the unix VFS does.
    mmap_limit: i64,
    /// The WAL shared memory this handle (of a main database) maps.
    pub(super) shm: Option<Rc<ShmNode>>,
    /// The footprint slot of its database (`None` for a temporary file).
    slot: Option<u8>,
    /// Which part of the database its bytes are.
    pub(super) part: Part,
    /// Whether its first sync also syncs the directory, as the unix VFS
    /// does for a main journal, a super-journal or a WAL opened with
    /// `SQLITE_OPEN_CREATE` (`unixOpen`'s `syncDir`).
    dir_sync: bool,
}

/// `SQLITE_MAX_MMAP_SIZE` on 64-bit Linux (the unix VFS's ceiling for
/// `PRAGMA mmap_size`); both builds are compiled with it.
pub(crate) const MAX_MMAP_SIZE: i64 = 0x7fff_0000;

/// Opening a file of a store hands out a handle of it.
impl StoreInner {
    pub(super) fn open(
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
            dir_sync: options.create()
                && matches!(
                    options.kind(),
                    Some(FileKind::MainJournal | FileKind::SuperJournal | FileKind::Wal)
                ),
        })
    }
}

impl LockingFile {
    fn note_read(&self, part: Part) {
        if let Some(slot) = self.slot {
            footprint::read(slot, part);
        }
    }

    pub(super) fn note_write(&self, part: Part) {
        if let Some(slot) = self.slot {
            footprint::write(slot, part);
        }
    }

    /// Notes a lock call: `from` the level held before, `to` the level
    /// asked for (or lowered to), `granted` its answer. See
    /// [`footprint`] for which part each call reads or writes.
    pub(super) fn note_lock(&self, from: LockLevel, to: LockLevel, granted: bool) {
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

    pub(super) fn anonymous(options: OpenOptions) -> Self {
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
            dir_sync: false,
        }
    }

    /// The lock this handle holds (`SQLITE_FCNTL_LOCKSTATE`).
    pub(super) fn lock_state(&self) -> LockLevel {
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
    pub(super) fn set_mmap_limit(&mut self, requested: i64) -> i64 {
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
        if let Some(store) = &self.store {
            let grows = end > self.data.borrow().len();
            if let Some(error) = store.fault(&self.file, IoCall::Write, grows) {
                return Err(error);
            }
        }
        if let Some(store) = &self.store {
            store.log_io("write", &self.file, false);
        }
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
        if let Some(store) = &self.store {
            store.log_io("truncate", &self.file, false);
        }
        // Like ftruncate: shrinks, or extends with zeros.
        self.data.borrow_mut().resize(size, 0);
        Ok(())
    }

    /// What is written is durable (see `vfs_durable.rs`); the first sync of
    /// a journal or log this handle created syncs the directory too.
    fn sync(&mut self, _options: SyncOptions) -> VfsResult<()> {
        if self.discards_writes() {
            return Ok(());
        }
        if let Some(store) = &self.store {
            if let Some(error) = store.at_sync(self.conn) {
                return Err(error);
            }
            if let Some(error) = store.fault(&self.file, IoCall::Sync, false) {
                return Err(error);
            }
            store.sync(&self.file, &self.data, std::mem::take(&mut self.dir_sync));
        }
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
