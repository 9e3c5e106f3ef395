//! `replayground sql-worker` (hidden): one plain SQLite connection served
//! over stdin and stdout, for the differential tests.

use clap::Args;
use replayground::store;

// The arguments of `replayground sql-worker`.
#[derive(Args)]
pub(super) struct SqlWorker {
    /// The database file.
    db: std::path::PathBuf,
    /// Note the file operations each statement makes (see `io_log.rs`):
    /// each reply carries them as `io`, and a last line, after the
    /// connection closed, those of the close.
    #[arg(long)]
    io_log: bool,
}

impl SqlWorker {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        if self.io_log {
            super::io_log::register()?;
        }
        sql_worker(&self.db, self.io_log)
    }
}

/// The lock the unix VFS holds for `connection` on its main database
/// (0 NONE to 4 EXCLUSIVE): `SQLITE_FCNTL_LOCKSTATE`, the handle's `eFileLock`.
fn unix_lock_state(connection: &rusqlite::Connection) -> i32 {
    use rusqlite::ffi;
    let mut state: std::ffi::c_int = -1;
    // SAFETY: the handle is open for the whole call; LOCKSTATE writes one int.
    let rc = unsafe {
        ffi::sqlite3_file_control(
            connection.handle(),
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_LOCKSTATE,
            (&mut state as *mut std::ffi::c_int).cast(),
        )
    };
    if rc == ffi::SQLITE_OK {
        state
    } else {
        -1
    }
}

/// Runs statements on a plain rusqlite connection (unix VFS, no busy
/// timeout), one JSON line in and one JSON line out per statement. Each
/// reply also tells the lock the connection holds afterwards.
///
/// A line is the statement as a JSON string, or `{"open": SQL}`: prepare
/// it, step it once and leave it open (the reply's `stepped` is what
/// `sqlite3_step` returned). Open statements are finalized at the end of
/// the input, before the connection closes; a killed worker never does.
fn sql_worker(db: &std::path::Path, io_log: bool) -> Result<(), Box<dyn std::error::Error>> {
    use rusqlite::ffi;
    use std::io::{BufRead, Write};
    let connection = rusqlite::Connection::open(db)?;
    connection.busy_timeout(std::time::Duration::ZERO)?;
    let mut open: Vec<*mut ffi::sqlite3_stmt> = Vec::new();
    let stdout = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let request: serde_json::Value = serde_json::from_str(&line?)?;
        let lock = |connection: &rusqlite::Connection| unix_lock_state(connection);
        let reply = if let Some(sql) = request.get("open").and_then(|s| s.as_str()) {
            let sql = std::ffi::CString::new(sql)?;
            let db = unsafe { connection.handle() };
            let mut statement = std::ptr::null_mut();
            // SAFETY: the connection is open for the whole loop; the
            // statement is finalized below before it closes.
            let rc = unsafe {
                ffi::sqlite3_prepare_v2(db, sql.as_ptr(), -1, &mut statement, std::ptr::null_mut())
            };
            let rc = if rc != ffi::SQLITE_OK {
                unsafe { ffi::sqlite3_extended_errcode(db) }
            } else {
                open.push(statement);
                match unsafe { ffi::sqlite3_step(statement) } {
                    rc @ (ffi::SQLITE_ROW | ffi::SQLITE_DONE) => rc,
                    _ => unsafe { ffi::sqlite3_extended_errcode(db) },
                }
            };
            serde_json::json!({ "stepped": rc, "lock": lock(&connection) })
        } else {
            let sql = request
                .as_str()
                .ok_or("a line is a JSON string or {\"open\": SQL}")?;
            match store::run_sql(&connection, sql, &[]) {
                Ok(rows) => serde_json::json!({ "rows": rows.rows, "lock": lock(&connection) }),
                Err(e) => serde_json::json!({
                    "code": e.sqlite_code().unwrap_or(-1),
                    "lock": lock(&connection),
                }),
            }
        };
        let mut reply = reply;
        if io_log {
            reply["io"] = super::io_log::take().into();
        }
        let mut out = stdout.lock();
        writeln!(out, "{reply}")?;
        out.flush()?;
    }
    for statement in open {
        // SAFETY: prepared on this connection, which is still open.
        unsafe { ffi::sqlite3_finalize(statement) };
    }
    if io_log {
        drop(connection);
        let mut out = stdout.lock();
        writeln!(
            out,
            "{}",
            serde_json::json!({ "io": super::io_log::take() })
        )?;
        out.flush()?;
    }
    Ok(())
}
