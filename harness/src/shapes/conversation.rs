//! The turn generator: turns a case's `ShapeParams` and its Shape stream into rows.

use super::args::arguments;
use super::params::{OpeningPaste, SizeRange};
use super::ShapeParams;
use compactsim_fakes::ids::IdAlloc;
use compactsim_fakes::rng::{between, chance, next_seed, SimRng};
use compactsim_model::{Content, ContentKind, Message, MsgId, Role, Segment, ToolCall};

/// Characters a spelled-out fact needs (`FACT-000001` and a space).
pub const FACT_CHARS: u32 = 12;
/// Facts in a system prompt.
const SYSTEM_FACTS: SizeRange = SizeRange::new(1, 2);
/// Tool used when a shape lists none.
const FALLBACK_TOOL: &str = "terminal";

/// What sizes the rows of a turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TurnKind {
    Ordinary,
    /// A burst turn: every row is short.
    Burst,
    /// A marathon turn: every tool output is drawn from the marathon's range.
    Marathon,
}

/// The rounds of one turn: the tools each round calls, in call order.
struct TurnPlan {
    kind: TurnKind,
    rounds: Vec<Vec<&'static str>>,
}

/// A conversation generator.
#[derive(Clone)]
pub struct Conversation {
    pub params: ShapeParams,
    rng: SimRng,
    /// Rounds every tool turn runs when the plan is fixed (empty: drawn per turn).
    fixed_plan: Vec<Vec<&'static str>>,
    /// Size and text seed of the repeated prompt.
    prompt: (u32, u64),
}

impl Conversation {
    pub fn new(params: ShapeParams, mut rng: SimRng) -> Self {
        let prompt = (params.user_chars.draw(&mut rng), next_seed(&mut rng));
        let mut conversation = Conversation {
            params,
            rng,
            fixed_plan: Vec::new(),
            prompt,
        };
        if conversation.params.features.fixed_plan {
            conversation.fixed_plan = conversation.draw_rounds();
        }
        conversation
    }

    /// The system row, if the shape has one.
    pub fn system_prompt(&mut self, ids: &mut IdAlloc) -> Option<Message> {
        if !self.params.system_prompt {
            return None;
        }
        let id = ids.msg();
        let facts = SYSTEM_FACTS.draw(&mut self.rng);
        let chars = self.params.system_chars;
        let content = self.text(ids, id, ContentKind::Prose, chars, facts);
        Some(Message::new(id, Role::System, content))
    }

    /// The rows of turn `turn` (0-based).
    pub fn next_turn(&mut self, turn: u32, ids: &mut IdAlloc) -> Vec<Message> {
        let mut rows = vec![self.user_row(ids)];
        if let (0, Some(paste)) = (turn, self.params.features.opening_paste) {
            paste_into(&mut rows[0], paste);
        }
        let plan = self.plan_turn();
        for tools in &plan.rounds {
            self.push_round(tools, plan.kind, turn, ids, &mut rows);
        }
        rows.push(self.reply_row(plan.kind == TurnKind::Burst, ids));
        assert_turn_shape(&rows);
        rows
    }

    fn user_row(&mut self, ids: &mut IdAlloc) -> Message {
        let id = ids.msg();
        let features = self.params.features;
        let huge = features
            .huge_prompt
            .filter(|h| chance(&mut self.rng, h.per_mille));
        let (kind, chars, seed) = if let Some(h) = huge {
            let kind = self.params.text_kinds.pick(&mut self.rng);
            (kind, h.chars.draw(&mut self.rng), next_seed(&mut self.rng))
        } else if features.repeat_prompt {
            (ContentKind::Prose, self.prompt.0, self.prompt.1)
        } else {
            let kind = self.params.text_kinds.pick(&mut self.rng);
            let chars = self.params.user_chars.draw(&mut self.rng);
            (kind, chars, next_seed(&mut self.rng))
        };
        let facts = self.fact_count(chars, 1);
        let content = Content::single(Segment {
            kind,
            chars,
            seed,
            origin: id,
            facts: (0..facts).map(|_| ids.fact()).collect(),
        });
        Message::new(id, Role::User, content)
    }

