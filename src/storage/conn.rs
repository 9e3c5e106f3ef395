//! A connection to a database of a store: opened (or taken from the
//! store's pool of idle ones), bounded, running statements, killed as its
//! process would be, and dropped back into the pool. What it holds of the
//! locks is in `conn_locks.rs`.

use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

use super::bounds::{authorize, is_flag_pragma, spend_budget};
use super::footprint;
use super::locks::LockLevel;
use super::modes::Synchronous;
use super::sql::{run_sql, run_sql_named, run_sql_named_bound, Rows, SqlValue};
use super::vfs::{self, ActiveConn, ConnId, StoreInner};
use crate::{Error, Result};

/// A connection's rusqlite handle (see [`Conn::sqlite`]); derefs to
/// [`rusqlite::Connection`].
pub struct SqliteRef<'a> {
    sqlite: &'a Connection,
    _active: ActiveConn,
}

impl std::ops::Deref for SqliteRef<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.sqlite
    }
}

/// What a statement did to a row (serialized `insert`, `update`, `delete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeOp {
    Insert,
    Update,
    Delete,
}

/// A row a statement changed, as SQLite's update hook reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// What it did.
    pub op: ChangeOp,
    /// The table.
    pub table: String,
    /// The row's rowid.
    pub rowid: i64,
}

type ChangeLog = Arc<Mutex<Vec<Change>>>;

/// How many prepared statements a connection keeps for reuse.
const STATEMENT_CACHE: usize = 128;

/// One independent SQLite connection to a database of a [`Store`](super::Store).
pub struct Conn {
    pub(super) id: ConnId,
    label: String,
    pub(super) db: String,
    pub(super) store: Rc<StoreInner>,
    sqlite: Option<Connection>,
    changes: Option<ChangeLog>,
    /// Whether [`Conn::bound`] set its bounds (a pooled connection keeps them).
    bounded: std::cell::Cell<bool>,
    /// The flag PRAGMAs it ran last (a pooled connection keeps them).
    flags: std::cell::RefCell<String>,
    /// Its `PRAGMA synchronous` (a pooled connection keeps it).
    synchronous: std::cell::Cell<Synchronous>,
    /// Whether a statement it ran may have left state only it holds (see
    /// [`super::local_use`]): such a connection is never pooled, and its
    /// state cannot be copied or put back (TEMP objects are hashed:
    /// [`Conn::temp_image`]).
    local: std::cell::Cell<bool>,
    /// Whether, of that state, some cannot be read back: an attached
    /// database, a PRAGMA's setting (see [`Conn::temp_image`]).
    unknowable: std::cell::Cell<bool>,
    /// Whether its statements may leave such state at all (the program's
    /// words say so once, [`super::local_use`]); if not, none is read for
    /// it (reading every statement's words took 6% of a search).
    watch: bool,
}

/// A connection's counters, as `last_insert_rowid()`, `changes()` and
/// `total_changes()` read them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Counters {
    pub rowid: i64,
    pub changes: u64,
    pub total: u64,
}

/// Checks a store label or a database file name (the names the VFS accepts).
pub(super) fn check_name(field: &'static str, name: &str) -> Result<()> {
    if vfs::is_store_file_name(name) {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            format!(
                "{name:?} is not usable: use 1 to 64 ASCII letters, digits, '-', '_' or '.', not starting with '.' nor ending in '-shm'"
            ),
        ))
    }
}

/// Empties connection `sqlite`'s page caches (of every database it has
/// attached), so that its next reads take every page from the files.
///
/// Without a transaction open this is `SQLITE_FCNTL_RESET_CACHE`, which
/// drops the pages and keeps their memory for the next reads, as SQLite does
/// when it sees another connection changed a file. `sqlite3_db_release_memory`
/// (used with a transaction open, where the file control does nothing) also
/// frees each cache's bulk allocation, which the next read allocates again
/// (the three-producer search, which rewinds tens of thousands of times:
/// 2.6 -> 2.5 s natively).
fn empty_page_cache(sqlite: &rusqlite::Connection) -> Result<()> {
    use rusqlite::ffi;
    if !sqlite.is_autocommit() {
        return Ok(sqlite.release_memory()?);
    }
    // SAFETY: the handle is this live connection's; `sqlite3_db_name` gives
    // its schemas' names (index 1 is `temp`, private to the connection and
    // never a file of the store) until it returns null, and the file control
    // takes no argument.
    unsafe {
        let db = sqlite.handle();
        for index in (0..).filter(|&i| i != 1) {
            let name = ffi::sqlite3_db_name(db, index);
            if name.is_null() {
                break;
            }
            let code = ffi::sqlite3_file_control(
                db,
                name,
                ffi::SQLITE_FCNTL_RESET_CACHE,
                std::ptr::null_mut(),
            );
            if code != ffi::SQLITE_OK {
                return Err(Error::System(format!(
                    "cannot empty the page cache ({code})"
                )));
            }
        }
    }
    Ok(())
}

