//! One strategy's run of a study session: the turn loop with the virtual clock, the
//! prompt cache and the compactions.
//!
//! The compactions go through the seam ([`Compactor`]): a strategy describes a
//! reference compactor ([`reference`]) and the study runs the compactor a
//! [`CompactorSpec`] makes of it, so a study can measure a compactor under test. The
//! time a pass takes is what the harness observed (the summarizer calls it served),
//! never the compactor's own account.

use super::cache::PromptCache;
use super::handoff;
use super::measure::{Measure, TurnSample};
use super::spec::{StudySpec, StudyStrategy};
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::rng::{self, Stream};
use compactsim_fakes::seam::{BatchRequest, Compactor, CompactorFailure, Harness};
use compactsim_fakes::summarizer::served::{self, Serving};
use compactsim_fakes::summarizer::{Summarizer, SummarizerConfig};
use compactsim_harness::compactor::CompactorSpec;
use compactsim_harness::shapes::{tail_chars, Conversation, ShapeParams, SizeRange};
use compactsim_hermes::bug_set::BugSet;
use compactsim_hermes::compactor::batch::BatchConfig;
use compactsim_hermes::compactor::micro::{MicroCompactor, MicroConfig};
use compactsim_hermes::compactor::reference::Reference;
use compactsim_hermes::compactor::threshold::{self, ThresholdConfig, Thresholds};
use compactsim_model::{tokens_rough_total, BatchTrigger, FactId, Message, MicroOutcome, Role};
use compactsim_reports::study::StrategySeries;
use std::collections::BTreeSet;

/// The case id a study draws its streams from (a study is one case).
pub const STUDY_CASE_ID: u32 = 0;

/// The derived thresholds of a study.
pub fn thresholds(spec: &StudySpec) -> Thresholds {
    threshold::derive(
        spec.context_length,
        ThresholdConfig {
            threshold_per_mille: spec.threshold_per_mille,
            target_ratio_per_mille: spec.target_ratio_per_mille,
            threshold_tokens_cap: None,
            max_output_tokens: None,
        },
    )
}

fn summarizer_config(spec: &StudySpec) -> SummarizerConfig {
    let z = &spec.summarizer;
    SummarizerConfig {
        ratio_per_mille: z.ratio_per_mille,
        min_tokens: z.min_tokens,
        max_tokens: z.max_tokens,
        condense_per_mille: z.condense_per_mille,
        retention_per_mille: z.retention_per_mille,
        error_per_mille: z.error_per_mille,
        empty_per_mille: 0,
        length_per_mille: 0,
        expansion_per_mille: 0,
        tokens_per_s: z.tokens_per_s,
        base_latency_ms: z.base_latency_ms,
    }
}

/// The session of one strategy.
struct Session<'a> {
    spec: &'a StudySpec,
    strategy: StudyStrategy,
    t: Thresholds,
    msgs: Vec<Message>,
    system: Option<Message>,
    ids: IdAlloc,
    summarizer: Summarizer,
    compactor: Box<dyn Compactor>,
    /// The strategy runs a micro pass after every turn.
    micro: bool,
    cache: PromptCache,
    facts_seen: BTreeSet<FactId>,
    clock_ms: u64,
    m: Measure,
}

/// The reference compactor `strategy` describes: Hermes' batch compressor at the
/// study's thresholds and, for the micro strategies, its micro compactor.
pub fn reference(spec: &StudySpec, strategy: StudyStrategy) -> Reference {
    let t = thresholds(spec);
    let micro = match strategy {
        StudyStrategy::Micro | StudyStrategy::MicroGated => {
            let mut c = MicroConfig::with_tail_budget(t.tail_budget_tokens);
            if strategy == StudyStrategy::MicroGated {
                c.reclaim_gate_tokens = spec.micro.reclaim_gate_tokens;
            }
            Some(MicroCompactor::new(c, BugSet::none()))
        }
        StudyStrategy::Batch | StudyStrategy::Handoff => None,
    };
    Reference::new(BatchConfig::new(&t, BugSet::none()), micro)
        .with_context_window(spec.context_length)
}

