//! `iolab cp`: GNU cp's command line over the copy pipeline. Paths stay OS strings end to end
//! (Linux file names are bytes).

mod progress;

use std::ffi::OsString;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_copy::{
    shown, Backup, BackupKind, CopyError, CopyOpts, Deref, Entry, Event, Make, Method, Preserve,
    Sparse, SyncWrites,
};
use iolab_engine::EngineKind;
use lexopt::prelude::*;

use crate::args::{describe, show, text, Cmd};
use progress::Progress;

const USAGE: &str = "\
usage: iolab cp [options] SRC DST
       iolab cp [options] SRC... DIR
       iolab cp [options] -t DIR SRC...

Copies with a window of reads and writes in flight; a destination appears only when complete
(written, fsynced, renamed into place), so it is never left truncated or half-written.
GNU cp's options have GNU cp's meaning (the README has the table):

  -a, --archive            -dR --preserve=all: links, FIFOs and devices (as root) kept
  -r, -R, --recursive      copy directories and what they hold
  -d                       --no-dereference --preserve=links
  -L, --dereference        follow every symbolic link in SRC
  -P, --no-dereference     never follow symbolic links in SRC (links are copied as links)
  -H                       follow symbolic links named on the command line only
  -p                       --preserve=mode,ownership,timestamps
      --preserve[=LIST]    keep mode, ownership, timestamps, links, xattr, all (xattr: ACLs too)
      --no-preserve=LIST   do not keep these
  -n, --no-clobber         never replace an existing destination
  -i, --interactive        ask before replacing (y/n on standard input)
  -f, --force              also replace destinations that are not regular files
      --remove-destination replace the destination itself, never write through its link
  -u, --update             copy only when SRC is newer than DST or DST is missing
  -b, --backup[=CONTROL]   keep each replaced destination: simple, numbered, existing, none
  -S, --suffix=SUFFIX      the simple backup suffix (default ~ or SIMPLE_BACKUP_SUFFIX)
  -t, --target-directory=DIR  copy every SRC into DIR
  -T, --no-target-directory   DST is never a directory to copy into
      --parents            recreate SRC's path under DIR
  -l, --link               hard link instead of copying
  -s, --symbolic-link      symbolic link instead of copying
  -x, --one-file-system    do not copy what is mounted inside a tree
      --reflink[=WHEN]     always (the default of the bare flag), auto, never
      --sparse=WHEN        auto (holes stay holes), always (zeros become holes), never
      --attributes-only    metadata only, no file data
      --copy-contents      read FIFOs and devices inside a tree instead of recreating them
      --strip-trailing-slashes  remove trailing slashes from each SRC
  -v, --verbose            say what was copied, and how
  -h, --help               this text
      --version            iolab's version

iolab's own:
      --engine=NAME    io_uring (default), libaio, psync, pvsync2, posixaio, sync
      --bs=SIZE        bytes per read and write (default 1m)
      --iodepth=N      reads and writes in flight (default 16)
      --direct         O_DIRECT on both sides (the engine pipeline; the tail is handled)
      --sync[=dsync]   O_SYNC writes (O_DSYNC with =dsync)
      --verify         crc32c of source and copy, read back before the copy gets its name
      --method=M       auto (default: reflink, else copy_file_range, else the engine),
                       engine, copy_file_range, reflink
      --no-fsync       skip the fsync before the rename (faster, not crash-safe)
      --progress       a progress bar: bytes, files, throughput, ETA (on a terminal)";

/// Long options, for "did you mean".
const LONGS: &[&str] = &[
    "archive",
    "recursive",
    "dereference",
    "no-dereference",
    "preserve",
    "no-preserve",
    "no-clobber",
    "interactive",
    "force",
    "remove-destination",
    "update",
    "backup",
    "suffix",
    "target-directory",
    "no-target-directory",
    "parents",
    "link",
    "symbolic-link",
    "one-file-system",
    "reflink",
    "sparse",
    "attributes-only",
    "copy-contents",
    "strip-trailing-slashes",
    "verbose",
    "help",
    "version",
    "engine",
    "bs",
    "iodepth",
    "direct",
    "sync",
    "verify",
    "method",
    "no-fsync",
    "progress",
    "context",
];

