//! The property catalog: every property a node's program contains, found
//! before any run, so that a must-hit property that never ran can fail a
//! sweep.
//!
//! Rust guests carry it in the `seedfall_catalog` custom section (written by
//! the SDK's macros at compile time). Go cannot emit custom sections, so for
//! Go recipes the catalog comes from the sources: the packages the node's
//! main package depends on (from `go list -deps`), scanned for
//! `sim.<Kind>(..., "literal", ...)` calls of our SDK and `assert.<Kind>(...)`
//! calls of the Antithesis Go SDK. A non-literal message is a warning.
//! Before a first build, an editor lists what the sources say: a Go node's
//! own package (`from_go_sources`), a Rust node's crate (`from_rust_sources`).
use crate::cache::{write_atomic, Cache};
use seedfall_sim::props::{CatalogEntry, PropertyKind};
use std::path::{Path, PathBuf};

pub const SECTION: &str = "seedfall_catalog";
pub const SDK_GO_PACKAGE: &str = "seedfall.dev/sdk/sim";
pub const ANTITHESIS_GO_PACKAGE: &str = "github.com/antithesishq/antithesis-sdk-go/assert";
/// Bound on catalog entries per node.
pub const ENTRIES_MAX: usize = 100_000;

#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Catalog {
    pub entries: Vec<CatalogEntry>,
    /// `file:line: what is wrong` for calls the catalog could not include.
    pub warnings: Vec<String>,
}

/// Records from the `seedfall_catalog` custom section(s) of a module.
pub fn from_wasm(wasm: &[u8], node: &str) -> Result<Catalog, String> {
    let mut catalog = Catalog::default();
    for payload in custom_sections(wasm, SECTION)? {
        for record in payload.split(|&b| b == 0x1e) {
            if record.iter().all(|b| b.is_ascii_whitespace() || *b == 0) {
                continue;
            }
            let text = String::from_utf8_lossy(record);
            let fields: Vec<&str> = text.trim_start_matches('\0').split('\x1f').collect();
            let entry = match fields.as_slice() {
                [kind, file, line, message] => PropertyKind::from_name(kind).map(|kind| CatalogEntry {
                    kind,
                    message: message.to_string(),
                    location: format!("{file}:{line}"),
                    node: node.to_string(),
                }),
                _ => None,
            };
            match entry {
                Some(e) => catalog.entries.push(e),
                None => catalog.warnings.push(format!("{node}: unreadable {SECTION} record {text:?}")),
            }
            if catalog.entries.len() > ENTRIES_MAX {
                return Err(format!("{node}: more than {ENTRIES_MAX} catalog entries"));
            }
        }
    }
    catalog.entries.sort();
    catalog.entries.dedup();
    Ok(catalog)
}

fn leb_u32(bytes: &[u8], at: &mut usize) -> Result<u32, String> {
    let mut result = 0u32;
    for shift in (0..35).step_by(7) {
        let b = *bytes.get(*at).ok_or("truncated module")?;
        *at += 1;
        result |= u32::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(result);
        }
    }
    Err("bad LEB128 in module".into())
}

/// The payloads of every custom section named `name`.
pub fn custom_sections<'a>(wasm: &'a [u8], name: &str) -> Result<Vec<&'a [u8]>, String> {
    if wasm.len() < 8 || &wasm[0..4] != b"\0asm" {
        return Err("not a wasm module".into());
    }
    let mut at = 8;
    let mut out = Vec::new();
    while at < wasm.len() {
        let id = wasm[at];
        at += 1;
        let size = leb_u32(wasm, &mut at)? as usize;
        let end = at.checked_add(size).filter(|&e| e <= wasm.len()).ok_or("truncated section")?;
        if id == 0 {
            let mut p = at;
            let name_len = leb_u32(wasm, &mut p)? as usize;
            let name_end = p.checked_add(name_len).filter(|&e| e <= end).ok_or("bad section name")?;
            if &wasm[p..name_end] == name.as_bytes() {
                out.push(&wasm[name_end..end]);
            }
        }
        at = end;
    }
    Ok(out)
}

