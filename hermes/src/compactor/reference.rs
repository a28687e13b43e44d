//! The Rust reference compactors (micro and batch, with their bug switches) behind the
//! [`Compactor`] seam: `--compactor reference`.

use super::batch::{self, BatchConfig, BatchState, PassResult};
use super::micro::MicroCompactor;
use compactsim_fakes::seam::{BatchReport, BatchRequest, Compactor, CompactorFailure, Harness};
use compactsim_fakes::summarizer::RollingSummary;
use compactsim_model::{BatchPassOutcome, Message, MicroPass};

/// The reference compactor of one session: a batch compressor and, where the loop runs
/// micro passes, a micro compactor.
#[derive(Clone, Debug)]
pub struct Reference {
    batch_config: BatchConfig,
    batch: BatchState,
    micro: Option<MicroCompactor>,
    /// The case's context window (the Rust models do not need it; an external
    /// compactor is told it).
    context_window_tokens: Option<u32>,
}

impl Reference {
    pub fn new(batch_config: BatchConfig, micro: Option<MicroCompactor>) -> Self {
        Reference {
            batch_config,
            batch: BatchState::default(),
            micro,
            context_window_tokens: None,
        }
    }

    /// The same compactor, told the case's context window.
    pub fn with_context_window(mut self, tokens: u32) -> Self {
        self.context_window_tokens = Some(tokens);
        self
    }

    /// The case's context window, when the engine declared it.
    pub fn context_window_tokens(&self) -> Option<u32> {
        self.context_window_tokens
    }

    /// The batch compressor's state (for tests and replays).
    pub fn batch_state(&self) -> &BatchState {
        &self.batch
    }

    /// The batch compressor's configuration (an external compactor sends it as config).
    pub fn batch_config(&self) -> &BatchConfig {
        &self.batch_config
    }

    /// The micro compactor's configuration, where the loop runs micro passes.
    pub fn micro_config(&self) -> Option<super::micro::MicroConfig> {
        self.micro.as_ref().map(|m| m.config)
    }

    /// The micro compactor's rolling summary, if it has one.
    pub fn micro_rolling(&self) -> Option<&RollingSummary> {
        self.micro.as_ref().map(|m| m.rolling())
    }
}

impl Compactor for Reference {
    fn fork(&self) -> Option<Box<dyn Compactor>> {
        Some(Box::new(self.clone()))
    }

    fn name(&self) -> String {
        "reference".to_string()
    }

    fn micro_pass(
        &mut self,
        msgs: &mut Vec<Message>,
        turn: u32,
        harness: &mut Harness<'_>,
    ) -> Result<MicroPass, CompactorFailure> {
        match &mut self.micro {
            Some(micro) => Ok(micro.pass(msgs, turn, harness.summarizer, harness.ids)),
            None => Err(CompactorFailure {
                what: "the reference compactor was built without micro-compaction".into(),
            }),
        }
    }

    fn batch_pass(
        &mut self,
        msgs: &mut Vec<Message>,
        request: BatchRequest,
        harness: &mut Harness<'_>,
    ) -> Result<BatchReport, CompactorFailure> {
        let out = batch::compress(
            msgs,
            &self.batch_config,
            &mut self.batch,
            harness.summarizer,
            harness.ids,
            harness.now_ms,
            request.force,
        );
        let (outcome, fallback) = match out.result {
            PassResult::Compacted { fallback } => (BatchPassOutcome::Compacted, fallback),
            PassResult::Aborted(_) => (BatchPassOutcome::Aborted, false),
            PassResult::NoOp(_) => (BatchPassOutcome::NoOp, false),
        };
        if outcome.committed() {
            // Micro's cursor indexed the list this pass just rewrote.
            if let Some(micro) = &mut self.micro {
                micro.rewritten();
            }
        }
        Ok(BatchReport {
            outcome,
            fallback,
            summary_failed: out.summary_miss.is_some(),
            summary_call_failed: matches!(out.summary_miss, Some(batch::Miss::Failed(_))),
            fallback_mismatch: None,
            summary_expanded: out.summary_expanded,
            head_end: out.head_end,
            summary_tokens: out.summary_tokens,
        })
    }

    fn restart(&mut self) {
        self.batch = BatchState::default();
        if let Some(micro) = &mut self.micro {
            micro.restart();
        }
    }

    fn rewritten(&mut self) {
        if let Some(micro) = &mut self.micro {
            micro.rewritten();
        }
    }

    fn cooling_down(&mut self, now_ms: u64) -> Result<bool, CompactorFailure> {
        Ok(self.batch.cooling_down(now_ms))
    }

    fn fallback_streak(&mut self) -> Result<u32, CompactorFailure> {
        Ok(self.batch.fallback_streak)
    }
}
