//! What a statement may leave in, or read from, its connection rather than
//! the store's files: the part of a state no file, lock or transaction
//! shows. One rule, read from the statement's words, used by the connection
//! (which marks itself when it runs such a statement) and by the programs
//! (which ask, of every statement they may run, whether a counter is read).
//!
//! A connection holds, apart from its open transaction (which the programs
//! keep as the statements it ran): its TEMP schema and tables, the
//! databases it attached, the settings its PRAGMAs changed, and three
//! counters, `last_insert_rowid()`, `changes()` and `total_changes()`.
//! Nothing else of SQLite's `sqlite3` object is visible to SQL (the page and
//! schema caches only make reads faster; the PRNG is the process's).
//!
//! The words are matched as whole SQL words, case-insensitively, anywhere in
//! the text (a string literal or a column named `temp` counts too): a
//! statement that might is treated as one that does, which can only keep
//! states apart that were equal, never merge two that differ.

/// What one statement may do to its connection's own state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LocalUse {
    /// It may leave something only this connection sees: a TEMP object, an
    /// attached database, a PRAGMA's setting.
    pub leaves: bool,
    /// It may read `last_insert_rowid()`.
    pub reads_rowid: bool,
    /// It may read `changes()` or `total_changes()`.
    pub reads_changes: bool,
}

impl LocalUse {
    /// Either's uses.
    pub(crate) fn or(self, other: LocalUse) -> LocalUse {
        LocalUse {
            leaves: self.leaves || other.leaves,
            reads_rowid: self.reads_rowid || other.reads_rowid,
            reads_changes: self.reads_changes || other.reads_changes,
        }
    }
}

/// The words that leave connection-local state behind.
const LEAVING: &[&str] = &["temp", "temporary", "attach", "detach", "pragma"];

/// What `sql` may do to its connection's own state (see the module's rule).
pub(crate) fn local_use(sql: &str) -> LocalUse {
    let mut used = LocalUse::default();
    for word in sql
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
    {
        if LEAVING.iter().any(|l| word.eq_ignore_ascii_case(l)) {
            used.leaves = true;
        } else if word.eq_ignore_ascii_case("last_insert_rowid") {
            used.reads_rowid = true;
        } else if word.eq_ignore_ascii_case("changes") || word.eq_ignore_ascii_case("total_changes")
        {
            used.reads_changes = true;
        }
    }
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_whole_and_any_case() {
        assert!(local_use("CREATE TEMP TABLE x (a)").leaves);
        assert!(local_use("create table \"temp\".x (a)").leaves);
        assert!(local_use("Pragma foreign_keys = ON").leaves);
        assert!(local_use("ATTACH 'b' AS b").leaves);
        assert!(!local_use("SELECT * FROM sqlite_temp_master").leaves);
        assert!(!local_use("SELECT temperature FROM t").leaves);
        assert!(local_use("SELECT last_insert_rowid()").reads_rowid);
        assert!(local_use("select TOTAL_CHANGES ()").reads_changes);
        assert!(!local_use("SELECT changed FROM t").reads_changes);
        assert_eq!(local_use("INSERT INTO t VALUES (1)"), LocalUse::default());
    }
}
