//! The file of a Unix socket listener: what is at the path before the bind
//! (nothing, a stale socket left by a process that died, a live one, or
//! something else), the file's permissions after it, and its removal at exit.
//!
//! - A socket nobody listens on any more (connecting is refused) is stale:
//!   it is removed, so a shard restarted after a crash binds again.
//! - A socket another process listens on is never touched: the bind fails
//!   ([`SocketFileError::InUse`]), as a TCP address in use would.
//! - Anything else at the path (a file, a folder) is never removed.
//! - After the bind the file gets the configured mode (`--listen-mode`,
//!   0660 by default: the owner and its group, e.g. nginx's user in the
//!   shard's group, may connect).
//! - At exit the file is removed if it is still the one this process made
//!   (same device and inode), never a newer process's.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// Why a Unix socket's path cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SocketFileError {
    /// Another process listens on the socket.
    #[error("{0} is in use: another process listens on it")]
    InUse(PathBuf),
    /// Something that is not a socket is at the path.
    #[error("{0} exists and is not a socket (not removed)")]
    NotASocket(PathBuf),
    /// The folder the socket goes in does not exist.
    #[error("{0}: the folder does not exist (create it; with systemd, RuntimeDirectory= does)")]
    NoFolder(PathBuf),
    /// Reading, removing or changing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The socket's path.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

/// Makes `path` free for a bind: nothing there, or a stale socket (removed).
/// Returns true when a stale socket was removed.
///
/// Errors: [`SocketFileError`]: a live socket, something else at the path,
/// no such folder, or an I/O error.
pub fn prepare(path: &Path) -> Result<bool, SocketFileError> {
    let io_error = |source| SocketFileError::Io { path: path.to_owned(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(SocketFileError::NoFolder(dir.to_owned()));
        }
    }
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io_error(e)),
    };
    if !meta.file_type().is_socket() {
        return Err(SocketFileError::NotASocket(path.to_owned()));
    }
    match UnixStream::connect(path) {
        Ok(_) => Err(SocketFileError::InUse(path.to_owned())),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            fs::remove_file(path).map_err(io_error)?;
            Ok(true)
        }
        Err(e) => Err(io_error(e)),
    }
}

/// The socket file of a bound listener; removed on drop if it is still the
/// same file.
#[derive(Debug)]
pub struct SocketFile {
    path: PathBuf,
    /// Device and inode of the file the bind made.
    identity: (u64, u64),
}

impl SocketFile {
    /// Takes the socket just bound at `path` and gives it `mode` (e.g.
    /// `0o660`).
    ///
    /// Errors: the file cannot be read or changed.
    pub fn claim(path: &Path, mode: u32) -> Result<SocketFile, SocketFileError> {
        let io_error = |source| SocketFileError::Io { path: path.to_owned(), source };
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(io_error)?;
        let meta = fs::symlink_metadata(path).map_err(io_error)?;
        Ok(SocketFile { path: path.to_owned(), identity: (meta.dev(), meta.ino()) })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let ours = fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.identity);
        if ours {
            if let Err(e) = fs::remove_file(&self.path) {
                tracing::warn!(path = %self.path.display(), error = %e, "could not remove the socket file");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    fn folder(label: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mino-socket-file-{label}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("temp folder");
        dir
    }

    #[test]
    fn a_stale_socket_is_removed_and_a_live_one_or_a_file_is_kept() {
        let dir = folder("prepare");
        let path = dir.join("s.sock");
        assert!(!prepare(&path).expect("nothing there"));
        let live = UnixListener::bind(&path).expect("bind");
        assert!(matches!(prepare(&path), Err(SocketFileError::InUse(_))));
        drop(live);
        assert!(prepare(&path).expect("stale"), "a socket nobody listens on is removed");
        assert!(!path.exists());
        fs::write(&path, "data").expect("a file");
        assert!(matches!(prepare(&path), Err(SocketFileError::NotASocket(_))));
        assert_eq!(fs::read_to_string(&path).expect("kept"), "data");
        assert!(matches!(prepare(&dir.join("no/such.sock")), Err(SocketFileError::NoFolder(_))));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_file_gets_its_mode_and_only_our_own_is_removed() {
        let dir = folder("claim");
        let path = dir.join("s.sock");
        let listener = UnixListener::bind(&path).expect("bind");
        let file = SocketFile::claim(&path, 0o640).expect("claim");
        assert_eq!(fs::metadata(&path).expect("meta").permissions().mode() & 0o777, 0o640);
        drop(file);
        assert!(!path.exists(), "removed at exit");
        drop(listener);
        let first = UnixListener::bind(&path).expect("bind");
        let file = SocketFile::claim(&path, 0o660).expect("claim");
        // Another process replaced the socket meanwhile: its file stays.
        fs::remove_file(&path).expect("remove");
        let newer = UnixListener::bind(&path).expect("bind again");
        drop(file);
        assert!(path.exists(), "a newer socket is not ours to remove");
        drop((first, newer));
        let _ = fs::remove_dir_all(&dir);
    }
}
