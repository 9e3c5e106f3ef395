//! SQLite's five lock levels on one database file, with the grant and refusal
//! rules of SQLite's unix VFS for connections in one process (`unixLock` and
//! `posixUnlock` in `os_unix.c`, which track an inode's strongest lock and its
//! number of SHARED holders).
//!
//! A refused lock is answered at once; nothing here waits. The scheduler, not
//! the lock, decides who runs next.

pub use rsqlite_vfs::LockLevel;

/// A lock level's name as SQLite's documentation writes it: `RESERVED`.
/// (`LockLevel` is rsqlite-vfs's type, so its name is this trait's.)
pub(crate) trait LevelName {
    /// `NONE`, `SHARED`, `RESERVED`, `PENDING` or `EXCLUSIVE`.
    fn name(self) -> &'static str;
}

impl LevelName for LockLevel {
    fn name(self) -> &'static str {
        match self {
            LockLevel::None => "NONE",
            LockLevel::Shared => "SHARED",
            LockLevel::Reserved => "RESERVED",
            LockLevel::Pending => "PENDING",
            LockLevel::Exclusive => "EXCLUSIVE",
        }
    }
}

/// The lock state of one database file, shared by every handle open on it
/// (`unixInodeInfo`'s `eFileLock` and `nShared`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileLocks {
    /// The strongest lock any handle holds.
    pub level: LockLevel,
    /// How many handles hold SHARED or stronger.
    pub shared: u32,
}

impl Default for FileLocks {
    fn default() -> Self {
        FileLocks {
            level: LockLevel::None,
            shared: 0,
        }
    }
}

/// A lock request SQLite's rules refuse: SQLite reports `SQLITE_BUSY`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Busy;

/// SQLite asked for a lock level it never asks a VFS for (PENDING or NONE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InvalidRequest;

impl FileLocks {
    /// Raises `held` (one handle's level) to `want`, as `unixLock` does.
    ///
    /// On refusal `held` may have moved to PENDING: a writer that asked for
    /// EXCLUSIVE from RESERVED while readers remain keeps PENDING, which stops
    /// new readers, so that it gets EXCLUSIVE once the current ones finish.
    /// A request for EXCLUSIVE straight from SHARED (SQLite rolling back a hot
    /// journal) takes no PENDING on the way: refused, the handle stays SHARED,
    /// as `unixLock` leaves it (it takes the pending byte only when
    /// `eFileLock == RESERVED_LOCK`).
    ///
    /// `sharing_shm` says that the handle's connection maps the database's
    /// WAL shared memory and another connection does too: RESERVED and
    /// EXCLUSIVE are then refused (`unixIsSharingShmNode`), so that a WAL
    /// connection closing, or leaving WAL mode, does not delete the WAL and
    /// the wal-index from under another.
    pub(crate) fn lock(
        &mut self,
        held: &mut LockLevel,
        want: LockLevel,
        sharing_shm: bool,
    ) -> Result<Result<(), Busy>, InvalidRequest> {
        use LockLevel::*;
        if matches!(want, None | Pending) {
            return Err(InvalidRequest);
        }
        if *held >= want {
            return Ok(Ok(()));
        }
        // Another handle holds a lock that precludes the request.
        if *held != self.level && (self.level >= Pending || want > Shared) {
            return Ok(Err(Busy));
        }
        // Readers join readers, and a reader may join while one handle is RESERVED.
        if want == Shared && matches!(self.level, Shared | Reserved) {
            *held = Shared;
            self.shared += 1;
            return Ok(Ok(()));
        }
        // From RESERVED, EXCLUSIVE goes through PENDING, which is kept even if
        // EXCLUSIVE is refused. From SHARED it does not (hot-journal recovery
        // must not look like a writer to the other readers).
        if want == Exclusive && *held == Reserved {
            *held = Pending;
            self.level = Pending;
        }
        if want == Shared {
            // The first reader of an unlocked file.
            self.shared = 1;
        } else if want == Exclusive && self.shared > 1 {
            // Other handles still read.
            return Ok(Err(Busy));
        } else if sharing_shm {
            return Ok(Err(Busy));
        }
        *held = want;
        self.level = want;
        Ok(Ok(()))
    }

