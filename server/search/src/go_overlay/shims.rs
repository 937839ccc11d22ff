//! What the storage overlay changes in a library, keyed to the code it
//! changes, never to a version string.
//!
//! A shim names the modules it is for (any major version of them), the
//! code it expects (`When`: a file there, a file missing, a text in a file)
//! and what it does (`Op`). Every shim whose expectations hold in a
//! module's folder is applied to the module's copy, so an untested release
//! whose code did not change builds as the tested ones do. A shim whose
//! expectations hold but whose change cannot be made (the build line, the
//! declaration or the text it edits is gone) fails the build with the
//! module, the version, the file and what to do. The releases each shim
//! was checked on are the storage matrix (docs/sdk-go.md#storage,
//! server/cli/tests/storage_matrix.rs).
use std::path::Path;

/// Code a shim expects in a module's folder, relative to it.
#[derive(Debug)]
pub enum When {
    Has(&'static str),
    Lacks(&'static str),
    /// The file exists and holds this text.
    Says(&'static str, &'static str),
}

/// One change to a module's copy.
#[derive(Debug)]
pub enum Op {
    /// Adds the overlay's own file (the module must not have one).
    Add(&'static str, &'static str),
    /// Adds a wasip1 copy (`to`) of the file the library keeps for a platform
    /// without the feature (`from`, Windows' usually), built only on wasip1:
    /// whatever that platform gets, in this release, wasip1 gets too.
    CopyFor(&'static str, &'static str),
    /// Builds the file for this tag too: its build constraint `C` becomes
    /// `(C) || tag`.
    Include(&'static str, &'static str),
    /// Keeps the file out of wasip1 builds: `C` becomes `(C) && !wasip1`
    /// (a file without one gets `//go:build !wasip1`).
    Exclude(&'static str),
    /// Gives the one-line declaration of the first of these names that the
    /// file has (`name = ...`) this value.
    Set(&'static str, &'static [&'static str], &'static str),
    /// Replaces a text that occurs exactly once.
    Replace(&'static str, &'static str, &'static str),
}

#[derive(Debug)]
pub struct Shim {
    /// Module paths, each with any major-version suffix (`/v2`, `/v22`).
    pub modules: &'static [&'static str],
    pub when: &'static [When],
    pub ops: &'static [Op],
    /// What it is for, for the docs and the errors.
    pub why: &'static str,
}

pub const SEEDFALL_UNIX: &str = include_str!("../../../../sdk/go/overlay/unix_seedfall_wasip1.go");

const BBOLT_COMMON_WASM: &str = "// Added by seedfall's storage overlay: bbolt has no wasm architecture file.\npackage common\n\n// MaxMapSize is the largest mmap size supported on wasm (2 GiB of linear memory).\nconst MaxMapSize = 0x7FFFFFFF\n\n// MaxAllocSize is the size used when creating array pointers.\nconst MaxAllocSize = 0xFFFFFFF\n";

const BBOLT13_WASM: &str = "// Added by seedfall's storage overlay: bbolt has no wasm architecture file.\npackage bbolt\n\n// maxMapSize is the largest mmap size supported on wasm (2 GiB of linear memory).\nconst maxMapSize = 0x7FFFFFFF\n\n// maxAllocSize is the size used when creating array pointers.\nconst maxAllocSize = 0xFFFFFFF\n";

const BOLT_WASM: &str = "// Added by seedfall's storage overlay: bolt has no wasm architecture file.\npackage bolt\n\n// maxMapSize is the largest mmap size supported on wasm (2 GiB of linear memory).\nconst maxMapSize = 0x7FFFFFFF\n\n// maxAllocSize is the size used when creating array pointers.\nconst maxAllocSize = 0xFFFFFFF\n\n// Unaligned loads and stores work on wasm.\nvar brokenUnaligned = false\n";

const LOGRUS_WASIP1: &str = "// Added by seedfall's storage overlay: logrus has no wasip1 terminal check.\npackage logrus\n\n// isTerminal: a guest's output is never a terminal.\nfunc isTerminal(fd int) bool {\n\treturn false\n}\n";

const ETCD_SOCKOPT_WASIP1: &str = "// Added by seedfall's storage overlay: wasip1 sockets take no options.\npackage transport\n\nimport (\n\t\"fmt\"\n\t\"syscall\"\n)\n\nfunc setReusePort(network, address string, c syscall.RawConn) error {\n\treturn fmt.Errorf(\"port reuse is not supported on wasip1\")\n}\n\nfunc setReuseAddress(network, addr string, conn syscall.RawConn) error {\n\treturn fmt.Errorf(\"address reuse is not supported on wasip1\")\n}\n";

const ETCD_MMAP: &str = "uint64(16 * 1024 * 1024) // seedfall's storage overlay: wasm's memory is 4 GiB; bbolt grows the map as the file grows";

/// Every shim the overlay knows, in the order they apply.
pub const SHIMS: &[Shim] = &[
    Shim {
        modules: &["golang.org/x/sys"],
        when: &[When::Has("unix/syscall_unix.go")],
        ops: &[Op::Add("unix/unix_seedfall_wasip1.go", SEEDFALL_UNIX)],
        why: "x/sys/unix has no wasip1 files: the subset storage libraries call",
    },
    Shim {
        modules: &["go.etcd.io/bbolt"],
        when: &[When::Has("internal/common/bolt_amd64.go")],
        ops: &[Op::Add("internal/common/bolt_wasm.go", BBOLT_COMMON_WASM)],
        why: "no wasm architecture file (MaxMapSize, MaxAllocSize)",
    },
    Shim { modules: &["go.etcd.io/bbolt"], when: &[When::Has("bolt_amd64.go")], ops: &[Op::Add("bolt_wasm.go", BBOLT13_WASM)], why: "no wasm architecture file (maxMapSize, maxAllocSize)" },
    Shim {
        modules: &["github.com/boltdb/bolt"],
        when: &[When::Has("bolt_amd64.go")],
        ops: &[Op::Add("bolt_wasm.go", BOLT_WASM)],
        why: "no wasm architecture file (maxMapSize, maxAllocSize, brokenUnaligned)",
    },
    Shim {
        modules: &["go.etcd.io/bbolt", "github.com/boltdb/bolt"],
        when: &[When::Says("bolt_unix.go", "syscall.SYS_MADVISE")],
        ops: &[Op::Replace(
            "bolt_unix.go",
            "\t_, _, e1 := syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(advice))\n\tif e1 != 0 {\n\t\terr = e1\n\t}\n\treturn",
            "\treturn syscall.Madvise(b, advice)",
        )],
        why: "madvise through syscall.Syscall, which wasip1 has only as a stub: the overlay's syscall.Madvise",
    },
    Shim {
        modules: &["github.com/dgraph-io/ristretto"],
        when: &[When::Says("z/mmap_wasip1.go", "syscall.ENOSYS")],
        ops: &[
            Op::Replace("z/mmap_wasip1.go", "func mmap(fd *os.File, writeable bool, size int64) ([]byte, error) {\n\treturn nil, syscall.ENOSYS\n}", "func mmap(fd *os.File, writeable bool, size int64) ([]byte, error) {\n\tprot := syscall.PROT_READ\n\tif writeable {\n\t\tprot |= syscall.PROT_WRITE\n\t}\n\treturn syscall.Mmap(int(fd.Fd()), 0, int(size), prot, syscall.MAP_SHARED)\n}"),
            Op::Replace("z/mmap_wasip1.go", "func munmap(b []byte) error {\n\treturn syscall.ENOSYS\n}", "func munmap(b []byte) error {\n\treturn syscall.Munmap(b)\n}"),
            Op::Replace("z/mmap_wasip1.go", "func madvise(b []byte, readahead bool) error {\n\treturn syscall.ENOSYS\n}", "func madvise(b []byte, readahead bool) error {\n\treturn nil\n}"),
            Op::Replace("z/mmap_wasip1.go", "func msync(b []byte) error {\n\treturn syscall.ENOSYS\n}", "func msync(b []byte) error {\n\treturn syscall.Msync(b, syscall.MS_SYNC)\n}"),
        ],
        why: "its wasip1 mmap is a stub returning ENOSYS: the overlay's syscall.Mmap, Munmap and Msync instead",
    },
    Shim {
        modules: &["github.com/dgraph-io/badger"],
        when: &[When::Says("y/file_dsync.go", "!wasip1")],
        ops: &[Op::Include("y/file_dsync.go", "wasip1")],
        why: "on wasip1 it opens its synced files without O_DSYNC (an unsynced key registry is lost at a crash); with the overlay it uses O_DSYNC as on Linux",
    },
    Shim {
        modules: &["github.com/cockroachdb/pebble"],
        when: &[When::Has("vfs/default_unix.go"), When::Has("internal/rawalloc/rawalloc_32bit.go")],
        ops: &[
            Op::Include("internal/rawalloc/rawalloc_32bit.go", "wasm"),
            Op::Include("vfs/default_unix.go", "wasip1"),
            Op::Include("vfs/disk_usage_unix.go", "wasip1"),
            Op::Include("vfs/errors_unix.go", "wasip1"),
            Op::Include("vfs/file_lock_unix.go", "wasip1"),
            Op::Exclude("vfs/file_lock_generic.go"),
        ],
        why: "no wasm maxArrayLen, and no wasip1 file system: its Unix one (files, fcntl locks, statfs, errors) with the overlay's x/sys/unix",
    },
    Shim {
        modules: &["github.com/cockroachdb/pebble"],
        when: &[When::Has("internal/manual/manual_32bit.go")],
        ops: &[Op::Include("internal/manual/manual_32bit.go", "wasm")],
        why: "no wasm MaxArrayLen for its manually managed memory (v1)",
    },
    Shim {
        modules: &["github.com/sirupsen/logrus"],
        when: &[When::Lacks("terminal_check_wasip1.go"), When::Has("terminal_check_notappengine.go")],
        ops: &[Op::Add("terminal_check_wasip1.go", LOGRUS_WASIP1)],
        why: "no wasip1 isTerminal (its Unix file names linux, aix and the BSDs)",
    },
    Shim {
        modules: &["github.com/coreos/go-systemd"],
        when: &[When::Has("journal/journal_unix.go"), When::Has("journal/journal_windows.go")],
        ops: &[Op::Exclude("journal/journal_unix.go"), Op::CopyFor("journal/journal_windows.go", "journal/journal_wasip1.go")],
        why: "its journal client needs syscall.UnixRights: on wasip1 there is no journal, as on Windows",
    },
    Shim {
        modules: &["github.com/coreos/go-systemd"],
        when: &[When::Lacks("journal/journal_windows.go"), When::Says("journal/journal.go", "syscall.UnixRights(")],
        ops: &[Op::Replace("journal/journal.go", "syscall.UnixRights(int(file.Fd()))", "[]byte(nil) // seedfall's storage overlay: wasip1 passes no descriptors")],
        why: "its journal client passes a descriptor with syscall.UnixRights, which wasip1 lacks: a guest has no journal to send it to",
    },
    Shim {
        modules: &["go.etcd.io/etcd/client/pkg"],
        when: &[When::Has("transport/sockopt_unix.go"), When::Lacks("transport/sockopt_wasm.go")],
        ops: &[Op::Exclude("transport/sockopt_unix.go"), Op::Add("transport/sockopt_wasip1.go", ETCD_SOCKOPT_WASIP1)],
        why: "its Unix socket options (SO_REUSEPORT, SO_REUSEADDR) do not exist on wasip1: they are refused, as on Windows",
    },
    Shim {
        modules: &["go.etcd.io/etcd/server"],
        when: &[When::Has("mvcc/backend/backend.go")],
        ops: &[Op::Set("mvcc/backend/backend.go", &["initialMmapSize", "InitialMmapSize"], ETCD_MMAP)],
        why: "its backend maps 10 GiB of bbolt up front, more than wasm's 4 GiB of memory: 16 MiB, grown by bbolt as on any platform",
    },
    Shim {
        modules: &["go.etcd.io/etcd/server"],
        when: &[When::Has("storage/backend/backend.go")],
        ops: &[Op::Set("storage/backend/backend.go", &["initialMmapSize", "InitialMmapSize"], ETCD_MMAP)],
        why: "its backend maps 10 GiB of bbolt up front, more than wasm's 4 GiB of memory: 16 MiB, grown by bbolt as on any platform",
    },
];

/// Whether `module` is `family` or one of its major versions (`/v2`).
pub fn is_of(module: &str, family: &str) -> bool {
    match module.strip_prefix(family) {
        Some("") => true,
        Some(rest) => rest.strip_prefix("/v").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
        None => false,
    }
}

/// Whether the overlay has shims for `module` at all.
pub fn knows(module: &str) -> bool {
    SHIMS.iter().any(|s| s.modules.iter().any(|f| is_of(module, f)))
}

fn holds(when: &When, dir: &Path) -> bool {
    match when {
        When::Has(f) => dir.join(f).is_file(),
        When::Lacks(f) => !dir.join(f).exists(),
        When::Says(f, text) => std::fs::read_to_string(dir.join(f)).is_ok_and(|t| t.contains(text)),
    }
}

/// The shims for `module` whose expectations hold in its folder `dir`.
pub fn for_module(module: &str, dir: &Path) -> Vec<&'static Shim> {
    SHIMS.iter().filter(|s| s.modules.iter().any(|f| is_of(module, f)) && s.when.iter().all(|w| holds(w, dir))).collect()
}

/// Where a module stands, for an error: "go.etcd.io/bbolt@v1.4.3".
pub struct Named<'a> {
    pub module: &'a str,
    pub version: &'a str,
}

impl Named<'_> {
    /// The error for a shim whose change no longer fits the file.
    fn changed(&self, shim: &Shim, file: &str, what: &str) -> String {
        format!(
            "{}@{}: {file}: {what}. This release changed the code the storage overlay patches ({}). Use a release the storage matrix lists (docs/sdk-go.md#storage), or replace the module in your go.mod with a copy you patch (a module your go.mod replaces is used as it is)",
            self.module, self.version, shim.why
        )
    }
}

/// Applies `shim` to the module's copy in `dir`.
pub fn apply(shim: &Shim, dir: &Path, named: &Named) -> Result<(), String> {
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).map_err(|e| named.changed(shim, file, &format!("cannot read it ({e})")));
    let write = |file: &str, text: String| std::fs::write(dir.join(file), text).map_err(|e| format!("cannot write {}: {e}", dir.join(file).display()));
    for op in shim.ops {
        match op {
            Op::Add(file, content) => {
                if dir.join(file).exists() {
                    return Err(named.changed(shim, file, "the module has this file already: the overlay's would hide it"));
                }
                // Our files in sdk/go/overlay are kept out of the repository's
                // own builds by `//go:build ignore`; the copy is for wasip1.
                let content = super::net::rename(content, "//go:build ignore", "//go:build wasip1").unwrap_or_else(|| content.to_string());
                write(file, content)?;
            }
            Op::CopyFor(from, to) => {
                if dir.join(to).exists() {
                    return Err(named.changed(shim, to, "the module has this file already: the overlay's would hide it"));
                }
                let text = read(from)?;
                write(to, constrained(&text, |_| "wasip1".to_string()))?;
            }
            Op::Include(file, tag) => {
                let text = read(file)?;
                let Some(expr) = build_expr(&text) else {
                    return Err(named.changed(shim, file, "it has no build constraint to widen"));
                };
                write(file, constrained(&text, |_| format!("({expr}) || {tag}")))?;
            }
            Op::Exclude(file) => {
                let text = read(file)?;
                let expr = build_expr(&text);
                write(file, constrained(&text, |_| expr.as_deref().map_or_else(|| "!wasip1".to_string(), |e| format!("({e}) && !wasip1"))))?;
            }
            Op::Set(file, names, value) => {
                let text = read(file)?;
                let Some(out) = set_value(&text, names, value) else {
                    return Err(named.changed(shim, file, &format!("it has no one-line declaration of {} any more", names.join(" or "))));
                };
                write(file, out)?;
            }
            Op::Replace(file, old, new) => {
                let text = read(file)?;
                if text.matches(old).count() != 1 {
                    return Err(named.changed(shim, file, "the text the overlay replaces is not there exactly once"));
                }
                write(file, text.replacen(old, new, 1))?;
            }
        }
    }
    Ok(())
}

