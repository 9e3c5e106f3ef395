//! What a new user stumbled on while writing designs of their own: a check
//! without a name, a query that answers nothing shown as "ok", a count of
//! interleavings that a design's `after` makes untrue, and mistakes that
//! named an attempt by its number in the file. Natively and in Chromium.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::catalog;
use replayground::search::Explorer;
use replayground::strategy::{Kind, Strategy};
use replayground::RoundRobin;

fn explorer(source: &str) -> Explorer {
    let file = catalog::parse(source, "design").unwrap();
    Explorer::new(file.build(&serde_json::Value::Null).unwrap()).unwrap()
}

const HEAD: &str = r#"title = "writing"
[databases.app]
schema = "CREATE TABLE t (x);"
"#;

#[test]
fn a_check_without_a_name_is_named_by_what_it_checks() {
    let source = format!(
        r#"{HEAD}
[[attempts]]
replicas = 2
steps = [ {{ name = "w", sql = "INSERT INTO t VALUES (1)", on.ok = {{ finish = "wrote" }} }} ]
[[checks]]
sql = """SELECT count(*)
       FROM t"""
expect = 2
[[checks]]
outcome = "wrote"
count = 2
[[checks]]
attempt = "B"
outcome = "wrote"
[[checks]]
same-result = ["wrote"]
"#
    );
    let run = explorer(&source).run(&mut RoundRobin, false).unwrap();
    let names: Vec<&str> = run.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "the run completes",
            "SELECT count(*) FROM t is 2",
            "2 attempts end with wrote",
            "B ends with wrote",
            "the same result for wrote",
        ]
    );
    assert!(run.passed, "{:?}", run.checks);
}

/// A check whose name says nothing of where it is (no name, nothing to
/// check) is a mistake at its own table, not at line 1.
#[test]
fn a_nameless_mistaken_check_is_placed_at_its_table() {
    let source = format!(
        r#"{HEAD}
[[attempts]]
steps = [ {{ name = "w", sql = "INSERT INTO t VALUES (1)" }} ]
[[checks]]
outcome = "done"
count = 1
[[checks]]
when = "1"
"#
    );
    let error = catalog::parse(&source, "design").unwrap_err().to_string();
    assert!(
        error.starts_with(
            "invalid scenario: line 10, column 1: check \"a check with nothing to check\" ([[checks]] number 2): give exactly one of"
        ),
        "{error}"
    );
}

#[test]
fn a_query_that_answers_nothing_is_no_row_in_the_trace() {
    let source = format!(
        r#"{HEAD}
[[attempts]]
steps = [
  {{ name = "look", sql = "SELECT x FROM t", on.none = {{ goto = "write" }} }},
  {{ name = "write", sql = "INSERT INTO t VALUES (1)" }},
  {{ name = "again", sql = "UPDATE t SET x = 2 WHERE x = 7" }},
]
"#
    );
    let run = explorer(&source).run(&mut RoundRobin, true).unwrap();
    let notes = run.explanation();
    assert_eq!(
        notes,
        [
            "1. A ran \"look\": no row",
            "2. A ran \"write\": 1 changed",
            "3. A ran \"again\": ok",
        ]
    );
}

#[test]
fn interleavings_that_after_rules_out_are_an_upper_bound() {
    let sequenced = format!(
        r#"{HEAD}
[[attempts]]
label = "first"
steps = [ {{ name = "a", sql = "INSERT INTO t VALUES (1)" }}, {{ name = "b", sql = "INSERT INTO t VALUES (2)" }} ]
[[attempts]]
after = "first"
steps = [ {{ name = "c", sql = "INSERT INTO t VALUES (3)" }}, {{ name = "d", sql = "INSERT INTO t VALUES (4)" }} ]
"#
    );
    let report = Strategy::of(Kind::Exhaustive)
        .search()
        .run_to_end(&explorer(&sequenced))
        .unwrap();
    // One run is possible; the plain count of two attempts of two steps is 6.
    assert_eq!(report.stats.terminal_runs, 1);
    assert_eq!(report.naive_interleavings, "6");
    assert!(report.naive_is_upper_bound);
    let free = sequenced.replace("after = \"first\"\n", "");
    let report = Strategy::of(Kind::Exhaustive)
        .search()
        .run_to_end(&explorer(&free))
        .unwrap();
    assert!(!report.naive_is_upper_bound);
}

