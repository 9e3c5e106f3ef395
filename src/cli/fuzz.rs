//! `replayground fuzz`: random designs, each explored under every
//! configuration of the search and compared with the unreduced search.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use replayground::soundness::{design_source, fuzz, Report, UNREDUCED_RUNS, UNREDUCED_STEPS};

use super::args::Json;
use super::progress::with_ctrl_c;

/// Designs compared when neither `--designs` nor `--for` is given.
const DEFAULT_DESIGNS: u64 = 1_000;

// The arguments of `replayground fuzz`.
#[derive(Args)]
pub(super) struct Fuzz {
    /// Seed of the run: design N of a seed is always the same design.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Designs to compare (default 1000, or as many as `--for` allows).
    #[arg(long)]
    designs: Option<u64>,
    /// Compare designs for this long: `90s`, `10m`, `2h` (with `--designs`,
    /// whichever comes first).
    #[arg(long = "for", value_name = "DURATION", value_parser = duration)]
    duration: Option<Duration>,
    /// Where the shrunk design of a disagreement is written.
    #[arg(long, default_value = "fuzz-found.toml")]
    found: PathBuf,
    /// Write the designs into this folder (`seed-S-design-N.toml`) instead
    /// of comparing them: to read them, or search them elsewhere (the page).
    #[arg(long, value_name = "FOLDER", conflicts_with_all = ["duration", "json"])]
    emit: Option<PathBuf>,
    #[command(flatten)]
    out: Json,
}

/// `90s`, `10m`, `2h`, or a number of seconds.
fn duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration: use 90s, 10m or 2h"))?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(format!("{text:?} is not a duration: use 90s, 10m or 2h")),
    };
    Ok(Duration::from_secs(number.saturating_mul(seconds)))
}

impl Fuzz {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        let designs = match (self.designs, self.duration) {
            (Some(0), _) => return Err("invalid --designs: use at least 1".into()),
            (Some(n), _) => n,
            (None, Some(_)) => u64::MAX,
            (None, None) => DEFAULT_DESIGNS,
        };
        if let Some(folder) = &self.emit {
            std::fs::create_dir_all(folder)
                .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
            for index in 0..designs {
                let path = folder.join(format!("seed-{}-design-{index}.toml", self.seed));
                std::fs::write(&path, design_source(self.seed, index))
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            }
            println!(
                "{designs} designs of seed {} written to {}",
                self.seed,
                folder.display()
            );
            return Ok(());
        }
        let started = Instant::now();
        let deadline = self.duration.map(|d| started + d);
        let bar = bar(self.designs.or(self.duration.is_none().then_some(designs)));
        let report = with_ctrl_c(|interrupted| {
            fuzz(
                self.seed,
                &mut |done| {
                    done < designs && deadline.is_none_or(|d| Instant::now() < d) && !interrupted()
                },
                &mut |report| {
                    if let Some(bar) = &bar {
                        bar.set_position(report.designs);
                        bar.set_message(format!(
                            "{} compared, {} looping, {} too large, {} refused",
                            report.compared, report.looping, report.too_large, report.refused
                        ));
                    }
                },
            )
        });
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        let elapsed = started.elapsed();
        if let Some(found) = &report.found {
            std::fs::write(&self.found, &found.file)
                .map_err(|e| format!("cannot write {}: {e}", self.found.display()))?;
        }
        if self.out.json {
            let mut json = serde_json::to_value(&report)?;
            json["seconds"] = serde_json::json!(elapsed.as_secs_f64());
            println!("{}", serde_json::to_string_pretty(&json)?);
        } else {
            print_report(&report, elapsed, &self.found);
        }
        if report.found.is_some() {
            return Err("a configuration of the search disagrees with the unreduced search".into());
        }
        Ok(())
    }
}

/// A bar of `planned` designs, or a spinner, on a terminal.
fn bar(planned: Option<u64>) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal().then(|| {
        let (bar, template) = match planned {
            Some(n) => (
                indicatif::ProgressBar::new(n),
                "{elapsed:>4} [{bar:30}] {pos}/{len} designs, {msg} (Ctrl-C stops)",
            ),
            None => (
                indicatif::ProgressBar::new_spinner(),
                "{spinner} {elapsed:>4} {pos} designs, {msg} (Ctrl-C stops)",
            ),
        };
        let style = indicatif::ProgressStyle::with_template(template).expect("a valid template");
        let bar = bar.with_style(style.progress_chars("=> "));
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
        bar
    })
}

fn print_report(report: &Report, elapsed: Duration, found_at: &std::path::Path) {
    println!(
        "fuzz --seed {}: {} designs in {:.1} s: {} compared under {} configurations, {} that loop compared on their verdict (not without state caching), {} too large for the unreduced search ({} runs or {} steps), {} refused by the format",
        report.seed,
        report.designs,
        elapsed.as_secs_f64(),
        report.compared,
        report.configurations.len(),
        report.looping,
        report.too_large,
        UNREDUCED_RUNS,
        UNREDUCED_STEPS,
        report.refused
    );
    println!("  configurations: {}", report.configurations.join("; "));
    match &report.found {
        None => println!("  no disagreement"),
        Some(found) => {
            let d = &found.disagreement;
            println!(
                "  DISAGREEMENT at design {} (shrunk in {} tries), written to {}",
                found.index,
                found.shrink_tries,
                found_at.display()
            );
            println!("  unreduced: {}", d.unreduced);
            println!("  {}: {}", d.configuration, d.other);
        }
    }
}
