//! The gateway's draws for one case, from its own named stream (`Stream::Gateway`),
//! so the conversation, summarizer and provider streams of a seed are the same as under
//! `batch`: the chat's key form, topic mode, and per inbound message whether it is
//! delivered twice, a `/compress` or `/reset` comes first, and whether and where the
//! process crashes. The case-level knobs are drawn in `engine/draw.rs` (its table); the
//! per-message draws here are runtime draws. A plan's [`GatewayPlan`] replaces the drawn topic mode and the drawn
//! events after the draw (the stream stays where an unplanned case has it).

use crate::engine::draw::GatewayKnobs;
use crate::engine::plan::{GatewayPlan, GatewaySchedule};
use crate::engine::GatewayStreams;
use compactsim_fakes::rng::{between, chance, SimRng};

/// Crash points between the durable writes of a handled turn (and before the ack), in
/// the order a turn reaches them (see `turn.rs`).
pub const CRASH_POINTS: &[CrashPoint] = &CrashPoint::ALL;

/// A point between the durable writes of a handled turn (and before the ack) where the
/// process may crash. Its name is the one traces and `[gateway]` tables use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CrashPoint {
    /// Before the message is handled.
    BeforeTurn,
    /// After the user row is flushed (write 1 of `turn.rs`).
    AfterUserFlush,
    /// After a compacted turn's rows are flushed to the old session (write 2).
    AfterRotateFlush,
    /// After the turn's rows and idempotency record (write 3), before the topic binding.
    AfterWrite,
    /// After every write of the turn, before the ack.
    AfterMapping,
    /// Right before the ack.
    BeforeAck,
}

impl CrashPoint {
    /// Every crash point, in the order a turn reaches them.
    pub const ALL: [CrashPoint; 6] = [
        CrashPoint::BeforeTurn,
        CrashPoint::AfterUserFlush,
        CrashPoint::AfterRotateFlush,
        CrashPoint::AfterWrite,
        CrashPoint::AfterMapping,
        CrashPoint::BeforeAck,
    ];

    /// The name traces and `[gateway]` tables use (`after-write`).
    pub const fn name(self) -> &'static str {
        match self {
            CrashPoint::BeforeTurn => "before-turn",
            CrashPoint::AfterUserFlush => "after-user-flush",
            CrashPoint::AfterRotateFlush => "after-rotate-flush",
            CrashPoint::AfterWrite => "after-write",
            CrashPoint::AfterMapping => "after-mapping",
            CrashPoint::BeforeAck => "before-ack",
        }
    }
}

impl std::fmt::Display for CrashPoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// Per-case chance, per mille at most, that the user sends `/stop` during a turn (it
/// interrupts the turn only after a compaction committed in it).
pub const STOP_PER_MILLE_MAX: u32 = 250;
/// `hygiene_hard_message_limit` of 0.19.0 (hermes-domain §2.2): hygiene compresses a
/// session of this many messages whatever its tokens.
pub const HYGIENE_MESSAGE_LIMIT_DEFAULT: u32 = 5_000;
/// The lowest hard message limit a case draws (a user's low setting; PR #4750 shipped
/// 400), so the forced path is reached on purpose, not only by chance.
pub const HYGIENE_MESSAGE_LIMIT_MIN: u32 = 60;
/// The highest drawn low limit (PR #4750's value).
pub const HYGIENE_MESSAGE_LIMIT_LOW_MAX: u32 = 400;
/// Per mille of cases that keep the default limit.
pub const HYGIENE_DEFAULT_PER_MILLE: u32 = 500;
/// Transitions into an agent turn a mid-turn crash may fall at most.
pub const MID_TURN_STEP_MAX: u32 = 12;

/// Where a crash falls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crash {
    /// At transition `n` of the agent turn (before it is observed).
    MidTurn(u32),
    /// At one of the [`CrashPoint`]s.
    At(CrashPoint),
}