/// Makes a pooled connection forget the schemas it has read (`PRAGMA
/// writable_schema = RESET`, which takes no lock and reads nothing): its
/// next statement on a table reads the schema from the file, as a new
/// connection's does, taking SHARED (and meeting BUSY, or rolling a hot
/// journal back), where one that has read it prepares a statement on a
/// table that does not exist with no lock at all. It is not a new one in
/// everything: SQLite keeps the text encoding it read fixed, so a query with
/// no `FROM` no longer reads the schema (a fuzzer's find); programs with
/// one (`LocalUse::schema_only`) get new connections.
fn forget_schema(sqlite: &Connection, id: ConnId) -> Result<()> {
    let _active = ActiveConn::set(id);
    super::bounds::as_engine(|| sqlite.execute_batch("PRAGMA writable_schema = RESET"))
        .map_err(|e| Error::System(format!("cannot make a connection forget its schema: {e}")))
}

impl Conn {
    /// Whether it has loaded a schema (`SQLITE_DBSTATUS_SCHEMA_USED`: a
    /// loaded schema holds at least its schema table).
    pub fn schema_loaded(&self) -> bool {
        let Some(sqlite) = &self.sqlite else {
            return false;
        };
        let (mut used, mut highest) = (0, 0);
        // SAFETY: the handle is this live connection's; the two outputs are
        // valid for the call.
        unsafe {
            rusqlite::ffi::sqlite3_db_status(
                sqlite.handle(),
                rusqlite::ffi::SQLITE_DBSTATUS_SCHEMA_USED,
                &mut used,
                &mut highest,
                0,
            )
        };
        used > 0
    }