    fn plan_turn(&mut self) -> TurnPlan {
        if let Some(m) = self.params.features.marathon {
            if chance(&mut self.rng, m.per_mille) {
                let n = m.rounds.draw(&mut self.rng);
                let rounds = (0..n).map(|_| vec![self.pick_tool()]).collect();
                return TurnPlan {
                    kind: TurnKind::Marathon,
                    rounds,
                };
            }
        }
        if let Some(burst) = self.params.features.burst {
            if chance(&mut self.rng, burst.per_mille) {
                let n = burst.rounds.draw(&mut self.rng);
                let rounds = (0..n).map(|_| vec![self.pick_tool()]).collect();
                return TurnPlan {
                    kind: TurnKind::Burst,
                    rounds,
                };
            }
        }
        let rounds = if !chance(&mut self.rng, self.params.tool_turn_per_mille) {
            Vec::new()
        } else if self.fixed_plan.is_empty() {
            self.draw_rounds()
        } else {
            self.fixed_plan.clone()
        };
        TurnPlan {
            kind: TurnKind::Ordinary,
            rounds,
        }
    }

    /// 1..=rounds_max rounds of 1..=calls_max calls each.
    fn draw_rounds(&mut self) -> Vec<Vec<&'static str>> {
        let rounds = between(&mut self.rng, 1, self.params.rounds_max);
        (0..rounds)
            .map(|_| {
                let calls = between(&mut self.rng, 1, self.params.calls_max);
                (0..calls).map(|_| self.pick_tool()).collect()
            })
            .collect()
    }

    fn pick_tool(&mut self) -> &'static str {
        let tools = &self.params.tools;
        if tools.is_empty() {
            return FALLBACK_TOOL;
        }
        tools[between(&mut self.rng, 0, tools.len() as u32 - 1) as usize]
    }

    /// One assistant row calling `tools`, then one tool row per call in call order.
    fn push_round(
        &mut self,
        tools: &[&'static str],
        kind: TurnKind,
        turn: u32,
        ids: &mut IdAlloc,
        rows: &mut Vec<Message>,
    ) {
        let burst = kind == TurnKind::Burst;
        let id = ids.msg();
        let calls: Vec<ToolCall> = tools
            .iter()
            .enumerate()
            .map(|(i, &name)| self.call(name, i == 0 && !burst, ids))
            .collect();
        let envelopes: u32 = calls.iter().map(ToolCall::envelope_chars).sum();
        let silent = chance(&mut self.rng, self.params.features.silent_calls_per_mille);
        let wanted = self.size(burst, self.params.call_text_chars);
        let chars = wanted.min(self.params.message_chars_max.saturating_sub(envelopes));
        let content = if silent || chars == 0 {
            Content::empty()
        } else {
            let facts = self.fact_count(chars, 0);
            self.text(ids, id, ContentKind::Prose, chars, facts)
        };
        // The calls move into the row (not cloned: arguments are long strings); the
        // tool rows read their ids back from it.
        let (assistant, calls_n) = (rows.len(), calls.len());
        rows.push(Message::new(id, Role::Assistant, content).with_tool_calls(calls));
        for k in 0..calls_n {
            let call_id = rows[assistant].tool_calls[k].id;
            let id = ids.msg();
            let marathon = self.params.features.marathon.map(|m| m.tool_chars);
            let chars = if burst {
                self.size(true, self.params.tool_chars)
            } else if let (TurnKind::Marathon, Some(range)) = (kind, marathon) {
                range.draw(&mut self.rng)
            } else {
                let drawn = self.params.tool_chars.draw(&mut self.rng);
                self.grown(drawn, turn)
            };
            let kind = self.params.tool_kinds.pick(&mut self.rng);
            let facts = self.fact_count(chars, 0);
            let content = self.text(ids, id, kind, chars, facts);
            rows.push(Message::new(id, Role::Tool, content).with_tool_call_id(call_id));
        }
    }

    fn call(&mut self, name: &'static str, may_be_long: bool, ids: &mut IdAlloc) -> ToolCall {
        let long = may_be_long && chance(&mut self.rng, self.params.features.long_args_per_mille);
        let range = if long {
            self.params.long_args_chars
        } else {
            self.params.args_chars
        };
        let chars = range.draw(&mut self.rng);
        ToolCall {
            id: ids.call(),
            name: name.to_string(),
            arguments: arguments(name, chars, next_seed(&mut self.rng)),
        }
    }

    fn reply_row(&mut self, burst: bool, ids: &mut IdAlloc) -> Message {
        let id = ids.msg();
        let chars = self.size(burst, self.params.reply_chars).max(1);
        let kind = self.params.text_kinds.pick(&mut self.rng);
        let facts = self.fact_count(chars, 0);
        let content = self.text(ids, id, kind, chars, facts);
        Message::new(id, Role::Assistant, content)
    }

    /// A size from `range`, or from the burst range during a burst.
    fn size(&mut self, burst: bool, range: SizeRange) -> u32 {
        let range = match self.params.features.burst {
            Some(b) if burst => b.chars,
            _ => range,
        };
        range.draw(&mut self.rng)
    }

    /// A tool output after `turn` turns of growth, capped.
    fn grown(&self, chars: u32, turn: u32) -> u32 {
        let growth = 1000 + self.params.features.growth_per_mille as u64 * turn as u64;
        let grown = chars as u64 * growth / 1000;
        grown.min(self.params.message_chars_max.max(chars) as u64) as u32
    }

    /// Facts for a row of `chars` characters: at least `min`, at most what fits.
    fn fact_count(&mut self, chars: u32, min: u32) -> u32 {
        let drawn = between(&mut self.rng, min, self.params.facts_max.max(min));
        drawn.min(chars / FACT_CHARS).max(min)
    }

    /// Single-segment content written in row `origin` with `facts` fresh facts.
    fn text(
        &mut self,
        ids: &mut IdAlloc,
        origin: MsgId,
        kind: ContentKind,
        chars: u32,
        facts: u32,
    ) -> Content {
        Content::single(Segment {
            kind,
            chars,
            seed: next_seed(&mut self.rng),
            origin,
            facts: (0..facts).map(|_| ids.fact()).collect(),
        })
    }
}