/// What happens around one inbound message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InboundFaults {
    /// The platform delivers the message a second time after it is handled.
    pub duplicate: bool,
    pub crash: Option<Crash>,
    /// A clean restart (deploy) before the message.
    pub restart: bool,
    /// The user sends `/compress` first.
    pub compress: bool,
    /// The user sends `/reset` first.
    pub reset: bool,
    /// The user sends `/stop` while the turn runs ([`compactsim_hermes::agent::StopRequest`]).
    pub stop: bool,
}

/// The case's gateway configuration and fault stream.
pub struct FaultPlan {
    /// The chat's session key.
    pub key: String,
    /// Telegram DM topic mode: the key has a topic binding.
    pub topic: bool,
    rng: SimRng,
    /// The `/stop` draws (`Stream::GatewayStop`).
    stop_rng: SimRng,
    stop_per_mille: u32,
    duplicate_per_mille: u32,
    crash_per_mille: u32,
    restart_per_mille: u32,
    command_per_mille: u32,
    /// Session hygiene compresses a session of at least this many messages
    /// (`Stream::GatewayHygiene`).
    pub hygiene_message_limit: u32,
    /// A plan's explicit schedule, used instead of the draws.
    schedule: Option<GatewaySchedule>,
    /// The events of every turn so far, as used (what a recording writes down).
    pub log: GatewaySchedule,
}

impl FaultPlan {
    /// The plan of a case's drawn knobs and streams (its `draw::Case`'s `gateway` and
    /// `streams.gateway`), with `plan`'s overrides.
    pub fn new(
        drawn: GatewayKnobs,
        streams: GatewayStreams,
        plan: Option<&GatewayPlan>,
    ) -> FaultPlan {
        let topic = plan.and_then(|p| p.topic).unwrap_or(drawn.topic);
        let (chat, thread) = (drawn.chat, drawn.thread);
        let key = if topic {
            format!("agent:main:telegram:dm:{chat}:{thread}")
        } else {
            format!("agent:main:telegram:dm:{chat}")
        };
        let hygiene_message_limit = plan
            .and_then(|p| p.hygiene_message_limit)
            .unwrap_or(drawn.hygiene_message_limit);
        FaultPlan {
            key,
            topic,
            rng: streams.messages,
            stop_rng: streams.stop,
            stop_per_mille: drawn.stop_per_mille,
            duplicate_per_mille: drawn.duplicate_per_mille,
            crash_per_mille: drawn.crash_per_mille,
            restart_per_mille: drawn.restart_per_mille,
            command_per_mille: drawn.command_per_mille,
            hygiene_message_limit,
            schedule: plan.and_then(|p| p.schedule.clone()),
            log: GatewaySchedule::default(),
        }
    }

    /// The events of turn `turn` (turns in ascending order): the plan's schedule, else
    /// the draws. Logged.
    pub fn next_inbound(&mut self, turn: u32) -> InboundFaults {
        let drawn = self.draw_inbound();
        let used = match &self.schedule {
            Some(s) => s.at(turn),
            None => drawn,
        };
        self.log.push(turn, used);
        used
    }

    /// The draws for the next inbound message (always the same number of draws).
    fn draw_inbound(&mut self) -> InboundFaults {
        let duplicate = chance(&mut self.rng, self.duplicate_per_mille);
        let crashes = chance(&mut self.rng, self.crash_per_mille);
        let mid = chance(&mut self.rng, 500);
        let step = between(&mut self.rng, 0, MID_TURN_STEP_MAX);
        let point = between(&mut self.rng, 0, CRASH_POINTS.len() as u32 - 1) as usize;
        let restart = chance(&mut self.rng, self.restart_per_mille);
        let compress = chance(&mut self.rng, self.command_per_mille);
        let reset = chance(&mut self.rng, self.command_per_mille / 3);
        let stop = chance(&mut self.stop_rng, self.stop_per_mille);
        let crash = crashes.then_some(if mid {
            Crash::MidTurn(step)
        } else {
            Crash::At(CRASH_POINTS[point])
        });
        InboundFaults {
            duplicate,
            crash,
            restart,
            compress,
            reset,
            stop,
        }
    }
}
