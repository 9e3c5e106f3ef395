//! A search as the command line runs it: its progress shown on standard
//! error when that is a terminal, Ctrl-C stopping it with a report of what
//! it covered.

use replayground::search::{ExploreReport, Explorer, Watch};
use replayground::strategy::Strategy;

/// Set by Ctrl-C while a search runs ([`search_with_progress`]).
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_interrupt(_signal: libc::c_int) {
    // Only an atomic store: all a signal handler may do.
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Catches Ctrl-C until [`let_ctrl_c_end`]: it then only sets [`INTERRUPTED`].
fn catch_ctrl_c() {
    INTERRUPTED.store(false, std::sync::atomic::Ordering::SeqCst);
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// Back to the default action: a second Ctrl-C ends the process.
fn let_ctrl_c_end() {
    // SAFETY: restores the default disposition.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
}

/// Runs `f` with Ctrl-C caught: `f` is given a function that says whether
/// it was pressed (a second press after `f` returns ends the process).
pub(super) fn with_ctrl_c<T>(f: impl FnOnce(&dyn Fn() -> bool) -> T) -> T {
    catch_ctrl_c();
    let result = f(&|| INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst));
    let_ctrl_c_end();
    result
}

/// The progress display on standard error when it is a terminal: a bar
/// of `planned` runs, or a spinner.
fn progress_bar(planned: Option<u64>) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal().then(|| {
        let bar = match planned {
            Some(planned) => indicatif::ProgressBar::new(planned).with_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed:>4} [{bar:30}] {pos}/{len} runs, {msg} (Ctrl-C stops)",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            ),
            None => indicatif::ProgressBar::new_spinner().with_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} {elapsed:>4} {pos} runs, {msg} (Ctrl-C stops)",
                )
                .expect("a valid template"),
            ),
        };
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
        bar.set_message("starting");
        bar
    })
}

/// Shows runs and what they covered on `bar`.
fn show_progress(
    bar: &indicatif::ProgressBar,
    runs: u64,
    states: u64,
    steps: u64,
    since: std::time::Instant,
) {
    let rate = runs as f64 / since.elapsed().as_secs_f64().max(1e-3);
    // Without state caching no state is told apart: steps then.
    let covered = if states > 0 {
        format!("{states} distinct states")
    } else {
        format!("{steps} steps")
    };
    bar.set_position(runs);
    bar.set_message(format!("{covered}, {rate:.0} runs/s"));
}

/// A search split across `workers` threads, with its progress shown
/// and Ctrl-C stopping every worker (the report then says `cancelled`).
pub(super) fn split_with_progress<F>(
    make: F,
    strategy: Strategy,
    workers: usize,
) -> Result<ExploreReport, Box<dyn std::error::Error>>
where
    F: Fn() -> replayground::Result<Explorer> + Sync,
{
    use std::sync::atomic::Ordering;
    let watch = Watch::default();
    catch_ctrl_c();
    let bar = progress_bar(None);
    let since = std::time::Instant::now();
    let report = std::thread::scope(|scope| {
        let search = scope.spawn(|| {
            Explorer::exhaustive_parallel_watched(&make, strategy.dfs_options(), workers, &watch)
        });
        while !search.is_finished() {
            std::thread::sleep(std::time::Duration::from_millis(100));
            if INTERRUPTED.load(Ordering::SeqCst) {
                watch.stop.store(true, Ordering::SeqCst);
            }
            if let Some(bar) = &bar {
                let runs = watch.runs.load(Ordering::Relaxed);
                show_progress(bar, runs, watch.states.load(Ordering::Relaxed), 0, since);
            }
        }
        search.join()
    });
    let_ctrl_c_end();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(report.map_err(|_| "a search thread panicked")??)
}

/// Runs a one-thread search to its end, or until Ctrl-C (the report then
/// says `cancelled` and what was left), showing its progress on standard
/// error when that is a terminal: runs (of the budget, when there is
/// one), distinct states, runs a second.
pub(super) fn search_with_progress(
    explorer: &Explorer,
    strategy: Strategy,
) -> Result<ExploreReport, Box<dyn std::error::Error>> {
    use std::sync::atomic::Ordering;
    let mut search = strategy.search();
    catch_ctrl_c();
    // A sampler's runs, or an exhaustive search's budget of runs.
    let bar = progress_bar(search.planned().or(strategy.runs));
    let started = std::time::Instant::now();
    let result = (|| -> replayground::Result<bool> {
        loop {
            // Small slices: Ctrl-C and the display answer within one.
            if search.advance(explorer, 200)? {
                return Ok(false);
            }
            if INTERRUPTED.load(Ordering::SeqCst) {
                return Ok(true);
            }
            if let Some(bar) = &bar {
                let stats = search.stats();
                show_progress(bar, stats.runs, stats.distinct_states, stats.steps, started);
            }
        }
    })();
    let_ctrl_c_end();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let cancelled = result?;
    Ok(search.report(explorer, cancelled)?)
}
