//! The compile-time property catalog end to end: builds
//! `examples/catalog_demo.rs` and the `tests/fixtures/lib-guest` package for
//! `wasm32-wasip1` (debug and release, in a target directory of their own)
//! and checks that the `seedfall_catalog` custom section of each .wasm
//! holds exactly one record per call site in the docs/abi.md format,
//! including call sites in library functions the binary never calls, and
//! that the `seedfall` imports have the ABI's signatures. Needs the
//! `wasm32-wasip1` rustup target.
use std::path::{Path, PathBuf};
use std::process::Command;

/// Reads an unsigned LEB128 at `*pos`.
fn leb(buf: &[u8], pos: &mut usize) -> u32 {
    let (mut result, mut shift) = (0u32, 0);
    loop {
        let b = buf[*pos];
        *pos += 1;
        result |= u32::from(b & 0x7f) << shift;
        if b < 0x80 {
            return result;
        }
        shift += 7;
    }
}

fn name<'a>(buf: &'a [u8], pos: &mut usize) -> &'a str {
    let n = leb(buf, pos) as usize;
    let s = std::str::from_utf8(&buf[*pos..*pos + n]).unwrap();
    *pos += n;
    s
}

/// (section id, payload) of every section.
fn sections(buf: &[u8]) -> Vec<(u8, &[u8])> {
    assert_eq!(&buf[..8], b"\0asm\x01\0\0\0", "not a wasm module");
    let mut pos = 8;
    let mut out = Vec::new();
    while pos < buf.len() {
        let id = buf[pos];
        pos += 1;
        let size = leb(buf, &mut pos) as usize;
        out.push((id, &buf[pos..pos + size]));
        pos += size;
    }
    out
}

/// Concatenated payloads of the custom sections named `wanted`.
fn custom_section(buf: &[u8], wanted: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for (id, body) in sections(buf) {
        if id == 0 {
            let mut p = 0;
            if name(body, &mut p) == wanted {
                out.extend_from_slice(&body[p..]);
            }
        }
    }
    out
}

