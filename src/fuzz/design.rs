//! Random small designs, as scenario files: what the soundness fuzzer
//! ([`super`]) explores under every configuration. A design is kept as data
//! (attempts of steps, faults, checks) so that the shrinker can drop parts of
//! it, and written as TOML, the format a person writes.
//!
//! What a design may hold: 2 to 4 attempts (one of them possibly with two
//! replicas), each of 1 to 4 statements drawn from transactions (`BEGIN`,
//! `BEGIN IMMEDIATE`, `COMMIT`, `ROLLBACK`, savepoints), reads, writes,
//! `INSERT OR IGNORE`, `RETURNING`, unique violations, a TEMP table,
//! `last_insert_rowid()` and `changes()`, captures and a parameter, on one or
//! two databases; `on` handlers for every result (`goto` back with and
//! without back-off, `retry`, `finish`, `fail`, `next`); a process crash as
//! a step, a crash or a power loss at a statement's sync; a fault the search
//! places anywhere (a power loss, torn or not, a full disk, an I/O error);
//! both journal modes; checks of outcomes and rows, and an invariant, that
//! can fail.

use fastrand::Rng;

/// Which database a step runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Db {
    App,
    Other,
}

/// What a step does with one result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Handler {
    Next,
    Retry,
    /// Back to an earlier step of the same program (by index).
    Goto {
        to: usize,
        back_off: bool,
    },
    Finish(&'static str),
    Fail,
}

/// One step of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub db: Db,
    /// The statement, or `None` for a process crash (`action = "crash"`).
    pub sql: Option<&'static str>,
    pub capture: Option<&'static str>,
    pub on: Vec<(&'static str, Handler)>,
    /// Dies at this sync of the statement: `crash-at-sync`, or with
    /// `power` the machine's power goes out there (`power-loss-at-sync`).
    pub at_sync: Option<(u8, bool)>,
}

/// An attempt: a program, run by one or two replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attempt {
    pub replicas: u8,
    pub steps: Vec<Step>,
}

/// A fault the search places: an attempt of one step that may run at any
/// moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The power of the app database's machine goes out, torn by the Nth
    /// sequence of coin flips if given.
    Power(Option<u8>),
    DiskFull,
    /// The next write or sync fails.
    IoError(&'static str),
}

/// A check the run must pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    /// Exactly `count` attempts end with `outcome`.
    Outcome(&'static str, u8),
    /// `SELECT count(*) FROM t` is `rows`.
    Rows(u8),
}

/// A random design.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Design {
    pub wal: bool,
    pub other: bool,
    pub seed_rows: Vec<&'static str>,
    pub attempts: Vec<Attempt>,
    pub fault: Option<Fault>,
    pub checks: Vec<Check>,
    /// `SELECT count(*) <= N FROM t` after every step.
    pub invariant: Option<u8>,
}

/// The statements of the app database: the text, and the capture it names.
const APP: &[(&str, Option<&str>)] = &[
    ("BEGIN", None),
    ("BEGIN IMMEDIATE", None),
    ("COMMIT", None),
    ("ROLLBACK", None),
    ("SAVEPOINT s", None),
    ("RELEASE s", None),
    ("ROLLBACK TO s", None),
    ("SELECT count(*) AS n FROM t", Some("n")),
    ("SELECT v FROM t WHERE k = 1", None),
    ("INSERT INTO t (v) VALUES (:label)", None),
    ("INSERT INTO t (v) VALUES ('x')", None),
    ("INSERT OR IGNORE INTO t (v) VALUES ('x')", None),
    (
        "INSERT INTO t (v) VALUES (:label || :p) RETURNING k",
        Some("k"),
    ),
    ("UPDATE t SET v = v || '+' WHERE k = 1", None),
    ("DELETE FROM t WHERE v = 'x'", None),
    ("CREATE TEMP TABLE IF NOT EXISTS scratch (x)", None),
    ("INSERT INTO scratch VALUES (1)", None),
    ("SELECT count(*) AS m FROM scratch", Some("m")),
    ("SELECT last_insert_rowid() AS r", Some("r")),
    ("SELECT changes() AS c", Some("c")),
];

/// The statements of the second database.
const OTHER: &[&str] = &[
    "INSERT INTO u VALUES (:label)",
    "SELECT count(*) FROM u",
    "BEGIN IMMEDIATE",
    "COMMIT",
];

/// Outcomes a handler may finish with; the checks name them too.
const OUTCOMES: &[&str] = &["done", "dup", "found"];

