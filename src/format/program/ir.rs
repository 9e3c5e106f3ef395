//! What a compiled file is made of: each attempt an [`Instance`] whose
//! program is a list of [`Step`]s, and the helpers every stage needs
//! (templates filled in, values shown, errors explained).

use std::hash::{Hash, Hasher};
use std::rc::Rc;

use serde_json::{Map, Value};

use super::super::file::{File, NoteSpec, StepSpec};
use super::super::limits::MAX_STATEMENT_INSTRUCTIONS;
use crate::storage::SqlValue;
use crate::storage::{is_busy_snapshot, is_interrupt};
use crate::Error;

pub(super) fn bad(why: String) -> Error {
    Error::invalid("scenario", why)
}

/// An expansion of a one-attempt file, kept with everything it read besides
/// the file: see [`FileScenario::expand`].
pub(super) struct Kept {
    /// The file (kept alive here, so that its address is not reused).
    pub(super) file: Rc<File>,
    /// The attempt's declaration within it, and the attempt's index.
    pub(super) spec: usize,
    pub(super) index: usize,
    /// Each value the expansion looked up (an attempt's value, a
    /// parameter, `attempt`, `label`), with what it found.
    pub(super) read: Vec<(String, Option<SqlValue>)>,
    /// Each attempt name it asked for (`wait-while`), with the answer.
    pub(super) asked: Vec<(String, Vec<usize>)>,
    pub(super) steps: Rc<[Step]>,
}

/// How many expansions a thread keeps (the oldest goes first).
pub(super) const MAX_EXPANSIONS: usize = 64;

