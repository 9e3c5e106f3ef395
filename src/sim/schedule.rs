//! A run's choices as a short, URL-safe string.
//!
//! Attempts are letters (`A` is attempt 0, up to `Z`); a letter followed by a
//! number repeats it: `A3B2A` is A, A, A, B, B, A. The string is stable, human
//! readable, and fits in a link.

use std::fmt;

use serde::Serialize;

use crate::{Error, Result};

/// The most attempts a schedule can name (`A` to `Z`).
pub const MAX_ATTEMPTS: usize = 26;
/// The most steps a schedule may hold.
pub const MAX_STEPS: usize = 100_000;

/// The sequence of attempts a run let step, in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Schedule {
    steps: Vec<usize>,
}

impl Schedule {
    /// A schedule of the given attempt indices (each below [`MAX_ATTEMPTS`]).
    pub fn new(steps: Vec<usize>) -> Self {
        debug_assert!(steps.iter().all(|&s| s < MAX_ATTEMPTS));
        Schedule { steps }
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
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
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
        Ok(Schedule { steps })
    }

    /// The letter naming attempt `index` (`A` for 0).
    pub fn letter(index: usize) -> char {
        char::from(b'A' + (index % MAX_ATTEMPTS) as u8)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        while i < self.steps.len() {
            let attempt = self.steps[i];
            let run = self.steps[i..]
                .iter()
                .take_while(|&&s| s == attempt)
                .count();
            write!(f, "{}", Schedule::letter(attempt))?;
            if run > 1 {
                write!(f, "{run}")?;
            }
            i += run;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_runs_of_one_attempt_with_a_count() {
        let schedule = Schedule::new(vec![0, 0, 0, 1, 1, 0, 25]);
        assert_eq!(schedule.encode(), "A3B2AZ");
        assert_eq!(Schedule::decode("A3B2AZ").unwrap(), schedule);
        assert_eq!(Schedule::decode("").unwrap(), Schedule::default());
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
