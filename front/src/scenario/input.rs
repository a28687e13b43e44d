//! Reading a scenario file from a hostile file system: only a regular file (not a FIFO,
//! a device or a directory), at most [`FILE_BYTES_MAX`] bytes (or the caller's named
//! limit), valid UTF-8.

use super::limits::FILE_BYTES_MAX;
use std::io::Read;
use std::path::Path;

/// What kind of file system object `meta` is, for messages.
pub fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// The text of the regular file `path`, refused past [`FILE_BYTES_MAX`] bytes.
pub fn read_text(path: &Path) -> Result<String, String> {
    read_text_within(path, FILE_BYTES_MAX)
}

/// Refuses `path` unless it is a regular file (a FIFO would block, a device never
/// end): the check every file a command reads passes first.
pub fn regular_file(path: &Path) -> Result<std::fs::Metadata, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "cannot read: {} is not a regular file",
            kind_of(&meta)
        ));
    }
    Ok(meta)
}

/// The text of the regular file `path`, refused past `limit` bytes (the caller's named
/// limit: [`FILE_BYTES_MAX`] for scenario files).
pub fn read_text_within(path: &Path, limit: u64) -> Result<String, String> {
    let meta = regular_file(path)?;
    if meta.len() > limit {
        return Err(format!(
            "the file has {} bytes, over the limit of {limit}",
            meta.len()
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "the file grew past the limit of {limit} bytes while it was read"
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_small_regular_utf8_files_are_read() {
        let dir = std::env::temp_dir().join(format!("compactsim-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ok = dir.join("ok.toml");
        std::fs::write(&ok, "format = 1\n").unwrap();
        assert_eq!(read_text(&ok).unwrap(), "format = 1\n");
        let big = dir.join("big.toml");
        std::fs::write(&big, vec![b'#'; FILE_BYTES_MAX as usize + 1]).unwrap();
        assert!(read_text(&big).unwrap_err().contains("over the limit"));
        let latin = dir.join("latin.toml");
        std::fs::write(&latin, b"a = \"\xe9\"").unwrap();
        assert!(read_text(&latin).unwrap_err().contains("offset 5"));
        assert!(read_text(&dir).unwrap_err().contains("a directory"));
        assert!(read_text(&dir.join("absent.toml"))
            .unwrap_err()
            .contains("cannot read"));
        #[cfg(unix)]
        assert!(read_text(Path::new("/dev/zero"))
            .unwrap_err()
            .contains("a device"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
