//! The config parser's primitives: typed reads of JSON values that name the
//! JSON path in every error, and the helpers behind "did you mean".
use super::{ConfigError, NodeSpec, Span};
use crate::vtime::parse_duration;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

pub(super) struct Parser {
    pub(super) file: PathBuf,
}

pub(super) type Parsed<T> = Result<T, ConfigError>;

/// The key of a comment in any object of a config.
pub const COMMENT_KEY: &str = "//";

impl Parser {
    pub(super) fn err(&self, json_path: &str, message: impl Into<String>) -> ConfigError {
        ConfigError { file: self.file.clone(), json_path: json_path.to_string(), message: message.into() }
    }

    pub(super) fn object<'v>(&self, v: &'v Value, path: &str, known: &[&str]) -> Parsed<&'v Map<String, Value>> {
        let map = v.as_object().ok_or_else(|| self.err(path, format!("expected an object, found {}", kind(v))))?;
        for (key, value) in map {
            // `"//"`: a comment, in any object (`seedfall init` writes them).
            if key == COMMENT_KEY {
                let text = value.is_string() || value.as_array().is_some_and(|a| a.iter().all(Value::is_string));
                if !text {
                    return Err(self.err(&format!("{path}.{key}"), format!("a comment is a string or a list of strings, found {}", kind(value))));
                }
                continue;
            }
            if !known.contains(&key.as_str()) {
                let hint = match did_you_mean(key, known) {
                    Some(s) => format!(" (did you mean \"{s}\"?)"),
                    None => format!(" (known fields: {})", known.join(", ")),
                };
                return Err(self.err(&format!("{path}.{key}"), format!("unknown field \"{key}\"{hint}")));
            }
        }
        Ok(map)
    }

    pub(super) fn string(&self, v: &Value, path: &str) -> Parsed<String> {
        v.as_str().map(str::to_string).ok_or_else(|| self.err(path, format!("expected a string, found {}", kind(v))))
    }

    pub(super) fn uint(&self, v: &Value, path: &str, min: u64, max: u64) -> Parsed<u64> {
        match v.as_u64() {
            Some(n) if n >= min && n <= max => Ok(n),
            _ => Err(self.err(path, format!("expected an integer from {min} to {max}, found {}", show(v)))),
        }
    }

    pub(super) fn bool(&self, v: &Value, path: &str) -> Parsed<bool> {
        v.as_bool().ok_or_else(|| self.err(path, format!("expected true or false, found {}", kind(v))))
    }

    pub(super) fn strings(&self, v: &Value, path: &str) -> Parsed<Vec<String>> {
        let items = v.as_array().ok_or_else(|| self.err(path, format!("expected an array of strings, found {}", kind(v))))?;
        items.iter().enumerate().map(|(i, item)| self.string(item, &format!("{path}[{i}]"))).collect()
    }

    pub(super) fn rel_path(&self, v: &Value, path: &str) -> Parsed<PathBuf> {
        let text = self.string(v, path)?;
        if text.is_empty() {
            return Err(self.err(path, "expected a path, found an empty string"));
        }
        let dir = self.file.parent().expect("config file has a folder");
        Ok(normalize(&dir.join(text)))
    }

    pub(super) fn duration_value(&self, v: &Value, path: &str) -> Parsed<u64> {
        let text = self.string(v, path)?;
        let d = parse_duration(&text).ok_or_else(|| self.err(path, format!("expected a duration like \"10ms\", found \"{}\"", shown_text(&text))))?;
        self.bounded(d, path, &text)
    }

    /// A size in bytes: an integer, or a string like `"64KiB"`, `"10MiB"`,
    /// `"1GiB"` (powers of 1024), within `min..=max`.
    pub(super) fn bytes_value(&self, v: &Value, path: &str, min: u64, max: u64) -> Parsed<u64> {
        let found = match v {
            Value::String(text) => format!("\"{}\"", shown_text(text)),
            _ => show(v),
        };
        let bad = || self.err(path, format!("expected a size like \"64MiB\" (B, KiB, MiB or GiB) or a number of bytes, from {min} to {max} bytes, found {found}"));
        let n = match v {
            Value::Number(_) => v.as_u64().ok_or_else(bad)?,
            Value::String(text) => parse_bytes(text).ok_or_else(bad)?,
            _ => return Err(bad()),
        };
        if n < min || n > max {
            return Err(bad());
        }
        Ok(n)
    }

    /// A duration within `DURATION_MAX` (1000h), the bound every duration has.
    pub(super) fn bounded(&self, d: crate::vtime::VTime, path: &str, text: &str) -> Parsed<u64> {
        if d > crate::vtime::DURATION_MAX {
            return Err(self.err(path, format!("expected a duration of at most 1000h, found \"{}\"", shown_text(text))));
        }
        Ok(d.nanos())
    }

    /// `"100ms"` or `"50ms-500ms"`.
    pub(super) fn span(&self, v: &Value, path: &str) -> Parsed<Span> {
        let text = self.string(v, path)?;
        let bad = || self.err(path, format!("expected a duration like \"100ms\" or a range like \"50ms-500ms\", found \"{}\"", shown_text(&text)));
        let (a, b) = match text.split_once('-') {
            Some((a, b)) => (parse_duration(a).ok_or_else(bad)?, parse_duration(b).ok_or_else(bad)?),
            None => {
                let d = parse_duration(&text).ok_or_else(bad)?;
                (d, d)
            }
        };
        self.bounded(b, path, &text)?;
        if b < a {
            return Err(self.err(path, format!("the range \"{}\" ends before it starts", shown_text(&text))));
        }
        Ok(Span { min_ns: a.nanos(), max_ns: b.nanos() })
    }

    /// The required `duration` span of a fault family at `path`.
    pub(super) fn duration_span(&self, m: &Map<String, Value>, path: &str, hint: &str) -> Parsed<Span> {
        match m.get("duration") {
            Some(v) => self.span(v, &format!("{path}.duration")),
            None => Err(self.err(path, format!("missing field \"duration\" ({hint})"))),
        }
    }

    pub(super) fn number(&self, v: &Value, path: &str, min: f64, max: f64) -> Parsed<f64> {
        match v.as_f64() {
            Some(x) if x >= min && x <= max => Ok(x),
            _ => Err(self.err(path, format!("expected a number from {min} to {max}, found {}", show(v)))),
        }
    }

    /// `nodes` names config nodes (all their replicas); absent means every node.
    pub(super) fn targets(&self, m: &Map<String, Value>, path: &str, nodes: &[NodeSpec]) -> Parsed<Vec<String>> {
        let Some(v) = m.get("nodes") else { return Ok(nodes.iter().map(|n| n.name.clone()).collect()) };
        let names = self.strings(v, &format!("{path}.nodes"))?;
        let known: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        for (i, n) in names.iter().enumerate() {
            if !known.contains(&n.as_str()) {
                return Err(self.err(&format!("{path}.nodes[{i}]"), unknown_node(n, &known)));
            }
        }
        Ok(names)
    }

    pub(super) fn rate(&self, m: &Map<String, Value>, path: &str) -> Parsed<f64> {
        match m.get("rate") {
            Some(x) => self.number(x, &format!("{path}.rate"), 0.0, 1000.0),
            None => Err(self.err(path, "missing field \"rate\" (expected faults per virtual second per node instance)")),
        }
    }
}

