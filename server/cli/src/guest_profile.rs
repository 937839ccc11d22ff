//! `-profile FILE` on replay and run: a pprof profile of the guests'
//! functions, per node instance (`seedfall_sim::guest_profile` samples;
//! this module ticks the sampling clock and writes the file).
//!
//! The file opens with `go tool pprof` (`-top`, `-http`, `-traces`) and
//! anything else that reads pprof (speedscope, Pyroscope, ...). Each sample
//! is labelled `node`, and its stack starts at a frame `node <name>`, so a
//! flame graph splits by node instance in any viewer. Two values per
//! sample: `samples` (count) and `instructions` (the guest instructions it
//! stands for, the default: virtual compute time, not real time).
use pprof::protos::{Function, Label, Line, Location, Message, Profile, Sample, ValueType};
use seedfall_sim::guest_profile::GuestProfile;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Real time between sampling ticks. Each sample costs a stack walk of a
/// few microseconds: at this rate a profiled run is ~5% slower.
pub const INTERVAL: Duration = Duration::from_micros(250);

/// The ticking clock of a profiling engine, and the samples of every run
/// that shares it.
pub struct Sampler {
    pub profile: Arc<Mutex<GuestProfile>>,
    stop: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    /// Starts ticking `engine`'s epoch. The engine must be a profiling one
    /// (a project loaded with `guest_profiling`).
    pub fn start(engine: &seedfall_sim::Engine) -> Sampler {
        assert!(engine.options.guest_profiling, "a profiling engine");
        let stop = Arc::new(AtomicBool::new(false));
        let engine = engine.clone();
        let flag = stop.clone();
        let ticker = std::thread::Builder::new()
            .name("seedfall-profile-tick".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(INTERVAL);
                    engine.tick_epoch();
                }
            })
            .expect("a thread for the sampling clock");
        Sampler { profile: Arc::default(), stop, ticker: Some(ticker) }
    }

    /// Stops the clock and writes the profile to `path` (atomically);
    /// prints where, and how the samples split over node instances.
    pub fn finish(mut self, path: &Path) -> Result<(), String> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        let profile = self.profile.lock().expect("a profile's lock is never poisoned");
        let bytes = pprof_bytes(&profile);
        seedfall_search::cache::write_atomic(path, &bytes).map_err(|e| format!("-profile: cannot write {}: {e}", path.display()))?;
        let per_node = profile.per_node();
        let total: u64 = per_node.values().map(|c| c.instructions).sum::<u64>().max(1);
        let split: Vec<String> = per_node.iter().map(|(n, c)| format!("{n} {:.0}%", c.instructions as f64 * 100.0 / total as f64)).collect();
        let dropped = if profile.dropped > 0 { format!(", {} not kept", profile.dropped) } else { String::new() };
        eprintln!(
            "seedfall: guest profile written to {} ({} samples{dropped}; instructions by node: {}); read it with go tool pprof -top {}",
            path.display(),
            profile.samples(),
            if split.is_empty() { "none".to_string() } else { split.join(", ") },
            path.display()
        );
        Ok(())
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Readable names: Rust symbols demangled (without their hash), Go's as
/// the module names them (`main.main`, `runtime.mallocgc`).
fn display_name(raw: &str) -> String {
    format!("{:#}", rustc_demangle::demangle(raw))
}

/// The profile in pprof's protobuf encoding.
pub fn pprof_bytes(p: &GuestProfile) -> Vec<u8> {
    let mut strings: Vec<String> = vec![String::new()];
    let mut string_ids: BTreeMap<String, i64> = BTreeMap::new();
    let mut s = |text: &str| -> i64 {
        if let Some(id) = string_ids.get(text) {
            return *id;
        }
        strings.push(text.to_string());
        let id = strings.len() as i64 - 1;
        string_ids.insert(text.to_string(), id);
        id
    };
    let sample_type = vec![ValueType { ty: s("samples"), unit: s("count") }, ValueType { ty: s("instructions"), unit: s("count") }];
    let node_key = s("node");
    // One function and one location per name: guest frames, then the
    // `node <name>` roots.
    let mut function = Vec::new();
    let mut location = Vec::new();
    let mut add = |name: String, raw: &str, s: &mut dyn FnMut(&str) -> i64| -> u64 {
        let id = function.len() as u64 + 1;
        function.push(Function { id, name: s(&name), system_name: s(raw), filename: 0, start_line: 0 });
        location.push(Location { id, line: vec![Line { function_id: id, line: 0 }], ..Location::default() });
        id
    };
    let frame_ids: Vec<u64> = p.names.iter().map(|raw| add(display_name(raw), raw, &mut s)).collect();
    let mut node_ids: BTreeMap<&str, u64> = BTreeMap::new();
    let mut sample = Vec::with_capacity(p.stacks.len());
    for ((node, stack), counts) in &p.stacks {
        let root = *node_ids.entry(node.as_str()).or_insert_with(|| add(format!("node {node}"), &format!("node {node}"), &mut s));
        let mut location_id: Vec<u64> = stack.iter().map(|id| frame_ids[*id as usize]).collect();
        location_id.push(root);
        sample.push(Sample {
            location_id,
            value: vec![counts.samples as i64, counts.instructions as i64],
            label: vec![Label { key: node_key, str: s(node), ..Label::default() }],
        });
    }
    let period_type = Some(ValueType { ty: s("instructions"), unit: s("count") });
    let default_sample_type = s("instructions");
    let comment = vec![s("seedfall guest profile: stacks of guest code per node instance, weighted by guest instructions")];
    let profile = Profile {
        sample_type,
        sample,
        location,
        function,
        string_table: strings,
        period_type,
        period: 1,
        default_sample_type,
        comment,
        ..Profile::default()
    };
    let mut out = Vec::new();
    profile.encode(&mut out).expect("encoding into a Vec cannot fail");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_demangled_and_every_stack_ends_at_its_node() {
        let mut p = GuestProfile::default();
        p.add("client", [(43, Some("_ZN8rust_net6client17hd1942b2ee86691ecE")), (1, Some("main.main"))].into_iter(), 70);
        p.add("server", [(2, Some("runtime.mallocgc"))].into_iter(), 30);
        let decoded = Profile::decode(pprof_bytes(&p).as_slice()).unwrap();
        let name = |loc: u64| {
            let f = &decoded.function[decoded.location[loc as usize - 1].line[0].function_id as usize - 1];
            decoded.string_table[f.name as usize].clone()
        };
        let stacks: Vec<(Vec<String>, Vec<i64>)> = decoded.sample.iter().map(|s| (s.location_id.iter().map(|l| name(*l)).collect(), s.value.clone())).collect();
        assert_eq!(stacks, vec![
            (vec!["rust_net::client".to_string(), "main.main".into(), "node client".into()], vec![1, 70]),
            (vec!["runtime.mallocgc".to_string(), "node server".into()], vec![1, 30]),
        ]);
        assert_eq!(decoded.string_table[decoded.default_sample_type as usize], "instructions");
    }
}
