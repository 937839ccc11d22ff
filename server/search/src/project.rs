//! A project: a config file made runnable (guests built, modules compiled).
use crate::cache::Cache;
use crate::{modules, recipe};
use seedfall_sim::{Config, ConfigError, Engine, EngineOptions, Program};
use std::path::Path;

pub struct Project {
    pub program: Program,
    /// Calls the catalog could not include (non-literal messages), `file:line: why`.
    pub catalog_warnings: Vec<String>,
    /// What the runs of this project are a function of, as 16 hex digits:
    /// the config file's text, every module as run (probes included) and
    /// the seeded disks. Shard results of different digests never merge.
    pub digest: String,
}

#[derive(Debug)]
pub enum LoadError {
    Config(ConfigError),
    Build(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Config(e) => write!(f, "{e}"),
            LoadError::Build(e) => write!(f, "{e}"),
        }
    }
}

/// Parses the config, builds what changed, compiles what is not cached.
///
/// Guests are always instrumented for function coverage, so that a plain
/// run, an exploration and a replay run the very same program (the probes
/// cost fuel, and fuel is virtual time: mixing instrumented and plain runs
/// would give different traces). `SEEDFALL_COVERAGE=off` turns it off, for
/// measuring its cost only; `SEEDFALL_COVERAGE=edges` adds edge probes
/// (`coverage::Mode::Edges`: other virtual timing, an exploration aid).
pub fn load(config_path: &Path, log: &mut dyn FnMut(&str)) -> Result<Project, LoadError> {
    load_with(config_path, default_coverage(), log)
}

/// How to load: coverage probes and whether the engine samples guest stacks.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadOptions {
    /// None: no probes at all, for measuring their cost.
    pub coverage: Option<seedfall_sim::coverage::Mode>,
    /// A profiling engine (`guest_profile`): its compiled code is cached
    /// apart from the plain engine's.
    pub guest_profiling: bool,
}

/// The coverage mode `load` uses (`SEEDFALL_COVERAGE`).
pub fn default_coverage() -> Option<seedfall_sim::coverage::Mode> {
    match std::env::var("SEEDFALL_COVERAGE").as_deref() {
        Ok("off") => None,
        Ok("edges") => Some(seedfall_sim::coverage::Mode::Edges),
        _ => Some(seedfall_sim::coverage::Mode::Functions),
    }
}

/// `load`, with every module rewritten for coverage in `coverage_mode`
/// (None: not at all, for measuring the probes' cost).
pub fn load_with(config_path: &Path, coverage_mode: Option<seedfall_sim::coverage::Mode>, log: &mut dyn FnMut(&str)) -> Result<Project, LoadError> {
    load_options(config_path, LoadOptions { coverage: coverage_mode, guest_profiling: false }, log)
}

