//! Errors in scenario files, located by file, line and column.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A malformed scenario file (or one that cannot be read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: PathBuf,
    /// 1-based line and column of the offending text, when known.
    pub position: Option<(usize, usize)>,
    pub message: String,
}

impl ScenarioError {
    /// An error at byte range `span` of `source`.
    pub fn at(
        path: &Path,
        source: &str,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> Self {
        ScenarioError {
            path: path.to_path_buf(),
            position: span.map(|s| line_column(source, s.start)),
            message: message.into(),
        }
    }

    /// An error about the file as a whole.
    pub fn file(path: &Path, message: impl Into<String>) -> Self {
        ScenarioError {
            path: path.to_path_buf(),
            position: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, column)) => {
                write!(
                    f,
                    "{}:{line}:{column}: {}",
                    self.path.display(),
                    self.message
                )
            }
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// 1-based line and column (in characters) of byte `offset` in `source`.
pub fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = source.get(..offset).unwrap_or(source);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_one_based_lines_and_columns() {
        let s = "a = 1\nbb = 2\n\nccc";
        assert_eq!(line_column(s, 0), (1, 1));
        assert_eq!(line_column(s, 4), (1, 5));
        assert_eq!(line_column(s, 6), (2, 1));
        assert_eq!(line_column(s, 8), (2, 3));
        assert_eq!(line_column(s, 13), (3, 1));
        assert_eq!(line_column(s, 16), (4, 3));
        assert_eq!(line_column(s, 999), (4, 4));
        assert_eq!(line_column("é = 1", 2), (1, 2));
        let e = ScenarioError::at(Path::new("x.toml"), s, Some(8..9), "bad");
        assert_eq!(e.to_string(), "x.toml:2:3: bad");
    }
}
