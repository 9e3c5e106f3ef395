//! The bytes of a store's files, with what is known of them until they next
//! change (their hash, their version, the snapshot image they are a copy
//! of), and how a journal, a log and a wal-index are hashed: as SQLite reads
//! them, without the salts, nonces and checksums it draws at random.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// foldhash with a fixed seed: equal bytes (or state) hash equal in every
/// worker of a split search, and faster than SipHash, which took about a
/// tenth of a search. File bytes and the search's state keys both use it.
pub(crate) fn fixed_hasher() -> impl std::hash::Hasher {
    std::hash::BuildHasher::build_hasher(&foldhash::quality::FixedState::default())
}

/// The contents of one file.
pub(super) type FileData = Rc<FileCell>;

/// A file's bytes, with what is known of them until they next change: their
/// hash, and the snapshot bytes they are a copy of.
#[derive(Debug, Default)]
pub(crate) struct FileCell {
    pub(super) bytes: RefCell<Vec<u8>>,
    pub(super) hash: Cell<Option<u64>>,
    /// The snapshot image last restored into it or copied from it, while
    /// unchanged since.
    pub(super) copy_of: RefCell<Option<Rc<Image>>>,
    /// Which bytes it holds: a number no other bytes of any file had, taken
    /// anew at each change (0: never changed). Equal versions, equal bytes.
    pub(super) version: Cell<u64>,
    /// What a power loss leaves of it, while its store keeps durability
    /// (see `vfs_durable.rs`): its bytes as of its last `xSync`; `None`
    /// if it was never synced (nothing of it is on disk).
    pub(super) durable: RefCell<Option<Rc<Image>>>,
}

impl FileCell {
    pub(super) fn new(bytes: Vec<u8>) -> Self {
        FileCell {
            bytes: RefCell::new(bytes),
            ..FileCell::default()
        }
    }

    pub(super) fn borrow(&self) -> std::cell::Ref<'_, Vec<u8>> {
        self.bytes.borrow()
    }

    /// The bytes, to change: what was known of them is forgotten.
    pub(super) fn borrow_mut(&self) -> std::cell::RefMut<'_, Vec<u8>> {
        self.hash.set(None);
        self.copy_of.take();
        self.version.set(NEXT_VERSION.with(|n| {
            let version = n.get();
            n.set(version + 1);
            version
        }));
        self.bytes.borrow_mut()
    }

    /// Its bytes as an image, shared with the last snapshot or sync that
    /// took them while they are unchanged since.
    pub(super) fn image(&self) -> Rc<Image> {
        let mut copy_of = self.copy_of.borrow_mut();
        Rc::clone(copy_of.get_or_insert_with(|| {
            let image = Image::of(&self.bytes.borrow());
            image.version.set(self.version.get());
            image.hash.set(self.hash.get());
            Rc::new(image)
        }))
    }

    /// A file that holds `image`'s bytes, taken from it.
    pub(super) fn from_image(image: &Rc<Image>) -> FileCell {
        let cell = FileCell::new(image.to_vec());
        cell.took(image);
        *cell.copy_of.borrow_mut() = Some(Rc::clone(image));
        cell
    }

    /// Now holds `image`'s bytes: their hash, if the image knows it, and
    /// their version (the image's, or a new one it keeps).
    pub(super) fn took(&self, image: &Image) {
        if image.hash.get().is_some() {
            self.hash.set(image.hash.get());
        }
        match image.version.get() {
            0 => image.version.set(self.version.get()),
            version => self.version.set(version),
        }
    }

    /// The hash of file `name`'s bytes ([`hash_bytes`]), computed once per
    /// change.
    pub(super) fn hash(&self, name: &str) -> u64 {
        if let Some(hash) = self.hash.get() {
            return hash;
        }
        // A file of a few pages is hashed again after every step that
        // writes it: SipHash spent about 6% of a search there.
        let hash = hash_bytes(name, &self.bytes.borrow());
        self.hash.set(Some(hash));
        if let Some(image) = self.copy_of.borrow().as_ref() {
            image.hash.set(Some(hash));
        }
        hash
    }
}

/// How the bytes of file `name` are hashed: a log and a journal as SQLite
/// reads them back, anything else byte for byte.
pub(super) fn hash_bytes(name: &str, data: &[u8]) -> u64 {
    let mut hasher = fixed_hasher();
    if name.ends_with("-wal") {
        hash_wal(data, &mut hasher);
    } else if name.ends_with("-journal") {
        hash_journal(data, &mut hasher);
    } else {
        std::hash::Hasher::write(&mut hasher, data);
    }
    std::hash::Hasher::finish(&hasher)
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
    pub(super) version: Cell<u64>,
    pub(super) hash: Cell<Option<u64>>,
}

