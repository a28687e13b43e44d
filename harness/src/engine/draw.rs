//! Drawing a case from its seed, in one place: [`draw`] is the entry, [`KNOBS`] the table
//! of every knob a case draws (its name, default, stream and range, and what it sets),
//! and every case-level draw goes through a row of it ([`Draw`]'s methods take a row's
//! name, draw from the row's stream within the row's range, and panic on a name that is
//! not a row), so the table cannot drift from the code. Adding a knob is one row in
//! [`KNOBS`] and one call where it is used; give it its own stream (`fakes/src/rng.rs`)
//! when an existing stream's draws must not move.
//!
//! The route of a seed: each knob is drawn from its own named stream of the case seed
//! (`rng::stream(case_seed, stream)`), in the order of the rows within that stream; a
//! stream's draws never depend on another stream's, so adding a row to one stream
//! reshuffles no other. A plan's overrides, the `--profile` and the `--session-mode`
//! apply after the draws (no stream moves). Some rows are drawn only in some cases
//! (a strategy, a family, a switch that is on); the rows below each other in one stream
//! keep that order.
//!
//! Every world takes its case from [`draw`] (the micro world, the agent loop's
//! `CaseLoop::open`, the gateway world), and so do replay, `describe` and recording:
//! there is no other door. It draws only the rows the case's strategy uses, and hands
//! the runtime streams over in [`LiveStreams`].
//!
//! Composite rows (`shape`, `provider`, `summarizer`) draw a whole configuration by the
//! function their range names; its ranges are documented there (the family recipes in
//! `harness/src/shapes/`, `fakes/src/provider/mod.rs`, `fakes/src/summarizer/config.rs`).
//!
//! Runtime draws are not knobs: they happen turn by turn, from streams positioned after
//! the knob draws ([`Draw::take`] hands them over):
//! - `Shape`: the conversation's turns (`shapes/conversation.rs`, via `plan::Source`);
//! - `Summarizer`: each summary call's size, fault and latency (`fakes/src/summarizer`);
//! - `SummarizerOverrun`: each overrun of a summary call's `max_tokens`
//!   (`fakes/src/summarizer`, `Summarizer::with_overrun`);
//! - `Provider`: each main-model call's faults (`fakes/src/provider`);
//! - `Faults`: a process restart per turn of a micro case (`engine/mod.rs`);
//! - `LoopRestarts`: a process restart per turn of a `both` case (`loop_restarts.rs`;
//!   opened for `batch` too, which draws nothing from it);
//! - `Gateway`, `GatewayStop`: each inbound message's duplicate, crash, restart,
//!   commands and `/stop` (`gateway/faults.rs`, `FaultPlan::next_inbound`);
//! - the agent's think times, from the drawn `agent.think_seed` (`hermes` agent loop).

use super::agent_setup::{
    AgentSetup, HEAVY_OVERHEAD_PER_MILLE, HEAVY_OVERHEAD_REAL_PER_MILLE, HEAVY_SCHEMAS_PER_MILLE,
    IN_PLACE_PER_MILLE, OVERHEAD_PER_MILLE, OVERHEAD_REAL_PER_MILLE, RESUME_FILL_PER_MILLE,
    RESUME_PER_MILLE, THINK_SCALES_MS,
};
use super::fault_mix::{FaultMix, FLAKY_LINK_DISCONNECT_PER_MILLE, FLAKY_LINK_ON_PER_MILLE};
use super::gateway::faults::{
    HYGIENE_DEFAULT_PER_MILLE, HYGIENE_MESSAGE_LIMIT_DEFAULT, HYGIENE_MESSAGE_LIMIT_LOW_MAX,
    HYGIENE_MESSAGE_LIMIT_MIN, STOP_PER_MILLE_MAX,
};
use super::loop_restarts::MARKER_RESTART_ON_PER_MILLE;
use super::opening_paste::{OPENING_PASTE_ON_PER_MILLE, OPENING_PASTE_PER_MILLE_OF_TRIGGER};
use super::plan::CasePlan;
use super::setup::{CaseSetup, CaseSpec, GatewayStreams, LiveStreams, SummarizerStreams};
use super::summary_storm::{SUMMARY_STORM_ERROR_PER_MILLE, SUMMARY_STORM_ON_PER_MILLE};
use crate::shapes::{self, Family, OpeningPaste, ShapeParams};
use compactsim_fakes::provider::ProviderConfig;
use compactsim_fakes::rng::{self, between, chance, next_seed, weighted, SimRng, Stream};
use compactsim_fakes::summarizer::{SummarizerConfig, OVERRUN_PER_MILLE_RANGE};
use compactsim_hermes::compactor::micro::MicroConfig;
use compactsim_hermes::compactor::threshold::{self, ThresholdConfig};
use compactsim_hermes::strategy::Strategy;
use compactsim_model::tokens::chars_for_rough_tokens;

