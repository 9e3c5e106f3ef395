//! A statement SQLite cannot prepare is a mistake of the file, reported at
//! its line and column before anything runs (natively and in Chromium), not
//! a failure a run finds (which a design declared to fail would take for
//! its expected one).

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::catalog;
use replayground::file;
use replayground::search::Explorer;

/// Three mistakes: a syntax error, a column that does not exist (in a
/// multi-line string), a table that does not exist in a check.
const TYPOS: &str = r#"title = "typo"
fails = true
[databases.app]
schema = "CREATE TABLE counter (v INTEGER); INSERT INTO counter VALUES (0);"
[[attempts]]
replicas = 3
steps = [
  { name = "read", sql = "SELEC v FROM countr", capture = "v" },
  { name = "write", sql = """
UPDATE counter
   SET v = :v + 1 WHERE nope = 1""" },
]
[[checks]]
name = "three increments"
sql = "SELECT v FROM countr"
expect = 3
"#;

fn positions(source: &str) -> Vec<(usize, usize, String, String)> {
    let (_, mistakes) = file::parse_listing_sql(source, "typo", &catalog::CATALOG).unwrap();
    mistakes
        .into_iter()
        .map(|m| (m.line, m.column, m.what, m.message))
        .collect()
}

#[test]
fn every_mistake_is_found_at_its_line_and_column_once() {
    assert_eq!(
        positions(TYPOS),
        [
            (
                8,
                27,
                "step \"read\" of attempt A".to_string(),
                "near \"SELEC\": syntax error".to_string()
            ),
            (
                11,
                25,
                "step \"write\" of attempt A".to_string(),
                "no such column: nope".to_string()
            ),
            // SQLite gives no offset for a missing table: the name its
            // message ends with is found in the statement.
            (
                15,
                22,
                "check \"three increments\"".to_string(),
                "no such table: countr".to_string()
            ),
        ]
    );
}

#[test]
fn a_file_with_an_sql_error_does_not_run_unless_it_says_so() {
    let error = catalog::parse(TYPOS, "typo").unwrap_err().to_string();
    assert!(
        error.contains(
            "line 8, column 27: step \"read\" of attempt A: near \"SELEC\": syntax error (and 2 more SQL errors"
        ),
        "{error}"
    );
    // Asked explicitly, it runs, and the run meets the error.
    let allowed = TYPOS.replace("fails = true", "fails = true\nallow-sql-errors = true");
    let file = catalog::parse(&allowed, "typo").unwrap();
    let explorer = Explorer::new(file.build(&serde_json::Value::Null).unwrap()).unwrap();
    let run = explorer.run(&mut replayground::RoundRobin, false).unwrap();
    assert!(!run.passed);
    assert!(
        format!("{:?}", run.statuses).contains("syntax error"),
        "{:?}",
        run.statuses
    );
}

#[test]
fn escapes_quotes_and_named_queries_are_located() {
    // An escaped quote before the mistake; a named query's own text.
    let source = r#"title = "escapes"
[databases.app]
schema = "CREATE TABLE t (x TEXT);"
[queries]
everything = "SELECT count(*) FROM tt"
[[attempts]]
steps = [ { name = "write", sql = "INSERT INTO t VALUES (\"a\"), ('\u00e9') RETURNING y" } ]
[[checks]]
name = "one row"
query = "everything"
expect = 1
"#;
    let found = positions(source);
    assert_eq!(found.len(), 2, "{found:?}");
    // In the file's order: the named query first, named as a query.
    assert_eq!(found[0].0, 5, "{found:?}");
    assert_eq!(found[0].2, "query \"everything\" (of check \"one row\")");
    // `y` in `RETURNING y`, counted in characters of the line as written.
    let line = source.lines().nth(6).unwrap();
    let column = line.find("RETURNING y").unwrap() + "RETURNING ".len() + 1;
    assert_eq!(
        (found[1].0, found[1].1, found[1].3.as_str()),
        (7, column, "no such column: y")
    );
}

#[test]
fn a_table_a_step_creates_can_be_named_by_later_steps() {
    let source = r#"title = "creates"
[databases.app]
schema = "CREATE TABLE t (x);"
[[attempts]]
steps = [
  { name = "make", sql = "CREATE TABLE IF NOT EXISTS later (x)" },
  { name = "grow", sql = "ALTER TABLE later ADD COLUMN y" },
  { name = "use", sql = "INSERT INTO later (x, y) VALUES (1, 2)" },
]
[[checks]]
name = "one row"
sql = "SELECT count(*) FROM later"
expect = 1
"#;
    assert_eq!(positions(source), []);
    let file = catalog::parse(source, "creates").unwrap();
    let explorer = Explorer::new(file.build(&serde_json::Value::Null).unwrap()).unwrap();
    assert!(
        explorer
            .run(&mut replayground::RoundRobin, false)
            .unwrap()
            .passed
    );
}

