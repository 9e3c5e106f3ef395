//! A run's choices as a short, URL-safe string.
//!
//! Attempts are letters (`A` is attempt 0, up to `Z`); a letter followed by a
//! number repeats it: `A3B2A` is A, A, A, B, B, A. The string is stable, human
//! readable, and fits in a link. A run that goes round for ever ends with
//! its cycle in parentheses: `A2(BA)` is A, A, then B, A again and again
//! (the run is back, after the last step, in the state it was in after the
//! second).

use std::fmt;

use serde::Serialize;

use crate::{Error, Result};

/// The most attempts a schedule can name (`A` to `Z`).
pub(crate) const MAX_ATTEMPTS: usize = 26;
/// The most steps a schedule may hold.
pub(crate) const MAX_STEPS: usize = 100_000;

/// The sequence of attempts a run let step, in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Schedule {
    steps: Vec<usize>,
    /// Where a run that goes round for ever starts its cycle: the steps from
    /// this index to the end are the cycle, taken once.
    cycle_from: Option<usize>,
}

impl Schedule {
    /// A schedule of the given attempt indices (each below [`MAX_ATTEMPTS`]).
    pub fn new(steps: Vec<usize>) -> Self {
        debug_assert!(steps.iter().all(|&s| s < MAX_ATTEMPTS));
        Schedule {
            steps,
            cycle_from: None,
        }
    }

    /// A run that goes round for ever: `steps`, whose part from index
    /// `from` (below their number) is a cycle that brings the run back to
    /// the state it was in after `from` steps.
    pub fn lasso(steps: Vec<usize>, from: usize) -> Self {
        debug_assert!(from < steps.len());
        Schedule {
            cycle_from: Some(from),
            ..Schedule::new(steps)
        }
    }

    /// Where its cycle starts, if it is a run that goes round for ever
    /// ([`Schedule::lasso`]).
    pub fn cycle_from(&self) -> Option<usize> {
        self.cycle_from
    }

    /// The attempt indices.
    pub fn steps(&self) -> &[usize] {
        &self.steps
    }

    /// The number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether it has no steps.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Encodes it as a string such as `A3B2A`.
    pub fn encode(&self) -> String {
        self.to_string()
    }

