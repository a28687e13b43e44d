//! What one pass did, as the harness observes it from the transcript before and after
//! (never from a compactor's labels), and the fields two such observations are compared
//! on. Rows are matched by id; a row is *unchanged* when its role, text and tool calls
//! are equal (metadata flags such as `_db_persisted` are not compared).

use compactsim_model::{tokens_rough_total, Message, MsgId, Role};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;

/// The fields a pass is compared on, in report order. Each is one disagreement kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Field {
    /// Ids of rows of the transcript before that are gone after.
    RemovedRows,
    /// Ids of rows kept whose text, role or tool calls changed.
    RewrittenRows,
    /// How many rows are new (no id from before).
    NewRows,
    /// Length of the unchanged prefix (the protected head, observed).
    HeadEnd,
    /// Index (in the transcript before) where the unchanged suffix starts.
    TailStart,
    /// Index (after) of the row following the newest micro marker.
    Cursor,
    /// Role of each summary row after, in order.
    SummaryRole,
    /// Index of each summary row after, in order.
    SummaryPosition,
    /// Micro markers after.
    MarkerCount,
    /// Rows after.
    MessageCount,
    /// Rough tokens after.
    Tokens,
    /// Summarizer calls the pass made.
    SummarizerCalls,
}

impl Field {
    pub const ALL: [Field; 12] = [
        Field::RemovedRows,
        Field::RewrittenRows,
        Field::NewRows,
        Field::HeadEnd,
        Field::TailStart,
        Field::Cursor,
        Field::SummaryRole,
        Field::SummaryPosition,
        Field::MarkerCount,
        Field::MessageCount,
        Field::Tokens,
        Field::SummarizerCalls,
    ];

    /// The kebab-case name used in diff.json and diff.md.
    pub fn name(self) -> &'static str {
        match self {
            Field::RemovedRows => "removed-rows",
            Field::RewrittenRows => "rewritten-rows",
            Field::NewRows => "new-rows",
            Field::HeadEnd => "head-end",
            Field::TailStart => "tail-start",
            Field::Cursor => "cursor",
            Field::SummaryRole => "summary-role",
            Field::SummaryPosition => "summary-position",
            Field::MarkerCount => "marker-count",
            Field::MessageCount => "message-count",
            Field::Tokens => "tokens",
            Field::SummarizerCalls => "summarizer-calls",
        }
    }
}

/// One pass, observed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Observed {
    /// Message ids.
    #[schemars(with = "Vec<u32>")]
    pub removed_rows: Vec<MsgId>,
    /// Message ids.
    #[schemars(with = "Vec<u32>")]
    pub rewritten_rows: Vec<MsgId>,
    pub new_rows: u32,
    pub head_end: u32,
    pub tail_start: u32,
    pub cursor: Option<u32>,
    /// `system`, `user`, `assistant` or `tool`.
    #[schemars(with = "Vec<String>")]
    pub summary_roles: Vec<Role>,
    pub summary_positions: Vec<u32>,
    pub markers: u32,
    pub messages: u32,
    pub tokens: u64,
    pub summarizer_calls: u32,
}

/// Role, text and tool calls: what "unchanged" compares.
fn same_row(a: &Message, b: &Message) -> bool {
    a.id == b.id
        && a.role == b.role
        && a.content == b.content
        && a.tool_calls == b.tool_calls
        && a.tool_call_id == b.tool_call_id
}

impl Observed {
    /// Observes a pass that turned `before` into `after` with `summarizer_calls` calls.
    pub fn of(before: &[Message], after: &[Message], summarizer_calls: u32) -> Observed {
        let before_by_id: BTreeMap<MsgId, &Message> = before.iter().map(|m| (m.id, m)).collect();
        let after_by_id: BTreeMap<MsgId, &Message> = after.iter().map(|m| (m.id, m)).collect();
        let removed_rows = before
            .iter()
            .filter(|m| !after_by_id.contains_key(&m.id))
            .map(|m| m.id)
            .collect();
        let rewritten_rows = before
            .iter()
            .filter(|m| after_by_id.get(&m.id).is_some_and(|a| !same_row(m, a)))
            .map(|m| m.id)
            .collect();
        let new_rows = after
            .iter()
            .filter(|m| !before_by_id.contains_key(&m.id))
            .count() as u32;
        let head_end = before
            .iter()
            .zip(after)
            .take_while(|(b, a)| same_row(b, a))
            .count();
        // The suffix never overlaps the prefix (an unchanged pass: head = everything).
        let suffix = before
            .iter()
            .rev()
            .zip(after.iter().rev())
            .take_while(|(b, a)| same_row(b, a))
            .count()
            .min(before.len().min(after.len()) - head_end);
        let summaries: Vec<(usize, &Message)> = after
            .iter()
            .enumerate()
            .filter(|(_, m)| m.is_summary())
            .collect();
        Observed {
            removed_rows,
            rewritten_rows,
            new_rows,
            head_end: head_end as u32,
            tail_start: (before.len() - suffix) as u32,
            cursor: after
                .iter()
                .rposition(Message::is_micro_marker)
                .map(|i| i as u32 + 1),
            summary_roles: summaries.iter().map(|(_, m)| m.role).collect(),
            summary_positions: summaries.iter().map(|(i, _)| *i as u32).collect(),
            markers: after.iter().filter(|m| m.is_micro_marker()).count() as u32,
            messages: after.len() as u32,
            tokens: tokens_rough_total(after),
            summarizer_calls,
        }
    }

