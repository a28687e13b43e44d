use crate::class::{classify, pure_append, unchanged, EventClass};
use crate::{Invariant, InvariantInfo, OracleConfig};
use compactsim_model::tokens::{real_tokens, rough_tokens};
use compactsim_model::{
    tokens_real_total, tokens_rough_total, ContentKind, Event, Message, Role, Transition, Witness,
};

/// A compactor does its job (universal): once the transcript is over the compactor's own
/// declared trigger, at most [`EFFICACY_PASSES_MAX`] of its passes in a row leave it there
/// unchanged; and its passes do not leave a transcript known to be over the model's window
/// there (no request could be sent: the micro world ends the case at the window, the
/// agent loop's overflow recovery ends in `compression_exhausted`) beyond the retries the
/// world gives (`OracleConfig::window_passes_max`) — unless the case shows why no
/// compactor could.
///
/// Judged from observations only. The size of the transcript is its rough token count
/// (`ceil(chars / 4)` per row, the protocol's count); the provider's ground truth adds
/// that a request it refused as over the window is over, until the list changes. The
/// trigger is the adapter's declaration (hello `capabilities.trigger`: tokens, or a
/// percentage of the window; `capabilities.trigger_passes`: which passes keep it), else
/// the case's window; a declaration is configuration, like the window, never a label. Only
/// a held pass that changes the list and leaves it under the trigger ends a streak — a
/// failed turn that rolls rows back, a session reset or a restart shrink the transcript
/// without the compactor doing its job, so the passes before and after them count
/// together.
///
/// Excused (quiet): every summarizer call the harness served during the streak's passes
/// failed (at least one was served), or what no compactor may fold — system rows, the user
/// text of user rows, the turn in progress, and against the window the request overhead
/// the last provider reading showed — is alone at or over the limit (against the window,
/// the window less the reply's reserve, [`REPLY_RESERVE_PER_MILLE`]).
#[derive(Clone, Debug)]
pub struct CompactionEffective {
    /// Tokens at or over which the compactor promised to compact (0: not judged).
    trigger: u64,
    /// The model's window in tokens (0: unknown, the window rule is off).
    window: u64,
    /// Which passes are held to the trigger.
    passes: TriggerPasses,
    /// Passes in a row a compactor may leave the transcript over the window.
    window_passes_max: u32,
    /// The request overhead (system prompt, tool schemas) in real tokens, as the last
    /// provider reading showed it (usage minus the real tokens of the rows sent); the
    /// configured rough overhead until a reading comes.
    overhead_real: u64,
    /// Rough tokens and rows of the list after the last transition.
    rough: u64,
    len: usize,
    /// The last observation put the transcript at or over the trigger.
    over: bool,
    /// The provider proved the current (unchanged since) transcript over the window.
    over_window_proven: bool,
    streak: Streak,
}

/// The passes over the trigger since a pass last brought the transcript under it.
#[derive(Clone, Copy, Debug, Default)]
struct Streak {
    passes: u32,
    first_turn: u32,
    served: u32,
    failed: u32,
    /// Passes of the streak that changed the list.
    changed: u32,
    /// Passes in a row of the streak that left the transcript over the window.
    window_passes: u32,
    /// Passes in a row of the streak that changed nothing, from turn `idle_from`.
    idle: u32,
    idle_from: u32,
}

/// Passes in a row a compactor may leave a transcript over its trigger unchanged (and,
/// where an agent loop recovers from overflows, over the window). A pass that compacts
/// but stays over the trigger is progress (Hermes in a small window compacts several
/// times before its tail fits); one that changes nothing is not.
pub const EFFICACY_PASSES_MAX: u32 = 4;

/// Room a request must leave in the window for the model's reply, per mille of the
/// window (4,000 tokens of a 200,000-token window): a compactor that can bring the
/// request only to within this reserve of the window has nowhere to go either, so the
/// window excuse compares the floor with the window less this reserve.
pub const REPLY_RESERVE_PER_MILLE: u64 = 20;

