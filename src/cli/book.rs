//! `replayground book-preprocess`: the book's mdBook preprocessor. A fenced
//! block whose info string is `replayground` becomes a live player (the
//! `<replayground-scenario>` element of `www/js/embed.js`):
//!
//! ````markdown
//! ```replayground schedule=ABAB
//! title = "A seat booked by check-then-insert"
//! …
//! ```
//! ````
//!
//! holds a design inline; `replayground scenario=idem-race` names a built-in,
//! and `replayground src=seats.toml` a file (beside the chapter; it is
//! inlined). The other attributes are the element's (`schedule`, `params`,
//! `controls`, `step`, `theme`). Each design is checked as `replayground
//! check` checks a file (parsed, its SQL prepared, built, run once), a named
//! built-in must exist and a schedule must decode: a broken example fails
//! the book's build with its file, line and message. A page with players
//! loads the element's module once.

use std::path::{Path, PathBuf};

use clap::Args;
use replayground::catalog::Named;
use replayground::search::Explorer;
use serde_json::Value;

// The arguments of `replayground book-preprocess`.
#[derive(Args)]
pub(super) struct BookPreprocess {
    /// mdBook asks `supports RENDERER` first: every renderer is supported.
    #[arg(num_args = 0..=2)]
    supports: Vec<String>,
}

/// The element's attributes a block may give, besides `src`.
const ATTRIBUTES: [&str; 6] = [
    "scenario", "schedule", "params", "controls", "step", "theme",
];

impl BookPreprocess {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        if self.supports.first().map(String::as_str) == Some("supports") {
            return Ok(());
        }
        let input: Value = serde_json::from_reader(std::io::stdin().lock())
            .map_err(|e| format!("book-preprocess: mdBook's input is not JSON: {e}"))?;
        let [context, mut book] = <[Value; 2]>::try_from(match input {
            Value::Array(pair) => pair,
            _ => Vec::new(),
        })
        .map_err(|_| "book-preprocess: expected mdBook's [context, book]")?;
        let root = context["root"].as_str().unwrap_or(".");
        let src = Path::new(root).join(context["config"]["book"]["src"].as_str().unwrap_or("src"));
        let mut problems = Vec::new();
        let mut players = 0;
        chapters(&mut book, &mut |chapter| {
            let path = chapter["path"].as_str().unwrap_or_default().to_string();
            let content = chapter["content"].as_str().unwrap_or_default().to_string();
            let (rendered, found) = render(&content, &src, &path, &mut problems);
            if found > 0 {
                players += found;
                chapter["content"] = Value::String(rendered);
            }
        });
        if !problems.is_empty() {
            for problem in &problems {
                eprintln!("{problem}");
            }
            return Err(format!(
                "the book has {} broken example{}",
                problems.len(),
                if problems.len() == 1 { "" } else { "s" }
            )
            .into());
        }
        eprintln!("book-preprocess: {players} live players, every design checked");
        serde_json::to_writer(std::io::stdout().lock(), &book)?;
        Ok(())
    }
}