/// How a knob is drawn, and so the values it can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Range {
    /// A uniform integer in `lo..=hi` ([`Draw::between`]).
    Between(u32, u32),
    /// Yes with this chance, per mille ([`Draw::chance`]).
    Chance(u32),
    /// On with chance `on_per_mille`, then a uniform integer in `lo..=hi`; off (the
    /// default) otherwise ([`Draw::switch`]).
    Switch { on_per_mille: u32, lo: u32, hi: u32 },
    /// An index picked with these weights ([`Draw::pick`]).
    Weighted(&'static [u32]),
    /// A fresh 64-bit seed ([`Draw::seed`]).
    Seed,
    /// A whole configuration drawn by the named function ([`Draw::composite`]).
    Composite(&'static str),
}

impl Range {
    /// Whether `value` (as [`Draw`] records it: a switch that is off records 0, a chance
    /// 0 or 1) is a value of this range.
    pub fn contains(&self, value: u64) -> bool {
        match *self {
            Range::Between(lo, hi) => (lo as u64..=hi.max(lo) as u64).contains(&value),
            Range::Chance(_) => value <= 1,
            Range::Switch { lo, hi, .. } => {
                value == 0 || (lo as u64..=hi.max(lo) as u64).contains(&value)
            }
            Range::Weighted(w) => value < w.len().max(1) as u64,
            Range::Seed => true,
            Range::Composite(_) => value == 0,
        }
    }

    fn render(&self) -> String {
        match *self {
            Range::Between(lo, hi) => format!("{lo}..={hi}"),
            Range::Chance(p) => format!("yes in {p} ‰"),
            Range::Switch {
                on_per_mille,
                lo,
                hi,
            } => format!("on in {on_per_mille} ‰: {lo}..={hi}"),
            Range::Weighted(w) => {
                let w: Vec<String> = w.iter().map(u32::to_string).collect();
                format!("index, weights {}", w.join(":"))
            }
            Range::Seed => "u64".to_string(),
            Range::Composite(f) => format!("`{f}`"),
        }
    }
}

/// One row of the table: a knob a case draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Knob {
    pub name: &'static str,
    /// Its value when it is not drawn (or off), or `—` when every case draws it.
    pub default: &'static str,
    pub stream: Stream,
    pub range: Range,
    /// What it sets, and when it is drawn.
    pub sets: &'static str,
}

const fn knob(
    name: &'static str,
    default: &'static str,
    stream: Stream,
    range: Range,
    sets: &'static str,
) -> Knob {
    Knob {
        name,
        default,
        stream,
        range,
        sets,
    }
}

const fn between_of((lo, hi): (u32, u32)) -> Range {
    Range::Between(lo, hi)
}

const fn switch_of(on_per_mille: u32, (lo, hi): (u32, u32)) -> Range {
    Range::Switch {
        on_per_mille,
        lo,
        hi,
    }
}

