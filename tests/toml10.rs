//! Every TOML file the project ships is TOML 1.0 (tests/toml10.py, with
//! Python's tomllib): files copied from the project open in users' tools.
#![cfg(not(target_family = "wasm"))]

#[test]
fn every_shipped_toml_file_is_toml_1_0() {
    let output = std::process::Command::new("python3")
        .arg("tests/toml10.py")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The count is of texts read: a glob that found nothing would pass.
    let checked: usize = text
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(checked >= 45, "{text}");
}
