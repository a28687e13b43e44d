//! The sink the agent turn reports to under the gateway: the case's observer, with a
//! mid-turn crash at a chosen transition (the process dies before it is observed), and
//! what the gateway's persistence needs to know of the turn as the harness saw it.

use crate::engine::observer::Observer;
use compactsim_hermes::agent::Sink;
use compactsim_model::{CallErrorClass, Event, Message, MsgId, ServedCall};
use std::collections::BTreeSet;

pub(crate) struct CrashSink<'a> {
    pub inner: &'a mut Observer,
    /// Crash at this transition of the turn (0-based), if any.
    pub crash_at: Option<u32>,
    pub seen: u32,
    pub crashed: bool,
    /// The rows of the live list right before each compaction or repair of the turn
    /// (each row once, first seen first): what §2.9's flush-before-rotate must store.
    pub pre_compaction: Vec<Message>,
    pre_ids: BTreeSet<MsgId>,
    /// Ids of the rows the turn appended (its user row and each answered response).
    pub fed: Vec<MsgId>,
    /// The turn's last failed provider call: the agent's class of it, and whether it
    /// was over the window (the fake provider's ground truth).
    pub last_error: Option<(CallErrorClass, bool)>,
    /// Each rewrite of the live list the turn committed (a batch pass, a repair), in
    /// order, with the list before and after it: under an adapter's store they are
    /// written where the real code writes them, at the pass (see `remote`).
    pub rewrites: Vec<Rewrite>,
    /// Keep [`Self::rewrites`] (only an adapter's store needs them).
    pub keep_rewrites: bool,
}

/// One committed rewrite of the live list during a turn.
#[derive(Clone, Debug)]
pub(crate) struct Rewrite {
    pub before: Vec<Message>,
    pub after: Vec<Message>,
    /// The pass rotated the session (its `Rotation` event followed).
    pub rotated: bool,
}

impl<'a> CrashSink<'a> {
    pub fn new(inner: &'a mut Observer, crash_at: Option<u32>) -> Self {
        CrashSink {
            inner,
            crash_at,
            seen: 0,
            crashed: false,
            pre_compaction: Vec::new(),
            pre_ids: BTreeSet::new(),
            fed: Vec::new(),
            last_error: None,
            rewrites: Vec::new(),
            keep_rewrites: false,
        }
    }

    fn note(&mut self, event: &Event, before: &[Message], after: &[Message]) {
        let appended = || after.iter().skip(before.len()).map(|m| m.id);
        match event {
            Event::TurnAppended { .. } => self.fed.extend(appended()),
            Event::ProviderCall(c) => match c.error {
                Some(class) => self.last_error = Some((class, c.over_window)),
                None => self.fed.extend(appended()),
            },
            Event::BatchPass(_) | Event::MicroPass(_) | Event::Repair { .. } => {
                for m in before {
                    if self.pre_ids.insert(m.id) {
                        self.pre_compaction.push(m.clone());
                    }
                }
                let committed = match event {
                    Event::BatchPass(p) => p.outcome.committed(),
                    Event::Repair { .. } => true,
                    _ => false,
                };
                if self.keep_rewrites && committed && before != after {
                    self.rewrites.push(Rewrite {
                        before: before.to_vec(),
                        after: after.to_vec(),
                        rotated: false,
                    });
                }
            }
            Event::Restart { .. }
            | Event::Preflight(_)
            | Event::TurnFailed { .. }
            | Event::SessionReset { .. }
            | Event::Rotation { .. } => {}
        }
    }
}

impl Sink for CrashSink<'_> {
    fn observe(&mut self, event: Event, before: &[Message], after: &[Message]) -> bool {
        if let (Event::Rotation { .. }, Some(w)) = (&event, self.rewrites.last_mut()) {
            // The rotation is part of its pass's writes, even when the crash falls on it.
            w.rotated = true;
        }
        if self.crash_at == Some(self.seen) {
            self.crashed = true;
            return false;
        }
        self.seen += 1;
        self.note(&event, before, after);
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