/// Bound on a cached catalog read back (one entry per property call site
/// of a program: a few KiB for most, never near this).
pub const CATALOG_BYTES_MAX: u64 = 64 << 20;

/// The catalog of a Go node: cached by the build fingerprint.
/// `go_args` gives the build's overlay arguments (only called when the
/// catalog is not cached): `go list` must see the program as `go build` does.
pub fn from_go(node: &str, dir: &Path, package: &str, fingerprint: &str, cache: &Cache, go_args: &mut dyn FnMut() -> Result<Vec<String>, String>) -> Result<Catalog, String> {
    let cached = cache.path("catalog", &format!("go2-{fingerprint}.json"));
    if let Ok(text) =
        seedfall_sim::files::read_text(&cached, CATALOG_BYTES_MAX, "the cached catalog")
    {
        if let Ok(mut c) = serde_json::from_str::<Catalog>(&text) {
            for e in &mut c.entries {
                e.node = node.to_string();
            }
            return Ok(c);
        }
    }
    let mut catalog = Catalog::default();
    let args = go_args()?;
    let module_root = crate::recipe::find_up(dir, "go.mod").unwrap_or_else(|| dir.to_path_buf());
    let patched = module_root.join(crate::go_overlay::COPIES);
    for file in go_files(dir, package, &args, &patched)? {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        // Relative to the node's folder, as the node's recipe resolves it:
        // the cached catalog then holds no path of this machine.
        scan_go(&text, &crate::paths::relative(dir, &file).display().to_string(), node, &mut catalog);
    }
    catalog.entries.sort();
    catalog.entries.dedup();
    let json = serde_json::to_vec(&catalog).expect("catalog serialises");
    write_atomic(&cached, &json).map_err(|e| format!("cannot write {}: {e}", cached.display()))?;
    Ok(catalog)
}

/// Bounds on what `from_go_sources` reads: the daemon calls it whenever a
/// config or its sources change, so it must stay cheap on any folder.
pub const SOURCE_FILES_MAX: usize = 256;
pub const SOURCE_FILE_BYTES_MAX: u64 = 4 << 20;

/// The folder `from_go_sources` reads: `dir` joined with a relative
/// `package`, else `dir` itself (an import path names no folder here).
pub fn go_sources_folder(dir: &Path, package: &str) -> PathBuf {
    if package.starts_with("./") || package == "." {
        dir.join(package)
    } else {
        dir.to_path_buf()
    }
}

/// Whether a change to `file` can change what `from_go_sources` finds for
/// a node, so that a caller keeping its catalog knows when to scan again:
/// a `.go` file right in its folder (a `_test.go` one too: one spare scan
/// is cheaper than a second copy of the filter), or a `go.mod` there or
/// in `dir`. Paths compare lexically (`a/./b/..` is `a`).
pub fn go_sources_depend_on(dir: &Path, package: &str, file: &Path) -> bool {
    use seedfall_sim::config::normalize;
    let Some(name) = file.file_name().map(|n| n.to_string_lossy()) else { return false };
    let parent = normalize(file.parent().unwrap_or(Path::new("")));
    let folder = normalize(&go_sources_folder(dir, package));
    (name.ends_with(".go") && parent == folder) || (name == "go.mod" && (parent == folder || parent == normalize(dir)))
}

/// The properties in the non-test `.go` files of a Go node's own package
/// folder (`dir` joined with a relative `package`), without running the
/// toolchain: what an editor can list before any build or run. Locations are
/// relative to `base` (the config's folder). Properties in the packages it
/// imports are not here; a run's catalog (`from_go`) has them.
pub fn from_go_sources(node: &str, dir: &Path, package: &str, base: &Path) -> Catalog {
    let folder = go_sources_folder(dir, package);
    let mut catalog = Catalog::default();
    let Ok(entries) = std::fs::read_dir(&folder) else { return catalog };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "go") && !p.to_string_lossy().ends_with("_test.go") && p.is_file())
        .collect();
    files.sort();
    for file in files.into_iter().take(SOURCE_FILES_MAX) {
        let Ok(text) = seedfall_sim::files::read_text(&file, SOURCE_FILE_BYTES_MAX, "a Go source") else { continue };
        scan_go(&text, &crate::paths::relative(base, &file).display().to_string(), node, &mut catalog);
    }
    catalog.entries.sort();
    catalog.entries.dedup();
    catalog
}

