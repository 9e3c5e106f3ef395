//! The native command line: `replayground --help`.
//!
//! Its modules (`src/cli/`) are its own: every item in them is at most
//! `pub(crate)`, as the build checks (`unreachable_pub`).
#![warn(unreachable_pub)]

/// See Cargo.toml: searches allocate at every step.
#[cfg(not(target_family = "wasm"))]
#[global_allocator]
static ALLOCATOR: alloc::Mi = alloc::Mi;

#[cfg(not(target_family = "wasm"))]
mod alloc {
    use std::alloc::{GlobalAlloc, Layout};
    use std::ffi::c_void;

    use libmimalloc_sys as mi;

    /// mimalloc, asked for an alignment only when its plain allocation
    /// would not give it. `mimalloc::MiMalloc` calls `mi_malloc_aligned`
    /// for every allocation, whose extra checks took about 3% of an
    /// exhaustive search; a plain block is aligned to 16 bytes when it is
    /// at least 16 bytes long, and to 8 otherwise (mimalloc's
    /// `MI_MAX_ALIGN_SIZE`), the rule Rust's own `System` allocator
    /// applies to `malloc`.
    pub(crate) struct Mi;

    const PLAIN_ALIGN: usize = 16;

    fn plain(layout: &Layout) -> bool {
        layout.align() <= PLAIN_ALIGN && layout.align() <= layout.size()
    }

    // SAFETY: each call forwards to mimalloc with a size and alignment it
    // accepts; blocks from either path are freed by `mi_free`.
    unsafe impl GlobalAlloc for Mi {
        #[inline]
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if plain(&layout) {
                mi::mi_malloc(layout.size()).cast()
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }

        #[inline]
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            if plain(&layout) {
                mi::mi_zalloc(layout.size()).cast()
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }

        #[inline]
        unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
            mi::mi_free(ptr.cast::<c_void>());
        }

        #[inline]
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let new = Layout::from_size_align_unchecked(new_size, layout.align());
            if plain(&new) {
                mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

/// The command line's subcommands, a file each (`src/cli/`).
#[cfg(not(target_family = "wasm"))]
mod cli;

#[cfg(not(target_family = "wasm"))]
fn main() -> std::process::ExitCode {
    // Rust ignores SIGPIPE, so a closed pipe (`replayground … | head`) makes
    // every later print panic. Unix tools end quietly instead: restore the
    // default action, which ends the process when the reader has gone.
    #[cfg(unix)]
    // SAFETY: called first thing, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
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
