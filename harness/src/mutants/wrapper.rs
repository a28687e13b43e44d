//! A wrapper around any compactor behind the seam: its hooks see every pass's list
//! before and after and may rewrite the result (a mutant), while every call goes to the
//! inner compactor as is and every label it reports is returned unchanged.

use compactsim_fakes::seam::{BatchReport, BatchRequest, Compactor, CompactorFailure, Harness};
use compactsim_model::{Message, MicroPass};

/// What a wrapper does around each pass. Both hooks default to nothing.
pub trait Hooks: Send {
    /// After a micro pass: `before` is the list the pass was given, `msgs` its result.
    fn after_micro(&mut self, before: &[Message], msgs: &mut Vec<Message>, pass: &MicroPass) {
        let _ = (before, msgs, pass);
    }

    /// After a batch pass: `before` is the list the pass was given, `msgs` its result.
    fn after_batch(&mut self, before: &[Message], msgs: &mut Vec<Message>, report: &BatchReport) {
        let _ = (before, msgs, report);
    }
}

/// The compactor `inner` with `hooks` around its passes.
pub struct Wrapped<H> {
    pub inner: Box<dyn Compactor>,
    pub hooks: H,
    pub name: String,
}

impl<H: Hooks> Compactor for Wrapped<H> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn micro_pass(
        &mut self,
        msgs: &mut Vec<Message>,
        turn: u32,
        harness: &mut Harness<'_>,
    ) -> Result<MicroPass, CompactorFailure> {
        let before = msgs.clone();
        let pass = self.inner.micro_pass(msgs, turn, harness)?;
        self.hooks.after_micro(&before, msgs, &pass);
        Ok(pass)
    }

    fn batch_pass(
        &mut self,
        msgs: &mut Vec<Message>,
        request: BatchRequest,
        harness: &mut Harness<'_>,
    ) -> Result<BatchReport, CompactorFailure> {
        let before = msgs.clone();
        let report = self.inner.batch_pass(msgs, request, harness)?;
        self.hooks.after_batch(&before, msgs, &report);
        Ok(report)
    }

    fn restart(&mut self) {
        self.inner.restart();
    }

    fn rewritten(&mut self) {
        self.inner.rewritten();
    }

    fn cooling_down(&mut self, now_ms: u64) -> Result<bool, CompactorFailure> {
        self.inner.cooling_down(now_ms)
    }

    fn fallback_streak(&mut self) -> Result<u32, CompactorFailure> {
        self.inner.fallback_streak()
    }

    fn on_usage(&mut self, prompt_tokens: u64) -> Result<(), CompactorFailure> {
        self.inner.on_usage(prompt_tokens)
    }
}
