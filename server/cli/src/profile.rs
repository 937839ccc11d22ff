//! `-cpuprofile FILE`: a CPU profile of seedfall itself in pprof format
//! (read it with `go tool pprof`). Sampling is by SIGPROF at 199 Hz on every
//! thread; each sample unwinds the stack. Frames of seedfall, wasmtime and the
//! host calls are named; frames inside compiled guest code have no symbols
//! (wasmtime's JIT code is not in the binary's symbol table) and show up as
//! addresses, so guest time appears under the host frame that entered it.
use std::path::Path;

pub struct Profile {
    guard: pprof::ProfilerGuard<'static>,
}

pub fn start(path: Option<&Path>) -> Result<Option<Profile>, i32> {
    let Some(_) = path else { return Ok(None) };
    match pprof::ProfilerGuardBuilder::default().frequency(199).blocklist(&["libc", "libgcc", "pthread", "vdso"]).build() {
        Ok(guard) => Ok(Some(Profile { guard })),
        Err(e) => {
            eprintln!("seedfall: -cpuprofile: cannot start the profiler: {e}");
            Err(2)
        }
    }
}

impl Profile {
    /// Writes the profile; reports where.
    pub fn finish(self, path: &Path) {
        use pprof::protos::Message;
        let result = self.guard.report().build().map_err(|e| e.to_string()).and_then(|report| {
            let profile = report.pprof().map_err(|e| e.to_string())?;
            let mut bytes = Vec::new();
            profile.encode(&mut bytes).map_err(|e| e.to_string())?;
            std::fs::write(path, bytes).map_err(|e| e.to_string())
        });
        match result {
            Ok(()) => eprintln!("seedfall: CPU profile written to {} (go tool pprof -top {})", path.display(), path.display()),
            Err(e) => eprintln!("seedfall: -cpuprofile: cannot write {}: {e}", path.display()),
        }
    }
}
