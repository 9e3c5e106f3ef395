//! A throwaway PostgreSQL cluster, started for a run of the second engine
//! (issue 70) and gone with it: `initdb` into a temporary directory, the
//! server on a unix socket in that directory and no TCP port, its settings
//! chosen for a search, stopped and removed when the value is dropped (at
//! the end, and on a panic as the stack unwinds).
//!
//! PostgreSQL refuses to run as root. Started as root, the cluster runs as
//! Debian's `postgres` user (else `nobody`), and [`Cluster::notice`] says so.

use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::{Error, Result};

/// The server's settings for a search, each with its reason: they are
/// written into the cluster's `postgresql.conf` and shown by `SHOW`.
pub const SETTINGS: &[(&str, &str, &str)] = &[
    ("listen_addresses", "''", "no TCP: the unix socket only"),
    (
        "autovacuum",
        "off",
        "no background worker touches the tables between two steps",
    ),
    (
        "deadlock_timeout",
        "'20ms'",
        "a deadlock between two sessions is found at once, not after a second",
    ),
    (
        "fsync",
        "off",
        "a throwaway cluster: nothing of it must survive the machine",
    ),
    ("full_page_writes", "off", "as fsync"),
    ("synchronous_commit", "off", "as fsync"),
    (
        "max_connections",
        "64",
        "a session per attempt, and the tester's own",
    ),
    (
        "shared_buffers",
        "'32MB'",
        "small: several clusters may run at once",
    ),
];

/// Where PostgreSQL's programs are: `REPLAYGROUND_PG_BIN` if set, else the
/// newest `/usr/lib/postgresql/N/bin` (Debian's layout) holding `initdb`.
pub fn bin_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("REPLAYGROUND_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin).ok_or_else(|| {
        Error::System(
            "PostgreSQL's server is not installed: no /usr/lib/postgresql/N/bin/initdb (scripts/setup.sh installs Debian's postgresql, or set REPLAYGROUND_PG_BIN to a folder holding initdb and pg_ctl)".to_string(),
        )
    })
}

/// The user the server runs as when this process is root.
struct RunAs {
    name: String,
    uid: u32,
    gid: u32,
}

impl RunAs {
    /// `None` when this process is not root (the server runs as it is).
    fn needed() -> Result<Option<RunAs>> {
        // SAFETY: getuid has no preconditions.
        if unsafe { libc::getuid() } != 0 {
            return Ok(None);
        }
        for name in ["postgres", "nobody"] {
            let c_name = CString::new(name).expect("no NUL");
            // SAFETY: the name is NUL-terminated; the record getpwnam
            // returns is read at once, before any other call could reuse it.
            let record = unsafe { libc::getpwnam(c_name.as_ptr()) };
            if !record.is_null() {
                // SAFETY: non-null: a valid passwd record.
                let (uid, gid) = unsafe { ((*record).pw_uid, (*record).pw_gid) };
                return Ok(Some(RunAs {
                    name: name.to_string(),
                    uid,
                    gid,
                }));
            }
        }
        Err(Error::System(
            "PostgreSQL refuses to run as root, and there is no postgres or nobody user to run it as".to_string(),
        ))
    }
}

