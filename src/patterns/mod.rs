//! The patterns themselves: their SQL, their rules, and their steps.

pub(crate) mod idempotency;
pub(crate) mod outbox;

use crate::storage::Store;
use crate::Result;

/// The store of a session that sends one request (or one relay pass, one
/// delivery) at a time, as the JS sessions do.
///
/// Its schema is made once, when it is created, and never changes: so the
/// connections a request closes are kept idle (pooled) with the schema
/// they read and the statements they prepared, and the next request takes
/// them instead of opening and parsing anew.
pub struct SessionStore(Store);

impl SessionStore {
    /// A new store named `name` with library `library`'s databases.
    pub fn new(name: &str, library: &str) -> Result<Self> {
        let store = Store::new(name)?;
        crate::format::setup_library(&crate::scenarios::CATALOG, &store, library)?;
        // Only SQLite writes its files: a reused connection's page cache is
        // checked by SQLite itself and can be kept.
        store.set_pooling_keeping_caches();
        Ok(SessionStore(store))
    }
}

impl std::ops::Deref for SessionStore {
    type Target = Store;

    fn deref(&self) -> &Store {
        &self.0
    }
}

impl Drop for SessionStore {
    fn drop(&mut self) {
        // Pooled connections keep their store alive: let them go first.
        self.0.set_pooling(false);
    }
}
