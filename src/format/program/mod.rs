//! The engine of scenario files.
//!
//! Building a scenario compiles its file once: each attempt becomes an
//! [`Instance`] whose program is fully expanded (`use` inlined, names
//! filled in, `when` decided, every `goto` resolved to a step index), so a
//! run only moves a program counter. Each attempt runs its program on its
//! own connection per database; the checks read the committed state and
//! the attempts' outcomes.

mod attempt;
mod clock;
mod compile;
mod eval;
mod ir;
mod run;
mod step;
#[cfg(test)]
mod tests;

use ir::*;

use std::rc::Rc;

use super::file::File;
use crate::params::Params;

/// How many times `retry` may start a program again.
pub(super) const MAX_RETRIES: u32 = 3;

/// The outcome of a program that ran past its last step.
pub(crate) const DONE: &str = "done";

/// A scenario file with its parameters resolved, compiled, ready to run.
pub(crate) struct FileScenario {
    file: Rc<File>,
    params: Params,
    /// The engine's options, read from `params` once (or handed over typed).
    options: crate::storage::EngineOptions,
    /// Each database's file name ("app.db"), in the file's database order.
    files: Rc<[&'static str]>,
    /// Each database's PRAGMAs, run when a connection opens.
    pragmas: Rc<[String]>,
    /// The attempts, compiled.
    instances: Vec<Rc<Instance>>,
    /// Which checks apply to these parameters (their `when`, decided once).
    checks_on: Vec<bool>,
    /// The label of a file's only attempt, given by the engine (a session's
    /// "request 3"), instead of the file's.
    label: Option<String>,
    /// How many steps an attempt may take ([`MAX_ATTEMPT_STEPS`] unless the
    /// engine runs it alone with another bound).
    max_steps: usize,
}
