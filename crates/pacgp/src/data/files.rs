//! Whether two paths name one file, so that no output overwrites an input: by name, by what
//! the names resolve to (symbolic links, `./` and `..`), and on Unix by (device, inode), which
//! also catches a hard link (two names, one file).

use std::path::{Path, PathBuf};

/// Whether `a` and `b` name the same file. An output not yet written is compared through its
/// folder (the folder resolved, the file name joined); two existing files are also compared
/// by (device, inode) on Unix, so a hard link to an input is caught.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    if let (Some(x), Some(y)) = (resolve(a), resolve(b)) {
        if x == y {
            return true;
        }
    }
    same_inode(a, b)
}

/// The canonical path of `p`, or of its folder joined with its file name when `p` does not
/// exist yet.
fn resolve(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok().or_else(|| {
        let dir = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
    })
}

/// Both exist and are one file: the same (device, inode) pair.
#[cfg(unix)]
fn same_inode(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => (x.dev(), x.ino()) == (y.dev(), y.ino()),
        _ => false,
    }
}

/// Elsewhere the resolved paths are all there is to compare.
#[cfg(not(unix))]
fn same_inode(_a: &Path, _b: &Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_links_and_hard_links_are_one_file() {
        let dir = std::env::temp_dir().join(format!("pacgp-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("train.csv");
        std::fs::write(&data, "x,y\n1,2\n").unwrap();
        let other = dir.join("other.csv");
        std::fs::write(&other, "x,y\n1,2\n").unwrap();
        let hard = dir.join("hard.csv");
        std::fs::hard_link(&data, &hard).unwrap();
        let dotted = dir.join(".").join("train.csv");
        assert!(same_file(&data, &data));
        assert!(same_file(&data, &dotted));
        assert!(same_file(&hard, &data), "a hard link is the same file");
        assert!(!same_file(&other, &data), "equal contents, another file");
        assert!(!same_file(&dir.join("new.csv"), &data));
        assert!(same_file(
            &dir.join("new.csv"),
            &dotted.with_file_name("new.csv")
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