const CMD: Cmd = Cmd {
    name: "cp",
    usage: USAGE,
};

/// Parsed command line.
struct Args {
    opts: CopyOpts,
    verbose: bool,
    progress: bool,
    /// `-i`: ask before replacing.
    interactive: bool,
    paths: Vec<PathBuf>,
    target_dir: Option<PathBuf>,
}

/// What the command line asks for: a copy, or `--help`/`--version`.
enum Parsed {
    Copy(Box<Args>),
    Help,
    Version,
}

/// Backup settings as given, resolved once the whole line is read (`-S` and `--backup` may
/// come in either order; the environment fills in what the line leaves out).
#[derive(Default)]
struct BackupArgs {
    asked: bool,
    control: Option<String>,
    suffix: Option<OsString>,
}

fn parse(args: &[OsString]) -> Result<Parsed, String> {
    let mut a = Args {
        opts: CopyOpts::default(),
        verbose: false,
        progress: false,
        interactive: false,
        paths: Vec::new(),
        target_dir: None,
    };
    let mut backup = BackupArgs::default();
    let mut strip_slashes = false;
    let mut p = lexopt::Parser::from_args(args.iter().cloned());
    while let Some(arg) = p.next().map_err(|e| describe(e, LONGS))? {
        let o = &mut a.opts;
        match arg {
            Value(v) => a.paths.push(PathBuf::from(v)),
            Short('h') | Long("help") => return Ok(Parsed::Help),
            Long("version") => return Ok(Parsed::Version),
            Short('a') | Long("archive") => {
                o.recursive = true;
                o.deref = Some(Deref::Never);
                o.preserve = Preserve::ALL;
            }
            Short('r') | Short('R') | Long("recursive") => o.recursive = true,
            Short('d') => {
                o.deref = Some(Deref::Never);
                o.preserve.links = true;
            }
            Short('L') | Long("dereference") => o.deref = Some(Deref::Always),
            Short('P') | Long("no-dereference") => o.deref = Some(Deref::Never),
            Short('H') => o.deref = Some(Deref::CommandLine),
            Short('p') => o.preserve = merge(o.preserve, Preserve::BASIC, true),
            Long("preserve") => {
                let list = match p.optional_value() {
                    Some(v) => attrs(&text(v, "--preserve")?, "--preserve")?,
                    None => Preserve::BASIC,
                };
                o.preserve = merge(o.preserve, list, true);
            }
            Long("no-preserve") => {
                let v = text(p.value().map_err(|e| describe(e, LONGS))?, "--no-preserve")?;
                o.preserve = merge(o.preserve, attrs(&v, "--no-preserve")?, false);
            }
            // -n and -i: the later one wins, as in GNU cp.
            Short('n') | Long("no-clobber") => (o.no_clobber, a.interactive) = (true, false),
            Short('i') | Long("interactive") => (o.no_clobber, a.interactive) = (false, true),
            Short('f') | Long("force") => o.force = true,
            Long("remove-destination") => o.remove_destination = true,
            Short('u') | Long("update") => o.update = true,
            Short('b') => backup.asked = true,
            Long("backup") => {
                backup.asked = true;
                if let Some(v) = p.optional_value() {
                    backup.control = Some(text(v, "--backup")?);
                }
            }
            Short('S') | Long("suffix") => {
                // GNU cp: a suffix asks for backups.
                backup.asked = true;
                backup.suffix = Some(p.value().map_err(|e| describe(e, LONGS))?);
            }
            Short('t') | Long("target-directory") => {
                a.target_dir = Some(PathBuf::from(p.value().map_err(|e| describe(e, LONGS))?))
            }
            Short('T') | Long("no-target-directory") => o.no_target_dir = true,
            Long("parents") => o.parents = true,
            Short('l') | Long("link") => o.make = Make::HardLink,
            Short('s') | Long("symbolic-link") => o.make = Make::SymLink,
            Short('x') | Long("one-file-system") => o.one_file_system = true,
            Long("reflink") => {
                let when = match p.optional_value() {
                    Some(v) => text(v, "--reflink")?,
                    None => "always".into(),
                };
                o.method = match when.as_str() {
                    "always" => Method::Reflink,
                    "auto" => Method::Auto,
                    "never" => Method::Engine,
                    w => return Err(format!("--reflink={w}: expected always, auto or never")),
                };
            }
            Long("sparse") => {
                let v = text(p.value().map_err(|e| describe(e, LONGS))?, "--sparse")?;
                o.sparse = match v.as_str() {
                    "auto" => Sparse::Auto,
                    "always" => Sparse::Always,
                    "never" => Sparse::Never,
                    w => return Err(format!("--sparse={w}: expected auto, always or never")),
                };
            }
            Long("attributes-only") => o.attributes_only = true,
            Long("copy-contents") => o.copy_contents = true,
            Long("strip-trailing-slashes") => strip_slashes = true,
            Short('v') | Long("verbose") => a.verbose = true,
            Short('Z') | Long("context") => {
                return Err(
                    "-Z/--context: SELinux contexts are not set by iolab cp; use GNU cp -Z, \
                     or chcon after the copy"
                        .into(),
                )
            }
            Long(name) => {
                let name = name.to_string();
                let value = p.optional_value().map(|v| text(v, &format!("--{name}")));
                own_option(&mut a, &name, value.transpose()?)?
            }
            _ => return Err(describe(arg.unexpected(), LONGS)),
        }
    }
    a.opts.backup = resolve_backup(backup, a.opts.no_clobber)?;
    if strip_slashes {
        for path in &mut a.paths {
            *path = strip_trailing_slashes(path);
        }
    }
    check(&mut a)?;
    Ok(Parsed::Copy(Box::new(a)))
}

