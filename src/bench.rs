//! Benchmarks of the engine, identical natively and in the browser: the same
//! code measures the same operations with the target's own clock.
//!
//! These are measurements, reported with their repetitions, median and spread;
//! no test asserts a duration.

use serde::Serialize;

use crate::scenarios;
use crate::sim::scheduler::Random;
use crate::sim::search;
use crate::sim::search::cache::SharedCache;
use crate::sim::search::Explorer;
use crate::storage::{self, SqlValue, Store};
use crate::{Error, Result};

/// A monotonic clock in milliseconds (`Instant` natively, `performance.now()` in a browser).
pub(crate) type Clock<'a> = &'a dyn Fn() -> f64;

/// One measured operation.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Measurement {
    /// What was measured.
    pub name: String,
    /// Rounds timed; each round runs `iterations` operations.
    pub rounds: u32,
    /// Operations per round.
    pub iterations: u32,
    /// Median over rounds of the mean time of one operation, in microseconds.
    pub median_us: f64,
    /// Fastest round's mean, in microseconds.
    pub min_us: f64,
    /// Slowest round's mean, in microseconds.
    pub max_us: f64,
}

/// The engine benchmark's results on one target.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EngineReport {
    /// SQLite version measured.
    pub sqlite_version: &'static str,
    /// The measurements.
    pub measurements: Vec<Measurement>,
    /// What the exhaustive exploration of the 8-attempt race covered.
    pub exploration: ExplorationFigures,
    /// Larger searches, with and without partial-order reduction.
    pub reach: Vec<ReachFigures>,
    /// The same searches split across two threads (native only: the page
    /// does not split its search yet).
    pub split: Vec<ReachFigures>,
    /// The SQL of the measured transactions, which the side-by-side with
    /// other browser SQLite builds runs as it is.
    pub sql: BenchSql,
}

/// The SQL of the measured transactions, declared once.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BenchSql {
    /// The effects table.
    pub schema: &'static str,
    /// The idempotency library's orders schema (effects and receipts).
    pub orders_schema: String,
    /// The write transaction's insert.
    pub insert: &'static str,
    /// The receipt lookup of the `execute` transaction.
    pub select_receipt: &'static str,
    /// The receipt insert of the `execute` transaction.
    pub insert_receipt: &'static str,
    /// How many rows the point select's table holds.
    pub point_rows: u32,
    /// The point select.
    pub point_select: &'static str,
    /// The outbox session's transactions, as its programs ran them.
    pub outbox: OutboxSql,
}

/// What `OutboxSession.createOrder()` and `deliver()` ran: each statement
/// with the values it was given, in order (recorded from a run of the
/// library's programs, so the side-by-side runs the same SQL), and the
/// databases' schemas and PRAGMAs.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxSql {
    /// The producer database's PRAGMAs.
    pub producer_pragmas: String,
    /// The producer database's schema.
    pub producer_schema: String,
    /// The consumer database's schema.
    pub consumer_schema: String,
    /// An order's transaction on the producer database.
    pub create_order: Vec<Statement>,
    /// A first delivery's transaction on the consumer database.
    pub deliver: Vec<Statement>,
    /// The order id the recorded statements were given (a peer gives each
    /// operation its own in its place).
    pub order_id: String,
    /// The event id they were given (likewise).
    pub event_id: String,
}

/// One statement and the values bound to its parameters, in order.
#[derive(Debug, Clone, Serialize)]
pub struct Statement {
    /// Its SQL.
    pub sql: String,
    /// Its parameters' values, by index.
    pub params: Vec<SqlValue>,
}

/// The outbox session's operations, recorded from one run of each.
fn outbox_sql() -> Result<OutboxSql> {
    use crate::patterns::outbox;
    let session = outbox::session("bench-outbox-sql")?;
    let event = outbox::Event::for_order("bench", 5);
    let statements = |done: outbox::Done| -> Vec<Statement> {
        done.steps
            .into_iter()
            .filter_map(|s| {
                s.sql.map(|sql| Statement {
                    sql,
                    params: s.params,
                })
            })
            .collect()
    };
    let create_order = statements(outbox::create_order_alone(&session, event.clone())?);
    let deliver = statements(outbox::deliver_alone(&session, "audit", event.clone())?);
    Ok(OutboxSql {
        producer_pragmas: crate::format::library_pragmas(
            &crate::scenarios::CATALOG,
            outbox::LIBRARY,
            "producer",
        )?,
        producer_schema: crate::format::library_schema(
            &crate::scenarios::CATALOG,
            outbox::LIBRARY,
            "producer",
        )?,
        consumer_schema: crate::format::library_schema(
            &crate::scenarios::CATALOG,
            outbox::LIBRARY,
            "consumer",
        )?,
        create_order,
        deliver,
        order_id: event.order_id,
        event_id: event.event_id,
    })
}

