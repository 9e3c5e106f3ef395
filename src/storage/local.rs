//! What a statement may leave in, or read from, its connection rather than
//! the store's files: the part of a state no file, lock or transaction
//! shows. One rule, read from the statement's words, used by the connection
//! (which marks itself when it runs such a statement) and by the programs
//! (which ask, of every statement they may run, whether a counter is read).
//!
//! A connection holds, apart from its open transaction (which the programs
//! keep as the statements it ran): its TEMP schema and tables, the
//! databases it attached, the settings its PRAGMAs changed, and three
//! counters, `last_insert_rowid()`, `changes()` and `total_changes()`; and
//! whether it has loaded the main database's schema, which decides whether a
//! statement on TEMP objects alone reads the main database (taking its lock,
//! rolling a hot journal back). Nothing else of SQLite's `sqlite3` object is
//! visible to SQL (the page cache only makes reads faster; the PRNG is the
//! process's).
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
    /// Of those, something no state can read back: an attached database, a
    /// PRAGMA's setting (TEMP objects are read back from the connection's
    /// temp database).
    pub unknowable: bool,
    /// It may read `last_insert_rowid()`.
    pub reads_rowid: bool,
    /// It may read `changes()` or `total_changes()`.
    pub reads_changes: bool,
    /// It may read the main database's schema without reading the main
    /// database (a query with no `FROM`, such as `SELECT last_insert_rowid()`,
    /// or a statement on TEMP objects): on a new connection it then reads
    /// the schema, taking the main database's lock (and meeting BUSY, or
    /// rolling a hot journal back), and on one that has read it it does not.
    /// Its program gets new connections, never pooled ones.
    pub schema_only: bool,
    /// It changes the main schema (`CREATE`, `DROP`, `ALTER`).
    pub changes_schema: bool,
    /// Whether a connection has read the schema can show (the scenario
    /// may name a table that does not exist, or changes its schema): a
    /// statement on an object the schema it has lacks fails at once, with no
    /// lock, where a connection that has not read it reads it first, taking
    /// SHARED (and meeting BUSY, or rolling a hot journal back). Then a
    /// pooled connection forgets the schema it read, and whether one has is
    /// part of the state. Set for a whole scenario, by the file that
    /// compiles its programs.
    pub schema_state: bool,
}

impl LocalUse {
    /// What a connection opened for no program in particular watches: every
    /// statement's words, for state it leaves (it is pooled as before).
    pub(crate) const WATCHED: LocalUse = LocalUse {
        leaves: true,
        unknowable: false,
        reads_rowid: false,
        reads_changes: false,
        schema_only: false,
        changes_schema: false,
        schema_state: false,
    };

    /// Either's uses.
    pub(crate) fn or(self, other: LocalUse) -> LocalUse {
        LocalUse {
            leaves: self.leaves || other.leaves,
            unknowable: self.unknowable || other.unknowable,
            reads_rowid: self.reads_rowid || other.reads_rowid,
            reads_changes: self.reads_changes || other.reads_changes,
            schema_only: self.schema_only || other.schema_only,
            changes_schema: self.changes_schema || other.changes_schema,
            schema_state: self.schema_state || other.schema_state,
        }
    }

    /// Whether the connection's own knowledge of the schema must be kept
    /// as a new connection's would be, and hashed.
    pub(crate) fn schema_matters(self) -> bool {
        self.schema_only || self.schema_state
    }
}

/// The words that leave connection-local state behind: TEMP objects, which
/// the state reads back, and the others, which it cannot.
const TEMP: &[&str] = &["temp", "temporary"];
const UNKNOWABLE: &[&str] = &["attach", "detach", "pragma"];

/// What `sql` may do to its connection's own state (see the module's rule).
pub(crate) fn local_use(sql: &str) -> LocalUse {
    let mut used = LocalUse::default();
    let words = || {
        sql.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
    };
    // A query with no FROM reads no table (only, on a new connection, the
    // schema); one that has a FROM is taken to read one.
    let query = words().next().is_some_and(|w| {
        ["select", "values", "with"]
            .iter()
            .any(|q| w.eq_ignore_ascii_case(q))
    });
    if query && !words().any(|w| w.eq_ignore_ascii_case("from")) {
        used.schema_only = true;
    }
    used.changes_schema = words().next().is_some_and(|w| {
        ["create", "drop", "alter"]
            .iter()
            .any(|d| w.eq_ignore_ascii_case(d))
    });
    for word in words() {
        if TEMP.iter().any(|l| word.eq_ignore_ascii_case(l)) {
            used.leaves = true;
            used.schema_only = true;
        } else if UNKNOWABLE.iter().any(|l| word.eq_ignore_ascii_case(l)) {
            used.leaves = true;
            used.unknowable = true;
            used.schema_only = true;
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
        assert!(local_use("Pragma foreign_keys = ON").unknowable);
        assert!(!local_use("CREATE TEMP TABLE x (a)").unknowable);
        assert!(local_use("ATTACH 'b' AS b").leaves);
        assert!(!local_use("SELECT * FROM sqlite_temp_master").leaves);
        assert!(!local_use("SELECT temperature FROM t").leaves);
        assert!(local_use("SELECT last_insert_rowid()").reads_rowid);
        assert!(local_use("select TOTAL_CHANGES ()").reads_changes);
        assert!(!local_use("SELECT changed FROM t").reads_changes);
        assert_eq!(local_use("INSERT INTO t VALUES (1)"), LocalUse::default());
        assert!(local_use("SELECT 1 WHERE :r <> 0").schema_only);
        assert!(local_use(" values (1)").schema_only);
        assert!(!local_use("SELECT count(*) FROM t").schema_only);
        assert!(local_use("CREATE TEMP TABLE x (a)").schema_only);
        assert!(local_use("drop table t").changes_schema);
        assert!(local_use("ALTER TABLE t ADD c").changes_schema);
        assert!(!local_use("INSERT INTO created (a) VALUES (1)").changes_schema);
    }
}
