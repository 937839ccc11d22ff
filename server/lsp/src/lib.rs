//! seedfall-lsp: the daemons, the long-lived processes that drive the
//! `seedfall` binary for a client: the one behind editors (`seedfall lsp`,
//! LSP over stdio) and the one behind AI agents (`seedfall mcp`, MCP over
//! stdio, in `mcp`). Both run their work through `jobs` and read its
//! progress through `progress`.
//!
//! The LSP server finds every seedfall config in the workspace, watches
//! configs, failure folders, sweep results, the corpus, pins and guest
//! sources, and shows failures as diagnostics at the property that broke,
//! results and actions as code lenses, completes node names in a config,
//! and runs sweeps, explorations and the
//! failure tools in the background with progress and cancel.
//!
//! Architecture invariants:
//! - this crate never touches wasmtime: engine work runs in `seedfall`
//!   child processes (`jobs`), which write the same artifacts as the CLI;
//!   what a child reports along the way is the line protocol of `progress`,
//!   whose writer the binary calls and whose parser `jobs` calls;
//! - no handler waits on the client: what changes the view goes through
//!   `refresh`, the one task that publishes, and server-to-client requests
//!   are sent only to clients that declared them and are never awaited
//!   while holding a transport slot;
//! - nothing the client sends can end or desync the daemon: `wire` checks
//!   every frame before the transport sees it;
//! - all LSP types come through `protocol`;
//! - every queue is bounded (`jobs::JOBS_MAX`, `watch::EVENTS_QUEUED_MAX`,
//!   `refresh::PATHS_PENDING_MAX`, `wire::FRAMES_QUEUED_MAX`).
pub mod commands;
pub mod completion;
pub mod diagnostics;
pub mod jobs;
pub mod jsonpath;
pub mod lenses;
pub mod mcp;
pub mod progress;
pub mod protocol;
pub mod refresh;
pub mod server;
pub mod state;
pub mod watch;
pub mod wire;

use tower_lsp_server::{LspService, Server};

/// Requests the transport serves at once. Only commands hold a slot for
/// long (each runs a job, at most `JOBS_MAX`); every other handler answers
/// from memory, so the rest are always free for them.
const CONCURRENT_REQUESTS_MAX: usize = jobs::JOBS_MAX + 8;

/// The runtime both daemons serve on; None, having said why on stderr,
/// when it cannot start.
fn runtime(daemon: &str) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(r) => Some(r),
        Err(e) => {
            eprintln!("seedfall {daemon}: cannot start: {e}");
            None
        }
    }
}

/// Serves LSP on stdin/stdout until the client exits.
pub fn serve_stdio() -> i32 {
    let Some(runtime) = runtime("lsp") else { return 2 };
    let jobs = std::sync::Arc::new(jobs::Jobs::default());
    let shut_down = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (backend_jobs, backend_shut_down) = (jobs.clone(), shut_down.clone());
    runtime.block_on(async {
        let (service, socket) = LspService::build(move |client| server::Backend::with(client, backend_jobs, backend_shut_down))
            .custom_method("seedfall/configs", server::Backend::configs)
            .custom_method("seedfall/corpus", server::Backend::corpus)
            .custom_method("seedfall/rounds", server::Backend::rounds)
            .custom_method("seedfall/failures", server::Backend::failures)
            .custom_method("seedfall/properties", server::Backend::properties)
            .custom_method("seedfall/timeline", server::Backend::timeline)
            .custom_method("window/workDoneProgress/cancel", server::Backend::cancel_progress)
            .finish();
        let (frames_tx, frames_rx) = tokio::sync::mpsc::channel(wire::FRAMES_QUEUED_MAX);
        let (guard_out, transport_in) = tokio::io::duplex(1 << 20);
        let (transport_out, from_transport) = tokio::io::duplex(1 << 20);
        let guard_jobs = jobs.clone();
        let guard_frames = frames_tx.clone();
        tokio::spawn(async move {
            wire::guard(tokio::io::stdin(), guard_out, guard_frames).await;
            // The client is gone: what it started would only run on for
            // nobody (and the transport waits for requests in flight).
            guard_jobs.stop(None);
        });
        let closer = frames_tx.clone();
        let forward = tokio::spawn(wire::from_transport(from_transport, frames_tx));
        let writer = tokio::spawn(wire::write_all_frames(frames_rx, tokio::io::stdout()));
        Server::new(transport_in, transport_out, socket).concurrency_level(CONCURRENT_REQUESTS_MAX).serve(service).await;
        // The transport is done (exit, or the client went away): let what it
        // wrote last reach the client, briefly.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), async {
            let _ = forward.await;
            let _ = closer.send(Vec::new()).await;
            let _ = writer.await;
        })
        .await;
    });
    // The client is gone (exit, or its end of stdin closed): what it started
    // is cancelled, not waited for, and blocking reads are not waited for.
    jobs.stop(None);
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    // LSP: 0 after a shutdown request, 1 without one.
    i32::from(!shut_down.load(std::sync::atomic::Ordering::SeqCst))
}
