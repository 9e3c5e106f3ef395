//! The wal-index of a WAL-mode database: SQLite's shared memory, as the unix
//! VFS keeps it in a `<database>-shm` file mapped by every process.
//!
//! Here every connection is its own "process" (as in the differential test,
//! where each connection runs in a process of its own): a connection that
//! maps a database's shared memory holds its own set of locks on the eight
//! lock slots and on the dead-man switch (DMS), and the grant and refusal
//! rules are those of POSIX advisory locks between processes, which is what
//! `unixShmLock` and `unixLockSharedMemory` (`os_unix.c`) rely on:
//!
//! - a SHARED slot is refused if another connection holds it EXCLUSIVE;
//! - EXCLUSIVE slots are refused if any connection holds any of them, the
//!   asking one included (`unixShmLock` counts every connection of the
//!   process);
//! - the first connection to map the memory (no other connection holds the
//!   DMS) truncates the file to 3 bytes, so that the wal-index is rebuilt
//!   from the WAL (SQLite's recovery); every mapper then holds the DMS
//!   SHARED until it unmaps or dies.
//!
//! The memory is a list of 32 KiB regions at fixed addresses (SQLite keeps
//! pointers into them while mapped) and a file length. A region exists for a
//! connection once it has mapped it, or once the file is long enough.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

/// The number of lock slots (`SQLITE_SHM_NLOCK`): WRITE, CKPT, RECOVER and
/// five READ slots.
pub(crate) const SLOTS: usize = 8;

/// The slots' names, by index (WAL_WRITE_LOCK is 0, WAL_READ_LOCK(i) is 3+i).
pub(crate) const SLOT_NAMES: [&str; SLOTS] = [
    "WRITE", "CKPT", "RECOVER", "READ0", "READ1", "READ2", "READ3", "READ4",
];

/// How the unix VFS truncates the file when the first process maps it.
const TRUNCATED_LEN: usize = 3;

/// One connection's locks on a database's shared memory (`unixShm`'s masks,
/// and the DMS byte it holds from mapping to unmapping).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ShmLocks {
    /// Slots held SHARED (bit i is slot i).
    pub shared: u8,
    /// Slots held EXCLUSIVE.
    pub exclusive: u8,
    /// Whether it holds the DMS (always SHARED once mapped).
    pub dms: bool,
}

impl ShmLocks {
    /// The slots it holds at all.
    fn held(&self) -> u8 {
        self.shared | self.exclusive
    }

    /// The slots either holds (the DMS left out): what a set of connections
    /// holds together.
    pub fn union(self, other: ShmLocks) -> ShmLocks {
        ShmLocks {
            shared: self.shared | other.shared,
            exclusive: self.exclusive | other.exclusive,
            dms: false,
        }
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        *self == ShmLocks::default()
    }

    /// "DMS s, WRITE x, READ0 s": the locks held, EXCLUSIVE as `x`, SHARED
    /// as `s` (the DMS is only ever held SHARED between SQLite's calls).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.dms {
            parts.push("DMS s".to_string());
        }
        for (i, name) in SLOT_NAMES.iter().enumerate() {
            let bit = 1u8 << i;
            if self.exclusive & bit != 0 {
                parts.push(format!("{name} x"));
            } else if self.shared & bit != 0 {
                parts.push(format!("{name} s"));
            }
        }
        parts.join(", ")
    }
}

/// A request to `xShmLock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShmRequest {
    LockShared,
    LockExclusive,
    Unlock,
}

/// The shared-memory lock request that SQLite's rules refuse (`SQLITE_BUSY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShmBusy;

/// One 32 KiB region: bytes SQLite reads and writes through a raw pointer
/// while Rust code (snapshots, hashes) reads them between SQLite calls.
type Region = Box<[Cell<u8>]>;

/// The shared memory of one database (`unixShmNode`, and its file).
#[derive(Debug, Default)]
pub(crate) struct ShmNode {
    /// The regions allocated so far; their addresses never change.
    regions: RefCell<Vec<Region>>,
    /// The size SQLite maps regions with (32 KiB); 0 before the first map.
    region_size: Cell<usize>,
    /// The file's length: a region exists once the file reaches its end.
    len: Cell<usize>,
    /// The mappers, by file handle: their locks and how many regions each
    /// has mapped (`unixShmNode.nRegion`, per process).
    holders: RefCell<BTreeMap<u64, Holder>>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Holder {
    locks: ShmLocks,
    mapped: usize,
}

impl ShmNode {
    /// Attaches `handle` as a mapper, as `unixOpenSharedMemory` does: refused
    /// (`SQLITE_BUSY`) while another mapper holds the DMS EXCLUSIVE (never
    /// here: it is only held during this call); the first mapper truncates
    /// the file. The mapper then holds the DMS SHARED.
    pub(crate) fn attach(&self, handle: u64) -> Result<(), ShmBusy> {
        let mut holders = self.holders.borrow_mut();
        let others_hold_dms = holders
            .iter()
            .any(|(&h, holder)| h != handle && holder.locks.dms);
        if !others_hold_dms {
            self.truncate(TRUNCATED_LEN);
        }
        let holder = holders.entry(handle).or_default();
        holder.locks.dms = true;
        Ok(())
    }

