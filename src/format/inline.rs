//! A scenario file made whole: the libraries it includes written into it,
//! under `[libraries.NAME]`, so that everything it runs can be read and
//! changed in one file ("Edit a copy" of a built-in). `include` then takes
//! the file's own copy of a library before the catalog's
//! ([`super::File::libraries`]).
//!
//! A library's text is copied as it is, comments and all: only its table
//! headers are moved under `libraries.NAME` (`[[programs.request.steps]]`
//! becomes `[[libraries.idempotency.programs.request.steps]]`). Text inside
//! multi-line strings (SQL, notes) is left alone.

use super::SourcesRef;
use crate::params;
use crate::{Error, Result};

/// `source` with each library it includes (and does not already hold)
/// written in after it. A file that includes nothing comes back as it is.
pub(crate) fn with_libraries(source: &str, sources: SourcesRef) -> Result<String> {
    let file = super::parse(source, "scenario", sources)?;
    let mut out = source.to_string();
    for name in &file.include {
        if file.libraries.contains_key(name) {
            continue;
        }
        let text = sources.library(name).ok_or_else(|| {
            Error::invalid(
                "scenario",
                format!(
                    "include names {}, which is not a library",
                    params::quote(name)
                ),
            )
        })?;
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!(
            "\n# ---------------------------------------------------------------------------\n\
             # The library {quoted}, written into this file: `include = [{quoted}]` takes\n\
             # this copy, so what you change below is what the attempts run. Its programs\n\
             # are under [libraries.{key}.programs.NAME]; an attempt's `program = \"NAME\"`\n\
             # names one of them.\n\
             # ---------------------------------------------------------------------------\n\
             [libraries.{key}]\n",
            quoted = params::quote(name),
            key = key(name),
        ));
        out.push_str(&moved_under(text, &format!("libraries.{}", key(name))));
    }
    Ok(out)
}

/// A TOML key for `name`: bare where it can be, else quoted.
fn key(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}

/// `text` (a TOML document) with every table header moved under `prefix`.
fn moved_under(text: &str, prefix: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    // The multi-line string a line ends inside of, if any (`"""` or `'''`).
    let mut inside: Option<&str> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if inside.is_none() && trimmed.starts_with('[') {
            let indent = &line[..line.len() - trimmed.len()];
            let (open, rest) = if let Some(rest) = trimmed.strip_prefix("[[") {
                ("[[", rest)
            } else {
                ("[", &trimmed[1..])
            };
            out.push_str(indent);
            out.push_str(open);
            out.push_str(prefix);
            out.push('.');
            out.push_str(rest.trim_start());
            continue;
        }
        out.push_str(line);
        inside = still_inside(line, inside);
    }
    out
}

/// Whether a multi-line string is open after `line`, given the one open
/// before it: each `"""` or `'''` outside a one-line string or a comment
/// opens or closes one.
fn still_inside<'d>(line: &str, mut inside: Option<&'d str>) -> Option<&'d str> {
    const DELIMITERS: [&str; 2] = ["\"\"\"", "'''"];
    let mut rest = line;
    while !rest.is_empty() {
        if let Some(open) = inside {
            match rest.find(open) {
                Some(at) if open == "\"\"\"" && escaped(&rest[..at]) => {
                    rest = &rest[at + 1..];
                }
                Some(at) => {
                    rest = &rest[at + 3..];
                    // A closing delimiter may take up to two more quotes.
                    rest = rest.trim_start_matches(&open[..1]);
                    inside = None;
                }
                None => return inside,
            }
            continue;
        }
        // Outside: the first of a comment, a multi-line string or a
        // one-line string decides.
        let next = rest
            .char_indices()
            .find(|&(_, c)| c == '#' || c == '"' || c == '\'');
        let (at, c) = next?;
        if c == '#' {
            return None;
        }
        let here = &rest[at..];
        if let Some(delimiter) = DELIMITERS.iter().find(|d| here.starts_with(**d)) {
            inside = Some(delimiter);
            rest = &here[3..];
            continue;
        }
        // A one-line string: skip to its end.
        let body = &here[1..];
        let end = if c == '"' {
            let mut escape = false;
            body.char_indices()
                .find(|&(_, ch)| {
                    let done = ch == '"' && !escape;
                    escape = ch == '\\' && !escape;
                    done
                })
                .map(|(i, _)| i)
        } else {
            body.find('\'')
        };
        match end {
            Some(i) => rest = &body[i + 1..],
            None => return None,
        }
    }
    inside
}

/// Whether the text before a `"""` ends in an odd number of backslashes
/// (the first quote is escaped).
fn escaped(before: &str) -> bool {
    before.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_move_and_strings_stay() {
        let text = "# a comment [not.a.header]\n[params.a]\ndefault = 1\n\
                    sql = \"\"\"\n[inside]\n  [[also.inside]]\n\"\"\"\n\
                    [[programs.p.steps]]\nname = \"[x]\"\nnote = '''\n[lit]\n'''\n\
                    [programs.p.steps.note]\nok = \"\\\"\\\"\\\"\"\n[after]\n";
        let moved = moved_under(text, "libraries.lib");
        assert_eq!(
            moved,
            "# a comment [not.a.header]\n[libraries.lib.params.a]\ndefault = 1\n\
             sql = \"\"\"\n[inside]\n  [[also.inside]]\n\"\"\"\n\
             [[libraries.lib.programs.p.steps]]\nname = \"[x]\"\nnote = '''\n[lit]\n'''\n\
             [libraries.lib.programs.p.steps.note]\nok = \"\\\"\\\"\\\"\"\n[libraries.lib.after]\n"
        );
    }

    #[test]
    fn a_string_closed_on_its_line_opens_nothing() {
        assert_eq!(still_inside("a = \"\"\"one line\"\"\"\n", None), None);
        assert_eq!(still_inside("a = \"\"\"\n", None), Some("\"\"\""));
        assert_eq!(
            still_inside("end \\\"\"\" still\n", Some("\"\"\"")),
            Some("\"\"\"")
        );
        assert_eq!(still_inside("end\"\"\"\"\n", Some("\"\"\"")), None);
        assert_eq!(still_inside("# \"\"\" in a comment\n", None), None);
        assert_eq!(still_inside("a = '\"\"\"' # x\n", None), None);
    }
}