const FAMILY_WEIGHTS: [u32; Family::ALL.len()] = {
    let mut w = [0; Family::ALL.len()];
    let mut i = 0;
    while i < w.len() {
        w[i] = Family::ALL[i].weight();
        i += 1;
    }
    w
};

const THINK_WEIGHTS: [u32; THINK_SCALES_MS.len()] = {
    let mut w = [0; THINK_SCALES_MS.len()];
    let mut i = 0;
    while i < w.len() {
        w[i] = THINK_SCALES_MS[i].1;
        i += 1;
    }
    w
};

const GIANT_PASTE: shapes::SizeRange = shapes::GIANT_PASTE_HI_PER_MILLE;
const MARATHON_TURN: shapes::SizeRange = shapes::MARATHON_TURN_PER_MILLE;
const MARATHON_TAIL: shapes::SizeRange = shapes::MARATHON_TAIL_PER_MILLE;

/// Every knob a case draws, grouped by stream, each stream's rows in draw order.
#[rustfmt::skip]
pub const KNOBS: &[Knob] = &[
    // Params
    knob("family", "—", Stream::Params, Range::Weighted(&FAMILY_WEIGHTS),
        "the conversation family, `Family::ALL` order (plan: `family`)"),
    knob("shape", "—", Stream::Params, Range::Composite("ShapeParams::draw"),
        "the family's window and sizes (its recipe in `shapes/<family>.rs`; plan: shape overrides)"),
    knob("micro.every_turn", "—", Stream::Params, Range::Chance(800),
        "micro passes run every turn (plan: `micro`)"),
    knob("micro.every_n_turns", "1", Stream::Params, Range::Between(2, 3),
        "else every this many turns"),
    // Summarizer
    knob("summarizer", "—", Stream::Summarizer, Range::Composite("SummarizerConfig::draw"),
        "the fake summarizer's sizes, fault rates, latency (plan: `summarizer`)"),
    // SummarizerOverrun
    knob("summarizer.overrun_per_mille", "—", Stream::SummarizerOverrun,
        between_of(OVERRUN_PER_MILLE_RANGE),
        "chance a summary call that asked for `max_tokens` and must shrink to fit runs over it (`finish_reason: length`)"),
    // Faults
    knob("restart_per_mille", "0", Stream::Faults, switch_of(300, (10, 80)),
        "chance per turn of a process restart (plan: `restart_per_mille`)"),
    // Swarm
    knob("swarm.giant_paste", "off", Stream::Swarm,
        switch_of(shapes::GIANT_PASTE_ON_PER_MILLE, (GIANT_PASTE.lo, GIANT_PASTE.hi)),
        "huge-prompts only: the largest paste, per mille of the tail budget"),
    knob("swarm.marathon", "off", Stream::Swarm,
        switch_of(shapes::MARATHON_ON_PER_MILLE, (MARATHON_TURN.lo, MARATHON_TURN.hi)),
        "chance a turn is a marathon, per mille"),
    knob("swarm.marathon_tail", "—", Stream::Swarm,
        Range::Between(MARATHON_TAIL.lo, MARATHON_TAIL.hi),
        "with a marathon: its tool output, per mille of the tail budget"),
    // OpeningPaste
    knob("opening_paste", "off", Stream::OpeningPaste, Range::Chance(OPENING_PASTE_ON_PER_MILLE),
        "`batch`, `both`: the first prompt is a giant paste (fresh sessions only)"),
    knob("opening_paste.per_mille_of_trigger", "—", Stream::OpeningPaste,
        between_of(OPENING_PASTE_PER_MILLE_OF_TRIGGER),
        "with a paste: its rough size, per mille of the trigger"),
    knob("opening_paste.seed", "—", Stream::OpeningPaste, Range::Seed,
        "with a paste: the seed of its text"),
    // SummaryStorm
    knob("summary_storm", "off", Stream::SummaryStorm,
        switch_of(SUMMARY_STORM_ON_PER_MILLE, SUMMARY_STORM_ERROR_PER_MILLE),
        "`both`: the summarizer's error rate at least this, per mille"),
    // Provider
    knob("provider", "—", Stream::Provider, Range::Composite("ProviderConfig::draw"),
        "agent loop: the fake provider's error shapes, fault rates, latency (plan: `provider`)"),
    knob("agent.heavy_schemas", "no", Stream::Provider, Range::Chance(HEAVY_SCHEMAS_PER_MILLE),
        "agent loop: heavy tool schemas (the next two rows' heavy ranges)"),
    knob("agent.overhead_per_mille_of_trigger", "—", Stream::Provider,
        between_of(OVERHEAD_PER_MILLE), "agent loop: request overhead (plan: `agent`)"),
    knob("agent.heavy.overhead_per_mille_of_trigger", "—", Stream::Provider,
        between_of(HEAVY_OVERHEAD_PER_MILLE), "with heavy schemas, instead"),
    knob("agent.overhead_real_per_mille", "—", Stream::Provider,
        between_of(OVERHEAD_REAL_PER_MILLE), "agent loop: real tokens per rough overhead token"),
    knob("agent.heavy.overhead_real_per_mille", "—", Stream::Provider,
        between_of(HEAVY_OVERHEAD_REAL_PER_MILLE), "with heavy schemas, instead"),
    knob("agent.in_place", "—", Stream::Provider, Range::Chance(IN_PLACE_PER_MILLE),
        "agent loop: in-place compaction, not rotation (`--session-mode`)"),
    knob("agent.think_scale", "—", Stream::Provider, Range::Weighted(&THINK_WEIGHTS),
        "agent loop: the think time's scale, `THINK_SCALES_MS` order"),
    knob("agent.think_seed", "—", Stream::Provider, Range::Seed,
        "agent loop: the seed of the think times"),
    knob("agent.resume_fill_per_mille", "0", Stream::Provider,
        switch_of(RESUME_PER_MILLE, RESUME_FILL_PER_MILLE),
        "agent loop: a resumed session's fill, per mille of the trigger"),
    // FaultMix
    knob("fault_mix.flaky_link", "off", Stream::FaultMix,
        switch_of(FLAKY_LINK_ON_PER_MILLE, FLAKY_LINK_DISCONNECT_PER_MILLE),
        "agent loop: disconnects at least this, per mille; overflows as disconnects"),
    // MarkerRestart
    knob("marker_restart", "off", Stream::MarkerRestart, Range::Chance(MARKER_RESTART_ON_PER_MILLE),
        "`both`: a restart right after the first micro marker"),
    // Gateway
    knob("gateway.chat", "—", Stream::Gateway, Range::Between(1, 9_999),
        "`gateway`: the chat id of the session key"),
    knob("gateway.topic", "—", Stream::Gateway, Range::Chance(500),
        "`gateway`: Telegram DM topic mode (plan: `gateway.topic`)"),
    knob("gateway.thread", "1", Stream::Gateway, Range::Between(1, 99),
        "with topic mode: the thread of the key"),
    knob("gateway.duplicate_per_mille", "—", Stream::Gateway, Range::Between(0, 120),
        "`gateway`: chance an inbound message is delivered twice"),
    knob("gateway.crash_per_mille", "—", Stream::Gateway, Range::Between(0, 80),
        "`gateway`: chance the process crashes around a message"),
    knob("gateway.restart_per_mille", "—", Stream::Gateway, Range::Between(0, 60),
        "`gateway`: chance of a clean restart before a message"),
    knob("gateway.command_per_mille", "—", Stream::Gateway, Range::Between(0, 30),
        "`gateway`: chance of `/compress` (a third of it `/reset`) first"),
    // GatewayStop
    knob("gateway.stop_per_mille", "—", Stream::GatewayStop, Range::Between(0, STOP_PER_MILLE_MAX),
        "`gateway`: chance the user sends `/stop` during a turn"),
    // GatewayHygiene
    knob("gateway.hygiene_low_limit", "—", Stream::GatewayHygiene,
        Range::Between(HYGIENE_MESSAGE_LIMIT_MIN, HYGIENE_MESSAGE_LIMIT_LOW_MAX),
        "`gateway`: a low hard message limit of session hygiene"),
    knob("gateway.hygiene_default_limit", "5000", Stream::GatewayHygiene,
        Range::Chance(HYGIENE_DEFAULT_PER_MILLE),
        "`gateway`: keep the default limit instead (plan: `gateway.hygiene_message_limit`)"),
];

