//! The layer check (`scripts/layers.py`) on copies of `src/`: it passes on
//! the crate as it is, and fails on an import from a layer to one above it,
//! written directly or hidden behind `super::` and a `pub use`.
#![cfg(not(target_family = "wasm"))]

use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A copy of `src/` in a directory of its own, named after `name`.
fn copy_of_src(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("replayground-layers-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy(&Path::new(ROOT).join("src"), &dir.join("src"));
    dir
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Puts `line` at the top of the file `path` of the copy `dir` (the check
/// reads no further than a file's test module, which ends most files).
fn prepend(dir: &Path, path: &str, line: &str) {
    let file = dir.join("src").join(path);
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(file, format!("{line}\n{text}")).unwrap();
}

/// The check's exit status and what it printed, on `src`.
fn check(src: &Path) -> (bool, String) {
    let out = Command::new("python3")
        .arg(Path::new(ROOT).join("scripts/layers.py"))
        .args(["--quiet", "--src"])
        .arg(src)
        .output()
        .expect("python3 runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn the_crate_obeys_its_layers() {
    let (passed, said) = check(&Path::new(ROOT).join("src"));
    assert!(passed, "{said}");
    assert!(said.contains("no circle"), "{said}");
}

#[test]
fn an_upward_import_is_refused_written_directly() {
    let dir = copy_of_src("direct");
    prepend(
        &dir,
        "storage/mod.rs",
        "pub(crate) fn reach_up() -> usize { crate::scenarios::catalog().len() }",
    );
    let (passed, said) = check(&dir.join("src"));
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!passed, "{said}");
    assert!(
        said.contains("upward import: src/storage/mod.rs (storage) -> src/scenarios/mod.rs (catalog): crate::scenarios::catalog"),
        "{said}"
    );
}

#[test]
fn an_upward_import_is_refused_behind_super_and_a_pub_use() {
    let dir = copy_of_src("hidden");
    // sim/mod.rs hands the catalog's entry on; a file of sim/ takes it from
    // its parent, as if it were sim's own.
    prepend(
        &dir,
        "sim/mod.rs",
        "pub(crate) use crate::scenarios::entry as catalog_entry;",
    );
    prepend(
        &dir,
        "sim/schedule.rs",
        "pub(crate) fn reach_up() -> bool { super::catalog_entry(\"idem-race\").is_ok() }",
    );
    let (passed, said) = check(&dir.join("src"));
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!passed, "{said}");
    assert!(
        said.contains("upward import: src/sim/schedule.rs (engine) -> src/scenarios/mod.rs (catalog): super::catalog_entry"),
        "{said}"
    );
}