/// Combinations GNU cp refuses, and the operands.
fn check(a: &mut Args) -> Result<(), String> {
    let o = &a.opts;
    if a.target_dir.is_some() && o.no_target_dir {
        return Err("cannot combine --target-directory (-t) and --no-target-directory (-T)".into());
    }
    if o.method == Method::Reflink && o.sparse != Sparse::Auto {
        return Err("--reflink can be used only with --sparse=auto".into());
    }
    if o.method == Method::CopyFileRange && o.sparse != Sparse::Auto {
        return Err(
            "--method=copy_file_range cannot place holes itself; use --sparse=auto, or \
                    --method=engine (or auto) with --sparse=always|never"
                .into(),
        );
    }
    if o.make != Make::Copy && o.attributes_only {
        return Err(
            "--attributes-only cannot be combined with -l or -s: links have no data to \
                    leave out"
                .into(),
        );
    }
    if a.target_dir.is_none() {
        if a.paths.len() < 2 {
            return Err(match a.paths.first() {
                None => "missing file operands: SRC and DST".into(),
                Some(p) => format!(
                    "missing destination file operand after '{}'",
                    show(p.as_os_str())
                ),
            });
        }
        a.target_dir = a.paths.pop();
    } else if a.paths.is_empty() {
        return Err("missing file operand: nothing to copy into the -t directory".into());
    }
    Ok(())
}

/// `--backup`, `-b`, `-S` and the environment (`VERSION_CONTROL`, `SIMPLE_BACKUP_SUFFIX`) as
/// GNU cp reads them.
fn resolve_backup(b: BackupArgs, no_clobber: bool) -> Result<Option<Backup>, String> {
    if !b.asked {
        return Ok(None);
    }
    if no_clobber {
        return Err("options --backup and --no-clobber are mutually exclusive".into());
    }
    let control = b.control.or_else(|| {
        std::env::var("VERSION_CONTROL")
            .ok()
            .filter(|v| !v.is_empty())
    });
    let kind = match control {
        Some(c) => match BackupKind::from_name(&c).map_err(|e| format!("--backup: {e}"))? {
            Some(k) => k,
            None => return Ok(None),
        },
        None => BackupKind::Existing,
    };
    let suffix = b
        .suffix
        .or_else(|| std::env::var_os("SIMPLE_BACKUP_SUFFIX"))
        .filter(|s| !s.is_empty() && !s.as_encoded_bytes().contains(&b'/'))
        .unwrap_or_else(|| OsString::from("~"));
    Ok(Some(Backup { kind, suffix }))
}