pub fn load_options(config_path: &Path, options: LoadOptions, log: &mut dyn FnMut(&str)) -> Result<Project, LoadError> {
    let coverage_mode = options.coverage;
    let config = Config::load(config_path).map_err(LoadError::Config)?;
    let cache = Cache::for_config(config.dir());
    let engine = Engine::new(EngineOptions {
        canonicalize_nans: config.determinism.canonicalize_nans,
        memory_bytes_max: config.limits.memory_bytes_max,
        guest_profiling: options.guest_profiling,
        ..EngineOptions::default()
    }).map_err(LoadError::Build)?;
    let mut compiled = Vec::with_capacity(config.nodes.len());
    let mut coverage = Vec::with_capacity(config.nodes.len());
    // Each distinct module (by its hash) compiled once, with its probes'
    // layout and function names when it has probes.
    type Probes = (seedfall_sim::coverage::Layout, std::collections::BTreeMap<u32, String>);
    let mut loaded: Vec<(String, wasmtime::Module, Option<Probes>)> = Vec::new();
    let mut sources: Vec<(seedfall_sim::config::WasmSource, recipe::Built, std::rc::Rc<Vec<u8>>, String)> = Vec::new();
    let mut function_names = std::collections::BTreeMap::new();
    let mut catalog = crate::catalog::Catalog::default();
    let config_text = std::fs::read(&config.path).unwrap_or_default();
    let mut digest_parts: Vec<Vec<u8>> = vec![config_text, format!("{coverage_mode:?}").into_bytes()];
    for (i, node) in config.nodes.iter().enumerate() {
        // Build errors say where in the config the node is.
        let field = match node.source {
            seedfall_sim::config::WasmSource::Path(_) => "wasm",
            seedfall_sim::config::WasmSource::Go { .. } => "go",
            seedfall_sim::config::WasmSource::Cargo { .. } => "cargo",
        };
        let at = format!("{}: $.nodes[{i}].{field}", config.path.display());
        let fail = |e: String| LoadError::Build(format!("{at}: node \"{}\": {e}", node.name));
        // Nodes with the same recipe (replicas given as nodes, a server and
        // its client from one package) build, read and hash it once.
        let (built, raw, raw_hash) = match sources.iter().find(|(source, ..)| *source == node.source) {
            Some((_, built, raw, hash)) => (built.clone(), raw.clone(), hash.clone()),
            None => {
                let built = recipe::wasm_for(node, &cache, log).map_err(|e| LoadError::Build(format!("{at}: {e}")))?;
                let mut bytes = seedfall_sim::files::read_bytes(&built.wasm, seedfall_sim::files::MODULE_BYTES_MAX, "the module").map_err(fail)?;
                // A threaded guest's atomic waits become host calls the
                // scheduler can suspend (before coverage, which numbers the
                // functions as they finally are).
                if seedfall_sim::threads::imports_shared_memory(&bytes) {
                    bytes = seedfall_sim::threads::rewrite(&bytes).map_err(|e| fail(format!("cannot prepare the threaded module {}: {e}", built.wasm.display())))?;
                }
                let raw = std::rc::Rc::new(bytes);
                let hash = crate::cache::hash_hex(&[&raw]);
                sources.push((node.source.clone(), built.clone(), raw.clone(), hash.clone()));
                (built, raw, hash)
            }
        };
        modules::check_magic(&raw, &built.wasm).map_err(fail)?;
        check_memory_fits(&raw, config.limits.memory_bytes_max).map_err(|e| LoadError::Build(format!("{}: $.limits.memory_mb: node \"{}\": {e}", config.path.display(), node.name)))?;
        digest_parts.push(raw_hash.clone().into_bytes());
        // Nodes that run the same module (a server and its client built
        // from one package) share one rewrite and one load.
        let (module, probes) = match loaded.iter().find(|(h, ..)| *h == raw_hash) {
            Some((_, module, probes)) => (module.clone(), probes.clone()),
            None => {
                let (module, probes) = match coverage_mode {
                    Some(mode) => {
                        let inst = modules::instrumented(&engine, &raw, &raw_hash, mode, &built.wasm, &cache, log).map_err(fail)?;
                        (inst.module, Some((inst.layout, inst.names)))
                    }
                    None => (modules::compiled_bytes(&engine, &raw, &built.wasm, &cache, log).map_err(fail)?, None),
                };
                loaded.push((raw_hash.clone(), module.clone(), probes.clone()));
                (module, probes)
            }
        };
        coverage.push(probes.as_ref().map(|(layout, _)| *layout));
        if let Some((_, names)) = probes {
            function_names.insert(node.name.clone(), names);
        }
        compiled.push(module);
        let found = node_catalog(node, &built, &cache).map_err(|e| LoadError::Build(format!("node \"{}\": {e}", node.name)))?;
        catalog.entries.extend(found.entries);
        catalog.warnings.extend(found.warnings);
    }
    catalog.warnings.sort();
    catalog.warnings.dedup();
    let mut program = Program::with_coverage(&engine, config, compiled, coverage).map_err(LoadError::Build)?;
    program.catalog = catalog.entries;
    program.function_names = function_names;
    digest_parts.push(program.seeds_digest.clone().into_bytes());
    let digest = crate::cache::hash_hex(&digest_parts.iter().map(Vec::as_slice).collect::<Vec<_>>());
    Ok(Project { program, catalog_warnings: catalog.warnings, digest })
}

/// A module whose memory starts above `limits.memory_mb` could never be
/// instantiated: say so at load, in the config's terms.
fn check_memory_fits(wasm: &[u8], max: u64) -> Result<(), String> {
    for start in seedfall_sim::coverage::memory_starts(wasm)? {
        if start > max {
            return Err(format!(
                "the module's memory starts at {} MiB, more than the {} MiB a node instance may have: raise limits.memory_mb (at most 4096)",
                start.div_ceil(1 << 20),
                max >> 20
            ));
        }
    }
    Ok(())
}