    /// Detaches `handle`: its mapping and every lock it holds go (closing the
    /// shared-memory file descriptor releases a process's locks on it).
    pub(crate) fn detach(&self, handle: u64) {
        self.holders.borrow_mut().remove(&handle);
    }

    /// Whether any connection maps it.
    pub(crate) fn is_mapped(&self) -> bool {
        !self.holders.borrow().is_empty()
    }

    /// Whether a mapper other than `handle` holds the DMS: the database's
    /// shared memory is in use by another connection (`unixIsSharingShmNode`).
    pub(crate) fn shared_with_others(&self, handle: u64) -> bool {
        self.holders
            .borrow()
            .iter()
            .any(|(&h, holder)| h != handle && holder.locks.dms)
    }

    /// The locks `handle` holds.
    pub(crate) fn locks(&self, handle: u64) -> ShmLocks {
        self.holders
            .borrow()
            .get(&handle)
            .map(|h| h.locks)
            .unwrap_or_default()
    }

    /// Drops every lock `handle` holds, the DMS included, as a process death
    /// does; it stays mapped until its connection is closed.
    pub(crate) fn drop_locks(&self, handle: u64) {
        if let Some(holder) = self.holders.borrow_mut().get_mut(&handle) {
            holder.locks = ShmLocks::default();
        }
    }

    /// `xShmLock` for slots `first..first + n`, by `unixShmLock`'s rules.
    pub(crate) fn lock(
        &self,
        handle: u64,
        first: usize,
        n: usize,
        request: ShmRequest,
    ) -> Result<(), ShmBusy> {
        let mask = (((1u16 << (first + n)) - (1u16 << first)) & 0xff) as u8;
        let mut holders = self.holders.borrow_mut();
        let own = holders.get(&handle).map(|h| h.locks).unwrap_or_default();
        // `unixShmLock` counts the locks of every connection of the process,
        // the asking one included: a connection that holds a slot SHARED is
        // refused it EXCLUSIVE (a checkpoint run while its own read
        // transaction is open cannot restart the log).
        let any = |held: fn(&ShmLocks) -> u8| {
            holders
                .values()
                .any(|holder| held(&holder.locks) & mask != 0)
        };
        let busy = match request {
            ShmRequest::Unlock => false,
            ShmRequest::LockShared => own.shared & mask != mask && any(|l| l.exclusive),
            ShmRequest::LockExclusive => any(ShmLocks::held),
        };
        if busy {
            return Err(ShmBusy);
        }
        let holder = holders.entry(handle).or_default();
        match request {
            ShmRequest::Unlock => {
                holder.locks.shared &= !mask;
                holder.locks.exclusive &= !mask;
            }
            ShmRequest::LockShared => holder.locks.shared |= mask,
            ShmRequest::LockExclusive => holder.locks.exclusive |= mask,
        }
        Ok(())
    }

    /// `xShmMap`: the address of region `region` for `handle`, extending the
    /// file if `extend`; `None` if the region does not exist and may not be
    /// created. Fails if SQLite asks with another region size than before.
    pub(crate) fn map(
        &self,
        handle: u64,
        region: usize,
        size: usize,
        extend: bool,
    ) -> Result<Option<*mut u8>, String> {
        if size == 0 || (self.region_size.get() != 0 && self.region_size.get() != size) {
            return Err(format!("shared-memory regions of {size} bytes"));
        }
        self.region_size.set(size);
        let mut holders = self.holders.borrow_mut();
        let holder = holders.entry(handle).or_default();
        if holder.mapped <= region {
            let needed = (region + 1)
                .checked_mul(size)
                .ok_or_else(|| format!("shared-memory region {region}"))?;
            if self.len.get() < needed {
                if !extend {
                    return Ok(None);
                }
                self.set_len(needed);
            }
            holder.mapped = region + 1;
        }
        let mut regions = self.regions.borrow_mut();
        while regions.len() <= region {
            regions.push((0..size).map(|_| Cell::new(0)).collect());
        }
        Ok(Some(regions[region].as_ptr().cast::<u8>().cast_mut()))
    }

    /// Sets the file's length as `ftruncate` does: bytes past the end read
    /// as zeros when the file grows again.
    fn set_len(&self, len: usize) {
        let old = self.len.get();
        if len < old {
            self.truncate(len);
        } else {
            self.len.set(len);
        }
    }

