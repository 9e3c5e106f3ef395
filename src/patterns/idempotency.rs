//! Idempotency receipts: a key scoped to (tenant, operation, key) turns any
//! number of retries and racing requests into one logical action.
//!
//! The designs are programs of the `idempotency` library
//! (`src/scenarios/builtin/idempotency.lib.toml`); this module sends one
//! request of the correct design alone, as the JS session does, and reads
//! the counts.

use serde::Serialize;

use crate::sim::{Outcome, StepReport};
use crate::storage::{SqlValue, Store};
use crate::{Error, Result};

/// The library of the idempotency scenarios.
pub const LIBRARY: &str = "idempotency";

/// The database file of the idempotency scenarios.
pub const DB: &str = "orders.db";

/// The longest idempotency key, tenant or operation accepted (Stripe's key limit).
pub const MAX_KEY_CHARS: usize = 255;

/// The latest virtual time accepted, in seconds (ten years).
pub const MAX_CLOCK: i64 = 10 * 365 * 24 * 3600;

/// One request's parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Request {
    /// The tenant (already authenticated).
    pub tenant: String,
    /// The operation (already routed).
    pub operation: String,
    /// The idempotency key; empty for a request sent without one.
    pub key: String,
    /// The quantity ordered; the fingerprint covers it.
    pub quantity: i64,
    /// The virtual clock, in seconds.
    pub now: i64,
}

/// Checks one text field of a request.
fn check_text(field: &'static str, value: &str, what: &str) -> Result<()> {
    crate::params::check_text(field, value, MAX_KEY_CHARS, what)
}

impl Request {
    /// The reference's request: north / web-order / `key`, quantity 2.
    pub fn reference(key: &str, quantity: i64, now: i64) -> Self {
        Request {
            tenant: "north".to_string(),
            operation: "web-order".to_string(),
            key: key.to_string(),
            quantity,
            now,
        }
    }

    /// Checks a request as a caller supplied it.
    pub fn validate(self) -> Result<Self> {
        check_text("tenant", &self.tenant, "")?;
        check_text("operation", &self.operation, "")?;
        check_text("key", &self.key, ", as Stripe limits keys")?;
        if self.quantity <= 0 {
            return Err(Error::invalid(
                "quantity",
                format!("must be a positive whole number (got {})", self.quantity),
            ));
        }
        if !(0..=MAX_CLOCK).contains(&self.now) {
            return Err(Error::invalid(
                "now",
                format!("use 0 to {MAX_CLOCK} seconds"),
            ));
        }
        Ok(self)
    }

    /// The values the library's programs bind for this request.
    fn values(&self) -> toml::Table {
        let mut with = toml::Table::new();
        with.insert("tenant".into(), self.tenant.as_str().into());
        with.insert("operation".into(), self.operation.as_str().into());
        with.insert("key".into(), self.key.as_str().into());
        with.insert("quantity".into(), self.quantity.into());
        with.insert("at".into(), self.now.into());
        with
    }
}

/// The error response Stripe-style services store: a declined payment.
pub const ERROR_RESULT: &str = "{\"status\":402,\"error\":\"card_declined\"}";

/// The response a client gets for a created effect.
pub fn result_json(effect_id: i64, quantity: i64) -> String {
    format!("{{\"effect_id\":{effect_id},\"quantity\":{quantity}}}")
}

/// Creates the schema in `store`.
pub fn setup(store: &Store) -> Result<()> {
    crate::format::setup_library(&crate::scenarios::CATALOG, store, LIBRARY)
}

/// A session's store: the schema, made once (see [`super::SessionStore`]).
pub fn session(name: &str) -> Result<super::SessionStore> {
    super::SessionStore::new(name, LIBRARY)
}

/// (effects, receipts) as the committed state of `store` has them.
pub fn counts(store: &Store) -> Result<(i64, i64)> {
    let conn = store.connect(DB, "counts")?;
    let rows = conn.execute(
        "SELECT (SELECT count(*) FROM effects), (SELECT count(*) FROM receipts)",
        &[],
    )?;
    match rows.rows.first().map(Vec::as_slice) {
        Some([SqlValue::Integer(e), SqlValue::Integer(r)]) => Ok((*e, *r)),
        other => Err(Error::Defect(format!("unexpected counts {other:?}"))),
    }
}

/// What one request did when run alone: its outcome and its steps. The
/// counts are [`counts`]' to give: counting scans tables that grow with
/// every request, and a call should cost what its own transaction costs.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Executed {
    /// How it ended.
    pub outcome: Outcome,
    /// Each step it took.
    pub steps: Vec<StepReport>,
}

/// Runs one request (the correct design) alone on `store` to its end.
pub fn execute_alone(store: &Store, label: &str, request: Request) -> Result<Executed> {
    let request = request.validate()?;
    let (outcome, steps) = crate::format::run_alone(
        &crate::scenarios::CATALOG,
        store,
        LIBRARY,
        "request",
        label,
        request.values(),
        request.now,
        crate::sim::MAX_ALONE_STEPS,
    )?;
    Ok(Executed { outcome, steps })
}

/// One response profile's rules, as the library declares them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileRules {
    /// The profile's id.
    pub id: String,
    /// How long a receipt is kept, in seconds.
    pub retention_seconds: i64,
    /// Whether a failed request's error response is stored and replayed.
    pub stores_errors: bool,
    /// Whether a request without a key is refused.
    pub requires_key: bool,
    /// What a replay answers.
    pub replay: String,
    /// What a reused key with another payload answers.
    pub conflict: String,
    /// What a key in flight answers.
    pub in_flight: String,
    /// What a request without a key gets.
    pub missing_key: String,
    /// What a failing handler answers.
    pub error: String,
}

/// Every response profile's rules, in the order the `profile` parameter
/// lists them: the library's `let`s, evaluated for each.
pub fn profiles() -> Result<Vec<ProfileRules>> {
    let declared = crate::scenarios::entry("idem-profiles")?;
    let profile = declared
        .params
        .iter()
        .find(|p| p.name == "profile")
        .ok_or_else(|| Error::Defect("idem-profiles has no profile".into()))?;
    let crate::params::Kind::Choice { options } = profile.kind else {
        return Err(Error::Defect("profile is not a choice".into()));
    };
    options
        .iter()
        .map(|id| {
            let mut with = toml::Table::new();
            with.insert("profile".into(), (*id).into());
            let values = crate::format::library_values(&crate::scenarios::CATALOG, LIBRARY, with)?;
            let get = |name: &str| {
                values
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| Error::Defect(format!("the library has no {name}")))
            };
            let text = |name: &str| -> Result<String> {
                match get(name)? {
                    SqlValue::Text(t) => Ok(t),
                    other => Err(Error::Defect(format!("{name} is {other:?}"))),
                }
            };
            let whole = |name: &str| -> Result<i64> {
                match get(name)? {
                    SqlValue::Integer(i) => Ok(i),
                    other => Err(Error::Defect(format!("{name} is {other:?}"))),
                }
            };
            Ok(ProfileRules {
                id: (*id).to_string(),
                retention_seconds: whole("retention")?,
                stores_errors: whole("stores_errors")? != 0,
                requires_key: whole("requires_key")? != 0,
                replay: text("replay_answer")?,
                conflict: text("conflict_answer")?,
                in_flight: text("in_flight_answer")?,
                missing_key: text("missing_key_answer")?,
                error: text("error_answer")?,
            })
        })
        .collect()
}