fn strip_trailing_slashes(p: &std::path::Path) -> PathBuf {
    let b = p.as_os_str().as_encoded_bytes();
    let mut n = b.len();
    while n > 1 && b[n - 1] == b'/' {
        n -= 1;
    }
    let s = OsString::from(std::str::from_utf8(&b[..n]).ok().unwrap_or(""));
    if s.is_empty() && n > 0 {
        // Not UTF-8: trim on the path's components instead (same result for "a/b//").
        return p.components().collect();
    }
    PathBuf::from(s)
}

/// `--preserve=LIST` / `--no-preserve=LIST`: the attributes named.
fn attrs(list: &str, option: &str) -> Result<Preserve, String> {
    let mut p = Preserve::default();
    for item in list.split(',') {
        match item {
            "mode" => p.mode = true,
            "ownership" => p.ownership = true,
            "timestamps" => p.timestamps = true,
            "links" => p.links = true,
            "xattr" => p.xattr = true,
            "all" => p = Preserve::ALL,
            "context" if option == "--no-preserve" => {}
            "context" => {
                return Err(
                    "--preserve=context: SELinux contexts are not kept by iolab cp; use \
                            --preserve=all, which keeps every other attribute"
                        .into(),
                )
            }
            _ => {
                return Err(format!(
                    "{option}={list}: unknown attribute '{item}'; expected mode, ownership, \
                     timestamps, links, context, xattr or all"
                ))
            }
        }
    }
    Ok(p)
}

/// Turns the attributes in `with` on (`on`) or off in `p`.
fn merge(mut p: Preserve, with: Preserve, on: bool) -> Preserve {
    let set = |field: &mut bool, named: bool| {
        if named {
            *field = on;
        }
    };
    set(&mut p.mode, with.mode);
    set(&mut p.ownership, with.ownership);
    set(&mut p.timestamps, with.timestamps);
    set(&mut p.links, with.links);
    set(&mut p.xattr, with.xattr);
    p
}

/// iolab's own long options (the engine pipeline's knobs).
fn own_option(a: &mut Args, name: &str, value: Option<String>) -> Result<(), String> {
    let need =
        |v: Option<String>| v.ok_or_else(|| format!("--{name} needs a value (--{name}=...)"));
    let no_value = |v: &Option<String>| match v {
        Some(v) => Err(format!("--{name} takes no value (got '{v}')")),
        None => Ok(()),
    };
    let o = &mut a.opts;
    match name {
        "direct" => (no_value(&value)?, o.direct = true).1,
        "verify" => (no_value(&value)?, o.verify = true).1,
        "no-fsync" => (no_value(&value)?, o.fsync = false).1,
        "progress" => (no_value(&value)?, a.progress = true).1,
        "sync" => {
            o.sync = match value.as_deref() {
                None | Some("sync") => SyncWrites::Sync,
                Some("dsync") => SyncWrites::Dsync,
                Some(v) => return Err(format!("--sync={v}: expected sync or dsync")),
            }
        }
        "engine" => o.engine = engine(&need(value)?)?,
        "bs" => {
            let v = need(value)?;
            let n = iolab_job::value::parse_size(&v, 1024).map_err(|e| format!("--bs={v}: {e}"))?;
            if n == 0 || n > 1 << 30 {
                return Err(format!("--bs={v}: must be between 1 byte and 1 GiB"));
            }
            o.bs = n as usize;
        }
        "iodepth" => {
            let v = need(value)?;
            o.iodepth = match v.parse::<u32>() {
                Ok(n) if (1..=4096).contains(&n) => n,
                _ => return Err(format!("--iodepth={v}: expected a number from 1 to 4096")),
            }
        }
        "method" => {
            let v = need(value)?;
            o.method = Method::from_name(&v).ok_or_else(|| {
                format!("--method={v}: expected auto, engine, copy_file_range or reflink")
            })?;
        }
        _ => {
            let unknown = lexopt::Error::UnexpectedOption(format!("--{name}"));
            return Err(describe(unknown, LONGS));
        }
    }
    Ok(())
}

fn engine(v: &str) -> Result<EngineKind, String> {
    match EngineKind::from_name(v) {
        Some(k) if !k.moves_data() || k == EngineKind::Mmap => Err(format!(
            "--engine={v}: cannot copy with it; use io_uring, libaio, psync, pvsync2, posixaio \
             or sync"
        )),
        Some(k) => Ok(k),
        None => Err(format!(
            "--engine={v}: unknown engine; use io_uring, libaio, psync, pvsync2, posixaio or sync"
        )),
    }
}

