//! A temporary working folder per test (configuration, certificates, logs,
//! static files), removed on drop unless `MINO_KEEP_WORKDIR` is set.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A folder under the system temp dir, unique to this process and call.
#[derive(Debug)]
pub struct WorkDir {
    path: PathBuf,
}

impl WorkDir {
    /// Creates `$TMPDIR/mino-test-<label>-<pid>-<n>`.
    ///
    /// Panics: the folder cannot be created.
    pub fn new(label: &str) -> WorkDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("mino-test-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
        WorkDir { path }
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A path inside the folder.
    pub fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.path.join(rel)
    }

    /// Creates (with parents) a subfolder and returns its path.
    ///
    /// Panics: the folder cannot be created.
    pub fn mkdir(&self, rel: impl AsRef<Path>) -> PathBuf {
        let p = self.join(rel);
        std::fs::create_dir_all(&p).unwrap_or_else(|e| panic!("cannot create {}: {e}", p.display()));
        p
    }

    /// Writes `contents` to a file inside the folder (parents created).
    ///
    /// Panics: the file cannot be written.
    pub fn write(&self, rel: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.join(rel);
        if let Some(parent) = p.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        std::fs::write(&p, contents).unwrap_or_else(|e| panic!("cannot write {}: {e}", p.display()));
        p
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if std::env::var_os("MINO_KEEP_WORKDIR").is_none() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