/// `"512B"`, `"64KiB"`, `"10MiB"`, `"2GiB"`, or digits alone (bytes):
/// a size's string form, before its bounds (`schema::SIZE_PATTERN` is
/// its text form, and is tested against it).
pub fn parse_bytes(text: &str) -> Option<u64> {
    let digits = text.trim().bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = text.trim().split_at(digits);
    let shift = match unit.trim() {
        "" | "B" => 0,
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        _ => return None,
    };
    let n: u64 = number.parse().ok()?;
    n.checked_mul(1 << shift)
}

/// Removes `.` and folds `dir/..` without touching the filesystem, so paths
/// shown to users read `examples/ledger/main.go`, not `examples/ledger/./main.go`.
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `no node "sever" (did you mean "server"? nodes: client, server)`: what a
/// fault's `nodes` entry that names no config node gets. An instance name
/// (`client#1`) is pointed at its node, since faults target whole nodes.
fn unknown_node(name: &str, known: &[&str]) -> String {
    let shown = shown_text(name);
    let listed = format!("nodes: {}", known.join(", "));
    if let Some((node, _replica)) = name.split_once('#').filter(|(node, _)| known.contains(node)) {
        return format!("no node \"{shown}\" (faults name config nodes, which take all their replicas: use \"{node}\"; {listed})");
    }
    match did_you_mean(name, known) {
        Some(close) => format!("no node \"{shown}\" (did you mean \"{close}\"? {listed})"),
        None => format!("no node \"{shown}\" ({listed})"),
    }
}

/// Bytes a config name may have (it names folders and corpora).
pub const NAME_BYTES_MAX: usize = 64;

pub(super) fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= NAME_BYTES_MAX && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A name in the config-name alphabet: every other character becomes `-`,
/// cut to `NAME_BYTES_MAX`; `None` when nothing is left. Derived names are
/// made with it, and an explicit `name` outside the alphabet is refused with
/// its result as the suggestion (seedfall never rewrites a name you chose).
pub(super) fn sanitized_name(raw: &str) -> Option<String> {
    let cleaned: String = raw.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).take(NAME_BYTES_MAX).collect();
    let sanitized = (!cleaned.is_empty()).then_some(cleaned);
    assert!(sanitized.as_deref().is_none_or(valid_name), "a sanitised name is valid");
    sanitized
}

/// `seedfall.json` takes its folder's name; `seedfall.fixed.json` becomes
/// `<folder>-fixed`; any other file its stem.
pub(super) fn default_name(file: &Path) -> String {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("config");
    let folder = file.parent().and_then(|p| p.file_name()).and_then(|s| s.to_str()).unwrap_or("config");
    let raw = if stem == "seedfall" {
        folder.to_string()
    } else if let Some(rest) = stem.strip_prefix("seedfall.") {
        format!("{folder}-{rest}")
    } else {
        stem.to_string()
    };
    sanitized_name(&raw).unwrap_or_else(|| "config".into())
}

/// A value from the config, shortened for an error message: a 50 MB bad
/// value is not worth echoing whole.
pub(super) fn shown_text(text: &str) -> String {
    const SHOWN_CHARS_MAX: usize = 80;
    let mut out: String = text.chars().take(SHOWN_CHARS_MAX).flat_map(char::escape_default).collect();
    if text.chars().count() > SHOWN_CHARS_MAX {
        out.push_str(&format!("... ({} bytes)", text.len()));
    }
    out
}

pub(super) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(super) fn show(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        other => kind(other).to_string(),
    }
}

/// The known name closest to `typo`, if it is close enough to be a typo.
pub fn did_you_mean<'a>(typo: &str, known: &[&'a str]) -> Option<&'a str> {
    let typo_lower = typo.to_ascii_lowercase();
    known
        .iter()
        .map(|k| (edit_distance(&typo_lower, &k.to_ascii_lowercase()), *k))
        // A suggestion that replaces every character of the typo is no suggestion.
        .filter(|(d, k)| *d <= 2.max(k.len() / 3) && *d < typo.chars().count())
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

