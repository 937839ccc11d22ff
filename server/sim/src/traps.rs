//! How a node's `_start` is ended from inside a host call: the errors a
//! host function returns to unwind the guest, which the scheduler then
//! recognises. Below the ABI, the WASI modules and the scheduler, so they
//! can all name them without importing each other.
use crate::node::NodeCtx;

/// Ends a node whose host call crashed it (a crash inside a disk op).
#[derive(Debug, Clone, Copy)]
pub struct NodeCrashed;

impl std::fmt::Display for NodeCrashed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the node crashed")
    }
}

impl std::error::Error for NodeCrashed {}

/// A host call in which the node crashed ends the node's `_start`.
pub fn crashed(caller: &wasmtime::Caller<'_, NodeCtx>) -> wasmtime::Result<()> {
    if caller.data().local.crashed {
        return Err(wasmtime::Error::new(NodeCrashed));
    }
    Ok(())
}

/// Ends a node whose property failed; recovered by the scheduler.
#[derive(Debug, Clone, Copy)]
pub struct PropertyFailed;

impl std::fmt::Display for PropertyFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a property failed")
    }
}

impl std::error::Error for PropertyFailed {}
