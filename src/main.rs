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
