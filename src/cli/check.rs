//! `replayground check` (a scenario file checked and run once) and
//! `replayground scenarios` (the catalog).

use clap::Args;
use replayground::search::Explorer;

use super::args::Json;
use super::scenario;
use super::text::count;

// The arguments of `replayground check`.
#[derive(Args)]
pub(super) struct Check {
    /// The scenario file (TOML).
    file: std::path::PathBuf,
    #[command(flatten)]
    out: Json,
}

impl Check {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        let json = self.out.json;
        let target = self.file.to_string_lossy().to_string();
        let (source, stem) = scenario::read_source(&target)?;
        let (parsed, mistakes) =
            replayground::file::parse_listing_sql(&source, &stem, &replayground::catalog::CATALOG)
                .map_err(|e| format!("{target}: {e}"))?;
        let templates = mistakes.iter().any(|m| m.template);
        if !mistakes.is_empty() && (!parsed.allow_sql_errors || templates) {
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({
                        "id": parsed.id(), "sqlErrors": mistakes,
                    }))?
                );
            } else {
                for mistake in &mistakes {
                    eprintln!("{target}: {mistake}");
                }
            }
            let hint = if templates {
                "a template in SQL is refused even with allow-sql-errors = true: bind :NAME"
            } else {
                "allow-sql-errors = true runs the file anyway"
            };
            return Err(format!(
                "{target}: {} in its SQL ({hint})",
                count(mistakes.len() as u64, "mistake")
            )
            .into());
        }
        for mistake in &mistakes {
            eprintln!("{target}: allowed: {mistake}");
        }
        let explorer = Explorer::new(parsed.build(&serde_json::Value::Null)?)?;
        let result = explorer.run(&mut replayground::RoundRobin, false)?;
        if json {
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "id": parsed.id(), "title": parsed.title, "fails": parsed.fails,
                    "attempts": result.labels.len(), "roundRobin": result,
                    "sqlErrors": mistakes,
                }))?
            );
        } else {
            println!(
                "{target}: ok: scenario {} ({}, declared to {}); one round-robin run {}",
                parsed.id(),
                count(result.labels.len() as u64, "attempt"),
                if parsed.fails { "fail" } else { "hold" },
                if result.passed {
                    "passes its checks"
                } else {
                    "fails its checks"
                }
            );
        }
        Ok(())
    }
}

// The arguments of `replayground scenarios`.
#[derive(Args)]
pub(super) struct Scenarios {
    #[command(flatten)]
    out: Json,
}

impl Scenarios {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        let catalog = replayground::catalog::all();
        if self.out.json {
            println!("{}", serde_json::to_string_pretty(&catalog)?);
        } else {
            for entry in catalog {
                let mark = if entry.fails { "fails" } else { "holds" };
                println!("{:<36} {mark}  {}", entry.id, entry.title);
            }
        }
        Ok(())
    }
}