/// The non-test Go files of every non-standard, non-module-cache package the
/// node's main package depends on (the storage overlay's patched module
/// copies under `patched` are dependencies too, not the user's code).
fn go_files(dir: &Path, package: &str, go_args: &[String], patched: &Path) -> Result<Vec<PathBuf>, String> {
    let modcache = std::process::Command::new("go").args(["env", "GOMODCACHE"]).output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default();
    let out = std::process::Command::new("go")
        .current_dir(dir)
        .env("GOOS", "wasip1")
        .env("GOARCH", "wasm")
        .envs(go_args.iter().any(|a| a.starts_with("-modfile=")).then_some(("GOWORK", "off")))
        .arg("list")
        .args(go_args)
        .args(["-deps", "-f", "{{if not .Standard}}{{.Dir}}|{{join .GoFiles \",\"}}{{end}}", package])
        .output()
        .map_err(|e| format!("cannot run `go list`: {e}"))?;
    if !out.status.success() {
        return Err(format!("go list failed in {}:\n{}", dir.display(), String::from_utf8_lossy(&out.stderr).trim_end()));
    }
    let mut files = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((pkg_dir, names)) = line.split_once('|') else { continue };
        if (!modcache.is_empty() && pkg_dir.starts_with(&modcache)) || Path::new(pkg_dir).starts_with(patched) {
            continue;
        }
        files.extend(names.split(',').filter(|n| !n.is_empty()).map(|n| Path::new(pkg_dir).join(n)));
    }
    Ok(files)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Punct(char),
    Other,
}

/// A small Go (or, with `rust`, Rust) tokenizer: identifiers, string
/// literals (interpreted and raw), punctuation; comments, runes and chars
/// skipped (Rust: lifetimes too, and no backquoted strings). Returns tokens
/// with line numbers.
fn tokenize(src: &str, rust: bool) -> Vec<(Tok, usize)> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0usize, 1usize);
    while i < b.len() {
        let c = b[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == '*' && b[i + 1] == '/') {
                if b[i] == '\n' {
                    line += 1;
                }
                i += 1;
            }
            i += 2;
        } else if c == '"' {
            let start_line = line;
            let mut s = String::new();
            i += 1;
            while i < b.len() && b[i] != '"' && b[i] != '\n' {
                if b[i] == '\\' && i + 1 < b.len() {
                    i += 1;
                    s.push(match b[i] {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        other => other,
                    });
                } else {
                    s.push(b[i]);
                }
                i += 1;
            }
            i += 1;
            out.push((Tok::Str(s), start_line));
        } else if rust && c == 'r' && (b.get(i + 1) == Some(&'"') || (b.get(i + 1) == Some(&'#') && b.get(i + 2).is_some_and(|&c| c == '"' || c == '#'))) {
            // A raw string: r"..." or r#"..."# (any number of #).
            let start_line = line;
            let mut hashes = 0;
            i += 1;
            while b.get(i) == Some(&'#') {
                hashes += 1;
                i += 1;
            }
            i += 1;
            let mut s = String::new();
            while i < b.len() && !(b[i] == '"' && (0..hashes).all(|k| b.get(i + 1 + k) == Some(&'#'))) {
                if b[i] == '\n' {
                    line += 1;
                }
                s.push(b[i]);
                i += 1;
            }
            i += 1 + hashes;
            out.push((Tok::Str(s), start_line));
        } else if rust && c == '\'' {
            // A char ('x', '\n') or a lifetime ('a): a lifetime has no closing quote.
            if b.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < b.len() && b[i] != '\'' && b[i] != '\n' {
                    i += 1;
                }
                i += 1;
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
            out.push((Tok::Other, line));
        } else if !rust && c == '`' {
            let start_line = line;
            let mut s = String::new();
            i += 1;
            while i < b.len() && b[i] != '`' {
                if b[i] == '\n' {
                    line += 1;
                }
                s.push(b[i]);
                i += 1;
            }
            i += 1;
            out.push((Tok::Str(s), start_line));
        } else if c == '\'' {
            i += 1;
            while i < b.len() && b[i] != '\'' && b[i] != '\n' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push((Tok::Other, line));
        } else if c.is_alphabetic() || c == '_' {
            let mut s = String::new();
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                s.push(b[i]);
                i += 1;
            }
            out.push((Tok::Ident(s), line));
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '.' || b[i] == '_') {
                i += 1;
            }
            out.push((Tok::Other, line));
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// Import names bound to `path` in a file (`sim` by default, or its alias).
fn import_names(toks: &[(Tok, usize)], path: &str) -> Vec<String> {
    let default = path.rsplit('/').next().unwrap_or(path).to_string();
    let mut names = Vec::new();
    for (i, (t, _)) in toks.iter().enumerate() {
        if *t == Tok::Str(path.to_string()) {
            match i.checked_sub(1).map(|j| &toks[j].0) {
                Some(Tok::Ident(alias)) if alias != "import" => names.push(alias.clone()),
                Some(Tok::Punct('.')) | Some(Tok::Punct('_')) => {}
                _ => names.push(default.clone()),
            }
        }
    }
    names
}

