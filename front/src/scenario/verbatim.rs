//! A `micro` scenario's inline script is the conversation as written: no agent loop
//! answers a call or replies to a user row, so the rows must already be a transcript a
//! strict provider accepts (api-valid's rules 2–5, hermes-domain §1.3). The loader
//! refuses what the clean model could not hold, at the turn that breaks a rule, instead
//! of running it into an `api-valid` violation of the model (issue 30 row 10).

use super::convert::Located;
use super::doc::ScriptDoc;
use super::limits::value;
use compactsim_model::Role;
use std::ops::Range;

/// The rows of `script` (history, then turns; a repeated turn is checked against its
/// own repetition) as a provider would read them: the first is a user row, no two user
/// rows follow each other, every call is answered by the tool rows right after it.
pub fn check(script: &ScriptDoc, span: Range<usize>) -> Result<(), Located> {
    let mut previous: Option<Role> = None;
    for doc in script.history.iter().chain(&script.turns) {
        let t = doc.get_ref();
        let bad =
            |i: usize, message: String| Err((Some(doc.span()), format!("row {i}: {message}")));
        // A third repetition meets what the second met.
        for _ in 0..value(t.repeat).unwrap_or(1).min(2) {
            for (i, row) in t.rows.iter().enumerate() {
                let Some(role) = row.role else { continue };
                match (previous, role) {
                    (None, first) if first != Role::User => {
                        return bad(
                            i,
                            format!(
                                "the conversation starts with {} row; a micro script is sent as written and a provider needs a user row first",
                                with_article(first.as_str())
                            ),
                        );
                    }
                    (Some(Role::User), Role::User) => {
                        return bad(
                            i,
                            "two user rows in a row; a micro script is sent as written and a provider refuses consecutive user rows (put an assistant row between them)".into(),
                        );
                    }
                    _ => {}
                }
                previous = Some(role);
                let answered = t.rows[i + 1..]
                    .iter()
                    .take_while(|r| r.role == Some(Role::Tool))
                    .count();
                if row.calls.len() > answered {
                    return bad(
                        i,
                        format!(
                            "{} tool calls, {answered} answered by the tool rows right after it; a provider refuses an unanswered call (add its tool rows)",
                            row.calls.len()
                        ),
                    );
                }
            }
        }
    }
    match previous {
        Some(_) => Ok(()),
        None => Err((
            Some(span),
            "the script has no rows; a provider needs a user row".into(),
        )),
    }
}

/// "an assistant", "a tool": the indefinite article a role name takes.
fn with_article(word: &str) -> String {
    let vowel = word.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {word}", if vowel { "an" } else { "a" })
}