pub const INFO: InvariantInfo = InvariantInfo {
    id: "compaction-effective",
    statement: "over the compactor's declared trigger (else the window) at most 4 passes \
                in a row change nothing, and passes do not leave the transcript over the \
                window (4 in a row in the agent loop, 1 micro-only), unless every summary \
                served failed or system rows, user text and the turn in progress alone \
                exceed the limit",
    catches: &[],
    class: crate::InvariantClass::Universal,
};

/// What the compactor declared as its trigger (hello `capabilities.trigger`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeclaredTrigger {
    /// Nothing declared: the case's context window.
    #[default]
    Window,
    /// `{"tokens": N}`.
    Tokens(u64),
    /// `{"window_percent": P}`: P % of the case's window.
    WindowPercent(u32),
}

/// Which passes keep the trigger's promise (hello `capabilities.trigger_passes`;
/// absent: every pass the compactor serves). Hermes's micro-compaction folds one exchange
/// per turn and leaves the size to batch compaction: it declares batch passes only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriggerPasses {
    pub micro: bool,
    pub batch: bool,
}

impl Default for TriggerPasses {
    fn default() -> Self {
        TriggerPasses {
            micro: true,
            batch: true,
        }
    }
}

impl DeclaredTrigger {
    /// The trigger in tokens for a window of `window` tokens (0 when it depends on an
    /// unknown window).
    pub fn tokens(self, window: u64) -> u64 {
        match self {
            DeclaredTrigger::Window => window,
            DeclaredTrigger::Tokens(n) => n,
            DeclaredTrigger::WindowPercent(p) => window * p as u64 / 100,
        }
    }
}

impl CompactionEffective {
    pub fn new(config: OracleConfig) -> Self {
        let window = config.window_tokens;
        CompactionEffective {
            trigger: config.declared_trigger.tokens(window),
            window,
            passes: config.trigger_passes,
            window_passes_max: config.window_passes_max.max(1),
            overhead_real: config.request_overhead_tokens as u64,
            rough: 0,
            len: 0,
            over: false,
            over_window_proven: false,
            streak: Streak::default(),
        }
    }

    /// Keeps `self.rough` equal to the rough size of `t.after`.
    fn track_size(&mut self, t: &Transition<'_>) {
        if t.before.len() != self.len {
            self.rough = tokens_rough_total(t.before);
        }
        self.len = t.after.len();
        if unchanged(t) || t.delta.is_empty() {
            return;
        }
        self.rough = match pure_append(t) {
            Some(from) => self.rough + tokens_rough_total(&t.after[from..]),
            None => tokens_rough_total(t.after),
        };
    }

    fn size(&self) -> u64 {
        self.rough
    }

    /// Whether `event` is a pass held to the trigger.
    fn held(&self, event: &Event) -> bool {
        match classify(event) {
            EventClass::Micro => self.passes.micro,
            EventClass::OtherCompaction => self.passes.batch,
            _ => false,
        }
    }

    /// The rough and real tokens no compactor may fold: system rows, the user text of
    /// user-role rows (a summary merged into one aside), and the turn in progress (the
    /// newest real user row and every row after it).
    fn floor(rows: &[Message]) -> (u64, u64) {
        let newest = rows
            .iter()
            .rposition(|m| m.is_real_user())
            .unwrap_or(rows.len());
        let mut floor = (0, 0);
        for (i, m) in rows.iter().enumerate() {
            if i >= newest || m.role == Role::System {
                floor.0 += m.tokens().rough as u64;
                floor.1 += m.tokens().real as u64;
            } else if m.role == Role::User {
                for seg in m.content.segments.iter() {
                    if !matches!(seg.kind, ContentKind::Summary | ContentKind::Scaffold) {
                        floor.0 += rough_tokens(seg.chars) as u64;
                        floor.1 += real_tokens(seg.kind, seg.chars) as u64;
                    }
                }
            }
        }
        floor
    }