thread_local! {
    /// Expansions of one-attempt files (see [`FileScenario::expand`]).
    pub(super) static EXPANSIONS: std::cell::RefCell<Vec<Kept>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// One attempt, compiled.
pub(super) struct Instance {
    pub(super) index: usize,
    pub(super) label: String,
    pub(super) role: Option<String>,
    pub(super) kind: InstanceKind,
    /// The attempt's values (`with`), resolved.
    pub(super) values: Vec<(String, SqlValue)>,
    pub(super) class: u64,
    pub(super) after: Option<usize>,
    pub(super) crash: Option<Crash>,
    pub(super) not_before: i64,
    /// The first step that is there (`when`), where the program starts.
    pub(super) start: usize,
    /// How many steps it may take.
    pub(super) max_steps: usize,
    pub(super) params: Rc<Map<String, Value>>,
    pub(super) files: Rc<[&'static str]>,
    pub(super) pragmas: Rc<[String]>,
    /// The engine's options (its connections' `synchronous` level, the
    /// journal mode its messages name).
    pub(super) options: crate::storage::EngineOptions,
    /// What its statements, and the schemas' triggers, may read of its
    /// connections' own state (a template's `{rowid}` counts as reading
    /// `last_insert_rowid()`): what its state must then hold of them.
    pub(super) local: crate::storage::LocalUse,
}

pub(super) enum InstanceKind {
    Program(Rc<[Step]>),
    Clock {
        tick: i64,
        until: i64,
        hold: Option<(i64, usize)>,
    },
}

pub(super) struct Crash {
    pub(super) after: usize,
    pub(super) name: String,
    pub(super) result: Option<String>,
    pub(super) note: String,
}

/// One step of an expanded program.
pub(super) struct Step {
    pub(super) name: String,
    pub(super) kind: StepKind,
    pub(super) db: usize,
    pub(super) capture: Vec<String>,
    pub(super) set: Vec<(String, SetValue)>,
    pub(super) note: Option<NoteSpec>,
    pub(super) phase: &'static str,
    pub(super) because: Vec<(Vec<String>, String)>,
    pub(super) on: Handlers,
    pub(super) with: Vec<(String, SqlValue)>,
    /// The next step that is there.
    pub(super) next: usize,
    /// Whether the step is there for this attempt (its `when`); a step
    /// that is not keeps its slot, and `next` and `goto` pass over it.
    pub(super) present: bool,
    /// Whether the step handles its own errors (else the file's `on` does).
    pub(super) own_errors: bool,
    /// The captures the program may still read from here on, before
    /// capturing them again (sorted): only these make two states differ.
    pub(super) live: Vec<String>,
    /// Its statement dies at its Nth sync: the process, or the power of a
    /// machine (`crash-at-sync`, `power-loss-at-sync`).
    pub(super) dies_at_sync: Option<(u32, crate::storage::Death)>,
}

pub(super) enum StepKind {
    Sql(String),
    Crash,
    LoseReply,
    Work,
    Fail,
    /// The machine holding these database files loses power (every
    /// database's when empty); with a tearing (from 1), the writes not yet
    /// synced are torn by it ([`crate::storage::seeded_tearing`]).
    PowerLoss(Vec<String>, u32),
    /// That machine's disk fills up (`true`) or has room again.
    DiskFull(Vec<String>, bool),
    /// The next such call on that machine's files fails.
    IoError(Vec<String>, crate::storage::IoCall),
}

pub(super) enum SetValue {
    Template(String),
    Value(SqlValue),
}

#[derive(Default)]
pub(super) struct Handlers {
    pub(super) ok: Option<Act>,
    pub(super) rows: Option<Act>,
    pub(super) none: Option<Act>,
    pub(super) cases: Vec<(String, Act)>,
    pub(super) busy: Option<Act>,
    pub(super) constraint: Option<Act>,
    pub(super) error: Option<Act>,
}

impl Handlers {
    /// Every action, whatever it answers.
    pub(super) fn acts(&self) -> impl Iterator<Item = &Act> {
        [
            &self.ok,
            &self.rows,
            &self.none,
            &self.busy,
            &self.constraint,
            &self.error,
        ]
        .into_iter()
        .flatten()
        .chain(self.cases.iter().map(|(_, a)| a))
    }
}

#[derive(Clone)]
pub(super) enum Act {
    Next,
    Wait,
    Retry,
    Goto {
        target: usize,
        back_off: bool,
        log: Option<String>,
        wait_while: Vec<usize>,
    },
    Finish {
        kind: String,
        result: Option<String>,
        log: Option<String>,
        wait_while: Vec<usize>,
    },
    Fail(String),
    /// Only `wait-while`: stay while they run, else go on.
    WaitWhile(Vec<usize>),
}

/// A step before expansion: the spec, with the values of the `use` that
/// brought it in and the log that replaces its finishes.
pub(super) struct RawStep<'a> {
    pub(super) spec: &'a StepSpec,
    pub(super) name: String,
    /// Its `id` for `goto`, filled in.
    pub(super) id: Option<String>,
    /// The `when`s of the `use` steps that brought it in.
    pub(super) conditions: Vec<String>,
    /// The `phase` of the `use` step that brought it in, which it takes.
    pub(super) phase: Option<String>,
    pub(super) with: Vec<(String, SqlValue)>,
    /// Inside a `use`: where its finishes go instead, and what they log.
    pub(super) ret: Option<(usize, Option<String>)>,
}

/// `{name}` in `text` filled from `lookup` (unknown names stay as written).
/// Within a run, each value is charged to the run's budget of bytes before
/// it is copied in: past it the text is left unfinished (and the step that
/// wanted it is stopped: [`crate::storage::charge_bytes`]).
pub(super) fn fill(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    fill_with(text, lookup, false)
}

/// The most characters of one value a note shows ([`fill_note`]).
pub(super) const NOTE_VALUE_CHARS: usize = 200;
/// The most bytes of one note ([`fill_note`]).
pub(super) const NOTE_BYTES: usize = 4096;

/// `{name}` in a note filled from `lookup`: a note is for a person and is
/// written only when a run is recorded, so it is not charged to the run
/// (a recorded run and the same run unrecorded spend the same); instead a
/// value longer than [`NOTE_VALUE_CHARS`] is cut (its length said, as the
/// page's table cells say it), and the note at [`NOTE_BYTES`].
pub(super) fn fill_note(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    fill_with(text, lookup, true)
}

pub(super) fn fill_with(text: &str, lookup: &dyn Fn(&str) -> Option<String>, note: bool) -> String {
    if !text.contains(['{', '}']) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['{', '}']) {
        out.push_str(&rest[..at]);
        let brace = &rest[at..at + 1];
        let after = &rest[at + 1..];
        // `{{` and `}}` are a brace itself.
        if after.starts_with(brace) {
            out.push_str(brace);
            rest = &after[1..];
            continue;
        }
        if brace == "}" {
            out.push('}');
            rest = after;
            continue;
        }
        let Some(close) = after.find('}') else {
            out.push_str(&rest[at..]);
            return out;
        };
        let name = &after[..close];
        match lookup(name) {
            Some(value) if note && value.chars().nth(NOTE_VALUE_CHARS).is_some() => {
                let cut: String = value.chars().take(NOTE_VALUE_CHARS).collect();
                let chars = value.chars().count();
                out.push_str(&format!(
                    "{cut}… ({} characters)",
                    crate::grouped(&chars.to_string())
                ));
            }
            Some(value) if note => out.push_str(&value),
            Some(value) if !crate::storage::charge_bytes(value.len()) => return out,
            Some(value) => out.push_str(&value),
            None => {
                out.push('{');
                out.push_str(name);
                out.push('}');
            }
        }
        rest = &after[close + 1..];
        if note && out.len() > NOTE_BYTES {
            let mut end = NOTE_BYTES;
            while !out.is_char_boundary(end) {
                end -= 1;
            }
            out.truncate(end);
            out.push('…');
            return out;
        }
    }
    out.push_str(rest);
    out
}

