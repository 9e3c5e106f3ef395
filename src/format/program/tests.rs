//! Tests of the compiler and its evaluator.
use super::eval::Evaluator;

/// A result is kept only for an expression that cannot call a function
/// or read the clock; text in quotes says nothing either way, and a
/// comment (which could hide a quote) makes it not kept.
#[test]
fn only_expressions_of_their_values_are_kept() {
    for pure in [
        ":key <> ''",
        "CASE :profile WHEN 'stripe' THEN '402 card_declined (stored)' ELSE 'ok' END",
        r#"'{"quantity":' || :quantity || '}'"#,
        r#""odd(name" = 1"#,
        "[odd(name] = 1",
    ] {
        assert!(Evaluator::pure(pure), "{pure}");
    }
    for impure in [
        "random() > 0",
        ":a + (SELECT 1)",
        "'(' || random()",
        "CURRENT_TIMESTAMP",
        "'current_date'",
        ":a -- it's\n + random()",
        ":a /* it's */ + random()",
        "'it''s' || abs(:a)",
    ] {
        assert!(!Evaluator::pure(impure), "{impure}");
    }
}
