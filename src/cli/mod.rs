//! The native command line: the subcommands, each in its own file with the
//! arguments it alone takes, and the arguments several of them share
//! (`args.rs`), each declared once.

mod args;
mod book;
mod check;
mod engine;
mod explore;
mod fuzz;
mod io_log;
mod progress;
mod run;
mod scenario;
mod soak;
mod sql_worker;
mod sweep;
mod test;
mod text;

use clap::{Parser, Subcommand};

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
    Version(engine::Version),
    /// Check a scenario file: parse it, check its references, build it with
    /// its default parameters, and run it once (round-robin).
    Check(check::Check),
    /// List the scenarios.
    Scenarios(check::Scenarios),
    /// Explore a scenario's interleavings and report any counterexample.
    Explore(explore::Explore),
    /// Run the reference checks of `idempotency` or `outbox`, each proved over
    /// every schedule, or one scenario once (round-robin) with its trace.
    Run(run::Run),
    /// Run every correct design under many random and PCT schedules (none may
    /// fail) and every broken one until it is caught (within 1000 runs).
    Soak(soak::Soak),
    /// Kill the outbox relay after every possible step, restart it, and
    /// print what happened at each crash point.
    Sweep(sweep::Sweep),
    /// Search every scenario exhaustively and compare its verdict with its
    /// declaration (`fails`): one line per scenario, then `N passed, N
    /// failed`; exits 0 only when every scenario behaves as declared.
    Test(test::Test),
    /// Random designs, each explored under every configuration of the
    /// search and compared with the unreduced search: the verdict, the set of
    /// final states, and every failing schedule replayed. The first
    /// disagreement is shrunk and written as a scenario file; exits 1 then.
    Fuzz(fuzz::Fuzz),
    /// Replay an encoded schedule step by step.
    Replay(run::Replay),
    /// Write a run as a standalone Python script (or a Rust test) that
    /// replays it on real SQLite files, one process per attempt, and
    /// compares every result.
    Export(run::Export),
    /// Measure the engine: write transactions, connection opens, snapshot and restore.
    Bench(engine::Bench),
    /// Serve one SQLite connection to a real database file: each stdin line
    /// is a JSON string of SQL, each stdout line its JSON result. The
    /// differential tests run one per connection, to compare the VFS with
    /// SQLite's unix VFS on real files across real processes.
    #[command(hide = true)]
    SqlWorker(sql_worker::SqlWorker),
    /// Write a note through one SQLite connection and read it through another.
    RoundTrip(engine::RoundTrip),
    /// The book's mdBook preprocessor: each `replayground` block of a
    /// chapter becomes a live player, its design checked (see
    /// `scripts/build-book.sh`).
    #[command(hide = true)]
    BookPreprocess(book::BookPreprocess),
}

pub(crate) fn main() -> Result<(), Box<dyn std::error::Error>> {
    match Cli::parse().command {
        Command::Version(command) => command.run(),
        Command::Check(command) => command.run(),
        Command::Scenarios(command) => command.run(),
        Command::Explore(command) => command.run(),
        Command::Run(command) => command.run(),
        Command::Soak(command) => command.run(),
        Command::Sweep(command) => command.run(),
        Command::Test(command) => command.run(),
        Command::Fuzz(command) => command.run(),
        Command::Replay(command) => command.run(),
        Command::Export(command) => command.run(),
        Command::Bench(command) => command.run(),
        Command::SqlWorker(command) => command.run(),
        Command::RoundTrip(command) => command.run(),
        Command::BookPreprocess(command) => command.run(),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap's own checks of the whole command line, among them that every
    /// argument a subcommand rewords (`mut_arg`) is one it has.
    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