#[test]
fn a_refused_pragma_and_a_second_statement_are_mistakes_too() {
    let source = r#"title = "refused"
[databases.app]
schema = "CREATE TABLE t (x);"
pragmas = "PRAGMA foreign_keys = ON; PRAGMA nosuch_pragma_typo"
[[attempts]]
steps = [
  { name = "sleep", sql = "PRAGMA busy_timeout = 5000" },
  { name = "two", sql = "SELECT 1; SELECT 2" },
]
"#;
    let found = positions(source);
    let messages: Vec<&str> = found.iter().map(|m| m.3.as_str()).collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        messages[0].contains("PRAGMA busy_timeout may not be set in a scenario"),
        "{found:?}"
    );
    assert!(messages[1].contains("one statement"), "{found:?}");
    assert_eq!((found[0].0, found[1].0), (7, 8), "{found:?}");
}

/// One delivery program used for two subscribers, each in its own
/// database: `{sub}` fills the used program's `database`.
const TWO_SUBSCRIBERS: &str = r#"title = "one delivery program, two subscribers"
[databases.outbox]
schema = "CREATE TABLE events (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO events VALUES (1, 'hello');"
[databases.billing]
schema = "CREATE TABLE inbox (event_id INTEGER PRIMARY KEY, sub TEXT);"
[databases.shipping]
schema = "CREATE TABLE inbox (event_id INTEGER PRIMARY KEY, sub TEXT);"
[programs.deliver]
steps = [
  { name = "read for {sub}", database = "outbox", sql = "SELECT id FROM events", capture = "id" },
  { name = "deliver to {sub}", database = "{sub}", sql = "INSERT INTO inbox VALUES (:id, :sub)" },
]
[[attempts]]
database = "outbox"
steps = [
  { name = "billing", use = "deliver", with = { sub = "billing" } },
  { name = "shipping", use = "deliver", with = { sub = "shipping" } },
]
[[checks]]
name = "billing got it"
database = "billing"
sql = "SELECT event_id, sub FROM inbox"
expect = [1, "billing"]
[[checks]]
name = "shipping got it"
database = "shipping"
sql = "SELECT event_id, sub FROM inbox"
expect = [1, "shipping"]
"#;

#[test]
fn a_used_programs_database_is_filled_from_its_values() {
    let file = catalog::parse(TWO_SUBSCRIBERS, "two-subscribers").unwrap();
    let explorer = Explorer::new(file.build(&serde_json::Value::Null).unwrap()).unwrap();
    let run = explorer.run(&mut replayground::RoundRobin, false).unwrap();
    assert!(run.passed, "{:?}", run.checks);
    // A value that names no database is refused, naming both.
    let wrong = TWO_SUBSCRIBERS.replace(
        "with = { sub = \"shipping\" }",
        "with = { sub = \"shiping\" }",
    );
    let error = catalog::parse(&wrong, "wrong").unwrap_err().to_string();
    assert!(
        error.contains("database \"{sub}\" is \"shiping\", which is not declared"),
        "{error}"
    );
}

#[test]
fn a_template_in_sql_is_refused_at_its_place_even_where_errors_are_allowed() {
    let templated = TWO_SUBSCRIBERS
        .replace("VALUES (:id, :sub)", "VALUES (:id, '{sub}')")
        .replace(
            "[databases.outbox]",
            "allow-sql-errors = true\n[databases.outbox]",
        );
    let error = catalog::parse(&templated, "templated")
        .unwrap_err()
        .to_string();
    let line = templated
        .lines()
        .position(|l| l.contains("'{sub}'"))
        .unwrap();
    let column = templated
        .lines()
        .nth(line)
        .unwrap()
        .find("'{sub}'")
        .unwrap()
        + 2;
    assert!(
        error.contains(&format!(
            "line {}, column {column}: step \"deliver to billing\" of attempt A: {{sub}} is not filled in SQL: bind :sub instead",
            line + 1
        )),
        "{error}"
    );
}

/// The benchmark's reach scenarios are read as built-ins are (no trial
/// compile): here they pass a user's file's whole check, SQL included.
#[test]
fn the_reach_scenarios_pass_the_whole_check() {
    for (name, source) in [
        (
            "three-producers-two-relays",
            include_str!("../src/scenarios/reach/three-producers-two-relays.toml"),
        ),
        (
            "two-relays-two-events",
            include_str!("../src/scenarios/reach/two-relays-two-events.toml"),
        ),
    ] {
        let (_, mistakes) = file::parse_listing_sql(source, name, &catalog::CATALOG).unwrap();
        assert_eq!(mistakes, [], "{name}");
    }
}