/// Which argument holds the message, and what kind the call asserts.
fn call_shape(name: &str) -> Option<(PropertyKind, usize)> {
    use PropertyKind::*;
    Some(match name {
        "Always" => (Always, 1),
        "AlwaysOrUnreachable" => (AlwaysOrUnreachable, 1),
        "Sometimes" => (Sometimes, 1),
        "Reachable" => (Reachable, 0),
        "Unreachable" => (Unreachable, 0),
        "AlwaysSome" => (Always, 1),
        "SometimesAll" => (Sometimes, 1),
        n if n.starts_with("AlwaysGreater") || n.starts_with("AlwaysLess") => (Always, 2),
        n if n.starts_with("SometimesGreater") || n.starts_with("SometimesLess") => (Sometimes, 2),
        _ => return None,
    })
}

/// Adds the property calls in one Go file to `catalog`.
pub fn scan_go(src: &str, file: &str, node: &str, catalog: &mut Catalog) {
    let toks = tokenize(src, false);
    let mut pkgs = import_names(&toks, SDK_GO_PACKAGE);
    pkgs.extend(import_names(&toks, ANTITHESIS_GO_PACKAGE));
    if pkgs.is_empty() {
        return;
    }
    let mut i = 0;
    while i + 3 < toks.len() {
        let (Tok::Ident(pkg), line) = &toks[i] else {
            i += 1;
            continue;
        };
        let (Tok::Punct('.'), Tok::Ident(name), Tok::Punct('(')) = (&toks[i + 1].0, &toks[i + 2].0, &toks[i + 3].0) else {
            i += 1;
            continue;
        };
        let shape = call_shape(name);
        if !pkgs.contains(pkg) || shape.is_none() {
            i += 1;
            continue;
        }
        let (kind, msg_idx) = shape.unwrap();
        let args = split_args(&toks[i + 4..]);
        let literal = args.get(msg_idx).and_then(|arg| literal_string(arg));
        match literal {
            Some(message) => catalog.entries.push(CatalogEntry { kind, message, location: format!("{file}:{line}"), node: node.to_string() }),
            None => catalog.warnings.push(format!(
                "{file}:{line}: the message of {pkg}.{name} is not a string literal, so seedfall cannot check that it ran"
            )),
        }
        i += 4;
    }
}