    /// A pooled connection is handed out as a new one would be to the
    /// statements `local` says they may run ([`super::local_use`]): its
    /// `last_insert_rowid()` set back to 0; if they read `changes()` or
    /// `total_changes()`, only one that never changed a row (as a new one);
    /// its schema forgotten ([`forget_schema`]); if they may read the
    /// schema without reading the main database (a query with no `FROM`, a
    /// TEMP table) or leave state in the connection, none.
    pub(super) fn open(
        store: &Rc<StoreInner>,
        db: &str,
        label: &str,
        local: super::LocalUse,
    ) -> Result<Conn> {
        let unchanged = local.reads_changes;
        let watch = local.leaves;
        check_name("database name", db)?;
        if label.is_empty() || label.chars().count() > 64 {
            return Err(Error::invalid("connection label", "use 1 to 64 characters"));
        }
        #[cfg(test)]
        let unchanged =
            unchanged && !crate::reintroduced::on(crate::reintroduced::Bug::InheritedConnection);
        if store.pooling.get() && !store.track_changes.get() && !local.schema_only {
            let mut pool = store.pool.borrow_mut();
            if let Some(i) = pool
                .iter()
                .position(|p| p.db == db && !(unchanged && p.changed))
            {
                let pooled = pool.swap_remove(i);
                drop(pool);
                // Its page cache may hold pages of another run with the same
                // change counter (interleavings differ): empty it, so that the
                // next read takes every page from the file.
                if !store.pool_keeps_caches.get() && !store.cache_is_current(pooled.id, db) {
                    let _active = ActiveConn::set(pooled.id);
                    empty_page_cache(&pooled.sqlite)?;
                }
                #[cfg(test)]
                let inherit =
                    crate::reintroduced::on(crate::reintroduced::Bug::InheritedConnection);
                #[cfg(not(test))]
                let inherit = false;
                if !inherit {
                    // SAFETY: the handle is this live connection's.
                    unsafe {
                        rusqlite::ffi::sqlite3_set_last_insert_rowid(pooled.sqlite.handle(), 0)
                    };
                }
                store.add_conn(pooled.id, label);
                // It forgets the schema it read, as a new connection has
                // none: otherwise a statement on a table that does not
                // exist fails at once where a new connection's reads the
                // schema first and may meet BUSY (a fuzzer's find).
                if !inherit && local.schema_state {
                    forget_schema(&pooled.sqlite, pooled.id)?;
                }
                // Opening reads the database header (the pager's page size,
                // without a lock); a pooled connection does what a new one
                // would, so that a step's footprint does not depend on
                // whether the pool had a connection to hand out.
                footprint::read(store.slot(db), footprint::Part::Data);
                return Ok(Conn {
                    id: pooled.id,
                    label: label.to_string(),
                    db: db.to_string(),
                    store: store.clone(),
                    sqlite: Some(pooled.sqlite),
                    changes: None,
                    bounded: std::cell::Cell::new(pooled.bounded),
                    flags: std::cell::RefCell::new(pooled.flags),
                    synchronous: std::cell::Cell::new(pooled.synchronous),
                    local: std::cell::Cell::new(false),
                    unknowable: std::cell::Cell::new(false),
                    watch,
                });
            }
        }
        let id = vfs::next_id();
        store.add_conn(id, label);
        // A plain name, not a URI: the VFS places it in the store of the
        // active connection (this one), and the connection's ATTACH names are
        // plain names too (no SQLITE_OPEN_URI; both builds have URIs off).
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let changes = store.track_changes.get().then(ChangeLog::default);
        let opened = {
            let _active = ActiveConn::set(id);
            Connection::open_with_flags_and_vfs(db, flags, vfs::VFS_NAME).and_then(|mut c| {
                // No busy handler: BUSY comes back at once and the scheduler
                // decides who runs next (rusqlite's default would wait 5 s).
                c.busy_timeout(Duration::ZERO)?;
                // rusqlite keeps 16 statements by default; a scenario's
                // program, or the expressions a build evaluates, have more,
                // and a cache smaller than the working set prepares every
                // statement anew each time it runs.
                c.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
                // A store that keeps durability is a running server's: its
                // pool keeps connections open, so the last one to close
                // never checkpoints the log (a checkpoint syncs every
                // commit, which only a clean shutdown does).
                if store.keeps_durability() {
                    c.set_db_config(
                        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                        true,
                    )?;
                }
                if let Some(log) = &changes {
                    let log = log.clone();
                    c.update_hook(Some(move |action, _db: &str, table: &str, rowid| {
                        let op = match action {
                            rusqlite::hooks::Action::SQLITE_INSERT => ChangeOp::Insert,
                            rusqlite::hooks::Action::SQLITE_UPDATE => ChangeOp::Update,
                            rusqlite::hooks::Action::SQLITE_DELETE => ChangeOp::Delete,
                            // The hook reports nothing else.
                            _ => return,
                        };
                        if let Ok(mut log) = log.lock() {
                            log.push(Change {
                                op,
                                table: table.to_string(),
                                rowid,
                            });
                        }
                    }))?;
                }
                Ok(c)
            })
        };
        match opened {
            Ok(sqlite) => Ok(Conn {
                id,
                label: label.to_string(),
                db: db.to_string(),
                store: store.clone(),
                sqlite: Some(sqlite),
                changes,
                bounded: std::cell::Cell::new(false),
                flags: std::cell::RefCell::new(String::new()),
                synchronous: std::cell::Cell::new(Synchronous::default()),
                local: std::cell::Cell::new(false),
                unknowable: std::cell::Cell::new(false),
                watch,
            }),
            Err(e) => {
                store.remove_conn(id);
                Err(e.into())
            }
        }
    }

    /// The connection's id, unique on its thread.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The connection's label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The database file this connection opened.
    pub fn db(&self) -> &str {
        &self.db
    }

    /// The name of its database's rollback journal.
    pub fn journal(&self) -> String {
        format!("{}-journal", self.db)
    }

    /// The rows changed since the last call, if the store tracks changes.
    pub fn take_changes(&self) -> Vec<Change> {
        self.changes
            .as_ref()
            .and_then(|log| log.lock().ok().map(|mut log| std::mem::take(&mut *log)))
            .unwrap_or_default()
    }

    /// Whether the connection is still alive (not killed).
    pub fn is_alive(&self) -> bool {
        self.sqlite.is_some()
    }

    /// Whether its store killed it under its owner ([`Store::power_loss`](super::Store::power_loss)):
    /// it can only be dropped (or [killed](Conn::kill)) now.
    pub fn lost_power(&self) -> bool {
        self.sqlite.is_some() && self.store.is_killed(self.id)
    }

