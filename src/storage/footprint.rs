//! What one step touched: the footprint partial-order reduction compares.
//!
//! While a footprint is being recorded (between [`begin`] and [`end`], on the
//! thread that runs the step), the VFS notes every file operation under the
//! database the file belongs to (`producer`, `producer-journal`,
//! `producer-wal` and `producer-shm` are all `producer`), as a read or a
//! write of one of four [`Part`]s of it, each a piece of state that SQLite's
//! lock rules (see [`super::locks`]) or its files keep:
//!
//! - [`Part::Data`]: the bytes of the database file and its size. Any
//!   shared-memory call (WAL mode) writes it, and in WAL mode every lock
//!   call writes all four parts: there the locks also depend on who maps
//!   the shared memory.
//! - [`Part::Log`]: the rollback journal's or the WAL's bytes, size and
//!   existence. Asking whether the journal exists while another handle holds
//!   RESERVED or more reads [`Part::Reserved`] instead: SQLite asks only to
//!   find a hot journal, and a journal is not hot while a writer holds its
//!   lock (`hasHotJournal`), whatever the answer.
//! - [`Part::Reserved`]: whether a handle holds RESERVED or more. Taking
//!   RESERVED writes it, a refused RESERVED or `xCheckReservedLock` reads it.
//! - [`Part::Exclusive`]: PENDING and EXCLUSIVE, and the count of readers.
//!   Taking or giving back SHARED reads it (readers commute with readers,
//!   and with a writer taking RESERVED); a refused SHARED reads it; taking
//!   PENDING or EXCLUSIVE, granted or refused, writes it. Lowering a lock
//!   above SHARED writes both lock parts.
//!
//! Two steps of different attempts commute when neither writes a database
//! the other reads or writes, and neither writes a status the other reads
//! (see [`Footprint::conflicts`]). The runner adds what the VFS cannot see:
//! an attempt that is over (its status), a step that looked at the others'
//! statuses or locks, and steps that move the clock or kill a connection
//! (which conflict with everything).

use std::cell::Cell;

/// What one step read and wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Footprint {
    /// Parts of databases read, one bit each (see [`bit`]).
    pub reads: u64,
    /// Databases written.
    pub writes: u64,
    /// The attempts whose status (whether they are over) it looked at, one
    /// bit each.
    pub reads_status: u32,
    /// The attempts whose status it changed (its own, when it ends it).
    pub writes_status: u32,
    /// It let blocked attempts through, so it looked at which attempts are
    /// blocked (one bit each).
    pub reads_blocked: u32,
    /// The attempts it blocked (its own, refused a lock or waiting) or let
    /// through.
    pub writes_blocked: u32,
    /// It conflicts with every step (a clock tick, a kill).
    pub global: bool,
}

impl Footprint {
    /// Words a footprint is written as ([`Footprint::to_words`]).
    pub const WORDS: usize = 5;

    /// The footprint as plain words, to cross to another worker.
    pub fn to_words(self) -> [u64; Self::WORDS] {
        [
            self.reads,
            self.writes,
            u64::from(self.reads_status) << 32 | u64::from(self.writes_status),
            u64::from(self.reads_blocked) << 32 | u64::from(self.writes_blocked),
            u64::from(self.global),
        ]
    }

    /// A footprint from [`Footprint::to_words`]' words (`None` if they are
    /// not such words).
    pub fn from_words(words: &[u64]) -> Option<Footprint> {
        let &[reads, writes, status, blocked, global] = words else {
            return None;
        };
        Some(Footprint {
            reads,
            writes,
            reads_status: (status >> 32) as u32,
            writes_status: status as u32,
            reads_blocked: (blocked >> 32) as u32,
            writes_blocked: blocked as u32,
            global: match global {
                0 => false,
                1 => true,
                _ => return None,
            },
        })
    }

    /// A footprint that conflicts with everything.
    pub const GLOBAL: Footprint = Footprint {
        reads: 0,
        writes: 0,
        reads_status: 0,
        writes_status: 0,
        reads_blocked: 0,
        writes_blocked: 0,
        global: true,
    };

    /// Whether the two steps may not commute: one writes what the other
    /// reads or writes, or one ends an attempt whose status the other looked
    /// at, or one blocks or lets through an attempt whose being blocked the
    /// other looked at (a release lets through whoever is blocked then).
    pub fn conflicts(&self, other: &Footprint) -> bool {
        self.global
            || other.global
            || self.writes & (other.reads | other.writes) != 0
            || other.writes & self.reads != 0
            || self.writes_status & other.reads_status != 0
            || self.reads_status & other.writes_status != 0
            || self.writes_blocked & (other.reads_blocked | other.writes_blocked) != 0
            || other.writes_blocked & self.reads_blocked != 0
    }

    /// Both footprints together.
    pub fn union(&self, other: &Footprint) -> Footprint {
        Footprint {
            reads: self.reads | other.reads,
            writes: self.writes | other.writes,
            reads_status: self.reads_status | other.reads_status,
            writes_status: self.writes_status | other.writes_status,
            reads_blocked: self.reads_blocked | other.reads_blocked,
            writes_blocked: self.writes_blocked | other.writes_blocked,
            global: self.global || other.global,
        }
    }

    /// Whether it touched nothing at all.
    pub fn is_empty(&self) -> bool {
        *self == Footprint::default()
    }
}

/// A piece of a database's state (see the module's text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// The database file's bytes.
    Data = 0,
    /// Its journal's (or WAL's) bytes and existence.
    Log = 1,
    /// Whether a handle holds RESERVED or more.
    Reserved = 2,
    /// PENDING, EXCLUSIVE and the readers' count.
    Exclusive = 3,
}

