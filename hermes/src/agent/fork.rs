//! A copy of an agent loop with its state (the self-test's forks: a switched case runs
//! as its clean run up to the turn a switch is first asked, then goes its own way).

use super::AgentLoop;

impl AgentLoop {
    /// This loop with its state, to run on independently; `None` when its compactor
    /// cannot be copied (see [`crate::compactor::Compactor::fork`]).
    pub fn fork(&self) -> Option<AgentLoop> {
        Some(AgentLoop {
            config: self.config.clone(),
            msgs: self.msgs.clone(),
            ids: self.ids.clone(),
            summarizer: self.summarizer.clone(),
            provider: self.provider.clone(),
            compactor: self.compactor.fork()?,
            micro: self.micro,
            failure: self.failure.clone(),
            now_ms: self.now_ms,
            passes: self.passes,
            session_id: self.session_id,
            stop: self.stop,
            session: self.session.clone(),
            turn: self.turn,
            dirty: self.dirty,
            totals: self.totals,
        })
    }
}
