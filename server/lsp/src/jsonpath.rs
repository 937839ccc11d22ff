//! Where a JSON path (`$.nodes[1].replicas`) sits in a config's text, so a
//! config error is underlined at the offending key or value.
//!
//! A small scanner records, for every path in the document, the byte span
//! of its key (for object members) and of its value. It never fails: on
//! malformed text it returns what it saw so far.
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spans {
    pub key: Option<(usize, usize)>,
    pub value: (usize, usize),
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    out: BTreeMap<String, Spans>,
    depth: usize,
}

/// Bound on nesting, so a hostile file cannot exhaust the stack.
const DEPTH_MAX: usize = 64;

impl Scanner<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn string(&mut self) -> Option<(usize, usize, String)> {
        let start = self.i;
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        self.i += 1;
        while self.i < self.b.len() && self.b[self.i] != b'"' {
            if self.b[self.i] == b'\\' {
                self.i += 1;
            }
            self.i += 1;
        }
        self.i = (self.i + 1).min(self.b.len());
        let raw = std::str::from_utf8(&self.b[start..self.i]).ok()?;
        let text = serde_json::from_str::<String>(raw).unwrap_or_default();
        Some((start, self.i, text))
    }

    fn value(&mut self, path: &str, key: Option<(usize, usize)>) -> Option<()> {
        self.ws();
        let start = self.i;
        self.depth += 1;
        if self.depth > DEPTH_MAX {
            return None;
        }
        match self.b.get(self.i)? {
            b'{' => {
                self.i += 1;
                loop {
                    self.ws();
                    if self.b.get(self.i) == Some(&b'}') {
                        self.i += 1;
                        break;
                    }
                    let (ks, ke, name) = self.string()?;
                    self.ws();
                    if self.b.get(self.i) != Some(&b':') {
                        return None;
                    }
                    self.i += 1;
                    self.value(&format!("{path}.{name}"), Some((ks, ke)))?;
                    self.ws();
                    match self.b.get(self.i)? {
                        b',' => self.i += 1,
                        b'}' => {
                            self.i += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut n = 0;
                loop {
                    self.ws();
                    if self.b.get(self.i) == Some(&b']') {
                        self.i += 1;
                        break;
                    }
                    self.value(&format!("{path}[{n}]"), None)?;
                    n += 1;
                    self.ws();
                    match self.b.get(self.i)? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => {
                self.string()?;
            }
            _ => {
                while self.i < self.b.len() && !matches!(self.b[self.i], b',' | b'}' | b']') && !self.b[self.i].is_ascii_whitespace() {
                    self.i += 1;
                }
            }
        }
        self.depth -= 1;
        self.out.insert(path.to_string(), Spans { key, value: (start, self.i) });
        Some(())
    }
}

pub fn spans(text: &str) -> BTreeMap<String, Spans> {
    let mut s = Scanner { b: text.as_bytes(), i: 0, out: BTreeMap::new(), depth: 0 };
    let _ = s.value("$", None);
    s.out
}

/// The span to underline for an error at `path`: the key of a member (an
/// unknown field is its key), else the value; for a path that does not exist,
/// the nearest enclosing value.
pub fn locate(text: &str, path: &str, prefer_key: bool) -> (usize, usize) {
    let all = spans(text);
    let mut p = path.to_string();
    loop {
        if let Some(s) = all.get(&p) {
            return if prefer_key { s.key.unwrap_or(s.value) } else { s.value };
        }
        match p.rfind(['.', '[']) {
            Some(i) if i > 0 => p.truncate(i),
            _ => return (0, text.len().min(1)),
        }
    }
}

/// A byte offset as an LSP position (UTF-16 columns).
pub fn position(text: &str, offset: usize) -> (u32, u32) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32;
    let col = before.rsplit('\n').next().unwrap_or("").encode_utf16().count() as u32;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_keys_and_values() {
        let text = "{\n  \"duration\": \"2s\",\n  \"nodes\": [\n    {\"name\": \"a\", \"replica\": 2}\n  ]\n}";
        let (a, b) = locate(text, "$.nodes[0].replica", true);
        assert_eq!(&text[a..b], "\"replica\"");
        assert_eq!(position(text, a), (3, 18));
        let (a, b) = locate(text, "$.duration", false);
        assert_eq!(&text[a..b], "\"2s\"");
        let (a, b) = locate(text, "$.nodes[0].missing", true);
        assert!(text[a..b].starts_with("{\"name\""), "falls back to the enclosing object");
        assert_eq!(locate("{", "$.x", true), (0, 1));
    }
}
