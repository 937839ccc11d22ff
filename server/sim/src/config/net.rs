//! `net`: the simulated network's timing.
use super::parse::{Parsed, Parser};
use super::Span;
use serde_json::Value;

/// The simulated network's timing.
#[derive(Clone, Debug, PartialEq)]
pub struct NetConfig {
    /// One-way latency of a segment between two hosts.
    pub latency: Span,
    pub distribution: LatencyDistribution,
    /// A connect that got no answer by then fails with ETIMEDOUT.
    pub connect_timeout_ns: u64,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig { latency: Span { min_ns: 100_000, max_ns: 2_000_000 }, distribution: LatencyDistribution::Uniform, connect_timeout_ns: 3_000_000_000 }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatencyDistribution {
    /// Uniform over the latency range.
    Uniform,
    /// Mostly uniform over the range; one segment in 16 takes 1 to 10 times
    /// the range's maximum (a slow path, a retransmit).
    LongTail,
}

impl Parser {
    pub(super) fn net(&self, v: &Value) -> Parsed<NetConfig> {
        let m = self.object(v, "$.net", &super::fields::NET.names())?;
        let mut n = NetConfig::default();
        if let Some(x) = m.get("latency") {
            n.latency = self.span(x, "$.net.latency")?;
        }
        if let Some(x) = m.get("distribution") {
            n.distribution = match self.string(x, "$.net.distribution")?.as_str() {
                "uniform" => LatencyDistribution::Uniform,
                "long_tail" => LatencyDistribution::LongTail,
                other => return Err(self.err("$.net.distribution", format!("expected \"uniform\" or \"long_tail\", found \"{}\"", super::parse::shown_text(&other)))),
            };
        }
        if let Some(x) = m.get("connect_timeout") {
            n.connect_timeout_ns = self.duration_value(x, "$.net.connect_timeout")?;
            if n.connect_timeout_ns == 0 {
                return Err(self.err("$.net.connect_timeout", "expected a positive duration like \"3s\", found zero"));
            }
        }
        Ok(n)
    }
}