const SELECT_RECEIPT: &str = "SELECT fingerprint, result, expires_at FROM receipts WHERE tenant = ?1 AND operation = ?2 AND request_key = ?3";
const INSERT_RECEIPT: &str = "INSERT INTO receipts VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
const POINT_ROWS: u32 = 10_000;
const POINT_SELECT: &str = "SELECT quantity FROM effects WHERE id = ?1";

/// The counters of the 8-attempt exhaustive exploration.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExplorationFigures {
    /// The scenario explored.
    pub scenario: String,
    /// Whether every schedule was covered.
    pub complete: bool,
    /// Runs started.
    pub runs: u64,
    /// Distinct states expanded.
    pub distinct_states: u64,
    /// Steps taken, replays included.
    pub steps: u64,
    /// Interleavings plain enumeration would face, for these runs' step counts.
    pub naive_interleavings: String,
    /// (NK)!/(K!)^N.
    pub naive_interleavings_uniform: String,
    /// Violations found (0 for the correct design).
    pub violations: u64,
}

/// One exhaustive search of the benchmark's reach: what it covered, and how
/// long it took (once, on the target's clock).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReachFigures {
    /// What was searched.
    pub scenario: String,
    /// The reductions it used.
    pub reductions: String,
    /// Whether every schedule was covered (otherwise the run cap stopped it).
    pub complete: bool,
    /// Runs started.
    pub runs: u64,
    /// Distinct states expanded.
    pub distinct_states: u64,
    /// Distinct states the runs ended in.
    pub final_states: u64,
    /// Steps taken, replays included.
    pub steps: u64,
    /// Violations found.
    pub violations: u64,
    /// Wall time, in milliseconds.
    pub ms: f64,
}

impl ReachFigures {
    /// The figures of search `report` of `scenario`, which took `ms`.
    fn of(scenario: String, report: &crate::sim::search::ExploreReport, ms: f64) -> Self {
        ReachFigures {
            scenario,
            reductions: report
                .reductions
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            complete: report.complete,
            runs: report.stats.runs,
            distinct_states: report.stats.distinct_states,
            final_states: report.stats.final_states,
            steps: report.stats.steps,
            violations: report.stats.violations,
            ms,
        }
    }
}

/// The reach scenarios: larger designs than the built-ins, searched whole.
const REACH: &[(&str, &str)] = &[
    (
        "two relays delivering two events",
        include_str!("scenarios/reach/two-relays-two-events.toml"),
    ),
    (
        "three producers and two relays",
        include_str!("scenarios/reach/three-producers-two-relays.toml"),
    ),
];

/// A page's helper worker's warm-up: searches three producers and two relays
/// as the second of two shards of a split search (as a helper does), for
/// about `ms` milliseconds of `clock` (at least one slice of 200 runs),
/// handing what it finishes to a cache that stands for the other shard's.
/// The browser compiles code as it first runs and optimises it only after
/// it has run a while (a module's compiled code is shared by a page's
/// workers), so a user's first large search then starts on optimised code.
/// Returns the counters of what it searched.
pub fn warm_up(ms: f64, clock: Clock<'_>) -> Result<search::Stats> {
    let (name, source) = REACH[1];
    let explorer = Explorer::new(
        crate::format::parse_builtin(source, name, &crate::scenarios::CATALOG)?
            .build(&serde_json::Value::Null)?,
    )?;
    let mut search = search::Dfs::new(search::Options {
        shard: Some(crate::sim::search::Shard { index: 1, count: 2 }),
        ..search::Options::default()
    });
    let finished = std::sync::Arc::new(SharedCache::sending());
    search.share(finished.clone());
    let other = SharedCache::default();
    let start = clock();
    while !search.advance(&explorer, 200)? && clock() - start < ms {
        other.import(&finished.take_published())?;
    }
    Ok(search.stats())
}

/// The runs each reach search may take: to its end on a full budget, a
/// sample on a small one (a check that it runs).
fn reach_cap(budget: Budget) -> u64 {
    if budget.iterations >= 1000 {
        1_000_000
    } else {
        300
    }
}

