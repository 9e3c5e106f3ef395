//! A scenario as the runner sees it, its checks and verdicts, and what its
//! author declared of it.

use serde::Serialize;

use super::{Attempt, Outcome, Status};
use crate::engines::Engine;
use crate::Result;

/// Why a run stopped.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Verdict {
    /// Every attempt is over.
    Completed,
    /// Unfinished attempts remain and none can run.
    Deadlock {
        /// Who waits for whom, one sentence per blocked attempt.
        waits: Vec<String>,
    },
    /// The run goes round for ever: after step `to` it is back in the state
    /// it was in after step `from` (0: at the start), and can take steps
    /// `from + 1` to `to` again and again ([`Schedule::lasso`]).
    Loops {
        /// Steps before the cycle.
        from: usize,
        /// Steps up to the end of the first round.
        to: usize,
    },
}

/// A scenario's check after a run: expected against actual.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// What is checked.
    pub name: String,
    /// The expected value, as text.
    pub expected: String,
    /// The actual value, as text.
    pub actual: String,
    /// Whether they agree.
    pub pass: bool,
}

impl Check {
    /// A check comparing two displayable values.
    pub fn equal(name: &str, expected: impl ToString, actual: impl ToString) -> Self {
        let (expected, actual) = (expected.to_string(), actual.to_string());
        Check {
            name: name.to_string(),
            pass: expected == actual,
            expected,
            actual,
        }
    }
}

/// A scenario the scheduler can run: a store set up once, a set of attempts,
/// and the checks that must hold when they are over.
pub trait Scenario {
    /// A stable, URL-safe id.
    fn id(&self) -> &str;
    /// The parameter values it runs with, by name (defaults filled in).
    fn params(&self) -> serde_json::Map<String, serde_json::Value>;
    /// Creates the schema and any rows the attempts start from, in the
    /// scenario's journal mode.
    fn setup(&self, engine: &dyn Engine) -> Result<()>;
    /// The engine's options its databases run with (the journal mode, the
    /// `synchronous` level).
    fn options(&self) -> crate::storage::EngineOptions {
        crate::storage::EngineOptions::default()
    }
    /// Fresh attempts, in their order (attempt 0 is `A`).
    fn attempts(&self) -> Result<Vec<Box<dyn Attempt>>>;
    /// The database files whose tables a trace shows.
    fn databases(&self) -> Vec<&'static str>;
    /// Whether a power loss can happen in it: then its store keeps what is
    /// durable apart from what is written, from the end of its setup on.
    fn keeps_durability(&self) -> bool {
        false
    }
    /// The first step of it that acts on a machine (a power loss, a full
    /// disk, an I/O error), by its action's name, if it has one.
    fn machine_fault(&self) -> Option<&'static str> {
        None
    }
    /// The PRAGMAs every attempt's connection to `db` runs when it opens.
    fn pragmas(&self, _db: &str) -> String {
        String::new()
    }
    /// The checks after a run.
    fn checks(&self, ended: &Ended<'_>) -> Result<Vec<Check>>;
    /// Whether the scenario has invariants to check after every step.
    fn has_invariants(&self) -> bool {
        false
    }
    /// Whether a check reads the committed state as it was when attempt
    /// `attempt` was over (so the moment it ends is observed).
    fn observes_end_of(&self, _attempt: usize) -> bool {
        true
    }
    /// The invariants, evaluated on the committed state `committed` (one
    /// check each, in a fixed order).
    fn invariants(&self, _committed: &dyn Engine) -> Result<Vec<Check>> {
        Ok(Vec::new())
    }
    /// What its author declared of it (`fails`), when the declaration
    /// applies to the parameters it runs with: a declaration is of the
    /// default parameters.
    fn declared(&self) -> Option<Declared> {
        None
    }
}

/// What a scenario's author declared: that some schedule breaks it, or
/// that none does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Declared {
    /// `fails = true`: some schedule violates its checks.
    Fails,
    /// `fails = false` (the default): no schedule does.
    Holds,
}

impl Declared {
    /// Whether a verdict agrees with the declaration: `failed`, whether a
    /// failing run was found; `proved`, whether every schedule was covered.
    /// `None` when the verdict cannot tell (no failing run found by a
    /// search that did not cover every schedule).
    pub fn agrees(self, failed: bool, proved: bool) -> Option<bool> {
        match (failed, proved) {
            (true, _) => Some(self == Declared::Fails),
            (false, true) => Some(self == Declared::Holds),
            (false, false) => None,
        }
    }

    /// A verdict judged against the declaration.
    pub fn judge(self, failed: bool, proved: bool) -> AsDeclared {
        AsDeclared {
            declared: self,
            as_declared: self.agrees(failed, proved),
            verdict_as_declared: self.describe(failed, proved),
        }
    }

    /// The verdict and the declaration, in words: "fails, as declared",
    /// "holds, but this design is declared to fail".
    pub fn describe(self, failed: bool, proved: bool) -> String {
        let verdict = match (failed, proved) {
            (true, _) => "fails",
            (false, true) => "holds",
            (false, false) => "no violation found, not every schedule covered",
        };
        let declared = match self {
            Declared::Fails => "declared to fail",
            Declared::Holds => "declared to hold",
        };
        match self.agrees(failed, proved) {
            Some(true) => format!("{verdict}, as declared"),
            Some(false) => format!("{verdict}, but this design is {declared}"),
            None => format!("{verdict}: this design is {declared}"),
        }
    }
}

/// A verdict beside its scenario's declaration (JSON: `declared`,
/// `asDeclared`, `verdictAsDeclared`, flattened into the result).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AsDeclared {
    /// What the author declared.
    pub declared: Declared,
    /// Whether the verdict agrees (`None` when it cannot tell: see
    /// [`Declared::agrees`]).
    pub as_declared: Option<bool>,
    /// Both in words ([`Declared::describe`]).
    pub verdict_as_declared: String,
}

/// What a scenario's checks see of a run that stopped.
pub struct Ended<'a> {
    /// The committed state (a copy of the run's, where reading the run's
    /// own would take a lock its attempts hold).
    pub committed: &'a dyn Engine,
    /// Every attempt's status.
    pub statuses: &'a [Status],
    /// The store's files when each attempt was over.
    pub at_end: &'a [Option<crate::engines::Moment>],
}

impl Ended<'_> {
    /// The outcome of attempt `index`, if it finished.
    pub fn outcome(&self, index: usize) -> Option<&Outcome> {
        match self.statuses.get(index) {
            Some(Status::Finished { outcome }) => Some(outcome),
            _ => None,
        }
    }

    /// The kind of attempt `index`'s outcome, or how it did not finish.
    pub fn kind(&self, index: usize) -> String {
        match self.statuses.get(index) {
            Some(Status::Finished { outcome }) => outcome.kind.clone(),
            Some(Status::Failed { error, .. }) => format!("failed: {error}"),
            Some(_) => "not finished".to_string(),
            None => "no such attempt".to_string(),
        }
    }

    /// The result of attempt `index`'s outcome.
    pub fn result(&self, index: usize) -> Option<&str> {
        self.outcome(index).and_then(|o| o.result.as_deref())
    }

    /// The committed state as it was when attempt `index` was over
    /// (`None` if it never was).
    pub fn store_at_end_of(&self, index: usize) -> Result<Option<Box<dyn Engine>>> {
        match self.at_end.get(index) {
            Some(Some(moment)) => Ok(Some(self.committed.at(moment)?)),
            _ => Ok(None),
        }
    }
}
