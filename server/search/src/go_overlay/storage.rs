//! The storage overlay (a `go` recipe with `"storage": true`): what the Go
//! storage libraries need and wasip1 lacks.
//!
//! - package `syscall` gains `sdk/go/overlay/syscall_seedfall_wasip1.go`
//!   (Mmap, Munmap, Msync, Madvise, Flock, FcntlFlock, Fdatasync and their
//!   constants, on seedfall's host);
//! - `golang.org/x/sys/unix`, which has no wasip1 files at all, gains
//!   `sdk/go/overlay/unix_seedfall_wasip1.go`, the subset the libraries call;
//! - each supported library gets the wasm architecture file it lacks (the
//!   constants its other architectures define, with wasm's 32-bit address
//!   space in mind) or an edit of its wasip1 stub (`PATCHES`).
//!
//! Modules are patched as copies made from the module cache the build uses,
//! kept in the program's module folder under `.seedfall/go-storage`, and
//! reached through a relative `replace` in an alternate go.mod. Relative,
//! because Go writes each replacement's path into the binary (its build
//! info): a copy at an absolute path, in a cache that moves with the config
//! or the checkout, made the same program a different binary, whose runs
//! then differ, so a committed schedule replayed differently elsewhere.
use crate::cache::{hash_hex, write_atomic, Cache};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const SEEDFALL_SYSCALL: &str = include_str!("../../../../sdk/go/overlay/syscall_seedfall_wasip1.go");
pub const SEEDFALL_UNIX: &str = include_str!("../../../../sdk/go/overlay/unix_seedfall_wasip1.go");

/// What one library needs: files to add (relative path, content) and edits
/// (relative path, text that must occur exactly once, its replacement).
pub struct Patch {
    pub module: &'static str,
    /// Versions this patch was tested with (docs/sdk-go.md); others are
    /// tried and must still apply exactly.
    pub tested: &'static [&'static str],
    pub adds: &'static [(&'static str, &'static str)],
    pub edits: &'static [(&'static str, &'static str, &'static str)],
    /// What the patch is for, for the docs and the build log.
    pub why: &'static str,
}

const BBOLT_COMMON_WASM: &str = "// Added by seedfall's storage overlay: bbolt has no wasm architecture file.\npackage common\n\n// MaxMapSize is the largest mmap size supported on wasm (2 GiB of linear memory).\nconst MaxMapSize = 0x7FFFFFFF\n\n// MaxAllocSize is the size used when creating array pointers.\nconst MaxAllocSize = 0xFFFFFFF\n";

const BBOLT13_WASM: &str = "// Added by seedfall's storage overlay: bbolt has no wasm architecture file.\npackage bbolt\n\n// maxMapSize is the largest mmap size supported on wasm (2 GiB of linear memory).\nconst maxMapSize = 0x7FFFFFFF\n\n// maxAllocSize is the size used when creating array pointers.\nconst maxAllocSize = 0xFFFFFFF\n";

const BOLT_WASM: &str = "// Added by seedfall's storage overlay: bolt has no wasm architecture file.\npackage bolt\n\n// maxMapSize is the largest mmap size supported on wasm (2 GiB of linear memory).\nconst maxMapSize = 0x7FFFFFFF\n\n// maxAllocSize is the size used when creating array pointers.\nconst maxAllocSize = 0xFFFFFFF\n\n// Unaligned loads and stores work on wasm.\nvar brokenUnaligned = false\n";

/// bolt and bbolt before v1.4 call madvise through syscall.Syscall, which
/// wasip1 has only as a stub: they call the overlay's Madvise instead.
const BOLT_MADVISE: (&str, &str, &str) = (
    "bolt_unix.go",
    "\t_, _, e1 := syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(advice))\n\tif e1 != 0 {\n\t\terr = e1\n\t}\n\treturn",
    "\treturn syscall.Madvise(b, advice)",
);

const LOGRUS_WASIP1: &str = "// Added by seedfall's storage overlay: logrus has no wasip1 terminal check.\npackage logrus\n\n// isTerminal: a guest's output is never a terminal.\nfunc isTerminal(fd int) bool {\n\treturn false\n}\n";

