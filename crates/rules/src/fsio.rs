//! Crash-safe file writes, shared by every crate that writes a file which must survive a
//! crash (checkpoints, plots, run state). The rules crate holds them because it is std-only
//! and every other crate depends on it.
//!
//! A reader sees the old file or the whole new one, never a torn one: the bytes go to a
//! temporary name in the same directory, the file is synced, renamed (or hard-linked, when it
//! must not replace anything) to its name, and the directory is synced so that the new name
//! itself survives a crash.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes the temporary files of concurrent writes within one process.
static TEMP_SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically, creating its directory if needed. With `replace`
/// false an existing file at `path` is left as it is and the call fails with
/// [`io::ErrorKind::AlreadyExists`] (checked atomically by a hard link, so two writers cannot
/// both succeed); with `replace` true an existing file is replaced in one rename. The error
/// does not name the file: callers add the path to their own error.
pub fn write_atomic(path: &Path, bytes: &[u8], replace: bool) -> io::Result<()> {
    if !replace && path.exists() {
        return Err(io::Error::new(io::ErrorKind::AlreadyExists, "already exists; refusing to overwrite it"));
    }
    let dir = parent_dir(path);
    fs::create_dir_all(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let sequence = TEMP_SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.tmp-{}-{sequence}", std::process::id()));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        if replace {
            fs::rename(&tmp, path)?;
        } else {
            match fs::hard_link(&tmp, path) {
                Ok(()) => fs::remove_file(&tmp)?,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    return Err(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        "already exists; refusing to overwrite it",
                    ));
                }
                Err(e) => return Err(e),
            }
        }
        sync_parent_dir(path);
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Syncs the directory holding `path`, so that a file newly created or renamed there survives
/// a crash (best effort: not every platform can open a directory).
pub fn sync_parent_dir(path: &Path) {
    if let Ok(d) = File::open(parent_dir(path)) {
        let _ = d.sync_all();
    }
}

/// The directory holding `path` (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
}