/// Which argument of a Rust property macro holds the message, and what
/// kind it asserts: seedfall's SDK (`always!`, ...) and the Antithesis Rust
/// SDK's (`assert_always!`, ...).
fn rust_macro_shape(name: &str) -> Option<(PropertyKind, usize)> {
    use PropertyKind::*;
    let name = name.strip_prefix("assert_").unwrap_or(name);
    Some(match name {
        "always" | "always_some" => (Always, 1),
        "always_or_unreachable" => (AlwaysOrUnreachable, 1),
        "sometimes" | "sometimes_all" => (Sometimes, 1),
        "reachable" => (Reachable, 0),
        "unreachable" => (Unreachable, 0),
        n if n.starts_with("always_greater") || n.starts_with("always_less") => (Always, 2),
        n if n.starts_with("sometimes_greater") || n.starts_with("sometimes_less") => (Sometimes, 2),
        _ => return None,
    })
}

/// Adds the property macros in one Rust file to `catalog`. Only files that
/// name `seedfall` or `antithesis_sdk` count: `always!` alone could be
/// anyone's macro.
pub fn scan_rust(src: &str, file: &str, node: &str, catalog: &mut Catalog) {
    let toks = tokenize(src, true);
    if !toks.iter().any(|(t, _)| matches!(t, Tok::Ident(n) if n == "seedfall" || n == "antithesis_sdk")) {
        return;
    }
    let mut i = 0;
    while i + 2 < toks.len() {
        let (Tok::Ident(name), line) = &toks[i] else {
            i += 1;
            continue;
        };
        let (Tok::Punct('!'), Tok::Punct('(')) = (&toks[i + 1].0, &toks[i + 2].0) else {
            i += 1;
            continue;
        };
        // `assert_unreachable!` is seedfall's name for unreachable too.
        let Some((kind, msg_idx)) = rust_macro_shape(name) else {
            i += 1;
            continue;
        };
        let args = split_args(&toks[i + 3..]);
        match args.get(msg_idx).and_then(|arg| literal_string(arg)) {
            Some(message) => catalog.entries.push(CatalogEntry { kind, message, location: format!("{file}:{line}"), node: node.to_string() }),
            None => catalog.warnings.push(format!("{file}:{line}: the message of {name}! is not a string literal, so seedfall cannot check that it ran")),
        }
        i += 3;
    }
}

/// Folders a Rust node's source walk does not enter: build output, VCS and
/// editor state, seedfall's own outputs.
fn skipped_rust_folder(name: &str) -> bool {
    name == "target" || name.starts_with('.')
}

/// Whether a change to `file` can change what `from_rust_sources` finds for
/// a Cargo node in `dir`: a `.rs` file under it, outside skipped folders.
pub fn rust_sources_depend_on(dir: &Path, file: &Path) -> bool {
    use seedfall_sim::config::normalize;
    let (dir, file) = (normalize(dir), normalize(file));
    file.extension().is_some_and(|x| x == "rs")
        && file.strip_prefix(&dir).is_ok_and(|rel| rel.parent().is_none_or(|p| p.components().all(|c| !skipped_rust_folder(&c.as_os_str().to_string_lossy()))))
}

/// The properties in the `.rs` files under a Cargo node's `dir` (build
/// output and hidden folders skipped; at most `SOURCE_FILES_MAX` files, in
/// path order), without building: what an editor can list before the first
/// run. A run's catalog is the module's custom section (`from_wasm`), which
/// also holds the dependencies' properties. Locations are relative to `base`.
pub fn from_rust_sources(node: &str, dir: &Path, base: &Path) -> Catalog {
    let mut catalog = Catalog::default();
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    // Bounded twice: the files kept, and the folders looked into.
    let mut looked = 0;
    while let Some(folder) = folders.pop() {
        looked += 1;
        if looked > SOURCE_FILES_MAX * 4 {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let (path, name) = (e.path(), e.file_name().to_string_lossy().into_owned());
            match e.file_type() {
                Ok(t) if t.is_dir() && !skipped_rust_folder(&name) => folders.push(path),
                Ok(t) if t.is_file() && name.ends_with(".rs") => files.push(path),
                _ => {}
            }
        }
    }
    files.sort();
    for file in files.into_iter().take(SOURCE_FILES_MAX) {
        let Ok(text) = seedfall_sim::files::read_text(&file, SOURCE_FILE_BYTES_MAX, "a Rust source") else { continue };
        scan_rust(&text, &crate::paths::relative(base, &file).display().to_string(), node, &mut catalog);
    }
    catalog.entries.sort();
    catalog.entries.dedup();
    catalog
}

