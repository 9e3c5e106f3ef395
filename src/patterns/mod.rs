//! The patterns themselves: their SQL, their rules, and their steps.

pub mod idempotency;
pub mod outbox;
