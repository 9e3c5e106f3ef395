//! Memory is given back after a run a budget stopped (issue 41): the bytes
//! the process holds (a counting allocator around the system's) and those
//! SQLite holds (`sqlite3_memory_used`) after each hostile design's run are
//! within 10% (and 64 KiB) of what they were before it. One test in its own
//! binary, so that no other test allocates meanwhile. Native only: a wasm
//! module's memory never shrinks, so there the page's tests check that a
//! second run of a design needs no more than the first.
#![cfg(not(target_family = "wasm"))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use replayground::catalog;
use replayground::search::Explorer;
use replayground::RoundRobin;

/// The system's allocator, counting the bytes held.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is the system allocator's, with the same arguments.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            HELD.fetch_add(layout.size(), Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        unsafe { System.dealloc(pointer, layout) };
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        let moved = unsafe { System.realloc(pointer, layout, size) };
        if !moved.is_null() {
            HELD.fetch_add(size, Ordering::Relaxed);
            HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Builds `source` and runs it once, recorded, as the page does; drops all.
fn run_once(source: &str, name: &str) -> String {
    let file = catalog::parse(source, name).unwrap();
    let explorer = Explorer::new(file.build(&serde_json::Value::Null).unwrap()).unwrap();
    let run = explorer.run(&mut RoundRobin, true).unwrap();
    run.checks[0].actual.clone()
}

/// What the process and SQLite hold now.
fn held() -> (usize, i64) {
    (
        HELD.load(Ordering::Relaxed),
        replayground::store::sqlite_memory_used(),
    )
}

#[test]
fn a_run_a_budget_stopped_gives_its_memory_back() {
    let designs = [
        ("slow-loop", include_str!("designs/hostile/slow-loop.toml")),
        ("big-rows", include_str!("designs/hostile/big-rows.toml")),
        ("big-notes", include_str!("designs/hostile/big-notes.toml")),
        ("big-store", include_str!("designs/hostile/big-store.toml")),
        (
            "big-tables",
            include_str!("designs/hostile/big-tables.toml"),
        ),
    ];
    // Once each first: what a process keeps for good (the VFS's registration,
    // SQLite's first allocations) is taken then.
    for (name, source) in designs {
        run_once(source, name);
    }
    for (name, source) in designs {
        let before = held();
        let actual = run_once(source, name);
        let after = held();
        eprintln!(
            "{name}: process {} -> {} bytes, SQLite {} -> {} bytes",
            before.0, after.0, before.1, after.1
        );
        let within = |b: usize, a: usize| a <= b + b / 10 + (64 << 10);
        assert!(
            within(before.0, after.0),
            "{name} ({actual}): the process held {} bytes before, {} after",
            before.0,
            after.0
        );
        assert!(
            within(before.1 as usize, after.1 as usize),
            "{name}: SQLite held {} bytes before, {} after",
            before.1,
            after.1
        );
    }
}
