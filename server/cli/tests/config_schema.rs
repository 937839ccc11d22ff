//! The JSON Schema of seedfall.json against the parser it is made from.
//! The committed extension/schema/seedfall.schema.json is what `seedfall
//! schema` prints; every config of the repository the parser accepts, the
//! schema accepts; the schema's patterns read durations, ranges and sizes
//! as the parser does; and for every field of every table (from a real
//! example, grown until it holds every object), a value of a JSON type the
//! field does not take, a value past its bounds, a missing required field
//! and an unknown field are refused by both, the parser at that field, and
//! values at its bounds are accepted by both.
mod common;
use common::{repo, scratch, seedfall};
use seedfall_sim::config::schema::{self, Shape, Table};
use seedfall_sim::Config;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const COMMITTED: &str = "extension/schema/seedfall.schema.json";

fn schema() -> Value {
    seedfall_sim::config::json_schema()
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft7::new(&schema()).expect("the schema compiles")
}

fn schema_errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

#[test]
fn the_committed_schema_is_what_seedfall_schema_prints() {
    let out = seedfall(&["schema"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let printed: Value = serde_json::from_str(&out.stdout).expect("seedfall schema prints JSON");
    assert_eq!(printed, schema());
    assert!(jsonschema::draft7::meta::is_valid(&printed), "not a valid draft-07 schema: {:?}", jsonschema::draft7::meta::validate(&printed).err().map(|e| e.to_string()));
    let committed = std::fs::read_to_string(repo().join(COMMITTED)).unwrap_or_default();
    if committed != out.stdout {
        let line = committed.lines().zip(out.stdout.lines()).position(|(a, b)| a != b).unwrap_or(committed.lines().count().min(out.stdout.lines().count()));
        panic!("{COMMITTED} is not what `seedfall schema` prints now (first difference at line {}): run scripts/gen-schema and commit it", line + 1);
    }
    // -o writes the same text, and says where.
    let file = scratch("schema-out").join("seedfall.schema.json");
    let wrote = seedfall(&["schema", "-o", file.to_str().unwrap()]);
    assert_eq!(wrote.code, 0, "{}", wrote.stderr);
    assert!(wrote.stdout.starts_with("wrote "), "{}", wrote.stdout);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), out.stdout);
    let help = seedfall(&["schema", "--help"]);
    assert!(help.stdout.contains("JSON Schema") && help.stdout.contains("-o, --out <FILE>"), "{}", help.stdout);
}

fn configs(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !matches!(name.as_str(), "target" | "node_modules" | ".seedfall") {
                configs(&p, out);
            }
        } else if name.starts_with("seedfall") && name.ends_with(".json") {
            out.push(p);
        }
    }
}

#[test]
fn every_config_the_parser_accepts_the_schema_accepts() {
    let v = validator();
    let mut files = Vec::new();
    for dir in ["examples", "bugzoo", "tests"] {
        configs(&repo().join(dir), &mut files);
    }
    files.sort();
    let (mut checked, mut refused, mut problems) = (0, Vec::new(), Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(repo()).unwrap().display().to_string();
        if let Err(e) = Config::parse(f, &text) {
            refused.push(format!("{rel}: {e}"));
            continue;
        }
        checked += 1;
        let errors = schema_errors(&v, &serde_json::from_str(&text).unwrap());
        if !errors.is_empty() {
            problems.push(format!("{rel}: {}", errors.join("; ")));
        }
    }
    println!("validated {checked} configs against the schema ({} the parser refuses: {refused:?})", refused.len());
    assert!(problems.is_empty(), "configs the parser accepts and the schema refuses:\n{}", problems.join("\n"));
    assert!(checked > 20, "only {checked} configs found under examples/, bugzoo/ and tests/");
}

