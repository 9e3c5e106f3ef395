//! SQLite's five lock levels on one database file, with the grant and refusal
//! rules of SQLite's unix VFS for connections in one process (`unixLock` and
//! `posixUnlock` in `os_unix.c`, which track an inode's strongest lock and its
//! number of SHARED holders).
//!
//! A refused lock is answered at once; nothing here waits. The scheduler, not
//! the lock, decides who runs next.

pub use rsqlite_vfs::LockLevel;

/// The lock state of one database file, shared by every handle open on it
/// (`unixInodeInfo`'s `eFileLock` and `nShared`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLocks {
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
pub struct Busy;

/// SQLite asked for a lock level it never asks a VFS for (PENDING or NONE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidRequest;

impl FileLocks {
    /// Raises `held` (one handle's level) to `want`, as `unixLock` does.
    ///
    /// On refusal `held` may have moved to PENDING: a writer that asked for
    /// EXCLUSIVE while readers remain keeps PENDING, which stops new readers,
    /// so that it gets EXCLUSIVE once the current ones finish.
    pub fn lock(
        &mut self,
        held: &mut LockLevel,
        want: LockLevel,
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
        // EXCLUSIVE goes through PENDING, which is kept even if EXCLUSIVE is refused.
        if want == Exclusive && *held < Pending {
            *held = Pending;
            self.level = Pending;
        }
        if want == Shared {
            // The first reader of an unlocked file.
            self.shared = 1;
        } else if want == Exclusive && self.shared > 1 {
            // Other handles still read.
            return Ok(Err(Busy));
        }
        *held = want;
        self.level = want;
        Ok(Ok(()))
    }

    /// Lowers `held` to `to` (SHARED or NONE), as `posixUnlock` does.
    pub fn unlock(&mut self, held: &mut LockLevel, to: LockLevel) {
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

    /// Whether some handle holds RESERVED or stronger (`xCheckReservedLock`).
    pub fn reserved(&self) -> bool {
        self.level > LockLevel::Shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LockLevel::*;

    fn granted(file: &mut FileLocks, held: &mut LockLevel, want: LockLevel) -> bool {
        file.lock(held, want).expect("valid request").is_ok()
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
    fn never_requested_levels_are_rejected() {
        let mut file = FileLocks::default();
        let mut a = None;
        assert_eq!(file.lock(&mut a, Pending), Err(InvalidRequest));
        assert_eq!(file.lock(&mut a, None), Err(InvalidRequest));
    }
}
