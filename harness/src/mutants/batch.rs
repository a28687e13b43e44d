//! The mutants that rewrite a batch pass's result.

use super::Mutant;
use compactsim_fakes::seam::BatchReport;
use compactsim_model::{BatchPassOutcome, Content, ContentKind, Message, Role, Segment};

/// Characters of the one-line description the pruning mutant writes.
const PRUNED_CHARS: u32 = 60;
/// Rows an unchanged pass must leave before the window-dropping mutant drops any.
const DROP_WINDOW_ROWS_MIN: usize = 8;
/// Rows at the end the window-dropping mutant keeps.
const DROP_WINDOW_TAIL_ROWS: usize = 4;

/// Rewrites `msgs`, the result of a batch pass that reported `report`, as `mutant` does.
pub(super) fn apply(mutant: Mutant, msgs: &mut Vec<Message>, report: &BatchReport) {
    let unchanged = report.outcome != BatchPassOutcome::Compacted;
    let summarized = report.outcome == BatchPassOutcome::Compacted && !report.fallback;
    match mutant {
        Mutant::UnchangedPassRewritesToolOutput if unchanged => prune_oldest_tool(msgs),
        Mutant::UnchangedPassDropsWindow if unchanged && msgs.len() > DROP_WINDOW_ROWS_MIN => {
            let head = usize::from(msgs[0].role == Role::System) + 1;
            let tail = msgs.len() - DROP_WINDOW_TAIL_ROWS;
            msgs.drain(head..tail);
        }
        Mutant::BatchDropsUnsummarizedRow if summarized => drop_first_reply_after(msgs),
        // The batch mutants above when their pass does not qualify, and the micro ones.
        Mutant::UnchangedPassRewritesToolOutput
        | Mutant::UnchangedPassDropsWindow
        | Mutant::BatchDropsUnsummarizedRow
        | Mutant::DeletesFreshMarker
        | Mutant::AbsorbsTwoReportsOne
        | Mutant::RewritesUserRow
        | Mutant::DropsWithoutSummaryCall
        | Mutant::ExchangeEndOffByOne
        | Mutant::ExchangeStartOffByOne
        | Mutant::StaleNewestMarker
        | Mutant::StripsMarkerFlag
        | Mutant::MarkerListsWhatItsTextDropped
        | Mutant::SwallowsUnsummarizedExchange => {}
    }
}

/// Replaces the oldest long tool output with a one-line description.
fn prune_oldest_tool(msgs: &mut [Message]) {
    let oldest_tool = msgs
        .iter()
        .position(|m| m.role == Role::Tool && m.content.chars() > PRUNED_CHARS);
    if let Some(i) = oldest_tool {
        let line = Segment {
            kind: ContentKind::Prose,
            chars: PRUNED_CHARS,
            seed: 0x9_2E00 ^ msgs[i].id.0 as u64,
            origin: msgs[i].id,
            facts: Vec::new(),
        };
        msgs[i].set_content(Content::single(line));
    }
}

/// Removes the first visible reply without tool calls after the newest summary (never
/// the newest reply).
fn drop_first_reply_after(msgs: &mut Vec<Message>) {
    let newest_reply = msgs.iter().rposition(Message::is_visible_reply);
    let after_summary = msgs
        .iter()
        .rposition(Message::is_summary)
        .map_or(0, |i| i + 1);
    let victim = (after_summary..msgs.len()).find(|&i| {
        msgs[i].is_visible_reply() && msgs[i].tool_calls.is_empty() && Some(i) != newest_reply
    });
    if let Some(i) = victim {
        msgs.remove(i);
    }
}