impl Image {
    pub(super) fn of(bytes: &[u8]) -> Image {
        Image {
            bytes: bytes.into(),
            ..Image::default()
        }
    }

    /// The hash of the bytes as file `name`'s ([`hash_bytes`]), computed once.
    pub(super) fn hash_as(&self, name: &str) -> u64 {
        if let Some(hash) = self.hash.get() {
            return hash;
        }
        let hash = hash_bytes(name, &self.bytes);
        self.hash.set(Some(hash));
        hash
    }
}

impl std::ops::Deref for Image {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

thread_local! {
    /// The next [`FileCell::version`].
    static NEXT_VERSION: Cell<u64> = const { Cell::new(1) };
}

/// The size of a WAL's header and of each frame's header.
const WAL_HEADER: usize = 32;
const WAL_FRAME_HEADER: usize = 24;

/// The magic number a rollback journal's header begins with.
const JOURNAL_MAGIC: [u8; 8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];

/// Hashes a rollback journal as SQLite reads it back, without its nonces and
/// checksums: SQLite draws a nonce at random for every journal header, and
/// seeds each page record's checksum with it, so two transactions that wrote
/// the same pages leave journals that differ only there and roll back alike.
/// What a checksum says is whether its record belongs to its header (SQLite
/// stops playing back at the first that does not: a record left by an
/// earlier transaction, or torn by a power loss): that is what is hashed.
/// A journal is one or more segments (a transaction that spills its cache
/// syncs the journal and starts a new header on the next sector), each a
/// header (magic or zeros, record count, nonce, initial size, sector size,
/// page size, padded to a sector) followed by its records (page number,
/// page, checksum); the last segment's records run to the end of the file
/// when its count is not written yet. Anything else, and whatever follows
/// what can be read so, is hashed byte for byte.
pub(crate) fn hash_journal(data: &[u8], state: &mut dyn std::hash::Hasher) {
    let word = |at: usize| u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
    let header_at = |at: usize| {
        data.len() >= at + 28 && (data[at..at + 8] == JOURNAL_MAGIC || data[at..at + 8] == [0; 8])
    };
    // SQLite leaves the magic (and the record count) zero until it syncs
    // the journal, at commit.
    if !header_at(0) {
        state.write_u8(0);
        state.write(data);
        return;
    }
    let (sector, page) = (word(20) as usize, word(24) as usize);
    let record = page + 8;
    if sector < 28 || page == 0 || data.len() < sector {
        state.write_u8(0);
        state.write(data);
        return;
    }
    state.write_u8(1);
    let mut at = 0;
    while at < data.len() {
        let segment = header_at(at)
            && word(at + 20) as usize == sector
            && word(at + 24) as usize == page
            && data.len() >= at + sector;
        let body = at + sector;
        let left = data.len().saturating_sub(body);
        let count = match word(at + 8) as usize {
            // Not written yet (or no-sync mode): every whole record to the end.
            0 | 0xffff_ffff if left % record == 0 => Some(left / record),
            0 | 0xffff_ffff => None,
            n => n.checked_mul(record).filter(|&b| b <= left).map(|_| n),
        };
        let (true, Some(count)) = (segment, count) else {
            state.write_u8(2);
            state.write(&data[at..]);
            return;
        };
        state.write_u8(3);
        state.write(&data[at..at + 12]);
        state.write(&data[at + 16..body]);
        let nonce = word(at + 12);
        let end = body + count * record;
        for r in data[body..end].chunks(record) {
            state.write(&r[..4 + page]);
            let stored = u32::from_be_bytes([r[4 + page], r[5 + page], r[6 + page], r[7 + page]]);
            state.write_u8(u8::from(stored == checksum(nonce, &r[4..4 + page])));
        }
        // The next header starts on a sector; what lies between is hashed.
        let next = end.div_ceil(sector) * sector;
        state.write(&data[end..next.min(data.len())]);
        at = next;
    }
}

/// A journal record's checksum, as SQLite's `pager_cksum` computes it: the
/// header's nonce plus every 200th byte of the page, from the end.
fn checksum(nonce: u32, page: &[u8]) -> u32 {
    let mut sum = nonce;
    let mut i = page.len() as isize - 200;
    while i > 0 {
        sum = sum.wrapping_add(u32::from(page[i as usize]));
        i -= 200;
    }
    sum
}

/// Hashes a WAL file as SQLite reads it, without its salts and checksums:
/// the header's magic, version, page size and checkpoint sequence; then
/// each frame's page number, commit size, page, and whether its salts are
/// the header's (a frame of an older log is not part of this one). Salts
/// are drawn at random, and checksums are seeded by them; any two logs that
/// differ only there behave alike.
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
            // A frame cut short (a torn power loss keeps some of its
            // sectors): SQLite reads no frame past the file's end, but the
            // bytes stay; hashed without the salts and checksum its header
            // holds, as a whole frame is.
            state.write_u8(0xff);
            state.write_usize(f.len());
            state.write(&f[..f.len().min(8)]);
            if f.len() >= 16 {
                state.write_u8(u8::from(&f[8..16] == salts));
            }
            state.write(&f[f.len().min(WAL_FRAME_HEADER)..]);
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

#[cfg(test)]
mod tests {
    use super::{hash_journal, JOURNAL_MAGIC};
    use std::hash::Hasher;