const SYSTEMD_JOURNAL_WASIP1: &str = "// Added by seedfall's storage overlay: a guest has no systemd journal.\npackage journal\n\nimport \"errors\"\n\nfunc Enabled() bool {\n\treturn false\n}\n\nfunc Send(message string, priority Priority, vars map[string]string) error {\n\treturn errors.New(\"could not initialize socket to journald\")\n}\n";

const ETCD_SOCKOPT_WASIP1: &str = "// Added by seedfall's storage overlay: wasip1 sockets take no options.\npackage transport\n\nimport (\n\t\"fmt\"\n\t\"syscall\"\n)\n\nfunc setReusePort(network, address string, c syscall.RawConn) error {\n\treturn fmt.Errorf(\"port reuse is not supported on wasip1\")\n}\n\nfunc setReuseAddress(network, addr string, conn syscall.RawConn) error {\n\treturn fmt.Errorf(\"address reuse is not supported on wasip1\")\n}\n";

/// The libraries the overlay knows, and what each gets.
pub const SUPPORTED: &[Patch] = &[
    Patch { module: "golang.org/x/sys", tested: &["v0.0.0-20210615035016-665e8c7367d1", "v0.13.0", "v0.29.0", "v0.49.0"], adds: &[("unix/unix_seedfall_wasip1.go", SEEDFALL_UNIX)], edits: &[], why: "x/sys/unix has no wasip1 files: the subset storage libraries call" },
    Patch { module: "go.etcd.io/bbolt", tested: &["v1.4.3", "v1.5.0"], adds: &[("internal/common/bolt_wasm.go", BBOLT_COMMON_WASM)], edits: &[], why: "no wasm architecture file (MaxMapSize, MaxAllocSize)" },
    Patch {
        module: "github.com/dgraph-io/ristretto/v2",
        tested: &["v2.2.0"],
        adds: &[],
        edits: &[
            ("z/mmap_wasip1.go", "func mmap(fd *os.File, writeable bool, size int64) ([]byte, error) {\n\treturn nil, syscall.ENOSYS\n}", "func mmap(fd *os.File, writeable bool, size int64) ([]byte, error) {\n\tprot := syscall.PROT_READ\n\tif writeable {\n\t\tprot |= syscall.PROT_WRITE\n\t}\n\treturn syscall.Mmap(int(fd.Fd()), 0, int(size), prot, syscall.MAP_SHARED)\n}"),
            ("z/mmap_wasip1.go", "func munmap(b []byte) error {\n\treturn syscall.ENOSYS\n}", "func munmap(b []byte) error {\n\treturn syscall.Munmap(b)\n}"),
            ("z/mmap_wasip1.go", "func madvise(b []byte, readahead bool) error {\n\treturn syscall.ENOSYS\n}", "func madvise(b []byte, readahead bool) error {\n\treturn nil\n}"),
            ("z/mmap_wasip1.go", "func msync(b []byte) error {\n\treturn syscall.ENOSYS\n}", "func msync(b []byte) error {\n\treturn syscall.Msync(b, syscall.MS_SYNC)\n}"),
        ],
        why: "its wasip1 mmap is a stub returning ENOSYS: the storage overlay's syscall.Mmap, Munmap and Msync instead",
    },
    Patch {
        module: "github.com/dgraph-io/badger/v4",
        tested: &["v4.9.6"],
        adds: &[],
        edits: &[("y/file_dsync.go", "//go:build !dragonfly && !freebsd && !windows && !plan9 && !js && !wasip1", "//go:build !dragonfly && !freebsd && !windows && !plan9 && !js")],
        why: "on wasip1 it opens its synced files without O_DSYNC (an unsynced key registry is lost at a crash); with the overlay it uses O_DSYNC as on Linux",
    },
    Patch {
        module: "github.com/cockroachdb/pebble/v2",
        tested: &["v2.1.7"],
        adds: &[],
        edits: &[
            ("internal/rawalloc/rawalloc_32bit.go", "//go:build 386 || amd64p32 || arm || armbe || ppc || sparc", "//go:build 386 || amd64p32 || arm || armbe || ppc || sparc || wasm"),
            ("vfs/default_unix.go", "//go:build darwin || dragonfly || freebsd || netbsd || openbsd || solaris", "//go:build darwin || dragonfly || freebsd || netbsd || openbsd || solaris || wasip1"),
            ("vfs/disk_usage_unix.go", "//go:build darwin || dragonfly || freebsd\n", "//go:build darwin || dragonfly || freebsd || wasip1\n"),
            ("vfs/errors_unix.go", "//go:build darwin || dragonfly || freebsd || linux || openbsd || netbsd", "//go:build darwin || dragonfly || freebsd || linux || openbsd || netbsd || wasip1"),
            ("vfs/file_lock_unix.go", "//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris", "//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || wasip1"),
            ("vfs/file_lock_generic.go", "//go:build !darwin && !dragonfly && !freebsd && !linux && !netbsd && !openbsd && !solaris && !windows", "//go:build !darwin && !dragonfly && !freebsd && !linux && !netbsd && !openbsd && !solaris && !windows && !wasip1"),
        ],
        why: "no wasm maxArrayLen, and no wasip1 file system: its Unix one (files, fcntl locks, statfs, errors) with the overlay's x/sys/unix",
    },
    // What the embedded etcd server (go.etcd.io/etcd/server/v3/embed) needs
    // besides bbolt and x/sys.
    Patch { module: "github.com/sirupsen/logrus", tested: &["v1.7.0"], adds: &[("terminal_check_wasip1.go", LOGRUS_WASIP1)], edits: &[], why: "no wasip1 isTerminal (its Unix file names linux, aix and the BSDs)" },
    Patch {
        module: "github.com/coreos/go-systemd/v22",
        tested: &["v22.3.2"],
        adds: &[("journal/journal_wasip1.go", SYSTEMD_JOURNAL_WASIP1)],
        edits: &[("journal/journal_unix.go", "// +build !windows\n", "// +build !windows,!wasip1\n")],
        why: "its journal client needs syscall.UnixRights: on wasip1 there is no journal, as on Windows",
    },
    ETCD_CLIENT_PKG_35,
    ETCD_SERVER_35,
    Patch { module: "github.com/boltdb/bolt", tested: &["v1.3.1"], adds: &[("bolt_wasm.go", BOLT_WASM)], edits: &[BOLT_MADVISE], why: "no wasm architecture file (maxMapSize, maxAllocSize, brokenUnaligned); madvise through syscall.Syscall" },
];

