//! Every LSP type the daemon uses comes through this module, and seedfall's
//! own messages are defined here (documented in docs/lsp.md). The LSP types
//! crate changes between tower-lsp-server releases; only this file should
//! have to follow.
pub use tower_lsp_server::ls_types::notification::Notification;
pub use tower_lsp_server::ls_types::*;
use std::path::{Path, PathBuf};

macro_rules! notification {
    ($name:ident, $method:literal) => {
        pub enum $name {}
        impl Notification for $name {
            type Params = serde_json::Value;
            const METHOD: &'static str = $method;
        }
    };
}

notification!(RoundFinished, "seedfall/roundFinished");
notification!(FailureFound, "seedfall/failureFound");
notification!(Status, "seedfall/status");
notification!(Changed, "seedfall/changed");

pub fn uri(path: &Path) -> Option<Uri> {
    Uri::from_file_path(path)
}

pub fn path(uri: &Uri) -> Option<PathBuf> {
    uri.to_file_path().map(|p| p.into_owned())
}

pub fn line_range(line: u32) -> Range {
    Range { start: Position { line, character: 0 }, end: Position { line, character: 10_000 } }
}
