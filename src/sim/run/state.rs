//! A run's state: the locks every attempt holds, the keys the search
//! hashes states by, and checkpoints to go back to without replaying.

use std::hash::{Hash, Hasher};
use std::rc::Rc;

use super::{state_hasher, strongest, Locks, Run};
use crate::engines::Moment;
use crate::sim::{Check, Spent, Status};
use crate::storage::footprint::Footprint;
use crate::storage::{LockLevel, ShmLocks};
use crate::Result;

/// A run's whole state between two steps, to go back to without replaying
/// the steps that led there (see [`Run::checkpoint`]).
pub struct Checkpoint {
    files: Box<dyn std::any::Any>,
    /// The journals of the write transactions open then, as they were: put
    /// back after those transactions are redone where the redo did not
    /// write them (a journal another connection left behind, not hot, that
    /// the writer has not written to yet). One the redo wrote stays as it
    /// wrote it: its header holds the connection's own random nonce.
    journals: Option<Box<dyn std::any::Any>>,
    attempts: Vec<Rc<dyn std::any::Any>>,
    /// Each attempt's own state hashed, where the run had it then: an
    /// attempt's [`Attempt::hash_state`] reads only what its copy keeps.
    hashes: Vec<Option<u64>>,
    /// Every attempt's locks and key, where the run knew them then (each a
    /// function of what a restore puts back; debug builds check both
    /// against a fresh reading after every restore).
    locks: Option<Rc<Locks>>,
    keys: Vec<Option<u64>>,
    statuses: Vec<Status>,
    choices: Vec<usize>,
    at_end: Vec<Option<Moment>>,
    at_end_hash: Vec<Option<u64>>,
    clock: i64,
    broken: Vec<Option<(usize, Check)>>,
    spent: Spent,
    /// The trace's length and its tables' bytes, if the run records one
    /// (a restore cuts the trace back to it).
    trace: Option<(usize, u64)>,
}

impl std::fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoint")
            .field("steps", &self.choices.len())
            .finish_non_exhaustive()
    }
}