#[test]
fn mistakes_name_an_attempt_as_traces_do() {
    // The second declaration's attempts are C and D (A and B come first).
    let source = format!(
        r#"{HEAD}
[[attempts]]
replicas = 2
steps = [ {{ name = "w", sql = "SELECT 1" }} ]
[[attempts]]
replicas = 2
clock = {{ tick = 1, until = 5 }}
steps = [ {{ name = "w", sql = "SELECT 1" }} ]
"#
    );
    let error = catalog::parse(&source, "design").unwrap_err().to_string();
    assert!(error.contains("attempt C:"), "{error}");
    assert!(!error.contains("attempt 2"), "{error}");
    let labelled = source.replace("replicas = 2\nclock", "label = \"ticker\"\nclock");
    let error = catalog::parse(&labelled, "design").unwrap_err().to_string();
    assert!(error.contains("attempt \"ticker\":"), "{error}");
}

#[test]
fn schedules_use_single_letter_labels_and_read_them_back() {
    let source = format!(
        r#"{HEAD}
[[attempts]]
label = "R"
steps = [ {{ name = "a", sql = "INSERT INTO t VALUES (1)" }}, {{ name = "b", sql = "INSERT INTO t VALUES (2)" }} ]
[[attempts]]
label = "S"
steps = [ {{ name = "c", sql = "INSERT INTO t VALUES (3)" }} ]
"#
    );
    let explorer = explorer(&source);
    let run = explorer.run(&mut RoundRobin, false).unwrap();
    assert_eq!(run.schedule, "RSR");
    // Read back by labels, by the attempts' own letters, or both.
    for text in ["R3S8", "A3B8", "R3B8"] {
        let schedule = explorer.parse_schedule(text).unwrap();
        assert_eq!(schedule.steps()[..4], [0, 0, 0, 1], "{text}");
        assert_eq!(explorer.show_schedule(&schedule), "R3S8");
    }
    let replayed = explorer
        .replay(&explorer.parse_schedule("R2S").unwrap(), false)
        .unwrap();
    assert_eq!(replayed.schedule, "R2S");
    // A letter that names no attempt is still refused, by its place, and
    // mistakes name the attempts as the schedule does.
    let error = explorer
        .replay(&explorer.parse_schedule("RT").unwrap(), false)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("step 2 names attempt T, but this scenario has attempts R, S"),
        "{error}"
    );
    let error = explorer
        .replay(&explorer.parse_schedule("R").unwrap(), false)
        .unwrap_err()
        .to_string();
    assert!(error.contains("attempts R, S can still run"), "{error}");
}