/// The `seedfall` imports as `name(params) -> results`, in import order.
fn seedfall_imports(buf: &[u8]) -> Vec<String> {
    let ty = |b: u8| match b {
        0x7f => "i32",
        0x7e => "i64",
        0x7d => "f32",
        0x7c => "f64",
        _ => "?",
    };
    let mut types = Vec::new();
    let mut out = Vec::new();
    for (id, body) in sections(buf) {
        let mut p = 0;
        match id {
            1 => {
                for _ in 0..leb(body, &mut p) {
                    assert_eq!(body[p], 0x60);
                    p += 1;
                    let n = leb(body, &mut p) as usize;
                    let params: Vec<_> = body[p..p + n].iter().map(|&b| ty(b)).collect();
                    p += n;
                    let n = leb(body, &mut p) as usize;
                    let results: Vec<_> = body[p..p + n].iter().map(|&b| ty(b)).collect();
                    p += n;
                    types.push(format!("({}) -> ({})", params.join(","), results.join(",")));
                }
            }
            2 => {
                for _ in 0..leb(body, &mut p) {
                    let module = name(body, &mut p).to_string();
                    let field = name(body, &mut p).to_string();
                    assert_eq!(body[p], 0, "only function imports expected");
                    p += 1;
                    let t = leb(body, &mut p) as usize;
                    if module == "seedfall" {
                        out.push(format!("{field}{}", types[t]));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Runs `cargo build --target wasm32-wasip1 <args>` in `dir` and returns
/// the target directory's `wasm32-wasip1/<profile>` folder.
fn cargo_build(dir: &Path, args: &[&str], release: bool) -> PathBuf {
    let target_dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join("catalog-test");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(dir)
        .args(["build", "--quiet", "--target", "wasm32-wasip1"])
        .args(args)
        .env("CARGO_TARGET_DIR", &target_dir)
        // The outer `cargo test` may set these for the host; not for the guest.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    if release {
        cmd.arg("--release");
    }
    let out = cmd.output().expect("run cargo");
    assert!(
        out.status.success(),
        "building for wasm32-wasip1 in {} failed (is the target installed? `rustup target add wasm32-wasip1`):\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    target_dir
        .join("wasm32-wasip1")
        .join(if release { "release" } else { "debug" })
}

/// The exports of the module: (name, kind) with kind 0 func, 2 memory, 3 global.
fn exports(buf: &[u8]) -> Vec<(String, u8)> {
    let mut out = Vec::new();
    for (id, body) in sections(buf) {
        if id == 7 {
            let mut p = 0;
            for _ in 0..leb(body, &mut p) {
                let n = name(body, &mut p).to_string();
                let kind = body[p];
                p += 1;
                leb(body, &mut p);
                out.push((n, kind));
            }
        }
    }
    out
}

/// The catalog records of `wasm`, sorted, as (kind, file, line, message).
fn records(wasm: &[u8]) -> Vec<(String, String, u32, String)> {
    let section = custom_section(wasm, "seedfall_catalog");
    assert_eq!(
        section.last(),
        Some(&0x1e),
        "the section ends with a record separator"
    );
    let text = std::str::from_utf8(&section).unwrap();
    let mut out: Vec<_> = text
        .split_terminator('\x1e')
        .map(|r| {
            let f: Vec<&str> = r.split('\x1f').collect();
            assert_eq!(f.len(), 4, "record {r:?}");
            (
                f[0].to_string(),
                f[1].to_string(),
                f[2].parse().unwrap(),
                f[3].to_string(),
            )
        })
        .collect();
    // The linker's order follows object files, not the source.
    out.sort_by(|a, b| (&a.1, a.2).cmp(&(&b.1, b.2)));
    out
}

fn owned(want: &[(&str, &str, u32, &str)]) -> Vec<(String, String, u32, String)> {
    want.iter()
        .map(|&(k, f, l, m)| (k.to_string(), f.to_string(), l, m.to_string()))
        .collect()
}

/// Every record of examples/catalog_demo.rs as (kind, file, line, message).
/// Keep in step with that file: the lines are its call sites.
const DEMO: [(&str, &str, u32, &str); 8] = [
    (
        "always",
        "examples/catalog_demo.rs",
        9,
        "balance stays above the overdraft limit",
    ),
    (
        "sometimes",
        "examples/catalog_demo.rs",
        10,
        "an account goes into overdraft",
    ),
    (
        "always",
        "examples/catalog_demo.rs",
        11,
        "balance stays under the cap",
    ),
    (
        "sometimes",
        "examples/catalog_demo.rs",
        12,
        "a rich account exists",
    ),
    (
        "always_or_unreachable",
        "examples/catalog_demo.rs",
        26,
        "batches are never empty",
    ),
    (
        "reachable",
        "examples/catalog_demo.rs",
        27,
        "a batch is checked",
    ),
    ("reachable", "examples/catalog_demo.rs", 34, "recovery runs"),
    (
        "unreachable",
        "examples/catalog_demo.rs",
        35,
        "a committed entry is lost",
    ),
];

fn check_demo(release: bool) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = cargo_build(root, &["--example", "catalog_demo"], release);
    let wasm = std::fs::read(out.join("examples").join("catalog_demo.wasm")).unwrap();
    assert_eq!(records(&wasm), owned(&DEMO));
    assert_eq!(custom_section(&wasm, "seedfall_catalog").len(), 515);
    assert_eq!(
        seedfall_imports(&wasm)
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>(),
        [
            "assert(i32,i32,i32,i32,i32,i32,i32,i32) -> ()",
            "buggify(i32,i32) -> (i32)",
            "guide(i32,f64,i32,i32) -> ()",
            "random_u64() -> (i64)",
            "setup_complete(i32,i32) -> ()",
        ]
        .into_iter()
        .map(String::from)
        .collect()
    );
    // One exported global per call site: the symbol that makes wasm-ld keep
    // the record (see `__catalog!` in src/lib.rs).
    let mut anchors: Vec<_> = exports(&wasm)
        .into_iter()
        .filter(|(n, _)| n.starts_with("seedfall_catalog:"))
        .collect();
    anchors.sort();
    assert_eq!(anchors.len(), 8);
    assert!(anchors.iter().all(|(_, kind)| *kind == 3), "{anchors:?}");
    assert_eq!(
        anchors[0].0,
        "seedfall_catalog:catalog_demo:examples/catalog_demo.rs:10:5:sometimes:an account goes into overdraft"
    );
}

/// tests/fixtures/lib-guest: the properties in its library target, most in
/// functions the binary never calls, still reach the .wasm.
fn check_lib_guest(release: bool) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join("lib-guest");
    let out = cargo_build(&dir, &[], release);
    let wasm = std::fs::read(out.join("lib-guest.wasm")).unwrap();
    assert_eq!(
        records(&wasm),
        owned(&[
            ("reachable", "src/lib.rs", 8, "lib: used module runs"),
            ("sometimes", "src/lib.rs", 17, "lib: pub fn never called"),
            ("unreachable", "src/lib.rs", 25, "lib: private dead fn"),
            (
                "always",
                "src/lib.rs",
                33,
                "lib: generic never instantiated"
            ),
            ("always", "src/main.rs", 5, "bin: draw is in range"),
        ])
    );
}

#[test]
fn debug_demo_wasm_holds_one_catalog_record_per_call_site() {
    check_demo(false);
}

#[test]
fn release_demo_wasm_holds_one_catalog_record_per_call_site() {
    check_demo(true);
}

#[test]
fn debug_lib_records_survive_the_linker() {
    check_lib_guest(false);
}

#[test]
fn release_lib_records_survive_the_linker() {
    check_lib_guest(true);
}
