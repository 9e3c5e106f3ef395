//! PCT, probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi and
//! Nagarakatte, ASPLOS 2010): attempts get random distinct priorities and the
//! highest-priority runnable one always runs; at `depth - 1` random steps the
//! running attempt drops below all others. A bug that needs `d` ordering
//! constraints among `n` attempts and `k` steps is found by one run with
//! probability at least 1 / (n k^(d-1)).

use super::Scheduler;
use crate::sim::Choice;
use crate::{Error, Result};

/// PCT with a bug depth and an estimate of the run length.
#[derive(Debug, Clone)]
pub struct Pct {
    seed: u64,
    depth: u32,
    rng: fastrand::Rng,
    priorities: Vec<u64>,
    change_points: Vec<usize>,
    max_steps: usize,
}

impl Pct {
    /// PCT for bugs of `depth` (1 to 10) in runs of about `max_steps` steps.
    pub fn new(seed: u64, depth: u32, max_steps: usize) -> Result<Self> {
        if !(1..=10).contains(&depth) {
            return Err(Error::invalid("depth", "use 1 to 10"));
        }
        let mut rng = fastrand::Rng::with_seed(seed);
        let max_steps = max_steps.max(1);
        let mut change_points: Vec<usize> = (1..depth)
            .map(|_| rng.u32(1..=max_steps as u32) as usize)
            .collect();
        change_points.sort_unstable();
        Ok(Pct {
            seed,
            depth,
            rng,
            priorities: Vec::new(),
            change_points,
            max_steps,
        })
    }

    fn ensure_priorities(&mut self, attempts: usize) {
        if self.priorities.len() < attempts {
            // Initial priorities are all above the change points' (0..depth).
            let mut order: Vec<u64> = (0..attempts as u64).collect();
            // Fisher-Yates with u32 draws: `Rng::shuffle` draws usize, which
            // gives other orders on 32-bit wasm than on 64-bit native.
            for i in (1..order.len()).rev() {
                let j = self.rng.u32(..=i as u32) as usize;
                order.swap(i, j);
            }
            self.priorities = order
                .into_iter()
                .map(|p| p + u64::from(self.depth))
                .collect();
        }
    }
}

impl Scheduler for Pct {
    fn describe(&self) -> String {
        format!(
            "PCT (seed {}, depth {}, about {} steps)",
            self.seed, self.depth, self.max_steps
        )
    }

    fn choose(&mut self, choice: &Choice<'_>) -> Result<usize> {
        self.ensure_priorities(choice.statuses.len());
        let highest = |priorities: &[u64]| {
            *choice
                .runnable
                .iter()
                .max_by_key(|&&i| priorities[i])
                .expect("runnable is not empty")
        };
        let mut pick = highest(&self.priorities);
        for (j, &point) in self.change_points.iter().enumerate() {
            if point == choice.step {
                self.priorities[pick] = j as u64;
                pick = highest(&self.priorities);
            }
        }
        Ok(pick)
    }
}
