//! Every statement a scenario file can run, compiled before any run.
//!
//! A typo in a step's SQL used to show only inside a run's trace, and in a
//! design declared to fail the typo *was* the failure the explorer found.
//! Here each statement (every step of every attempt as it is instantiated,
//! every check and named query a check uses, every invariant, each
//! database's pragmas) is prepared by SQLite against the databases as the
//! scenario's setup leaves them, on a private store, without running
//! anything. A statement that names a table or column a step creates is
//! prepared after every step's `CREATE` and `ALTER` statements have run on
//! that store: those are prepared and run first, once per text, in the
//! order attempts and steps are declared (each against what the ones
//! before it made).
//!
//! SQLite says where in a statement the token it stopped at begins
//! (`sqlite3_error_offset`); that offset inside the SQL text is mapped to
//! the place of that text in the TOML source, through its quotes and
//! escapes, so the mistake is reported at its line and column.

use std::ops::Range;

use toml::de::{DeTable, DeValue};

use crate::engines::{Engine, Opening};
use crate::storage::Store;
use crate::{Error, Result};

/// A statement a scenario can run, for [`mistakes`] to prepare.
pub(super) struct Statement {
    /// Which it is, in words ("step \"read\" of attempt A").
    pub what: String,
    /// Its database's index.
    pub db: usize,
    /// Its text, as the file gives it.
    pub sql: String,
    /// Whether a step runs it (what a step creates is created before the
    /// others are prepared).
    pub step: bool,
    /// Whether it is a database's pragmas (run, not prepared: they may be
    /// several statements).
    pub pragmas: bool,
    /// A name to find it by in the source when its text is not there (a
    /// library's step, a check's named query).
    pub near: Option<String>,
}

/// An SQL statement of a file that SQLite cannot prepare.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SqlMistake {
    /// Where, in the file: line and column (both from 1), when found.
    pub line: usize,
    pub column: usize,
    /// Which statement ("step \"read\" of attempt A").
    pub what: String,
    /// SQLite's message ("no such table: countr"), or what is wrong with
    /// a template.
    pub message: String,
    /// Whether it is a `{NAME}` template in SQL, which nothing fills: refused
    /// even where SQL errors are allowed.
    pub template: bool,
}

impl std::fmt::Display for SqlMistake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {}: {}: {}",
            self.line, self.column, self.what, self.message
        )
    }
}

