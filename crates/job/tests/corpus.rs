//! Every fio example job file in `shared/corpus/fio-examples` (beside the repository; the test
//! is listed as ignored without it) parses, then either resolves to
//! JobSpecs or is refused with an error naming the option, the file and the line.

use std::collections::BTreeMap;
use std::path::Path;

iolab_testkit::corpus_test!(
    every_corpus_file_parses_and_resolves_or_is_refused_by_name,
    check_corpus
);

fn check_corpus(dir: &Path) {
    let files = iolab_testkit::fio_files(dir);

    let mut accepted = Vec::new();
    let mut refused: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in &files {
        let name = path.display().to_string();
        let parsed = iolab_job::parse_files_with(&[name.as_str()], &parse_opts())
            .unwrap_or_else(|e| panic!("{name} does not parse: {e}"));
        match parsed.resolve() {
            Ok(r) => {
                assert!(!r.jobs.is_empty() || parsed.jobs.is_empty());
                accepted.push(name);
            }
            Err(e) => {
                let file = path.file_name().map(|f| f.to_string_lossy().into_owned());
                refused
                    .entry(refusal(&name, &e))
                    .or_default()
                    .push(file.unwrap_or_default());
            }
        }
    }
    let n_refused: usize = refused.values().map(Vec::len).sum();
    println!(
        "corpus: {} files, {} accepted, {n_refused} refused",
        files.len(),
        accepted.len()
    );
    for a in &accepted {
        println!("  accepted: {a}");
    }
    for (why, fs) in &refused {
        println!("  refused ({}) {why}: {}", fs.len(), fs.join(" "));
    }
}

/// Some examples take values from the environment (sprandom.fio: "env FIO_BS=4096 fio ...";
/// xnvme-*.fio: FIO_RW, FIO_IODEPTH, FIO_BS): they get what their comments use.
fn parse_opts() -> iolab_job::ParseOpts {
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
    iolab_job::ParseOpts {
        vars,
        ..Default::default()
    }
}

/// A refusal names the file, its line and the option; its reason, for the summary.
fn refusal(name: &str, e: &iolab_job::JobError) -> String {
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
    reason
        .split(" (iolab has")
        .next()
        .unwrap_or(&reason)
        .to_string()
}
