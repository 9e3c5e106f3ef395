//! What survives a power loss: a store that keeps durability holds, beside
//! the bytes its files have been written, what is on disk — each file's
//! bytes as of its last `xSync`, and the directory (which names lead to
//! which files) as of its last sync — as a POSIX file system keeps them and
//! SQLite's unix VFS asks for them:
//!
//! - `xSync` makes a file's bytes durable. The first sync of a file opened
//!   with `SQLITE_OPEN_CREATE` as a main journal, a super-journal or a WAL
//!   also syncs the directory (`unixOpen`'s `syncDir`): the file's name is
//!   then durable, with every other name of the directory as it is now.
//!   Each database (with its journal and log) has a directory of its own:
//!   two databases may stand for two machines.
//! - `xDelete` removes a name; it is durable only if SQLite asks for the
//!   directory to be synced (`synchronous = EXTRA` after a commit in
//!   rollback mode), or when a later sync of the directory takes it along.
//!   A journal deleted but not yet durably so comes back after a power loss,
//!   with what was synced of it.
//! - A power loss puts every file of the databases it reaches back to what
//!   is durable: the names of the durable directory, each with its file's
//!   synced bytes (a file created and never synced comes back empty), and
//!   their shared memory gone. With torn writes, each sector written since
//!   the last sync is independently kept or lost, as SQLite's own crash
//!   tests (`test6.c`) do, 512 bytes at a time; bytes never written since
//!   are left alone (`SQLITE_IOCAP_POWERSAFE_OVERWRITE`, which this VFS
//!   reports).
//!
//! A file is an inode here: its [`FileCell`]. The directory maps names to
//! cells, and the durable directory may still hold a cell whose name was
//! deleted since, or not yet hold a new one.
//!
//! Durability is kept only once asked for ([`StoreInner::keep_durability`]):
//! from then on what is on disk is part of the store's state (hashed and
//! snapshotted with it). Until then a sync costs nothing, as before.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::footprint;
use super::vfs_bytes::{FileCell, FileData, Image};
use super::vfs_store::{ConnId, StoreInner};

/// The bytes a torn write tears by: 512, the smallest sector a disk writes
/// at once and SQLite's smallest page. The VFS reports 4096-byte sectors
/// (as the unix VFS does) with `SQLITE_IOCAP_POWERSAFE_OVERWRITE`, which
/// promises only that a power loss leaves the bytes outside a write alone:
/// SQLite assumes nothing atomic within a sector (no `SQLITE_IOCAP_ATOMIC*`),
/// so a write may tear anywhere inside it.
const TEAR_BYTES: usize = 512;

/// What is durable of a store's files at one moment, as a snapshot keeps it.
#[derive(Debug, Clone, Default)]
pub(crate) struct DurableImage {
    /// Each file's synced bytes, by its name now (`None`: never synced),
    /// in name order.
    synced: Vec<(String, Option<Rc<Image>>)>,
    /// The durable directory: each name, and the file it leads to, in name
    /// order.
    dir: Vec<(String, DirEntry)>,
}

/// Where a name of the durable directory leads.
#[derive(Debug, Clone)]
enum DirEntry {
    /// To the file that has the name now.
    Current,
    /// To a file deleted since (or replaced by another of the same name):
    /// the bytes it was written last and its synced bytes (a torn power
    /// loss keeps some sectors of each).
    Gone {
        written: Rc<Image>,
        synced: Option<Rc<Image>>,
    },
}

/// One file operation that reaches the disk, as SQLite's unix VFS would make
/// it: what [`StoreInner::take_io_log`] lists, and what the differential
/// test compares with real files.
pub(crate) fn io_event(op: &str, file: &str, dir_sync: bool) -> String {
    if dir_sync {
        format!("{op} {file} +dir")
    } else {
        format!("{op} {file}")
    }
}

impl StoreInner {
    /// From now on, keeps what is durable apart from what is written; what
    /// the files hold now is all durable.
    pub(crate) fn keep_durability(&self) {
        // Inserted one by one (here and below), as elsewhere in the store:
        // cloning or collecting a map compiles code of its own for each
        // kind of entry, which the browser downloads.
        let mut dir = BTreeMap::new();
        for (name, data) in self.files.borrow().iter() {
            let image = data.image();
            *data.durable.borrow_mut() = Some(image);
            dir.insert(name.clone(), Rc::clone(data));
        }
        *self.durable_dir.borrow_mut() = Some(dir);
    }

    /// Whether it keeps durability.
    pub(crate) fn keeps_durability(&self) -> bool {
        self.durable_dir.borrow().is_some()
    }

