//! Single requests and events sent by hand to a store of receipts, an
//! outbox and an inbox.

use wasm_bindgen::prelude::*;

use super::boundary::js_to_json;
use super::to_js;
use crate::input;
use crate::patterns::idempotency;
use crate::patterns::{outbox, SessionStore};

/// A database of receipts to send single requests to, one at a time.
#[wasm_bindgen]
pub struct IdempotencySession {
    store: SessionStore,
    sent: u32,
}

#[wasm_bindgen]
impl IdempotencySession {
    /// An empty database with the reference schema.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<IdempotencySession, JsError> {
        let store = idempotency::session("session")?;
        Ok(IdempotencySession { store, sent: 0 })
    }

    /// Sends one request; returns its outcome and steps (`counts()` gives the
    /// counts). A request that is not valid is refused before anything is written.
    pub fn execute(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "RequestInput")] request: JsValue,
    ) -> Result<JsValue, JsError> {
        let request = input::request(&js_to_json(&request)?)?;
        self.sent += 1;
        let label = format!("request {}", self.sent);
        to_js(&idempotency::execute_alone(&self.store, &label, request)?)
    }

    /// `{ effects, receipts }` now.
    pub fn counts(&self) -> Result<JsValue, JsError> {
        let (effects, receipts) = idempotency::counts(&self.store)?;
        to_js(&serde_json::json!({ "effects": effects, "receipts": receipts }))
    }

    /// The bytes of the database file, to compare before and after.
    #[wasm_bindgen(js_name = databaseBytes)]
    pub fn database_bytes(&self) -> Vec<u8> {
        self.store.file_bytes(idempotency::DB).unwrap_or_default()
    }
}

/// A producer and a consumer database to create orders, relay and deliver
/// events to, one operation at a time.
#[wasm_bindgen]
pub struct OutboxSession {
    store: SessionStore,
}

#[wasm_bindgen]
impl OutboxSession {
    /// Empty producer and consumer databases with the reference schemas.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<OutboxSession, JsError> {
        let store = outbox::session("outbox-session")?;
        Ok(OutboxSession { store })
    }

    /// Creates an order and its outbox event: `{ orderId, amount }`. Returns
    /// its outcome and steps, as every operation of the session does
    /// (`counts()` gives the counts).
    #[wasm_bindgen(js_name = createOrder)]
    pub fn create_order(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "{ orderId: string; amount: number }")]
        order: JsValue,
    ) -> Result<JsValue, JsError> {
        let event = input::order(&js_to_json(&order)?)?;
        to_js(&outbox::create_order_alone(&self.store, event)?)
    }

    /// Delivers an event to a subscriber through its inbox:
    /// `{ subscriber: "audit" | "search", event: { eventId, payload: { order_id, amount } } }`.
    pub fn deliver(
        &mut self,
        #[wasm_bindgen(
            unchecked_param_type = "{ subscriber: string; event: { eventId: string; payload: { order_id: string; amount: number } } }"
        )]
        delivery: JsValue,
    ) -> Result<JsValue, JsError> {
        let (subscriber, event) = input::delivery(&js_to_json(&delivery)?)?;
        to_js(&outbox::deliver_alone(&self.store, &subscriber, event)?)
    }

    /// Runs a relay until nothing is unsent.
    pub fn relay(&mut self) -> Result<JsValue, JsError> {
        to_js(&outbox::relay_alone(&self.store)?)
    }

    /// `{ orders, outbox, pending, inbox, effects: { audit, search } }` now.
    pub fn counts(&self) -> Result<JsValue, JsError> {
        to_js(&outbox::counts(&self.store)?)
    }

    /// The bytes of both database files, producer then consumer.
    #[wasm_bindgen(js_name = databaseBytes)]
    pub fn database_bytes(&self) -> Vec<u8> {
        let mut bytes = self.store.file_bytes(outbox::PRODUCER).unwrap_or_default();
        bytes.extend(self.store.file_bytes(outbox::CONSUMER).unwrap_or_default());
        bytes
    }
}