/// Builds a scenario afresh (on any thread).
type BuildScenario = dyn Fn() -> Result<Box<dyn crate::sim::Scenario>> + Sync;

/// The reach scenarios, and the idempotency race of 16 attempts. The reach
/// files are the project's own, read as the built-ins are (without the
/// trial compile and SQL check a user's file gets, which a timed build would
/// measure instead of the search).
fn reach_cases() -> Vec<(String, Box<BuildScenario>)> {
    let mut cases: Vec<(String, Box<BuildScenario>)> = Vec::new();
    for &(name, source) in REACH {
        cases.push((
            name.to_string(),
            Box::new(move || {
                crate::format::parse_builtin(source, name, &crate::scenarios::CATALOG)?
                    .build(&serde_json::Value::Null)
            }),
        ));
    }
    cases.push((
        "the idempotency race, 16 attempts".to_string(),
        Box::new(|| scenarios::build_with("idem-race", &serde_json::json!({"attempts": 16}))),
    ));
    cases
}

/// Searches each reach scenario (and the idempotency race of 16 attempts)
/// exhaustively with every reduction, then without partial-order reduction,
/// each at most `cap` runs.
pub(crate) fn reach(cap: u64, clock: Clock<'_>) -> Result<Vec<ReachFigures>> {
    let mut figures = Vec::new();
    for (name, build) in &reach_cases() {
        for partial_order in [true, false] {
            let explorer = Explorer::new(build()?)?;
            let options = search::Options {
                partial_order,
                max_runs: Some(cap),
                ..search::Options::default()
            };
            let start = clock();
            let report = explorer.exhaustive(options, u64::MAX, |_| true)?;
            let ms = clock() - start;
            figures.push(ReachFigures::of(name.clone(), &report, ms));
        }
    }
    Ok(figures)
}

/// Searches the reach scenarios (only the first below 1,000 iterations)
/// with every reduction, split across `workers` threads sharing a cache of
/// finished states. Below 1,000 iterations each thread stops after 300 runs.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn reach_split(budget: Budget, workers: usize) -> Result<Vec<ReachFigures>> {
    let full = budget.iterations >= 1000;
    let mut figures = Vec::new();
    for (i, (name, build)) in reach_cases().into_iter().enumerate() {
        if !full && i > 0 {
            break;
        }
        let options = search::Options {
            max_runs: (!full).then_some(reach_cap(budget)),
            ..search::Options::default()
        };
        let make = || Explorer::new(build()?);
        let start = std::time::Instant::now();
        let report = Explorer::exhaustive_parallel(make, options, workers)?;
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        figures.push(ReachFigures::of(name, &report, ms));
    }
    Ok(figures)
}

/// How long to measure.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Rounds per measurement (at least 1).
    pub rounds: u32,
    /// Operations per round (at least 1). From 1,000 on, the reach
    /// searches also run to their end (up to a million runs each); below,
    /// each stops after 300 runs.
    pub iterations: u32,
}

impl Budget {
    /// Checks the budget's bounds.
    pub fn validate(self) -> Result<Self> {
        if !(1..=1000).contains(&self.rounds) {
            return Err(Error::invalid("rounds", "use 1 to 1000"));
        }
        if !(1..=1_000_000).contains(&self.iterations) {
            return Err(Error::invalid("iterations", "use 1 to 1000000"));
        }
        Ok(self)
    }
}

/// The least time each measurement runs untimed first, in milliseconds.
const WARM_UP_MS: f64 = 250.0;

fn measure(
    name: &str,
    budget: Budget,
    clock: Clock<'_>,
    mut op: impl FnMut() -> Result<()>,
) -> Result<Measurement> {
    // Untimed first: a round's operations, for at least WARM_UP_MS. Caches
    // and allocations settle, and V8 has optimised the code: it does so
    // only after a function has run a while, and one warm-up search of the
    // 8-attempt race left the timed ones between 3.4 and 16.7 ms.
    let warm_up = clock();
    let mut warmed = 0;
    while warmed < budget.iterations || clock() - warm_up < WARM_UP_MS {
        op()?;
        warmed += 1;
    }
    let mut means = Vec::with_capacity(budget.rounds as usize);
    for _ in 0..budget.rounds {
        let start = clock();
        for _ in 0..budget.iterations {
            op()?;
        }
        means.push((clock() - start) * 1000.0 / f64::from(budget.iterations));
    }
    means.sort_by(f64::total_cmp);
    Ok(Measurement {
        name: name.to_string(),
        rounds: budget.rounds,
        iterations: budget.iterations,
        median_us: means[means.len() / 2],
        min_us: means[0],
        max_us: means[means.len() - 1],
    })
}

