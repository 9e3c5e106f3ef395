//! The native command line: `replayground --help`.

#[cfg(not(target_family = "wasm"))]
mod cli {
    use clap::{Parser, Subcommand};
    use replayground::storage::{self, Versions};

    /// SQLite that shows how idempotency keys, the transactional outbox and
    /// the idempotent inbox survive retries, races and crashes.
    #[derive(Parser)]
    #[command(name = "replayground", version, about)]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Subcommand)]
    enum Command {
        /// Print the crate and SQLite versions of this build.
        Version {
            /// Print JSON instead of text.
            #[arg(long)]
            json: bool,
        },
        /// Measure the engine: write transactions, connection opens, snapshot and restore.
        Bench {
            /// Timed rounds per measurement.
            #[arg(long, default_value_t = 15)]
            rounds: u32,
            /// Operations per round.
            #[arg(long, default_value_t = 2000)]
            iterations: u32,
            /// Print JSON instead of a table.
            #[arg(long)]
            json: bool,
        },
        /// Serve one SQLite connection to a real database file: each stdin line
        /// is a JSON string of SQL, each stdout line its JSON result. The
        /// differential tests run one per connection, to compare the VFS with
        /// SQLite's unix VFS on real files across real processes.
        #[command(hide = true)]
        SqlWorker {
            /// The database file.
            db: std::path::PathBuf,
        },
        /// Write a note through one SQLite connection and read it through another.
        RoundTrip {
            /// The note to write.
            #[arg(default_value = "hello from connection A")]
            note: String,
            /// Print JSON instead of text.
            #[arg(long)]
            json: bool,
        },
    }

    /// Runs statements on a plain rusqlite connection (unix VFS, no busy
    /// timeout), one JSON line in and one JSON line out per statement.
    fn sql_worker(db: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
        use std::io::{BufRead, Write};
        let connection = rusqlite::Connection::open(db)?;
        connection.busy_timeout(std::time::Duration::ZERO)?;
        let stdout = std::io::stdout();
        for line in std::io::stdin().lock().lines() {
            let sql: String = serde_json::from_str(&line?)?;
            let reply = match storage::run_sql(&connection, &sql, &[]) {
                Ok(rows) => serde_json::json!({ "rows": rows.rows }),
                Err(e) => serde_json::json!({ "code": e.sqlite_code().unwrap_or(-1) }),
            };
            let mut out = stdout.lock();
            writeln!(out, "{reply}")?;
            out.flush()?;
        }
        Ok(())
    }

    pub fn main() -> Result<(), Box<dyn std::error::Error>> {
        match Cli::parse().command {
            Command::Version { json } => {
                let versions = Versions::current();
                if json {
                    println!("{}", serde_json::to_string(&versions)?);
                } else {
                    println!("replayground {}", versions.replayground);
                    println!("SQLite {} ({})", versions.sqlite, versions.sqlite_source_id);
                }
            }
            Command::SqlWorker { db } => sql_worker(&db)?,
            Command::Bench {
                rounds,
                iterations,
                json,
            } => {
                let start = std::time::Instant::now();
                let clock = move || start.elapsed().as_secs_f64() * 1000.0;
                let budget = replayground::bench::Budget { rounds, iterations };
                let report = replayground::bench::engine(budget, &clock)?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&report)?);
                } else {
                    println!("SQLite {} (native)", report.sqlite_version);
                    for m in &report.measurements {
                        println!(
                            "{:>10.2} us median ({:.2}..{:.2}, {} rounds x {})  {}",
                            m.median_us, m.min_us, m.max_us, m.rounds, m.iterations, m.name
                        );
                    }
                }
            }
            Command::RoundTrip { note, json } => {
                let trip = storage::round_trip(&note)?;
                if json {
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
            }
        }
        Ok(())
    }
}

#[cfg(not(target_family = "wasm"))]
fn main() -> std::process::ExitCode {
    match cli::main() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("replayground: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The command line is native only; the wasm build exports a library.
#[cfg(target_family = "wasm")]
fn main() {}