    /// Lowers `held` to `to` (SHARED or NONE), as `posixUnlock` does.
    pub(crate) fn unlock(&mut self, held: &mut LockLevel, to: LockLevel) {
        use LockLevel::*;
        if *held <= to {
            return;
        }
        if *held > Shared {
            self.level = Shared;
        }
        if to == None {
            self.shared = self.shared.saturating_sub(1);
            if self.shared == 0 {
                self.level = None;
            }
        }
        *held = to;
    }

    /// What `xCheckReservedLock` answers: whether some handle holds RESERVED
    /// or stronger.
    ///
    /// `unixCheckReservedLock` answers yes when the asking process's inode is
    /// above SHARED or another process holds the RESERVED byte. Those agree
    /// with "some handle is above SHARED" in every state SQLite asks from
    /// (it asks while holding SHARED): RESERVED and PENDING hold the reserved
    /// byte, and EXCLUSIVE without it (hot-journal recovery) leaves no other
    /// handle SHARED to ask.
    pub(crate) fn reserved(&self) -> bool {
        self.level > LockLevel::Shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LockLevel::*;

    fn granted(file: &mut FileLocks, held: &mut LockLevel, want: LockLevel) -> bool {
        file.lock(held, want, false).expect("valid request").is_ok()
    }

    #[test]
    fn readers_share_and_one_writer_reserves_while_they_read() {
        let mut file = FileLocks::default();
        let (mut a, mut b) = (None, None);
        assert!(granted(&mut file, &mut a, Shared));
        assert!(granted(&mut file, &mut b, Shared));
        assert_eq!(file.shared, 2);
        assert!(granted(&mut file, &mut a, Reserved));
        assert!(file.reserved());
        assert!(
            !granted(&mut file, &mut b, Reserved),
            "a second writer is refused"
        );
        assert_eq!(b, Shared);
        let mut c = None;
        assert!(
            granted(&mut file, &mut c, Shared),
            "a reader may join a RESERVED file"
        );
    }

    #[test]
    fn exclusive_waits_for_readers_and_pending_stops_new_ones() {
        let mut file = FileLocks::default();
        let (mut a, mut b, mut c) = (None, None, None);
        assert!(granted(&mut file, &mut a, Shared));
        assert!(granted(&mut file, &mut b, Shared));
        assert!(granted(&mut file, &mut a, Reserved));
        assert!(!granted(&mut file, &mut a, Exclusive));
        assert_eq!(a, Pending, "the refused writer keeps PENDING");
        assert!(
            !granted(&mut file, &mut c, Shared),
            "PENDING stops new readers"
        );
        file.unlock(&mut b, None);
        assert!(granted(&mut file, &mut a, Exclusive));
        assert_eq!(file.level, Exclusive);
        assert!(!granted(&mut file, &mut c, Shared));
        file.unlock(&mut a, Shared);
        assert_eq!((file.level, file.shared), (Shared, 1));
        file.unlock(&mut a, None);
        assert_eq!(file, FileLocks::default());
    }

    #[test]
    fn a_refused_hot_journal_recovery_stays_shared_without_pending() {
        // unixLock takes the pending byte only on the way from RESERVED: a
        // reader asking for EXCLUSIVE to roll back a hot journal while another
        // reader holds SHARED is refused and keeps SHARED, and nothing says
        // "reserved" afterwards (a stale PENDING made the retry skip recovery).
        let mut file = FileLocks::default();
        let (mut reader, mut recoverer, mut late) = (None, None, None);
        assert!(granted(&mut file, &mut reader, Shared));
        assert!(granted(&mut file, &mut recoverer, Shared));
        assert!(!granted(&mut file, &mut recoverer, Exclusive));
        assert_eq!(recoverer, Shared, "no PENDING is kept");
        assert_eq!((file.level, file.shared), (Shared, 2));
        assert!(!file.reserved(), "nobody holds RESERVED");
        assert!(
            granted(&mut file, &mut late, Shared),
            "new readers are not stopped"
        );
        assert!(!granted(&mut file, &mut recoverer, Exclusive));
        file.unlock(&mut reader, None);
        file.unlock(&mut late, None);
        assert!(granted(&mut file, &mut recoverer, Exclusive));
        assert_eq!(file.level, Exclusive);
    }

    #[test]
    fn never_requested_levels_are_rejected() {
        let mut file = FileLocks::default();
        let mut a = None;
        assert_eq!(file.lock(&mut a, Pending, false), Err(InvalidRequest));
        assert_eq!(file.lock(&mut a, None, false), Err(InvalidRequest));
    }
}
