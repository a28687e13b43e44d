//! Atomic file replacement: every report file is written to a temporary file in the
//! destination directory, synced, and renamed onto its final name. A reader therefore
//! sees either the previous file or the complete new one, never a partial write.

use crate::error::ReportError;
use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Distinguishes temporary files of concurrent writers in one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The temporary files of this process not yet committed or removed, so that an
/// interrupted process can remove them ([`remove_pending_files`]); `closed` once it did,
/// after which no new temporary file is created.
static PENDING: Mutex<Pending> = Mutex::new(Pending {
    paths: BTreeSet::new(),
    closed: false,
});

struct Pending {
    paths: BTreeSet<PathBuf>,
    closed: bool,
}

fn pending() -> MutexGuard<'static, Pending> {
    PENDING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes every temporary file this process has open (for a signal handler: the
/// process is about to exit) and refuses new ones from then on. Returns how many it
/// removed.
pub fn remove_pending_files() -> usize {
    let mut p = pending();
    p.closed = true;
    let paths = std::mem::take(&mut p.paths);
    paths.iter().filter(|t| fs::remove_file(t).is_ok()).count()
}

/// Whether `name` is the name of a temporary file [`atomic_write`] or a report writer
/// makes for `final_name` (of any process), e.g. a leftover of a killed run.
pub fn is_temp_name_of(name: &str, final_name: &str) -> bool {
    name.strip_prefix('.')
        .and_then(|n| n.strip_prefix(final_name))
        .and_then(|n| n.strip_prefix('.'))
        .and_then(|n| n.strip_suffix(".tmp"))
        .is_some_and(|n| {
            let mut parts = n.split('.');
            let digits = |p: Option<&str>| {
                p.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            };
            digits(parts.next()) && digits(parts.next()) && parts.next().is_none()
        })
}

/// Writes `bytes` to `path` atomically, creating the parent directory if needed.
///
/// Contract: on `Ok`, `path` holds exactly `bytes` and the data was synced to disk
/// before the rename; on `Err`, `path` is unchanged (absent or its previous content) and
/// no temporary file is left behind.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let mut pending = PendingFile::create(path)?;
    pending
        .writer()
        .write_all(bytes)
        .map_err(ReportError::io(path))?;
    pending.commit()
}

/// A file being written under a temporary name next to its final path. Dropping it
/// without [`PendingFile::commit`] deletes the temporary file.
pub(crate) struct PendingFile {
    final_path: PathBuf,
    temp_path: PathBuf,
    out: Option<BufWriter<File>>,
    committed: bool,
}

impl PendingFile {
    /// Creates the parent directory of `final_path` and a fresh temporary file in it.
    pub(crate) fn create(final_path: &Path) -> Result<PendingFile, ReportError> {
        let file_name = final_path.file_name().ok_or_else(|| ReportError::Io {
            path: final_path.to_path_buf(),
            source: io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"),
        })?;
        let parent = parent_dir(final_path);
        fs::create_dir_all(parent).map_err(ReportError::io(parent))?;
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp_name = format!(
            ".{}.{}.{n}.tmp",
            file_name.to_string_lossy(),
            std::process::id()
        );
        let temp_path = parent.join(temp_name);
        let mut registry = pending();
        if registry.closed {
            return Err(ReportError::Io {
                path: temp_path,
                source: io::Error::new(io::ErrorKind::Interrupted, "the process is exiting"),
            });
        }
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp_path)
            .map_err(ReportError::io(&temp_path))?;
        registry.paths.insert(temp_path.clone());
        drop(registry);
        Ok(PendingFile {
            final_path: final_path.to_path_buf(),
            temp_path,
            out: Some(BufWriter::new(file)),
            committed: false,
        })
    }

    pub(crate) fn final_path(&self) -> &Path {
        &self.final_path
    }

    #[cfg(test)]
    pub(crate) fn temp_path(&self) -> &Path {
        &self.temp_path
    }

    pub(crate) fn writer(&mut self) -> &mut BufWriter<File> {
        self.out
            .as_mut()
            .expect("PendingFile writer is present until commit")
    }

    /// Flushes, syncs and renames the temporary file onto the final path.
    pub(crate) fn commit(mut self) -> Result<(), ReportError> {
        let out = self
            .out
            .take()
            .expect("PendingFile writer is present until commit");
        let file = out.into_inner().map_err(|e| ReportError::Io {
            path: self.temp_path.clone(),
            source: e.into_error(),
        })?;
        file.sync_all().map_err(ReportError::io(&self.temp_path))?;
        drop(file);
        let mut registry = pending();
        if !registry.paths.contains(&self.temp_path) {
            // Removed by an interrupt: the process is exiting.
            self.committed = true;
            return Err(ReportError::Io {
                path: self.temp_path.clone(),
                source: io::Error::new(io::ErrorKind::Interrupted, "the process is exiting"),
            });
        }
        fs::rename(&self.temp_path, &self.final_path).map_err(ReportError::io(&self.final_path))?;
        registry.paths.remove(&self.temp_path);
        drop(registry);
        self.committed = true;
        sync_dir(parent_dir(&self.final_path));
        Ok(())
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.committed {
            drop(self.out.take());
            let _ = fs::remove_file(&self.temp_path);
            pending().paths.remove(&self.temp_path);
        }
    }
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Makes the rename durable. Best effort: some file systems refuse to sync a directory,
/// and the file content itself was already synced.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "compactsim-reports-atomic-{}-{name}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn atomic_write_creates_parents_and_replaces_content() {
        let dir = scratch("replace");
        let path = dir.join("nested").join("out.txt");
        atomic_write(&path, b"first").unwrap();
        atomic_write(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        assert_eq!(entries(path.parent().unwrap()), vec!["out.txt"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dropped_pending_file_leaves_nothing_and_keeps_the_old_file() {
        let dir = scratch("drop");
        let path = dir.join("out.txt");
        atomic_write(&path, b"old").unwrap();
        let mut pending = PendingFile::create(&path).unwrap();
        pending.writer().write_all(b"half").unwrap();
        pending.writer().flush().unwrap();
        assert!(pending.temp_path().exists());
        drop(pending);
        assert_eq!(entries(&dir), vec!["out.txt"]);
        assert_eq!(fs::read(&path).unwrap(), b"old");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temp_names_are_recognised_and_pending_files_are_registered() {
        assert!(is_temp_name_of(".report.json.4242.0.tmp", "report.json"));
        assert!(!is_temp_name_of(".report.json.42.tmp", "report.json"));
        assert!(!is_temp_name_of(".report.json.a.0.tmp", "report.json"));
        assert!(!is_temp_name_of("report.json", "report.json"));
        let dir = scratch("registry");
        let pending = PendingFile::create(&dir.join("x.txt")).unwrap();
        let name = pending
            .temp_path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(is_temp_name_of(&name, "x.txt"), "{name}");
        assert!(super::pending().paths.contains(pending.temp_path()));
        let temp = pending.temp_path().to_path_buf();
        drop(pending);
        assert!(!super::pending().paths.contains(&temp));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn error_names_the_path() {
        let dir = scratch("error");
        fs::create_dir_all(&dir).unwrap();
        let blocker = dir.join("file");
        fs::write(&blocker, b"x").unwrap();
        // The parent is a regular file, so the directory cannot be created.
        let path = blocker.join("out.txt");
        let err = atomic_write(&path, b"x").unwrap_err();
        assert!(err.to_string().contains("file"), "{err}");
        assert!(matches!(err, ReportError::Io { .. }));
        fs::remove_dir_all(&dir).unwrap();
    }
}
