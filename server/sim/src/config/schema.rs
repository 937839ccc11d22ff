//! The JSON Schema of `seedfall.json`, made from the same tables the parser
//! checks fields against (`fields`): every object's `known` list is its
//! table's names, so a field cannot be read without being in the schema,
//! with its type, bounds, default and meaning. Editors read the schema for
//! completion, hover and validation (`seedfall schema`; the VS Code
//! extension contributes it). Draft-07: the draft VS Code's JSON language
//! service reads best.
//!
//! The schema checks shapes, bounds and required fields; a few rules need
//! the whole config and stay the parser's alone: node names are unique, a
//! fault's `nodes` names config nodes, a range does not end before it
//! starts, `duration` is not zero, durations are at most 1000h, seeded
//! files do not stand where a folder is needed.
use super::fields;
use serde_json::{json, Map, Value};

/// One object of a config: its fields, and the rules between them.
#[derive(Debug)]
pub struct Table {
    /// What the object is, where the schema has no field to say it (the
    /// whole config, a node of `nodes`).
    pub doc: &'static str,
    /// In the order "did you mean" and "known fields" see them.
    pub fields: &'static [Field],
    /// Exactly one of these fields is given (a node's recipe).
    pub exactly_one_of: &'static [&'static str],
    /// `(flag, needed)`: when the boolean `flag` is true, `needed` is given.
    pub true_needs: &'static [(&'static str, &'static str)],
}

impl Table {
    /// The field names: the parser's `known` list for this object.
    pub fn names(&self) -> Vec<&'static str> {
        self.fields.iter().map(|f| f.name).collect()
    }

    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// One field of a config object.
#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    pub shape: Shape,
    /// The parser refuses the object without it.
    pub required: bool,
    /// What the parser takes when the field is absent, where that is one
    /// value (checked against the parser by this module's tests).
    pub default: Fallback,
    /// What it means, in Markdown (backticks for code): one or two sentences.
    pub doc: &'static str,
}

/// The forms `fields` writes a field in.
pub(super) const fn field(name: &'static str, shape: Shape, doc: &'static str) -> Field {
    Field { name, shape, required: false, default: Fallback::None, doc }
}

impl Field {
    pub(super) const fn required(self) -> Field {
        Field { required: true, ..self }
    }
    pub(super) const fn or(self, default: Fallback) -> Field {
        Field { default, ..self }
    }
}

/// A field's default, in a form a `static` table can hold.
#[derive(Clone, Copy, Debug)]
pub enum Fallback {
    None,
    Bool(bool),
    Uint(u64),
    Number(f64),
    Text(&'static str),
    /// A list of strings (`[]` when empty).
    Strings(&'static [&'static str]),
    /// An empty object (`env`).
    EmptyMap,
}

impl Fallback {
    pub fn value(&self) -> Option<Value> {
        Some(match *self {
            Fallback::None => return None,
            Fallback::Bool(b) => json!(b),
            Fallback::Uint(n) => json!(n),
            // `0`, not `0.0`, where the number is whole: as a person writes it.
            Fallback::Number(x) if x.fract() == 0.0 && x >= 0.0 => json!(x as u64),
            Fallback::Number(x) => json!(x),
            Fallback::Text(s) => json!(s),
            Fallback::Strings(items) => json!(items),
            Fallback::EmptyMap => json!({}),
        })
    }
}