impl Run<'_> {
    /// The lock level of each attempt (the strongest of its connections).
    pub fn lock_levels(&self) -> Vec<LockLevel> {
        self.locks().iter().map(strongest).collect()
    }

    /// Every lock each attempt holds, connection by connection: the level on
    /// the database file and, in WAL mode, the shared-memory locks.
    pub(crate) fn locks(&self) -> Rc<Locks> {
        if let Some(known) = self.locks_now.borrow().as_ref() {
            return Rc::clone(known);
        }
        let read = Rc::new(self.read_locks());
        *self.locks_now.borrow_mut() = Some(Rc::clone(&read));
        read
    }

    /// Every attempt's locks after attempt `stepped` took a step from
    /// `before`: a step changes its own attempt's locks and no other's (a
    /// connection's locks change only by its own calls, and a crash is not a
    /// step), so only those are read again.
    pub(super) fn locks_after_step(&self, before: &Locks, stepped: usize) -> Rc<Locks> {
        let mut locks = before.clone();
        locks.replace(
            stepped,
            self.attempts[stepped]
                .connections()
                .iter()
                .flatten()
                .map(|c| (c.lock_level(), c.shm_locks())),
        );
        debug_assert_eq!(
            locks,
            self.read_locks(),
            "a step changed another attempt's locks"
        );
        let locks = Rc::new(locks);
        *self.locks_now.borrow_mut() = Some(Rc::clone(&locks));
        locks
    }

    pub(super) fn read_locks(&self) -> Locks {
        let mut locks = Locks::default();
        for a in &self.attempts {
            locks.push(
                a.connections()
                    .iter()
                    .flatten()
                    .map(|c| (c.lock_level(), c.shm_locks())),
            );
        }
        locks
    }

    /// Hashes the whole state: the store's bytes and every attempt's state,
    /// status and lock. With `symmetric`, interchangeable attempts (same
    /// class, same state) are hashed as a multiset, so permutations of them
    /// count as one state.
    ///
    /// The rule every part of the key answers to: two states may have one
    /// key only if no later statement of any attempt, and no check, can tell
    /// them apart. So the key holds the files (and the clock), each
    /// attempt's position, the captures it may still read and its log, its
    /// locks, its status, what a check reads of its end, and what each of
    /// its connections holds that SQL can see: an open transaction (with or
    /// without a lock) as the statements it ran, and the counters
    /// (`last_insert_rowid()`, `changes()`, `total_changes()`) when the
    /// program reads them. What cannot be hashed (TEMP tables, attached
    /// databases, a PRAGMA a step set: [`crate::storage::local_use`]) makes
    /// the state unique: the key then holds the path that led there.
    pub fn state_key(&self, symmetric: bool) -> u64 {
        self.state_key_with(symmetric, &self.attempt_keys())
    }

    /// [`Run::state_key`] from the attempts' keys ([`Run::attempt_keys`]).
    pub fn state_key_with(&self, symmetric: bool, parts: &[u64]) -> u64 {
        let mut hasher = state_hasher();
        self.digest().hash(&mut hasher);
        self.clock.get().hash(&mut hasher);
        // Sorted on the stack (a run has at most MAX_ATTEMPTS attempts);
        // hashed as the slice it is, length first.
        let mut sorted = [0u64; crate::sim::schedule::MAX_ATTEMPTS];
        match sorted.get_mut(..parts.len()) {
            Some(sorted) if symmetric => {
                sorted.copy_from_slice(parts);
                sorted.sort_unstable();
                sorted.hash(&mut hasher);
            }
            None if symmetric => {
                let mut sorted = parts.to_vec();
                sorted.sort_unstable();
                sorted.hash(&mut hasher);
            }
            _ => parts.hash(&mut hasher),
        }
        // A path that broke an invariant differs from one that did not.
        for slot in &self.broken {
            slot.is_some().hash(&mut hasher);
        }
        // What no key can read (a connection's TEMP tables): the path itself,
        // so that the state is merged with no other (the rule above).
        if self.attempts.iter().any(|a| a.opaque()) {
            self.choices.hash(&mut hasher);
        }
        hasher.finish()
    }

    /// Hashes one attempt's class, state, status and locks (`locks`, the
    /// run's own: [`Run::locks`]).
    pub(super) fn attempt_key(&self, index: usize, locks: &[(LockLevel, ShmLocks)]) -> u64 {
        if let Some(known) = self.keys[index].get() {
            debug_assert_eq!(
                known,
                self.hash_attempt(index, locks),
                "attempt {index}'s key changed while it was kept"
            );
            return known;
        }
        let key = self.hash_attempt(index, locks);
        self.keys[index].set(Some(key));
        key
    }

    pub(super) fn hash_attempt(&self, index: usize, locks: &[(LockLevel, ShmLocks)]) -> u64 {
        let attempt = self.attempts[index].as_ref();
        let mut hasher = state_hasher();
        attempt.class().hash(&mut hasher);
        let own = match self.state_hashes[index].get() {
            Some(known) => known,
            None => {
                let mut own = state_hasher();
                attempt.hash_state(&mut own);
                let own = own.finish();
                self.state_hashes[index].set(Some(own));
                own
            }
        };
        own.hash(&mut hasher);
        // The strongest level; then, in WAL mode, the wal-index locks of
        // each connection that holds any.
        (strongest(locks) as u8).hash(&mut hasher);
        for (_, shm) in locks.iter().filter(|(_, shm)| !shm.is_empty()) {
            shm.hash(&mut hasher);
        }
        // What a check will read of the moment it ended.
        self.at_end_hash[index].hash(&mut hasher);
        if self.keeps_durability() {
            // Which of its connections are open: a power loss kills the
            // attempts with a connection on its machine, and only those.
            for conn in attempt.connections() {
                conn.is_some().hash(&mut hasher);
            }
        }
        match &self.statuses[index] {
            Status::Runnable => 0u8.hash(&mut hasher),
            Status::Blocked => 1u8.hash(&mut hasher),
            Status::Waiting { on } => {
                4u8.hash(&mut hasher);
                on.hash(&mut hasher);
            }
            Status::Finished { outcome } => {
                2u8.hash(&mut hasher);
                outcome.hash(&mut hasher);
            }
            Status::Failed { error, bound } => {
                3u8.hash(&mut hasher);
                error.hash(&mut hasher);
                bound.hash(&mut hasher);
            }
        }
        hasher.finish()
    }

    /// Forgets what was kept of attempt `index` while it was unchanged (its
    /// state hash, its copy): it took a step, crashed or was restored.
    pub(super) fn changed(&self, index: usize) {
        self.state_hashes[index].set(None);
        self.keys[index].set(None);
        self.saved[index].borrow_mut().take();
    }

    /// Every attempt's key: its class, state, status and locks hashed (see
    /// [`Run::attempt_key`]). Equal keys in one run mean interchangeable attempts.
    pub fn attempt_keys(&self) -> Vec<u64> {
        let locks = self.locks();
        (0..self.attempts.len())
            .map(|i| self.attempt_key(i, &locks[i]))
            .collect()
    }

    /// Attempt `index`'s class: attempts of one class run the same program.
    pub fn class_of(&self, index: usize) -> u64 {
        self.attempts.get(index).map_or(0, |a| a.class())
    }

    /// The runnable attempts, keeping one of each group of interchangeable
    /// ones (same class, state, status and lock).
    pub fn distinct_runnable(&self) -> Vec<usize> {
        let locks = self.locks();
        let mut seen = Vec::new();
        let mut distinct = Vec::new();
        for i in self.runnable() {
            let key = self.attempt_key(i, &locks[i]);
            if !seen.contains(&key) {
                seen.push(key);
                distinct.push(i);
            }
        }
        distinct
    }

    /// The run's state now, if it can be put back ([`Run::restore`]) without
    /// replaying its steps: every attempt's own state, the store's files,
    /// and each open transaction as the statements it ran. A transaction
    /// holding more than RESERVED (a commit under way) may have written the
    /// database file: then none is taken. A writer's journal is left out
    /// (redoing its statements writes it again), and put back after them if
    /// they did not (before, it would look hot to them); a hot journal a
    /// killed connection left is kept. Not in WAL mode (a connection remembers the
    /// wal-index it last read). A recording run's trace is cut back to its
    /// length then.
    pub fn checkpoint(&self) -> Option<Checkpoint> {
        if self.scenario.options().journal == crate::storage::Journal::Wal {
            return None;
        }
        let attempts = self
            .attempts
            .iter()
            .zip(&self.saved)
            .map(|(attempt, kept)| {
                if let Some(saved) = kept.borrow().as_ref() {
                    return Some(Rc::clone(saved));
                }
                let saved = attempt.save()?;
                *kept.borrow_mut() = Some(Rc::clone(&saved));
                Some(saved)
            })
            .collect::<Option<Vec<_>>>()?;
        let (journals, strongest) = self.writers_journals();
        if strongest > LockLevel::Reserved {
            return None;
        }
        let (files, journals) = self.engine.checkpoints()?.save(&journals);
        Some(Checkpoint {
            journals,
            files,
            attempts,
            hashes: self.state_hashes.iter().map(std::cell::Cell::get).collect(),
            locks: self.locks_now.borrow().clone(),
            keys: self.keys.iter().map(std::cell::Cell::get).collect(),
            statuses: self.statuses.clone(),
            choices: self.choices.clone(),
            at_end: self.at_end.clone(),
            at_end_hash: self.at_end_hash.clone(),
            clock: self.clock.get(),
            broken: self.broken.clone(),
            spent: self.spent,
            trace: self
                .trace
                .as_ref()
                .map(|trace| (trace.len(), self.trace_bytes)),
        })
    }

    /// The part of [`Run::restore`] that redoes what was open: each
    /// rewound attempt takes back its state and connections, every
    /// unchanged one forgets a stale page cache, and the transactions are
    /// redone (the readers', then the writers'). False when an attempt's
    /// state is not of this scenario.
    fn redo(
        &mut self,
        checkpoint: &Checkpoint,
        rewound: &[usize],
        unchanged: &[bool],
    ) -> Result<bool> {
        for &i in rewound {
            if !self.attempts[i].restore(checkpoint.attempts[i].as_ref(), self.engine)? {
                return Ok(false);
            }
        }
        // An unchanged attempt's connection outside a transaction may hold
        // a page cache that a later branch would leave stale under the same
        // change counter ([`crate::storage::Conn::forget_stale_cache`]).
        for (attempt, _) in self.attempts.iter().zip(unchanged).filter(|(_, &u)| u) {
            for conn in attempt.connections().iter().flatten() {
                if !conn.in_transaction() {
                    conn.forget_stale_cache()?;
                }
            }
        }
        for writers in [false, true] {
            for &i in rewound {
                self.attempts[i].resume(writers)?;
            }
        }
        Ok(true)
    }

    /// Goes back to `checkpoint`, taken of a run of the same scenario on the
    /// same store: every attempt's connections roll back what they have
    /// open, the files are put back, each attempt takes back its state and
    /// the connections it had, and the transactions open then are redone
    /// (the readers', then the writers'). False when the checkpoint
    /// is not of this scenario's attempts; after `false` or an error the run
    /// is in no defined state and must not be stepped.
    pub fn restore(&mut self, checkpoint: &Checkpoint) -> Result<bool> {
        if self.trace.is_some() != checkpoint.trace.is_some()
            || checkpoint.attempts.len() != self.attempts.len()
        {
            return Ok(false);
        }
        let Some(checkpoints) = self.engine.checkpoints() else {
            return Ok(false);
        };
        if !checkpoints.owns(checkpoint.files.as_ref()) {
            return Ok(false);
        }
        // An attempt that has not changed since the copy the checkpoint
        // holds was taken (nor been restored since to another) is as it was
        // then: the steps since were others'. Its open transactions stay as
        // they are (each holds its lock since before the checkpoint, so no
        // one committed to that database since); its other connections'
        // page caches are checked below, as every connection's is after a
        // rewind (without that check the three-producer search split four
        // ways found false violations: a relay read another branch's rows).
        // A transaction open without a lock (a deferred BEGIN or SAVEPOINT
        // that has read nothing yet) guards nothing: others committed since,
        // maybe with the same change counter its page cache trusts (a page
        // read in another branch, before a rollback); it is redone, as an
        // attempt that changed is (a fuzzer's find: D's insert wrote over
        // A's row from such a page).
        let unchanged: Vec<bool> = self
            .saved
            .iter()
            .zip(&checkpoint.attempts)
            .zip(&self.attempts)
            .map(|((kept, saved), attempt)| {
                kept.borrow().as_ref().is_some_and(|k| Rc::ptr_eq(k, saved))
                    && !attempt.connections().iter().flatten().any(|c| {
                        c.in_transaction() && c.lock_level() == crate::storage::LockLevel::None
                    })
            })
            .collect();
        // The others go back: rolled back, restored, their transactions redone.
        let rewound: Vec<usize> = (0..self.attempts.len())
            .filter(|&i| !unchanged[i])
            .collect();
        for attempt in 0..self.attempts.len() {
            self.changed(attempt);
        }
        for &i in &rewound {
            self.attempts[i].roll_back(checkpoint.attempts[i].as_ref());
        }
        self.locks_now.take();
        // The journals of the write transactions kept open stay.
        let (kept, _) = self.writers_journals();
        checkpoints.rewind(checkpoint.files.as_ref(), &kept)?;
        // The open transactions are redone as they were first done: before
        // the I/O faults pending in the checkpoint (a disk that filled up
        // since) were injected. Redone under them, a write that then went
        // through could fail, and the locks would differ from the
        // checkpoint's (tests/reduction.rs, a full disk anywhere).
        let redone =
            checkpoints.without_faults(&mut || self.redo(checkpoint, &rewound, &unchanged));
        if !redone? {
            return Ok(false);
        }
        if let Some(journals) = &checkpoint.journals {
            checkpoints.put_back_missing(journals.as_ref())?;
        }
        if let (Some(trace), Some((len, bytes))) = (&mut self.trace, checkpoint.trace) {
            trace.truncate(len);
            self.trace_bytes = bytes;
            // What the redone statements wrote is not a step's.
            for attempt in &self.attempts {
                for conn in attempt.connections().iter().flatten() {
                    conn.take_changes();
                }
            }
        }
        self.statuses.clone_from(&checkpoint.statuses);
        self.choices.clone_from(&checkpoint.choices);
        self.at_end.clone_from(&checkpoint.at_end);
        self.at_end_hash.clone_from(&checkpoint.at_end_hash);
        self.clock.set(checkpoint.clock);
        self.broken.clone_from(&checkpoint.broken);
        self.spent = checkpoint.spent;
        self.last_effects = (Footprint::default(), Vec::new());
        debug_assert!(
            checkpoint
                .locks
                .as_ref()
                .is_none_or(|locks| **locks == self.read_locks()),
            "the locks differ from the checkpoint's"
        );
        *self.locks_now.borrow_mut() = checkpoint.locks.clone();
        // Each attempt is as the checkpoint saved it (the search checks the
        // run's state key after a restore, and starts anew if not).
        for (kept, saved) in self.saved.iter().zip(&checkpoint.attempts) {
            *kept.borrow_mut() = Some(Rc::clone(saved));
        }
        for (index, hash) in checkpoint.hashes.iter().enumerate() {
            let differs = |hash: u64| {
                let mut own = state_hasher();
                self.attempts[index].hash_state(&mut own);
                own.finish() != hash
            };
            // A rewound attempt's state is hashed again: redoing its open
            // transaction may not give back all its connection holds (a
            // statement the redo takes from the connection's cache does not
            // read the schema, as preparing it did: a fuzzer's find). Then
            // the restore declines, and the run starts anew.
            if let Some(hash) = *hash {
                if rewound.contains(&index) && differs(hash) {
                    return Ok(false);
                }
                debug_assert!(
                    !differs(hash),
                    "attempt {index}'s state differs from the checkpoint's"
                );
            }
            self.state_hashes[index].set(*hash);
        }
        // Checked against a fresh hash when next asked, in debug builds
        // ([`Run::attempt_key`]).
        for (kept, key) in self.keys.iter().zip(&checkpoint.keys) {
            kept.set(*key);
        }
        Ok(true)
    }

    /// The journals of the connections that hold RESERVED or more (each is
    /// its write transaction's own), and the strongest lock any holds.
    pub(super) fn writers_journals(&self) -> (Vec<String>, LockLevel) {
        let mut journals = Vec::new();
        let mut strongest = LockLevel::None;
        for (attempt, levels) in self.attempts.iter().zip(self.locks().iter()) {
            for (conn, (level, _)) in attempt.connections().iter().flatten().zip(levels) {
                strongest = strongest.max(*level);
                if *level >= LockLevel::Reserved {
                    journals.push(conn.journal());
                }
            }
        }
        (journals, strongest)
    }
}