/// bbolt before v1.4 keeps its architecture constants in the root package;
/// its older releases also call madvise through syscall.Syscall.
const BBOLT_13: Patch = Patch { module: "go.etcd.io/bbolt", tested: &["v1.3.6", "v1.3.11"], adds: &[("bolt_wasm.go", BBOLT13_WASM)], edits: &[], why: "no wasm architecture file (maxMapSize, maxAllocSize)" };
const BBOLT_13_SYSCALL: Patch = Patch { module: "go.etcd.io/bbolt", tested: &["v1.3.5"], adds: &[("bolt_wasm.go", BBOLT13_WASM)], edits: &[BOLT_MADVISE], why: "no wasm architecture file (maxMapSize, maxAllocSize); madvise through syscall.Syscall" };

/// etcd's client/pkg before v3.5.6 (v3.5.6 excludes solaris too; v3.6 has
/// its own wasm file and needs nothing).
const ETCD_CLIENT_PKG_35: Patch = Patch {
    module: "go.etcd.io/etcd/client/pkg/v3",
    tested: &["v3.5.4", "v3.5.5"],
    adds: &[("transport/sockopt_wasip1.go", ETCD_SOCKOPT_WASIP1)],
    edits: &[("transport/sockopt_unix.go", "//go:build !windows\n// +build !windows\n", "//go:build !windows && !wasip1\n// +build !windows,!wasip1\n")],
    why: "its Unix socket options (SO_REUSEPORT, SO_REUSEADDR) do not exist on wasip1: they are refused, as on Windows",
};
const ETCD_CLIENT_PKG_356: Patch = Patch {
    module: "go.etcd.io/etcd/client/pkg/v3",
    tested: &["v3.5.6", "v3.5.7"],
    adds: &[("transport/sockopt_wasip1.go", ETCD_SOCKOPT_WASIP1)],
    edits: &[("transport/sockopt_unix.go", "//go:build !windows && !solaris\n// +build !windows,!solaris\n", "//go:build !windows && !solaris && !wasip1\n// +build !windows,!solaris,!wasip1\n")],
    why: "its Unix socket options (SO_REUSEPORT, SO_REUSEADDR) do not exist on wasip1: they are refused, as on Windows",
};
const ETCD_MMAP_WHY: &str = "its backend maps 10 GiB of bbolt up front, more than wasm's 4 GiB of memory: 16 MiB, grown by bbolt as on any platform";
/// etcd's server before v3.6 keeps its backend in mvcc/backend.
const ETCD_SERVER_35: Patch = Patch {
    module: "go.etcd.io/etcd/server/v3",
    tested: &["v3.5.4", "v3.5.5", "v3.5.6", "v3.5.7"],
    adds: &[],
    edits: &[("mvcc/backend/backend.go", "initialMmapSize = uint64(10 * 1024 * 1024 * 1024)", "initialMmapSize = uint64(16 * 1024 * 1024) // seedfall's storage overlay: wasm's memory is 4 GiB; bbolt grows the map as the file grows")],
    why: ETCD_MMAP_WHY,
};
/// v3.6 (tests/guests/go-etcdwal builds with it; its embedded server is not
/// run here).
const ETCD_SERVER_36: Patch = Patch {
    module: "go.etcd.io/etcd/server/v3",
    tested: &["v3.6.16"],
    adds: &[],
    edits: &[("storage/backend/backend.go", "InitialMmapSize = uint64(10 * 1024 * 1024 * 1024)", "InitialMmapSize = uint64(16 * 1024 * 1024) // seedfall's storage overlay: wasm's memory is 4 GiB; bbolt grows the map as the file grows")],
    why: ETCD_MMAP_WHY,
};