/// The lines of a Go file's header (before `package`) that constrain its
/// build, as one `//go:build` expression: the `//go:build` line if it has
/// one, else its `// +build` lines (spaces are or, commas and, lines and).
pub fn build_expr(text: &str) -> Option<String> {
    let header = text.lines().take_while(|l| !l.starts_with("package "));
    let mut plus = Vec::new();
    for line in header {
        if let Some(e) = line.strip_prefix("//go:build ") {
            return Some(e.trim().to_string());
        }
        if let Some(e) = line.strip_prefix("// +build ") {
            let ors: Vec<String> = e.split_whitespace().map(|term| term.split(',').collect::<Vec<_>>().join(" && ")).collect();
            plus.push(if ors.len() > 1 { format!("({})", ors.join(" || ")) } else { ors.join("") });
        }
    }
    (!plus.is_empty()).then(|| plus.join(" && "))
}

/// `text` with its header's build constraints replaced by one `//go:build`
/// line, `expr(old)` (the old expression, if any); the `// +build` lines go
/// (Go reads `//go:build` alone since 1.17).
fn constrained(text: &str, expr: impl FnOnce(Option<&str>) -> String) -> String {
    let old = build_expr(text);
    let line = format!("//go:build {}", expr(old.as_deref()));
    let mut out = String::with_capacity(text.len() + line.len() + 2);
    let mut in_header = true;
    let mut placed = false;
    for l in text.split_inclusive('\n') {
        if in_header && l.starts_with("package ") {
            in_header = false;
            if !placed {
                out.push_str(&line);
                out.push_str("\n\n");
                placed = true;
            }
        }
        if in_header && (l.starts_with("//go:build ") || l.starts_with("// +build ")) {
            if !placed {
                out.push_str(&line);
                out.push('\n');
                placed = true;
            }
            continue;
        }
        out.push_str(l);
    }
    out
}