/// A PostgreSQL cluster of its own: a temporary directory holding its data
/// and its socket, and the server running on it until dropped.
pub struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    run_as: Option<RunAs>,
    /// The server's process id, while it runs.
    pid: Option<u32>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("dir", &self.dir)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl Cluster {
    /// Starts a cluster of the installed PostgreSQL ([`bin_dir`]).
    pub fn start() -> Result<Cluster> {
        Self::start_with(&bin_dir()?)
    }

    /// Starts a cluster of the PostgreSQL whose programs are in `bin`. On
    /// any failure nothing is left behind: no directory, no process.
    pub fn start_with(bin: &Path) -> Result<Cluster> {
        for program in ["initdb", "pg_ctl", "postgres"] {
            if !bin.join(program).is_file() {
                return Err(Error::System(format!(
                    "no {program} in {}: not a PostgreSQL installation's bin folder",
                    bin.display()
                )));
            }
        }
        let run_as = RunAs::needed()?;
        let dir = fresh_dir()?;
        // From here on, a failure drops the value: its directory goes too.
        let mut cluster = Cluster {
            dir,
            bin: bin.to_path_buf(),
            run_as,
            pid: None,
        };
        if let Some(user) = &cluster.run_as {
            std::os::unix::fs::chown(&cluster.dir, Some(user.uid), Some(user.gid)).map_err(
                |e| {
                    Error::System(format!(
                        "cannot give {} to {}: {e}",
                        cluster.dir.display(),
                        user.name
                    ))
                },
            )?;
        }
        let data = cluster.data_dir();
        cluster.run(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "--auth=trust".as_ref(),
                "--no-sync".as_ref(),
                "--username=postgres".as_ref(),
                "--encoding=UTF8".as_ref(),
                "--locale=C".as_ref(),
            ],
        )?;
        let mut conf = String::from("\n# replayground: a throwaway cluster for a search\n");
        for (name, value, why) in SETTINGS {
            conf.push_str(&format!("{name} = {value}  # {why}\n"));
        }
        conf.push_str(&format!(
            "unix_socket_directories = '{}'\n",
            cluster.dir.display()
        ));
        let conf_path = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf_path)
            .map_err(|e| Error::System(format!("cannot read {}: {e}", conf_path.display())))?;
        text.push_str(&conf);
        std::fs::write(&conf_path, text)
            .map_err(|e| Error::System(format!("cannot write {}: {e}", conf_path.display())))?;
        let log = cluster.dir.join("server.log");
        let started = cluster.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-l".as_ref(),
                log.as_os_str(),
                "-w".as_ref(),
                "-t".as_ref(),
                "120".as_ref(),
                "start".as_ref(),
            ],
        );
        // Whatever pg_ctl said, a server that wrote its pid file is ours to stop.
        cluster.pid = cluster.read_pid();
        if let Err(e) = started {
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = tail.lines().rev().take(5).collect();
            return Err(Error::System(format!(
                "{e}; the server's log ends: {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            )));
        }
        Ok(cluster)
    }

    /// The folder of the server's unix socket (its host, for a client).
    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The user the server runs as when this process is root (PostgreSQL
    /// refuses root), in a sentence; `None` otherwise.
    pub fn notice(&self) -> Option<String> {
        self.run_as.as_ref().map(|user| {
            format!(
                "PostgreSQL refuses to run as root: its throwaway cluster runs as the user {}",
                user.name
            )
        })
    }

    /// Runs `psql` on the cluster's `postgres` database with `sql`: its
    /// output, unaligned, one line per row.
    pub fn psql(&self, sql: &str) -> Result<String> {
        let output = Command::new(self.bin.join("psql"))
            .args([
                "-X",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-U",
                "postgres",
                "-h",
            ])
            .arg(&self.dir)
            .args(["-d", "postgres", "-c", sql])
            .output()
            .map_err(|e| Error::System(format!("cannot run psql: {e}")))?;
        checked("psql", output).map(|out| out.trim_end().to_string())
    }

    /// Stops the server (immediately: nothing of it is kept) and removes
    /// the directory. Done by `drop` too; this says what went wrong.
    pub fn stop(mut self) -> Result<()> {
        self.stop_now()
    }

    fn stop_now(&mut self) -> Result<()> {
        let mut result = Ok(());
        if let Some(pid) = self.pid.take() {
            let data = self.data_dir();
            let stopped = self.run(
                "pg_ctl",
                &[
                    "-D".as_ref(),
                    data.as_os_str(),
                    "-m".as_ref(),
                    "immediate".as_ref(),
                    "-w".as_ref(),
                    "-t".as_ref(),
                    "60".as_ref(),
                    "stop".as_ref(),
                ],
            );
            if stopped.is_err() && alive(pid) {
                // SAFETY: kill has no memory preconditions; the pid is the
                // server's, read from its own pid file.
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            }
            result = stopped.map(|_| ());
        }
        if self.dir.exists() {
            if let Err(e) = std::fs::remove_dir_all(&self.dir) {
                result = result.and(Err(Error::System(format!(
                    "cannot remove {}: {e}",
                    self.dir.display()
                ))));
            }
        }
        result
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The postmaster's pid, from its pid file's first line.
    fn read_pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.data_dir().join("postmaster.pid"))
            .ok()?
            .lines()
            .next()?
            .trim()
            .parse()
            .ok()
    }

    /// Runs one of PostgreSQL's programs, as the server's user.
    fn run(&self, program: &str, args: &[&std::ffi::OsStr]) -> Result<String> {
        let mut command = Command::new(self.bin.join(program));
        command.args(args).current_dir(&self.dir);
        if let Some(user) = &self.run_as {
            command.uid(user.uid).gid(user.gid);
        }
        let output = command
            .output()
            .map_err(|e| Error::System(format!("cannot run {program}: {e}")))?;
        checked(program, output)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.stop_now();
    }
}

/// Whether process `pid` exists (a zombie counts until it is reaped).
pub fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// A new, empty, private directory under the system's temporary folder.
fn fresh_dir() -> Result<PathBuf> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let base = std::env::temp_dir();
    for _ in 0..100 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!(
            "replayground-pg-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(Error::System(format!(
                    "cannot create a directory under {}: {e}",
                    base.display()
                )))
            }
        }
    }
    Err(Error::System(format!(
        "cannot create a fresh directory under {}",
        base.display()
    )))
}

/// A program's output, or its failure as a sentence with what it said.
fn checked(program: &str, output: Output) -> Result<String> {
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let said = said.trim();
    Err(Error::System(format!(
        "{program} failed ({}){}",
        output.status,
        if said.is_empty() {
            String::new()
        } else {
            format!(": {said}")
        }
    )))
}
