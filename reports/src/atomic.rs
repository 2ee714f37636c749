//! Output files are never destroyed: every file `repro` writes (figures,
//! tables, the index, exports, comparisons) goes to a temporary file in the
//! same directory and is renamed over the target only once it is complete. A
//! failure or an interruption before that leaves an existing file as it was
//! (the temporary file is removed when dropped).
//!
//! The rename is atomic on one file system (it is the same directory). No
//! fsync: this protects against a failed or killed `repro`, not a power cut.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// A file being written at `path`; [`AtomicFile::commit`] puts it in place.
/// Dropped without `commit`, it leaves `path` untouched.
pub struct AtomicFile {
    inner: Inner,
    path: PathBuf,
}

enum Inner {
    Temp(BufWriter<NamedTempFile>),
    /// An existing target that is not a regular file (`/dev/stdout`, a FIFO):
    /// written in place, as renaming over it would replace the device.
    Direct(BufWriter<std::fs::File>),
}

impl AtomicFile {
    /// A temporary file beside `path` (hidden, `.<name>.<random>.tmp`), with
    /// the permissions a newly created file gets (0666 less the umask). A
    /// symbolic link is followed: its target is replaced, the link kept.
    pub fn create(path: &Path) -> io::Result<Self> {
        if let Ok(meta) = std::fs::metadata(path) {
            if !meta.is_file() {
                let f = std::fs::OpenOptions::new().write(true).open(path)?;
                return Ok(Self {
                    inner: Inner::Direct(BufWriter::new(f)),
                    path: path.to_path_buf(),
                });
            }
        }
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::other(format!("{} is not a file name", path.display())))?;
        let prefix = format!(".{}.", name.to_string_lossy());
        let mut b = tempfile::Builder::new();
        b.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            b.permissions(std::fs::Permissions::from_mode(0o666));
        }
        Ok(Self {
            inner: Inner::Temp(BufWriter::new(b.tempfile_in(dir)?)),
            path,
        })
    }

    /// Flushes and renames the temporary file over the target.
    pub fn commit(self) -> io::Result<()> {
        match self.inner {
            Inner::Temp(w) => {
                let tmp = w.into_inner().map_err(|e| e.into_error())?;
                tmp.persist(&self.path).map_err(|e| e.error)?;
            }
            Inner::Direct(mut w) => w.flush()?,
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.inner {
            Inner::Temp(w) => w.write(buf),
            Inner::Direct(w) => w.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Inner::Temp(w) => w.flush(),
            Inner::Direct(w) => w.flush(),
        }
    }
}

/// `std::fs::write`, through a temporary file renamed on success.
pub fn write_atomic(path: &Path, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(contents.as_ref())?;
    f.commit()
}

/// `std::fs::copy` (contents only), through a temporary file.
pub fn copy_atomic(from: &Path, to: &Path) -> io::Result<()> {
    let mut src = std::fs::File::open(from)?;
    let mut f = AtomicFile::create(to)?;
    io::copy(&mut src, &mut f)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_uncommitted_file_leaves_the_old_one_and_no_litter() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f.csv");
        std::fs::write(&p, "keep\n").unwrap();
        {
            let mut f = AtomicFile::create(&p).unwrap();
            f.write_all(b"half a fi").unwrap();
            f.flush().unwrap();
            // dropped: a failure before commit
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "keep\n");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "temporary file left behind: {names:?}");
        write_atomic(&p, "new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\n");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_committed_file_is_readable_by_others_as_a_created_one() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        std::fs::write(&a, "x").unwrap();
        write_atomic(&b, "x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&a), mode(&b));
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_followed_and_kept() {
        let d = tempfile::tempdir().unwrap();
        let (target, link) = (d.path().join("t.csv"), d.path().join("l.csv"));
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomic(&link, "new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_in_place() {
        use std::os::unix::fs::FileTypeExt;
        write_atomic(Path::new("/dev/null"), "x").unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }

    #[test]
    fn a_missing_directory_is_an_error_not_a_panic() {
        let d = tempfile::tempdir().unwrap();
        assert!(write_atomic(&d.path().join("no/such/f"), "x").is_err());
    }
}