    /// `xSync` of a file: its bytes are durable; with `dir`, its directory
    /// too.
    pub(super) fn sync(&self, file: &str, data: &FileData, dir: bool) {
        self.log_io("sync", file, dir);
        if !self.keeps_durability() {
            return;
        }
        let image = data.image();
        *data.durable.borrow_mut() = Some(image);
        if dir {
            self.sync_dir(file);
        }
    }

    /// The directory of `file` is synced: the names of its database (the
    /// database, its journal, its log) as they are now are durable. Each
    /// database has a directory of its own, so that syncing one machine's
    /// directory never makes another's deletions durable.
    pub(super) fn sync_dir(&self, file: &str) {
        let mut durable = self.durable_dir.borrow_mut();
        let Some(dir) = durable.as_mut() else {
            return;
        };
        let db = footprint::database_of(file);
        dir.retain(|name, _| footprint::database_of(name) != db);
        for (name, data) in self.files.borrow().iter() {
            if footprint::database_of(name) == db {
                dir.insert(name.clone(), Rc::clone(data));
            }
        }
    }

    /// Notes a file operation that reaches the disk, if the store logs them.
    pub(super) fn log_io(&self, op: &str, file: &str, dir: bool) {
        if let Some(log) = self.io_log.borrow_mut().as_mut() {
            let event = io_event(op, file, dir);
            // A run of writes to one file is one event: how SQLite splits
            // them is not what durability depends on.
            if op == "write" && log.last() == Some(&event) {
                return;
            }
            log.push(event);
        }
    }

    /// Starts (or stops) logging file operations.
    pub(crate) fn set_io_log(&self, on: bool) {
        *self.io_log.borrow_mut() = on.then(Vec::new);
    }

