//! Finding scenario files: every `*.toml` under the given files and directories.

use std::path::{Path, PathBuf};

/// Directory levels `discover` descends at most (a guard against link cycles).
pub const DEPTH_MAX: usize = 16;
/// Directories of study files (`compactsim study`), which a walk skips: a study is not
/// a scenario. Naming a study file explicitly still tries to parse it as one.
pub const STUDIES_DIR: &str = "studies";
/// Directories of version-matrix files (`compactsim matrix`), skipped the same way.
pub const MATRIX_DIR: &str = "matrix";
/// Directory entries `discover` looks at, in all (a guard against `scenario /`).
pub const ENTRIES_MAX: usize = 100_000;

/// The scenario files named by `paths`, in order: a file as given, a directory as all
/// `*.toml` files below it, recursively (skipping `studies/` and `matrix/` directories), sorted by
/// path. A path named twice runs once.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out: Vec<PathBuf> = Vec::new();
    for path in paths {
        let found = if path.is_dir() {
            let mut files = Vec::new();
            let mut budget = ENTRIES_MAX;
            walk(path, 0, &mut budget, &mut files)?;
            files.sort();
            files
        } else if path.is_file() {
            vec![path.clone()]
        } else {
            return Err(match std::fs::metadata(path) {
                Ok(meta) => format!(
                    "{}: {}, not a scenario file or a directory",
                    path.display(),
                    super::input::kind_of(&meta)
                ),
                Err(e) => format!("{}: {e}", path.display()),
            });
        };
        for f in found {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    Ok(out)
}

fn walk(
    dir: &Path,
    depth: usize,
    budget: &mut usize,
    out: &mut Vec<PathBuf>,
) -> Result<(), String> {
    if depth > DEPTH_MAX {
        return Err(format!(
            "{}: directories nested deeper than {DEPTH_MAX}",
            dir.display()
        ));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        *budget = budget.checked_sub(1).ok_or_else(|| {
            format!(
                "{}: more than {ENTRIES_MAX} directory entries below the scenario directory",
                dir.display()
            )
        })?;
        if path.is_dir() {
            if path
                .file_name()
                .is_some_and(|n| n == STUDIES_DIR || n == MATRIX_DIR)
            {
                continue;
            }
            walk(&path, depth + 1, budget, out)?;
        } else if path.extension().is_some_and(|x| x == "toml") {
            out.push(path);
        }
    }
    Ok(())
}
