//! compactsim-model: the shared vocabulary of compactsim — messages with lazy content and
//! cached token counts, trace events, and violations with witnesses. No behaviour lives
//! here beyond what keeps a value consistent with itself.

pub mod arguments;
pub mod content;
pub mod delta;
pub mod describe;
pub mod event;
pub mod ids;
pub mod message;
pub mod snapshot;
pub mod store;
#[cfg(test)]
mod test_rows;
pub mod tokens;
pub mod verdict;

pub use arguments::{mix64, Arguments};
pub use content::{Content, Segment, MERGE_SEPARATOR};
pub use delta::Delta;
pub use event::{
    BatchPass, BatchPassOutcome, BatchTrigger, CallErrorClass, Event, MicroOutcome, MicroPass,
    Preflight, PreflightDecision, ProviderCall, ServedCall, Transition,
};
pub use ids::{CallId, FactId, MsgId};
pub use message::{
    tokens_real_total, tokens_rough_total, written_summaries, Flags, Message, Role, ToolCall,
};
pub use snapshot::{sync_copy, sync_copy_by};
pub use store::{GatewayEvent, SessionNo, StoreSnapshot, StoredRow, StoredSession, TurnOutcome};
pub use tokens::{ContentKind, Tokens};
pub use verdict::{Violation, Witness, WitnessRow};
