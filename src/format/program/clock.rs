//! The virtual clock: an attempt that moves time forward when every other
//! attempt waits for it.

use std::hash::Hasher;
use std::rc::Rc;

use super::ir::{Instance, InstanceKind};
use crate::engines::{Engine, Session};
use crate::sim::{Attempt, Outcome, Progress, SqlResult, Status, StepCtx, StepReport};
use crate::Result;

/// The virtual clock: each step advances time by its tick, up to its end;
/// it may not pass its hold time while the attempt it holds for runs (a
/// relay's longest redelivery delay).
pub(super) struct ClockAttempt {
    pub(super) instance: Rc<Instance>,
}

impl ClockAttempt {
    pub(super) fn parts(&self) -> (i64, i64, Option<(i64, usize)>) {
        match self.instance.kind {
            InstanceKind::Clock { tick, until, hold } => (tick, until, hold),
            InstanceKind::Program(_) => (1, 0, None),
        }
    }
}

impl Attempt for ClockAttempt {
    fn label(&self) -> &str {
        &self.instance.label
    }

    fn phase(&self) -> &'static str {
        "ticking"
    }

    fn hash_state(&self, _state: &mut dyn Hasher) {}

    fn class(&self) -> u64 {
        self.instance.class
    }

    fn connections(&self) -> &[Option<Box<dyn Session>>] {
        &[]
    }

    fn crash(&mut self) {}

    fn can_crash(&self) -> bool {
        false
    }

    fn save(&self) -> Option<Rc<dyn std::any::Any>> {
        // A clock keeps no state of its own: the run keeps the time.
        Some(Rc::new(Rc::clone(&self.instance)))
    }

    fn restore(&mut self, saved: &dyn std::any::Any, _engine: &dyn Engine) -> Result<bool> {
        Ok(saved
            .downcast_ref::<Rc<Instance>>()
            .is_some_and(|instance| Rc::ptr_eq(instance, &self.instance)))
    }

    fn ready(&self, now: i64, statuses: &[Status]) -> bool {
        let (tick, until, hold) = self.parts();
        let next = now + tick;
        let held = hold.is_some_and(|(at, holder)| {
            next > at && !statuses.get(holder).is_some_and(Status::is_over)
        });
        next <= until && !held
    }

    fn step(&mut self, ctx: &StepCtx<'_>) -> StepReport {
        let (tick, until, _) = self.parts();
        let now = ctx.now() + tick;
        ctx.clock.set(now);
        let progress = if now + tick > until {
            Progress::Finished {
                outcome: Outcome::with_result("stopped", now.to_string()),
            }
        } else {
            Progress::Progressed
        };
        StepReport {
            database: None,
            name: format!("tick to t={now}"),
            sql: None,
            params: vec![],
            result: SqlResult::None,
            progress,
            note: format!("time passes: t={now}"),
        }
    }
}