    /// The file operations logged since the last call.
    pub(crate) fn take_io_log(&self) -> Vec<String> {
        self.io_log
            .borrow_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The power goes out on the machine holding `databases` (all of them
    /// if empty): every connection with a file of theirs open dies (its
    /// locks vanish, nothing it writes from now on lands), and their files
    /// are put back to what is durable. With `torn`, each sector written
    /// since the file's last sync is kept if `torn` says so, else lost.
    /// Returns the connections that died. Refused (`None`) unless the store
    /// keeps durability.
    pub(crate) fn power_loss(
        &self,
        databases: &[String],
        mut torn: Option<&mut dyn FnMut() -> bool>,
    ) -> Option<Vec<ConnId>> {
        if !self.keeps_durability() {
            return None;
        }
        footprint::global();
        self.power_losses.set(self.power_losses.get() + 1);
        let reached = |name: &str| {
            databases.is_empty()
                || databases
                    .iter()
                    .any(|db| footprint::database_of(name) == db)
        };
        let mut dead: Vec<ConnId> = Vec::new();
        for handle in self.handles.borrow().values() {
            if reached(&handle.file) && !dead.contains(&handle.conn) {
                dead.push(handle.conn);
            }
        }
        for &conn in &dead {
            self.kill(conn);
        }
        let idle: Vec<_> = {
            let mut pool = self.pool.borrow_mut();
            let (gone, kept) = pool.drain(..).partition(|p| dead.contains(&p.id));
            *pool = kept;
            gone
        };
        {
            let mut files = self.files.borrow_mut();
            let mut durable = self.durable_dir.borrow_mut();
            let dir = durable.as_mut()?;
            files.retain(|name, _| !reached(name));
            for (name, cell) in dir.iter_mut().filter(|(name, _)| reached(name)) {
                let synced = cell.durable.borrow().clone();
                let left = match (torn.as_deref_mut(), &synced) {
                    (Some(keep), _) => tear(&cell.borrow(), synced.as_deref(), keep),
                    (None, Some(image)) => Rc::clone(image),
                    (None, None) => Rc::new(Image::default()),
                };
                let fresh: FileData = Rc::new(FileCell::from_image(&left));
                *fresh.durable.borrow_mut() = Some(left);
                files.insert(name.clone(), Rc::clone(&fresh));
                *cell = fresh;
            }
            self.shm.borrow_mut().retain(|name, _| !reached(name));
            self.locks.borrow_mut().retain(|name, _| !reached(name));
        }
        // Closed later: this may run inside another connection's call.
        self.graveyard.borrow_mut().extend(idle);
        Some(dead)
    }

    /// The files a power loss now would leave (`None` unless durability is
    /// kept): each name of the durable directory with its synced bytes.
    pub(crate) fn durable_files(&self) -> Option<BTreeMap<String, Rc<Image>>> {
        let durable = self.durable_dir.borrow();
        let dir = durable.as_ref()?;
        let mut files = BTreeMap::new();
        for (name, cell) in dir {
            let image = cell.durable.borrow().clone();
            files.insert(name.clone(), image.unwrap_or_default());
        }
        Some(files)
    }

    /// What is durable now, for a snapshot (`None` unless kept).
    pub(crate) fn durable_image(&self) -> Option<DurableImage> {
        let durable = self.durable_dir.borrow();
        let dir = durable.as_ref()?;
        let files = self.files.borrow();
        let mut image = DurableImage::default();
        for (name, data) in files.iter() {
            image
                .synced
                .push((name.clone(), data.durable.borrow().clone()));
        }
        for (name, cell) in dir {
            let entry = match files.get(name) {
                Some(current) if Rc::ptr_eq(current, cell) => DirEntry::Current,
                _ => DirEntry::Gone {
                    written: cell.image(),
                    synced: cell.durable.borrow().clone(),
                },
            };
            image.dir.push((name.clone(), entry));
        }
        Some(image)
    }

    /// Puts what is durable back to `image` (the files must be put back
    /// first); with no image, everything the files hold is durable. A file
    /// the image does not know (one a rewind kept) keeps what it had.
    pub(crate) fn restore_durable(&self, image: Option<&DurableImage>) {
        if !self.keeps_durability() {
            return;
        }
        let Some(image) = image else {
            return self.keep_durability();
        };
        let files = self.files.borrow();
        for (name, synced) in &image.synced {
            if let Some(data) = files.get(name) {
                *data.durable.borrow_mut() = synced.clone();
            }
        }
        let mut dir = BTreeMap::new();
        for (name, entry) in &image.dir {
            let cell = match entry {
                DirEntry::Current => match files.get(name) {
                    Some(cell) => Rc::clone(cell),
                    None => continue,
                },
                DirEntry::Gone { written, synced } => {
                    let cell = FileCell::from_image(written);
                    *cell.durable.borrow_mut() = synced.clone();
                    Rc::new(cell)
                }
            };
            dir.insert(name.clone(), cell);
        }
        *self.durable_dir.borrow_mut() = Some(dir);
    }

    /// Hashes what is durable, if it is kept: two stores with the same files
    /// but different durable images are different states.
    pub(crate) fn hash_durable(&self, state: &mut dyn std::hash::Hasher) {
        let durable = self.durable_dir.borrow();
        let Some(dir) = durable.as_ref() else {
            return;
        };
        let files = self.files.borrow();
        let synced = |name: &str, data: &FileData| {
            data.durable
                .borrow()
                .as_ref()
                .map_or(0, |image| image.hash_as(name) | 1)
        };
        for (name, data) in files.iter() {
            state.write_u64(synced(name, data));
        }
        for (name, cell) in dir {
            state.write(name.as_bytes());
            match files.get(name) {
                Some(current) if Rc::ptr_eq(current, cell) => state.write_u8(1),
                _ => {
                    state.write_u8(2);
                    state.write_u64(synced(name, cell));
                    state.write_u64(cell.hash(name));
                }
            }
        }
    }
}

/// What a torn power loss leaves of a file written as `written` and synced
/// as `synced`: each sector where they differ is `written`'s if `keep` says
/// so, else `synced`'s. A file grown since its sync ends after its last
/// sector that is kept; one shrunk since is shrunk or not as `keep` says.
fn tear(written: &[u8], synced: Option<&Image>, keep: &mut dyn FnMut() -> bool) -> Rc<Image> {
    let synced: &[u8] = synced.map_or(&[], |image| image);
    let shrunk = written.len() < synced.len() && keep();
    let longest = if shrunk {
        written.len()
    } else {
        written.len().max(synced.len())
    };
    let mut left = Vec::with_capacity(longest);
    let mut end = if shrunk { written.len() } else { synced.len() };
    let piece = |bytes: &[u8], sector: usize| -> Vec<u8> {
        let start = (sector * TEAR_BYTES).min(bytes.len());
        let mut piece = bytes[start..(start + TEAR_BYTES).min(bytes.len())].to_vec();
        piece.resize(TEAR_BYTES, 0);
        piece
    };
    for sector in 0..longest.div_ceil(TEAR_BYTES) {
        let (w, s) = (piece(written, sector), piece(synced, sector));
        if w != s && keep() {
            left.extend_from_slice(&w);
            end = end.max(((sector + 1) * TEAR_BYTES).min(written.len()));
        } else {
            left.extend_from_slice(&s);
        }
    }
    left.truncate(end.min(longest));
    Rc::new(Image::of(&left))
}

/// The `seed`th tearing: a fixed sequence of coin flips (splitmix64), one
/// per piece written since the last sync, which [`StoreInner::power_loss`]
/// keeps (true) or loses; the same in every run, natively and in the
/// browser.
pub fn seeded_tearing(seed: u64) -> impl FnMut() -> bool {
    let mut state = seed;
    move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) & 1 == 1
    }
}