/// Parts per database.
const PARTS: u8 = 4;

/// Databases beyond the 16th share the last slot: two of them look like one
/// database, which only adds conflicts.
const SLOTS: u8 = 64 / PARTS;

/// The footprint bit of `part` of the database in slot `slot` (see
/// `StoreInner::slot`).
pub(crate) fn bit(slot: u8, part: Part) -> u64 {
    1 << (slot.min(SLOTS - 1) * PARTS + part as u8)
}

/// The part a file's bytes are: the database's, or its journal's or WAL's.
pub(crate) fn part_of(file: &str) -> Part {
    if file.ends_with("-journal") || file.ends_with("-wal") {
        Part::Log
    } else {
        Part::Data
    }
}

thread_local! {
    static RECORDING: Cell<Option<Footprint>> = const { Cell::new(None) };
}

/// The database a store file belongs to: its name without a journal, WAL or
/// shared-memory suffix.
pub(crate) fn database_of(file: &str) -> &str {
    ["-journal", "-wal", "-shm"]
        .iter()
        .find_map(|suffix| file.strip_suffix(suffix))
        .unwrap_or(file)
}

/// Starts recording on this thread (a step is about to run).
pub(crate) fn begin() {
    RECORDING.with(|r| r.set(Some(Footprint::default())));
}

/// Stops recording and returns what was touched since [`begin`].
pub(crate) fn end() -> Footprint {
    RECORDING.with(|r| r.take()).unwrap_or_default()
}

/// Whether a footprint is being recorded.
#[cfg(test)]
pub(crate) fn recording() -> bool {
    RECORDING.with(|r| r.get().is_some())
}

fn note(apply: impl FnOnce(&mut Footprint)) {
    RECORDING.with(|r| {
        if let Some(mut footprint) = r.get() {
            apply(&mut footprint);
            r.set(Some(footprint));
        }
    });
}

/// Notes a read of `part` of the database in slot `slot`.
pub(crate) fn read(slot: u8, part: Part) {
    note(|f| f.reads |= bit(slot, part));
}

/// Notes a write of `part` of the database in slot `slot`.
pub(crate) fn write(slot: u8, part: Part) {
    note(|f| f.writes |= bit(slot, part));
}

/// Notes a write of every part of the database in slot `slot`.
pub(crate) fn write_all_of(slot: u8) {
    for part in [Part::Data, Part::Log, Part::Reserved, Part::Exclusive] {
        write(slot, part);
    }
}

/// Notes a read of the statuses of `attempts` (one bit each).
pub(crate) fn read_status(attempts: u32) {
    note(|f| f.reads_status |= attempts);
}

/// Notes a read of every database (the others' locks, a snapshot of the
/// committed state).
pub(crate) fn read_all() {
    note(|f| f.reads = u64::MAX);
}

/// Notes something that conflicts with every step.
pub(crate) fn global() {
    note(|f| f.global = true);
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static STORE: std::rc::Rc<crate::storage::vfs::StoreInner> =
            crate::storage::vfs::StoreInner::create("fp");
    }

    /// A database's slot in one store.
    fn slot(name: &str) -> u8 {
        STORE.with(|store| store.slot(name))
    }

    #[test]
    fn reads_commute_and_a_write_conflicts_with_both() {
        let (a, b) = (slot("fp-a"), slot("fp-b"));
        let read_a = Footprint {
            reads: bit(a, Part::Data),
            ..Footprint::default()
        };
        let write_a = Footprint {
            writes: bit(a, Part::Data),
            ..Footprint::default()
        };
        let write_b = Footprint {
            writes: bit(b, Part::Data),
            ..Footprint::default()
        };
        let lock_a = Footprint {
            writes: bit(a, Part::Reserved),
            ..Footprint::default()
        };
        assert!(!lock_a.conflicts(&write_a), "a lock is not the bytes");
        assert!(!read_a.conflicts(&read_a));
        assert!(read_a.conflicts(&write_a) && write_a.conflicts(&read_a));
        assert!(write_a.conflicts(&write_a));
        assert!(!write_a.conflicts(&write_b));
        assert!(Footprint::GLOBAL.conflicts(&Footprint::default()));
        let finish = Footprint {
            writes_status: 1,
            ..Footprint::default()
        };
        let looks = Footprint {
            reads_status: 1,
            ..Footprint::default()
        };
        let looks_elsewhere = Footprint {
            reads_status: 2,
            ..Footprint::default()
        };
        assert!(!finish.conflicts(&finish));
        assert!(finish.conflicts(&looks) && looks.conflicts(&finish));
        assert!(!finish.conflicts(&looks_elsewhere));
    }

    #[test]
    fn a_database_and_its_journal_wal_and_shared_memory_share_a_slot() {
        let main = slot("fp-main");
        assert_eq!(slot("fp-main-journal"), main);
        assert_eq!(slot("fp-main-wal"), main);
        assert_eq!(slot("fp-main-shm"), main);
        assert_ne!(slot("fp-other"), main);
    }

    #[test]
    fn nothing_is_noted_outside_a_recording() {
        write(slot("fp-outside"), Part::Data);
        begin();
        read(slot("fp-inside"), Part::Exclusive);
        let got = end();
        assert_eq!(got.reads, bit(slot("fp-inside"), Part::Exclusive));
        assert_eq!(got.writes, 0);
        assert!(!recording());
        write(slot("fp-outside"), Part::Data);
        assert!(end().is_empty());
    }
}