    /// The underlying rusqlite connection, while the connection is alive.
    ///
    /// While the returned guard lives, the VFS attributes the files SQLite
    /// opens to this connection (its journals, attached databases): hold it
    /// only for calls on this connection.
    pub fn sqlite(&self) -> Result<SqliteRef<'_>> {
        let sqlite = self.sqlite.as_ref().ok_or_else(|| Error::Dead {
            connection: self.label.clone(),
        })?;
        Ok(SqliteRef {
            sqlite,
            _active: ActiveConn::set(self.id),
        })
    }

    /// Runs one SQL statement to completion (see [`run_sql`]).
    pub fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<Rows> {
        let sqlite = self.sqlite()?;
        self.note_local(sql);
        run_sql(&sqlite, sql, params)
    }

    /// Runs one SQL statement to completion, as [`Conn::execute`], without
    /// collecting its rows: a statement redone for its effect on the
    /// connection (its locks, its transaction), whose result is known.
    pub fn execute_discarding(&self, sql: &str, params: &[SqlValue]) -> Result<()> {
        let sqlite = self.sqlite()?;
        self.note_local(sql);
        let mut statement = sqlite.prepare_cached(sql)?;
        let mut rows = statement.query(rusqlite::params_from_iter(params))?;
        while rows.next()?.is_some() {}
        Ok(())
    }

    /// Runs one SQL statement with named parameters (see [`run_sql_named`]).
    pub fn execute_named(
        &self,
        sql: &str,
        bind: &dyn Fn(&str) -> Option<SqlValue>,
    ) -> Result<(Rows, Vec<SqlValue>)> {
        let sqlite = self.sqlite()?;
        self.note_local(sql);
        run_sql_named(&sqlite, sql, bind)
    }

    /// As [`Conn::execute_named`], keeping the values bound when the
    /// statement fails.
    pub fn execute_named_bound(
        &self,
        sql: &str,
        bind: &dyn Fn(&str) -> Option<SqlValue>,
    ) -> (Vec<SqlValue>, Result<Rows>) {
        match self.sqlite() {
            Ok(sqlite) => {
                self.note_local(sql);
                run_sql_named_bound(&sqlite, sql, bind)
            }
            Err(e) => (Vec::new(), Err(e)),
        }
    }

    /// Bounds what one statement on this connection may cost, for SQL a
    /// caller wrote: statements run under [`with_budget`](super::with_budget) are interrupted
    /// past their VM instructions, and no string or blob may exceed
    /// `max_bytes` (so `randomblob(1e9)` cannot exhaust memory), and the
    /// [`DENIED_PRAGMAS`](super::DENIED_PRAGMAS) cannot be set.
    pub fn bound(&self, max_bytes: i32) -> Result<()> {
        // Once per connection: setting an authorizer expires every prepared
        // statement, and a pooled connection keeps its statements across runs.
        if self.bounded.get() {
            return Ok(());
        }
        let sqlite = self.sqlite()?;
        // SAFETY: the handle is this live connection's; the handler is a
        // plain function with no user data.
        unsafe {
            rusqlite::ffi::sqlite3_progress_handler(
                sqlite.handle(),
                1000,
                Some(spend_budget),
                std::ptr::null_mut(),
            );
        }
        sqlite.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH, max_bytes)?;
        // SAFETY: as above; the authorizer is a plain function.
        let code = unsafe {
            rusqlite::ffi::sqlite3_set_authorizer(
                sqlite.handle(),
                Some(authorize),
                std::ptr::null_mut(),
            )
        };
        if code != rusqlite::ffi::SQLITE_OK {
            return Err(Error::System(format!("cannot set the authorizer ({code})")));
        }
        self.bounded.set(true);
        Ok(())
    }

    /// Sets its `PRAGMA synchronous`, which SQL a caller wrote may not set
    /// once the connection is [bounded](Conn::bound): the engine sets it,
    /// from the scenario's parameter. Nothing runs if it already has it.
    pub fn set_synchronous(&self, level: Synchronous) -> Result<()> {
        if self.synchronous.get() == level {
            return Ok(());
        }
        let sqlite = self.sqlite()?;
        let bounded = self.bounded.get();
        let authorizer = |on: bool| {
            // SAFETY: the handle is this live connection's; the authorizer is
            // a plain function with no user data.
            unsafe {
                rusqlite::ffi::sqlite3_set_authorizer(
                    sqlite.handle(),
                    on.then_some(authorize as _),
                    std::ptr::null_mut(),
                )
            }
        };
        if bounded {
            authorizer(false);
        }
        let set = sqlite.execute_batch(&level.pragma());
        if bounded && authorizer(true) != rusqlite::ffi::SQLITE_OK {
            return Err(Error::System("cannot set the authorizer again".into()));
        }
        set?;
        self.synchronous.set(level);
        Ok(())
    }

    /// Runs a database's PRAGMAs on this connection. PRAGMAs that only set
    /// one of the connection's flags ([`FLAG_PRAGMAS`](super::FLAG_PRAGMAS)) last as long as the
    /// connection, and setting one expires every prepared statement: a
    /// pooled connection that ran the same text before does not run it
    /// again. Anything else (which may write the file) always runs.
    pub fn apply_pragmas(&self, sql: &str) -> Result<()> {
        let only_flags = sql
            .split(';')
            .all(|s| s.trim().is_empty() || is_flag_pragma(s));
        if only_flags && *self.flags.borrow() == sql {
            return Ok(());
        }
        // The database's own PRAGMAs, run on every connection it opens: not
        // state of the connection's own (a step's PRAGMA is).
        self.sqlite()?.execute_batch(sql)?;
        *self.flags.borrow_mut() = if only_flags {
            sql.to_string()
        } else {
            String::new()
        };
        Ok(())
    }

    /// Empties its page cache, so that its next read takes every page from
    /// the file, unless the file holds the very bytes it held when this
    /// connection last gave up its locks: for a connection whose files were
    /// put back to other bytes ([`Store::rewind`](super::Store::rewind)), which the file change
    /// counter might not tell (two branches of a search can leave different
    /// bytes under one counter).
    pub fn forget_stale_cache(&self) -> Result<()> {
        if self.store.cache_is_current(self.id, &self.db) {
            return Ok(());
        }
        empty_page_cache(&*self.sqlite()?)
    }

    /// Whether it has a transaction open (it is alive and not in autocommit).
    pub fn in_transaction(&self) -> bool {
        self.sqlite.as_ref().is_some_and(|c| !c.is_autocommit())
    }

    /// Ends the transaction it has open, if any, rolling it back (its locks
    /// are released). Whether it had one.
    pub fn roll_back(&self) -> Result<bool> {
        let sqlite = self.sqlite()?;
        if sqlite.is_autocommit() {
            return Ok(false);
        }
        // Prepared once per connection: a search rolls back at every rewind.
        sqlite.prepare_cached("ROLLBACK")?.execute([])?;
        Ok(true)
    }

    /// Runs several SQL statements (a schema, seed rows).
    pub fn execute_batch(&self, sql: &str) -> Result<()> {
        let sqlite = self.sqlite()?;
        self.note_local(sql);
        Ok(sqlite.execute_batch(sql)?)
    }

    /// Marks it as holding state of its own if `sql` may leave some.
    fn note_local(&self, sql: &str) {
        if !self.watch || self.unknowable.get() {
            return;
        }
        let used = super::local_use(sql);
        if used.leaves {
            self.local.set(true);
        }
        if used.unknowable {
            self.unknowable.set(true);
        }
    }

    /// Whether a statement it ran may have left state only it holds (a TEMP
    /// object, an attached database, a PRAGMA's setting; see
    /// [`super::local_use`]): what no copy or rewind can put back.
    pub fn holds_local_state(&self) -> bool {
        self.local.get()
    }

    /// Whether the state only it holds can be read back ([`Conn::temp_image`]).
    pub fn local_state_known(&self) -> bool {
        !self.local.get() || (!self.unknowable.get() && self.schema_loaded())
    }

    /// The state only it holds, as bytes: its temp database, page by page
    /// (empty when it has none), read without touching any other database.
    /// `None` where that cannot be known: it attached a database or set a
    /// PRAGMA, or it has not loaded its schemas (reading the temp database
    /// would then read the main one's first).
    pub fn temp_image(&self) -> Option<Vec<u8>> {
        if !self.local.get() {
            return Some(Vec::new());
        }
        if !self.local_state_known() {
            return None;
        }
        let sqlite = self.sqlite.as_ref()?;
        let _active = ActiveConn::set(self.id);
        // Its own statement, on the temp database alone (the schemas are
        // loaded: none is read again); `sqlite3_serialize` would run
        // `BEGIN IMMEDIATE` on every database for an empty one.
        let pages: i64 = sqlite
            .query_row("PRAGMA temp.page_count", [], |row| row.get(0))
            .ok()?;
        if pages == 0 {
            return Some(Vec::new());
        }
        let mut size: rusqlite::ffi::sqlite3_int64 = 0;
        // SAFETY: the handle is this live connection's; the schema name is
        // NUL-terminated; the buffer SQLite returns is `size` bytes long and
        // freed with `sqlite3_free`.
        unsafe {
            let bytes =
                rusqlite::ffi::sqlite3_serialize(sqlite.handle(), c"temp".as_ptr(), &mut size, 0);
            if bytes.is_null() {
                return None;
            }
            let image = std::slice::from_raw_parts(bytes, usize::try_from(size).ok()?).to_vec();
            rusqlite::ffi::sqlite3_free(bytes.cast());
            Some(image)
        }
    }

    /// Its counters now (all 0 on a dead connection).
    pub fn counters(&self) -> Counters {
        self.sqlite
            .as_ref()
            .map_or(Counters::default(), |c| Counters {
                rowid: c.last_insert_rowid(),
                changes: c.changes(),
                total: c.total_changes(),
            })
    }

    /// Reads the schema, as its first statement that needs one would (a
    /// rewound connection takes back the checkpoint's schema): takes SHARED
    /// and lets it go. Declines (false) inside a transaction, beside a
    /// rollback journal (reading might roll it back: the state would not be
    /// the checkpoint's), or when the lock is refused.
    pub fn load_schema(&self) -> Result<bool> {
        let Some(sqlite) = &self.sqlite else {
            return Ok(false);
        };
        let journal = self.journal();
        let beside_journal = self
            .store
            .file_names()
            .iter()
            .any(|(name, len)| *name == journal && *len > 0);
        if !sqlite.is_autocommit() || beside_journal {
            return Ok(false);
        }
        let _active = ActiveConn::set(self.id);
        match sqlite.prepare("SELECT 1 FROM sqlite_schema LIMIT 0") {
            Ok(_) => Ok(self.schema_loaded()),
            Err(_) => Ok(false),
        }
    }

    /// Sets its `last_insert_rowid()` (a rewound connection takes back the
    /// checkpoint's).
    pub fn set_last_insert_rowid(&self, rowid: i64) {
        if let Some(c) = &self.sqlite {
            // SAFETY: the handle is this live connection's.
            unsafe { rusqlite::ffi::sqlite3_set_last_insert_rowid(c.handle(), rowid) };
        }
    }

    /// Kills the connection as if its process called `_exit`: its locks
    /// vanish at once, and nothing it would still write reaches the store
    /// (not even the rollback SQLite attempts when the handle closes), so an
    /// open transaction leaves its hot journal for the next connection.
    pub fn kill(&mut self) -> Result<()> {
        let sqlite = self.sqlite.take().ok_or_else(|| Error::Dead {
            connection: self.label.clone(),
        })?;
        self.store.kill(self.id);
        let _active = ActiveConn::set(self.id);
        if let Err((sqlite, _)) = sqlite.close() {
            // Only outstanding statements make close fail: the dead handle is
            // leaked (safe: it is never used again), and what its files held
            // in the store goes as a dead process's descriptors do.
            std::mem::forget(sqlite);
            self.store.close_all_of(self.id);
        }
        Ok(())
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        let poolable = self.store.pooling.get()
            && self.changes.is_none()
            && !self.store.is_killed(self.id)
            && self.store.pool.borrow().len() < 16;
        if poolable {
            // A run left before its end (a search cut it): roll back, as
            // closing would, and keep the connection with its statements.
            let _ = self.roll_back();
        }
        #[cfg(test)]
        let local = self.local.get()
            && !crate::reintroduced::on(crate::reintroduced::Bug::InheritedConnection);
        #[cfg(not(test))]
        let local = self.local.get();
        let reusable = poolable
            && !local
            && self.sqlite.as_ref().is_some_and(Connection::is_autocommit)
            && self.lock_level() == LockLevel::None;
        if reusable {
            if let Some(sqlite) = self.sqlite.take() {
                let changed = sqlite.total_changes() > 0;
                self.store.pool.borrow_mut().push(vfs::Pooled {
                    id: self.id,
                    db: self.db.clone(),
                    sqlite,
                    bounded: self.bounded.get(),
                    flags: self.flags.take(),
                    synchronous: self.synchronous.get(),
                    changed,
                });
                self.store.remove_conn(self.id);
                return;
            }
        }
        if let Some(sqlite) = self.sqlite.take() {
            // A graceful close: SQLite rolls back an open transaction.
            let _active = ActiveConn::set(self.id);
            if let Err((sqlite, _)) = sqlite.close() {
                std::mem::forget(sqlite);
            }
        }
        self.store.remove_conn(self.id);
    }
}
