//! What SQL a caller wrote may cost and may set, on a connection bounded by
//! [`Conn::bound`](super::Conn::bound): the budgets of SQLite VM
//! instructions (one statement's, and a whole run's with its bytes), the
//! caller's way of asking the engine to stop, and the PRAGMAs a scenario may
//! not set (SQLite's progress handler and authorizer, both plain functions
//! reading this thread's state).

use std::rc::Rc;

use crate::Error;

thread_local! {
    /// Progress-handler calls left to the statement now running (each call
    /// is 1,000 SQLite VM instructions); unbounded outside [`with_budget`].
    static VM_BUDGET: std::cell::Cell<u64> = const { std::cell::Cell::new(u64::MAX) };
    /// What is left of the budget of the run whose step is running
    /// ([`with_run_budget`]); unbounded outside one.
    static RUN_LEFT: std::cell::Cell<RunLeft> = const { std::cell::Cell::new(RunLeft::UNBOUNDED) };
    /// Which of the run's budgets ran out during the step running, if one did.
    static RUN_OUT: std::cell::Cell<Option<RunBudget>> = const { std::cell::Cell::new(None) };
    /// The caller's way of asking the engine to stop, if it gave one
    /// ([`set_interrupt`]).
    static INTERRUPT: std::cell::RefCell<Option<Rc<dyn Fn() -> bool>>> = const { std::cell::RefCell::new(None) };
    /// Whether a statement was stopped because the caller asked.
    static INTERRUPTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Gives the engine a way to hear a caller that wants it to stop: `asks`
/// answers whether it does (read every thousand SQLite instructions of a
/// statement and before every step of a run). `None` removes it.
#[cfg(target_family = "wasm")]
pub(crate) fn set_interrupt(asks: Option<Rc<dyn Fn() -> bool>>) {
    INTERRUPT.with(|i| *i.borrow_mut() = asks);
}

/// Whether the caller asks the engine to stop now.
pub(crate) fn interrupt_asked() -> bool {
    let asks = INTERRUPT.with(|i| i.borrow().clone());
    asks.is_some_and(|asks| asks())
}

/// Of the engine's frequent checks (before every step of a run, every
/// thousand SQLite instructions), how many pass between two askings of the
/// caller: in the browser each asking reads the caller's flag through
/// JavaScript, which asked at every check cost the page's search about 4%
/// of its runs (measured 2026-12-05); one in 32 is still heard within a
/// fraction of a millisecond.
const ASK_EVERY: u32 = 32;

thread_local! {
    /// Checks left before the caller is asked again ([`ASK_EVERY`]).
    static UNTIL_ASKED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// [`interrupt_asked`], asked at one frequent check in [`ASK_EVERY`].
pub(crate) fn interrupt_due() -> bool {
    let due = UNTIL_ASKED.with(|left| match left.get() {
        0 => {
            left.set(ASK_EVERY - 1);
            true
        }
        n => {
            left.set(n - 1);
            false
        }
    });
    due && interrupt_asked()
}

/// Whether a statement was stopped because the caller asked, since the
/// last call (which clears it).
pub(crate) fn take_interrupted() -> bool {
    INTERRUPTED.with(|i| i.replace(false))
}

/// What is left of a run's budget while one of its steps runs.
#[derive(Debug, Clone, Copy)]
struct RunLeft {
    /// Progress-handler calls (1,000 SQLite VM instructions each).
    ticks: u64,
    /// Bytes of values the step may still build.
    bytes: u64,
}

impl RunLeft {
    const UNBOUNDED: RunLeft = RunLeft {
        ticks: u64::MAX,
        bytes: u64::MAX,
    };
}

/// A budget of a whole run, all its statements and values together
/// ([`crate::sim::Budgets`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunBudget {
    /// SQLite VM instructions, every statement of the run together.
    Instructions,
    /// Bytes of the values the run builds: rows its statements return and
    /// the text its templates fill in.
    Bytes,
}

/// SQLite calls this every 1,000 VM instructions on a bounded connection;
/// a non-zero answer interrupts the statement (`SQLITE_INTERRUPT`).
pub(super) extern "C" fn spend_budget(_: *mut std::ffi::c_void) -> std::ffi::c_int {
    if interrupt_due() {
        INTERRUPTED.with(|i| i.set(true));
        return 1;
    }
    let run_out = RUN_LEFT.with(|left| {
        let mut now = left.get();
        match now.ticks {
            0 => true,
            u64::MAX => false,
            n => {
                now.ticks = n - 1;
                left.set(now);
                false
            }
        }
    });
    if run_out {
        RUN_OUT.with(|out| out.set(Some(RunBudget::Instructions)));
        return 1;
    }
    VM_BUDGET.with(|left| match left.get() {
        0 => 1,
        n => {
            left.set(n - 1);
            0
        }
    })
}

/// Runs `work`, one step of a run, with `instructions` SQLite VM
/// instructions (every statement on a bounded connection together) and
/// `bytes` of values left to the run; returns what it returned and what it
/// spent of each. A statement past the instructions is interrupted, as one
/// past its own budget is ([`with_budget`]); values past the bytes are not
/// built ([`charge_bytes`]). [`run_budget_out`] tells which ran out.
pub(crate) fn with_run_budget<T>(
    instructions: u64,
    bytes: u64,
    work: impl FnOnce() -> T,
) -> (T, u64, u64) {
    let start = RunLeft {
        ticks: instructions / 1000,
        bytes,
    };
    RUN_LEFT.with(|left| left.set(start));
    RUN_OUT.with(|out| out.set(None));
    let result = work();
    let end = RUN_LEFT.with(|left| left.replace(RunLeft::UNBOUNDED));
    (
        result,
        (start.ticks - end.ticks) * 1000,
        start.bytes - end.bytes,
    )
}

/// Which budget of the run ran out during the step that just ran (under
/// [`with_run_budget`]), if one did.
pub(crate) fn run_budget_out() -> Option<RunBudget> {
    RUN_OUT.with(std::cell::Cell::get)
}

/// Charges `bytes` of a value about to be built to the run whose step is
/// running: false (and the run's bytes budget marked spent) if they do not
/// fit, and then the value must not be built. Always true outside a run.
pub(crate) fn charge_bytes(bytes: usize) -> bool {
    let fits = RUN_LEFT.with(|left| {
        let mut now = left.get();
        if now.bytes == u64::MAX {
            return true;
        }
        match now.bytes.checked_sub(bytes as u64) {
            Some(rest) => {
                now.bytes = rest;
                left.set(now);
                true
            }
            None => {
                now.bytes = 0;
                left.set(now);
                false
            }
        }
    });
    if !fits {
        RUN_OUT.with(|out| out.set(Some(RunBudget::Bytes)));
    }
    fits
}

/// PRAGMAs a scenario's SQL may not set: they would change how the engine
/// stores, locks or waits (a busy timeout would sleep instead of answering
/// BUSY to the scheduler), or let it rewrite the schema's bytes.
pub(crate) const DENIED_PRAGMAS: &[&str] = &[
    "busy_timeout",
    "cache_size",
    "cache_spill",
    "hard_heap_limit",
    "journal_mode",
    "journal_size_limit",
    "locking_mode",
    "max_page_count",
    "mmap_size",
    "page_size",
    "schema_version",
    "soft_heap_limit",
    "synchronous",
    "temp_store",
    "threads",
    "wal_autocheckpoint",
    "wal_checkpoint",
    "writable_schema",
];

/// PRAGMAs that set a flag of the connection and nothing else: running one
/// again with the same value changes nothing but the prepared statements.
/// (`defer_foreign_keys` is not one: it resets at every commit.)
pub(crate) const FLAG_PRAGMAS: &[&str] = &[
    "automatic_index",
    "cell_size_check",
    "foreign_keys",
    "ignore_check_constraints",
    "query_only",
    "recursive_triggers",
    "reverse_unordered_selects",
    "trusted_schema",
];

/// Whether `statement` is `PRAGMA flag = value` (or `PRAGMA flag(value)`)
/// with a flag of [`FLAG_PRAGMAS`] and a plain word or number as its value.
pub(super) fn is_flag_pragma(statement: &str) -> bool {
    let words: String = statement
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    let Some(rest) = words.strip_prefix("pragma") else {
        return false;
    };
    let (name, value) = match rest.split_once('=') {
        Some((name, value)) => (name, value),
        None => match rest.strip_suffix(')').and_then(|r| r.split_once('(')) {
            Some((name, value)) => (name, value),
            None => return false,
        },
    };
    FLAG_PRAGMAS.contains(&name)
        && !value.is_empty()
        && value.chars().all(|c| c.is_ascii_alphanumeric())
}

thread_local! {
    /// The PRAGMA the authorizer refused last, for the error's sentence.
    static DENIED: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    /// Whether the engine runs its own statement ([`as_engine`]).
    static ENGINE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, in which the authorizer lets the engine's own statements set
/// what a scenario's may not (setting the authorizer off and on instead
/// would expire every statement the connection has prepared).
pub(super) fn as_engine<T>(f: impl FnOnce() -> T) -> T {
    ENGINE.with(|e| e.set(true));
    let out = f();
    ENGINE.with(|e| e.set(false));
    out
}

/// SQLite's authorizer on a bounded connection: refuses setting the
/// [`DENIED_PRAGMAS`] (reading them is fine), and `wal_checkpoint` at all.
pub(super) extern "C" fn authorize(
    _: *mut std::ffi::c_void,
    action: std::ffi::c_int,
    first: *const std::ffi::c_char,
    second: *const std::ffi::c_char,
    _: *const std::ffi::c_char,
    _: *const std::ffi::c_char,
) -> std::ffi::c_int {
    if action != rusqlite::ffi::SQLITE_PRAGMA || first.is_null() || ENGINE.with(|e| e.get()) {
        return rusqlite::ffi::SQLITE_OK;
    }
    // SAFETY: SQLite passes NUL-terminated strings that live for this call.
    let name = unsafe { std::ffi::CStr::from_ptr(first) }
        .to_string_lossy()
        .to_ascii_lowercase();
    let sets = !second.is_null() || name == "wal_checkpoint";
    if sets && DENIED_PRAGMAS.contains(&name.as_str()) {
        DENIED.with(|d| *d.borrow_mut() = Some(name));
        return rusqlite::ffi::SQLITE_DENY;
    }
    rusqlite::ffi::SQLITE_OK
}

/// The sentence for a statement the authorizer refused, if it was one.
pub(crate) fn refusal(error: &Error) -> Option<String> {
    let denied = error
        .sqlite_code()
        .is_some_and(|c| c & 0xff == rusqlite::ffi::SQLITE_AUTH);
    if !denied {
        return None;
    }
    let name = DENIED.with(|d| d.borrow().clone()).unwrap_or_default();
    Some(format!(
        "PRAGMA {name} may not be set in a scenario: it would change how the engine stores, locks or waits (refused: {})",
        DENIED_PRAGMAS.join(", ")
    ))
}

/// The engine's message for a statement it refused, and the byte offset of
/// the token it names, if any: what `check` turns into a line and column.
pub(crate) fn message_and_offset(error: &Error) -> (String, Option<usize>) {
    if let Some(sentence) = refusal(error) {
        return (sentence, None);
    }
    match error {
        Error::Sqlite(rusqlite::Error::SqlInputError { msg, offset, .. }) => {
            (msg.clone(), usize::try_from(*offset).ok())
        }
        Error::Sqlite(rusqlite::Error::SqliteFailure(_, Some(msg))) => (msg.clone(), None),
        Error::Sqlite(rusqlite::Error::MultipleStatement) => (
            "a step runs one statement: there is more after the first".to_string(),
            None,
        ),
        other => (other.to_string(), None),
    }
}

/// Runs `work` with every statement on a bounded connection (see
/// [`Conn::bound`](super::Conn::bound)) limited to about `instructions` SQLite VM instructions.
pub(crate) fn with_budget<T>(instructions: u64, work: impl FnOnce() -> T) -> T {
    VM_BUDGET.with(|left| left.set(instructions / 1000));
    let result = work();
    VM_BUDGET.with(|left| left.set(u64::MAX));
    result
}

/// Whether an error is SQLite's answer to a statement that ran out of its budget.
pub(crate) fn is_interrupt(error: &Error) -> bool {
    error
        .sqlite_code()
        .is_some_and(|c| c & 0xff == rusqlite::ffi::SQLITE_INTERRUPT)
}