    /// The fields on which `self` and `other` differ, in [`Field::ALL`] order.
    pub fn differences(&self, other: &Observed) -> Vec<Field> {
        Field::ALL
            .into_iter()
            .filter(|f| match f {
                Field::RemovedRows => self.removed_rows != other.removed_rows,
                Field::RewrittenRows => self.rewritten_rows != other.rewritten_rows,
                Field::NewRows => self.new_rows != other.new_rows,
                Field::HeadEnd => self.head_end != other.head_end,
                Field::TailStart => self.tail_start != other.tail_start,
                Field::Cursor => self.cursor != other.cursor,
                Field::SummaryRole => self.summary_roles != other.summary_roles,
                Field::SummaryPosition => self.summary_positions != other.summary_positions,
                Field::MarkerCount => self.markers != other.markers,
                Field::MessageCount => self.messages != other.messages,
                Field::Tokens => self.tokens != other.tokens,
                Field::SummarizerCalls => self.summarizer_calls != other.summarizer_calls,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use compactsim_model::Flags;

    use compactsim_fakes::test_rows::row;

    fn marker(id: u32) -> Message {
        let mut m = row(id, Role::Assistant, 40);
        m.flags = Flags {
            summary_marker: true,
            micro_marker: true,
            ..Flags::default()
        };
        m
    }

    #[test]
    fn an_absorbed_exchange_is_seen_from_the_rows() {
        let before = vec![
            row(0, Role::System, 100),
            row(1, Role::User, 100),
            row(2, Role::Assistant, 400),
            row(3, Role::User, 100),
            row(4, Role::Assistant, 100),
        ];
        let after = vec![
            before[0].clone(),
            before[1].clone(),
            marker(9),
            before[3].clone(),
            before[4].clone(),
        ];
        let o = Observed::of(&before, &after, 1);
        assert_eq!(o.removed_rows, vec![MsgId(2)]);
        assert!(o.rewritten_rows.is_empty());
        assert_eq!((o.new_rows, o.head_end, o.tail_start), (1, 2, 3));
        assert_eq!(o.cursor, Some(3));
        assert_eq!(o.summary_roles, vec![Role::Assistant]);
        assert_eq!(o.summary_positions, vec![2]);
        assert_eq!((o.markers, o.messages), (1, 5));
        let same = Observed::of(&before, &after, 1);
        assert!(o.differences(&same).is_empty());
        let mut user_marker = after.clone();
        user_marker[2].role = Role::User;
        let other = Observed::of(&before, &user_marker, 2);
        assert_eq!(
            o.differences(&other),
            vec![Field::SummaryRole, Field::SummarizerCalls]
        );
    }

    #[test]
    fn an_unchanged_pass_has_its_head_and_tail_meet() {
        let before = vec![row(0, Role::User, 10), row(1, Role::Assistant, 10)];
        let o = Observed::of(&before, &before, 0);
        assert_eq!((o.head_end, o.tail_start), (2, 2));
        assert!(o.removed_rows.is_empty() && o.cursor.is_none());
        let rewritten = vec![before[0].clone(), row(1, Role::Assistant, 400)];
        let r = Observed::of(&before, &rewritten, 0);
        assert_eq!(r.rewritten_rows, vec![MsgId(1)]);
        assert_eq!((r.head_end, r.tail_start), (1, 2));
        assert_eq!(
            o.differences(&r),
            vec![Field::RewrittenRows, Field::HeadEnd, Field::Tokens]
        );
    }
}
