//! A run of a plan: directories first, links and special files as they come, every file
//! through the [`Pipeline`], hard links to the copies after it, then the directories' own
//! metadata and the fsync of every directory that got a new name.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::pipeline::{parent_of, Pipeline};
use crate::{meta, nodes, CopyError, CopyOpts, Entry, Event, Plan, Summary};

pub(crate) fn run(
    plan: &Plan,
    opts: &CopyOpts,
    on: &mut dyn FnMut(Event),
) -> Result<Summary, CopyError> {
    let mut sum = Summary::default();
    let mut dirs: Vec<(PathBuf, PathBuf, bool)> = Vec::new();
    let mut synced_dirs: HashSet<PathBuf> = HashSet::new();
    let mut files: Vec<(&Path, &Path)> = Vec::new();
    let mut links = Vec::new();
    // The engine first: one that cannot copy is refused before anything is made.
    let has_data =
        !opts.attributes_only && plan.entries.iter().any(|e| matches!(e, Entry::File { .. }));
    let mut pipeline = if has_data {
        Some(Pipeline::new(opts)?)
    } else {
        None
    };
    for (dst, why) in &plan.skipped {
        sum.skipped += 1;
        on(Event::Skipped {
            dst: dst.clone(),
            why,
        });
    }
    for entry in &plan.entries {
        match entry {
            Entry::Dir { src, dst } => match meta::make_dir(src, dst) {
                Ok(created) => {
                    if created {
                        sum.dirs += 1;
                        synced_dirs.insert(parent_of(dst).to_path_buf());
                        on(Event::Dir { dst: dst.clone() });
                    }
                    dirs.push((src.clone(), dst.clone(), created));
                }
                Err(e) => {
                    sum.failed += 1;
                    on(Event::Failed(e));
                }
            },
            Entry::File { src, dst, .. } if opts.attributes_only => {
                attributes_only(src, dst, opts, &mut sum, &mut synced_dirs, on)
            }
            Entry::File { src, dst, .. } => files.push((src, dst)),
            // Hard links point at copies made by the pipeline: made after it.
            Entry::Link { .. } => links.push(entry),
            Entry::Symlink { dst, .. } | Entry::Node { dst, .. } => {
                synced_dirs.insert(parent_of(dst).to_path_buf());
                nodes::make(entry, opts, &mut sum, on);
            }
        }
    }
    if let Some(p) = pipeline.as_mut().filter(|_| !files.is_empty()) {
        p.run(&files, &mut sum, &mut synced_dirs, on)?;
    }
    for entry in links {
        if let Entry::Link { dst, .. } = entry {
            synced_dirs.insert(parent_of(dst).to_path_buf());
        }
        nodes::make(entry, opts, &mut sum, on);
    }
    finish_dirs(&dirs, &synced_dirs, opts, &mut sum, on);
    Ok(sum)
}

/// `--attributes-only` on a file: its metadata onto the existing copy (`-n`: skipped).
fn attributes_only(
    src: &Path,
    dst: &Path,
    opts: &CopyOpts,
    sum: &mut Summary,
    synced_dirs: &mut HashSet<PathBuf>,
    on: &mut dyn FnMut(Event),
) {
    match nodes::attributes_only(src, dst, opts) {
        Ok(Some(ev)) => {
            sum.files += 1;
            synced_dirs.insert(parent_of(dst).to_path_buf());
            on(ev);
        }
        Ok(None) => {
            sum.skipped += 1;
            on(Event::Skipped {
                dst: dst.to_path_buf(),
                why: "-n",
            });
        }
        Err(e) => {
            sum.failed += 1;
            on(Event::Failed(e));
        }
    }
}

/// The directories' final mode and times, deepest first, once nothing more is written into
/// them; then, with `--fsync`, the fsync of every directory that got a new name.
fn finish_dirs(
    dirs: &[(PathBuf, PathBuf, bool)],
    synced_dirs: &HashSet<PathBuf>,
    opts: &CopyOpts,
    sum: &mut Summary,
    on: &mut dyn FnMut(Event),
) {
    for (src, dst, created) in dirs.iter().rev() {
        if let Err(e) = meta::finish_dir(src, dst, *created, &opts.preserve) {
            sum.failed += 1;
            on(Event::Failed(e));
        }
    }
    if opts.fsync {
        for d in synced_dirs {
            if let Err(e) = File::open(d).and_then(|f| f.sync_all()) {
                sum.failed += 1;
                on(Event::Failed(CopyError::io("fsync directory", d, e)));
            }
        }
    }
}