/// A value as words.
pub(super) fn words_of(value: &SqlValue) -> String {
    match value {
        SqlValue::Text(t) => t.clone(),
        SqlValue::Integer(i) => i.to_string(),
        SqlValue::Real(f) => f.to_string(),
        SqlValue::Null => "NULL".into(),
        SqlValue::Blob(_) => "a blob".into(),
    }
}

/// A TOML value as SQL binds it.
pub(super) fn toml_sql(value: &toml::Value) -> Option<SqlValue> {
    match value {
        toml::Value::Integer(i) => Some(SqlValue::Integer(*i)),
        toml::Value::Float(f) => Some(SqlValue::Real(*f)),
        toml::Value::Boolean(b) => Some(SqlValue::Integer(i64::from(*b))),
        toml::Value::String(s) => Some(SqlValue::Text(s.clone())),
        _ => None,
    }
}

/// Parameter `name`'s value as SQL binds it (`:name`); the scenario's
/// parameters carry the file's `defaults` too, after the parameters.
pub(super) fn param_value(params: &Map<String, Value>, name: &str) -> Option<SqlValue> {
    match params.get(name)? {
        Value::Number(n) => n.as_i64().map(SqlValue::Integer),
        Value::String(s) => Some(SqlValue::Text(s.clone())),
        _ => None,
    }
}

/// What `:name` is to attempt `index` labelled `label`: one of its values
/// (`with`, then `let`), `attempt`, `label`, or a parameter.
pub(super) fn attempt_value(
    values: &[(String, SqlValue)],
    index: usize,
    label: &str,
    params: &Map<String, Value>,
    name: &str,
) -> Option<SqlValue> {
    values
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
        .or_else(|| match name {
            "attempt" => Some(SqlValue::Integer(index as i64)),
            "label" => Some(SqlValue::Text(label.to_string())),
            _ => param_value(params, name),
        })
}

/// `answer`, noted in `log` as what `name` gave the first time it is asked.
pub(super) fn noted<T: Clone>(
    log: &std::cell::RefCell<Vec<(String, T)>>,
    name: &str,
    answer: T,
) -> T {
    let mut log = log.borrow_mut();
    if !log.iter().any(|(n, _)| n == name) {
        log.push((name.to_string(), answer.clone()));
    }
    answer
}

pub(super) fn leak(text: String) -> &'static str {
    super::super::file::leak(&text)
}

/// An error in words; an interrupted or refused statement, or a stale WAL
/// snapshot, says why.
pub(super) fn explain(error: &Error) -> String {
    if let Some(sentence) = crate::storage::refusal(error) {
        sentence
    } else if is_busy_snapshot(error) {
        crate::storage::BUSY_SNAPSHOT.to_string()
    } else if is_interrupt(error) {
        format!(
            "the statement ran more than {MAX_STATEMENT_INSTRUCTIONS} SQLite instructions and was stopped; it may loop for ever"
        )
    } else {
        error.to_string()
    }
}

/// The names a text reads: `:name` and `{name}`.
pub(super) fn reads<'t>(text: &'t str, mut each: impl FnMut(&'t str)) {
    let bytes = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b':' || bytes[i] == b'{' {
            let start = i + 1;
            let mut end = start;
            while end < bytes.len()
                && (ident(bytes[end]) || (bytes[i] == b'{' && bytes[end] == b'-'))
            {
                end += 1;
            }
            if end > start {
                each(&text[start..end]);
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
}

pub(super) fn hash_value(value: &SqlValue, h: &mut impl Hasher) {
    match value {
        SqlValue::Null => 0u8.hash(h),
        SqlValue::Integer(i) => (1u8, i).hash(h),
        SqlValue::Real(f) => (2u8, f.to_bits()).hash(h),
        SqlValue::Text(t) => (3u8, t).hash(h),
        SqlValue::Blob(b) => (4u8, b).hash(h),
    }
}

pub(super) fn sql_json(value: &SqlValue) -> Value {
    match value {
        SqlValue::Null => Value::Null,
        SqlValue::Integer(i) => Value::from(*i),
        SqlValue::Real(f) => Value::from(*f),
        SqlValue::Text(t) => Value::from(t.as_str()),
        SqlValue::Blob(b) => Value::from(format!(
            "x'{}'",
            b.iter().map(|x| format!("{x:02x}")).collect::<String>()
        )),
    }
}
