//! The output directory of a command, checked before any work: created if missing, a
//! directory, writable, not the file-system root; and the files an earlier run left
//! there that this run would write (or would not overwrite) cleared, so a report never
//! sits beside stale failures.

use super::exit::Failure;
use compactsim_reports::is_temp_name_of;
use std::fs;
use std::path::Path;

/// Prefix of the probe file that proves the directory writable (removed at once).
const PROBE_PREFIX: &str = ".compactsim-probe";

/// Creates `dir` if needed and checks it can hold reports: exit 2 otherwise.
pub fn prepare(dir: &Path) -> Result<(), Failure> {
    let bad = |why: String| Failure::bad_input(format!("--out {}: {why}", dir.display()));
    if let Ok(meta) = fs::metadata(dir) {
        if !meta.is_dir() {
            return Err(bad("exists and is not a directory".into()));
        }
    }
    fs::create_dir_all(dir).map_err(|e| bad(format!("cannot create the directory: {e}")))?;
    let canonical = fs::canonicalize(dir).map_err(|e| bad(format!("cannot resolve: {e}")))?;
    if canonical.parent().is_none() {
        return Err(bad(
            "refusing to write reports into the root of the file system".into(),
        ));
    }
    let probe = dir.join(format!("{PROBE_PREFIX}.{}", std::process::id()));
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"probe"));
    let _ = fs::remove_file(&probe);
    written.map_err(|e| bad(format!("not writable: {e}")))
}

/// `path` resolved through every existing ancestor (a path that does not exist yet
/// keeps its missing tail): two spellings of one directory compare equal.
fn resolved(path: &Path) -> std::path::PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut tail = Vec::new();
    let mut head = absolute.as_path();
    loop {
        if let Ok(real) = fs::canonicalize(head) {
            return tail.iter().rev().fold(real, |p, t| p.join(t));
        }
        match (head.parent(), head.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_os_string());
                head = parent;
            }
            _ => return absolute,
        }
    }
}

/// Refuses (exit 2, before anything is created or removed) an output directory `out`
/// that is one of the `inputs` or lies inside one: writing there would clear the very
/// files the command reads.
pub fn refuse_inside_inputs(out: &Path, inputs: &[std::path::PathBuf]) -> Result<(), Failure> {
    let out_real = resolved(out);
    for input in inputs {
        if out_real.starts_with(resolved(input)) {
            return Err(Failure::bad_input(format!(
                "--out {} is {} the input {}: its files would be overwritten; \
                 choose another --out",
                out.display(),
                if out_real == resolved(input) {
                    "the same directory as"
                } else {
                    "inside"
                },
                input.display()
            )));
        }
    }
    Ok(())
}

/// The scenario files of `dir/<subdir>` a command writes: the subdirectory, and whether
/// a file name (with `.toml`) is one of its names. Only such files (and their temporary
/// files) are cleared: files of other commands there (a `shrink`'s) are kept.
pub type OwnFiles<'a> = (&'a str, fn(&str) -> bool);

/// Removes from `dir` the files named in `names`, their temporary files left by a killed
/// process, and, for each `(subdir, own)` of `subdirs`, every file of `dir/<subdir>`
/// whose name `own` accepts (and its temporary files). Returns how many files it
/// removed. Nothing else in `dir` is touched.
pub fn clear_stale(dir: &Path, names: &[&str], subdirs: &[OwnFiles<'_>]) -> Result<usize, Failure> {
    let mut removed = 0;
    let mut remove = |path: &Path| -> Result<(), Failure> {
        match fs::remove_file(path) {
            Ok(()) => {
                removed += 1;
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Failure::bad_input(format!(
                "cannot remove the stale file {}: {e}",
                path.display()
            ))),
        }
    };
    for entry in read_dir_files(dir)? {
        let Some(name) = entry.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if names.iter().any(|n| name == *n || is_temp_name_of(name, n)) {
            remove(&entry)?;
        }
    }
    for (sub, own) in subdirs {
        let sub = dir.join(sub);
        if !sub.is_dir() {
            continue;
        }
        for entry in read_dir_files(&sub)? {
            let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if own(name) || temp_target(name).is_some_and(own) {
                remove(&entry)?;
            }
        }
    }
    Ok(removed)
}

/// The final name a temporary file `.<final>.<pid>.<n>.tmp` is written for.
fn temp_target(name: &str) -> Option<&str> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let mut parts = inner.rsplitn(3, '.');
    let (_, _, target) = (parts.next()?, parts.next()?, parts.next()?);
    is_temp_name_of(name, target).then_some(target)
}

fn read_dir_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, Failure> {
    let entries = fs::read_dir(dir)
        .map_err(|e| Failure::bad_input(format!("cannot list {}: {e}", dir.display())))?;
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .collect();
    files.sort();
    Ok(files)
}

/// Keeps an external adapter's stderr in `out/adapter-stderr/` (`child-<n>.log`), the
/// logs of an earlier run there removed first; nothing for other compactors.
pub fn keep_adapter_stderr(
    out: &Path,
    compactor: &compactsim_harness::compactor::CompactorSpec,
) -> Result<(), Failure> {
    if compactor.adapter().is_none() {
        return Ok(());
    }
    let dir = out.join(compactsim_harness::compactor::ADAPTER_STDERR_DIR);
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("child-") && name.ends_with(".log") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    compactor
        .keep_adapter_stderr(out)
        .map_err(|e| Failure::bad_input(format!("adapter stderr directory {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::exit::Exit;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("compactsim-outdir-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn bad_directories_are_bad_input_before_any_work() {
        let dir = scratch("bad");
        prepare(&dir).unwrap();
        assert!(dir.is_dir());
        let file = dir.join("file");
        fs::write(&file, "x").unwrap();
        for bad in [file.clone(), file.join("below"), "/".into()] {
            let e = prepare(&bad).unwrap_err();
            assert_eq!(e.exit, Exit::BadInput, "{}", e.message);
        }
        #[cfg(target_os = "linux")]
        assert_eq!(
            prepare(Path::new("/proc/x")).unwrap_err().exit,
            Exit::BadInput
        );
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            1,
            "the probe is removed"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stale_reports_failures_and_temp_files_are_cleared_and_nothing_else() {
        let dir = scratch("stale");
        fs::create_dir_all(dir.join("failures")).unwrap();
        for f in [
            "report.json",
            ".report.json.77.0.tmp",
            "notes.txt",
            "failures/case-3.toml",
            "failures/keep.md",
        ] {
            fs::write(dir.join(f), "x").unwrap();
        }
        fs::write(dir.join("failures/case-3.shrunk.toml"), "a shrink's").unwrap();
        fs::write(dir.join("failures/.case-4.toml.7.0.tmp"), "x").unwrap();
        let own: OwnFiles = ("failures", |n| {
            n.starts_with("case-") && !n.contains(".shrunk")
        });
        let removed = clear_stale(&dir, &["report.json", "repro.txt"], &[own]).unwrap();
        assert_eq!(removed, 4);
        assert!(dir.join("notes.txt").exists() && dir.join("failures/keep.md").exists());
        assert!(dir.join("failures/case-3.shrunk.toml").exists());
        assert!(!dir.join("failures/case-3.toml").exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
