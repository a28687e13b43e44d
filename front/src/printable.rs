//! Text from files and adapters made safe for a terminal: a control character (an
//! escape sequence's ESC, a carriage return, a bell, C1 codes) is printed as its Rust
//! escape (`\u{1b}`), never sent raw, so a file cannot move the cursor, recolour the
//! terminal or fake a line of output.

use std::borrow::Cow;

/// Whether `c` is sent raw by [`text`]: not a control character, or a newline or tab.
fn raw_in_text(c: char) -> bool {
    !c.is_control() || c == '\n' || c == '\t'
}

/// `s` with every control character but newline and tab escaped: for whole outputs
/// (the lines the harness itself composes).
pub fn text(s: &str) -> Cow<'_, str> {
    escape_unless(s, raw_in_text)
}

/// `s` with every control character escaped, newlines too: for one string a file or an
/// adapter provides (a scenario's name), which must stay on its line.
pub fn line(s: &str) -> Cow<'_, str> {
    escape_unless(s, |c| !c.is_control())
}

fn escape_unless(s: &str, raw: impl Fn(char) -> bool) -> Cow<'_, str> {
    if s.chars().all(&raw) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if raw(c) {
            out.push(c);
        } else {
            out.extend(c.escape_default());
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_plain_text_is_untouched() {
        assert!(matches!(text("plain\ttext\n"), Cow::Borrowed(_)));
        assert_eq!(
            text("a\u{1b}[2Jb\rc\u{9b}d\n"),
            "a\\u{1b}[2Jb\\rc\\u{9b}d\n"
        );
        assert_eq!(line("name\nFAKE holds"), "name\\nFAKE holds");
        assert_eq!(line("ünïcode ok"), "ünïcode ok");
    }
}