/// The patch for a module of the build, if it is one the overlay knows.
/// `dir` is the module's folder (some versions of one module differ).
fn patch_for(module: &str, version: &str, dir: impl FnOnce() -> Option<PathBuf>) -> Option<&'static Patch> {
    if module == "go.etcd.io/bbolt" && version.starts_with("v1.3.") {
        let old_madvise = dir().and_then(|d| std::fs::read_to_string(d.join("bolt_unix.go")).ok()).is_some_and(|t| t.contains("SYS_MADVISE"));
        return Some(if old_madvise { &BBOLT_13_SYSCALL } else { &BBOLT_13 });
    }
    if module == "go.etcd.io/etcd/client/pkg/v3" {
        let d = dir()?;
        if d.join("transport/sockopt_wasm.go").is_file() {
            return None;
        }
        let unix = std::fs::read_to_string(d.join("transport/sockopt_unix.go")).unwrap_or_default();
        return Some(if unix.contains("!windows && !solaris") { &ETCD_CLIENT_PKG_356 } else { &ETCD_CLIENT_PKG_35 });
    }
    if module == "github.com/sirupsen/logrus" {
        // Newer logrus releases (v1.9.4 here) have their own wasip1 terminal check.
        return if dir().is_some_and(|d| d.join("terminal_check_wasip1.go").is_file()) { None } else { SUPPORTED.iter().find(|p| p.module == module) };
    }
    if module == "go.etcd.io/etcd/server/v3" {
        return Some(if dir().is_some_and(|d| d.join("storage/backend/backend.go").is_file()) { &ETCD_SERVER_36 } else { &ETCD_SERVER_35 });
    }
    SUPPORTED.iter().find(|p| p.module == module)
}

/// Hash of everything the overlay adds: part of every storage build's fingerprint.
pub fn version_hash() -> String {
    // Where the copies are and how they are named is part of the binary (its
    // build info), so a change of layout is a change of the overlay.
    let mut parts: Vec<&[u8]> = vec![SEEDFALL_SYSCALL.as_bytes(), COPIES.as_bytes(), b"replace => ./"];
    for p in SUPPORTED.iter().chain([&BBOLT_13, &BBOLT_13_SYSCALL, &ETCD_CLIENT_PKG_356, &ETCD_SERVER_36]) {
        parts.push(p.module.as_bytes());
        for (path, content) in p.adds {
            parts.push(path.as_bytes());
            parts.push(content.as_bytes());
        }
        for (path, old, new) in p.edits {
            parts.extend([path.as_bytes(), old.as_bytes(), new.as_bytes()]);
        }
    }
    hash_hex(&parts)
}