const _: () = assert!(HYGIENE_MESSAGE_LIMIT_DEFAULT == 5_000, "the row's default");

/// The row named `name`; panics when there is none (a knob drawn outside the table).
pub fn row(name: &str) -> &'static Knob {
    KNOBS
        .iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| panic!("knob `{name}` is not a row of draw::KNOBS"))
}

/// The table as Markdown rows (`| knob | default | stream | range |`), one per knob.
pub fn knob_table_markdown() -> String {
    KNOBS
        .iter()
        .map(|k| {
            format!(
                "| `{}`: {} | {} | {:?} | {} |\n",
                k.name,
                k.sets.replace('|', "\\|"),
                k.default,
                k.stream,
                k.range.render()
            )
        })
        .collect()
}

/// The knob draws of one case: its streams, each opened at its first draw, and every
/// draw through a row of [`KNOBS`].
pub struct Draw {
    seed: u64,
    streams: Vec<(Stream, SimRng)>,
}

impl Draw {
    /// The draws of the case whose seed is `case_seed`, no stream opened yet.
    pub fn new(case_seed: u64) -> Draw {
        Draw {
            seed: case_seed,
            streams: Vec::new(),
        }
    }

    fn rng(&mut self, stream: Stream) -> &mut SimRng {
        let i = match self.streams.iter().position(|(s, _)| *s == stream) {
            Some(i) => i,
            None => {
                self.streams.push((stream, rng::stream(self.seed, stream)));
                self.streams.len() - 1
            }
        };
        &mut self.streams[i].1
    }

