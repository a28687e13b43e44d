//! The declared micro-marker template (policy `marker_template`): the text a compactor
//! writes around the rolling summary in every micro marker, a `prefix` before it and a
//! `suffix` after it (Hermes: the summary prefix and the historical-task heading before,
//! the end-of-summary marker after). A marker text *follows* the template when it starts
//! with the prefix and ends with the suffix, the two not overlapping. The harness reads
//! a marker's bytes and hands what it lacks to marker-pristine (`MicroPass::marker_mismatch`):
//! a marker without the words that tell the model the row is a handoff reads as an
//! assistant turn the model itself wrote.

use crate::fallback_text::quoted;

/// The declared wrapper of a micro marker; an empty piece is not judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkerTemplate {
    /// The text every micro marker starts with.
    pub prefix: &'static str,
    /// The text every micro marker ends with.
    pub suffix: &'static str,
}

/// What `text` lacks of `template` (`lacks the declared prefix "…"`), or `None` when it
/// follows it.
pub fn mismatch(template: MarkerTemplate, text: &str) -> Option<String> {
    let (prefix, suffix) = (template.prefix, template.suffix);
    if !text.starts_with(prefix) {
        return Some(format!("lacks the declared prefix {}", quoted(prefix)));
    }
    if !text.ends_with(suffix) {
        return Some(format!("lacks the declared suffix {}", quoted(suffix)));
    }
    if text.len() < prefix.len() + suffix.len() {
        return Some(format!(
            "is shorter than the declared prefix and suffix together ({} characters)",
            prefix.chars().count() + suffix.chars().count()
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: MarkerTemplate = MarkerTemplate {
        prefix: "[CONTEXT SUMMARY]\n\n## Historical Task Snapshot\n",
        suffix: "\n\n--- END OF CONTEXT SUMMARY ---",
    };

    #[test]
    fn a_wrapped_summary_follows() {
        let text = format!("{}FACT-000001 done.{}", T.prefix, T.suffix);
        assert_eq!(mismatch(T, &text), None);
        let prefix_only = MarkerTemplate { suffix: "", ..T };
        assert_eq!(mismatch(prefix_only, &format!("{}x", T.prefix)), None);
    }

    #[test]
    fn a_bare_or_cut_summary_is_named() {
        let m = mismatch(T, "FACT-000001 done.").expect("bare");
        assert!(
            m.starts_with("lacks the declared prefix \"[CONTEXT SUMMARY]\\n"),
            "{m}"
        );
        let m = mismatch(T, &format!("{}FACT-000001 done.", T.prefix)).expect("no end");
        assert!(m.starts_with("lacks the declared suffix"), "{m}");
        let overlap = MarkerTemplate {
            prefix: "ab",
            suffix: "ba",
        };
        assert!(mismatch(overlap, "aba").is_some(), "pieces may not overlap");
        assert_eq!(mismatch(overlap, "abba"), None);
    }
}