    const SECTOR: usize = 512;
    const PAGE: usize = 1024;

    /// A journal of `segments`, each `(nonce, pages)`: a header padded to a
    /// sector, then each page's record with a checksum seeded by the nonce.
    fn journal(segments: &[(u32, &[u8])]) -> Vec<u8> {
        let mut data = Vec::new();
        for &(nonce, pages) in segments {
            data.extend_from_slice(&JOURNAL_MAGIC);
            data.extend_from_slice(&(pages.len() as u32).to_be_bytes());
            data.extend_from_slice(&nonce.to_be_bytes());
            data.extend_from_slice(&2u32.to_be_bytes());
            data.extend_from_slice(&(SECTOR as u32).to_be_bytes());
            data.extend_from_slice(&(PAGE as u32).to_be_bytes());
            data.resize(data.len().div_ceil(SECTOR) * SECTOR, 0);
            for (i, &byte) in pages.iter().enumerate() {
                data.extend_from_slice(&(i as u32 + 1).to_be_bytes());
                data.extend(std::iter::repeat_n(byte, PAGE));
                let page = vec![byte; PAGE];
                data.extend_from_slice(&super::checksum(nonce, &page).to_be_bytes());
            }
            data.resize(data.len().div_ceil(SECTOR) * SECTOR, 0);
        }
        data
    }

    /// A WAL of `pages` (page size 512), its salts and checksums drawn from
    /// `salt`, cut to `len` bytes (a torn power loss keeps some sectors).
    fn wal(salt: u8, pages: &[u8], len: usize) -> Vec<u8> {
        let mut data = vec![
            0x37, 0x7f, 0x06, 0x82, 0, 0x2d, 0xe2, 0x18, 0, 0, 2, 0, 0, 0, 0, 0,
        ];
        data.extend_from_slice(&[salt; 8]);
        data.extend_from_slice(&[salt ^ 0x55; 8]);
        for (i, &byte) in pages.iter().enumerate() {
            data.extend_from_slice(&(i as u32 + 1).to_be_bytes());
            data.extend_from_slice(&[0; 4]);
            data.extend_from_slice(&[salt; 8]);
            data.extend_from_slice(&[salt.wrapping_add(byte); 8]);
            data.extend(std::iter::repeat_n(byte, 512));
        }
        data.truncate(len);
        data
    }

    /// A WAL whose last frame a torn power loss cut short hashes without
    /// the salts and checksums of that frame too.
    #[test]
    fn a_cut_frame_is_hashed_without_its_salts() {
        let hash = |data: &[u8]| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            super::hash_wal(data, &mut h);
            h.finish()
        };
        let (a, b) = (wal(1, &[7, 8], 1024), wal(9, &[7, 8], 1024));
        assert_ne!(a, b);
        assert_eq!(hash(&a), hash(&b));
        assert_ne!(hash(&a), hash(&wal(1, &[7, 9], 1024)));
        assert_ne!(hash(&a), hash(&wal(1, &[7, 8], 1000)));
    }

    fn hash(data: &[u8]) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        hash_journal(data, &mut h);
        h.finish()
    }

    /// A journal of two segments (a transaction that spilled its cache)
    /// hashes without either nonce: two runs that wrote the same pages are
    /// one state. A page that differs, or a missing segment, is another.
    #[test]
    fn every_segment_is_hashed_without_its_nonce() {
        let a = journal(&[(7, &[1, 2]), (8, &[3])]);
        let b = journal(&[(1_000, &[1, 2]), (99, &[3])]);
        assert_ne!(a, b);
        assert_eq!(hash(&a), hash(&b));
        assert_ne!(hash(&a), hash(&journal(&[(7, &[1, 2]), (8, &[4])])));
        assert_ne!(hash(&a), hash(&journal(&[(7, &[1, 2])])));
        // A record whose checksum is not its header's (left by an earlier
        // transaction, or torn) is one SQLite does not play back.
        let mut stale = a.clone();
        stale[SECTOR + 4 + PAGE] ^= 1;
        assert_ne!(hash(&stale), hash(&a));
        // Bytes that are no segment are hashed as they are.
        let mut torn = a.clone();
        torn.truncate(a.len() - 600);
        assert_ne!(hash(&torn), hash(&b[..b.len() - 600]));
    }
}