/// Whether the parser and the schema accept `text` as the value at
/// `pointer` in a small config (where the field's bounds cannot refuse it).
fn both_accept(field: &str, text: &str) -> (bool, bool) {
    let mut doc = json!({ "duration": "1s", "nodes": [{ "name": "a", "wasm": "a.wasm" }], "faults": { "crash": { "rate": 1 } } });
    let (section, key) = field.split_once('.').unwrap();
    let object = if section == "crash" { &mut doc["faults"]["crash"] } else { &mut doc[section] };
    object[key] = json!(text);
    let parser = Config::parse(&repo().join("examples/kvlog/seedfall.json"), &doc.to_string()).is_ok();
    (parser, validator().is_valid(&doc))
}

#[test]
fn the_patterns_read_durations_ranges_and_sizes_as_the_parser_does() {
    // disk.commit_interval takes any duration to 1000h, zero included.
    let durations = [
        "10ms", "1.5s", "2m", "1h", "10ns", "10us", " 10ms ", "\t3s\n", "+5ms", ".5s", "5.s", ".ms", "0s", "1.123456789s", "1.1234567890s", "10", "ms", "10 ms", "10MS",
        "10µs", "1e3ms", "-5ms", "5ms-", "1_000ms", "1.2.3s", "10sec", "", " ", "+.5s", "0x10s", "٣s", "10m s",
    ];
    // faults.crash.restart_after: ranges that do not end before they start.
    let spans = ["5ms-50ms", "5ms - 50ms", " 5ms-50ms ", "50ms", "1s-1s", ".5s-1s", "5ms-", "-5ms", "5ms--50ms", "5ms-50ms-60ms", "5-50ms", "5ms-50", "5ms~50ms", "5ms 50ms"];
    // disk.capacity, as strings, within 4096 bytes to 2 GiB.
    let sizes = ["4096", "4KiB", "4 KiB", " 4KiB ", "8192B", "1GiB", "2GiB", "4kib", "4KB", "4 K", "+4KiB", "4.5KiB", "KiB", "", "4KiB4", "0x1000", "4 KiB B", "٤KiB"];
    let mut differ = Vec::new();
    for (field, list) in [("disk.commit_interval", &durations[..]), ("crash.restart_after", &spans[..]), ("disk.capacity", &sizes[..])] {
        let mut accepted = 0;
        for text in list {
            let (parser, schema) = both_accept(field, text);
            if parser != schema {
                differ.push(format!("{field} = {text:?}: the parser {} it, the schema {} it", if parser { "accepts" } else { "refuses" }, if schema { "accepts" } else { "refuses" }));
            }
            accepted += usize::from(parser);
        }
        assert!(accepted >= 5 && accepted < list.len(), "{field}: {accepted} of {} accepted", list.len());
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // parse_duration itself, beside the schema's pattern, on the same texts.
    let pattern = jsonschema::draft7::new(&json!({ "type": "string", "pattern": schema::duration_pattern() })).unwrap();
    for text in durations {
        assert_eq!(seedfall_sim::vtime::parse_duration(text).is_some(), pattern.is_valid(&json!(text)), "{text:?}");
    }
    let pattern = jsonschema::draft7::new(&json!({ "type": "string", "pattern": schema::SIZE_PATTERN })).unwrap();
    for text in sizes {
        assert_eq!(seedfall_sim::config::parse_bytes(text).is_some(), pattern.is_valid(&json!(text)), "{text:?}");
    }
}

/// A value of `shape` that both the parser and the schema accept.
fn sample(shape: &Shape) -> Value {
    match *shape {
        Shape::Uint { min, .. } | Shape::PowerOfTwo { min, .. } | Shape::Size { min, .. } => json!(min),
        Shape::Version => json!(1),
        Shape::Number { min, max } => json!((min + max) / 2.0),
        Shape::Bool => json!(false),
        Shape::Text | Shape::Name | Shape::HostPath => json!("sample"),
        Shape::PathPrefix => json!("/data"),
        Shape::Duration { .. } => json!("1ms"),
        Shape::Span => json!("1ms-2ms"),
        Shape::Choice(list) => json!(list[0].0),
        Shape::Choices(list) => json!([list[0].0]),
        // Empty: a node renamed by a case below leaves no fault naming it.
        Shape::Strings => json!([]),
        Shape::GuestPaths { .. } => json!(["/data"]),
        Shape::Env => json!({ "SAMPLE": "1" }),
        Shape::Files { .. } => json!({ "/etc/sample.conf": "sample.conf" }),
        Shape::Object(_) => json!({}),
        Shape::Objects { .. } => json!([]),
    }
}

/// The JSON kinds a shape takes (`null`, `boolean`, `integer`, `number`
/// for a fraction, `string`, `array`, `object`).
fn kinds(shape: &Shape) -> &'static [&'static str] {
    match shape {
        Shape::Uint { .. } | Shape::Version | Shape::PowerOfTwo { .. } => &["integer"],
        Shape::Number { .. } => &["integer", "number"],
        Shape::Bool => &["boolean"],
        Shape::Text | Shape::Name | Shape::HostPath | Shape::PathPrefix | Shape::Duration { .. } | Shape::Span | Shape::Choice(_) => &["string"],
        Shape::Size { .. } => &["integer", "string"],
        Shape::Strings | Shape::Choices(_) | Shape::GuestPaths { .. } | Shape::Objects { .. } => &["array"],
        Shape::Env | Shape::Files { .. } | Shape::Object(_) => &["object"],
    }
}

