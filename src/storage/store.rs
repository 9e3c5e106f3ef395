//! A store: a directory of in-memory database files that independent
//! connections open by name ([`Store::connect`]), and the snapshots of its
//! files that a search restores and rewinds to.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::conn::{check_name, Conn};
use super::faults::{Death, Faults, IoCall};
use super::vfs::{self, DurableImage, StoreInner};
use crate::{Error, Result};

/// A directory of in-memory database files (and their rollback journals)
/// that independent connections open by name, with SQLite's locks between
/// them. Stays on the thread that created it.
pub struct Store {
    inner: Rc<StoreInner>,
    last_restored: std::cell::RefCell<Option<Snapshot>>,
}

/// The bytes of every file of a [`Store`] at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    store: String,
    files: BTreeMap<String, Rc<vfs::Image>>,
    /// What was durable, if the store keeps durability.
    durable: Option<Rc<DurableImage>>,
    /// The I/O faults pending, if any.
    faults: Option<Rc<Faults>>,
}

impl Snapshot {
    /// Whether it is the very same snapshot (not merely equal bytes).
    pub fn same_as(&self, other: &Snapshot) -> bool {
        self.store == other.store
            && self.files.len() == other.files.len()
            && self
                .files
                .iter()
                .zip(&other.files)
                .all(|((a, x), (b, y))| a == b && Rc::ptr_eq(x, y))
            && match (&self.durable, &other.durable) {
                (Some(a), Some(b)) => Rc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
            && self.faults == other.faults
    }

    /// Whether it was taken of `store`.
    pub fn is_of(&self, store: &Store) -> bool {
        self.store == store.inner.name
    }

    /// The same files but those named.
    pub fn without(&self, names: &[String]) -> Snapshot {
        let mut files = self.files.clone();
        files.retain(|name, _| !names.contains(name));
        Snapshot {
            store: self.store.clone(),
            files,
            durable: self.durable.clone(),
            faults: self.faults.clone(),
        }
    }

    /// Only the files named (those it holds), without durability or faults:
    /// for [`Store::put_back`].
    pub fn only(&self, names: &[String]) -> Snapshot {
        let mut files = self.files.clone();
        files.retain(|name, _| names.contains(name));
        Snapshot {
            store: self.store.clone(),
            files,
            durable: None,
            faults: None,
        }
    }

    /// The files it holds, with their sizes in bytes.
    pub fn files(&self) -> Vec<(String, usize)> {
        self.files
            .iter()
            .map(|(name, bytes)| (name.clone(), bytes.len()))
            .collect()
    }
}

impl Store {
    /// Creates an empty store; `label` starts its unique name.
    pub fn new(label: &str) -> Result<Store> {
        check_name("store label", label)?;
        vfs::ensure_registered().map_err(Error::System)?;
        Ok(Store {
            inner: StoreInner::create(label),
            last_restored: Default::default(),
        })
    }

    /// A new store holding copies of a snapshot's files (of any store).
    pub fn from_snapshot(label: &str, snapshot: &Snapshot) -> Result<Store> {
        let store = Store::new(label)?;
        if let Some(source) = StoreInner::find(&snapshot.store) {
            store
                .inner
                .assign_slots(source.slot_names().iter().map(String::as_str));
        }
        store.inner.restore_files(&snapshot.files);
        if let Some(durable) = &snapshot.durable {
            store.inner.keep_durability();
            store.inner.restore_durable(Some(durable));
        }
        store.inner.restore_faults(snapshot.faults.as_deref());
        Ok(store)
    }

    /// Another handle on the store named `name` (as [`Store::name`] gave it).
    pub fn open(name: &str) -> Result<Store> {
        StoreInner::find(name)
            .map(|inner| Store {
                inner,
                last_restored: Default::default(),
            })
            .ok_or_else(|| {
                Error::Refused(format!(
                    "no store named {name:?} exists on this thread; create one with Store::new"
                ))
            })
    }

    /// The store's unique name on this thread.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Opens a new, independent connection to database `db` of this store
    /// (created empty if it does not exist). `label` names the connection in
    /// traces and errors.
    pub fn connect(&self, db: &str, label: &str) -> Result<Conn> {
        Conn::open(&self.inner, db, label, super::LocalUse::WATCHED)
    }