    /// `stream`, positioned after the knobs drawn from it (for its runtime draws).
    pub fn take(&mut self, stream: Stream) -> SimRng {
        self.rng(stream);
        let i = self.streams.iter().position(|(s, _)| *s == stream);
        self.streams.remove(i.expect("opened")).1
    }

    fn row_of(name: &str, kind: &str, ok: fn(&Range) -> bool) -> &'static Knob {
        let k = row(name);
        assert!(ok(&k.range), "knob `{name}` is {:?}, not {kind}", k.range);
        k
    }

    /// Knob `name`, a [`Range::Between`].
    pub fn between(&mut self, name: &str) -> u32 {
        let k = Self::row_of(name, "Between", |r| matches!(r, Range::Between(..)));
        let Range::Between(lo, hi) = k.range else {
            unreachable!()
        };
        let v = between(self.rng(k.stream), lo, hi);
        record(k, v as u64);
        v
    }

    /// Knob `name`, a [`Range::Chance`].
    pub fn chance(&mut self, name: &str) -> bool {
        let k = Self::row_of(name, "Chance", |r| matches!(r, Range::Chance(_)));
        let Range::Chance(p) = k.range else {
            unreachable!()
        };
        let v = chance(self.rng(k.stream), p);
        record(k, v as u64);
        v
    }

    /// Knob `name`, a [`Range::Switch`]: `None` when it is off.
    pub fn switch(&mut self, name: &str) -> Option<u32> {
        let k = Self::row_of(name, "Switch", |r| matches!(r, Range::Switch { .. }));
        let Range::Switch {
            on_per_mille,
            lo,
            hi,
        } = k.range
        else {
            unreachable!()
        };
        let rng = self.rng(k.stream);
        let v = chance(rng, on_per_mille).then(|| between(rng, lo, hi));
        record(k, v.unwrap_or(0) as u64);
        v
    }

    /// Knob `name`, a [`Range::Weighted`]: the index picked.
    pub fn pick(&mut self, name: &str) -> usize {
        let k = Self::row_of(name, "Weighted", |r| matches!(r, Range::Weighted(_)));
        let Range::Weighted(w) = k.range else {
            unreachable!()
        };
        let v = weighted(self.rng(k.stream), w);
        record(k, v as u64);
        v
    }

    /// Knob `name`, a [`Range::Seed`].
    pub fn seed(&mut self, name: &str) -> u64 {
        let k = Self::row_of(name, "Seed", |r| matches!(r, Range::Seed));
        let v = next_seed(self.rng(k.stream));
        record(k, v);
        v
    }

    /// Knob `name`, a [`Range::Composite`], drawn by `f` from the row's stream.
    pub fn composite<T>(&mut self, name: &str, f: impl FnOnce(&mut SimRng) -> T) -> T {
        let k = Self::row_of(name, "Composite", |r| matches!(r, Range::Composite(_)));
        record(k, 0);
        f(self.rng(k.stream))
    }
}

