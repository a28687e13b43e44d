//! Splitting `--adapter 'CMD ARGS'` into a program and its arguments, shell-words style,
//! without ever invoking a shell: whitespace separates words, single quotes keep
//! everything literally, double quotes keep everything but `\"` and `\\`, and a
//! backslash outside quotes escapes the next character. No globs, no variables, no
//! pipes: a `|` is just a character.

/// Why an adapter command line could not be split.
#[derive(Debug, PartialEq, Eq)]
pub enum ArgvError {
    Empty,
    UnclosedQuote(char),
    TrailingBackslash,
}

impl std::fmt::Display for ArgvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgvError::Empty => write!(f, "the adapter command is empty"),
            ArgvError::UnclosedQuote(q) => write!(f, "unclosed {q} quote in the adapter command"),
            ArgvError::TrailingBackslash => {
                write!(f, "the adapter command ends with a lone backslash")
            }
        }
    }
}

/// Splits a command line into words. The first word is the program.
pub fn split(line: &str) -> Result<Vec<String>, ArgvError> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(ArgvError::UnclosedQuote('\'')),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err(ArgvError::UnclosedQuote('"')),
                        },
                        Some(c) => word.push(c),
                        None => return Err(ArgvError::UnclosedQuote('"')),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next().ok_or(ArgvError::TrailingBackslash)?);
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err(ArgvError::Empty);
    }
    Ok(words)
}

/// Single-quotes a word for a POSIX shell (and for [`split`]), as repro lines print it.
pub fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(line: &str) -> Vec<String> {
        split(line).unwrap()
    }

    #[test]
    fn splits_on_whitespace_and_keeps_quoted_words_whole() {
        assert_eq!(ok("python3  a.py --x 1"), ["python3", "a.py", "--x", "1"]);
        assert_eq!(ok("p 'a b' \"c d\""), ["p", "a b", "c d"]);
        assert_eq!(ok("p a' 'b"), ["p", "a b"]);
        assert_eq!(ok(r#"p "say \"hi\" \n""#), ["p", r#"say "hi" \n"#]);
        assert_eq!(ok(r"p a\ b"), ["p", "a b"]);
        assert_eq!(ok("p ''"), ["p", ""]);
    }

    #[test]
    fn shell_syntax_is_not_interpreted() {
        assert_eq!(
            ok("p $HOME *.py | x; y"),
            ["p", "$HOME", "*.py", "|", "x;", "y"]
        );
    }

    #[test]
    fn malformed_lines_are_errors() {
        assert_eq!(split("  "), Err(ArgvError::Empty));
        assert_eq!(split("p 'a"), Err(ArgvError::UnclosedQuote('\'')));
        assert_eq!(split("p \"a"), Err(ArgvError::UnclosedQuote('"')));
        assert_eq!(split("p a\\"), Err(ArgvError::TrailingBackslash));
    }
}