/// Values of a shape's JSON kind at its bounds: `(inside, outside)`, the
/// outside ones refused by the parser at the field.
fn edges(shape: &Shape) -> (Vec<Value>, Vec<Value>) {
    let long = |n: usize| json!("a".repeat(n));
    match *shape {
        Shape::Uint { min, max } => (vec![json!(min), json!(max)], if min > 0 { vec![json!(min - 1), json!(max + 1)] } else { vec![json!(-1), json!(max + 1)] }),
        Shape::Version => (vec![json!(1)], vec![json!(0), json!(2)]),
        Shape::PowerOfTwo { min, max } => (vec![json!(min), json!(max)], vec![json!(min / 2), json!(min + min / 2), json!(max * 2)]),
        Shape::Number { min, max } => (vec![json!(min), json!(max)], vec![json!(min - 0.5), json!(max + 0.5)]),
        Shape::Name => (vec![long(seedfall_sim::config::NAME_BYTES_MAX), json!("A-b_9")], vec![long(seedfall_sim::config::NAME_BYTES_MAX + 1), json!("a.b"), json!("")]),
        Shape::HostPath => (vec![json!("x")], vec![json!("")]),
        Shape::PathPrefix => (vec![json!("/")], vec![json!("data")]),
        Shape::Duration { .. } => (vec![json!("1h"), json!("0.5s")], vec![json!("1"), json!("1 s")]),
        Shape::Span => (vec![json!("1ms-1h"), json!("7s")], vec![json!("1ms-"), json!("1ms-2")]),
        Shape::Size { min, max } => (vec![json!(min), json!(max), json!(format!("{min}B"))], vec![json!(min - 1), json!(max + 1), json!("4 KB")]),
        Shape::Choice(list) => (list.iter().map(|c| json!(c.0)).collect(), vec![json!("nope"), json!(list[0].0.to_uppercase())]),
        Shape::Choices(list) => (vec![json!(list.iter().map(|c| c.0).collect::<Vec<_>>())], vec![json!([]), json!(["nope"])]),
        Shape::GuestPaths { max } => (vec![json!(["/a/b", "/c"])], vec![json!(["a"]), json!(["/a/../b"]), json!(["/"]), json!(["/a/"]), json!(vec!["/x"; max + 1])]),
        Shape::Env => (vec![json!({ "A": "1", "GOGC": "100" })], vec![json!({ "A=B": "1" }), json!({ "": "1" }), json!({ "SEEDFALL_NODE": "x" })]),
        Shape::Files { max } => {
            let many: serde_json::Map<String, Value> = (0..=max).map(|i| (format!("/f{i}"), json!("f"))).collect();
            (vec![json!({ "/etc/a": "a" })], vec![json!({ "etc/a": "a" }), json!({ "/etc/a": "" }), json!({ "/a/./b": "x" }), Value::Object(many)])
        }
        Shape::Objects { max, .. } => {
            let many: Vec<Value> = (0..=max).map(|i| json!({ "name": format!("n{i}"), "wasm": "n.wasm" })).collect();
            (Vec::new(), vec![json!([]), Value::Array(many)])
        }
        Shape::Bool | Shape::Text | Shape::Strings | Shape::Object(_) => (Vec::new(), Vec::new()),
    }
}