/// Runs `strategy` over the study's session with the compactor `compactor` makes of
/// the strategy's reference. An `Err` is the compactor failing as a component.
pub fn run(
    spec: &StudySpec,
    strategy: StudyStrategy,
    compactor: &CompactorSpec,
) -> Result<StrategySeries, CompactorFailure> {
    let seed = rng::case_seed(spec.seed, STUDY_CASE_ID);
    let mut conv = Conversation::new(shape(spec, seed), rng::stream(seed, Stream::Shape));
    let t = thresholds(spec);
    let reference = reference(spec, strategy);
    let micro = reference.micro_config().is_some();
    let mut s = Session {
        spec,
        strategy,
        t,
        msgs: Vec::new(),
        system: None,
        ids: IdAlloc::default(),
        summarizer: Summarizer::new(
            summarizer_config(spec),
            rng::stream(seed, Stream::Summarizer),
        ),
        compactor: compactor.make(reference),
        micro,
        cache: PromptCache::default(),
        facts_seen: BTreeSet::new(),
        clock_ms: 0,
        m: Measure::default(),
    };
    s.system = conv.system_prompt(&mut s.ids);
    s.msgs.extend(s.system.clone());
    for turn in 0..spec.turns {
        let rows = conv.next_turn(turn, &mut s.ids);
        s.turn(turn, rows)?;
    }
    let (totals, turns, micro_pass_deltas_tokens) = s.m.finish();
    Ok(StrategySeries {
        name: strategy.name().to_string(),
        description: describe(spec, strategy),
        totals,
        micro_pass_deltas_tokens,
        turns,
    })
}

/// The study's conversation parameters: drawn for its window from the Params stream,
/// then the study's overrides (they draw nothing, so the streams stay put).
pub fn shape(spec: &StudySpec, seed: u64) -> ShapeParams {
    let mut p = ShapeParams::draw_for_window(
        spec.family,
        spec.context_length,
        &mut rng::stream(seed, Stream::Params),
    )
    .expect("spec::parse admits only families with a study window");
    if let Some(g) = spec.growth_per_mille {
        p.features.growth_per_mille = g;
    }
    if let Some(tokens) = spec.turn_tokens_mean {
        let drawn_chars = (tail_chars(spec.context_length) / p.fill_turns.max(1)).max(1);
        let per_mille = (tokens as u64 * 4 * 1000 / drawn_chars as u64).max(1);
        for r in [
            &mut p.user_chars,
            &mut p.call_text_chars,
            &mut p.tool_chars,
            &mut p.reply_chars,
        ] {
            let scale =
                |x: u32| (x as u64 * per_mille / 1000).clamp(1, p.message_chars_max as u64) as u32;
            *r = SizeRange::new(scale(r.lo), scale(r.hi));
        }
    }
    if let Some(tokens) = spec.user_tokens_mean {
        let mean_chars = tokens.saturating_mul(4);
        p.user_chars = SizeRange::new(mean_chars / 2, mean_chars.saturating_add(mean_chars / 2));
    }
    p
}

fn describe(spec: &StudySpec, strategy: StudyStrategy) -> String {
    match strategy {
        StudyStrategy::Batch => "batch compaction when the prompt reaches the trigger".into(),
        StudyStrategy::Micro => {
            "micro-compaction after every turn (one rolling marker), batch as backstop".into()
        }
        StudyStrategy::MicroGated => format!(
            "micro-compaction that splices only when the buffered exchanges reach {} tokens, \
             batch as backstop",
            spec.micro.reclaim_gate_tokens
        ),
        StudyStrategy::Handoff => format!(
            "fresh session with a handoff packet of at most {} tokens once a turn ends at {} \
             tokens or more, batch as backstop",
            spec.handoff.packet_tokens_max, spec.handoff.trigger_tokens
        ),
    }
}