/// The standard library's part: our syscall file, and wasip1's own file
/// system calls with `Fsync` renamed to `hostFsync` (ours yields first).
pub fn goroot_files(goroot: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let ours = super::net::rename(SEEDFALL_SYSCALL, "//go:build ignore", "//go:build wasip1").expect("syscall_seedfall_wasip1.go has one //go:build ignore line");
    let mut out = super::net::renamed_files(&goroot.join("src/syscall"), "syscall", &[("fs_wasip1.go", "func Fsync(", "func hostFsync(")])?;
    out.insert(0, (goroot.join("src/syscall/syscall_seedfall_wasip1.go"), ours));
    Ok(out)
}

struct Module {
    path: String,
    version: String,
    dir: Option<PathBuf>,
    replaced: bool,
}

fn go(module_root: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("go")
        .current_dir(module_root)
        .env("GOOS", "wasip1")
        .env("GOARCH", "wasm")
        .env("GOWORK", "off")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run `go`: {e}"))?;
    if !out.status.success() {
        return Err(format!("`go {}` failed in {}:\n{}", args.join(" "), module_root.display(), String::from_utf8_lossy(&out.stderr).trim_end()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Every module of the build, downloaded.
fn modules(module_root: &Path) -> Result<Vec<Module>, String> {
    let text = go(module_root, &["list", "-m", "-json", "all"])?;
    let mut out = Vec::new();
    for v in serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>() {
        let v = v.map_err(|e| format!("`go list -m -json all` printed something else: {e}"))?;
        if v["Main"].as_bool() == Some(true) {
            continue;
        }
        let (Some(path), Some(version)) = (v["Path"].as_str(), v["Version"].as_str()) else { continue };
        out.push(Module { path: path.into(), version: version.into(), dir: v["Dir"].as_str().map(PathBuf::from), replaced: !v["Replace"].is_null() });
    }
    Ok(out)
}

fn module_dir(module_root: &Path, m: &Module) -> Result<PathBuf, String> {
    if let Some(d) = &m.dir {
        return Ok(d.clone());
    }
    let text = go(module_root, &["mod", "download", "-json", &format!("{}@{}", m.path, m.version)])?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("`go mod download` printed something else: {e}"))?;
    v["Dir"].as_str().map(PathBuf::from).ok_or_else(|| format!("`go mod download {}@{}` gave no folder: {text}", m.path, m.version))
}

/// Bound on files copied from one module.
const MODULE_FILES_MAX: usize = 50_000;

/// Copies a module's folder without its tests (read-only in the module cache).
fn copy_module(from: &Path, to: &Path) -> Result<(), String> {
    let mut stack = vec![from.to_path_buf()];
    let mut files = 0usize;
    while let Some(dir) = stack.pop() {
        let rel = dir.strip_prefix(from).expect("under the module");
        std::fs::create_dir_all(to.join(rel)).map_err(|e| format!("cannot create {}: {e}", to.join(rel).display()))?;
        for e in std::fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                if name != "testdata" && !name.starts_with('.') {
                    stack.push(e.path());
                }
            } else if ft.is_file() && !name.ends_with("_test.go") {
                files += 1;
                if files > MODULE_FILES_MAX {
                    return Err(format!("{} has more than {MODULE_FILES_MAX} files", from.display()));
                }
                let dest = to.join(rel).join(&name);
                std::fs::copy(e.path(), &dest).map_err(|err| format!("cannot copy {}: {err}", e.path().display()))?;
                let mut perms = std::fs::metadata(&dest).map_err(|err| err.to_string())?.permissions();
                #[allow(clippy::permissions_set_readonly_false)]
                perms.set_readonly(false);
                let _ = std::fs::set_permissions(&dest, perms);
            }
        }
    }
    Ok(())
}

/// Applies `patch` to the copy in `dir`; an edit that does not match
/// exactly once, or an added file that is already there, is an error.
fn apply(patch: &Patch, dir: &Path, version: &str) -> Result<(), String> {
    for (rel, content) in patch.adds {
        let path = dir.join(rel);
        let parent = path.parent().expect("a file in a folder");
        if !parent.is_dir() {
            return Err(format!("{}@{version}: {} does not exist, so {rel} cannot be added: this version is laid out differently from the tested ones ({})", patch.module, parent.display(), patch.tested.join(", ")));
        }
        if path.exists() {
            return Err(format!("{}@{version} already has {rel}: the overlay would hide the library's own file", patch.module));
        }
        // Our files in sdk/go/overlay are kept out of the repository's own
        // builds by `//go:build ignore`; the copy is for wasip1.
        let content = super::net::rename(content, "//go:build ignore", "//go:build wasip1").unwrap_or_else(|| content.to_string());
        std::fs::write(&path, content).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    for (rel, old, new) in patch.edits {
        let path = dir.join(rel);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}@{version}: cannot read {rel}: {e}", patch.module))?;
        if text.matches(old).count() != 1 {
            return Err(format!("{}@{version}: {rel} does not contain the text the patch replaces exactly once: this version changed it (tested: {})", patch.module, patch.tested.join(", ")));
        }
        std::fs::write(&path, text.replacen(old, new, 1)).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if !dir.join("go.mod").is_file() {
        // A module from before go.mod: a replacement folder needs one.
        std::fs::write(dir.join("go.mod"), format!("module {}\n", patch.module)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Where the patched copies of a module's dependencies live: inside the
/// module's own folder, so the relative `replace` path Go records in the
/// binary is the same wherever the checkout or the config is.
pub const COPIES: &str = ".seedfall/go-storage";

/// The patched copy of one module, made once per version and patch; the
/// name is its path relative to `module_root`.
fn patched_copy(module_root: &Path, m: &Module, patch: &Patch, log: &mut dyn FnMut(&str)) -> Result<String, String> {
    let escaped: String = m.path.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    let key = hash_hex(&[m.path.as_bytes(), m.version.as_bytes(), version_hash().as_bytes()]);
    let name = format!("{escaped}@{}-{}", m.version, &key[..12]);
    let (copies, rel) = (module_root.join(COPIES), format!("./{COPIES}/{name}"));
    let dir = copies.join(&name);
    if dir.join(".complete").is_file() {
        return Ok(rel);
    }
    std::fs::create_dir_all(&copies).map_err(|e| format!("cannot create {}: {e}", copies.display()))?;
    if !patch.tested.contains(&m.version.as_str()) {
        log(&format!("storage overlay: {}@{} is not a tested version ({}); patching it anyway", m.path, m.version, patch.tested.join(", ")));
    }
    let from = module_dir(module_root, m)?;
    let tmp = dir.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    copy_module(&from, &tmp)?;
    apply(patch, &tmp, &m.version)?;
    std::fs::write(tmp.join(".complete"), b"").map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    // Another seedfall may build the same copy at the same time (tests and
    // parallel sweeps share a cache). Copies land whole, by rename, so a
    // complete one is never removed: losing the race is fine; only a folder
    // without `.complete` (left by something else) is cleared, once.
    if std::fs::rename(&tmp, &dir).is_err() && !dir.join(".complete").is_file() {
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = std::fs::rename(&tmp, &dir) {
            if !dir.join(".complete").is_file() {
                let _ = std::fs::remove_dir_all(&tmp);
                return Err(format!("cannot move {} into place: {e}", tmp.display()));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(rel)
}

/// The program's go.mod with `extra` replace lines (relative paths) after
/// it. Its own relative replacements stay as they are: Go resolves them
/// against the module's folder even when the go.mod is read through
/// `-modfile` from elsewhere, and records them in the binary as written.
fn alternate_go_mod(text: &str, extra: &[(String, String)]) -> String {
    let mut out = String::new();
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
    }
    for (module, rel) in extra {
        assert!(rel.starts_with("./"), "a patched copy is named relative to the module: {rel}");
        out.push_str(&format!("replace {module} => {rel}\n"));
    }
    out
}

/// The alternate go.mod that replaces every patched module with its copy;
/// `None` when the build uses none of them.
pub fn modfile(module_root: &Path, cache: &Cache, log: &mut dyn FnMut(&str)) -> Result<Option<PathBuf>, String> {
    let mut extra = Vec::new();
    for m in modules(module_root)? {
        let Some(patch) = patch_for(&m.path, &m.version, || module_dir(module_root, &m).ok()) else { continue };
        if m.replaced {
            log(&format!("storage overlay: {} is replaced by the program's go.mod; it is used as it is", m.path));
            continue;
        }
        extra.push((m.path.clone(), patched_copy(module_root, &m, patch, log)?));
    }
    if extra.is_empty() {
        return Ok(None);
    }
    let go_mod = std::fs::read_to_string(module_root.join("go.mod")).map_err(|e| format!("cannot read {}: {e}", module_root.join("go.mod").display()))?;
    let go_sum = std::fs::read(module_root.join("go.sum")).unwrap_or_default();
    let text = alternate_go_mod(&go_mod, &extra);
    let dir = cache.path("go-modfile", &hash_hex(&[text.as_bytes(), &go_sum]));
    let (mod_path, sum_path) = (dir.join("go.mod"), dir.join("go.sum"));
    if !mod_path.is_file() {
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        write_atomic(&sum_path, &go_sum).map_err(|e| format!("cannot write {}: {e}", sum_path.display()))?;
        write_atomic(&mod_path, text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", mod_path.display()))?;
    }
    Ok(Some(mod_path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacements_stay_relative_so_the_binary_names_no_path_of_this_machine() {
        let text = "module m\n\nrequire x v1\n\nreplace seedfall.dev/sdk => ../../sdk/go\nreplace y => z v1.2.0\n";
        let out = alternate_go_mod(text, &[("go.etcd.io/bbolt".into(), "./.seedfall/go-storage/go.etcd.io_bbolt@v1.3.6-abc".into())]);
        assert!(out.contains("replace seedfall.dev/sdk => ../../sdk/go\n"), "{out}");
        assert!(out.contains("replace y => z v1.2.0\n"));
        assert!(out.ends_with("replace go.etcd.io/bbolt => ./.seedfall/go-storage/go.etcd.io_bbolt@v1.3.6-abc\n"));
    }

    #[test]
    fn a_patch_that_does_not_apply_says_so() {
        let dir = std::env::temp_dir().join(format!("seedfall-patch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("internal/common")).unwrap();
        std::fs::write(dir.join("internal/common/bolt_wasm.go"), "package common\n").unwrap();
        let bbolt = patch_for("go.etcd.io/bbolt", "v1.4.3", || None).unwrap();
        assert!(apply(bbolt, &dir, "v1.4.3").unwrap_err().contains("already has internal/common/bolt_wasm.go"));
        std::fs::remove_dir_all(dir.join("internal")).unwrap();
        assert!(apply(bbolt, &dir, "v9.9.9").unwrap_err().contains("laid out differently"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(patch_for("go.etcd.io/bbolt", "v1.3.11", || None).unwrap().adds[0].0, "bolt_wasm.go");
    }

    #[test]
    fn etcd_releases_get_the_patch_their_layout_needs() {
        let dir = std::env::temp_dir().join(format!("seedfall-etcd-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("transport")).unwrap();
        let pick = |v: &str| patch_for("go.etcd.io/etcd/client/pkg/v3", v, || Some(dir.clone())).map(|p| p.tested);
        std::fs::write(dir.join("transport/sockopt_unix.go"), "//go:build !windows\n// +build !windows\n").unwrap();
        assert_eq!(pick("v3.5.4"), Some(ETCD_CLIENT_PKG_35.tested));
        std::fs::write(dir.join("transport/sockopt_unix.go"), "//go:build !windows && !solaris\n// +build !windows,!solaris\n").unwrap();
        assert_eq!(pick("v3.5.7"), Some(ETCD_CLIENT_PKG_356.tested));
        // v3.6 builds for wasm by itself.
        std::fs::write(dir.join("transport/sockopt_wasm.go"), "package transport\n").unwrap();
        assert_eq!(pick("v3.6.16"), None);
        assert_eq!(patch_for("go.etcd.io/etcd/server/v3", "v3.5.4", || Some(dir.clone())).unwrap().edits[0].0, "mvcc/backend/backend.go");
        std::fs::create_dir_all(dir.join("storage/backend")).unwrap();
        std::fs::write(dir.join("storage/backend/backend.go"), "package backend\n").unwrap();
        assert_eq!(patch_for("go.etcd.io/etcd/server/v3", "v3.6.16", || Some(dir.clone())).unwrap().edits[0].0, "storage/backend/backend.go");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_logrus_with_its_own_wasip1_file_is_left_alone() {
        let dir = std::env::temp_dir().join(format!("seedfall-logrus-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(patch_for("github.com/sirupsen/logrus", "v1.7.0", || Some(dir.clone())).map(|p| p.module), Some("github.com/sirupsen/logrus"));
        std::fs::write(dir.join("terminal_check_wasip1.go"), "package logrus\n").unwrap();
        assert!(patch_for("github.com/sirupsen/logrus", "v1.9.4", || Some(dir.clone())).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
