//! A program: the validated config plus each node's compiled module, linked
//! against the host once (`InstancePre`) so that every run only instantiates.
//!
//! A `Program` is immutable and shared by all worker threads of a sweep.
use crate::config::Config;
use crate::engine::Engine;
use crate::node::NodeCtx;
use crate::wasi::link;
use wasmtime::{InstancePre, Module};

pub struct Program {
    pub config: Config,
    /// Every property in the program, known before any run (set by the loader).
    pub catalog: Vec<crate::props::CatalogEntry>,
    /// Function names per config node, for display (set by the loader).
    pub function_names: std::collections::BTreeMap<String, std::collections::BTreeMap<u32, String>>,
    /// Per config node: the files its disk is seeded with (guest path,
    /// contents), read from the host when the program is made.
    pub disk_seeds: Vec<Vec<(String, std::sync::Arc<[u8]>)>>,
    /// FNV-1a over every seeded path and content: failure folders record it,
    /// so a replay can tell it runs on other seeded contents.
    pub seeds_digest: String,
    pub(crate) engine: Engine,
    pub(crate) nodes: Vec<ProgramNode>,
}

pub(crate) struct ProgramNode {
    pub module: crate::scheduler::LaunchModule,
    /// The coverage memory's layout, when the module was instrumented.
    pub coverage: Option<crate::coverage::Layout>,
}

impl Program {
    /// `modules[i]` is the compiled guest of `config.nodes[i]`.
    pub fn new(engine: &Engine, config: Config, modules: Vec<Module>) -> Result<Program, String> {
        let n = modules.len();
        Program::with_coverage(engine, config, modules, vec![None; n])
    }

    /// Like `new`, with each module's coverage layout when it was rewritten
    /// for coverage (`coverage::instrument`).
    pub fn with_coverage(engine: &Engine, config: Config, modules: Vec<Module>, coverage: Vec<Option<crate::coverage::Layout>>) -> Result<Program, String> {
        assert_eq!(coverage.len(), modules.len(), "one coverage entry per module");
        assert_eq!(modules.len(), config.nodes.len(), "one module per node");
        let (mut base, mut names) = link::linker(&engine.inner).map_err(|e| format!("cannot build the host: {e:#}"))?;
        crate::abi::link(&mut base).map_err(|e| format!("cannot build the host: {e:#}"))?;
        names.extend(crate::abi::FUNCTIONS.iter().copied());
        let mut nodes = Vec::with_capacity(modules.len());
        for ((spec, module), coverage) in config.nodes.iter().zip(&modules).zip(coverage) {
            if module.get_export("_start").is_none() {
                return Err(format!("node \"{}\": the module has no `_start` export (is it a wasip1 command, not a library?)", spec.name));
            }
            let mut linker = base.clone();
            link::stub_unknown_imports(&mut linker, &names, module).map_err(|e| format!("node \"{}\": {e:#}", spec.name))?;
            let module = match Threaded::new(linker.clone(), module).map_err(|e| format!("node \"{}\": {e}", spec.name))? {
                Some(t) => crate::scheduler::LaunchModule::Threaded(std::sync::Arc::new(t)),
                None => crate::scheduler::LaunchModule::Pre(linker.instantiate_pre(module).map_err(|e| format!("node \"{}\": cannot link the module: {e:#}", spec.name))?),
            };
            nodes.push(ProgramNode { module, coverage });
        }
        let (disk_seeds, seeds_digest) = read_disk_seeds(&config)?;
        Ok(Program { config, catalog: Vec::new(), function_names: Default::default(), disk_seeds, seeds_digest, engine: engine.clone(), nodes })
    }

    pub fn instrumented(&self) -> bool {
        self.nodes.iter().any(|n| n.coverage.is_some())
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }
}

/// Reads every node's seeded files (`nodes[i].disk.files`) from the host.
fn read_disk_seeds(config: &Config) -> Result<(Vec<Vec<(String, std::sync::Arc<[u8]>)>>, String), String> {
    let mut hash = crate::hash::Fnv1a::new();
    let mut all = Vec::with_capacity(config.nodes.len());
    for (i, node) in config.nodes.iter().enumerate() {
        let mut files = Vec::with_capacity(node.disk.files.len());
        let mut bytes = 0u64;
        for (guest, host) in &node.disk.files {
            let data = crate::files::read_bytes(host, crate::config::SEED_BYTES_MAX, "the seed file").map_err(|e| {
                format!("{}: $.nodes[{i}].disk.files.{guest}: {e} (to seed {guest} on node \"{}\")", config.path.display(), node.name)
            })?;
            bytes += data.len() as u64;
            if bytes > crate::config::SEED_BYTES_MAX {
                return Err(format!("{}: $.nodes[{i}].disk.files: the seeded files of node \"{}\" are over {} MiB", config.path.display(), node.name, crate::config::SEED_BYTES_MAX >> 20));
            }
            hash.write(guest.as_bytes());
            hash.write_u64(data.len() as u64);
            hash.write(&data);
            files.push((guest.clone(), data.into()));
        }
        for d in &node.disk.dirs {
            hash.write(d.as_bytes());
        }
        all.push(files);
    }
    Ok((all, format!("{:016x}", hash.value())))
}

/// A module that imports a shared memory (built for
/// `wasm32-wasip1-threads`): linked at every start of a node instance,
/// against a new shared memory of that instance, which every thread of it
/// then shares.
pub struct Threaded {
    linker: wasmtime::Linker<NodeCtx>,
    module: Module,
    /// The memory import: module, name, and its type.
    import: (String, String, wasmtime::MemoryType),
}

impl Threaded {
    /// `Some` for a module importing a shared memory; an error for one
    /// that imports it but cannot start threads the wasi-threads way.
    pub fn new(linker: wasmtime::Linker<NodeCtx>, module: &Module) -> Result<Option<Threaded>, String> {
        let shared = module.imports().find_map(|i| match i.ty() {
            wasmtime::ExternType::Memory(m) if m.is_shared() => Some((i.module().to_string(), i.name().to_string(), m)),
            _ => None,
        });
        let Some(import) = shared else { return Ok(None) };
        let spawns = module.imports().any(|i| i.module() == crate::threads::SPAWN_MODULE);
        if spawns && module.get_export(crate::threads::THREAD_START).is_none() {
            return Err(format!("the module imports thread-spawn but exports no `{}` (is it built for wasm32-wasip1-threads?)", crate::threads::THREAD_START));
        }
        Ok(Some(Threaded { linker, module: module.clone(), import }))
    }

    /// A new shared memory for one incarnation, at most `memory_bytes_max`
    /// (a grow past it fails in the guest, as a real allocator's would:
    /// wasmtime does not ask a store's limiter about shared memories), and
    /// the module linked against it.
    pub fn link(&self, engine: &wasmtime::Engine, store: &wasmtime::Store<NodeCtx>, memory_bytes_max: u64) -> wasmtime::Result<(InstancePre<NodeCtx>, wasmtime::SharedMemory)> {
        let (module, name, ty) = &self.import;
        let page = 1u64 << 16;
        let declared = ty.maximum().unwrap_or(u64::from(u32::MAX) / page);
        let max = declared.min((memory_bytes_max / page).max(ty.minimum()));
        let ty = wasmtime::MemoryType::shared(ty.minimum() as u32, max as u32);
        let shared = wasmtime::SharedMemory::new(engine, ty)?;
        let mut linker = self.linker.clone();
        linker.define(store, module, name, shared.clone())?;
        Ok((linker.instantiate_pre(&self.module)?, shared))
    }
}