const SCHEMA: &str = "CREATE TABLE effects (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, \
                      operation TEXT NOT NULL, quantity INTEGER NOT NULL CHECK (quantity > 0))";
const INSERT: &str = "INSERT INTO effects (tenant, operation, quantity) VALUES (?1, ?2, ?3)";

fn write_transaction(conn: &rusqlite::Connection, params: &[SqlValue]) -> Result<()> {
    storage::run_sql(conn, "BEGIN IMMEDIATE", &[])?;
    storage::run_sql(conn, INSERT, params)?;
    storage::run_sql(conn, "COMMIT", &[])?;
    Ok(())
}

/// Measures a small write transaction on the locking VFS and on SQLite's
/// own in-memory database, opening a connection, and a store's snapshot
/// and restore.
pub fn engine(budget: Budget, clock: Clock<'_>) -> Result<EngineReport> {
    let budget = budget.validate()?;
    let params = [
        SqlValue::from("north"),
        SqlValue::from("web-order"),
        2.into(),
    ];
    let mut measurements = Vec::new();

    let store = Store::new("bench")?;
    {
        let conn = store.connect("main.db", "writer")?;
        conn.execute(SCHEMA, &[])?;
        measurements.push(measure(
            "write transaction (BEGIN IMMEDIATE; INSERT; COMMIT), replayground VFS",
            budget,
            clock,
            || write_transaction(&*conn.sqlite()?, &params),
        )?);
    }
    {
        // The reference's `execute`: check the receipt, insert the effect and
        // the receipt, in one BEGIN IMMEDIATE transaction, on an open connection.
        let conn = store.connect("orders.db", "execute")?;
        conn.sqlite()?
            .execute_batch(&crate::format::library_schema(
                &crate::scenarios::CATALOG,
                "idempotency",
                "orders",
            )?)?;
        let mut key = 0u64;
        measurements.push(measure(
            "the reference's execute transaction (BEGIN IMMEDIATE; SELECT receipt; INSERT effect; INSERT receipt; COMMIT), replayground VFS",
            budget,
            clock,
            || {
                key += 1;
                let scope = [
                    SqlValue::from("north"),
                    SqlValue::from("web-order"),
                    SqlValue::Text(format!("k{key}")),
                ];
                let db = &conn.sqlite()?;
                storage::run_sql(db, "BEGIN IMMEDIATE", &[])?;
                storage::run_sql(db, SELECT_RECEIPT, &scope)?;
                let effect = storage::run_sql(db, INSERT, &params)?;
                let mut receipt = scope.to_vec();
                receipt.push("{\"quantity\":2}".into());
                receipt.push(SqlValue::Text(format!("{{\"effect_id\":{},\"quantity\":2}}", effect.last_insert_rowid)));
                receipt.push(60.into());
                storage::run_sql(db, INSERT_RECEIPT, &receipt)?;
                storage::run_sql(db, "COMMIT", &[])?;
                Ok(())
            },
        )?);
    }
    {
        let memory = rusqlite::Connection::open_in_memory()?;
        memory.execute_batch(SCHEMA)?;
        measurements.push(measure(
            "write transaction (BEGIN IMMEDIATE; INSERT; COMMIT), SQLite :memory:",
            budget,
            clock,
            || write_transaction(&memory, &params),
        )?);
    }

    {
        // A point select on a table of 10,000 rows.
        let conn = store.connect("points.db", "reader")?;
        let db = conn.sqlite()?;
        db.execute_batch(SCHEMA)?;
        storage::run_sql(&db, "BEGIN", &[])?;
        for _ in 0..POINT_ROWS {
            storage::run_sql(&db, INSERT, &params)?;
        }
        storage::run_sql(&db, "COMMIT", &[])?;
        let mut id = 0i64;
        measurements.push(measure(
            "point select on a table of 10,000 rows, replayground VFS",
            budget,
            clock,
            || {
                id = id % i64::from(POINT_ROWS) + 1;
                let rows = storage::run_sql(&db, POINT_SELECT, &[id.into()])?;
                std::hint::black_box(rows);
                Ok(())
            },
        )?);
    }

    // A small store, as a scenario's: one database with a few rows.
    let fresh = Store::new("bench-reset")?;
    {
        let conn = fresh.connect("main.db", "setup")?;
        conn.execute(SCHEMA, &[])?;
        for _ in 0..8 {
            conn.execute(INSERT, &params)?;
        }
    }
    measurements.push(measure(
        "open + first query + close a connection, replayground VFS",
        budget,
        clock,
        || {
            let conn = fresh.connect("main.db", "opener")?;
            conn.execute("SELECT count(*) FROM effects", &[])?;
            Ok(())
        },
    )?);
    let files: usize = fresh.files().iter().map(|(_, size)| size).sum();
    let snapshot = fresh.snapshot();
    measurements.push(measure(
        &format!("snapshot of a store ({files} bytes)"),
        budget,
        clock,
        || {
            std::hint::black_box(fresh.snapshot());
            Ok(())
        },
    )?);
    measurements.push(measure(
        &format!("restore of a store ({files} bytes)"),
        budget,
        clock,
        || fresh.restore(&snapshot),
    )?);

    // The 8-attempt race, explored completely, once per round.
    let race = scenarios::build("idem-race")?;
    let explorer = Explorer::new(race)?;
    let mut last = None;
    measurements.push(measure(
        "exhaustive exploration of the 8-attempt idempotency race (one whole search)",
        Budget {
            rounds: budget.rounds,
            iterations: 1,
        },
        clock,
        || {
            last = Some(explorer.exhaustive(search::Options::default(), u64::MAX, |_| true)?);
            Ok(())
        },
    )?);
    let report = last.ok_or_else(|| Error::Defect("the exploration did not run".into()))?;
    let exploration = ExplorationFigures {
        scenario: report.scenario.clone(),
        complete: report.complete,
        runs: report.stats.runs,
        distinct_states: report.stats.distinct_states,
        steps: report.stats.steps,
        naive_interleavings: report.naive_interleavings.clone(),
        naive_interleavings_uniform: report.naive_interleavings_uniform.clone(),
        violations: report.stats.violations,
    };

    // One request through the idempotency session, as the JS export
    // `IdempotencySession.execute()` runs it (without crossing into JS):
    // a replay of one stored key, so the store does not grow.
    let session = crate::patterns::idempotency::session("bench-session")?;
    let request = || crate::patterns::idempotency::Request::reference("bench-key", 2, 0);
    crate::patterns::idempotency::execute_alone(&session, "A", request())?;
    measurements.push(measure(
        "one request through the idempotency session (IdempotencySession.execute's work, a replay)",
        budget,
        clock,
        || {
            let executed = crate::patterns::idempotency::execute_alone(&session, "A", request())?;
            if executed.outcome.kind == "replay" {
                Ok(())
            } else {
                Err(Error::Defect(format!(
                    "expected a replay, got {}",
                    executed.outcome.kind
                )))
            }
        },
    )?);

    // Whole random schedules of the two-attempt race, one per operation.
    let pair = scenarios::build_with("idem-race", &serde_json::json!({"attempts": 2}))?;
    let explorer = Explorer::new(pair)?;
    let mut seed = 0u64;
    measurements.push(measure(
        "one random schedule of the 2-attempt idempotency race (run to the end, checked)",
        budget,
        clock,
        || {
            seed += 1;
            let result = explorer.run(&mut Random::new(seed), false)?;
            if result.passed {
                Ok(())
            } else {
                Err(Error::Defect(format!(
                    "schedule {} failed",
                    result.schedule
                )))
            }
        },
    )?);

    let reach = reach(reach_cap(budget), clock)?;
    #[cfg(not(target_family = "wasm"))]
    let split = reach_split(budget, 2)?;
    #[cfg(target_family = "wasm")]
    let split = Vec::new();

    Ok(EngineReport {
        sqlite_version: storage::sqlite_version(),
        measurements,
        exploration,
        reach,
        split,
        sql: BenchSql {
            schema: SCHEMA,
            orders_schema: crate::format::library_schema(
                &crate::scenarios::CATALOG,
                "idempotency",
                "orders",
            )?,
            insert: INSERT,
            select_receipt: SELECT_RECEIPT,
            insert_receipt: INSERT_RECEIPT,
            point_rows: POINT_ROWS,
            point_select: POINT_SELECT,
            outbox: outbox_sql()?,
        },
    })
}
