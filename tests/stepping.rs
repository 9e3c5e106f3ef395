//! Stepping by hand keeps its run ([`LiveRun`], issue 67): at every step of
//! a seeded random run of every built-in, conformance design and soundness
//! design, the kept run is what a replay of its steps from the start is
//! (the trace, the statuses, who can run, the committed tables, and the
//! state's key, which holds every attempt's locks and what each connection
//! holds); after an undo too, and after a step refused. Natively and in
//! Chromium.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::catalog;
use replayground::search::{Explorer, LiveRun};
use replayground::{Random, Scenario};

mod common;

/// What a run shows, to compare: its trace, statuses, runnable attempts,
/// committed tables and state key.
fn seen(run: &replayground::Run<'_>) -> String {
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:x}",
        run.trace(),
        run.statuses(),
        run.runnable(),
        run.committed_tables().map_err(|e| e.to_string()),
        run.state_key(false)
    )
}

/// What a replay of `choices` from the start shows.
fn replayed(build: &dyn Fn() -> Box<dyn Scenario>, choices: &[usize]) -> String {
    let explorer = Explorer::new(build()).unwrap();
    let mut run = explorer.start(true).unwrap();
    for &choice in choices {
        run.step(choice).unwrap();
    }
    seen(&run)
}

/// Asserts `kept == replayed`, showing where they part (the whole texts
/// run to megabytes).
fn same(kept: &str, replayed: &str, what: &str) {
    if kept != replayed {
        let at = kept
            .bytes()
            .zip(replayed.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(kept.len().min(replayed.len()));
        let around = |s: &str| {
            s.get(at.saturating_sub(200)..(at + 200).min(s.len()))
                .unwrap_or("")
                .to_string()
        };
        panic!("{what}: the kept run is not the replay; they part at byte {at}:\nkept: {}\nreplayed: {}", around(kept), around(replayed));
    }
}

/// Steps `build`'s scenario along a seeded random run, comparing the kept
/// run with a replay at every step; at every step also a step refused, and
/// a branch: an undo, another attempt's step, an undo and the step again
/// (each a rewind to a checkpoint); at the end a jump back to a third of
/// the run and forward to its end.
fn compare(name: &str, build: &dyn Fn() -> Box<dyn Scenario>) -> usize {
    let explorer = Explorer::new(build()).unwrap();
    let result = explorer.run(&mut Random::new(7), false).unwrap();
    let schedule = explorer.parse_schedule(&result.schedule).unwrap();
    let choices = schedule.steps().to_vec();
    let mut live = LiveRun::new(explorer);
    for (i, &choice) in choices.iter().enumerate() {
        // A refused step changes nothing.
        let idle = live
            .with_run(|_, run| Ok((0..run.statuses().len()).find(|a| !run.runnable().contains(a))))
            .unwrap();
        if let Some(idle) = idle {
            assert!(live.step(idle).is_err(), "{name}: step {idle} was refused");
        }
        live.step(choice).unwrap();
        let kept = live.with_run(|_, run| Ok(seen(run))).unwrap();
        same(
            &kept,
            &replayed(build, &choices[..=i]),
            &format!("{name}, step {}", i + 1),
        );
        live.undo();
        let back = live.with_run(|_, run| Ok(seen(run))).unwrap();
        same(
            &back,
            &replayed(build, &choices[..i]),
            &format!("{name}, undo at step {}", i + 1),
        );
        let other = live
            .with_run(|_, run| Ok(run.runnable().into_iter().find(|&a| a != choice)))
            .unwrap();
        if let Some(other) = other {
            live.step(other).unwrap();
            let branch = live.with_run(|_, run| Ok(seen(run))).unwrap();
            let mut path = choices[..i].to_vec();
            path.push(other);
            same(
                &branch,
                &replayed(build, &path),
                &format!("{name}, {other} instead at step {}", i + 1),
            );
            live.undo();
        }
        live.step(choice).unwrap();
        let again = live.with_run(|_, run| Ok(seen(run))).unwrap();
        same(&again, &kept, &format!("{name}, step {} again", i + 1));
    }
    let third = choices.len() / 3;
    live.set_choices(choices[..third].to_vec()).unwrap();
    let back = live.with_run(|_, run| Ok(seen(run))).unwrap();
    same(
        &back,
        &replayed(build, &choices[..third]),
        &format!("{name}, jump back to step {third}"),
    );
    live.set_choices(choices.clone()).unwrap();
    let forward = live.with_run(|_, run| Ok(seen(run))).unwrap();
    same(
        &forward,
        &replayed(build, &choices),
        &format!("{name}, jump forward"),
    );
    assert_eq!(live.choices(), &choices[..], "{name}: its steps");
    assert_eq!(live.rewind_misses(), 0, "{name}: rewinds that missed");
    // Going back went through checkpoints, not replays from the start:
    // only in WAL mode is none taken.
    let wal = build().options().journal == replayground::store::Journal::Wal;
    assert_eq!(
        live.checkpoints() > 0,
        !wal,
        "{name}: {} checkpoints kept",
        live.checkpoints()
    );
    choices.len()
}

fn every_scenario_steps_as_it_replays() {
    let mut steps = 0;
    for entry in catalog::all() {
        steps += compare(entry.id, &|| {
            catalog::build_with(entry.id, &serde_json::json!({})).unwrap()
        });
    }
    for (name, source) in common::DESIGNS.iter().chain(common::SOUNDNESS_DESIGNS) {
        let file = catalog::parse(source, name).unwrap();
        steps += compare(name, &|| file.build(&serde_json::Value::Null).unwrap());
    }
    assert!(steps > 500, "{steps} steps compared");
}

#[cfg(not(target_family = "wasm"))]
#[test]
fn a_kept_run_is_its_replay_at_every_step() {
    every_scenario_steps_as_it_replays();
}

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
#[wasm_bindgen_test::wasm_bindgen_test]
async fn a_kept_run_is_its_replay_at_every_step() {
    common::let_the_browser_run().await;
    every_scenario_steps_as_it_replays();
}
