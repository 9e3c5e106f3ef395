//! Parsing what callers send (JSON from the page, a link or the command
//! line) into typed inputs, with a sentence a person can act on for anything
//! wrong. Nothing here writes: inputs are checked before any SQL runs.

use serde_json::{Map, Value};

use crate::json::{object, only, text, text_noted, whole, MAX_SAFE_INTEGER};
use crate::params::{self, quote};
use crate::patterns::idempotency::Request;
use crate::scenarios;
use crate::{Error, Result};

/// One idempotent request from a JSON object: `tenant`, `operation`, `key`,
/// `quantity` and `now` are all required.
pub fn request(value: &Value) -> Result<Request> {
    let map = object(value, "request")?;
    only(
        map,
        &["tenant", "operation", "key", "quantity", "now"],
        "request",
    )?;
    let max = crate::patterns::idempotency::MAX_KEY_CHARS;
    let required = |field: &'static str, v: Option<String>| {
        v.ok_or_else(|| Error::invalid(field, "is required"))
    };
    let tenant = required("tenant", text(map, "tenant", max)?)?;
    let operation = required("operation", text(map, "operation", max)?)?;
    let why = format!("; Stripe limits keys to {max} characters");
    let key = required("key", text_noted(map, "key", max, &why)?)?;
    let quantity = whole(map, "quantity", 1, MAX_SAFE_INTEGER)
        .map_err(|_| {
            Error::invalid(
                "quantity",
                format!(
                    "must be a positive whole number up to 2^53 - 1 (got {})",
                    map.get("quantity")
                        .map_or("nothing".to_string(), Value::to_string)
                ),
            )
        })?
        .ok_or_else(|| Error::invalid("quantity", "is required"))?;
    let now = whole(map, "now", 0, crate::patterns::idempotency::MAX_CLOCK)?
        .ok_or_else(|| Error::invalid("now", "is required"))?;
    Request {
        tenant,
        operation,
        key,
        quantity,
        now,
    }
    .validate()
}

/// An order to create: `{ orderId, amount }`.
pub fn order(value: &Value) -> Result<crate::patterns::outbox::Event> {
    let map = object(value, "order")?;
    only(map, &["orderId", "amount"], "order")?;
    let order_id = clean_id("orderId", text(map, "orderId", 255)?)?;
    let amount = positive_amount(map)?;
    Ok(crate::patterns::outbox::Event {
        event_id: format!("order-created:{order_id}"),
        order_id,
        amount,
    })
}

/// A delivery: `{ subscriber, event: { eventId, payload: { order_id, amount } } }`.
pub fn delivery(value: &Value) -> Result<(String, crate::patterns::outbox::Event)> {
    let map = object(value, "delivery")?;
    only(map, &["subscriber", "event"], "delivery")?;
    let subscriber =
        text(map, "subscriber", 64)?.ok_or_else(|| Error::invalid("subscriber", "is required"))?;
    if !crate::patterns::outbox::SUBSCRIBERS.contains(&subscriber.as_str()) {
        return Err(Error::invalid(
            "subscriber",
            format!(
                "unknown subscriber {:?}; use {}",
                subscriber.chars().take(40).collect::<String>(),
                crate::patterns::outbox::SUBSCRIBERS.join(" or ")
            ),
        ));
    }
    let event = map
        .get("event")
        .ok_or_else(|| Error::invalid("event", "is required"))?;
    let event_map = object(event, "event")?;
    only(event_map, &["eventId", "payload"], "event")?;
    let event_id = clean_id("eventId", text(event_map, "eventId", 255)?)?;
    let payload = event_map
        .get("payload")
        .ok_or_else(|| Error::invalid("payload", "is required"))?;
    let payload_map = object(payload, "payload")?;
    only(payload_map, &["order_id", "amount"], "payload")?;
    let order_id = clean_id("order_id", text(payload_map, "order_id", 255)?)?;
    let amount = positive_amount(payload_map)?;
    Ok((
        subscriber,
        crate::patterns::outbox::Event {
            event_id,
            order_id,
            amount,
        },
    ))
}

fn clean_id(field: &'static str, id: Option<String>) -> Result<String> {
    let id = id.ok_or_else(|| Error::invalid(field, "is required"))?;
    if id.trim().is_empty() || id.chars().any(char::is_control) {
        return Err(Error::invalid(
            field,
            "must not be blank or hold control characters",
        ));
    }
    Ok(id)
}

