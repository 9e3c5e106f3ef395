//! Soundness bugs the search had, put back on demand, so that a test can
//! show the fuzzer ([`crate::fuzz`]) finds each: compiled into the
//! library's own unit tests only (`#[cfg(test)]`), so no build a user runs
//! can turn one on. The switch is per thread: each test its own.

use std::cell::Cell;

/// A bug fixed in issue 65, and the rule its fix keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bug {
    /// The state key leaves out what a connection holds (an open
    /// transaction without a lock, savepoints, TEMP tables, the counters).
    KeyWithoutConnection,
    /// A run inherits the last run's connections: a pooled connection keeps
    /// its `last_insert_rowid()` and counters, one with TEMP tables is pooled,
    /// and a rewind keeps a connection whose own state moved on.
    InheritedConnection,
    /// A step that ends other attempts (a power loss) does not race with
    /// their next steps.
    KillWithoutRace,
}

thread_local! {
    static ON: Cell<Option<Bug>> = const { Cell::new(None) };
}

/// Whether `bug` is put back on this thread.
pub(crate) fn on(bug: Bug) -> bool {
    ON.with(|on| on.get() == Some(bug))
}

/// Puts `bug` back on this thread while `f` runs.
pub(crate) fn with<T>(bug: Bug, f: impl FnOnce() -> T) -> T {
    ON.with(|on| on.set(Some(bug)));
    let result = f();
    ON.with(|on| on.set(None));
    result
}