/// Calls `each` on every chapter of the book, sub-chapters too.
fn chapters(value: &mut Value, each: &mut dyn FnMut(&mut Value)) {
    match value {
        Value::Object(map) => {
            if let Some(chapter) = map.get_mut("Chapter") {
                each(chapter);
            }
            for child in map.values_mut() {
                chapters(child, each);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| chapters(item, each)),
        _ => {}
    }
}

/// `content` with each `replayground` block as a player, and how many; the
/// module's script first when there are any. A block that is wrong is a
/// problem ("docs/src/x.md:12:5: …"), and stays as it was.
fn render(content: &str, src: &Path, path: &str, problems: &mut Vec<String>) -> (String, usize) {
    let mut out = String::with_capacity(content.len());
    let mut found = 0;
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    let mut i = 0;
    let chapter = src.join(path);
    // Where the element's module is, from this chapter's page.
    let depth = Path::new(path).components().count().saturating_sub(1);
    let module = format!("{}../js/embed.js", "../".repeat(depth));
    // The fence of another code block the line is in (a chapter may show a
    // `replayground` block as an example, inside a longer fence).
    let mut other: Option<&str> = None;
    while i < lines.len() {
        let line = lines[i];
        let info = line.trim_end().strip_prefix("```replayground");
        let info =
            info.filter(|rest| other.is_none() && (rest.is_empty() || rest.starts_with(' ')));
        let Some(info) = info else {
            let fence = line.trim_start();
            let marks = fence.len() - fence.trim_start_matches(['`', '~']).len();
            if marks >= 3 {
                let mark = &fence[..marks];
                match other {
                    Some(open) if mark.starts_with(open) && fence[marks..].trim().is_empty() => {
                        other = None
                    }
                    None => other = Some(mark),
                    Some(_) => {}
                }
            }
            out.push_str(line);
            i += 1;
            continue;
        };
        let start = i + 1; // the fence's line number (from 1)
        let end = (i + 1..lines.len()).find(|&j| lines[j].trim_end() == "```");
        let Some(end) = end else {
            problems.push(format!(
                "{}:{start}: a replayground block without its closing ```",
                chapter.display()
            ));
            out.push_str(line);
            i += 1;
            continue;
        };
        let body: String = lines[i + 1..end].concat();
        match player(info, &body, &chapter, start) {
            Ok(html) => {
                out.push_str(&html);
                found += 1;
            }
            Err(problem) => {
                problems.push(problem);
                out.push_str(&lines[i..=end].concat());
            }
        }
        i = end + 1;
    }
    if found > 0 {
        out = format!("<script type=\"module\" src=\"{module}\"></script>\n\n{out}");
    }
    (out, found)
}

/// The player of one block, after its design is checked; `fence` is the
/// line of its opening fence in `chapter`.
fn player(info: &str, body: &str, chapter: &Path, fence: usize) -> Result<String, String> {
    let at = |line: usize| format!("{}:{line}", chapter.display());
    let mut attributes = Vec::new();
    let mut design: Option<(String, PathBuf, usize)> = None;
    for (key, value) in words(info).map_err(|e| format!("{}: {e}", at(fence)))? {
        match key.as_str() {
            "src" => {
                let file = chapter.parent().unwrap_or(Path::new(".")).join(&value);
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| format!("{}: cannot read {}: {e}", at(fence), file.display()))?;
                design = Some((text, file, 0));
            }
            key if ATTRIBUTES.contains(&key) => attributes.push((key.to_string(), value)),
            other => {
                return Err(format!(
                    "{}: unknown attribute {other}; use src, {}",
                    at(fence),
                    ATTRIBUTES.join(", ")
                ))
            }
        }
    }
    if !body.trim().is_empty() {
        if design.is_some() {
            return Err(format!(
                "{}: a block gives src or a design, not both",
                at(fence)
            ));
        }
        design = Some((body.to_string(), chapter.to_path_buf(), fence));
    }
    let given = |key: &str| {
        attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    let params: Value = match given("params") {
        Some(json) => serde_json::from_str(json)
            .map_err(|e| format!("{}: params is not JSON: {e}", at(fence)))?,
        None => Value::Null,
    };
    let schedule = given("schedule");
    match (&design, given("scenario")) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "{}: a block gives a design or a scenario, not both",
                at(fence)
            ))
        }
        (None, None) => {
            return Err(format!(
                "{}: a block gives a design (its text, or src=FILE) or scenario=ID",
                at(fence)
            ))
        }
        (None, Some(id)) => run(Named::Builtin(id.to_string()), &params, schedule)
            .map_err(|e| format!("{}: {e}", at(fence)))?,
        (Some((text, file, offset)), None) => {
            let named = parse(text, file, *offset)?;
            run(named, &params, schedule).map_err(|e| format!("{}: {e}", at(fence)))?
        }
    }
    let mut html = String::from("<replayground-scenario");
    for (key, value) in &attributes {
        html.push_str(&format!(" {key}=\"{}\"", escape(value)));
    }
    html.push('>');
    match design {
        // The script is an HTML block of its own, which Markdown leaves
        // whole (blank lines and all); the element around it is two more.
        Some((text, _, _)) => {
            html.push_str("\n\n<script type=\"application/toml\">\n");
            html.push_str(text.trim_end());
            html.push_str("\n</script>\n\n</replayground-scenario>\n");
        }
        // Two HTML blocks, not a paragraph around the element.
        None => html.push_str("\n\n</replayground-scenario>\n"),
    }
    Ok(html)
}

/// Builds a scenario with `params` (its schema and seed run) and runs it
/// once as the player will: along `schedule` when the block gives one
/// (which must fit), round-robin otherwise.
fn run(named: Named, params: &Value, schedule: Option<&str>) -> replayground::Result<()> {
    let explorer = Explorer::new(named.build(params)?)?;
    match schedule {
        Some(text) => explorer.replay(&replayground::Schedule::decode(text)?, false),
        None => explorer.run(&mut replayground::RoundRobin, false),
    }
    .map(|_| ())
}

/// A design parsed as `replayground check` parses a file (its SQL
/// prepared). A mistake is placed in `file` at its line, counted from
/// `offset` (the fence's line, for a design inline).
fn parse(text: &str, file: &Path, offset: usize) -> Result<Named, String> {
    if text.to_ascii_lowercase().contains("</script") {
        return Err(format!(
            "{}:{}: a design in the book may not contain </script",
            file.display(),
            offset + 1
        ));
    }
    let name = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("design");
    Named::file(text, name).map_err(|e| match e {
        replayground::Error::Mistake {
            line,
            column,
            message,
        } => format!("{}:{}:{column}: {message}", file.display(), offset + line),
        other => format!("{}:{}: {other}", file.display(), offset + 1),
    })
}

/// `key=value key="a value"` pairs of an info string.
fn words(info: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut rest = info.trim();
    while !rest.is_empty() {
        let (key, after) = rest
            .split_once('=')
            .ok_or_else(|| format!("expected key=value in {rest:?}"))?;
        let key = key.trim().to_string();
        let (value, after) = match after.strip_prefix('"') {
            Some(quoted) => quoted
                .split_once('"')
                .ok_or_else(|| format!("{key}'s value has no closing quote"))?,
            None => after.split_once(' ').unwrap_or((after, "")),
        };
        out.push((key, value.to_string()));
        rest = after.trim_start();
    }
    Ok(out)
}

/// Text for an attribute's value.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}
