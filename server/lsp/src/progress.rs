//! The progress line protocol: how a `seedfall` child tells the daemon that
//! runs it how far it got. It is a hidden interface between the binary and
//! its daemons (`jobs` reads it for the LSP's `$/progress` and the MCP
//! server's progress notifications), not a documented output: only
//! `seedfall run -progress` and `seedfall explore -events` write it, on
//! stderr, one line at a time:
//!
//! - `progress <done> <total>`: `done` of `total` runs of a sweep finished
//!   (both decimal);
//! - `round <json>`: a round of an exploration ended; the JSON is the round
//!   as `-json` prints it, on one line.
//!
//! A line with either prefix that does not parse is neither an event nor
//! the child's text, and is dropped. Every other stderr line is the child's
//! own text (an error, a warning), which `jobs` keeps for the user. Both
//! ends are here so they cannot drift.
use serde::Serialize;
use serde_json::Value;

/// What the child said along the way.
#[derive(Debug, PartialEq)]
pub enum Event {
    Progress { done: u64, total: u64 },
    Round(Value),
}

/// The line saying `done` of `total` runs finished.
pub fn progress_line(done: u64, total: u64) -> String {
    format!("progress {done} {total}")
}

/// The line saying a round ended.
pub fn round_line(round: &impl Serialize) -> String {
    format!("round {}", serde_json::to_string(round).unwrap())
}

/// Writes a progress line on stderr.
pub fn write_progress(done: u64, total: u64) {
    eprintln!("{}", progress_line(done, total));
}

/// Writes a round line on stderr.
pub fn write_round(round: &impl Serialize) {
    eprintln!("{}", round_line(round));
}

/// A stderr line of the child, read.
#[derive(Debug, PartialEq)]
pub enum Line {
    Event(Event),
    /// A protocol line that does not parse.
    Garbled,
    /// The child's own text.
    Text,
}

/// Reads one stderr line of the child.
pub fn parse(line: &str) -> Line {
    if let Some(rest) = line.strip_prefix("progress ") {
        let mut it = rest.split_whitespace().filter_map(|x| x.parse().ok());
        match (it.next(), it.next()) {
            (Some(done), Some(total)) => Line::Event(Event::Progress { done, total }),
            _ => Line::Garbled,
        }
    } else if let Some(rest) = line.strip_prefix("round ") {
        serde_json::from_str(rest).map_or(Line::Garbled, |v| Line::Event(Event::Round(v)))
    } else {
        Line::Text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_is_written_parses_back_and_other_lines_are_not_events() {
        assert_eq!(parse(&progress_line(17, 200)), Line::Event(Event::Progress { done: 17, total: 200 }));
        let round = json!({ "round": 3, "corpus": 12, "failures": 0, "new_signals": ["a b"] });
        assert_eq!(parse(&round_line(&round)), Line::Event(Event::Round(round)));
        for text in ["error: seedfall.json: no such file", "progress", "warning: round 2 was slow", ""] {
            assert_eq!(parse(text), Line::Text, "{text:?}");
        }
        for garbled in ["progress 3", "progress x y", "round {not json"] {
            assert_eq!(parse(garbled), Line::Garbled, "{garbled:?}");
        }
    }
}
