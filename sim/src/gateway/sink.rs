//! The sink the agent turn reports to under the gateway: the case's observer, with a
//! mid-turn crash at a chosen transition (the process dies before it is observed).

use crate::agent::Sink;
use crate::engine::observer::Observer;
use compactsim_model::{Event, Message, ServedCall};

pub(crate) struct CrashSink<'a> {
    pub inner: &'a mut Observer,
    /// Crash at this transition of the turn (0-based), if any.
    pub crash_at: Option<u32>,
    pub seen: u32,
    pub crashed: bool,
}

impl Sink for CrashSink<'_> {
    fn observe(&mut self, event: Event, before: &[Message], after: &[Message]) -> bool {
        if self.crash_at == Some(self.seen) {
            self.crashed = true;
            return false;
        }
        self.seen += 1;
        self.inner.observe(event, before, after)
    }

    fn bump(&mut self, counter: &'static str) {
        self.inner.bump(counter);
    }

    fn add(&mut self, counter: &'static str, n: u64) {
        self.inner.add(counter, n);
    }

    fn served(&mut self, calls: Vec<ServedCall>) {
        self.inner.served(calls);
    }
}
