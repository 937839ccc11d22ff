//! When an exploration stops, and the words that say why.
//!
//! An explicit limit is a promise: `-rounds N` and `-budget` are honoured
//! in full unless `-until-novelty` is also given. With no limit at all, the
//! default rule stops once the runs since the last novelty reach both 8
//! rounds and four times the runs the last novelty took to find (so a
//! search whose last step took 900 runs is given 3,600 more, not 8 rounds),
//! and never before `DEFAULT_RUNS_MIN` runs: explore at its defaults runs
//! at least as many as `seedfall run` at its defaults (seeds 1-100), so it
//! never does less than a plain sweep a user would have run instead.
use std::time::Duration;

/// Rounds of quiet the default rule waits at least.
pub const DEFAULT_QUIET_ROUNDS: u64 = 8;
/// How many times the last novelty's cost the default rule waits.
pub const DEFAULT_QUIET_FACTOR: u64 = 4;
/// Runs the default rule waits for at least: `seedfall run`'s default
/// seed range, 1-100.
pub const DEFAULT_RUNS_MIN: u64 = 100;

#[derive(Clone, Debug)]
pub struct Limits {
    pub rounds: Option<u32>,
    pub budget: Option<Duration>,
    pub until_novelty: Option<u32>,
}

/// How far the search has come, as the stop rules see it.
#[derive(Default, Debug)]
pub struct Progress {
    pub round: u32,
    pub runs: u64,
    pub quiet_rounds: u32,
    /// Runs when the last novelty came, and the gap before it.
    pub last_novelty_run: u64,
    pub last_gap: u64,
}

impl Progress {
    /// Notes the end of a round that did (or did not) find something new.
    pub fn round_done(&mut self, novel_at: Option<u64>) {
        match novel_at {
            Some(run) => {
                self.last_gap = run - self.last_novelty_run;
                self.last_novelty_run = run;
                self.quiet_rounds = 0;
            }
            None => self.quiet_rounds += 1,
        }
    }
}

impl Limits {
    pub fn default_rule(&self) -> bool {
        self.rounds.is_none() && self.budget.is_none() && self.until_novelty.is_none()
    }

    /// Why to stop after this round, if the search should stop.
    pub fn check(&self, p: &Progress, elapsed: Duration, round_max: u32) -> Option<String> {
        if let Some(n) = self.until_novelty {
            if p.quiet_rounds >= n {
                return Some(format!("no novelty for {} rounds (-until-novelty {n})", p.quiet_rounds));
            }
        }
        if let Some(b) = self.budget {
            if elapsed >= b {
                return Some(format!("budget spent (-budget {})", seedfall_sim::vtime::VTime::ZERO.saturating_add(b.as_nanos() as u64)));
            }
        }
        if let Some(r) = self.rounds {
            if p.round >= r {
                return Some(format!("rounds limit reached (-rounds {r})"));
            }
        }
        if self.default_rule() {
            let quiet = p.runs - p.last_novelty_run;
            if p.runs >= DEFAULT_RUNS_MIN && u64::from(p.quiet_rounds) >= DEFAULT_QUIET_ROUNDS && quiet >= DEFAULT_QUIET_FACTOR * p.last_gap {
                return Some(format!(
                    "no novelty for {quiet} runs (the default rule: at least {DEFAULT_RUNS_MIN} runs, {DEFAULT_QUIET_ROUNDS} rounds and {DEFAULT_QUIET_FACTOR} times the {} runs the last novelty took; -rounds, -budget or -until-novelty choose another)",
                    p.last_gap
                ));
            }
        }
        if p.round >= round_max {
            return Some(format!("the rounds bound reached ({round_max})"));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(rounds: Option<u32>, until_novelty: Option<u32>) -> Limits {
        Limits { rounds, budget: None, until_novelty }
    }

    #[test]
    fn rounds_are_honoured_without_an_explicit_novelty_rule() {
        let p = Progress { round: 71, runs: 568, quiet_rounds: 60, last_novelty_run: 88, last_gap: 10 };
        assert_eq!(limits(Some(200), None).check(&p, Duration::ZERO, 100_000), None);
        assert!(limits(Some(200), Some(8)).check(&p, Duration::ZERO, 100_000).unwrap().contains("-until-novelty 8"));
        let done = Progress { round: 200, ..p };
        assert_eq!(limits(Some(200), None).check(&done, Duration::ZERO, 100_000).unwrap(), "rounds limit reached (-rounds 200)");
    }

    #[test]
    fn the_default_rule_scales_with_the_last_novelty() {
        let l = limits(None, None);
        // The last novelty took 900 runs: 3,600 quiet runs are waited for.
        let mut p = Progress { round: 300, runs: 900 + 3_599, quiet_rounds: 449, last_novelty_run: 900, last_gap: 900 };
        assert_eq!(l.check(&p, Duration::ZERO, 100_000), None);
        p.runs += 1;
        assert!(l.check(&p, Duration::ZERO, 100_000).unwrap().starts_with("no novelty for 3600 runs (the default rule"));
        // A quick last novelty still gets 8 rounds.
        let q = Progress { round: 12, runs: 40 + 63, quiet_rounds: 7, last_novelty_run: 40, last_gap: 2 };
        assert_eq!(l.check(&q, Duration::ZERO, 100_000), None);
        // Quiet enough, but fewer runs than a default sweep: go on.
        let early = Progress { round: 10, runs: 40, quiet_rounds: 9, last_novelty_run: 8, last_gap: 1 };
        assert_eq!(l.check(&early, Duration::ZERO, 100_000), None);
        let later = Progress { runs: DEFAULT_RUNS_MIN, quiet_rounds: 23, round: 24, ..early };
        assert!(l.check(&later, Duration::ZERO, 100_000).unwrap().contains("at least 100 runs, 8 rounds"));
    }
}
