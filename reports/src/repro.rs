//! `repro.txt`: one shell command per failure, each replaying it exactly.

use crate::atomic::atomic_write;
use crate::error::ReportError;
use std::path::{Path, PathBuf};

/// File name of the repro list inside a run directory.
pub const REPRO_TXT: &str = "repro.txt";

/// Writes `dir/repro.txt` atomically: `commands` one per line, in the given order, each
/// line ending in `\n` (an empty list gives an empty file). Fails, writing nothing, if
/// a command contains a line break.
pub fn write_repro(dir: &Path, commands: &[String]) -> Result<PathBuf, ReportError> {
    let path = dir.join(REPRO_TXT);
    let mut text = String::new();
    for (index, command) in commands.iter().enumerate() {
        if command.contains(['\n', '\r']) {
            return Err(ReportError::MultiLine { path, index });
        }
        text.push_str(command);
        text.push('\n');
    }
    atomic_write(&path, text.as_bytes())?;
    Ok(path)
}
