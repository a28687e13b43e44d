//! Which tool results a summarize prompt names: what the harness reads of a prompt to
//! tell a pruned tool output the call saw (its call id beside the pruned text, as
//! Hermes serializes `[TOOL RESULT call_7]: …`) from one the call never saw (a result cut
//! from its call and dropped from the kept tail). The oracle's no-silent-drop reads the
//! names (`ServedCall::tool_results_named`).

use compactsim_model::CallId;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The prefix of a call id on the wire (`call_<n>`, `CallId`'s display).
const CALL_ID_PREFIX: &str = "call_";

/// The call ids spelled in `prompt` (`call_<digits>`, the digits not part of a longer
/// number).
fn call_ids_spelled(prompt: &str) -> BTreeSet<CallId> {
    let mut ids = BTreeSet::new();
    let bytes = prompt.as_bytes();
    // `memmem`: the prefix found a vector at a time (a two-way search of every prompt
    // was 2.5 % of a 0.19.0 batch run's instructions).
    for at in memchr::memmem::find_iter(bytes, CALL_ID_PREFIX) {
        let digits = &bytes[at + CALL_ID_PREFIX.len()..];
        let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        if let Ok(id) = prompt[at + CALL_ID_PREFIX.len()..][..n].parse() {
            ids.insert(CallId(id));
        }
    }
    ids
}

/// The calls of `tool_rows` (each a tool row's call id and text) whose result `prompt`
/// names: spells the call id, or quotes the row's text (whole, or a head or tail piece:
/// `quoted[i]`, the [`quoted_chars`](super::quotes::quoted_chars) of row `i`'s text,
/// found by the caller in its one pass over the prompt); ascending, without duplicates.
pub fn named_tool_results(
    prompt: &str,
    tool_rows: &[(CallId, Arc<str>)],
    quoted: &[usize],
) -> Vec<CallId> {
    let spelled = call_ids_spelled(prompt);
    let mut named: Vec<CallId> = tool_rows
        .iter()
        .zip(quoted)
        .filter(|((id, text), quoted)| spelled.contains(id) || (!text.is_empty() && **quoted > 0))
        .map(|((id, _), _)| *id)
        .collect();
    named.sort_unstable();
    named.dedup();
    named
}

#[cfg(test)]
mod tests {
    use super::super::quotes::quoted_chars_each;
    use super::*;

    fn named_tool_results(prompt: &str, rows: &[(CallId, Arc<str>)]) -> Vec<CallId> {
        let texts: Vec<&str> = rows.iter().map(|(_, text)| &**text).collect();
        super::named_tool_results(prompt, rows, &quoted_chars_each(prompt, &texts))
    }

    fn rows() -> Vec<(CallId, Arc<str>)> {
        vec![
            (
                CallId(1),
                Arc::from("an output nobody quotes, long enough to tell"),
            ),
            (
                CallId(12),
                Arc::from("the twelfth output, quoted whole in the prompt"),
            ),
            (CallId(7), Arc::from("")),
        ]
    }

    #[test]
    fn a_spelled_call_id_or_a_quote_names_a_result() {
        let prompt = "[TOOL RESULT call_7]: [read_file] (3,400 chars result)\n\
                      [TOOL RESULT x]: the twelfth output, quoted whole in the prompt";
        assert_eq!(
            named_tool_results(prompt, &rows()),
            vec![CallId(7), CallId(12)]
        );
    }

    #[test]
    fn a_longer_number_does_not_name_a_shorter_id() {
        assert!(named_tool_results("see call_123 and call_", &rows()).is_empty());
        assert_eq!(named_tool_results("call_1.", &rows()), vec![CallId(1)]);
    }
}