/// The JSON a field takes, as the parser reads it.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    /// `Parser::uint`: an integer within `min..=max`.
    Uint { min: u64, max: u64 },
    /// The one config version this seedfall reads.
    Version,
    /// An integer power of two within `min..=max` (`disk.sector_bytes`).
    PowerOfTwo { min: u64, max: u64 },
    /// `Parser::number`: any number within `min..=max`.
    Number { min: f64, max: f64 },
    Bool,
    /// Any string.
    Text,
    /// Letters, digits, `-`, `_`, at most `NAME_BYTES_MAX` bytes.
    Name,
    /// `Parser::rel_path`: a non-empty path, relative to the config's folder.
    HostPath,
    /// The start of an absolute path on a node's disk.
    PathPrefix,
    /// `Parser::duration_value`: `"10ms"`; `positive` refuses zero.
    Duration { positive: bool },
    /// `Parser::span`: `"100ms"` or `"50ms-500ms"`.
    Span,
    /// `Parser::bytes_value`: bytes, or `"64MiB"`, within `min..=max` bytes.
    Size { min: u64, max: u64 },
    /// One of these strings, each with what it means.
    Choice(&'static [(&'static str, &'static str)]),
    /// `Parser::strings`: a list of strings.
    Strings,
    /// A non-empty list, each item one of these strings.
    Choices(&'static [(&'static str, &'static str)]),
    /// At most `max` absolute paths on a node's disk.
    GuestPaths { max: usize },
    /// Environment variables: name to value.
    Env,
    /// At most `max` entries of absolute guest path to host path.
    Files { max: usize },
    Object(&'static Table),
    /// `min..=max` objects of one table.
    Objects { table: &'static Table, min: usize, max: usize },
}

/// One duration as `crate::vtime::parse_duration` reads it: surrounding
/// whitespace, an optional `+`, digits with at most 9 after a `.` (or a `.`
/// and those alone), a unit. Its magnitude (the 1000h bound, u64 overflow)
/// is the parser's to check. ASCII digits only: `[0-9]`, never `\d`, which
/// is Unicode in some regex engines.
const DURATION_PART: &str = r"\s*(\+?[0-9]+(\.[0-9]{0,9})?|\.[0-9]{0,9})(ns|us|ms|s|m|h)\s*";

/// What `Parser::duration_value` reads (before its bounds).
pub fn duration_pattern() -> String {
    format!("^{DURATION_PART}$")
}

/// What `Parser::span` reads: a duration, or two joined by `-`.
pub fn span_pattern() -> String {
    format!("^{DURATION_PART}(-{DURATION_PART})?$")
}

/// A size as `parse::parse_bytes` reads it, as a string.
pub const SIZE_PATTERN: &str = r"^\s*[0-9]+\s*(B|KiB|MiB|GiB)?\s*$";

/// An absolute guest path with no empty, `.` or `..` part (the parser also
/// bounds each part to 255 bytes, which a character count cannot say).
pub const GUEST_PATH_PATTERN: &str = r"^(/([^/.][^/]*|\.[^/.][^/]*|\.\.[^/]+))+$";

pub const NAME_PATTERN: &str = "^[A-Za-z0-9_-]+$";

/// The JSON Schema (draft-07) of `seedfall.json`.
pub fn json_schema() -> Value {
    let mut schema = Map::new();
    schema.insert("$schema".into(), json!("http://json-schema.org/draft-07/schema#"));
    let root = &fields::CONFIG;
    let mut object = table_schema(root, "");
    describe(&mut object, "seedfall.json", root.doc, "");
    schema.append(&mut object);
    // `"//"`, in every object: one definition that each refers to.
    let comment = "A comment: a string or a list of strings, ignored. Any object may carry one.";
    schema.insert(
        "definitions".into(),
        json!({ "comment": { "title": "//", "description": comment, "markdownDescription": comment, "type": ["string", "array"], "items": { "type": "string" } } }),
    );
    sorted(Value::Object(schema))
}

/// Keys in sorted order whatever map `serde_json` was built with, so the
/// printed schema is the same in every build of seedfall.
fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut pairs: Vec<(String, Value)> = m.into_iter().collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(pairs.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// `title`, `description` (plain) and `markdownDescription`.
fn describe(s: &mut Map<String, Value>, title: &str, doc: &str, extra: &str) {
    let markdown = if extra.is_empty() { doc.to_string() } else { format!("{doc} {extra}") };
    s.insert("title".into(), json!(title));
    s.insert("description".into(), json!(markdown.replace('`', "")));
    s.insert("markdownDescription".into(), json!(markdown));
}

fn table_schema(table: &Table, at: &str) -> Map<String, Value> {
    let mut properties = Map::new();
    properties.insert(super::parse::COMMENT_KEY.into(), json!({ "$ref": "#/definitions/comment" }));
    for f in table.fields {
        let path = if at.is_empty() { f.name.to_string() } else { format!("{at}.{}", f.name) };
        properties.insert(f.name.into(), Value::Object(field_schema(f, &path)));
    }
    let mut s = Map::new();
    s.insert("type".into(), json!("object"));
    s.insert("properties".into(), Value::Object(properties));
    s.insert("additionalProperties".into(), json!(false));
    let required: Vec<&str> = table.fields.iter().filter(|f| f.required).map(|f| f.name).collect();
    if !required.is_empty() {
        s.insert("required".into(), json!(required));
    }
    if !table.exactly_one_of.is_empty() {
        let one_of: Vec<Value> = table.exactly_one_of.iter().map(|k| json!({ "required": [k] })).collect();
        s.insert("oneOf".into(), Value::Array(one_of));
    }
    if !table.true_needs.is_empty() {
        let rules: Vec<Value> = table
            .true_needs
            .iter()
            .map(|(flag, needed)| json!({ "if": { "properties": { *flag: { "const": true } }, "required": [flag] }, "then": { "required": [needed] } }))
            .collect();
        s.insert("allOf".into(), Value::Array(rules));
    }
    s
}

fn field_schema(f: &Field, path: &str) -> Map<String, Value> {
    let (mut s, form) = shape_schema(&f.shape, path);
    let mut extra = form;
    if f.required {
        extra.push_str(if extra.is_empty() { "Required." } else { " Required." });
    }
    if let Some(d) = f.default.value() {
        extra.push_str(&format!("{}Default: `{d}`.", if extra.is_empty() { "" } else { " " }));
        s.insert("default".into(), d);
    }
    describe(&mut s, path, f.doc, &extra);
    s
}

/// The schema of a shape, and a sentence saying its form for the hover
/// (worded as the parser's error for that shape, where it has one).
fn shape_schema(shape: &Shape, path: &str) -> (Map<String, Value>, String) {
    let choices = |list: &[(&str, &str)]| list.iter().map(|(v, _)| format!("`\"{v}\"`")).collect::<Vec<_>>().join(", ");
    let (v, form) = match *shape {
        Shape::Uint { min, max } => (json!({ "type": "integer", "minimum": min, "maximum": max }), format!("An integer from {min} to {max}.")),
        Shape::Version => (json!({ "type": "integer", "const": super::CONFIG_VERSION }), String::new()),
        Shape::PowerOfTwo { min, max } => {
            let powers: Vec<u64> = (min.trailing_zeros()..=max.trailing_zeros()).map(|b| 1 << b).collect();
            (json!({ "type": "integer", "enum": powers }), format!("A power of two from {min} to {max}."))
        }
        Shape::Number { min, max } => (json!({ "type": "number", "minimum": min, "maximum": max }), format!("A number from {min} to {max}.")),
        Shape::Bool => (json!({ "type": "boolean" }), String::new()),
        Shape::Text => (json!({ "type": "string" }), String::new()),
        Shape::Name => (
            json!({ "type": "string", "pattern": NAME_PATTERN, "maxLength": super::NAME_BYTES_MAX }),
            format!("Letters, digits, `-` and `_`, at most {} bytes.", super::NAME_BYTES_MAX),
        ),
        Shape::HostPath => (json!({ "type": "string", "minLength": 1 }), "A path relative to the config's folder.".into()),
        Shape::PathPrefix => (json!({ "type": "string", "pattern": "^/" }), "The start of an absolute path on the node's disk, like `\"/data/wal\"`.".into()),
        Shape::Duration { positive } => (
            json!({ "type": "string", "pattern": duration_pattern() }),
            format!("A {}duration like `\"10ms\"` (units `ns`, `us`, `ms`, `s`, `m`, `h`), at most 1000h.", if positive { "positive " } else { "" }),
        ),
        Shape::Span => (
            json!({ "type": "string", "pattern": span_pattern() }),
            "A duration like `\"100ms\"` or a range like `\"50ms-500ms\"`, drawn uniformly; at most 1000h.".into(),
        ),
        Shape::Size { min, max } => (
            json!({ "type": ["integer", "string"], "minimum": min, "maximum": max, "pattern": SIZE_PATTERN }),
            format!("A size like `\"64MiB\"` (B, KiB, MiB or GiB) or a number of bytes, from {min} to {max} bytes."),
        ),
        Shape::Choice(list) => (choice_schema(list), format!("One of {}.", choices(list))),
        Shape::Strings => (json!({ "type": "array", "items": { "type": "string" } }), String::new()),
        Shape::Choices(list) => {
            let mut items = choice_schema(list);
            items["title"] = json!(format!("{path}[]"));
            (json!({ "type": "array", "items": items, "minItems": 1 }), format!("At least one of {}.", choices(list)))
        }
        Shape::GuestPaths { max } => (
            json!({ "type": "array", "items": { "type": "string", "pattern": GUEST_PATH_PATTERN }, "maxItems": max }),
            format!("Absolute paths on the node's disk, like `\"/data\"` (no empty, `.` or `..` parts); at most {max}."),
        ),
        Shape::Env => (
            json!({
                "type": "object",
                "additionalProperties": { "type": "string" },
                "propertyNames": { "pattern": "^[^=]+$", "not": { "enum": super::RESERVED_ENV } },
            }),
            "Names to values (strings); a name is not empty and has no `=`.".into(),
        ),
        Shape::Files { max } => (
            json!({
                "type": "object",
                "additionalProperties": { "type": "string", "minLength": 1 },
                "propertyNames": { "pattern": GUEST_PATH_PATTERN },
                "maxProperties": max,
            }),
            format!("At most {max} files."),
        ),
        Shape::Object(table) => return (table_schema(table, path), String::new()),
        Shape::Objects { table, min, max } => {
            let item_path = format!("{path}[]");
            let mut item = table_schema(table, &item_path);
            describe(&mut item, &item_path, table.doc, "");
            (json!({ "type": "array", "items": item, "minItems": min, "maxItems": max }), format!("From {min} to {max} entries."))
        }
    };
    (v.as_object().expect("a schema is an object").clone(), form)
}

fn choice_schema(list: &[(&str, &str)]) -> Value {
    let values: Vec<&str> = list.iter().map(|(v, _)| *v).collect();
    let docs: Vec<String> = list.iter().map(|(_, d)| d.replace('`', "")).collect();
    let markdown: Vec<&str> = list.iter().map(|(_, d)| *d).collect();
    json!({ "type": "string", "enum": values, "enumDescriptions": docs, "markdownEnumDescriptions": markdown })
}

/// Every object of a config document that a table describes: the table,
/// the object's JSON path as errors name it (`$.nodes[1].go`) and its JSON
/// pointer (`/nodes/1/go`). Objects of the wrong type are left out.
pub fn objects(config: &Value) -> Vec<(&'static Table, String, String)> {
    let mut out = Vec::new();
    walk(&fields::CONFIG, config, "$", "", &mut out);
    out
}

/// Every table, each once: the root's and those its fields lead to.
pub fn tables() -> Vec<&'static Table> {
    let mut out: Vec<&'static Table> = vec![&fields::CONFIG];
    let mut i = 0;
    while i < out.len() {
        for f in out[i].fields {
            if let Shape::Object(t) | Shape::Objects { table: t, .. } = f.shape {
                if !out.iter().any(|seen| std::ptr::eq(*seen, t)) {
                    out.push(t);
                }
            }
        }
        i += 1;
    }
    out
}

fn walk(table: &'static Table, v: &Value, path: &str, pointer: &str, out: &mut Vec<(&'static Table, String, String)>) {
    let Some(map) = v.as_object() else { return };
    out.push((table, path.to_string(), pointer.to_string()));
    for f in table.fields {
        let Some(inner) = map.get(f.name) else { continue };
        let (p, q) = (format!("{path}.{}", f.name), format!("{pointer}/{}", f.name));
        match f.shape {
            Shape::Object(t) => walk(t, inner, &p, &q, out),
            Shape::Objects { table: t, .. } => {
                for (i, item) in inner.as_array().into_iter().flatten().enumerate() {
                    walk(t, item, &format!("{p}[{i}]"), &format!("{q}/{i}"), out);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::path::Path;

    /// A config holding every object a table describes, with nothing set
    /// that has a default.
    const EVERY_OBJECT: &str = r#"{"duration": "2s",
        "nodes": [{"name": "a", "go": {"dir": "."}, "disk": {}}, {"name": "b", "cargo": {"dir": "."}}, {"name": "c", "wasm": "c.wasm"}],
        "limits": {}, "determinism": {}, "disk": {}, "net": {},
        "faults": {"crash": {"rate": 1}, "fsync_eio": {"probability": 0.1}, "pause": {"rate": 1, "duration": "1ms"},
                   "clock_skew": {"rate": 1, "duration": "1ms"}, "clock_jump": {"rate": 1, "max": "1s"},
                   "partition": {"rate": 1, "duration": "1ms"}, "corrupt_read": {"probability": 0.1},
                   "latent_sector_error": {"probability": 0.1}, "misdirected_write": {"probability": 0.1},
                   "lost_write": {"probability": 0.1}, "write_error": {"probability": 0.1},
                   "disk_full": {"rate": 1, "duration": "1ms"}}}"#;

    fn parsed(v: &Value) -> String {
        let c = Config::parse(Path::new("/p/demo/seedfall.json"), &v.to_string()).unwrap_or_else(|e| panic!("{e}\n{v}"));
        format!("{c:?}")
    }

    /// Every table is reached from the root, and the base config has each.
    fn every_table_instance() -> (Value, Vec<(&'static Table, String, String)>) {
        let base: Value = serde_json::from_str(EVERY_OBJECT).unwrap();
        let objects = objects(&base);
        for t in tables() {
            assert!(objects.iter().any(|(o, ..)| std::ptr::eq(*o, t)), "no object of the table {:?}", t.names());
        }
        (base, objects)
    }

    #[test]
    fn a_default_in_the_schema_is_what_the_parser_takes_when_the_field_is_absent() {
        let (base, objects) = every_table_instance();
        let without = parsed(&base);
        let mut checked = 0;
        for (table, path, pointer) in &objects {
            for f in table.fields {
                let Some(d) = f.default.value() else { continue };
                let mut v = base.clone();
                v.pointer_mut(pointer).unwrap().as_object_mut().unwrap().insert(f.name.into(), d.clone());
                assert_eq!(parsed(&v), without, "{path}.{}: the default {d} is not what the parser takes", f.name);
                checked += 1;
            }
        }
        assert!(checked > 30, "checked {checked} defaults");
    }

    #[test]
    fn choices_are_what_the_code_accepts() {
        let models: Vec<&str> = crate::disk::FsModel::ALL.iter().map(|m| m.name()).collect();
        let Shape::Choice(listed) = fields::DISK.field("model").unwrap().shape else { panic!("disk.model is a choice") };
        assert_eq!(listed.iter().map(|c| c.0).collect::<Vec<_>>(), models);
        let Shape::Choices(errors) = fields::WRITE_ERROR.field("errors").unwrap().shape else { panic!("errors are choices") };
        assert!(errors.iter().all(|(e, _)| crate::errno::WriteErrno::parse(e).is_some()));
        assert_eq!(errors.len(), 2);
        let targets: Vec<&str> = crate::config::RustTarget::ALL.iter().map(|t| t.name()).collect();
        let Shape::Choice(listed) = fields::CARGO.field("target").unwrap().shape else { panic!("cargo.target is a choice") };
        assert_eq!(listed.iter().map(|c| c.0).collect::<Vec<_>>(), targets);
    }

    #[test]
    fn the_env_doc_names_what_seedfall_sets() {
        let doc = fields::NODE.field("env").unwrap().doc;
        assert!(doc.contains(&format!("`GOGC={}`", crate::config::GO_GOGC_DEFAULT)), "{doc}");
        for name in crate::config::RESERVED_ENV {
            assert!(doc.contains(name), "{doc}");
        }
    }

    #[test]
    fn the_schema_says_bounds_defaults_and_what_is_required() {
        let s = json_schema();
        assert_eq!(s["$schema"], "http://json-schema.org/draft-07/schema#");
        assert_eq!(s["required"], json!(["duration", "nodes"]));
        let memory = &s["properties"]["limits"]["properties"]["memory_mb"];
        assert_eq!((memory["minimum"].as_u64(), memory["maximum"].as_u64(), memory["default"].as_u64()), (Some(1), Some(crate::config::MEMORY_MB_MAX), Some(512)));
        assert_eq!(memory["title"], "limits.memory_mb");
        let node = &s["properties"]["nodes"]["items"];
        assert_eq!(node["oneOf"], json!([{ "required": ["wasm"] }, { "required": ["go"] }, { "required": ["cargo"] }]));
        assert_eq!(node["properties"]["go"]["properties"]["dir"]["title"], "nodes[].go.dir");
        assert_eq!(s["properties"]["disk"]["properties"]["sector_bytes"]["enum"][0], 64);
        assert_eq!(s["properties"]["faults"]["allOf"][0]["then"]["required"], json!(["crash"]));
        assert_eq!(s["properties"]["faults"]["properties"]["//"]["$ref"], "#/definitions/comment");
        assert_eq!(s["definitions"]["comment"]["type"], json!(["string", "array"]));
        assert!(s["properties"]["net"]["additionalProperties"] == json!(false));
    }
}