impl Design {
    /// A random design from `rng`.
    pub(crate) fn random(rng: &mut Rng) -> Design {
        let other = rng.u32(0..10) < 3;
        let count = if rng.u32(0..10) < 7 { 2 } else { 3 };
        let mut attempts: Vec<Attempt> = (0..count).map(|_| random_attempt(rng, other)).collect();
        // One may have two replicas.
        if rng.u32(0..10) < 3 {
            let i = rng.usize(0..attempts.len());
            attempts[i].replicas = 2;
        }
        let fault = match rng.u32(0..12) {
            0 | 1 => Some(Fault::Power(None)),
            2 => Some(Fault::Power(Some(rng.u8(1..=3)))),
            3 => Some(Fault::DiskFull),
            4 => Some(Fault::IoError(if rng.bool() { "write" } else { "sync" })),
            _ => None,
        };
        // At most four attempts in all, the fault's included.
        let most = if fault.is_some() { 3 } else { 4 };
        while attempts
            .iter()
            .map(|a| usize::from(a.replicas))
            .sum::<usize>()
            > most
        {
            match attempts.iter_mut().find(|a| a.replicas > 1) {
                Some(replicated) => replicated.replicas = 1,
                None => {
                    attempts.pop();
                }
            }
        }
        let mut checks = Vec::new();
        if rng.bool() {
            checks.push(Check::Outcome(
                OUTCOMES[rng.usize(0..OUTCOMES.len())],
                rng.u8(0..=2),
            ));
        }
        if rng.bool() {
            checks.push(Check::Rows(rng.u8(0..=3)));
        }
        Design {
            wal: rng.bool(),
            other,
            seed_rows: (0..rng.usize(0..=2)).map(|i| ["s", "x"][i]).collect(),
            attempts,
            fault,
            checks,
            invariant: (rng.u32(0..10) < 2).then(|| rng.u8(1..=3)),
        }
    }

    /// The design as a scenario file; `header` is put first, as comments.
    pub(crate) fn to_toml(&self, header: &str) -> String {
        let mut out = String::new();
        for line in header.lines() {
            out.push_str(&format!("# {line}\n").replace("# \n", "#\n"));
        }
        out.push_str("title = \"A random design\"\n");
        out.push_str("allow-sql-errors = true\n");
        if self.wal {
            out.push_str("journal = \"wal\"\n");
        }
        out.push_str("\n[params.p]\ntype = \"whole\"\ndefault = 1\nmin = 0\nmax = 9\n");
        out.push_str("meaning = \"a value the statements bind\"\n");
        out.push_str("\n[databases.app]\n");
        out.push_str("schema = \"CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT UNIQUE);\"\n");
        if !self.seed_rows.is_empty() {
            let values: Vec<String> = self.seed_rows.iter().map(|v| format!("('{v}')")).collect();
            out.push_str(&format!(
                "seed = \"INSERT INTO t (v) VALUES {};\"\n",
                values.join(", ")
            ));
        }
        if self.other {
            out.push_str("\n[databases.other]\nschema = \"CREATE TABLE u (v TEXT);\"\n");
        }
        for attempt in &self.attempts {
            out.push_str("\n[[attempts]]\n");
            if attempt.replicas > 1 {
                out.push_str(&format!("replicas = {}\n", attempt.replicas));
            }
            out.push_str("steps = [\n");
            for (i, step) in attempt.steps.iter().enumerate() {
                out.push_str(&format!("  {},\n", step_toml(i, step)));
            }
            out.push_str("]\n");
        }
        if let Some(fault) = self.fault {
            let step = match fault {
                Fault::Power(None) => {
                    "{ name = \"fault\", action = \"power-loss\", databases = [\"app\"] }".to_string()
                }
                Fault::Power(Some(torn)) => format!(
                    "{{ name = \"fault\", action = \"power-loss\", databases = [\"app\"], torn = {torn} }}"
                ),
                Fault::DiskFull => {
                    "{ name = \"fault\", action = \"disk-full\", databases = [\"app\"] }".to_string()
                }
                Fault::IoError(call) => format!(
                    "{{ name = \"fault\", action = \"io-error\", databases = [\"app\"], call = \"{call}\" }}"
                ),
            };
            out.push_str(&format!(
                "\n[[attempts]]\nlabel = \"F\"\nsteps = [ {step} ]\n"
            ));
        }
        if let Some(most) = self.invariant {
            out.push_str(&format!(
                "\n[[invariants]]\nname = \"at most {most} rows\"\ndatabase = \"app\"\nsql = \"SELECT count(*) <= {most} FROM t\"\nexpect = 1\n"
            ));
        }
        for check in &self.checks {
            match check {
                Check::Outcome(outcome, count) => {
                    // The format refuses an outcome no attempt can end
                    // with: one no handler finishes with (left after
                    // shrinking, or never drawn) is checked as a program's end.
                    let finished = self.attempts.iter().flat_map(|a| &a.steps).any(|s| {
                        s.on.iter()
                            .any(|(_, h)| matches!(h, Handler::Finish(o) if o == outcome))
                    });
                    let outcome = if finished { outcome } else { crate::format::DONE };
                    out.push_str(&format!(
                        "\n[[checks]]\noutcome = \"{outcome}\"\ncount = {count}\n"
                    ));
                }
                Check::Rows(rows) => out.push_str(&format!(
                    "\n[[checks]]\ndatabase = \"app\"\nsql = \"SELECT count(*) FROM t\"\nexpect = {rows}\n"
                )),
            }
        }
        out
    }