fn node_catalog(node: &seedfall_sim::config::NodeSpec, built: &recipe::Built, cache: &Cache) -> Result<crate::catalog::Catalog, String> {
    let wasm = std::fs::read(&built.wasm).map_err(|e| format!("cannot read {}: {e}", built.wasm.display()))?;
    let mut catalog = crate::catalog::from_wasm(&wasm, &node.name)?;
    if let (seedfall_sim::config::WasmSource::Go { dir, package, .. }, Some(fp)) = (&node.source, &built.fingerprint) {
        let overlays = crate::go_overlay::Overlays::of(&node.source);
        let mut go_args = || {
            let root = crate::recipe::find_up(dir, "go.mod").unwrap_or_else(|| dir.clone());
            crate::go_overlay::prepare(&root, overlays, cache, &mut |_| {})
        };
        let go = crate::catalog::from_go(&node.name, dir, package, fp, cache, &mut go_args)?;
        catalog.entries.extend(go.entries);
        catalog.warnings.extend(go.warnings);
    }
    Ok(catalog)
}

impl Project {
    /// Turns a location a guest reported (a Go `-trimpath` path like
    /// `example.com/m/main.go:12`, or a Rust `src/main.rs:12`) into a path on
    /// this machine, when the node's recipe tells where its sources are.
    pub fn resolve_location(&self, instance: &str, raw: &str) -> Option<std::path::PathBuf> {
        self.find_location(instance, raw).map(|p| lexical(&p))
    }

    fn find_location(&self, instance: &str, raw: &str) -> Option<std::path::PathBuf> {
        let node_name = instance.split('#').next().unwrap_or(instance);
        let node = self.program.config.nodes.iter().find(|n| n.name == node_name)?;
        let (file, line) = raw.rsplit_once(':')?;
        line.parse::<u32>().ok()?;
        let dir: &Path = match &node.source {
            seedfall_sim::config::WasmSource::Go { dir, .. } => dir,
            seedfall_sim::config::WasmSource::Cargo { dir, .. } => dir,
            seedfall_sim::config::WasmSource::Path(p) => p.parent()?,
        };
        // Go: strip the module path and resolve against the module root.
        let mut ancestor = Some(dir);
        while let Some(d) = ancestor {
            if let Ok(gomod) = std::fs::read_to_string(d.join("go.mod")) {
                if let Some(module) = gomod.lines().find_map(|l| l.strip_prefix("module ")) {
                    if let Some(rest) = file.strip_prefix(&format!("{}/", module.trim())) {
                        let p = d.join(rest);
                        if p.is_file() {
                            return Some(p);
                        }
                    }
                }
                // A module replaced by a local folder (the SDK, a fork):
                // -trimpath names its files module@version/path.
                for (module, local) in local_replacements(&gomod) {
                    let rest = file.strip_prefix(&format!("{module}/")).or_else(|| {
                        let after = file.strip_prefix(&format!("{module}@"))?;
                        Some(after.split_once('/')?.1)
                    });
                    if let Some(rest) = rest {
                        let p = d.join(local).join(rest);
                        if p.is_file() {
                            return Some(p);
                        }
                    }
                }
            }
            let p = d.join(file);
            if p.is_file() {
                return Some(p);
            }
            ancestor = d.parent();
        }
        None
    }
}

/// The `replace module [version] => ./local/dir` lines of a go.mod (single
/// lines and blocks) whose target is a local folder.
fn local_replacements(gomod: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in gomod.lines().map(str::trim) {
        let body = if in_block {
            if line == ")" {
                in_block = false;
                continue;
            }
            line
        } else if line == "replace (" {
            in_block = true;
            continue;
        } else if let Some(rest) = line.strip_prefix("replace ") {
            rest
        } else {
            continue;
        };
        let Some((from, to)) = body.split_once("=>") else { continue };
        let (module, to) = (from.split_whitespace().next().unwrap_or(""), to.trim());
        if !module.is_empty() && (to.starts_with("./") || to.starts_with("../") || to.starts_with('/')) {
            out.push((module.to_string(), to.to_string()));
        }
    }
    out
}

/// `a/b/../c` as `a/c`, without touching the file system (the path is shown
/// to people and compared, not opened through symlinks).
fn lexical(p: &Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_replacements_read_lines_and_blocks() {
        let gomod = "module x\n\nreplace seedfall.dev/sdk => ../../sdk/go\nreplace (\n\tgithub.com/a/b v1.2.0 => ./fork\n\tgithub.com/c/d => github.com/e/d v1.0.0\n)\n";
        assert_eq!(
            local_replacements(gomod),
            vec![("seedfall.dev/sdk".to_string(), "../../sdk/go".to_string()), ("github.com/a/b".to_string(), "./fork".to_string())]
        );
        assert_eq!(lexical(Path::new("examples/raftkv/../../sdk/go/x.go")), Path::new("sdk/go/x.go"));
        assert_eq!(lexical(Path::new("/a/./b/../c")), Path::new("/a/c"));
    }
}
