//! A store's files as a whole: listed, hashed (equal hashes, equal stores),
//! copied into a snapshot and put back from one.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::shm::ShmNode;
use super::vfs_bytes::{hash_wal_index, FileCell, FileData, Image};
use super::vfs_store::{is_shm_name, StoreInner};

impl StoreInner {
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
    /// reach the same state write different salts (see [`hash_wal`](super::vfs_bytes::hash_wal)).
    pub(crate) fn hash_files(&self, state: &mut dyn std::hash::Hasher) {
        for (name, data) in self.files.borrow().iter() {
            state.write(name.as_bytes());
            state.write_usize(name.len());
            state.write_u64(data.hash(name));
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
            files.insert(name.clone(), data.image());
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
            put(&mut current, &mut shm, name, bytes);
        }
    }

    /// Creates those of `files` that do not exist; every other file stays.
    pub(crate) fn put_missing(&self, files: &BTreeMap<String, Rc<Image>>) {
        let mut shm = self.shm.borrow_mut();
        let mut current = self.files.borrow_mut();
        for (name, bytes) in files {
            if !current.contains_key(name) && !shm.contains_key(name) {
                put(&mut current, &mut shm, name, bytes);
            }
        }
    }
}

/// Writes `bytes` over file `name` in `current` (or the shared memory of
/// that name in `shm`), in place, or creates it.
fn put(
    current: &mut BTreeMap<String, FileData>,
    shm: &mut BTreeMap<String, Rc<ShmNode>>,
    name: &str,
    bytes: &Rc<Image>,
) {
    if is_shm_name(name) {
        shm.entry(name.to_string()).or_default().set_bytes(bytes);
        return;
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
            current.insert(name.to_string(), Rc::new(FileCell::from_image(bytes)));
        }
    }
}