    /// Every design one part smaller: an attempt, a step, the fault, a seed
    /// row, a check, the invariant or a replica left out, or the second
    /// database unused. The shrinker keeps the first that still disagrees.
    pub(crate) fn smaller(&self) -> Vec<Design> {
        let mut smaller = Vec::new();
        for i in 0..self.attempts.len() {
            if self.attempts.len() > 1 {
                let mut d = self.clone();
                d.attempts.remove(i);
                smaller.push(d);
            }
            if self.attempts[i].replicas > 1 {
                let mut d = self.clone();
                d.attempts[i].replicas = 1;
                smaller.push(d);
            }
            for j in 0..self.attempts[i].steps.len() {
                if self.attempts[i].steps.len() > 1 {
                    let mut d = self.clone();
                    d.attempts[i].steps = without_step(&self.attempts[i].steps, j);
                    smaller.push(d);
                }
                let step = &self.attempts[i].steps[j];
                for k in 0..step.on.len() {
                    let mut d = self.clone();
                    d.attempts[i].steps[j].on.remove(k);
                    smaller.push(d);
                }
                if step.at_sync.is_some() {
                    let mut d = self.clone();
                    d.attempts[i].steps[j].at_sync = None;
                    smaller.push(d);
                }
            }
        }
        if self.fault.is_some() {
            let mut d = self.clone();
            d.fault = None;
            smaller.push(d);
        }
        for i in 0..self.seed_rows.len() {
            let mut d = self.clone();
            d.seed_rows.remove(i);
            smaller.push(d);
        }
        for i in 0..self.checks.len() {
            let mut d = self.clone();
            d.checks.remove(i);
            smaller.push(d);
        }
        if self.invariant.is_some() {
            let mut d = self.clone();
            d.invariant = None;
            smaller.push(d);
        }
        if self.wal {
            let mut d = self.clone();
            d.wal = false;
            smaller.push(d);
        }
        let uses_other = self
            .attempts
            .iter()
            .any(|a| a.steps.iter().any(|s| s.db == Db::Other));
        if self.other && !uses_other {
            let mut d = self.clone();
            d.other = false;
            smaller.push(d);
        }
        smaller
    }
}

/// `steps` without step `j`: a `goto` to it or past it is moved back one
/// (to it: to the step that took its place, or dropped when none did).
fn without_step(steps: &[Step], j: usize) -> Vec<Step> {
    let mut left: Vec<Step> = steps
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != j)
        .map(|(_, s)| s.clone())
        .collect();
    let len = left.len();
    for (i, step) in left.iter_mut().enumerate() {
        step.on.retain_mut(|(_, handler)| match handler {
            Handler::Goto { to, .. } => {
                if *to > j {
                    *to -= 1;
                }
                // A goto back, to an earlier step of this program, only.
                *to < len && *to <= i
            }
            _ => true,
        });
    }
    left
}

/// The statements that open a transaction, and those that end it (the
/// same index ends what it opens: `RELEASE s` a `SAVEPOINT s`).
const OPEN: &[&str] = &["BEGIN", "BEGIN IMMEDIATE", "SAVEPOINT s"];
const CLOSE: &[&str] = &["COMMIT", "ROLLBACK", "RELEASE s"];