/// Turn 0's prompt as an opening paste: the drawn row keeps its id, kind and facts (so
/// the conversation stream draws as without the paste), with the paste's size and text.
fn paste_into(row: &mut Message, paste: OpeningPaste) {
    let Some(first) = row.content.segments.first() else {
        return;
    };
    let segment = Segment {
        chars: paste.chars,
        seed: paste.seed,
        ..first.clone()
    };
    row.set_content(Content::single(segment));
}

/// Asserts the shape of one agent turn (the module contract of `shapes`; O(rows of the
/// turn)): one real user row, then rounds of an assistant row with calls followed by
/// exactly one tool row per call in call order, then one assistant reply with text and
/// no calls; every row's id newer than the one before it.
pub fn assert_turn_shape(rows: &[Message]) {
    let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
        panic!("CONTRACT: a turn has a user row and a reply (an empty turn)");
    };
    assert!(
        rows.len() >= 2 && first.is_real_user() && first.tool_calls.is_empty(),
        "CONTRACT: a turn opens with one real user row"
    );
    assert!(
        last.is_visible_reply() && last.tool_calls.is_empty(),
        "CONTRACT: a turn ends with one assistant reply with text and no tool calls"
    );
    let mut i = 1;
    while i < rows.len() - 1 {
        let calls = &rows[i].tool_calls;
        assert!(
            rows[i].role == Role::Assistant && !calls.is_empty(),
            "CONTRACT: a turn's rounds open with an assistant row with tool calls"
        );
        let results = rows.get(i + 1..i + 1 + calls.len());
        assert!(
            results.is_some_and(|r| r
                .iter()
                .zip(calls.iter())
                .all(|(m, c)| m.role == Role::Tool && m.tool_call_id == Some(c.id))),
            "CONTRACT: one tool row per call follows its assistant row, in call order"
        );
        i += 1 + calls.len();
    }
    assert!(
        i == rows.len() - 1,
        "CONTRACT: a turn's rounds end right before its reply"
    );
    assert!(
        rows.windows(2).all(|w| w[0].id < w[1].id),
        "CONTRACT: every row of a turn gets a fresh id from the allocator"
    );
}
