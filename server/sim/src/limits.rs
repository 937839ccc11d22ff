//! The bounds docs/limits.md states that are held in modules private to
//! this crate, named here so the page's test (`server/cli/src/limits_doc.rs`)
//! reads each from the constant that holds it. Nothing else outside `sim`
//! needs them; the modules stay private.

pub use crate::abi::{BUGGIFY_SITE_BYTES_MAX, GUIDE_NAME_BYTES_MAX, ORACLE_KEYS_MAX, ORACLE_KEY_BYTES_MAX, ORACLE_VALUE_BYTES_MAX, PROPERTY_TEXT_BYTES_MAX};
pub use crate::events::EVENTS_PENDING_MAX;
pub use crate::faults::PLANNED_MAX;
pub use crate::locks::LOCKED_FILES_MAX;
pub use crate::node::{LINE_BYTES_MAX, TABLE_ELEMENTS_MAX};
pub use crate::wasi::fdtable::FDS_MAX;
pub use crate::wasi::mem::{IOVS_MAX, READ_BYTES_MAX};
pub use crate::wasi::mmap::MAPPINGS_MAX;
pub use crate::wasi::path::PATH_BYTES_MAX;
pub use crate::wasi::poll::{POLL_REWAITS_MAX, SUBSCRIPTIONS_MAX};
pub use crate::wasi::proc::RANDOM_BYTES_MAX;
pub use crate::wasi::sock::BLOCKING_WAITS_MAX;
pub use crate::world::BUGGIFY_SITES_MAX;

/// The prices of host work (`wasi::work`), in instructions.
pub mod work {
    pub use crate::wasi::work::{BYTES_PER_UNIT, HOST_CALL, PER_DIR_ENTRY, PER_GROW, PER_SUBSCRIPTION, RANDOM_PER_COPY, TABLE_ELEMENTS_PER_UNIT};
}
