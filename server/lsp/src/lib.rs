//! seedfall-lsp: the daemon behind editors (`seedfall lsp`): LSP over stdio.
//!
//! It finds every seedfall config in the workspace, watches configs,
//! failure folders, sweep results, the corpus, pins and guest sources, and
//! shows failures as diagnostics at the property that broke, results and
//! actions as code lenses, and runs sweeps, explorations and the failure
//! tools in the background with progress and cancel.
//!
//! Architecture invariants: this crate never touches wasmtime: engine work
//! runs in `seedfall` child processes (`jobs`), which write the same
//! artifacts as the CLI. All LSP types come through `protocol`. Every queue
//! is bounded (`jobs::JOBS_MAX`, `watch::EVENTS_QUEUED_MAX`).
pub mod diagnostics;
pub mod framing;
pub mod jobs;
pub mod jsonpath;
pub mod lenses;
pub mod protocol;
pub mod server;
pub mod state;
pub mod watch;

use tower_lsp_server::{LspService, Server};

/// Serves LSP on stdin/stdout until the client exits.
pub fn serve_stdio() -> i32 {
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("seedfall lsp: cannot start: {e}");
            return 2;
        }
    };
    runtime.block_on(async {
        let (service, socket) = LspService::build(server::Backend::new)
            .custom_method("seedfall/corpus", server::Backend::corpus)
            .custom_method("seedfall/rounds", server::Backend::rounds)
            .custom_method("seedfall/failures", server::Backend::failures)
            .custom_method("seedfall/properties", server::Backend::properties)
            .custom_method("seedfall/timeline", server::Backend::timeline)
            .custom_method("window/workDoneProgress/cancel", server::Backend::cancel_progress)
            .custom_method(framing::MALFORMED, server::Backend::malformed)
            .finish();
        let (to_server, from_guard) = tokio::io::duplex(1 << 20);
        tokio::spawn(framing::guard(tokio::io::stdin(), to_server));
        Server::new(from_guard, tokio::io::stdout(), socket).serve(service).await;
    });
    0
}