    /// As [`Store::connect`], for statements that may use `local` of their
    /// connection's own state: a pooled connection is handed out as a new
    /// one would be to them (see [`Conn`]'s `open`).
    pub(crate) fn connect_for(
        &self,
        db: &str,
        label: &str,
        local: super::LocalUse,
    ) -> Result<Conn> {
        Conn::open(&self.inner, db, label, local)
    }

    /// Keeps idle connections (no transaction, no lock) when they are
    /// dropped and hands them out again to [`Store::connect`], so that a
    /// scenario run many times does not open and parse the schema anew.
    ///
    /// A connection taken from the pool has its page cache emptied first,
    /// unless the file is unchanged since it last read it: two runs can
    /// reach the same file change counter with different contents, so the
    /// counter alone cannot tell its cached pages are stale.
    /// The schema cache is kept, so this is only for stores whose schema does
    /// not change between runs (what [`crate::sim::search::Explorer`] does:
    /// every run restores the same snapshot, and scenarios run no DDL).
    /// Restoring another snapshot empties the pool. Turning pooling off
    /// empties it too, and must be done before the store is dropped (pooled
    /// connections keep it alive).
    pub fn set_pooling(&self, on: bool) {
        self.inner.pooling.set(on);
        if !on {
            let idle: Vec<_> = self.inner.pool.borrow_mut().drain(..).collect();
            drop(idle);
        }
    }

    /// Pools idle connections as [`Store::set_pooling`] does, but a reused
    /// connection keeps its page cache: for a store whose files only
    /// SQLite writes (never [`Store::restore`]d), where the file change
    /// counter SQLite checks at the start of every transaction tells a
    /// stale cache. A session's store is such a store.
    pub fn set_pooling_keeping_caches(&self) {
        self.inner.pool_keeps_caches.set(true);
        self.set_pooling(true);
    }

    /// Makes connections opened from now on record the rows each of their
    /// statements changes (see [`Conn::take_changes`]). Off by default: the
    /// explorer runs without it.
    pub fn set_track_changes(&self, on: bool) {
        self.inner.track_changes.set(on);
    }

    /// Hashes the name and bytes of every file, and what is durable of
    /// them if the store keeps it: equal hashes, equal stores.
    pub fn hash_files(&self, state: &mut dyn std::hash::Hasher) {
        self.inner.hash_files(state);
        self.inner.hash_durable(state);
        self.inner.hash_faults(state);
    }

    /// The disk of the machine holding `databases` (every database if
    /// empty) is full (`full`: a write that would grow one of its files
    /// fails with `SQLITE_FULL`) or has room again.
    pub fn set_disk_full(&self, databases: &[String], full: bool) {
        self.inner.set_disk_full(databases, full);
    }

    /// The next `call` on a file of the machine holding `databases` (every
    /// database if empty) fails: `SQLITE_IOERR_WRITE` or `SQLITE_IOERR_FSYNC`.
    pub fn fail_next(&self, databases: &[String], call: IoCall) {
        self.inner.fail_next(databases, call);
    }

    /// From now on keeps what is durable (synced) apart from what is merely
    /// written, so that [`Store::power_loss`] can put the files back to it.
    /// Everything the files hold now is durable.
    pub fn keep_durability(&self) {
        self.inner.keep_durability();
    }

    /// Whether the store keeps durability ([`Store::keep_durability`]).
    pub fn keeps_durability(&self) -> bool {
        self.inner.keeps_durability()
    }

    /// The power goes out on the machine holding `databases` (every
    /// database if empty): each connection with one of their files open
    /// dies (as [`Conn::kill`], but all at once, and the handles stay with
    /// their owners, who can only drop them), and the files are put back to
    /// what was durable: the names the directory last synced, each with the
    /// bytes its file last synced. With `torn`, each sector written since a
    /// file's last sync is kept when `torn` answers true, else lost.
    /// Returns how many connections died. Refused unless the store keeps
    /// durability.
    pub fn power_loss(
        &self,
        databases: &[String],
        torn: Option<&mut dyn FnMut() -> bool>,
    ) -> Result<usize> {
        let dead = self.inner.power_loss(databases, torn);
        self.inner.bury();
        dead.map(|dead| dead.len()).ok_or_else(|| {
            Error::Refused(format!(
                "store {:?} does not keep durability: call keep_durability first",
                self.inner.name
            ))
        })
    }

