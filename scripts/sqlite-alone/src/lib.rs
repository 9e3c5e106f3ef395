//! SQLite alone: the floor of the module's size and start (see Cargo.toml).

use wasm_bindgen::prelude::*;

/// Opens an in-memory database and asks SQLite its version.
#[wasm_bindgen]
pub fn version() -> Result<String, JsError> {
    let db = rusqlite::Connection::open_in_memory().map_err(|e| JsError::new(&e.to_string()))?;
    db.query_row("SELECT sqlite_version()", [], |row| row.get(0))
        .map_err(|e| JsError::new(&e.to_string()))
}
