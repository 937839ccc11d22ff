//! Completion in a config being typed: the cluster's node names inside a
//! fault's `nodes` list (`faults.crash.nodes`, `faults.partition.nodes`, ...),
//! the one place a config refers to its own names. Keys and values of every
//! other field come from the JSON schema (`seedfall schema`), which editors
//! complete from themselves.
use crate::jsonpath;
use crate::protocol::*;

/// Where the cursor is in a fault's `nodes`: in a string already (its
/// content's span, which the name replaces), or between items (a quoted
/// name is inserted).
#[derive(Debug, PartialEq, Eq)]
pub enum Slot {
    InString { start: usize, end: usize },
    Between,
}

/// The slot at byte `offset` of `text`, when it is in a fault's `nodes`.
pub fn node_slot(text: &str, offset: usize) -> Option<Slot> {
    let spans = jsonpath::spans(text);
    // The innermost value around the cursor (strictly inside, so a cursor
    // just after a closing quote or bracket is outside it).
    let (path, s) = spans.iter().filter(|(_, s)| s.value.0 < offset && offset < s.value.1.max(s.value.0 + 1)).min_by_key(|(_, s)| s.value.1 - s.value.0)?;
    let is_nodes = |p: &str| p.strip_prefix("$.faults.").and_then(|rest| rest.split_once('.')).is_some_and(|(_, field)| field == "nodes");
    let (start, end) = s.value;
    if text.as_bytes().get(start) == Some(&b'"') {
        let parent = &path[..path.rfind('[')?];
        return is_nodes(parent).then(|| Slot::InString { start: start + 1, end: end.saturating_sub(1).max(start + 1) });
    }
    (text.as_bytes().get(start) == Some(&b'[') && is_nodes(path)).then_some(Slot::Between)
}

/// The node names of a config's text (`nodes[*].name`), read as far as the
/// text scans (a config being typed is rarely valid JSON at the cursor);
/// `fallback` (the last config that parsed) when none can be read.
pub fn node_names(text: &str, fallback: &[String]) -> Vec<String> {
    let spans = jsonpath::spans(text);
    let mut names = Vec::new();
    for i in 0..seedfall_sim::config::NODES_MAX {
        let Some(s) = spans.get(&format!("$.nodes[{i}].name")) else { break };
        if let Ok(name) = serde_json::from_str::<String>(&text[s.value.0..s.value.1]) {
            names.push(name);
        }
    }
    if names.is_empty() {
        return fallback.to_vec();
    }
    names
}

/// A line and UTF-16 column as a byte offset (clamped to the text).
pub fn offset(text: &str, line: u32, character: u32) -> usize {
    let mut at = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i as u32 == line {
            let mut units = 0;
            for (b, ch) in l.char_indices() {
                if units >= character || ch == '\n' {
                    return at + b;
                }
                units += ch.len_utf16() as u32;
            }
            return at + l.trim_end_matches('\n').len();
        }
        at += l.len();
    }
    text.len()
}

/// The completion items at `offset`: every node name, replacing the string
/// the cursor is in, or inserted quoted between items.
pub fn items(text: &str, offset: usize, names: &[String]) -> Vec<CompletionItem> {
    let Some(slot) = node_slot(text, offset) else { return Vec::new() };
    names
        .iter()
        .map(|name| {
            let edit = match slot {
                Slot::InString { start, end } => {
                    let (l1, c1) = jsonpath::position(text, start);
                    let (l2, c2) = jsonpath::position(text, end);
                    let range = Range { start: Position { line: l1, character: c1 }, end: Position { line: l2, character: c2 } };
                    CompletionTextEdit::Edit(TextEdit { range, new_text: name.clone() })
                }
                Slot::Between => {
                    let (l, c) = jsonpath::position(text, offset);
                    let at = Position { line: l, character: c };
                    CompletionTextEdit::Edit(TextEdit { range: Range { start: at, end: at }, new_text: format!("\"{name}\"") })
                }
            };
            CompletionItem { label: name.clone(), kind: Some(CompletionItemKind::VALUE), detail: Some("a node of this config".into()), text_edit: Some(edit), ..Default::default() }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "{\n  \"nodes\": [{\"name\": \"server\"}, {\"name\": \"client\"}],\n  \"faults\": { \"crash\": { \"rate\": 1, \"nodes\": [\"se\", ] } }\n}";

    #[test]
    fn offers_node_names_in_a_faults_nodes_list_only() {
        let names = node_names(CONFIG, &[]);
        assert_eq!(names, ["server", "client"]);
        let in_string = CONFIG.find("\"se\"").unwrap() + 2;
        assert_eq!(node_slot(CONFIG, in_string), Some(Slot::InString { start: in_string - 1, end: in_string + 1 }));
        let items = items(CONFIG, in_string, &names);
        assert_eq!(items.iter().map(|i| i.label.as_str()).collect::<Vec<_>>(), ["server", "client"]);
        let between = CONFIG.find(", ]").unwrap() + 2;
        assert_eq!(node_slot(CONFIG, between), Some(Slot::Between));
        // Node names themselves, the rate, and outside any value: nothing.
        assert_eq!(node_slot(CONFIG, CONFIG.find("\"server\"").unwrap() + 2), None);
        assert_eq!(node_slot(CONFIG, CONFIG.find("\"rate\": 1").unwrap() + 8), None);
        assert_eq!(node_slot(CONFIG, 0), None);
    }

    #[test]
    fn falls_back_to_the_last_names_while_the_text_does_not_parse() {
        assert_eq!(node_names("{ \"nodes\": [", &["a".to_string()]), ["a"]);
    }

    #[test]
    fn positions_are_utf16_columns() {
        let text = "{\n  \"é\": [\"x\"]\n}";
        assert_eq!(&text[offset(text, 1, 9)..], "x\"]\n}");
        assert_eq!(offset(text, 9, 0), text.len());
    }
}