fn random_attempt(rng: &mut Rng, other: bool) -> Attempt {
    // Most programs are transactions, as designs are: an opening, one or
    // two statements, and a close; the others any statements.
    let mut texts: Vec<(Db, Option<&'static str>, Option<&'static str>)> = Vec::new();
    let app = |rng: &mut Rng| {
        let (sql, capture) = APP[rng.usize(0..APP.len())];
        (Db::App, Some(sql), capture)
    };
    if rng.u32(0..10) < 6 {
        let kind = rng.usize(0..OPEN.len());
        texts.push((Db::App, Some(OPEN[kind]), None));
        for _ in 0..if rng.u32(0..4) == 0 { 2 } else { 1 } {
            // The body: the statements that are neither an opening nor a
            // close (APP lists those seven first).
            let (sql, capture) = APP[rng.usize(7..APP.len())];
            texts.push((Db::App, Some(sql), capture));
        }
        let close = if rng.u32(0..4) == 0 {
            rng.usize(0..CLOSE.len())
        } else if kind == 2 {
            2
        } else {
            0
        };
        texts.push((Db::App, Some(CLOSE[close]), None));
    } else {
        for _ in 0..rng.usize(1..=3) {
            texts.push(match rng.u32(0..20) {
                0 => (Db::App, None, None),
                1..=4 if other => (Db::Other, Some(OTHER[rng.usize(0..OTHER.len())]), None),
                _ => app(rng),
            });
        }
    }
    let steps = texts
        .into_iter()
        .enumerate()
        .map(|(i, (db, sql, capture))| {
            let mut on = Vec::new();
            if sql.is_some() {
                for (result, one_in) in [
                    ("busy", 3),
                    ("constraint", 5),
                    ("error", 8),
                    ("rows", 10),
                    ("none", 10),
                    ("ok", 12),
                ] {
                    if rng.u32(0..one_in) != 0 {
                        continue;
                    }
                    let failed = matches!(result, "busy" | "error" | "constraint");
                    let handler = match rng.u32(0..6) {
                        // Back, to the opening mostly (the retry loop many
                        // designs write, with or without rolling back), with
                        // back-off mostly, so that a waiting attempt does
                        // not spin. Only for BUSY and errors: a `goto` back
                        // on rows or ok loops for ever in every schedule.
                        0..=2 if failed => Handler::Goto {
                            to: if rng.bool() { 0 } else { rng.usize(0..=i) },
                            back_off: rng.u32(0..4) != 0,
                        },
                        3 if failed => Handler::Retry,
                        4 => Handler::Finish(OUTCOMES[rng.usize(0..OUTCOMES.len())]),
                        5 => Handler::Fail,
                        _ => Handler::Next,
                    };
                    on.push((result, handler));
                }
            }
            let at_sync = (sql.is_some_and(|s| s == "COMMIT" || s.starts_with("INSERT"))
                && rng.u32(0..12) == 0)
                .then(|| (rng.u8(1..=2), rng.bool()));
            Step {
                db,
                sql,
                capture: capture.filter(|_| rng.bool()),
                on,
                at_sync,
            }
        })
        .collect();
    Attempt { replicas: 1, steps }
}

/// One step as an inline TOML table; step `i` is named `s{i}`.
fn step_toml(i: usize, step: &Step) -> String {
    let mut fields = vec![format!("name = \"s{i}\"")];
    if step.db == Db::Other {
        fields.push("database = \"other\"".into());
    } else {
        fields.push("database = \"app\"".into());
    }
    match step.sql {
        Some(sql) => fields.push(format!("sql = \"{sql}\"")),
        None => fields.push("action = \"crash\"".into()),
    }
    if let Some(capture) = step.capture {
        fields.push(format!("capture = \"{capture}\""));
    }
    if let Some((sync, power)) = step.at_sync {
        let key = if power {
            "power-loss-at-sync"
        } else {
            "crash-at-sync"
        };
        fields.push(format!("{key} = {sync}"));
        if power {
            fields.push("databases = [\"app\"]".into());
        }
    }
    for (result, handler) in &step.on {
        let handler = match handler {
            Handler::Next => "\"next\"".to_string(),
            Handler::Retry => "\"retry\"".to_string(),
            Handler::Goto { to, back_off } => {
                if *back_off {
                    format!("{{ goto = \"s{to}\", back-off = true }}")
                } else {
                    format!("{{ goto = \"s{to}\" }}")
                }
            }
            Handler::Finish(outcome) => format!("{{ finish = \"{outcome}\" }}"),
            Handler::Fail => format!("{{ fail = \"{result} at s{i}\" }}"),
        };
        fields.push(format!("on.{result} = {handler}"));
    }
    format!("{{ {} }}", fields.join(", "))
}
