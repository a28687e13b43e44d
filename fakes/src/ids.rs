//! Id allocation within one case: message, tool-call and fact ids are dense and
//! increase in creation order.

use compactsim_model::{CallId, FactId, MsgId};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdAlloc {
    next_msg: u32,
    next_call: u32,
    next_fact: u32,
}

impl IdAlloc {
    pub fn msg(&mut self) -> MsgId {
        self.next_msg += 1;
        MsgId(self.next_msg - 1)
    }

    pub fn call(&mut self) -> CallId {
        self.next_call += 1;
        CallId(self.next_call - 1)
    }

    pub fn fact(&mut self) -> FactId {
        self.next_fact += 1;
        FactId(self.next_fact - 1)
    }

    /// Number of facts planted so far.
    pub fn facts_planted(&self) -> u32 {
        self.next_fact
    }
}
