//! External compactors over stdio (adapters/PROTOCOL.md): a child process speaking JSON
//! lines, driven with a deadline on every read, its failures typed and reported with
//! the adapter command, the request and the adapter's last stderr lines.

pub mod argv;
pub mod chat;
pub mod child;
mod child_io;
pub mod compactor;
#[cfg(test)]
mod condense_tests;
pub mod crc32;
pub mod delta;
pub mod error;
pub mod fallback;
pub mod fallback_words;
pub mod generated;
pub mod groups;
pub mod json_line;
pub mod named;
pub mod needs;
pub mod policies;
pub mod quotes;
pub mod record;
pub mod session;
pub mod store;
pub mod summaries;
pub mod text_hash;
pub mod watchdog;
pub mod wire;
pub mod wire_read;

pub use error::{AdapterFailure, FailureKind, Limit};

/// The directory of an output directory where the adapter children's stderr files are
/// kept.
pub const ADAPTER_STDERR_DIR: &str = "adapter-stderr";
pub use session::{
    AdapterSpec, Reply, Session, SummarizeCall, SummaryService, ADAPTER_TIMEOUT_MS_MAX,
    DEFAULT_STARTUP_TIMEOUT_MS, DEFAULT_TIMEOUT_MS,
};

#[cfg(test)]
mod tests;