    /// Parses a string made by [`Schedule::encode`].
    pub fn decode(text: &str) -> Result<Self> {
        let bad = |reason: String| Error::invalid("schedule", reason);
        if text.len() > MAX_STEPS * 2 {
            return Err(bad(format!("longer than {} characters", MAX_STEPS * 2)));
        }
        let mut steps = Vec::new();
        let mut cycle_from = None;
        let mut closed = false;
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if closed {
                return Err(bad(format!(
                    "unexpected {c:?} at position {at}: nothing may follow the cycle in parentheses"
                )));
            }
            if c == '(' && cycle_from.is_none() {
                cycle_from = Some(steps.len());
                continue;
            }
            if c == ')' && cycle_from.is_some() {
                if cycle_from == Some(steps.len()) {
                    return Err(bad(format!("the cycle closed at position {at} is empty")));
                }
                closed = true;
                continue;
            }
            if !c.is_ascii_uppercase() {
                return Err(bad(format!(
                    "unexpected {c:?} at position {at}: use letters A-Z for attempts, each optionally followed by a repeat count"
                )));
            }
            let attempt = (c as u8 - b'A') as usize;
            let mut count: usize = 0;
            let mut digits = 0;
            while let Some(&(_, d)) = chars.peek() {
                let Some(value) = d.to_digit(10) else { break };
                chars.next();
                digits += 1;
                if digits == 1 && value == 0 {
                    return Err(bad(format!(
                        "the repeat count after {c} at position {at} starts with 0"
                    )));
                }
                count = count.saturating_mul(10).saturating_add(value as usize);
                if count > MAX_STEPS {
                    return Err(bad(format!("more than {MAX_STEPS} steps")));
                }
            }
            let count = if digits == 0 { 1 } else { count };
            if steps.len() + count > MAX_STEPS {
                return Err(bad(format!("more than {MAX_STEPS} steps")));
            }
            steps.extend(std::iter::repeat_n(attempt, count));
        }
        if cycle_from.is_some() && !closed {
            return Err(bad(
                "the cycle opened with '(' is not closed with ')'".to_string()
            ));
        }
        Ok(Schedule { steps, cycle_from })
    }

    /// The letter naming attempt `index` (`A` for 0).
    pub fn letter(index: usize) -> char {
        char::from(b'A' + (index % MAX_ATTEMPTS) as u8)
    }

    /// The letters a scenario's schedules are written in, given its
    /// attempts' labels: each attempt's label where every label is one
    /// capital letter, they differ, and none is the letter of another
    /// attempt (so a schedule reads as its trace does: `P2C3`, and a letter
    /// is never both); the attempts' own letters otherwise.
    pub fn letters_for(labels: &[String]) -> Vec<char> {
        let own: Vec<char> = (0..labels.len()).map(Schedule::letter).collect();
        let single = |label: &String| {
            let mut chars = label.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if c.is_ascii_uppercase() => Some(c),
                _ => None,
            }
        };
        let Some(letters) = labels.iter().map(single).collect::<Option<Vec<char>>>() else {
            return own;
        };
        let distinct = letters
            .iter()
            .enumerate()
            .all(|(i, c)| !letters[..i].contains(c));
        let unambiguous = letters
            .iter()
            .zip(&own)
            .all(|(label, letter)| label == letter || !own.contains(label));
        if distinct && unambiguous {
            letters
        } else {
            own
        }
    }

    /// Encodes it with `letters` ([`Schedule::letters_for`]) for its
    /// attempts: `P2C3` (an attempt without one goes by its own letter).
    pub fn encode_with(&self, letters: &[char]) -> String {
        let Some(from) = self.cycle_from else {
            return Schedule::encode_steps(&self.steps, letters);
        };
        format!(
            "{}({})",
            Schedule::encode_steps(&self.steps[..from], letters),
            Schedule::encode_steps(&self.steps[from..], letters)
        )
    }

    fn encode_steps(steps: &[usize], letters: &[char]) -> String {
        let mut out = String::new();
        let mut i = 0;
        while i < steps.len() {
            let attempt = steps[i];
            let run = steps[i..].iter().take_while(|&&s| s == attempt).count();
            out.push(
                letters
                    .get(attempt)
                    .copied()
                    .unwrap_or_else(|| Schedule::letter(attempt)),
            );
            if run > 1 {
                out.push_str(&run.to_string());
            }
            i += run;
        }
        out
    }

    /// Parses a schedule written with `letters` ([`Schedule::letters_for`])
    /// or with the attempts' own letters, or both: a letter that is an
    /// attempt's label is that attempt, any other is the attempt it is the
    /// letter of (the two never disagree).
    pub fn decode_with(text: &str, letters: &[char]) -> Result<Self> {
        let mut schedule = Schedule::decode(text)?;
        for step in &mut schedule.steps {
            let written = Schedule::letter(*step);
            if let Some(attempt) = letters.iter().position(|&c| c == written) {
                *step = attempt;
            }
        }
        Ok(schedule)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The attempts' own letters.
        f.write_str(&self.encode_with(&[]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn schedules_are_written_in_single_letter_labels_when_unambiguous() {
        let letters = Schedule::letters_for(&labels(&["D", "C"]));
        assert_eq!(letters, ['D', 'C']);
        let schedule = Schedule::new(vec![0, 0, 1, 1, 1, 0]);
        assert_eq!(schedule.encode_with(&letters), "D2C3D");
        assert_eq!(Schedule::decode_with("D2C3D", &letters).unwrap(), schedule);
        // The attempts' own letters still read the same.
        assert_eq!(Schedule::decode_with("A2B3A", &letters).unwrap(), schedule);
        // A label that is another attempt's letter would read two ways.
        assert_eq!(Schedule::letters_for(&labels(&["B", "A"])), ['A', 'B']);
        // Labels of several letters cannot be written in a schedule.
        assert_eq!(
            Schedule::letters_for(&labels(&["P", "R1", "R2"])),
            ['A', 'B', 'C']
        );
        assert_eq!(Schedule::letters_for(&labels(&["A", "Q"])), ['A', 'Q']);
        assert_eq!(Schedule::letters_for(&labels(&["P", "P"])), ['A', 'B']);
    }

    #[test]
    fn encodes_runs_of_one_attempt_with_a_count() {
        let schedule = Schedule::new(vec![0, 0, 0, 1, 1, 0, 25]);
        assert_eq!(schedule.encode(), "A3B2AZ");
        assert_eq!(Schedule::decode("A3B2AZ").unwrap(), schedule);
        assert_eq!(Schedule::decode("").unwrap(), Schedule::default());
    }

    #[test]
    fn a_run_that_goes_round_for_ever_ends_with_its_cycle_in_parentheses() {
        let lasso = Schedule::lasso(vec![0, 0, 1, 0], 2);
        assert_eq!(lasso.encode(), "A2(BA)");
        assert_eq!(Schedule::decode("A2(BA)").unwrap(), lasso);
        assert_eq!(lasso.cycle_from(), Some(2));
        assert_eq!(lasso.steps(), [0, 0, 1, 0]);
        let from_start = Schedule::decode("(A3)").unwrap();
        assert_eq!(from_start, Schedule::lasso(vec![0, 0, 0], 0));
        assert_eq!(from_start.encode_with(&['R']), "(R3)");
        // A plain schedule is not a lasso of the same steps.
        assert_ne!(Schedule::decode("A2BA").unwrap(), lasso);
        for (text, expected) in [
            ("A()", "the cycle closed at position 2 is empty"),
            ("A(B", "is not closed"),
            ("A(B)A", "nothing may follow the cycle"),
            ("A(B(A))", "unexpected '(' at position 3"),
            ("A)B", "unexpected ')' at position 1"),
        ] {
            let error = Schedule::decode(text).unwrap_err().to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }

    #[test]
    fn round_trips_many_schedules() {
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..2000 {
            let len = rng.usize(0..60);
            let attempts = rng.usize(1..=MAX_ATTEMPTS);
            let steps: Vec<usize> = (0..len).map(|_| rng.usize(0..attempts)).collect();
            let schedule = Schedule::new(steps);
            assert_eq!(Schedule::decode(&schedule.encode()).unwrap(), schedule);
        }
    }

    #[test]
    fn rejects_malformed_text_with_a_sentence() {
        for (text, expected) in [
            ("a", "unexpected 'a' at position 0"),
            ("A0", "starts with 0"),
            ("A-", "unexpected '-' at position 1"),
            ("3A", "unexpected '3' at position 0"),
            ("A99999999999999999999", "more than 100000 steps"),
            ("A60000B60000", "more than 100000 steps"),
            ("AÉ", "unexpected 'É' at position 1"),
        ] {
            let error = Schedule::decode(text).unwrap_err().to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
            assert!(error.starts_with("invalid schedule: "), "{error}");
        }
    }
}