/// The top-level arguments of a call whose tokens start after `(`.
fn split_args(toks: &[(Tok, usize)]) -> Vec<Vec<Tok>> {
    let mut args = vec![Vec::new()];
    let mut depth = 0usize;
    for (t, _) in toks {
        match t {
            Tok::Punct('(') | Tok::Punct('[') | Tok::Punct('{') => depth += 1,
            Tok::Punct(')') | Tok::Punct(']') | Tok::Punct('}') if depth == 0 => break,
            Tok::Punct(')') | Tok::Punct(']') | Tok::Punct('}') => depth -= 1,
            Tok::Punct(',') if depth == 0 => {
                args.push(Vec::new());
                continue;
            }
            _ => {}
        }
        args.last_mut().unwrap().push(t.clone());
    }
    args
}

/// `"a"` or `"a" + "b"`: the concatenated literal; anything else is None.
fn literal_string(arg: &[Tok]) -> Option<String> {
    let mut out = String::new();
    let mut expect_str = true;
    for t in arg {
        match (t, expect_str) {
            (Tok::Str(s), true) => {
                out.push_str(s);
                expect_str = false;
            }
            (Tok::Punct('+'), false) => expect_str = true,
            _ => return None,
        }
    }
    (!expect_str).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_go_calls_with_literal_messages() {
        let src = r#"package main
import (
	"fmt"
	s "seedfall.dev/sdk/sim"
	"github.com/antithesishq/antithesis-sdk-go/assert"
)
func f(x int) {
	s.Always(x >= 0, "balance never negative", map[string]any{"x": x})
	s.Sometimes(f(1, 2) > 0, `raw ` + "joined", nil) // comment s.Always(false, "no")
	s.AlwaysGreaterThan(x, 0, "x positive", nil)
	s.Reachable("got here", nil)
	s.Unreachable(fmt.Sprintf("dyn %d", x), nil)
	assert.Unreachable("the vault opened", nil)
	/* s.Always(true, "commented out", nil) */
}
"#;
        let mut c = Catalog::default();
        scan_go(src, "main.go", "server", &mut c);
        let found: Vec<(PropertyKind, &str, &str)> = c.entries.iter().map(|e| (e.kind, e.message.as_str(), e.location.as_str())).collect();
        assert_eq!(
            found,
            vec![
                (PropertyKind::Always, "balance never negative", "main.go:8"),
                (PropertyKind::Sometimes, "raw joined", "main.go:9"),
                (PropertyKind::Always, "x positive", "main.go:10"),
                (PropertyKind::Reachable, "got here", "main.go:11"),
                (PropertyKind::Unreachable, "the vault opened", "main.go:13"),
            ]
        );
        assert_eq!(c.warnings.len(), 1);
        assert!(c.warnings[0].starts_with("main.go:12: the message of s.Unreachable is not a string literal"), "{:?}", c.warnings);
    }

    #[test]
    fn finds_rust_macros_with_literal_messages() {
        let src = r##"use seedfall::{always, sometimes};
use antithesis_sdk::prelude::*;
fn f<'a>(x: &'a str, n: u64) {
    let c = 'x';
    always!(n < 10, "n stays small", { "n" => n });
    seedfall::sometimes!(n == 3, r#"three "quoted""#);
    seedfall::always_less_than!(n, 100, "bounded queue");
    seedfall::reachable!("got here");
    seedfall::assert_unreachable!("never here");
    assert_always!(n > 0, "antithesis always", &serde_json::json!({}));
    assert_reachable!("antithesis reached", &details);
    always!(n > 1, &format!("dyn {n}"));
    // always!(false, "commented out");
    println!("not a property");
}
"##;
        let mut c = Catalog::default();
        scan_rust(src, "src/main.rs", "client", &mut c);
        let found: Vec<(PropertyKind, &str, &str)> = c.entries.iter().map(|e| (e.kind, e.message.as_str(), e.location.as_str())).collect();
        assert_eq!(
            found,
            vec![
                (PropertyKind::Always, "n stays small", "src/main.rs:5"),
                (PropertyKind::Sometimes, "three \"quoted\"", "src/main.rs:6"),
                (PropertyKind::Always, "bounded queue", "src/main.rs:7"),
                (PropertyKind::Reachable, "got here", "src/main.rs:8"),
                (PropertyKind::Unreachable, "never here", "src/main.rs:9"),
                (PropertyKind::Always, "antithesis always", "src/main.rs:10"),
                (PropertyKind::Reachable, "antithesis reached", "src/main.rs:11"),
            ]
        );
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(c.warnings[0].starts_with("src/main.rs:12: the message of always! is not a string literal"));
        let mut none = Catalog::default();
        scan_rust("fn f() { always!(true, \"mine\"); }", "x.rs", "n", &mut none);
        assert!(none.entries.is_empty(), "a file that names neither SDK is not scanned");
    }

    #[test]
    fn rust_sources_are_walked_under_the_crate_and_not_its_build_output() {
        let dir = std::env::temp_dir().join(format!("seedfall-rust-catalog-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src/bin")).unwrap();
        std::fs::create_dir_all(dir.join("target/debug")).unwrap();
        std::fs::write(dir.join("src/main.rs"), "use seedfall::always;\nfn main() { always!(true, \"in main\"); }\n").unwrap();
        std::fs::write(dir.join("src/bin/tool.rs"), "fn main() { seedfall::reachable!(\"in a bin\"); }\n").unwrap();
        std::fs::write(dir.join("target/debug/gen.rs"), "fn main() { seedfall::reachable!(\"built\"); }\n").unwrap();
        let c = from_rust_sources("n", &dir, &dir);
        let found: Vec<(&str, &str)> = c.entries.iter().map(|e| (e.message.as_str(), e.location.as_str())).collect();
        // In catalog order (kind first: always before reachable).
        assert_eq!(found, vec![("in main", "src/main.rs:2"), ("in a bin", "src/bin/tool.rs:1")]);
        assert!(rust_sources_depend_on(&dir, &dir.join("src/lib.rs")));
        assert!(!rust_sources_depend_on(&dir, &dir.join("target/debug/gen.rs")));
        assert!(!rust_sources_depend_on(&dir, &dir.join(".seedfall/x.rs")));
        assert!(!rust_sources_depend_on(&dir, &dir.join("README.md")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_without_the_sdk_are_ignored() {
        let mut c = Catalog::default();
        scan_go("package x\nfunc f() { sim.Always(true, \"x\", nil) }", "x.go", "n", &mut c);
        assert!(c.entries.is_empty());
    }

    #[test]
    fn reads_custom_section_records() {
        // A module holding only a custom section with two records.
        let payload = b"always\x1fsrc/main.rs\x1f12\x1fbalance never negative\x1esometimes\x1fsrc/main.rs\x1f20\x1flevel 1 reached\x1e";
        let mut section = vec![SECTION.len() as u8];
        section.extend_from_slice(SECTION.as_bytes());
        section.extend_from_slice(payload);
        let mut wasm = b"\0asm\x01\0\0\0".to_vec();
        wasm.push(0);
        wasm.push(section.len() as u8);
        wasm.extend_from_slice(&section);
        let c = from_wasm(&wasm, "bank").unwrap();
        assert_eq!(c.entries.len(), 2);
        assert_eq!(c.entries[0].message, "balance never negative");
        assert_eq!(c.entries[0].location, "src/main.rs:12");
        assert_eq!(c.entries[1].kind, PropertyKind::Sometimes);
    }
}