/// Prepares every statement of `statements` against a store `setup` made,
/// and returns the ones SQLite refuses, each located in `source` (one per
/// place and message: replicas of an attempt share their program's text).
pub(super) fn mistakes(
    statements: &[Statement],
    databases: &[&'static str],
    setup: impl FnOnce(&Store) -> Result<()>,
    source: &str,
) -> Result<Vec<SqlMistake>> {
    let store = Store::new("sql-check")?;
    setup(&store)?;
    let conns = databases
        .iter()
        .map(|db| store.open(&Opening::reader(db, super::limits::MAX_VALUE_BYTES)))
        .collect::<Result<Vec<_>>>()?;
    let strings = strings_of(source);
    let mut found: Vec<SqlMistake> = Vec::new();
    let mut note = |statement: &Statement, message: String, offset: Option<usize>, template| {
        let position = strings
            .iter()
            .find(|(text, _)| *text == statement.sql)
            .and_then(|(_, span)| {
                let token = source.get(span.clone())?;
                Some(span.start + decoded_to_source(token, offset.unwrap_or(0))?)
            })
            .or_else(|| statement.near.as_ref().and_then(|n| find_quoted(source, n)));
        let (line, column) = position.map_or((1, 1), |at| line_and_column(source, at));
        let mistake = SqlMistake {
            line,
            column,
            what: statement.what.clone(),
            message,
            template,
        };
        let seen = found.iter().any(|m| {
            m.line == mistake.line && m.column == mistake.column && m.message == mistake.message
        });
        if !seen {
            found.push(mistake);
        }
    };
    // A template in SQL: a value is bound (`:NAME`), never pasted into the
    // statement's text, so nothing fills `{NAME}` there.
    let mut templated = Vec::new();
    for (index, statement) in statements.iter().enumerate() {
        if let Some((at, name)) = template_in(&statement.sql) {
            note(
                statement,
                format!(
                    "{{{name}}} is not filled in SQL: bind :{name} instead (values are bound to a statement, never pasted into its text)"
                ),
                Some(at),
                true,
            );
            templated.push(index);
        }
    }
    let statements: Vec<&Statement> = statements
        .iter()
        .enumerate()
        .filter(|(i, _)| !templated.contains(i))
        .map(|(_, s)| s)
        .collect();
    let mut refuse = |statement: &Statement, error: &Error| {
        let (message, offset) = crate::storage::message_and_offset(error);
        let offset = offset.or_else(|| named_offset(&statement.sql, &message));
        note(statement, message, offset, false);
    };
    // Pragmas first: they run when a connection opens, before any step.
    for statement in statements.iter().filter(|s| s.pragmas) {
        if let Err(e) = conns[statement.db].apply_pragmas(&statement.sql) {
            refuse(statement, &e);
        }
    }
    // What steps create, in order, each prepared against what the ones
    // before it made and then run (once per text: replicas share theirs),
    // so that the statements naming it can be prepared.
    let changes_schema = |s: &&&Statement| s.step && creates(&s.sql);
    let mut created: Vec<(usize, &str)> = Vec::new();
    for statement in statements.iter().filter(changes_schema) {
        if created.contains(&(statement.db, statement.sql.as_str())) {
            continue;
        }
        created.push((statement.db, statement.sql.as_str()));
        let conn = &conns[statement.db];
        let ran = conn.prepare(&statement.sql).and_then(|()| {
            crate::storage::with_budget(super::limits::MAX_STATEMENT_INSTRUCTIONS, || {
                conn.execute_batch(&statement.sql)
            })
        });
        if let Err(e) = ran {
            refuse(statement, &e);
        }
    }
    for statement in statements
        .iter()
        .filter(|s| !s.pragmas && !changes_schema(s))
    {
        let conn = &conns[statement.db];
        if let Err(e) = conn.prepare(&statement.sql) {
            refuse(statement, &e);
        }
    }
    drop(conns);
    // In the order of the file.
    found.sort_by_key(|m| (m.line, m.column));
    Ok(found)
}

/// The first `{NAME}` in `sql` (a name of letters, digits, `_` and `-`):
/// its byte offset and the name.
fn template_in(sql: &str) -> Option<(usize, &str)> {
    sql.match_indices('{').find_map(|(at, _)| {
        let rest = &sql[at + 1..];
        let name = &rest[..rest.find('}')?];
        let word = !name.is_empty()
            && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        word.then_some((at, name))
    })
}

/// Whether a statement changes the schema in a way later statements may
/// rely on.
fn creates(sql: &str) -> bool {
    let head: String = sql
        .trim_start()
        .chars()
        .take(6)
        .collect::<String>()
        .to_ascii_uppercase();
    head.starts_with("CREATE") || head.starts_with("ALTER")
}

/// Where in `sql` the name an error message without an offset ends with is
/// ("no such table: countr", "no such function: nosuch"): its first
/// occurrence as a whole word, in any case.
fn named_offset(sql: &str, message: &str) -> Option<usize> {
    let (_, name) = message.rsplit_once(": ")?;
    let name = name.trim();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    if name.is_empty() || !name.chars().all(|c| word(c) || c == '.') {
        return None;
    }
    let (lower, wanted) = (sql.to_lowercase(), name.to_lowercase());
    // Lowercasing ASCII names keeps byte offsets; other text may not.
    if lower.len() != sql.len() {
        return None;
    }
    lower.match_indices(&wanted).map(|(at, _)| at).find(|&at| {
        let before = lower[..at].chars().next_back();
        let after = lower[at + wanted.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// Every string value of the source with its span (quotes included).
fn strings_of(source: &str) -> Vec<(String, Range<usize>)> {
    fn walk(value: &toml::Spanned<DeValue<'_>>, out: &mut Vec<(String, Range<usize>)>) {
        match value.get_ref() {
            DeValue::String(s) => out.push((s.to_string(), value.span())),
            DeValue::Array(items) => items.iter().for_each(|v| walk(v, out)),
            DeValue::Table(table) => table.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(document) = DeTable::parse(source) {
        document.get_ref().values().for_each(|v| walk(v, &mut out));
    }
    out
}

/// The first place of `"name"` in the source (the name itself).
fn find_quoted(source: &str, name: &str) -> Option<usize> {
    source.find(&format!("\"{name}\"")).map(|at| at + 1)
}

/// The line and column (both from 1, the column in characters) of byte
/// `at` of `source`: where every mistake of a file is said to be.
pub(super) fn line_and_column(source: &str, at: usize) -> (usize, usize) {
    let before = &source[..at.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// The byte of a TOML string token (`"…"`, `'…'`, `"""…"""`, `'''…'''`)
/// where the byte `offset` of its decoded text is written: through escapes
/// (`\n`, `\u00e9`, a line-ending backslash) and the newline a multi-line
/// string drops after its opening quotes.
fn decoded_to_source(token: &str, offset: usize) -> Option<usize> {
    let delimiter = ["\"\"\"", "'''", "\"", "'"]
        .into_iter()
        .find(|d| token.starts_with(d) && token.len() >= 2 * d.len())?;
    let literal = delimiter.starts_with('\'');
    let multi = delimiter.len() == 3;
    let body = &token[delimiter.len()..token.len() - delimiter.len()];
    let mut i = 0;
    if multi {
        if body.starts_with("\r\n") {
            i = 2;
        } else if body.starts_with('\n') {
            i = 1;
        }
    }
    let mut decoded = 0;
    while i < body.len() {
        if decoded >= offset {
            return Some(delimiter.len() + i);
        }
        let c = body[i..].chars().next()?;
        if c == '\\' && !literal {
            let rest = &body[i + 1..];
            let hex = |digits: usize| -> Option<usize> {
                let code = u32::from_str_radix(rest.get(1..1 + digits)?, 16).ok()?;
                Some(char::from_u32(code)?.len_utf8())
            };
            let (taken, produced) = match rest.chars().next()? {
                'u' => (6, hex(4)?),
                'U' => (10, hex(8)?),
                'x' => (4, hex(2)?),
                ' ' | '\t' | '\r' | '\n' if multi => {
                    // A line-ending backslash: the whitespace and newlines
                    // after it are dropped.
                    let kept = rest.trim_start_matches([' ', '\t', '\r', '\n']);
                    (1 + rest.len() - kept.len(), 0)
                }
                _ => (2, 1),
            };
            i += taken;
            decoded += produced;
            continue;
        }
        i += c.len_utf8();
        decoded += c.len_utf8();
    }
    (decoded >= offset).then_some(delimiter.len() + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The source text at the place offset `offset` of `decoded` maps to.
    fn at(token: &str, offset: usize) -> &str {
        &token[decoded_to_source(token, offset).unwrap()..]
    }

    #[test]
    fn a_name_an_error_ends_with_is_found_in_the_statement() {
        let sql = "SELECT countr FROM counter JOIN Countr2 ON 1";
        assert_eq!(named_offset(sql, "no such column: countr"), Some(7));
        assert_eq!(named_offset(sql, "no such table: COUNTR2"), Some(32));
        assert_eq!(named_offset(sql, "no such table: count"), None);
        assert_eq!(named_offset(sql, "near \"x\": syntax error"), None);
    }

    #[test]
    fn offsets_go_through_quotes_and_escapes() {
        assert!(at(r#""SELEC v FROM t""#, 0).starts_with("SELEC"));
        assert!(at(r#""SELECT v FROM countr""#, 14).starts_with("countr"));
        assert!(at(r#""SELECT \"a\" FROM countr""#, 16).starts_with("countr"));
        assert!(at(r#""SELECT '\u00e9' FROM countr""#, 17).starts_with("countr"));
        assert!(at("'SELECT \\n FROM countr'", 15).starts_with("countr"));
        assert!(at("\"\"\"\nSELECT 1\nFROM countr\"\"\"", 14).starts_with("countr"));
        assert!(at("'''\r\nSELECT 1 FROM countr'''", 14).starts_with("countr"));
        assert!(at("\"\"\"SELECT 1 \\\n    FROM countr\"\"\"", 14).starts_with("countr"));
        assert_eq!(decoded_to_source("\"abc\"", 9), None);
        assert_eq!(decoded_to_source("abc", 0), None);
    }

    #[test]
    fn strings_are_found_with_their_spans() {
        let source = "a = \"x\"\n[t]\nb = ['''y''', { c = \"z\" }]\n";
        let strings = strings_of(source);
        let texts: Vec<&str> = strings
            .iter()
            .map(|(text, span)| {
                assert!(source[span.clone()].contains(text.as_str()));
                text.as_str()
            })
            .collect();
        assert_eq!(texts, ["x", "y", "z"]);
    }
}
