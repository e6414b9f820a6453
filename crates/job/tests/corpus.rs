//! Every fio example job file in `shared/corpus/fio-examples` parses, then either resolves to
//! JobSpecs or is refused with an error naming the option, the file and the line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The corpus, or None when no `shared/` is beside this checkout (a fresh clone has none).
/// `IOLAB_SHARED` names a `shared/` directory elsewhere.
fn corpus_dir() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    // crates/job -> <repo>; shared/ sits beside the repo (/work/shared next to /work/main), or
    // inside a checkout that carries it.
    let repo = manifest.join("../..");
    let mut candidates = vec![
        repo.join("../shared/corpus/fio-examples"),
        repo.join("shared/corpus/fio-examples"),
    ];
    if let Some(dir) = std::env::var_os("IOLAB_SHARED") {
        candidates.insert(0, Path::new(&dir).join("corpus/fio-examples"));
    }
    candidates.into_iter().find(|c| c.is_dir())
}

#[test]
fn every_corpus_file_parses_and_resolves_or_is_refused_by_name() {
    let Some(dir) = corpus_dir() else {
        eprintln!("skipped: no shared/corpus/fio-examples beside the checkout (set IOLAB_SHARED)");
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .fio files in {}", dir.display());

    let mut visited = 0;
    let mut accepted = Vec::new();
    let mut refused: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in &files {
        visited += 1;
        let name = path.display().to_string();
        // Some examples take values from the environment (sprandom.fio: "env FIO_BS=4096 fio
        // ..."; xnvme-*.fio: FIO_RW, FIO_IODEPTH, FIO_BS); give them what their comments use.
        let mut vars = iolab_job::Vars::system();
        vars.env = Box::new(|k| {
            std::env::var(k).ok().or_else(|| {
                let v = match k {
                    "FIO_BS" => "4096",
                    "FIO_RW" => "randread",
                    "FIO_IODEPTH" => "1",
                    _ => return None,
                };
                Some(v.to_string())
            })
        });
        let opts = iolab_job::ParseOpts {
            vars,
            ..Default::default()
        };
        let parsed = iolab_job::parse_files_with(&[name.as_str()], &opts)
            .unwrap_or_else(|e| panic!("{name} does not parse: {e}"));
        match parsed.resolve() {
            Ok(r) => {
                assert!(!r.jobs.is_empty() || parsed.jobs.is_empty());
                accepted.push(name);
            }
            Err(e) => {
                let loc = e
                    .loc
                    .as_ref()
                    .unwrap_or_else(|| panic!("{name}: no location: {e}"));
                assert!(
                    loc.file.ends_with(".fio") && loc.line > 0,
                    "{name}: bad location: {e}"
                );
                let opt = e
                    .option
                    .as_deref()
                    .unwrap_or_else(|| panic!("{name}: no option: {e}"));
                let text = e.to_string();
                assert!(text.contains(&format!("option '{opt}'")), "{text}");
                let reason = match e.kind {
                    iolab_job::ErrorKind::UnsupportedEngine => e.message.clone(),
                    _ => format!("{:?}: {opt}", e.kind),
                };
                let short = reason
                    .split(" (iolab has")
                    .next()
                    .unwrap_or(&reason)
                    .to_string();
                let file = path.file_name().map(|f| f.to_string_lossy().into_owned());
                refused
                    .entry(short)
                    .or_default()
                    .push(file.unwrap_or_default());
            }
        }
    }
    assert_eq!(visited, files.len());
    let n_refused: usize = refused.values().map(Vec::len).sum();
    println!(
        "corpus: {visited} files, {} accepted, {n_refused} refused",
        accepted.len()
    );
    for a in &accepted {
        println!("  accepted: {a}");
    }
    for (why, fs) in &refused {
        println!("  refused ({}) {why}: {}", fs.len(), fs.join(" "));
    }
    assert_eq!(accepted.len() + n_refused, visited);
}