    /// Why no compactor could have done better, if the case shows it: against the
    /// trigger (`window` false) the floor's rough tokens, against the window its real
    /// tokens plus the request overhead.
    fn excuse(&self, rows: &[Message], window: bool, served: u32, failed: u32) -> Option<String> {
        if served > 0 && failed == served {
            return Some(format!("all {served} summaries served failed"));
        }
        let (rough, real) = Self::floor(rows);
        let (floor, limit) = if window {
            (
                real + self.overhead_real,
                self.window - self.window * REPLY_RESERVE_PER_MILLE / 1000,
            )
        } else {
            (rough, self.trigger)
        };
        (floor >= limit).then(|| {
            format!(
                "system rows, user rows and the turn in progress alone {floor} tokens >= \
                 {limit}: no compactor could"
            )
        })
    }

    fn on_pass(&mut self, t: &Transition<'_>, was_over: bool) -> Option<Witness> {
        let turn = t.event.turn();
        let changed = !unchanged(t) && !t.delta.is_empty();
        let served = t.served.len() as u32;
        let failed = t.served.iter().filter(|c| !c.ok).count() as u32;
        if changed {
            self.over = self.size() >= self.trigger;
        }
        let size = self.size();
        // Over the window after the pass: the provider refused this very list, or its
        // rough size alone is over.
        let over_window =
            self.window > 0 && ((!changed && self.over_window_proven) || size > self.window);
        self.over |= over_window;
        // A pass under the trigger that leaves it under judges nothing; it ends a streak
        // when it compacted (changed the list): only compaction work that leaves the
        // transcript under the trigger ends one.
        if !was_over && !self.over {
            if changed {
                self.streak = Streak::default();
            }
            return None;
        }
        if self.streak.passes == 0 {
            self.streak.first_turn = turn;
        }
        self.streak.passes += 1;
        self.streak.served += served;
        self.streak.failed += failed;
        self.streak.changed += changed as u32;
        if !self.over {
            self.streak = Streak::default();
            return None;
        }
        if over_window {
            self.streak.window_passes += 1;
        } else {
            self.streak.window_passes = 0;
        }
        if changed {
            self.streak.idle = 0;
        } else {
            if self.streak.idle == 0 {
                self.streak.idle_from = turn;
            }
            self.streak.idle += 1;
        }
        let s = self.streak;
        let failed_words = match s.failed {
            0 => "none failed".to_string(),
            n => format!("{n} failed"),
        };
        let rows = match s.changed {
            0 => "rows unchanged".to_string(),
            n => format!("{n} of them changed rows"),
        };
        if over_window
            && s.window_passes >= self.window_passes_max
            && self.excuse(t.after, true, s.served, s.failed).is_none()
        {
            let how = if size > self.window {
                format!("transcript {size} tokens")
            } else {
                "the request the provider refused as over the window".to_string()
            };
            let (_, floor_real) = Self::floor(t.after);
            return Some(Witness::default().fact(format!(
                "{how} still over the window {} after {} (turns {}..{turn}); {} \
                 summaries served, {failed_words}; {rows}; what no compactor may fold (system \
                 rows, user text, the turn in progress, the request overhead): {} tokens; \
                 the last: {}",
                self.window,
                passes(s.window_passes),
                s.first_turn,
                s.served,
                floor_real + self.overhead_real,
                t.event.describe()
            )));
        }
        // Over by the provider's proof: judged, and excused, against the window.
        if s.idle <= EFFICACY_PASSES_MAX
            || self
                .excuse(t.after, size < self.trigger, s.served, s.failed)
                .is_some()
        {
            return None;
        }
        let what = if size < self.trigger {
            format!(
                "the request ({size} tokens of transcript) the provider refused as over the window"
            )
        } else {
            format!("transcript {size} tokens")
        };
        Some(Witness::default().fact(format!(
            "{what} over trigger {} for {} in a row that changed nothing (turns \
             {}..{turn}; {} over it since turn {}); {} summaries served, {failed_words}; \
             {rows}; the last: {}",
            self.trigger,
            passes(s.idle),
            s.idle_from,
            passes(s.passes),
            s.first_turn,
            s.served,
            t.event.describe()
        )))
    }
}