fn positive_amount(map: &Map<String, Value>) -> Result<i64> {
    whole(map, "amount", 1, MAX_SAFE_INTEGER)
        .map_err(|_| {
            Error::invalid(
                "amount",
                format!(
                    "must be a positive whole number up to 2^53 - 1 (got {})",
                    map.get("amount")
                        .map_or("nothing".to_string(), Value::to_string)
                ),
            )
        })?
        .ok_or_else(|| Error::invalid("amount", "is required"))
}

/// What a permalink (`?s=…&attempts=…&schedule=…&step=…`) asks for.
///
/// A bad part of a link is dropped and named in `problems`; the rest of the
/// link still counts, so a link with one broken value keeps its scenario.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Permalink {
    /// The scenario id (the landing scenario when the link names none but
    /// gives more).
    pub scenario: Option<String>,
    /// The scenario the page shows where a link names none or cannot be
    /// opened ([`scenarios::LANDING`]).
    pub landing: &'static str,
    /// The parameters the link sets, each checked against the scenario's declaration.
    pub params: Map<String, Value>,
    /// The schedule, checked for form (not yet against the scenario).
    pub schedule: Option<String>,
    /// The step to select (1-based).
    pub step: Option<u32>,
    /// One sentence per part of the link that was dropped.
    pub problems: Vec<String>,
}

impl Default for Permalink {
    /// A link that asks for nothing: the page lands on [`scenarios::LANDING`].
    fn default() -> Self {
        Permalink {
            scenario: None,
            landing: scenarios::LANDING,
            params: Map::new(),
            schedule: None,
            step: None,
            problems: Vec::new(),
        }
    }
}

/// Decodes one `application/x-www-form-urlencoded` component exactly as
/// `URLSearchParams` does: `+` is a space; `%` followed by two ASCII hex
/// digits is that byte; any other `%` is itself; bad UTF-8 becomes U+FFFD.
pub(crate) fn form_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len()
                && bytes[i + 1].is_ascii_hexdigit()
                && bytes[i + 2].is_ascii_hexdigit() =>
            {
                let hex = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
                out.push(hex(bytes[i + 1]) << 4 | hex(bytes[i + 2]));
                i += 2;
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The name-value pairs of a query string, decoded as `URLSearchParams`
/// decodes them: a leading `?` is dropped, pairs are split on `&` and then on
/// the first `=`, and empty pairs are skipped.
pub fn form_pairs(query: &str) -> Vec<(String, String)> {
    let query = query.strip_prefix('?').unwrap_or(query);
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (form_decode(name), form_decode(value))
        })
        .collect()
}

/// The longest permalink query accepted, in bytes.
pub(crate) const MAX_LINK_BYTES: usize = 64 * 1024;