/// A check that names an outcome no attempt can end with (a misspelling)
/// is refused at its line, with the outcomes there are, closest first; so is
/// a program that is not declared. It surfaced before only after a run, as
/// "expected 1, actual 0".
#[test]
fn a_misspelled_outcome_or_program_is_refused_at_its_line() {
    let source = format!(
        r#"{HEAD}
[[attempts]]
steps = [ {{ name = "w", sql = "INSERT INTO t VALUES (1)", on.ok = {{ finish = "created" }} }} ]
[[checks]]
outcome = "creatd"
count = 1
"#
    );
    let error = catalog::parse(&source, "design").unwrap_err().to_string();
    assert_eq!(
        error,
        "invalid scenario: line 8, column 12: check \"1 attempt ends with creatd\" ([[checks]] number 1): no attempt can end with outcome \"creatd\"; the declared ones are \"created\", \"crashed\", \"done\", \"reply-lost\", closest first"
    );
    // Spelled right, it runs and passes.
    let fixed = source.replace("creatd", "created");
    let result = explorer(&fixed).run(&mut RoundRobin, false).unwrap();
    assert!(result.passed, "{result:?}");
    // Where an outcome is written with a parameter, what it may be is not
    // known before the run: nothing is refused.
    let templated = format!(
        r#"{HEAD}
[params.kind]
type = "choice"
options = ["created", "replayed"]
default = "created"
[[attempts]]
steps = [ {{ name = "w", sql = "INSERT INTO t VALUES (1)", on.ok = {{ finish = "{{kind}}" }} }} ]
[[checks]]
outcome = "creatd"
count = 0
"#
    );
    catalog::parse(&templated, "design").unwrap();
    // A program that is not declared: the ones that are, closest first.
    let library = format!(
        r#"{HEAD}
[programs.check-then-write]
steps = [ {{ name = "w", sql = "INSERT INTO t VALUES (1)" }} ]
[programs.answer]
steps = [ {{ name = "a", sql = "SELECT 1" }} ]
[[attempts]]
program = "check-and-write"
"#
    );
    let error = catalog::parse(&library, "design").unwrap_err().to_string();
    assert_eq!(
        error,
        "invalid scenario: line 10, column 12: attempt A: program \"check-and-write\" is not declared; the declared ones are \"check-then-write\", \"answer\", closest first"
    );
}

/// A statement that met BUSY and whose `on.busy` handler took it is told as
/// BUSY, with what the handler did: it was told "ran \"commit\": ok", which
/// hid the very event that explains the run. So is a constraint a handler
/// takes, and a BUSY a single sentence of the design's was written for the
/// step that works.
#[test]
fn a_busy_or_an_error_a_handler_takes_is_told_with_what_it_did() {
    let source = format!(
        r#"{HEAD}
[[attempts]]
steps = [
  {{ name = "begin", sql = "BEGIN" }},
  {{ name = "write", sql = "INSERT INTO t VALUES (1)" }},
  {{ name = "commit", sql = "COMMIT", on.busy = {{ goto = "roll back" }}, note = "{{label}} commits" }},
  {{ name = "done", sql = "SELECT 1", on.rows = {{ finish = "written" }} }},
  {{ name = "roll back", sql = "ROLLBACK", on.ok = {{ finish = "gave up" }} }},
]
[[attempts]]
steps = [
  {{ name = "begin", sql = "BEGIN" }},
  {{ name = "read", sql = "SELECT count(*) FROM t", note = "{{label}} reads the table" }},
  {{ name = "look", sql = "SELECT abs(-9223372036854775808)", on.error = {{ finish = "overflow" }} }},
]
"#
    );
    let explorer = explorer(&source);
    let run = explorer
        .replay(&explorer.parse_schedule("AABBAAB").unwrap(), true)
        .unwrap();
    let all = run.explanation();
    assert_eq!(
        all[4], "5. A ran \"commit\": SQLITE_BUSY (B holds SHARED); A goes to \"roll back\"",
        "{all:?}"
    );
    assert_eq!(all[5], "6. A ran \"roll back\": ok", "{all:?}");
    assert!(
        all[6].starts_with("7. B ran \"look\": SQLite: integer overflow")
            && all[6].ends_with("; B finishes: overflow"),
        "{all:?}"
    );
}

