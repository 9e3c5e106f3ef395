//! The cache of states a split search shares: a state one worker has
//! explored completely (its sleep set and the summary of what was done
//! below it) is cut by the others as by their own ([`super::dpor`]).

use std::collections::HashMap;

use crate::storage::footprint::Footprint;
use crate::{Error, Result};

/// Per class of attempt, the union of the footprints of the steps taken.
pub(super) type Summary = Vec<(u64, Footprint)>;

/// States whose exploration is finished, shared by the workers of a split
/// search: a state one worker has explored completely is cut by the others
/// as by its own cache (its sleep set and summary say all a cut needs).
/// States still under way are never shared. Threads share one cache; Web
/// Workers, which share no memory, each keep one and send each other what
/// they finished ([`SharedCache::take_published`], [`SharedCache::import`]).
#[derive(Debug, Default)]
pub struct SharedCache {
    states: std::sync::Mutex<HashMap<u64, (Vec<u64>, Summary)>>,
    /// The keys this worker finished since they were last taken, when kept
    /// (`None`: not kept).
    published: Option<std::sync::Mutex<Vec<u64>>>,
}

/// The most sleep-set identities or summary entries one imported state may
/// have (attempts and classes are at most 26).
const MAX_IMPORTED_ENTRIES: u64 = 64;

impl SharedCache {
    /// A cache that keeps the keys this worker finishes, to send them.
    pub fn sending() -> Self {
        SharedCache {
            states: Default::default(),
            published: Some(Default::default()),
        }
    }

    pub(super) fn get(&self, key: u64, sleep: &[u64]) -> Option<Summary> {
        let states = self.states.lock().unwrap_or_else(|e| e.into_inner());
        let (explored_with, summary) = states.get(&key)?;
        is_subset(explored_with, sleep).then(|| summary.clone())
    }

    pub(super) fn publish(&self, key: u64, sleep: &[u64], summary: &Summary) {
        if self.insert(key, sleep, summary) {
            if let Some(published) = &self.published {
                published
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(key);
            }
        }
    }

    /// Keeps the state unless it is known with a sleep set no larger.
    pub(super) fn insert(&self, key: u64, sleep: &[u64], summary: &Summary) -> bool {
        let mut states = self.states.lock().unwrap_or_else(|e| e.into_inner());
        let better = states
            .get(&key)
            .is_none_or(|(explored_with, _)| sleep.len() < explored_with.len());
        if better {
            states.insert(key, (sleep.to_vec(), summary.clone()));
        }
        better
    }

    /// The states this worker finished since the last call, as words: for
    /// each, its key, the size and identities of its sleep set, the size of
    /// its summary and each entry's class and footprint.
    pub fn take_published(&self) -> Vec<u64> {
        let Some(published) = &self.published else {
            return Vec::new();
        };
        let keys = std::mem::take(&mut *published.lock().unwrap_or_else(|e| e.into_inner()));
        let states = self.states.lock().unwrap_or_else(|e| e.into_inner());
        let mut words = Vec::new();
        for key in keys {
            let Some((sleep, summary)) = states.get(&key) else {
                continue;
            };
            words.push(key);
            words.push(sleep.len() as u64);
            words.extend_from_slice(sleep);
            words.push(summary.len() as u64);
            for (class, footprint) in summary {
                words.push(*class);
                words.extend_from_slice(&footprint.to_words());
            }
        }
        words
    }

    /// Adds the states another worker finished ([`SharedCache::take_published`]'s
    /// words). Malformed words are refused whole: nothing is added.
    pub fn import(&self, words: &[u64]) -> Result<usize> {
        let bad = || Error::invalid("finished states", "not the words takeFinished() gives");
        let mut at = 0usize;
        let mut take = |n: u64| -> Result<&[u64]> {
            let n = usize::try_from(n).map_err(|_| bad())?;
            let end = at
                .checked_add(n)
                .filter(|&end| end <= words.len())
                .ok_or_else(bad)?;
            let taken = &words[at..end];
            at = end;
            Ok(taken)
        };
        let mut states = Vec::new();
        while states.len() < words.len() {
            let Ok(&[key]) = take(1) else {
                break;
            };
            let sleeping = take(1)?[0];
            if sleeping > MAX_IMPORTED_ENTRIES {
                return Err(bad());
            }
            let sleep = take(sleeping)?.to_vec();
            if !sleep.is_sorted() {
                return Err(bad());
            }
            let entries = take(1)?[0];
            if entries > MAX_IMPORTED_ENTRIES {
                return Err(bad());
            }
            let mut summary = Summary::new();
            for _ in 0..entries {
                let class = take(1)?[0];
                let words = take(Footprint::WORDS as u64)?;
                summary.push((class, Footprint::from_words(words).ok_or_else(bad)?));
            }
            states.push((key, sleep, summary));
        }
        let count = states.len();
        for (key, sleep, summary) in states {
            self.insert(key, &sleep, &summary);
        }
        Ok(count)
    }
}

pub(super) fn add_to(summary: &mut Summary, class: u64, footprint: Footprint) {
    match summary.iter_mut().find(|(c, _)| *c == class) {
        Some((_, f)) => *f = f.union(&footprint),
        None => summary.push((class, footprint)),
    }
}

pub(super) fn merge(into: &mut Summary, from: &Summary) {
    for &(class, footprint) in from {
        add_to(into, class, footprint);
    }
}

/// Whether sorted multiset `small` is contained in sorted multiset `big`.
pub(super) fn is_subset(small: &[u64], big: &[u64]) -> bool {
    let mut j = 0;
    for &x in small {
        while j < big.len() && big[j] < x {
            j += 1;
        }
        if j == big.len() || big[j] != x {
            return false;
        }
        j += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::is_subset;

    #[test]
    fn multiset_inclusion() {
        assert!(is_subset(&[], &[1]));
        assert!(is_subset(&[1, 1], &[1, 1, 2]));
        assert!(!is_subset(&[1, 1], &[1, 2]));
        assert!(!is_subset(&[3], &[1, 2]));
    }
}