    /// Arms a death inside the next statement of `conn`: at its `at`th sync
    /// (from 1), before the sync completes, its process dies or the power
    /// goes out ([`Death`]); the sync fails, so SQLite abandons the
    /// statement. Call [`Store::disarm`] after the statement.
    pub fn arm(&self, conn: &Conn, at: u32, death: Death) {
        self.arm_session(conn.id(), at, death);
    }

    /// As [`Store::arm`], for the connection whose id is `conn`.
    pub(crate) fn arm_session(&self, conn: u64, at: u32, death: Death) {
        self.inner.arm(Some(conn), at, death);
    }

    /// As [`Store::arm`], at the `at`th sync of whichever connection makes
    /// it (a sweep that does not hold the connection that will).
    pub fn arm_any(&self, at: u32, death: Death) {
        self.inner.arm(None, at, death);
    }

    /// Disarms what [`Store::arm`] armed; returns the death if it fired.
    pub fn disarm(&self) -> Option<Death> {
        self.inner.disarm().ok()
    }

    /// As [`Store::disarm`], but when the death did not fire, how many
    /// syncs the statement made (fewer than it was armed at).
    pub fn disarm_counting(&self) -> std::result::Result<Death, u32> {
        self.inner.disarm()
    }

    /// Sets the pending I/O faults aside until [`Store::resume_faults`]: a
    /// search going back to a state redoes the open transactions as they
    /// were first done, before the faults pending now were injected.
    pub(crate) fn suspend_faults(&self) -> Option<Faults> {
        let faults = self.inner.faults();
        self.inner.restore_faults(None);
        faults
    }

    /// Puts back the faults [`Store::suspend_faults`] set aside.
    pub(crate) fn resume_faults(&self, faults: Option<Faults>) {
        self.inner.restore_faults(faults.as_ref());
    }

    /// How many power losses the store went through.
    pub fn power_losses(&self) -> u64 {
        self.inner.power_losses.get()
    }

    /// Replaces this store's files with what a power loss would leave of
    /// `other`'s now (its durable files; see [`Store::keep_durability`]).
    /// Refused while a connection is open here, or unless `other` keeps
    /// durability.
    pub fn copy_durable_files_from(&self, other: &Store) -> Result<()> {
        let files = other.inner.durable_files().ok_or_else(|| {
            Error::Refused(format!(
                "store {:?} does not keep durability",
                other.inner.name
            ))
        })?;
        self.replace_files(other, &files)
    }

    /// Starts (`true`) or stops logging the file operations that reach the
    /// disk: writes (a run of them to one file as one), syncs (`+dir` when
    /// the directory is synced too), truncations and deletions, as
    /// `"sync main.db-journal +dir"`.
    pub fn set_io_log(&self, on: bool) {
        self.inner.set_io_log(on);
    }

    /// The file operations logged since the last call.
    pub fn take_io_log(&self) -> Vec<String> {
        self.inner.take_io_log()
    }

    /// The store's files with their sizes in bytes, in name order.
    pub fn files(&self) -> Vec<(String, usize)> {
        self.inner.file_names()
    }

    /// The bytes of one file, if the store holds it.
    pub fn file_bytes(&self, name: &str) -> Option<Vec<u8>> {
        self.inner.file_bytes(name)
    }

