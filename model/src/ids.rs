//! Identifiers. Every id is a dense integer assigned in creation order within one case,
//! so comparing two ids compares creation order.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Identity of one message for the life of a case. Copies keep the id; a row made by
/// merging two rows keeps the id of the first (as Hermes keeps the first dict).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct MsgId(pub u32);

/// A tool call id, rendered `call_<n>` on the wire.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct CallId(pub u32);

/// One fact planted by the conversation generator. Facts are symbols, not strings: a
/// summary "retains" a fact by carrying its id.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct FactId(pub u32);

impl fmt::Display for MsgId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "m{}", self.0)
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "call_{}", self.0)
    }
}

impl fmt::Display for FactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FACT-{:06}", self.0)
    }
}