pub fn main(args: &[OsString]) -> ExitCode {
    let mut a = match parse(args) {
        Ok(Parsed::Copy(a)) => a,
        Ok(Parsed::Help) => return CMD.help(),
        Ok(Parsed::Version) => {
            println!("iolab cp {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Err(e) => return CMD.usage_error(e),
    };
    // Test hook: the named-temporary-file path that file systems without O_TMPFILE take.
    if std::env::var_os("IOLAB_CP_TMPFILE").is_some_and(|v| v == "0") {
        a.opts.tmpfile = false;
    }
    let finished = Arc::new(AtomicBool::new(false));
    match iolab_bench::stop_on_signals() {
        Ok(stop) => {
            a.opts.cancel = Arc::clone(&stop);
            watch_stop(stop, Arc::clone(&finished));
        }
        Err(e) => eprintln!("iolab cp: warning: Ctrl-C will not clean up: {e}"),
    }
    let Some(dst) = a.target_dir.take() else {
        return CMD.usage_error("missing destination");
    };
    let mut plan = match iolab_copy::plan(&a.paths, &dst, &a.opts) {
        Ok(p) => p,
        Err(e) => return CMD.fail(e),
    };
    let mut failed = plan.errors.len() as u64;
    for e in &plan.errors {
        eprintln!("iolab cp: {e}");
    }
    if a.interactive {
        ask_before_replacing(&mut plan);
    }
    let code = copy(&plan, &a, failed);
    finished.store(true, Ordering::Relaxed);
    match code {
        Ok(n) => failed += n,
        Err(code) => return code,
    }
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Runs the plan with the progress bar and `-v` lines. The count of failures, or the exit code
/// of a run that stopped.
fn copy(plan: &iolab_copy::Plan, a: &Args, failed_before: u64) -> Result<u64, ExitCode> {
    let started = Instant::now();
    let files_done = Arc::new(AtomicU64::new(0));
    let bar = (a.progress && std::io::stderr().is_terminal()).then(|| {
        Progress::start(
            plan.bytes,
            plan.files,
            Arc::clone(&a.opts.progress),
            Arc::clone(&files_done),
        )
    });
    let verbose = a.verbose;
    let mut on = |ev: Event| {
        if matches!(ev, Event::Copied { .. }) {
            files_done.fetch_add(1, Ordering::Relaxed);
        }
        match &bar {
            // The bar steps aside while a line is printed, so it never hides one.
            Some(b) => b.suspend(|| report(ev, verbose)),
            None => report(ev, verbose),
        }
    };
    let result = iolab_copy::run(plan, &a.opts, &mut on);
    if let Some(b) = bar {
        b.finish();
    }
    match result {
        Ok(sum) => {
            let failed = failed_before + sum.failed;
            if verbose {
                eprintln!("iolab cp: {}", summary(&sum, failed, started.elapsed()));
            }
            Ok(sum.failed)
        }
        Err(CopyError::Interrupted) => {
            eprintln!("iolab cp: {}", CopyError::Interrupted);
            Err(ExitCode::from(130))
        }
        Err(e) => Err(CMD.fail(e)),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn summary(sum: &iolab_copy::Summary, failed: u64, took: Duration) -> String {
    let secs = took.as_secs_f64();
    let rate = if sum.bytes > 0 && secs > 0.0 {
        format!(" ({}/s)", human((sum.bytes as f64 / secs) as u64))
    } else {
        String::new()
    };
    format!(
        "{}, {} in {secs:.2}s{rate}; {}, {}, {} other, {} skipped, {} failed",
        plural(sum.files, "file", "files"),
        human(sum.bytes),
        plural(sum.dirs, "directory", "directories"),
        plural(sum.symlinks, "symbolic link", "symbolic links"),
        sum.others,
        sum.skipped,
        failed
    )
}

/// Bytes in binary units: "512 B", "1.5 KiB", "3.0 GiB".
fn human(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let (mut v, mut u) = (n as f64, 0);
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    match u {
        0 => format!("{n} B"),
        _ => format!("{v:.1} {}", UNITS[u]),
    }
}

/// `-i`: asks, for each destination that exists, whether to replace it; a "no" (or the end of
/// standard input) leaves it out of the plan.
fn ask_before_replacing(plan: &mut iolab_copy::Plan) {
    let stdin = std::io::stdin();
    let mut lines = stdin.lock();
    plan.entries.retain(|e| {
        let dst = match e {
            Entry::File { dst, .. }
            | Entry::Symlink { dst, .. }
            | Entry::Link { dst, .. }
            | Entry::Node { dst, .. } => dst,
            Entry::Dir { .. } => return true,
        };
        if std::fs::symlink_metadata(dst).is_err() {
            return true;
        }
        eprint!("iolab cp: overwrite '{}'? ", shown(dst));
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        let yes = lines.read_line(&mut answer).is_ok_and(|n| n > 0)
            && answer.trim_start().starts_with(['y', 'Y']);
        if !yes {
            plan.skipped.push((dst.clone(), "-i"));
        }
        yes
    });
}

/// After the first SIGINT/SIGTERM the copy stops at its next step. A copy stuck in a system call
/// (a FIFO with no writer, a stalled network file system) never gets there: after a grace
/// period this thread removes the named temporaries (anonymous ones go with the process) and
/// ends the process, so one Ctrl-C is always enough.
fn watch_stop(stop: Arc<AtomicBool>, finished: Arc<AtomicBool>) {
    const GRACE: Duration = Duration::from_millis(1500);
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let t = Instant::now();
        while t.elapsed() < GRACE {
            if finished.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        iolab_copy::remove_temporaries();
        eprintln!("iolab cp: {}", CopyError::Interrupted);
        std::process::exit(130);
    });
}

/// A `-v` line on standard output. A closed pipe (`iolab cp -v ... | head`) is not an error of
/// the copy, and must not end it.
macro_rules! say {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

fn report(ev: Event, verbose: bool) {
    match ev {
        Event::Failed(e) => eprintln!("iolab cp: {e}"),
        Event::Stale { path } => eprintln!(
            "iolab cp: removed '{}', left by an interrupted copy",
            shown(&path)
        ),
        _ if !verbose => {}
        Event::Copied {
            src,
            dst,
            bytes,
            used,
            engine,
            crc32c,
        } => {
            let how = engine.unwrap_or_else(|| used.name().to_string());
            let crc = crc32c
                .map(|c| format!(", verified crc32c {c:08x}"))
                .unwrap_or_default();
            say!(
                "'{}' -> '{}' ({how}, {bytes} bytes{crc})",
                shown(&src),
                shown(&dst)
            );
        }
        Event::Dir { dst } => say!("created directory '{}'", shown(&dst)),
        Event::Symlink { dst, target } => {
            say!("'{}' -> '{}' (symlink)", shown(&dst), shown(&target))
        }
        Event::HardLink { dst, target } => {
            say!("'{}' => '{}' (hard link)", shown(&dst), shown(&target))
        }
        Event::Node { src, dst } => {
            say!("'{}' -> '{}' (special file)", shown(&src), shown(&dst))
        }
        Event::Backup { dst, backup } => {
            say!("(backup: '{}' kept as '{}')", shown(&dst), shown(&backup))
        }
        Event::Skipped { dst, why } => say!("not replacing '{}' ({why})", shown(&dst)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    fn args(s: &str) -> Vec<OsString> {
        s.split_whitespace().map(OsString::from).collect()
    }

    fn copy_args(s: &str) -> Args {
        match parse(&args(s)) {
            Ok(Parsed::Copy(a)) => *a,
            Ok(_) => panic!("{s}: help or version"),
            Err(e) => panic!("{s}: {e}"),
        }
    }

    #[test]
    fn short_flags_combine_and_long_options_take_values() {
        let a = copy_args("-rpvn --engine=libaio --bs=64k --iodepth=8 --sync=dsync a b");
        assert!(a.opts.recursive && a.opts.preserve == Preserve::BASIC && a.opts.no_clobber);
        assert!(a.verbose);
        assert_eq!(a.opts.engine, EngineKind::Libaio);
        assert_eq!((a.opts.bs, a.opts.iodepth), (65536, 8));
        assert_eq!(a.opts.sync, SyncWrites::Dsync);
        assert_eq!(a.paths, vec![PathBuf::from("a")]);
        assert_eq!(a.target_dir, Some(PathBuf::from("b")));
    }

    #[test]
    fn gnu_options_mean_what_they_mean_in_gnu_cp() {
        let a = copy_args("-a x y");
        assert!(a.opts.recursive && a.opts.preserve == Preserve::ALL);
        assert_eq!(a.opts.deref, Some(Deref::Never));
        let a = copy_args("--reflink x y");
        assert_eq!(a.opts.method, Method::Reflink);
        assert_eq!(copy_args("--reflink=never x y").opts.method, Method::Engine);
        let a = copy_args("--preserve=all --no-preserve=xattr,links -t d x y");
        assert!(a.opts.preserve.mode && !a.opts.preserve.xattr && !a.opts.preserve.links);
        assert_eq!(a.target_dir, Some(PathBuf::from("d")));
        assert_eq!(a.paths.len(), 2);
        let a = copy_args("-n -i x y");
        assert!(a.interactive && !a.opts.no_clobber);
        let a = copy_args("--backup=numbered -S .bak x y");
        let b = a.opts.backup.expect("backup");
        assert_eq!(
            (b.kind, b.suffix),
            (BackupKind::Numbered, OsString::from(".bak"))
        );
        let a = copy_args("--strip-trailing-slashes a/// b");
        assert_eq!(a.paths, vec![PathBuf::from("a")]);
        assert!(matches!(parse(&args("-h")), Ok(Parsed::Help)));
    }

    #[test]
    fn bad_options_are_named_once_with_a_suggestion() {
        for (line, want) in [
            ("--bs=12q a b", "--bs=12q"),
            ("--iodepth=0 a b", "--iodepth=0"),
            ("--engine=null a b", "cannot copy"),
            ("--method=fast a b", "--method=fast"),
            ("--direct=1 a b", "takes no value"),
            ("-q a b", "'-q'"),
            ("a", "missing destination"),
            ("--frobnicate a b", "'--frobnicate'"),
            ("--recursiv a b", "did you mean '--recursive'"),
            ("--sparse=sometimes a b", "--sparse=sometimes"),
            ("--reflink --sparse=never a b", "--sparse=auto"),
            ("-t d -T a", "cannot combine"),
            ("--backup -n a b", "mutually exclusive"),
            ("--preserve=context a b", "SELinux"),
            ("-Z a b", "chcon"),
        ] {
            let e = match parse(&args(line)) {
                Err(e) => e,
                Ok(_) => panic!("{line}: accepted"),
            };
            assert!(e.contains(want), "{line}: {e}");
            assert_eq!(
                e.matches(want).count(),
                1,
                "{line}: named more than once: {e}"
            );
        }
    }

    /// Any argument list, however odd, is parsed or refused: never a panic.
    #[test]
    fn no_argument_list_panics() {
        let tokens: [&[u8]; 24] = [
            b"-",
            b"--",
            b"-t",
            b"-S",
            b"--backup=",
            b"--reflink=",
            b"--sparse",
            b"-abdfHilLnPprRsTuvx",
            b"--preserve=",
            b"--no-preserve=all,",
            b"--bs=",
            b"--iodepth=99999999999",
            b"\xff\xfe",
            b"-\xe9",
            b"--\xe9=1",
            b"--engine=",
            b"a",
            b"b/",
            b"--method=",
            b"--sync=x",
            b"-tS",
            b"--parents",
            b"--target-directory",
            b"-Zq",
        ];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..5000 {
            let mut line = Vec::new();
            for _ in 0..(x % 6) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                line.push(OsString::from_vec(
                    tokens[(x % tokens.len() as u64) as usize].to_vec(),
                ));
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let _ = parse(&line);
        }
    }

    #[test]
    fn non_utf8_paths_pass_through_and_non_utf8_values_are_refused() {
        let raw = vec![OsString::from_vec(b"caf\xe9".to_vec()), OsString::from("x")];
        match parse(&raw) {
            Ok(Parsed::Copy(a)) => assert_eq!(a.paths[0].as_os_str(), raw[0].as_os_str()),
            _ => panic!("not parsed"),
        }
        let mut bad = vec![OsString::from_vec(b"--bs=1\xff".to_vec())];
        bad.extend(args("a b"));
        assert!(parse(&bad).is_err());
    }
}
