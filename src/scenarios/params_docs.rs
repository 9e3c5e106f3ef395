//! The catalog's parameters as documentation, generated from their
//! declarations ([`crate::params`]): the book's table (docs/src/parameters.md) and the TypeScript
//! types of `src/params.d.ts`, both kept current by a test.

use super::Entry;
use crate::format::ENGINE_PARAMS;
use crate::params::{Default, Kind};

/// The TypeScript declarations of every scenario's parameters: one
/// interface per scenario and a map from scenario id to it.
pub(crate) fn typescript(entries: &[Entry]) -> String {
    let mut out = String::from(
        "// Generated from the parameter declarations in src/scenarios by\n\
         // `REPLAYGROUND_BLESS=1 cargo test --lib params`; do not edit by hand.\n\n",
    );
    let mut map = String::from(
        "/** Each scenario's parameters, by scenario id. */\nexport interface ScenarioParamsById {\n",
    );
    for entry in entries {
        let name = interface_name(entry.id);
        out.push_str(&format!(
            "/** Parameters of scenario `{}`. */\nexport interface {name} {{\n",
            entry.id
        ));
        for p in entry.params {
            let ty = match p.kind {
                Kind::Whole { .. } => "number".to_string(),
                Kind::Text { .. } => "string".to_string(),
                Kind::Choice { options } => options
                    .iter()
                    .map(|o| format!("{o:?}"))
                    .collect::<Vec<_>>()
                    .join(" | "),
            };
            let range = match p.kind {
                Kind::Whole {
                    min,
                    max,
                    multiple_of,
                    unit,
                    ..
                } => {
                    let steps = if multiple_of > 1 {
                        format!(", multiples of {multiple_of}")
                    } else {
                        String::new()
                    };
                    let unit = if unit.is_empty() {
                        String::new()
                    } else {
                        format!(" {unit}")
                    };
                    format!("{min} to {max}{unit}{steps}; ")
                }
                Kind::Text { max_chars } => format!("1 to {max_chars} characters; "),
                Kind::Choice { .. } => String::new(),
            };
            let default = serde_json::to_string(&p.default_value()).unwrap_or_default();
            out.push_str(&format!(
                "  /** {} ({range}default {default}). */\n  {}?: {ty};\n",
                p.meaning, p.name
            ));
        }
        out.push_str("}\n");
        map.push_str(&format!("  {:?}: {name};\n", entry.id));
    }
    map.push_str("}\n");
    out.push_str(&map);
    out.push_str(
        "/** A scenario of the catalog. */\nexport type ScenarioId = keyof ScenarioParamsById;\n\
         /** Any scenario's parameters (each scenario takes the ones its interface lists). */\n\
         export type ScenarioParams = ScenarioParamsById[ScenarioId];\n",
    );
    out
}

/// The parameters of every scenario as a Markdown table (the book's,
/// kept current by a test).
pub(crate) fn markdown_table(entries: &[Entry]) -> String {
    let mut out = String::from(
        "| scenario | parameter | values | default | what it changes |\n|---|---|---|---|---|\n",
    );
    // The engine's own parameters, which every scenario takes, are a row each.
    let engine = |name: &str| ENGINE_PARAMS.contains(&name);
    let shared = entries.first().into_iter().flat_map(|e| {
        e.params
            .iter()
            .filter(|p| engine(p.name))
            .map(|p| ("every scenario".to_string(), p))
    });
    let rows = entries.iter().flat_map(|entry| {
        entry
            .params
            .iter()
            .filter(|p| !engine(p.name))
            .map(|p| (format!("`{}`", entry.id), p))
    });
    for (scenario, p) in rows.chain(shared) {
        {
            let values = match p.kind {
                Kind::Whole {
                    min,
                    max,
                    multiple_of,
                    unit,
                    ..
                } => {
                    let unit = if unit.is_empty() {
                        String::new()
                    } else {
                        format!(" {unit}")
                    };
                    let steps = if multiple_of > 1 {
                        format!(", multiples of {multiple_of}")
                    } else {
                        String::new()
                    };
                    format!("{min} to {max}{unit}{steps}")
                }
                Kind::Text { max_chars } => format!("text, 1 to {max_chars} characters"),
                Kind::Choice { options } => options
                    .iter()
                    .map(|o| format!("`{o}`"))
                    .collect::<Vec<_>>()
                    .join(" "),
            };
            let default = match p.default {
                Default::Whole(n) => n.to_string(),
                Default::Text(t) => format!("`{t}`"),
            };
            out.push_str(&format!(
                "| {scenario} | `{}` | {values} | {default} | {} |\n",
                p.name, p.meaning
            ));
        }
    }
    out
}

fn interface_name(id: &str) -> String {
    let mut name = String::new();
    for part in id.split('-') {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            name.extend(first.to_uppercase());
            name.push_str(chars.as_str());
        }
    }
    name + "Params"
}

// Both read and write files of the repository: native only.
#[cfg(all(test, not(target_family = "wasm")))]
mod tests {
    use super::*;

    /// The book's parameter table (docs/src/parameters.md) is the one the
    /// declarations give; `REPLAYGROUND_BLESS=1` rewrites it.
    #[test]
    fn the_book_parameter_table_is_current() {
        let table = markdown_table(&crate::scenarios::catalog());
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/parameters.md");
        let chapter = std::fs::read_to_string(path).unwrap();
        let (start, end) = ("<!-- params:start -->\n", "<!-- params:end -->");
        let from = chapter
            .find(start)
            .expect("the chapter has a params:start marker")
            + start.len();
        let to = chapter
            .find(end)
            .expect("the chapter has a params:end marker");
        if std::env::var_os("REPLAYGROUND_BLESS").is_some() {
            let updated = format!("{}{table}{}", &chapter[..from], &chapter[to..]);
            std::fs::write(path, updated).unwrap();
            return;
        }
        assert_eq!(
            &chapter[from..to],
            table,
            "the book's parameter table is stale: run REPLAYGROUND_BLESS=1 cargo test --lib params"
        );
    }

    /// The checked-in TypeScript declarations are the ones the catalog
    /// generates; `REPLAYGROUND_BLESS=1` rewrites them.
    #[test]
    fn typescript_declarations_are_current() {
        let generated = typescript(&crate::scenarios::catalog());
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/params.d.ts");
        if std::env::var_os("REPLAYGROUND_BLESS").is_some() {
            std::fs::write(path, &generated).unwrap();
        }
        assert_eq!(
            crate::scenarios::PARAMS_TYPESCRIPT,
            generated,
            "src/params.d.ts is stale: run REPLAYGROUND_BLESS=1 cargo test --lib params"
        );
    }
}