fn shown(v: &Value) -> String {
    let text = v.to_string();
    if text.len() > 70 { format!("{}... ({} bytes)", &text[..60], text.len()) } else { text }
}

const ONE_OF_EACH: [(&str, fn() -> Value); 7] =
    [("null", || json!(null)), ("boolean", || json!(true)), ("integer", || json!(7)), ("number", || json!(1.5)), ("string", || json!("x")), ("array", || json!([])), ("object", || json!({}))];

/// Sets every absent field of every object to a sample value, but for a
/// node's second recipe.
fn fill(table: &Table, v: &mut Value) {
    let map = v.as_object_mut().unwrap();
    for f in table.fields {
        let other_recipe = table.exactly_one_of.contains(&f.name) && table.exactly_one_of.iter().any(|k| map.contains_key(*k));
        if !map.contains_key(f.name) && !other_recipe {
            map.insert(f.name.into(), sample(&f.shape));
        }
        match (&f.shape, map.get_mut(f.name)) {
            (Shape::Object(t), Some(inner)) => fill(t, inner),
            (Shape::Objects { table: t, .. }, Some(Value::Array(items))) => items.iter_mut().for_each(|item| fill(t, item)),
            _ => {}
        }
    }
}

/// examples/kvlog/seedfall.json, with a node of each recipe, every section
/// and fault family, and every field set.
fn full_config() -> (PathBuf, Value) {
    let path = repo().join("examples/kvlog/seedfall.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let nodes = v["nodes"].as_array_mut().unwrap();
    nodes.push(json!({ "name": "store", "wasm": "store.wasm", "workload": false }));
    nodes.push(json!({ "name": "tool", "cargo": { "dir": "tool" } }));
    fill(&seedfall_sim::config::fields::CONFIG, &mut v);
    (path, v)
}

struct Judge {
    path: PathBuf,
    schema: jsonschema::Validator,
    cases: usize,
    problems: Vec<String>,
}

impl Judge {
    /// Both refuse `doc`; the parser at `at` (or inside it).
    fn refused(&mut self, what: &str, doc: &Value, at: &str) {
        self.cases += 1;
        match Config::parse(&self.path, &doc.to_string()) {
            Ok(_) => self.problems.push(format!("{what}: the parser accepts it")),
            Err(e) if !(e.json_path == at || e.json_path.starts_with(&format!("{at}.")) || e.json_path.starts_with(&format!("{at}["))) => {
                self.problems.push(format!("{what}: the parser refuses it at {} ({}), not at {at}", e.json_path, e.message))
            }
            Err(_) => {}
        }
        if self.schema.is_valid(doc) {
            self.problems.push(format!("{what}: the schema accepts it"));
        }
    }

    fn accepted(&mut self, what: &str, doc: &Value) {
        self.cases += 1;
        if let Err(e) = Config::parse(&self.path, &doc.to_string()) {
            self.problems.push(format!("{what}: the parser refuses it: {e}"));
        }
        let errors = schema_errors(&self.schema, doc);
        if !errors.is_empty() {
            self.problems.push(format!("{what}: the schema refuses it: {}", errors.join("; ")));
        }
    }
}

#[test]
fn a_wrong_type_a_value_out_of_bounds_a_missing_field_and_an_unknown_field_are_refused_by_both() {
    let (path, base) = full_config();
    let mut judge = Judge { path, schema: validator(), cases: 0, problems: Vec::new() };
    judge.accepted("the example with every field set", &base);
    // Every case below changes this one: it must hold first.
    assert!(judge.problems.is_empty(), "{}", judge.problems.join("\n"));
    let objects = schema::objects(&base);
    for t in schema::tables() {
        assert!(objects.iter().any(|(o, ..)| std::ptr::eq(*o, t)), "the full config has no object of the table {:?}", t.names());
    }
    let mut fields = 0;
    for (table, at, pointer) in &objects {
        let with = |change: &dyn Fn(&mut serde_json::Map<String, Value>)| {
            let mut doc = base.clone();
            change(doc.pointer_mut(pointer).unwrap().as_object_mut().unwrap());
            doc
        };
        for f in table.fields {
            // A node's recipe is changed only where it is the recipe.
            if table.exactly_one_of.contains(&f.name) && !base.pointer(pointer).unwrap().get(f.name).is_some() {
                continue;
            }
            fields += 1;
            let field_at = format!("{at}.{}", f.name);
            for (kind, value) in ONE_OF_EACH {
                if !kinds(&f.shape).contains(&kind) {
                    judge.refused(&format!("{field_at} = {kind}"), &with(&|m| drop(m.insert(f.name.into(), value()))), &field_at);
                }
            }
            // Lists hold strings, maps map to strings.
            let inner = match f.shape {
                Shape::Strings | Shape::Choices(_) | Shape::GuestPaths { .. } => Some(json!([7])),
                Shape::Env | Shape::Files { .. } => Some(json!({ "/k": 7 })),
                _ => None,
            };
            let (inside, outside) = edges(&f.shape);
            for v in &outside {
                judge.refused(&format!("{field_at} = {}", shown(v)), &with(&|m| drop(m.insert(f.name.into(), v.clone()))), &field_at);
            }
            for v in &inside {
                judge.accepted(&format!("{field_at} = {}", shown(v)), &with(&|m| drop(m.insert(f.name.into(), v.clone()))));
            }
            if let Some(inner) = inner {
                judge.refused(&format!("{field_at} holding a number"), &with(&|m| drop(m.insert(f.name.into(), inner.clone()))), &field_at);
            }
            // What a flag that is set needs is not optional (`crash`, with `torn_writes`).
            let needed = table.true_needs.iter().any(|(flag, needed)| *needed == f.name && base.pointer(pointer).unwrap()[*flag] == json!(true));
            if f.required {
                judge.refused(&format!("{at} without {}", f.name), &with(&|m| drop(m.remove(f.name))), at);
            } else if !table.exactly_one_of.contains(&f.name) && !needed {
                judge.accepted(&format!("{at} without {}", f.name), &with(&|m| drop(m.remove(f.name))));
            }
        }
        judge.refused(&format!("{at} with an unknown field"), &with(&|m| drop(m.insert("unknown_field".into(), json!(1)))), &format!("{at}.unknown_field"));
        judge.refused(&format!("{at} with a numeric comment"), &with(&|m| drop(m.insert("//".into(), json!(7)))), &format!("{at}.//"));
        judge.accepted(&format!("{at} with a comment"), &with(&|m| drop(m.insert("//".into(), json!(["a comment", "in two lines"])))));
        if !table.exactly_one_of.is_empty() {
            judge.refused(&format!("{at} without a recipe"), &with(&|m| table.exactly_one_of.iter().for_each(|k| drop(m.remove(*k)))), at);
            judge.refused(&format!("{at} with two recipes"), &with(&|m| table.exactly_one_of.iter().for_each(|k| drop(m.insert((*k).into(), json!("two.wasm"))))), at);
        }
        for (flag, needed) in table.true_needs {
            let at_flag = format!("{at}.{flag}");
            judge.refused(&format!("{at_flag} without {needed}"), &with(&|m| {
                m.insert((*flag).into(), json!(true));
                m.remove(*needed);
            }), &at_flag);
        }
    }
    println!("{} cases on {fields} fields of {} objects", judge.cases, objects.len());
    assert!(fields > 80, "only {fields} fields");
    assert!(judge.problems.is_empty(), "the parser and the schema disagree:\n{}", judge.problems.join("\n"));
}