/// `1 pass`, `4 passes`.
fn passes(n: u32) -> String {
    if n == 1 {
        "1 pass".to_string()
    } else {
        format!("{n} passes")
    }
}

impl Invariant for CompactionEffective {
    fn info(&self) -> InvariantInfo {
        INFO
    }

    fn checks(&self, event: &Event) -> bool {
        self.trigger > 0 && self.held(event)
    }

    fn observe(&mut self, t: &Transition<'_>) -> Option<Witness> {
        if self.trigger == 0 {
            return None;
        }
        let was_over = self.over;
        self.track_size(t);
        let changed = !unchanged(t) && !t.delta.is_empty();
        match classify(t.event) {
            EventClass::Micro | EventClass::OtherCompaction if self.held(t.event) => {
                let found = self.on_pass(t, was_over);
                if changed {
                    self.over_window_proven = false;
                }
                found
            }
            EventClass::ProviderCall(c) => {
                self.over_window_proven = c.over_window && !changed;
                if let Some(usage) = c.usage_tokens {
                    self.overhead_real = usage.saturating_sub(tokens_real_total(t.before));
                }
                self.over = c.over_window || self.size() >= self.trigger;
                None
            }
            // A pass not held to the trigger ends a streak when it gets under it.
            EventClass::Micro | EventClass::OtherCompaction => {
                if changed {
                    self.over = self.size() >= self.trigger;
                    self.over_window_proven = false;
                    if !self.over {
                        self.streak = Streak::default();
                    }
                }
                None
            }
            _ => {
                if changed {
                    self.over = self.size() >= self.trigger;
                    self.over_window_proven = false;
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use compactsim_model::{BatchTrigger, Message, MsgId, Role, ServedCall};

    const WINDOW: u64 = 100_000;

    fn config(trigger: DeclaredTrigger) -> OracleConfig {
        OracleConfig {
            declared_trigger: trigger,
            window_tokens: WINDOW,
            ..OracleConfig::default()
        }
    }

    fn inv(trigger: DeclaredTrigger) -> CompactionEffective {
        CompactionEffective::new(config(trigger))
    }

    fn padded_reply(id: u32, tokens: u32) -> Message {
        Message::new(MsgId(id), Role::Assistant, prose(id, tokens * 4, &[]))
    }

    /// Rows of `n` turns: a short user row and an assistant reply of about `tokens`.
    fn big(n: u32, tokens: u32) -> Vec<Message> {
        let mut rows = Vec::new();
        for k in 0..n {
            rows.push(user(2 * k));
            rows.push(padded_reply(2 * k + 1, tokens));
        }
        rows
    }

    fn pass(turn: u32) -> Event {
        batch_event(turn, BatchTrigger::Preflight, false)
    }

    /// `passes` passes that leave `rows` as they are, serving `calls` each.
    fn unchanged_passes(passes: u32, calls: Vec<ServedCall>) -> Vec<ServedStep> {
        (0..passes)
            .map(|k| (pass(k), None, calls.clone()))
            .collect()
    }

    #[test]
    fn fires_on_a_do_nothing_compactor_over_its_trigger() {
        let rows = big(6, 2_000);
        let mut c = inv(DeclaredTrigger::Tokens(5_000));
        let steps = unchanged_passes(EFFICACY_PASSES_MAX + 2, vec![served(true, 100, &[])]);
        let mut before = rows.clone();
        before.truncate(2);
        let mut all = vec![(append_event(0), Some(rows.clone()), vec![])];
        all.extend(steps);
        let fired = run_served(&mut c, &before, &all);
        assert_eq!(fired.len(), 2, "{fired:?}");
        assert_eq!(fired[0].0, EFFICACY_PASSES_MAX + 1);
        let fact = &fired[0].1.facts[0];
        assert!(
            fact.contains(
                "over trigger 5000 for 5 passes in a row that changed nothing (turns 0..4;"
            ) && fact.contains("5 summaries served, none failed; rows unchanged"),
            "{fact}"
        );
    }

    #[test]
    fn quiet_when_a_pass_brings_it_under_in_time() {
        let rows = big(6, 2_000);
        let short = big(1, 100);
        let mut c = inv(DeclaredTrigger::WindowPercent(5));
        let mut steps: Vec<ServedStep> = vec![(append_event(0), Some(rows.clone()), vec![])];
        steps.extend(unchanged_passes(EFFICACY_PASSES_MAX - 1, vec![]));
        steps.push((pass(9), Some(short), vec![served(true, 100, &[])]));
        // Over again later: a fresh streak.
        steps.push((append_event(10), Some(rows.clone()), vec![]));
        steps.extend(unchanged_passes(EFFICACY_PASSES_MAX, vec![]));
        assert!(run_served(&mut c, &rows[..2], &steps).is_empty());
        // Under the trigger, passes that do nothing are fine.
        let mut c = inv(DeclaredTrigger::Tokens(50_000));
        let mut steps: Vec<ServedStep> = vec![(append_event(0), Some(rows.clone()), vec![])];
        steps.extend(unchanged_passes(10, vec![]));
        assert!(run_served(&mut c, &rows[..2], &steps).is_empty());
    }

    #[test]
    fn quiet_while_passes_compact_though_still_over_the_trigger() {
        let rows = big(8, 2_000);
        let mut c = inv(DeclaredTrigger::Tokens(5_000));
        let mut steps: Vec<ServedStep> = vec![(append_event(0), Some(rows.clone()), vec![])];
        for k in 1..8u32 {
            let keep = rows[..(16 - 2 * k) as usize].to_vec();
            steps.push((pass(k), Some(keep), vec![served(true, 100, &[])]));
        }
        assert!(run_served(&mut c, &rows[..2], &steps).is_empty());
    }

    #[test]
    fn excused_when_every_summary_served_failed() {
        let rows = big(6, 2_000);
        let mut c = inv(DeclaredTrigger::Tokens(5_000));
        let mut steps: Vec<ServedStep> = vec![(append_event(0), Some(rows.clone()), vec![])];
        steps.extend(unchanged_passes(8, vec![served(false, 100, &[])]));
        assert!(run_served(&mut c, &rows[..2], &steps).is_empty());
        // One answered call among the failures: no excuse.
        let mut c = inv(DeclaredTrigger::Tokens(5_000));
        let mut steps: Vec<ServedStep> = vec![(append_event(0), Some(rows.clone()), vec![])];
        steps.extend(unchanged_passes(8, vec![served(false, 100, &[])]));
        steps[2].2 = vec![served(true, 100, &[])];
        assert_eq!(run_served(&mut c, &rows[..2], &steps).len(), 4);
    }

    #[test]
    fn excused_when_user_text_alone_is_over_the_trigger() {
        let mut rows = vec![user_sized(0, 6_000 * 4)];
        rows.extend(big(2, 100));
        let mut c = inv(DeclaredTrigger::Tokens(5_000));
        let mut steps: Vec<ServedStep> = vec![(append_event(0), Some(rows.clone()), vec![])];
        steps.extend(unchanged_passes(8, vec![]));
        assert!(run_served(&mut c, &rows[..1], &steps).is_empty());
        assert!(c.excuse(&rows, false, 0, 0).is_some_and(
            |why| why.contains("system rows, user rows and the turn in progress alone 6")
        ));
    }

    fn refused(turn: u32) -> Event {
        let mut refused = call_event(turn, None, None);
        if let Event::ProviderCall(p) = &mut refused {
            p.over_window = true;
        }
        refused
    }

    #[test]
    fn fires_on_a_pass_that_leaves_a_proven_overflow_once_its_passes_are_spent() {
        let rows = big(6, 2_000);
        let one_pass = OracleConfig {
            window_passes_max: 1,
            ..config(DeclaredTrigger::Window)
        };
        let steps: Vec<ServedStep> = vec![
            (append_event(0), Some(rows.clone()), vec![]),
            (refused(3), None, vec![]),
            (pass(3), None, vec![]),
        ];
        let fired = run_served(&mut CompactionEffective::new(one_pass), &rows[..2], &steps);
        assert_eq!(fired.len(), 1, "{fired:?}");
        let fact = &fired[0].1.facts[0];
        assert!(
            fact.contains(
                "the request the provider refused as over the window still over the \
                           window 100000 after 1 pass (turns 3..3)"
            ),
            "{fact}"
        );
        // The same pass compacting: quiet.
        let mut steps = steps;
        steps[2].1 = Some(big(1, 100));
        assert!(run_served(&mut CompactionEffective::new(one_pass), &rows[..2], &steps).is_empty());
        // With an agent loop's recovery: the 4th overflow left unchanged, across rolled
        // back turns and resets.
        let mut c = inv(DeclaredTrigger::Window);
        let mut steps: Vec<ServedStep> = Vec::new();
        for k in 0..EFFICACY_PASSES_MAX {
            steps.push((append_event(k), Some(rows.clone()), vec![]));
            steps.push((refused(k), None, vec![]));
            steps.push((pass(k), None, vec![]));
            steps.push((reset_event(k), Some(rows[..1].to_vec()), vec![]));
        }
        let fired = run_served(&mut c, &rows[..1], &steps);
        assert_eq!(fired.len(), 1, "{fired:?}");
        assert_eq!(fired[0].0, 4 * EFFICACY_PASSES_MAX - 2);
    }

    #[test]
    fn the_window_excuse_leaves_room_for_the_reply() {
        let mut c = inv(DeclaredTrigger::Window);
        let reserve = WINDOW * REPLY_RESERVE_PER_MILLE / 1000;
        let rows = big(1, 100);
        let (_, real) = CompactionEffective::floor(&rows);
        // The floor (rows + overhead) just inside the reserve: excused.
        c.overhead_real = WINDOW - reserve - real;
        let why = c
            .excuse(&rows, true, 0, 0)
            .expect("within the reply reserve: excused");
        assert!(why.contains("no compactor could"), "{why}");
        // One token more room than the reserve: the compactor could have made it.
        c.overhead_real -= 1;
        assert_eq!(c.excuse(&rows, true, 0, 0), None);
        // Against a trigger the reserve does not apply.
        c.trigger = real + 1;
        assert_eq!(c.excuse(&rows, false, 0, 0), None);
    }

    #[test]
    fn a_rollback_or_reset_does_not_end_the_streak() {
        let rows = big(6, 2_000);
        let mut c = inv(DeclaredTrigger::Tokens(5_000));
        let mut steps: Vec<ServedStep> = Vec::new();
        for k in 0..3 {
            steps.push((append_event(k), Some(rows.clone()), vec![]));
            steps.extend(unchanged_passes(2, vec![]));
            steps.push((reset_event(k), Some(rows[..1].to_vec()), vec![]));
        }
        let fired = run_served(&mut c, &rows[..1], &steps);
        assert_eq!(fired.len(), 2, "passes 5 and 6: {fired:?}");
        assert!(
            fired[0].1.facts[0].contains("for 5 passes in a row that changed nothing (turns 0..0;")
        );
    }

    #[test]
    fn off_without_a_known_trigger() {
        let rows = big(6, 2_000);
        let mut c = CompactionEffective::new(OracleConfig::default());
        let mut steps: Vec<ServedStep> = vec![(append_event(0), Some(rows.clone()), vec![])];
        steps.extend(unchanged_passes(8, vec![]));
        assert!(run_served(&mut c, &rows[..2], &steps).is_empty());
        assert!(!c.checks(&pass(0)));
    }
}