    /// Copies the bytes of every file. Taken while a transaction is open, it
    /// is the image a crash at that moment would leave (a hot journal included).
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            store: self.inner.name.clone(),
            files: self.inner.snapshot_files(),
            durable: self.inner.durable_image().map(Rc::new),
            faults: self.inner.faults().map(Rc::new),
        }
    }

    /// Replaces this store's files with copies of `other`'s, as they are now
    /// (hot journals included). Refused while a connection is open here.
    pub fn copy_files_from(&self, other: &Store) -> Result<()> {
        self.replace_files(other, &other.inner.snapshot_files())
    }

    /// Replaces this store's files with `files`, taken from `other` (whose
    /// databases keep their footprint slots here). Refused while a
    /// connection or a file is open here.
    fn replace_files(&self, other: &Store, files: &BTreeMap<String, Rc<vfs::Image>>) -> Result<()> {
        let open = self.inner.open_conns();
        if !open.is_empty() || self.inner.open_handles() > 0 {
            return Err(Error::Refused(format!(
                "cannot replace the files of store {:?} while connections are open ({})",
                self.inner.name,
                open.join(", ")
            )));
        }
        self.inner.restore_files(files);
        self.inner
            .assign_slots(other.inner.slot_names().iter().map(String::as_str));
        Ok(())
    }

    /// Numbers these databases' footprint slots first, in this order (an
    /// explorer names its scenario's databases before anything runs).
    pub fn assign_slots<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        self.inner.assign_slots(names);
    }

    /// Puts every file back as it was in `snapshot`.
    ///
    /// Refused while any connection is open on the store: an open connection
    /// would keep its page cache of the replaced files, and one in the middle
    /// of a transaction would hold locks on files that no longer exist.
    pub fn restore(&self, snapshot: &Snapshot) -> Result<()> {
        if snapshot.store != self.inner.name {
            return Err(Error::Refused(format!(
                "the snapshot was taken of store {:?}, not {:?}",
                snapshot.store, self.inner.name
            )));
        }
        let holders = self.inner.lock_holders();
        if !holders.is_empty() {
            return Err(Error::Refused(format!(
                "cannot restore a snapshot while connections are mid-transaction ({} hold locks); finish or kill them first",
                holders.join(", ")
            )));
        }
        let open = self.inner.open_conns();
        if !open.is_empty() || self.inner.open_handles() > 0 {
            return Err(Error::Refused(format!(
                "cannot restore a snapshot while connections are open ({}); close them first",
                open.join(", ")
            )));
        }
        let same = self
            .last_restored
            .borrow()
            .as_ref()
            .is_some_and(|last| last.same_as(snapshot));
        // Caches kept across reuse would not see that the files changed.
        if !same || self.inner.pool_keeps_caches.get() {
            let idle: Vec<_> = self.inner.pool.borrow_mut().drain(..).collect();
            drop(idle);
            *self.last_restored.borrow_mut() = Some(snapshot.clone());
        }
        self.inner.restore_files(&snapshot.files);
        self.inner.restore_durable(snapshot.durable.as_deref());
        self.inner.restore_faults(snapshot.faults.as_deref());
        Ok(())
    }

    /// Puts every file back as it was in `snapshot`, as [`Store::restore`]
    /// does, while connections are open, but the files named in `keep`,
    /// which stay as they are: for an explorer going back to a state of a
    /// run, whose connections are then those of that state. Locks stay as
    /// they are: the caller has released every lock but those of the
    /// transactions it keeps open (and their journals, in `keep`), which
    /// the snapshot's files must leave as they are. Each connection kept
    /// must forget a stale page cache ([`Conn::forget_stale_cache`]) before
    /// it reads again; the schema must be the one every snapshot of the
    /// store shares. The pool is kept whatever snapshot was restored before
    /// (it does the same for each connection it hands out).
    /// Puts back those of the files `snapshot` holds that are missing,
    /// leaving every other file, durability and the faults as they are. A
    /// snapshot of another store is refused.
    pub(crate) fn put_back_missing(&self, snapshot: &Snapshot) -> Result<()> {
        if snapshot.store != self.inner.name {
            return Err(Error::Refused(format!(
                "a snapshot of store {:?} cannot be put back into store {:?}",
                snapshot.store, self.inner.name
            )));
        }
        self.inner.put_missing(&snapshot.files);
        Ok(())
    }

    pub fn rewind(&self, snapshot: &Snapshot, keep: &[String]) -> Result<()> {
        if snapshot.store != self.inner.name || self.inner.pool_keeps_caches.get() {
            return self.restore(snapshot);
        }
        self.inner.rewind_files(&snapshot.files, keep);
        self.inner.restore_durable(snapshot.durable.as_deref());
        self.inner.restore_faults(snapshot.faults.as_deref());
        Ok(())
    }
}