/// `text` with the one-line declaration of the first of `names` it has
/// (`\tname = value`, in a `const` or `var` block or alone) set to `value`.
fn set_value(text: &str, names: &[&str], value: &str) -> Option<String> {
    for name in names {
        let mut hits = 0;
        let mut out = String::with_capacity(text.len());
        for l in text.split_inclusive('\n') {
            let trimmed = l.trim_start();
            let decl = trimmed.strip_prefix("const ").or_else(|| trimmed.strip_prefix("var ")).unwrap_or(trimmed);
            let rest = decl.strip_prefix(name).map(str::trim_start);
            match rest {
                Some(r) if r.starts_with('=') && !r.starts_with("==") => {
                    hits += 1;
                    let indent = &l[..l.len() - trimmed.len()];
                    let keyword = &trimmed[..trimmed.len() - decl.len()];
                    out.push_str(&format!("{indent}{keyword}{name} = {value}\n"));
                }
                _ => out.push_str(l),
            }
        }
        if hits == 1 {
            return Some(out);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_take_any_major_version() {
        assert!(is_of("github.com/cockroachdb/pebble", "github.com/cockroachdb/pebble"));
        assert!(is_of("github.com/cockroachdb/pebble/v2", "github.com/cockroachdb/pebble"));
        assert!(is_of("github.com/coreos/go-systemd/v22", "github.com/coreos/go-systemd"));
        assert!(!is_of("github.com/cockroachdb/pebble-extra", "github.com/cockroachdb/pebble"));
        assert!(!is_of("github.com/cockroachdb/pebble/vfs", "github.com/cockroachdb/pebble"));
        assert!(knows("go.etcd.io/etcd/server/v3") && !knows("go.etcd.io/etcd/api/v3"));
    }

    #[test]
    fn build_constraints_widen_narrow_and_convert() {
        let tagged = "// Copyright\n\n//go:build darwin || freebsd\n// +build darwin freebsd\n\npackage vfs\n";
        assert_eq!(build_expr(tagged).as_deref(), Some("darwin || freebsd"));
        let wide = constrained(tagged, |e| format!("({}) || wasip1", e.unwrap()));
        assert_eq!(wide, "// Copyright\n\n//go:build (darwin || freebsd) || wasip1\n\npackage vfs\n");
        // Old files have only `// +build` lines: spaces or, commas and, lines and.
        let plus = "// +build !windows,!plan9 js\n// +build go1.9\n\npackage y\n";
        assert_eq!(build_expr(plus).as_deref(), Some("(!windows && !plan9 || js) && go1.9"));
        // A file with none gets one.
        let bare = "// Package journal.\npackage journal\n";
        assert_eq!(constrained(bare, |_| "!wasip1".into()), "// Package journal.\n//go:build !wasip1\n\npackage journal\n");
    }

    #[test]
    fn a_declaration_is_set_by_name() {
        let text = "const (\n\t// doc\n\tInitialMmapSize = uint64(10 * 1024 * 1024 * 1024)\n\tother = 1\n)\n\nfunc f() { if InitialMmapSize == 0 {} }\n";
        let out = set_value(text, &["initialMmapSize", "InitialMmapSize"], "uint64(16)").unwrap();
        assert!(out.contains("\tInitialMmapSize = uint64(16)\n") && out.contains("\tother = 1\n") && out.contains("InitialMmapSize == 0"), "{out}");
        assert!(set_value("var x = 1\n", &["initialMmapSize"], "2").is_none());
        assert_eq!(set_value("var initialMmapSize = 1\n", &["initialMmapSize"], "2").unwrap(), "var initialMmapSize = 2\n");
    }

    #[test]
    fn each_release_gets_the_shims_its_code_needs() {
        let dir = std::env::temp_dir().join(format!("seedfall-shim-pick-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let file = |rel: &str, text: &str| {
            std::fs::create_dir_all(dir.join(rel).parent().unwrap()).unwrap();
            std::fs::write(dir.join(rel), text).unwrap();
        };
        let whys = |module: &str| for_module(module, &dir).iter().map(|s| s.why).collect::<Vec<_>>();
        // etcd's client/pkg: v3.5 needs its Unix socket options kept out;
        // v3.6 has a wasm file of its own and needs nothing.
        file("transport/sockopt_unix.go", "//go:build !windows\n\npackage transport\n");
        assert_eq!(whys("go.etcd.io/etcd/client/pkg/v3").len(), 1);
        file("transport/sockopt_wasm.go", "package transport\n");
        assert!(whys("go.etcd.io/etcd/client/pkg/v3").is_empty());
        // logrus: newer releases have their own wasip1 terminal check.
        file("terminal_check_notappengine.go", "package logrus\n");
        assert_eq!(whys("github.com/sirupsen/logrus").len(), 1);
        file("terminal_check_wasip1.go", "package logrus\n");
        assert!(whys("github.com/sirupsen/logrus").is_empty());
        // bbolt: 1.3 keeps its architecture files in the root, later ones
        // in internal/common; which one is there decides, not the version.
        file("bolt_amd64.go", "package bbolt\n");
        assert_eq!(whys("go.etcd.io/bbolt"), ["no wasm architecture file (maxMapSize, maxAllocSize)"]);
        std::fs::remove_file(dir.join("bolt_amd64.go")).unwrap();
        file("internal/common/bolt_amd64.go", "package common\n");
        assert_eq!(whys("go.etcd.io/bbolt"), ["no wasm architecture file (MaxMapSize, MaxAllocSize)"]);
        assert!(whys("go.etcd.io/etcd/api/v3").is_empty(), "an unknown module gets nothing");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_shim_that_no_longer_fits_names_the_module_version_file_and_what_to_do() {
        let dir = std::env::temp_dir().join(format!("seedfall-shim-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("storage/backend")).unwrap();
        std::fs::write(dir.join("storage/backend/backend.go"), "package backend\n\nconst defaultMmap = 1\n").unwrap();
        let shims = for_module("go.etcd.io/etcd/server/v3", &dir);
        assert_eq!(shims.len(), 1, "the storage/backend shim: the file is there");
        let e = apply(shims[0], &dir, &Named { module: "go.etcd.io/etcd/server/v3", version: "v3.9.0" }).unwrap_err();
        assert!(e.starts_with("go.etcd.io/etcd/server/v3@v3.9.0: storage/backend/backend.go: it has no one-line declaration of initialMmapSize or InitialMmapSize any more"), "{e}");
        assert!(e.contains("docs/sdk-go.md#storage"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