impl Session<'_> {
    /// One turn: the user row, the preflight batch check, one provider call per
    /// assistant row, then the finalizer (micro pass) and the handoff check.
    fn turn(&mut self, turn: u32, rows: Vec<Message>) -> Result<(), CompactorFailure> {
        self.facts_seen
            .extend(rows.iter().flat_map(|m| m.content.facts()));
        let mut rows = rows.into_iter();
        self.msgs.extend(rows.next());
        let mut stall_ms = self.preflight(turn)?;
        for row in rows {
            if row.role == Role::Assistant {
                self.provider_call(row.tokens().rough as u64);
            }
            self.msgs.push(row);
        }
        let finalize_ms = self.finalize(turn)?;
        if self.strategy == StudyStrategy::Handoff
            && tokens_rough_total(&self.msgs) >= self.spec.handoff.trigger_tokens as u64
        {
            stall_ms += self.hand_off();
        }
        let turn_ms = (self.spec.session_s * 1000.0 / self.spec.turns as f64) as u64;
        self.clock_ms += turn_ms + stall_ms + finalize_ms;
        let in_context: BTreeSet<FactId> =
            self.msgs.iter().flat_map(|m| m.content.facts()).collect();
        self.m.turn(TurnSample {
            clock_ms: self.clock_ms,
            messages: self.msgs.len() as u32,
            tokens: tokens_rough_total(&self.msgs),
            trigger_tokens: self.t.trigger_tokens,
            stall_ms,
            finalize_ms,
            facts_introduced: self.facts_seen.len() as u32,
            facts_in_context: in_context.intersection(&self.facts_seen).count() as u32,
        });
        Ok(())
    }

    /// Batch compaction when the prompt is at or over the trigger; its wait in ms. No
    /// `rewritten()` follows: the batch pass is the compactor's own, and a compactor
    /// tells its own micro side (the reference does).
    fn preflight(&mut self, turn: u32) -> Result<u64, CompactorFailure> {
        if tokens_rough_total(&self.msgs) < self.t.trigger_tokens as u64 {
            return Ok(0);
        }
        let request = BatchRequest {
            turn,
            trigger: BatchTrigger::Preflight,
            force: true,
        };
        let (report, ms) = self.pass(|c, msgs, h| c.batch_pass(msgs, request, h))?;
        if report.outcome.committed() {
            self.m.totals.batch_compactions += 1;
        }
        Ok(ms)
    }

    /// One pass of the compactor over the transcript, lent the summarizer and the ids:
    /// what the pass returned and the ms its summarizer calls took, as the harness
    /// served them (not the pass's own account).
    fn pass<T>(
        &mut self,
        pass: impl FnOnce(
            &mut dyn Compactor,
            &mut Vec<Message>,
            &mut Harness<'_>,
        ) -> Result<T, CompactorFailure>,
    ) -> Result<(T, u64), CompactorFailure> {
        let mut serving = Serving::new(&mut self.summarizer);
        let mut harness = Harness {
            summarizer: &mut serving,
            ids: &mut self.ids,
            now_ms: self.clock_ms,
        };
        let out = pass(self.compactor.as_mut(), &mut self.msgs, &mut harness)?;
        Ok((out, served::latency_ms(&serving.into_calls())))
    }

    /// One provider call on the current transcript producing `output` tokens.
    fn provider_call(&mut self, output: u64) {
        let bill = self.cache.request(&self.msgs);
        let pricing = &self.spec.pricing;
        let usd = pricing.call_usd(bill.cached_tokens, bill.uncached_tokens, output);
        let break_usd = pricing.break_usd(bill.recached_tokens);
        self.m.call(&bill, output, usd, break_usd);
    }

    /// The micro pass after the turn, if the strategy has one; its duration in ms.
    fn finalize(&mut self, turn: u32) -> Result<u64, CompactorFailure> {
        if !self.micro {
            return Ok(0);
        }
        let before = tokens_rough_total(&self.msgs) as i64;
        let (ev, latency_ms) = self.pass(|c, msgs, h| c.micro_pass(msgs, turn, h))?;
        if ev.outcome == MicroOutcome::Defrag {
            self.m.totals.micro_defrags += 1;
        } else if ev.outcome == MicroOutcome::Absorbed {
            let after = tokens_rough_total(&self.msgs) as i64;
            self.m.micro_commit(after - before, latency_ms);
        }
        Ok(latency_ms)
    }

    /// Continues in a fresh session; the wait in ms.
    fn hand_off(&mut self) -> u64 {
        let body = &self.msgs[usize::from(self.system.is_some())..];
        let (packet, ms) = handoff::packet(
            body,
            &mut self.summarizer,
            &mut self.ids,
            self.spec.handoff.packet_tokens_max,
        );
        if let Some(packet) = packet {
            self.msgs = self.system.iter().cloned().chain([packet]).collect();
            self.cache.clear();
            self.m.totals.handoffs += 1;
            // A fresh session: the compactor's in-memory state goes with the old one,
            // as at the agent's session reset (`Compactor::restart`). For the reference
            // the batch state is dropped too: the previous summary and the head's decay
            // are read back from the transcript (the packet is a summary row) and the
            // forced pass clears the cooldown anyway; only an auth/network abort flag
            // from before the handoff no longer outlives it, as in a fresh session.
            self.compactor.restart();
        }
        ms
    }
}