    fn truncate(&self, len: usize) {
        let size = self.region_size.get();
        if size > 0 {
            for (i, region) in self.regions.borrow().iter().enumerate() {
                let start = i * size;
                for (j, byte) in region.iter().enumerate() {
                    if start + j >= len {
                        byte.set(0);
                    }
                }
            }
        }
        self.len.set(len);
    }

    /// The file's bytes.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let len = self.len.get();
        let mut out = Vec::with_capacity(len);
        for region in self.regions.borrow().iter() {
            out.extend(region.iter().map(Cell::get));
            if out.len() >= len {
                break;
            }
        }
        out.resize(len, 0);
        out
    }

    /// Puts the file's bytes back (a snapshot's), in place: the regions keep
    /// their addresses.
    pub(crate) fn set_bytes(&self, bytes: &[u8]) {
        self.truncate(0);
        let size = self.region_size.get().max(32 * 1024);
        self.region_size.set(size);
        let mut regions = self.regions.borrow_mut();
        for (i, chunk) in bytes.chunks(size).enumerate() {
            if regions.len() <= i {
                regions.push((0..size).map(|_| Cell::new(0)).collect());
            }
            for (byte, value) in regions[i].iter().zip(chunk) {
                byte.set(*value);
            }
        }
        self.len.set(bytes.len());
    }

    /// The native-endian 32-bit word at `offset` of region 0 (SQLite writes
    /// the wal-index in the machine's byte order), if the file holds it.
    pub(crate) fn read_u32(&self, offset: usize) -> Option<u32> {
        if offset + 4 > self.len.get() {
            return None;
        }
        let regions = self.regions.borrow();
        let region = regions.first()?;
        let bytes: Vec<u8> = region
            .get(offset..offset + 4)?
            .iter()
            .map(Cell::get)
            .collect();
        Some(u32::from_ne_bytes(bytes.try_into().ok()?))
    }

    /// The file's length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGION: usize = 32 * 1024;

    #[test]
    fn readers_share_a_slot_and_exclusive_waits_for_everyone() {
        let node = ShmNode::default();
        node.attach(1).unwrap();
        node.attach(2).unwrap();
        assert_eq!(node.lock(1, 3, 1, ShmRequest::LockShared), Ok(()));
        assert_eq!(
            node.lock(1, 3, 1, ShmRequest::LockExclusive),
            Err(ShmBusy),
            "its own SHARED lock refuses it"
        );
        assert_eq!(node.lock(2, 3, 1, ShmRequest::LockShared), Ok(()));
        assert_eq!(node.lock(2, 3, 1, ShmRequest::LockExclusive), Err(ShmBusy));
        assert_eq!(node.lock(2, 0, 1, ShmRequest::LockExclusive), Ok(()));
        assert_eq!(node.lock(1, 0, 1, ShmRequest::LockShared), Err(ShmBusy));
        // A range is refused whole if one slot is held by another.
        assert_eq!(node.lock(1, 1, 7, ShmRequest::LockExclusive), Err(ShmBusy));
        assert_eq!(node.locks(1).shared, 1 << 3);
        node.lock(1, 3, 1, ShmRequest::Unlock).unwrap();
        node.lock(2, 3, 1, ShmRequest::Unlock).unwrap();
        assert_eq!(node.lock(1, 1, 7, ShmRequest::LockExclusive), Ok(()));
        assert_eq!(
            node.locks(1).describe(),
            "DMS s, CKPT x, RECOVER x, READ0 x, READ1 x, READ2 x, READ3 x, READ4 x"
        );
        node.drop_locks(1);
        assert_eq!(node.lock(2, 3, 1, ShmRequest::LockShared), Ok(()));
    }

    #[test]
    fn the_first_mapper_truncates_and_later_ones_see_the_same_bytes() {
        let node = ShmNode::default();
        node.attach(1).unwrap();
        assert_eq!(node.map(1, 0, REGION, false).unwrap(), None);
        let p = node.map(1, 0, REGION, true).unwrap().unwrap();
        // SAFETY: the region is REGION bytes long and lives as long as node.
        unsafe { p.add(100).write(7) };
        node.attach(2).unwrap();
        let q = node.map(2, 0, REGION, false).unwrap().unwrap();
        assert_eq!(p, q);
        assert_eq!(node.bytes()[100], 7);
        node.detach(1);
        node.detach(2);
        // The next first mapper truncates to 3 bytes: the wal-index is gone.
        node.attach(3).unwrap();
        assert_eq!(node.len(), 3);
        assert_eq!(node.map(3, 0, REGION, false).unwrap(), None);
        assert_eq!(node.map(3, 0, REGION, true).unwrap(), Some(p));
        assert_eq!(node.bytes()[100], 0);
    }
}
