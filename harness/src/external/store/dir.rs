//! The durable directory of one gateway case: made empty when the case opens the store,
//! the same for every child that serves the case (a crash kills the child, not the
//! directory), removed when the case ends — and by `groups::end_all` when the process
//! ends early (a signal, the stall watchdog), so an interrupted run leaves nothing.

use crate::external::groups;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Durable directories made by this process so far (names each one).
static MADE: AtomicU64 = AtomicU64::new(0);

/// One case's durable directory; removed on drop.
#[derive(Debug)]
pub struct DurableDir {
    path: PathBuf,
    serial: Option<u64>,
}

impl DurableDir {
    /// A new empty directory under the system's temporary directory.
    pub fn new() -> std::io::Result<DurableDir> {
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("compactsim-store-{}-{n}", std::process::id()));
        // Made and recorded with the registry held (see `groups::Making`).
        let making =
            groups::making().ok_or_else(|| std::io::Error::other("the process is ending"))?;
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)?;
        let serial = making.register_dir(path.clone());
        Ok(DurableDir {
            path,
            serial: Some(serial),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DurableDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
        if let Some(s) = self.serial.take() {
            groups::unregister_dir(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_durable_directory_is_removed_with_its_owner_and_two_are_never_shared() {
        let a = DurableDir::new().unwrap();
        let b = DurableDir::new().unwrap();
        assert_ne!(a.path(), b.path());
        std::fs::write(a.path().join("state.json"), "{}").unwrap();
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists(), "removed with the case");
        assert!(b.path().is_dir());
    }
}