#[cfg(test)]
thread_local! {
    static DRAWN: std::cell::RefCell<Vec<(Knob, u64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Test builds record every knob drawn on this thread ([`drawn_by`]).
fn record(_knob: &Knob, _value: u64) {
    #[cfg(test)]
    DRAWN.with(|d| d.borrow_mut().push((*_knob, _value)));
}

/// Every knob `f` drew on this thread, with its value, in draw order.
#[cfg(test)]
pub fn drawn_by(f: impl FnOnce()) -> Vec<(Knob, u64)> {
    DRAWN.with(|d| d.borrow_mut().clear());
    f();
    DRAWN.with(|d| std::mem::take(&mut *d.borrow_mut()))
}

/// Everything a case draws from its seed before its first turn: the knobs of its
/// strategy and its live streams. Only the rows its strategy uses are drawn (a stream
/// no world of the strategy reads is not opened).
pub struct Case {
    pub setup: CaseSetup,
    /// The agent loop's setup (strategies `batch`, `both`, `gateway`).
    pub agent: Option<AgentSetup>,
    /// The marker-restart knob (`both`).
    pub marker_restart: bool,
    /// The gateway's knobs (`gateway`).
    pub gateway: Option<GatewayKnobs>,
    /// The streams of the runtime draws, positioned after the knobs.
    pub streams: LiveStreams,
}

/// THE entry: everything `spec`'s case draws from its seed, the plan's overrides, the
/// profile and the session mode applied.
pub fn draw(spec: &CaseSpec) -> Case {
    let mut d = Draw::new(spec.case_seed());
    let agent = spec
        .strategy
        .loop_options()
        .map(|_| agent_for(spec, &mut d));
    let fresh = agent
        .as_ref()
        .is_some_and(|a| a.params.resume_fill_per_mille == 0);
    let setup = setup(spec, &mut d, fresh);
    let both = matches!(spec.strategy, Strategy::Both(_));
    let marker_restart = both && d.chance("marker_restart");
    let gateway = matches!(spec.strategy, Strategy::Gateway(_)).then(|| gateway(&mut d));
    let streams = LiveStreams {
        summarizer: SummarizerStreams {
            calls: d.take(Stream::Summarizer),
            overrun: d.take(Stream::SummarizerOverrun),
        },
        faults: d.take(Stream::Faults),
        provider: agent.is_some().then(|| d.take(Stream::Provider)),
        loop_restarts: matches!(spec.strategy, Strategy::Batch(_) | Strategy::Both(_))
            .then(|| d.take(Stream::LoopRestarts)),
        gateway: gateway.is_some().then(|| GatewayStreams {
            messages: d.take(Stream::Gateway),
            stop: d.take(Stream::GatewayStop),
        }),
    };
    Case {
        setup,
        agent,
        marker_restart,
        gateway,
        streams,
    }
}

/// The case-level parameters of `spec` (`fresh`: an agent-loop session that is not
/// resumed).
fn setup(spec: &CaseSpec, d: &mut Draw, fresh: bool) -> CaseSetup {
    let empty = CasePlan::default();
    let plan = spec.plan.as_deref().unwrap_or(&empty);
    let drawn_family = Family::ALL[d.pick("family")];
    let family = plan.family.unwrap_or(drawn_family);
    let mut shape = d.composite("shape", |rng| ShapeParams::draw(family, rng));
    swarm(&mut shape, d);
    plan.apply_shape(&mut shape);
    shape.features.opening_paste = opening_paste(spec, d, fresh, shape.context_length);
    let thresholds = threshold::derive(shape.context_length, ThresholdConfig::V0_19_0);
    let mut micro = MicroConfig::with_tail_budget(thresholds.tail_budget_tokens);
    micro.every_n_turns = if d.chance("micro.every_turn") {
        1
    } else {
        d.between("micro.every_n_turns")
    };
    if let Some(p) = spec.profile {
        p.tune_micro(&mut micro, shape.context_length);
    }
    plan.micro.apply(&mut micro);
    let storm = summary_storm(spec, d);
    let summarizer = plan.summarizer.apply(super::summary_storm::applied(
        storm,
        d.composite("summarizer", SummarizerConfig::draw),
    ));
    let summarizer_overrun_per_mille = d.between("summarizer.overrun_per_mille");
    let drawn_restart_per_mille = d.switch("restart_per_mille").unwrap_or(0);
    let restart_per_mille = plan.restart_per_mille.unwrap_or(drawn_restart_per_mille);
    CaseSetup {
        shape,
        thresholds,
        summarizer,
        summarizer_overrun_per_mille,
        micro,
        restart_per_mille,
    }
}

/// The swarm knobs of `shape` (giant pastes, then marathon turns).
pub(crate) fn swarm(shape: &mut ShapeParams, d: &mut Draw) {
    if shape.family == Family::HugePrompts {
        if let Some(hi_per_mille) = d.switch("swarm.giant_paste") {
            shapes::giant_pastes(shape, hi_per_mille);
        }
    }
    if let Some(per_mille) = d.switch("swarm.marathon") {
        let tail_per_mille = d.between("swarm.marathon_tail");
        shapes::marathon(shape, per_mille, tail_per_mille);
    }
}

/// The opening paste of `spec`'s case with a window of `context_length` tokens; `None`
/// when the knob is off, the session is not `fresh` (resumed) or the case runs no
/// agent loop.
fn opening_paste(
    spec: &CaseSpec,
    d: &mut Draw,
    fresh: bool,
    context_length: u32,
) -> Option<OpeningPaste> {
    let options = match spec.strategy {
        Strategy::Batch(o) | Strategy::Both(o) => o,
        Strategy::Micro | Strategy::Gateway(_) => return None,
    };
    let on = d.chance("opening_paste");
    if !on || !fresh {
        return None;
    }
    let per_mille = d.between("opening_paste.per_mille_of_trigger");
    let trigger = threshold::derive(context_length, options.era.threshold_config()).trigger_tokens;
    let tokens = (trigger as u64 * per_mille as u64 / 1000) as u32;
    Some(OpeningPaste {
        chars: chars_for_rough_tokens(tokens),
        seed: d.seed("opening_paste.seed"),
    })
}

/// The summary storm's error rate of `spec`'s case (`both`); `None` when it is off.
pub(crate) fn summary_storm(spec: &CaseSpec, d: &mut Draw) -> Option<u32> {
    if !matches!(spec.strategy, Strategy::Both(_)) {
        return None;
    }
    d.switch("summary_storm")
}

/// The agent-loop setup as drawn (no plan, no session mode); `d`'s Provider stream is
/// then positioned for the provider's per-call draws.
pub(crate) fn agent(d: &mut Draw) -> AgentSetup {
    let mut provider = d.composite("provider", ProviderConfig::draw);
    fault_mix(d).apply_provider(&mut provider);
    let heavy = d.chance("agent.heavy_schemas");
    let (overhead, real) = if heavy {
        (
            "agent.heavy.overhead_per_mille_of_trigger",
            "agent.heavy.overhead_real_per_mille",
        )
    } else {
        (
            "agent.overhead_per_mille_of_trigger",
            "agent.overhead_real_per_mille",
        )
    };
    let overhead_per_mille_of_trigger = d.between(overhead);
    let overhead_real_per_mille = d.between(real);
    let in_place = d.chance("agent.in_place");
    let scale = THINK_SCALES_MS[d.pick("agent.think_scale")].0;
    let think_seed = d.seed("agent.think_seed");
    let resume_fill_per_mille = d.switch("agent.resume_fill_per_mille").unwrap_or(0);
    let params = compactsim_hermes::agent::AgentParams {
        overhead_per_mille_of_trigger,
        overhead_real_per_mille,
        in_place,
        think_ms: (scale / 2, scale * 2),
        think_seed,
        resume_fill_per_mille,
    };
    AgentSetup { provider, params }
}

/// [`agent`], then the plan's agent and provider overrides (the stream is positioned as
/// without them), then the run's `--session-mode`.
fn agent_for(spec: &CaseSpec, d: &mut Draw) -> AgentSetup {
    let mut setup = agent(d);
    if let Some(plan) = spec.plan.as_deref() {
        setup.provider = plan.provider.apply(setup.provider);
        setup.params = plan.agent.apply(setup.params);
    }
    if let Some(mode) = spec.strategy.loop_options().and_then(|o| o.session_mode) {
        setup.params.in_place = mode.in_place();
    }
    setup
}

/// The fault mix of a case.
pub(crate) fn fault_mix(d: &mut Draw) -> FaultMix {
    FaultMix {
        disconnect_per_mille: d.switch("fault_mix.flaky_link"),
    }
}

/// The gateway's knobs of one case, as drawn (a plan's overrides apply after).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GatewayKnobs {
    pub chat: u32,
    pub topic: bool,
    /// The topic's thread (1 without topic mode).
    pub thread: u32,
    pub duplicate_per_mille: u32,
    pub crash_per_mille: u32,
    pub restart_per_mille: u32,
    pub command_per_mille: u32,
    pub stop_per_mille: u32,
    pub hygiene_message_limit: u32,
}

/// The gateway's knobs; `d`'s `Gateway` and `GatewayStop` streams are then positioned
/// for the per-message draws.
fn gateway(d: &mut Draw) -> GatewayKnobs {
    let chat = d.between("gateway.chat");
    let topic = d.chance("gateway.topic");
    let thread = if topic {
        d.between("gateway.thread")
    } else {
        1
    };
    let duplicate_per_mille = d.between("gateway.duplicate_per_mille");
    let crash_per_mille = d.between("gateway.crash_per_mille");
    let restart_per_mille = d.between("gateway.restart_per_mille");
    let command_per_mille = d.between("gateway.command_per_mille");
    let stop_per_mille = d.between("gateway.stop_per_mille");
    let low = d.between("gateway.hygiene_low_limit");
    let hygiene_message_limit = if d.chance("gateway.hygiene_default_limit") {
        HYGIENE_MESSAGE_LIMIT_DEFAULT
    } else {
        low
    };
    GatewayKnobs {
        chat,
        topic,
        thread,
        duplicate_per_mille,
        crash_per_mille,
        restart_per_mille,
        command_per_mille,
        stop_per_mille,
        hygiene_message_limit,
    }
}

#[cfg(test)]
#[path = "draw_tests.rs"]
mod tests;
