//! What an exploration (or a `run -until-novelty` sweep) has reached so far,
//! and how rare each signal is.
//!
//! A signal's **count** is how many runs reached it *fresh*: a branched child
//! replays its parent up to the branch, so what it reached before that
//! moment is inherited, not found again, and does not make the signal look
//! common. A signal's **rank** is the discovery event that found it: each
//! run that found something new (or beat a watermark) is one event, so the
//! hundreds of functions a first run enters share one rank. (Ranking a
//! run's discoveries by their moments instead sends children after the
//! functions a run entered on its way out, past the draw that mattered.)
use super::signals::{self, beats, Reached, Signal};
use seedfall_sim::Outcome;
use std::collections::BTreeMap;

#[derive(Default)]
pub struct Growth {
    pub counts: BTreeMap<Signal, u64>,
    /// Every signal reached so far, with its rank.
    pub rank: BTreeMap<Signal, u32>,
    /// Which of its discovering run's new moments (in time order) a signal
    /// came at: 0 for the first.
    pub moment: BTreeMap<Signal, u32>,
    /// Discovery events so far.
    pub events: u32,
    /// The best value any run reached, per watermark.
    pub best_value: BTreeMap<Signal, f64>,
    pub functions: usize,
    pub edges: usize,
}

impl Growth {
    /// Folds one run's signals in; returns what was new: signals no run
    /// reached before (functions included) and watermarks it beat.
    pub fn add(&mut self, outcome: &Outcome) -> Vec<Reached> {
        self.add_reached(outcome, &signals::of(outcome))
    }

    pub fn add_reached(&mut self, outcome: &Outcome, reached: &[Reached]) -> Vec<Reached> {
        let fresh_from = outcome.schedule.branches.iter().map(|b| b.at_ns).max().unwrap_or(0);
        let mut new = Vec::new();
        for r in reached {
            let fresh = r.at_ns.is_none_or(|t| t >= fresh_from);
            let first = !self.rank.contains_key(&r.signal);
            let better = match (r.value, self.best_value.get(&r.signal)) {
                (Some(v), Some(&best)) => beats(&r.signal, v, best),
                (Some(_), None) => true,
                _ => false,
            };
            if better {
                self.best_value.insert(r.signal.clone(), r.value.unwrap());
                // Rarity is of the new best value: no run reached it before.
                self.counts.insert(r.signal.clone(), 0);
            }
            let at_best = r.value.is_none() || self.best_value.get(&r.signal) == r.value.as_ref();
            if fresh && at_best {
                *self.counts.entry(r.signal.clone()).or_insert(0) += 1;
            }
            if first && r.signal.is_function() {
                self.functions += 1;
            }
            if first && matches!(r.signal, Signal::Edge { .. }) {
                self.edges += 1;
            }
            if first || better {
                self.rank.insert(r.signal.clone(), self.events);
                new.push(r.clone());
            }
        }
        if !new.is_empty() {
            self.events += 1;
        }
        let mut moments: Vec<Option<u64>> = new.iter().map(|r| r.at_ns).collect();
        moments.sort();
        moments.dedup();
        for r in &new {
            let k = moments.binary_search(&r.at_ns).expect("every moment is listed") as u32;
            self.moment.insert(r.signal.clone(), k);
        }
        new
    }

    /// Which new moment of its discovering run `s` came at (0: the first).
    pub fn moment(&self, s: &Signal) -> u32 {
        self.moment.get(s).copied().unwrap_or(0)
    }

    /// Signals other than coverage (each watermark counts once).
    pub fn signals(&self) -> usize {
        self.rank.len() - self.functions - self.edges
    }

    /// Fresh runs that reached `s` (at least 1: it was reached).
    pub fn count(&self, s: &Signal) -> u64 {
        self.counts.get(s).copied().unwrap_or(1).max(1)
    }

    /// Discovery events since `s` was found (0: the latest).
    pub fn age(&self, s: &Signal) -> u32 {
        self.events.saturating_sub(1).saturating_sub(self.rank.get(s).copied().unwrap_or(0))
    }
}