/// "Edit a copy" of a built-in gives a file that holds everything it runs:
/// the libraries it includes written into it, under `[libraries.NAME]`, with
/// their comments. That file runs as the built-in does (same run, sentences,
/// checks, final state, parameters), and a change to a program written in it
/// is what runs.
#[test]
fn an_edited_copy_holds_its_libraries_and_runs_as_the_built_in() {
    let mut included = 0;
    for entry in catalog::all() {
        let id = entry.id;
        let whole = catalog::editable_source(id).unwrap();
        let original = Explorer::new(catalog::build(id).unwrap())
            .unwrap()
            .run(&mut RoundRobin, true)
            .unwrap();
        let copy = catalog::parse(&whole, "design").unwrap();
        assert!(copy.libraries.len() == copy.include.len(), "{id}");
        if copy.include.is_empty() {
            assert!(!whole.contains("[libraries."), "{id}");
            continue;
        }
        included += 1;
        assert!(whole.contains("[[libraries."), "{id}");
        let copied = Explorer::new(copy.build(&serde_json::Value::Null).unwrap())
            .unwrap()
            .run(&mut RoundRobin, true)
            .unwrap();
        assert_eq!(copied.schedule, original.schedule, "{id}");
        assert_eq!(copied.explanation(), original.explanation(), "{id}");
        assert_eq!(copied.passed, original.passed, "{id}");
        assert_eq!(copied.final_state, original.final_state, "{id}");
        assert_eq!(copied.params, original.params, "{id}");
        assert_eq!(
            serde_json::to_string(&copied.checks).unwrap(),
            serde_json::to_string(&original.checks).unwrap(),
            "{id}"
        );
    }
    assert!(included >= 20, "{included} built-ins include a library");
    // What the copy says is what runs: the library's program, changed in
    // the copy, changes the run.
    let whole = catalog::editable_source("idem-check-then-write").unwrap();
    assert!(whole.contains("[[libraries.idempotency.programs.check-then-write.steps]]"));
    let at = whole
        .find("[[libraries.idempotency.programs.check-then-write.steps]]")
        .unwrap();
    let (head, tail) = whole.split_at(at);
    let renamed = format!(
        "{head}{}",
        tail.replacen(
            "it takes no lock until it reads",
            "it says so in the copy",
            1
        )
    );
    assert_ne!(renamed, whole);
    let run = explorer(&renamed).run(&mut RoundRobin, true).unwrap();
    assert!(
        run.explanation()[0].contains("it says so in the copy"),
        "{:?}",
        run.explanation()
    );
}

/// A phase named in a `because` that no step is in, or a role a handler
/// waits for that no attempt has (a misspelling: the sentence would never
/// say it, the wait would never happen), is refused at its line, with the
/// names there are; spelled right, the design runs.
#[test]
fn a_phase_or_role_nothing_has_is_refused_at_its_line() {
    let source = format!(
        r#"{HEAD}
[[attempts]]
role = "writer"
steps = [
  {{ name = "w", sql = "INSERT INTO t VALUES (1)", phase = "writing", because = [ {{ peers-in = ["writnig"], say = "for {{peers}}" }} ], note = "{{label}} writes {{because}}" }},
]
[[attempts]]
steps = [ {{ name = "r", sql = "SELECT 1", on.rows = {{ wait-while = "writr" }} }} ]
"#
    );
    let error = catalog::parse(&source, "design").unwrap_err().to_string();
    assert_eq!(
        error,
        "invalid scenario: line 8, column 97: attempt A, step \"w\": because names \"writnig\", which is neither a step's phase nor an outcome, so no attempt is ever in it; the declared ones are \"writing\", \"crashed\", \"done\", \"reply-lost\", closest first"
    );
    let phase_fixed = source.replace("writnig", "writing");
    let error = catalog::parse(&phase_fixed, "design")
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "invalid scenario: line 11, column 69: attempt B, step \"r\": on.rows waits while \"writr\" runs, but no attempt has that role or label, so it never waits; the declared one is \"writer\""
    );
    // A letter names an attempt only when the file has that many.
    let error = catalog::parse(&phase_fixed.replace("writr", "C"), "design")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("on.rows waits while \"C\" runs, but no attempt has that role or label"),
        "{error}"
    );
    for name in ["writer", "A"] {
        let fixed = phase_fixed.replace("writr", name);
        let result = explorer(&fixed).run(&mut RoundRobin, false).unwrap();
        assert!(result.passed, "{name}: {result:?}");
    }
}
