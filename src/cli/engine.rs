//! The build and the engine: `replayground version`, `bench` and `round-trip`.

use clap::Args;
use replayground::store::{self, Versions};

use super::args::{self, Json};

// The arguments of `replayground version`.
#[derive(Args)]
pub(super) struct Version {
    #[command(flatten)]
    out: Json,
}

impl Version {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        let versions = Versions::current();
        if self.out.json {
            println!("{}", serde_json::to_string(&versions)?);
        } else {
            println!("replayground {}", versions.replayground);
            println!("SQLite {} ({})", versions.sqlite, versions.sqlite_source_id);
        }
        Ok(())
    }
}

// The arguments of `replayground bench`.
#[derive(Args)]
#[command(mut_arg("json", args::instead_of_a_table))]
pub(super) struct Bench {
    /// Timed rounds per measurement.
    #[arg(long, default_value_t = 15)]
    rounds: u32,
    /// Operations per round.
    #[arg(long, default_value_t = 2000)]
    iterations: u32,
    #[command(flatten)]
    out: Json,
}

impl Bench {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        let start = std::time::Instant::now();
        let clock = move || start.elapsed().as_secs_f64() * 1000.0;
        let budget = replayground::benchmark::Budget {
            rounds: self.rounds,
            iterations: self.iterations,
        };
        let report = replayground::benchmark::engine(budget, &clock)?;
        if self.out.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            println!("SQLite {} (native)", report.sqlite_version);
            for m in &report.measurements {
                println!(
                    "{:>10.2} us median ({:.2}..{:.2}, {} rounds x {})  {}",
                    m.median_us, m.min_us, m.max_us, m.rounds, m.iterations, m.name
                );
            }
            let e = &report.exploration;
            println!(
                "exploration of {}: complete {}, {} runs, {} distinct states, {} steps, naive {} ({} uniform), {} violations",
                e.scenario, e.complete, e.runs, e.distinct_states, e.steps,
                e.naive_interleavings, e.naive_interleavings_uniform, e.violations
            );
        }
        Ok(())
    }
}

// The arguments of `replayground round-trip`.
#[derive(Args)]
pub(super) struct RoundTrip {
    /// The note to write.
    #[arg(default_value = "hello from connection A")]
    note: String,
    #[command(flatten)]
    out: Json,
}

impl RoundTrip {
    pub(super) fn run(self) -> Result<(), Box<dyn std::error::Error>> {
        let trip = store::round_trip(&self.note)?;
        if self.out.json {
            println!("{}", serde_json::to_string(&trip)?);
        } else {
            println!("SQLite {}", trip.sqlite_version);
            println!(
                "A inserts row {} in an open transaction (A holds {})",
                trip.written_id, trip.writer_lock
            );
            println!("B reads before A commits: {:?}", trip.read_during_write);
            println!("A commits");
            println!("B reads after A commits:  {:?}", trip.read_after_commit);
        }
        Ok(())
    }
}
