//! fio's `opendir`: every regular file under a directory, recursively, joins the job's files
//! (after any `filename`), each used at the size it has. Expanded before planning, as the
//! host's files are this crate's business; planning refuses a job whose opendir was not.

use std::path::{Path, PathBuf};

use iolab_job::JobSpec;

/// Adds each job's opendir files to its `filename` list; returns fio's info lines
/// ("opendir added N files").
pub fn expand(specs: &mut [JobSpec]) -> Result<Vec<String>, String> {
    let mut info = Vec::new();
    for spec in specs.iter_mut() {
        let Some(dir) = spec.opendir.take() else {
            continue;
        };
        let root = std::fs::canonicalize(&dir)
            .map_err(|e| format!("{}: {}: opendir({dir}): {e}", spec.loc, spec.name))?;
        let mut found = Vec::new();
        walk(&root, &mut found)
            .map_err(|e| format!("{}: {}: opendir({dir}): {e}", spec.loc, spec.name))?;
        info.push(format!("fio: opendir added {} files", found.len()));
        spec.filename
            .extend(found.into_iter().map(|p| p.to_string_lossy().into_owned()));
    }
    Ok(info)
}

/// Regular files under `dir`, depth first, in name order (fio takes readdir's order, which
/// no two file systems share); symbolic links are not followed, as fio's lstat does not.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let t = e.file_type()?;
        if t.is_dir() {
            walk(&e.path(), out)?;
        } else if t.is_file() {
            out.push(e.path());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_regular_file_below_joins_the_job_after_its_filenames() {
        let d = std::env::temp_dir().join(format!("iolab-opendir-{}", std::process::id()));
        std::fs::create_dir_all(d.join("sub/deeper")).unwrap();
        for f in ["b", "a", "sub/c", "sub/deeper/d"] {
            std::fs::write(d.join(f), b"x").unwrap();
        }
        std::os::unix::fs::symlink(d.join("a"), d.join("link")).unwrap();
        let mut spec = JobSpec {
            filename: vec!["first".into()],
            opendir: Some(d.display().to_string()),
            ..JobSpec::default()
        };
        let info = expand(std::slice::from_mut(&mut spec)).unwrap();
        assert_eq!(info, ["fio: opendir added 4 files"]);
        let root = std::fs::canonicalize(&d).unwrap();
        let want: Vec<String> = ["a", "b", "sub/c", "sub/deeper/d"]
            .iter()
            .map(|f| root.join(f).display().to_string())
            .collect();
        assert_eq!(spec.filename[0], "first");
        assert_eq!(spec.filename[1..], want[..]);
        assert!(spec.opendir.is_none());
        spec.opendir = Some(d.join("missing").display().to_string());
        assert!(expand(std::slice::from_mut(&mut spec)).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }
}