/// Parses a permalink's query string. Unknown names are ignored (a newer
/// link may carry more); a malformed known part is dropped and named in
/// [`Permalink::problems`].
pub fn permalink(query: &str) -> Result<Permalink> {
    if query.len() > MAX_LINK_BYTES {
        return Err(Error::invalid(
            "link",
            format!("longer than {} KiB", MAX_LINK_BYTES / 1024),
        ));
    }
    let mut link = Permalink::default();
    let mut rest = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (name, value) in form_pairs(query) {
        // As URLSearchParams.get: the first of a repeated name counts.
        if !seen.insert(name.clone()) {
            link.problems.push(format!(
                "{} was given more than once: the first value is used",
                quote(&name)
            ));
            continue;
        }
        match name.as_str() {
            "s" => link.scenario = Some(value),
            "schedule" => match crate::sim::Schedule::decode(&value) {
                Ok(_) => link.schedule = Some(value),
                Err(e) => link.problems.push(format!("the schedule was dropped: {e}")),
            },
            "step" => match value.parse::<u32>() {
                Ok(step) => link.step = Some(step),
                Err(_) => link.problems.push(format!(
                    "the step was dropped: {} is not a step number",
                    quote(&value)
                )),
            },
            _ => rest.push((name, value)),
        }
    }
    // The whole catalog is read only when the link needs it (a page opening
    // a link reads the one scenario it names first).
    let catalog = std::cell::OnceCell::new();
    let catalog = || catalog.get_or_init(scenarios::catalog);
    let entry = match link.scenario.as_deref() {
        Some(id) => match scenarios::entry(id) {
            Ok(entry) => Some(entry),
            Err(e) => {
                link.problems.push(e.to_string());
                link.scenario = None;
                None
            }
        },
        None if !rest.is_empty() || link.schedule.is_some() || link.step.is_some() => {
            let first = scenarios::landing_entry();
            if let Some(first) = &first {
                link.problems.push(format!(
                    "the link names no scenario (s=…); it opens {}",
                    first.id
                ));
                link.scenario = Some(first.id.to_string());
            }
            first
        }
        None => None,
    };
    let declared_anywhere = |name: &str| {
        let declares = |e: &scenarios::Entry| e.params.iter().any(|p| p.name == name);
        entry.as_ref().is_some_and(declares) || catalog().iter().any(declares)
    };
    let mut params = entry.as_ref().map(|e| params::Params::defaults(e.params));
    for (name, value) in rest {
        if !declared_anywhere(&name) {
            continue;
        }
        match (&entry, &mut params) {
            (Some(entry), Some(params)) => {
                if let Err(e) = params.set_from_link(entry.id, entry.params, &name, &value) {
                    link.problems.push(format!("{name} was dropped: {e}"));
                }
            }
            _ => link.problems.push(format!(
                "{name} was dropped: the link names no known scenario"
            )),
        }
    }
    if let (Some(entry), Some(params)) = (&entry, &params) {
        link.params = params.changed(entry.params);
    }
    Ok(link)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reason(value: Value) -> String {
        request(&value).unwrap_err().to_string()
    }

    fn good() -> Value {
        json!({"tenant": "north", "operation": "web-order", "key": "k", "quantity": 2, "now": 0})
    }

    #[test]
    fn a_good_request_parses() {
        let r = request(&good()).unwrap();
        assert_eq!((r.quantity, r.now), (2, 0));
    }

    #[test]
    fn quantities_that_are_not_positive_whole_numbers_are_refused() {
        for (q, shown) in [
            (json!(0), "0"),
            (json!(-1), "-1"),
            (json!(2.5), "2.5"),
            (json!("2"), "\"2\""),
            (json!(9_007_199_254_740_992_i64), "9007199254740992"),
            (json!(null), "null"),
        ] {
            let mut v = good();
            v["quantity"] = q;
            let text = reason(v);
            if shown == "null" {
                assert_eq!(text, "invalid quantity: is required");
            } else {
                assert_eq!(
                    text,
                    format!("invalid quantity: must be a positive whole number up to 2^53 - 1 (got {shown})")
                );
            }
        }
    }

    #[test]
    fn keys_must_have_1_to_255_characters() {
        for key in [String::new(), "k".repeat(256)] {
            let mut v = good();
            v["key"] = json!(key);
            assert!(reason(v).contains("Stripe limits keys to 255 characters"));
        }
        let mut v = good();
        v["key"] = json!("k".repeat(255));
        assert!(request(&v).is_ok());
    }

    #[test]
    fn missing_unknown_and_mistyped_fields_are_named() {
        let mut v = good();
        v.as_object_mut().unwrap().remove("tenant");
        assert_eq!(reason(v), "invalid tenant: is required");
        let mut v = good();
        v["extra"] = json!(1);
        assert!(reason(v).starts_with("invalid request: unknown field \"extra\""));
        let mut v = good();
        v["operation"] = json!(5);
        assert_eq!(
            reason(v),
            "invalid operation: expected a string, got a number"
        );
        assert_eq!(
            reason(json!([1])),
            "invalid request: expected an object, got an array"
        );
    }

    #[test]
    fn outbox_inputs_name_what_is_wrong() {
        let good = json!({"subscriber": "audit", "event": {"eventId": "e1", "payload": {"order_id": "o1", "amount": 100}}});
        assert!(delivery(&good).is_ok());
        for (bad, expected) in [
            (
                json!({"subscriber": "billing", "event": good["event"].clone()}),
                "invalid subscriber: unknown subscriber \"billing\"; use audit or search",
            ),
            (
                json!({"subscriber": "audit", "event": {"eventId": "", "payload": {"order_id": "o", "amount": 1}}}),
                "invalid eventId: use 1 to 255 characters",
            ),
            (
                json!({"subscriber": "audit", "event": {"eventId": "e", "payload": "amount=1"}}),
                "invalid payload: expected an object, got text",
            ),
            (
                json!({"subscriber": "audit", "event": {"eventId": "e", "payload": [1]}}),
                "invalid payload: expected an object, got an array",
            ),
            (
                json!({"subscriber": "audit", "event": {"eventId": "e", "payload": {"order_id": "o", "amount": 0}}}),
                "invalid amount: must be a positive whole number",
            ),
            (
                json!({"subscriber": "audit", "event": {"eventId": "e", "payload": {"order_id": "o", "amount": 1.5}}}),
                "invalid amount: must be a positive whole number",
            ),
            (
                json!({"subscriber": "audit", "event": {"eventId": "  ", "payload": {"order_id": "o", "amount": 1}}}),
                "invalid eventId: must not be blank",
            ),
        ] {
            let text = delivery(&bad).unwrap_err().to_string();
            assert!(text.starts_with(expected), "{text}");
        }
        assert!(order(&json!({"orderId": "o1", "amount": -5})).is_err());
        assert_eq!(
            order(&json!({"orderId": "o1", "amount": 5}))
                .unwrap()
                .event_id,
            "order-created:o1"
        );
    }

    #[test]
    fn permalinks_parse_like_a_browser_and_drop_only_what_is_malformed() {
        let link = permalink(
            "?s=idem-race&attempts=2&tenant=%3Cimg+src%3Dx%3E&schedule=A2B&step=3&future=1",
        )
        .unwrap();
        assert_eq!(link.scenario.as_deref(), Some("idem-race"));
        assert_eq!(link.params["attempts"], json!(2));
        assert_eq!(link.params["tenant"], json!("<img src=x>"));
        assert_eq!(link.schedule.as_deref(), Some("A2B"));
        assert_eq!(link.step, Some(3));
        assert!(link.problems.is_empty());
        assert_eq!(permalink("").unwrap(), Permalink::default());
        assert_eq!(
            permalink("?s=idem-race&key=%ZZ%").unwrap().params["key"],
            json!("%ZZ%")
        );
        for (query, expected) in [
            (
                "?s=idem-race&attempts=many",
                "attempts was dropped: invalid attempts: expected a whole number, got \"many\"",
            ),
            (
                "?s=idem-race&attempts=20",
                "attempts was dropped: invalid attempts: 20 is out of range (1 to 16)",
            ),
            (
                "?s=idem-race&schedule=Q9!",
                "the schedule was dropped: invalid schedule: unexpected '!'",
            ),
            (
                "?s=idem-race&step=-1",
                "the step was dropped: \"-1\" is not a step number",
            ),
            (
                "?s=idem-race&key=",
                "key was dropped: invalid key: use 1 to 255 characters (got 0)",
            ),
            (
                "?s=idem-race&window=600",
                "window was dropped: invalid params: scenario idem-race has no parameter \"window\"",
            ),
            (
                "?schedule=A6B3AB4",
                "the link names no scenario (s=…); it opens idem-check-then-write",
            ),
            ("?s=nope&attempts=2", "invalid scenario: unknown scenario \"nope\""),
        ] {
            let link = permalink(query).unwrap();
            assert!(
                link.problems.iter().any(|p| p.starts_with(expected)),
                "{query}: {:?}",
                link.problems
            );
        }
        // The good parts of a link with a bad part stay.
        let link = permalink("?s=idem-check-then-write&schedule=A6B3AB4&step=x").unwrap();
        assert_eq!(link.scenario.as_deref(), Some("idem-check-then-write"));
        assert_eq!(link.schedule.as_deref(), Some("A6B3AB4"));
        let link = permalink("?s=inbox-retention&window=600&delay=1200").unwrap();
        assert_eq!(link.params["window"], json!(600));
        assert_eq!(link.params["delay"], json!(1200));
        assert!(permalink(&"a".repeat(MAX_LINK_BYTES + 1)).is_err());
    }

    /// `URLSearchParams` decodes `%` only before two ASCII hex digits (a
    /// sign or a space is not a digit), and `+` as a space.
    #[test]
    fn form_decoding_takes_only_two_hex_digits() {
        for (raw, decoded) in [
            ("%+41", "% 41"),
            ("%+0", "% 0"),
            ("%-1", "%-1"),
            ("%41", "A"),
            ("%4", "%4"),
            ("%", "%"),
            ("%%41", "%A"),
            ("%e2%82%ac", "€"),
            ("%ff", "\u{fffd}"),
            ("a+b", "a b"),
            ("%2B", "+"),
        ] {
            assert_eq!(form_decode(raw), decoded, "{raw}");
        }
    }
}
