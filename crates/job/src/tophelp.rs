//! `iolab run --help`: the top-level options (those that are not job options), in fio's `-h`
//! shape, next to the parser that takes them (`cmdline`); job options are described by
//! `--cmdhelp`, from their definitions.

/// The options that are not job options, for `--help` (fio's `-h` lists the same ones); job
/// options are described by `--cmdhelp`. A test checks that the parser takes every one.
pub(crate) const TOP_HELP: &[(&str, &str)] = &[
    (
        "--output=FILE",
        "write the results to FILE instead of standard output",
    ),
    (
        "--output-format=LIST",
        "normal, json, json+ or terse, comma-separated (default normal)",
    ),
    ("--minimal", "the same as --output-format=terse"),
    (
        "--section=NAME",
        "run only this section of the job files (repeatable)",
    ),
    (
        "--parse-only",
        "check the job files and options, run nothing",
    ),
    ("--showcmd", "print each job as a command line, run nothing"),
    ("--readonly", "refuse any job that would write or trim"),
    ("--max-jobs=N", "refuse to start more than N jobs"),
    (
        "--warnings-fatal",
        "treat a warning about the job options as an error",
    ),
    (
        "--eta=WHEN",
        "the status line on standard error: always, never or auto (a terminal)",
    ),
    (
        "--eta-interval=TIME",
        "how often the status line is refreshed",
    ),
    (
        "--eta-newline=TIME",
        "start a new status line every TIME (for logs)",
    ),
    (
        "--status-interval=TIME",
        "print the whole report so far every TIME (JSON: one object a line)",
    ),
    (
        "--bandwidth-log",
        "write the run's bandwidth per direction to agg-{read,write,trim}_bw.log",
    ),
    (
        "--inflate-log=FILE",
        "print the text of a log stored with log_store_compressed, run nothing",
    ),
    (
        "--cmdhelp[=OPTION]",
        "list the job options, or describe one (\"all\" for every one)",
    ),
    (
        "--enghelp[=ENGINE[,OPTION]]",
        "list the I/O engines, or an engine's own options",
    ),
    (
        "--version, -v",
        "print the version (fio's form first) and exit",
    ),
    (
        "--trigger-file=FILE",
        "when FILE appears, remove it, stop the jobs and run --trigger",
    ),
    (
        "--trigger-timeout=TIME",
        "stop the jobs and run --trigger after TIME",
    ),
    ("--trigger=CMD", "the shell command a trigger runs"),
    (
        "--crctest[=LIST]",
        "time the verify checksums (all, or a comma-separated list)",
    ),
    (
        "--idle-prof=MODE",
        "how idle the CPUs were during the run: system, percpu, or calibrate (and exit)",
    ),
    (
        "--aux-path=DIR",
        "where generated state files go (verify_state_save, verify_state_load)",
    ),
    (
        "--merge-blktrace-only",
        "merge the jobs' blktraces into merge_blktrace_file and run nothing",
    ),
    (
        "--profile=NAME",
        "add a built-in profile's jobs: tiobench (its own options ignored, as fio 3.33 ignores them) or act (--device-names=...; the slice table and verdict)",
    ),
    ("--help, -h", "print this help and exit"),
];

/// fio's top-level options that iolab takes but that change nothing, and those it refuses.
const TOP_INERT: &str = "--debug, --terse-version, --append-terse (terse output is version 3), --alloc-size (no shared-memory pool to size)";
const TOP_REFUSED: &str = "--server, --client, --daemonize, --remote-config, \
--trigger-remote, --cpuclock-test";

/// The whole `--help` text: the version line, the usage line, then the options.
pub fn text(version: &str, usage: &str) -> String {
    let mut s = format!("{version}\n{usage}\n");
    for (opt, what) in TOP_HELP {
        s.push_str(&format!("  {opt:<28} {what}\n"));
    }
    s.push_str(&format!(
        "\nAccepted, without effect: {TOP_INERT}.\nRefused by name: {TOP_REFUSED}.\n\n\
         Job options (--name=NAME --rw=randread --bs=4k ...) are fio's; --cmdhelp lists them, \
         --cmdhelp=OPTION\ndescribes one. Job files are fio's; '-' reads one from standard input.\n\n\
         Job options iolab implements, by category:\n{}",
        crate::options::summary()
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--help` lists only options the parser takes as top-level ones.
    #[test]
    fn every_option_in_the_help_is_a_top_level_option() {
        for (spelled, _) in TOP_HELP {
            for form in spelled.split(", ") {
                let name = form.split(['=', '[']).next().unwrap_or(form);
                let word = if form.contains('=') && !form.contains("[=") {
                    format!("{name}=1")
                } else {
                    name.to_string()
                };
                match crate::parse_cmdline(&[word.as_str()]) {
                    Ok(inv) => assert!(
                        inv.globals.is_empty() && inv.cmdline_jobs.is_empty(),
                        "{word} is a job option"
                    ),
                    // A value the option refuses is still the option's own error.
                    Err(e) => assert_eq!(e.kind, crate::ErrorKind::Usage, "{word}: {e}"),
                }
            }
        }
    }
}
