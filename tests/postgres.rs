//! The second engine's server: a throwaway PostgreSQL cluster of the
//! installed PostgreSQL, started with the search's settings, on a unix
//! socket only, and gone with its value, on a panic too; a folder that is
//! not PostgreSQL's is refused in a sentence, leaving nothing behind.

#![cfg(not(target_family = "wasm"))]

use std::path::PathBuf;

use replayground::postgres::{alive, Cluster, SETTINGS};

/// One test at a time: each looks at what the others would leave in the
/// temporary folder.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a cluster leaves to check once it is gone: its folder, its server.
fn traces(cluster: &Cluster) -> (PathBuf, u32) {
    let pid = cluster.pid().expect("a running server has a pid");
    assert!(alive(pid), "the server {pid} runs");
    (cluster.socket_dir().to_path_buf(), pid)
}

fn assert_gone((dir, pid): &(PathBuf, u32)) {
    assert!(!dir.exists(), "{} is left behind", dir.display());
    // The server is the child of pg_ctl, not ours: once stopped, it is
    // reaped by init and its /proc entry goes.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while alive(*pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!alive(*pid), "the server {pid} still runs");
}

#[test]
fn a_cluster_answers_on_its_socket_with_the_search_settings_and_leaves_nothing() {
    let _alone = alone();
    let cluster = Cluster::start().unwrap();
    let left = traces(&cluster);
    assert_eq!(cluster.psql("SELECT 2 + 2").unwrap(), "4");
    // Every setting, as the server reads it.
    for (name, value, _) in SETTINGS {
        assert_eq!(
            cluster.psql(&format!("SHOW {name}")).unwrap(),
            value.trim_matches('\''),
            "{name}"
        );
    }
    assert!(SETTINGS.iter().any(|(name, _, _)| *name == "autovacuum"));
    // Root or not, the server never runs as root, and says so when it had to.
    let user = cluster
        .psql("SELECT current_setting('data_directory')")
        .unwrap();
    assert!(user.starts_with(&left.0.display().to_string()), "{user}");
    let is_root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    assert_eq!(cluster.notice().is_some(), is_root);
    let server_uid = std::fs::read_to_string(format!("/proc/{}/status", left.1))
        .unwrap()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        .unwrap();
    assert_ne!(server_uid, "0", "the server runs as root");
    // A refused statement is an error with the server's words.
    let refused = cluster.psql("SELECT * FROM no_such_table").unwrap_err();
    assert!(refused.to_string().contains("no_such_table"), "{refused}");
    cluster.stop().unwrap();
    assert_gone(&left);
}

#[test]
fn a_panic_with_a_cluster_running_leaves_no_server_and_no_folder() {
    let _alone = alone();
    let left = std::sync::Mutex::new(None);
    let panicked = std::panic::catch_unwind(|| {
        let cluster = Cluster::start().unwrap();
        *left.lock().unwrap() = Some(traces(&cluster));
        panic!("a search panics with its cluster running");
    });
    assert!(panicked.is_err());
    let left = left.lock().unwrap().take().expect("the cluster started");
    assert_gone(&left);
}

#[test]
fn a_folder_without_postgresql_is_refused_in_a_sentence_leaving_nothing() {
    let _alone = alone();
    let before: Vec<_> = leftovers();
    let error = Cluster::start_with(std::path::Path::new("/usr/bin")).unwrap_err();
    assert!(
        error.to_string().contains("not a PostgreSQL installation"),
        "{error}"
    );
    assert_eq!(leftovers(), before);
}

/// This process's cluster folders under the temporary folder.
fn leftovers() -> Vec<PathBuf> {
    let mine = format!("replayground-pg-{}-", std::process::id());
    let mut found: Vec<PathBuf> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&mine))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}
