//! The I/O faults of a store (see `faults.rs`): set by a scenario's
//! steps, met by the file handles' writes and syncs, kept by snapshots.

use rsqlite_vfs::{VfsError, VfsErrorCode};

use super::faults::{on, Armed, Death, Faults, IoCall};
use super::footprint;
use super::vfs_store::ConnId;
use super::vfs_store::StoreInner;

impl StoreInner {
    /// The disk of the machine holding `databases` (every database if empty)
    /// is full (`full`) or has room again.
    pub(crate) fn set_disk_full(&self, databases: &[String], full: bool) {
        footprint::global();
        let mut faults = self.faults.borrow_mut();
        let at = faults.full.iter().position(|m| m == databases);
        match (full, at) {
            (true, None) => faults.full.push(databases.to_vec()),
            (false, Some(at)) => {
                faults.full.remove(at);
            }
            _ => {}
        }
    }

    /// The next `call` on a file of the machine holding `databases` fails.
    pub(crate) fn fail_next(&self, databases: &[String], call: IoCall) {
        footprint::global();
        let mut faults = self.faults.borrow_mut();
        let pending = (databases.to_vec(), call);
        if !faults.failing.contains(&pending) {
            faults.failing.push(pending);
        }
    }

    /// The error a `call` on `file` meets now, if any: a pending failure
    /// (consumed), or for a write that grows the file (`grows`), a full disk.
    pub(super) fn fault(&self, file: &str, call: IoCall, grows: bool) -> Option<VfsError> {
        let mut faults = self.faults.borrow_mut();
        if faults.is_empty() {
            return None;
        }
        let pending = faults
            .failing
            .iter()
            .position(|(machine, c)| *c == call && on(machine, file));
        if let Some(pending) = pending {
            faults.failing.remove(pending);
            return Some(call.error());
        }
        if grows && faults.full.iter().any(|machine| on(machine, file)) {
            return Some(VfsError::new(
                VfsErrorCode::Full,
                "the disk is full (an injected fault)".into(),
            ));
        }
        None
    }

    /// The faults pending now, for a snapshot (`None`: none).
    pub(crate) fn faults(&self) -> Option<Faults> {
        let faults = self.faults.borrow();
        (!faults.is_empty()).then(|| faults.clone())
    }

    /// Puts the pending faults back to `faults` (`None`: none).
    pub(crate) fn restore_faults(&self, faults: Option<&Faults>) {
        *self.faults.borrow_mut() = faults.cloned().unwrap_or_default();
    }

    /// Hashes the pending faults, if there are any (a store without any
    /// hashes as it did before faults existed).
    pub(crate) fn hash_faults(&self, state: &mut dyn std::hash::Hasher) {
        let faults = self.faults.borrow();
        if faults.is_empty() {
            return;
        }
        let mut hasher = super::vfs_bytes::fixed_hasher();
        std::hash::Hash::hash(&*faults, &mut hasher);
        state.write_u64(std::hash::Hasher::finish(&hasher));
    }

    /// Arms a death at the `at`th sync of connection `conn` (see
    /// [`Death`]), until [`StoreInner::disarm`].
    pub(crate) fn arm(&self, conn: Option<ConnId>, at: u32, death: Death) {
        *self.armed.borrow_mut() = Some(Armed {
            conn,
            at,
            left: at,
            death,
        });
    }

    /// Disarms what was armed, and closes the idle connections a power
    /// loss inside the statement killed. Returns the death if it fired,
    /// else how many syncs the statement made (fewer than armed).
    pub(crate) fn disarm(&self) -> Result<Death, u32> {
        let armed = self.armed.take();
        self.bury();
        match (self.fired.take(), armed) {
            (Some(death), _) => Ok(death),
            (None, Some(armed)) => Err(armed.at - armed.left),
            (None, None) => Err(0),
        }
    }

    /// A sync of connection `conn` is about to happen: if it is the armed
    /// one, the death happens here, and the sync fails (nothing of it
    /// lands, and SQLite abandons the statement).
    pub(super) fn at_sync(&self, conn: ConnId) -> Option<VfsError> {
        let death = {
            let mut armed = self.armed.borrow_mut();
            let fires = armed
                .as_mut()
                .filter(|a| a.conn.is_none_or(|c| c == conn))
                .is_some_and(|a| {
                    a.left -= 1;
                    a.left == 0
                });
            if !fires {
                return None;
            }
            armed.take()?.death
        };
        *self.fired.borrow_mut() = Some(death.clone());
        let what = match death {
            Death::Process => {
                self.kill(conn);
                "the process died at this sync"
            }
            Death::Power(machine) => {
                self.power_loss(&machine, None);
                "the power went out at this sync"
            }
        };
        Some(VfsError::new(VfsErrorCode::IoSync, what.into()))
    }
}
