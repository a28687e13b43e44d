//! The declared static fallback text (policy `static_fallback`, parameter `text`): a
//! template of literal pieces and holes. A hole is `{name}`, `name` one or more of
//! `a-z`, `0-9` and `_`; it stands for any text, empty included. Any other `{` or `}` is
//! literal. A text *is* the declared fallback when it is the template with each hole
//! replaced by some text: it starts with the first piece (unless the template starts
//! with a hole), ends with the last (unless it ends with a hole), and holds the pieces
//! in between in order, none overlapping.

/// Holes a template may hold; a longer template is refused when it is declared.
pub const TEMPLATE_HOLES_MAX: usize = 64;

/// One part of a template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part<'a> {
    Literal(&'a str),
    Hole(&'a str),
}

/// The parts of `template`, adjacent literals joined (a hole never sits beside a hole
/// without the other being dropped: two holes in a row match what one does).
fn parts(template: &str) -> Vec<Part<'_>> {
    let mut out: Vec<Part<'_>> = Vec::new();
    let mut literal_from = 0;
    let mut i = 0;
    let bytes = template.as_bytes();
    while i < bytes.len() {
        if bytes[i] == b'{' {
            if let Some(len) = hole_len(&template[i + 1..]) {
                if literal_from < i {
                    out.push(Part::Literal(&template[literal_from..i]));
                }
                if !matches!(out.last(), Some(Part::Hole(_))) {
                    out.push(Part::Hole(&template[i + 1..i + 1 + len]));
                }
                i += len + 2;
                literal_from = i;
                continue;
            }
        }
        i += 1;
    }
    if literal_from < template.len() {
        out.push(Part::Literal(&template[literal_from..]));
    }
    out
}

/// The length of the hole name starting `rest` when `rest` is `name}…`.
fn hole_len(rest: &str) -> Option<usize> {
    let len = rest
        .bytes()
        .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
        .count();
    (len > 0 && rest.as_bytes().get(len) == Some(&b'}')).then_some(len)
}

/// The number of holes of `template`, for the declaration's check.
pub fn holes(template: &str) -> usize {
    parts(template)
        .iter()
        .filter(|p| matches!(p, Part::Hole(_)))
        .count()
}

/// The first piece of `template` that `text` lacks where the template puts it, quoted
/// and placed (`piece 2 of 3 "## Goal …"`), or `None` when `text` is the template with
/// its holes filled.
pub fn mismatch(template: &str, text: &str) -> Option<String> {
    let parts = parts(template);
    let literals = parts
        .iter()
        .filter(|p| matches!(p, Part::Literal(_)))
        .count();
    let mut at = 0;
    let mut nth = 0;
    for (k, part) in parts.iter().enumerate() {
        let Part::Literal(piece) = *part else {
            continue;
        };
        nth += 1;
        let open_before = k > 0;
        let open_after = k + 1 < parts.len();
        let found = match (open_before, open_after) {
            (false, _) if text[at..].starts_with(piece) => Some(at),
            (false, _) => None,
            (true, false) => (text.len() >= at + piece.len() && text.ends_with(piece))
                .then(|| text.len() - piece.len()),
            (true, true) => text[at..].find(piece).map(|i| at + i),
        };
        match found {
            Some(i) => at = i + piece.len(),
            None => return Some(format!("piece {nth} of {literals} {}", quoted(piece))),
        }
    }
    // A template without holes is one piece, matched at the start; it must also end.
    if !parts.iter().any(|p| matches!(p, Part::Hole(_))) && at != text.len() {
        return Some(format!(
            "nothing after the declared text, got {} more characters",
            text[at..].chars().count()
        ));
    }
    None
}

/// Characters of a piece quoted in a witness at most.
const QUOTE_CHARS_MAX: usize = 60;

/// `piece` in quotes, `\n` spelled out, cut at [`QUOTE_CHARS_MAX`] characters.
pub(crate) fn quoted(piece: &str) -> String {
    let n = piece.chars().count();
    let head: String = piece.chars().take(QUOTE_CHARS_MAX).collect();
    let head = head.replace('\n', "\\n");
    if n > QUOTE_CHARS_MAX {
        format!("\"{head}…\" ({n} characters)")
    } else {
        format!("\"{head}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "PREFIX\n## Task\n{active_task}\n\n## Goal\nRecovered.{rest}";

    #[test]
    fn a_filled_template_matches() {
        assert_eq!(
            mismatch(T, "PREFIX\n## Task\nUser asked: x\n\n## Goal\nRecovered."),
            None
        );
        assert_eq!(
            mismatch(T, "PREFIX\n## Task\n\n\n## Goal\nRecovered. and more {x}"),
            None
        );
        assert_eq!(mismatch("{p}middle{q}", "a middle b"), None);
        assert_eq!(
            mismatch("Summary unavailable.", "Summary unavailable."),
            None
        );
        assert_eq!(mismatch("{p} end", "x end"), None);
    }

    #[test]
    fn a_missing_or_misplaced_piece_is_named() {
        let m = mismatch(T, "PREFIX").expect("empty body");
        assert!(m.starts_with("piece 1 of 2"), "{m}");
        let m = mismatch(T, "PREFIX\n## Task\nx").expect("no goal");
        assert!(m.starts_with("piece 2 of 2 \"\\n\\n## Goal"), "{m}");
        assert!(mismatch("{p} end", "end x").is_some());
        assert!(mismatch("start{p}", "x start").is_some());
        let m = mismatch("Summary unavailable.", "Summary unavailable. more").expect("tail");
        assert!(m.contains("5 more characters"), "{m}");
        assert!(
            mismatch("ab{p}ba", "aba").is_some(),
            "pieces may not overlap"
        );
    }

    #[test]
    fn only_a_lowercase_name_in_braces_is_a_hole() {
        assert_eq!(holes(T), 2);
        assert_eq!(holes("{} {A} {a-b} { x}"), 0);
        assert_eq!(mismatch("{} x", "{} x"), None);
        assert_eq!(holes("{a}{b}"), 1, "adjacent holes are one");
    }
}
