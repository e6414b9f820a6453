//! `iolab cp`: cp's command line over the copy pipeline.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_copy::{CopyError, CopyOpts, Event, Method, SyncWrites};
use iolab_engine::EngineKind;

const USAGE: &str = "\
usage: iolab cp [options] SRC DST
       iolab cp [options] SRC... DIR

Copies with a window of reads and writes in flight; a destination appears only when complete
(written, fsynced, renamed into place), so it is never left truncated or half-written.

  -r, -R, --recursive  copy directories and what they hold (symlinks are copied as links)
  -p, --preserve       keep mode, owner (where permitted) and timestamps
  -n, --no-clobber     never replace an existing destination
  -v, --verbose        say what was copied, and how
      --engine=NAME    io_uring (default), libaio, psync, pvsync2, posixaio, sync
      --bs=SIZE        bytes per read and write (default 1m)
      --iodepth=N      reads and writes in flight (default 16)
      --direct         O_DIRECT on both sides (the engine pipeline; the tail is handled)
      --sync[=dsync]   O_SYNC writes (O_DSYNC with =dsync)
      --verify         crc32c of source and copy, read back before the copy gets its name
      --method=M       auto (default: reflink, else copy_file_range, else the engine),
                       engine, copy_file_range, reflink
      --no-fsync       skip the fsync before the rename (faster, not crash-safe)
      --progress       a progress bar with throughput and ETA (on a terminal)";

/// Parsed command line.
struct Args {
    opts: CopyOpts,
    verbose: bool,
    progress: bool,
    paths: Vec<PathBuf>,
}

fn parse(args: &[String]) -> Result<Option<Args>, String> {
    let mut a = Args {
        opts: CopyOpts::default(),
        verbose: false,
        progress: false,
        paths: Vec::new(),
    };
    let mut only_paths = false;
    for arg in args {
        if only_paths || arg == "-" || !arg.starts_with('-') {
            a.paths.push(PathBuf::from(arg));
            continue;
        }
        if arg == "--" {
            only_paths = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            if long_flag(&mut a, name, value)? {
                return Ok(None);
            }
            continue;
        }
        for c in arg[1..].chars() {
            match c {
                'r' | 'R' => a.opts.recursive = true,
                'p' => a.opts.preserve = true,
                'n' => a.opts.no_clobber = true,
                'v' => a.verbose = true,
                'h' => return Ok(None),
                _ => return Err(format!("unknown option '-{c}' in '{arg}'")),
            }
        }
    }
    if a.paths.len() < 2 {
        return Err(match a.paths.first() {
            None => "missing file operands: SRC and DST".into(),
            Some(p) => format!("missing destination file operand after '{}'", p.display()),
        });
    }
    Ok(Some(a))
}

/// Applies one `--name[=value]`. Returns true for --help.
fn long_flag<'a>(a: &mut Args, name: &str, value: Option<&'a str>) -> Result<bool, String> {
    let need =
        |v: Option<&'a str>| v.ok_or_else(|| format!("--{name} needs a value (--{name}=...)"));
    let no_value = |v: Option<&str>| match v {
        Some(v) => Err(format!("--{name} takes no value (got '{v}')")),
        None => Ok(()),
    };
    let o = &mut a.opts;
    match name {
        "help" => return Ok(true),
        "recursive" => (no_value(value)?, o.recursive = true).1,
        "preserve" => (no_value(value)?, o.preserve = true).1,
        "no-clobber" => (no_value(value)?, o.no_clobber = true).1,
        "verbose" => (no_value(value)?, a.verbose = true).1,
        "direct" => (no_value(value)?, o.direct = true).1,
        "verify" => (no_value(value)?, o.verify = true).1,
        "no-fsync" => (no_value(value)?, o.fsync = false).1,
        "progress" => (no_value(value)?, a.progress = true).1,
        "sync" => {
            o.sync = match value {
                None | Some("sync") => SyncWrites::Sync,
                Some("dsync") => SyncWrites::Dsync,
                Some(v) => return Err(format!("--sync={v}: expected sync or dsync")),
            }
        }
        "engine" => {
            let v = need(value)?;
            o.engine = match EngineKind::from_name(v) {
                Some(EngineKind::Null) | Some(EngineKind::Mmap) => {
                    return Err(format!(
                        "--engine={v}: cannot copy with it; use io_uring, libaio, psync, \
                         pvsync2, posixaio or sync"
                    ))
                }
                Some(k) => k,
                None => {
                    return Err(format!(
                        "--engine={v}: unknown engine; use io_uring, libaio, psync, pvsync2, \
                         posixaio or sync"
                    ))
                }
            }
        }
        "bs" => {
            let v = need(value)?;
            let n = iolab_job::value::parse_size(v, 1024).map_err(|e| format!("--bs={v}: {e}"))?;
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
            o.method = Method::from_name(v).ok_or_else(|| {
                format!("--method={v}: expected auto, engine, copy_file_range or reflink")
            })?;
        }
        _ => return Err(format!("unknown option '--{name}'")),
    }
    Ok(false)
}

const CMD: crate::args::Cmd = crate::args::Cmd {
    name: "cp",
    usage: USAGE,
};

pub fn main(args: &[std::ffi::OsString]) -> ExitCode {
    let args = match crate::args::utf8_args(&CMD, args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let args = &args[..];
    let mut a = match parse(args) {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("iolab cp: {e}\n\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    // Test hook: the named-temporary-file path that file systems without O_TMPFILE take.
    if std::env::var_os("IOLAB_CP_TMPFILE").is_some_and(|v| v == "0") {
        a.opts.tmpfile = false;
    }
    match iolab_bench::stop_on_signals() {
        Ok(stop) => a.opts.cancel = stop,
        Err(e) => eprintln!("iolab cp: warning: Ctrl-C will not clean up: {e}"),
    }
    let Some(dst) = a.paths.pop() else {
        return ExitCode::from(1);
    };
    let plan = match iolab_copy::plan(&a.paths, &dst, &a.opts) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("iolab cp: {e}");
            return ExitCode::from(1);
        }
    };
    let mut failed = plan.errors.len() as u64;
    for e in &plan.errors {
        eprintln!("iolab cp: {e}");
    }
    let started = Instant::now();
    let bar = (a.progress && std::io::stderr().is_terminal())
        .then(|| Progress::start(plan.bytes, &a.opts));
    let verbose = a.verbose;
    let mut on = |ev: Event| report(ev, verbose);
    let result = iolab_copy::run(&plan, &a.opts, &mut on);
    if let Some(b) = bar {
        b.finish();
    }
    match result {
        Ok(sum) => {
            failed += sum.failed;
            if verbose {
                let secs = started.elapsed().as_secs_f64();
                eprintln!(
                    "iolab cp: {} files, {} bytes in {secs:.2}s ({:.1} MiB/s); {} directories, {} \
                     links, {} skipped, {} failed",
                    sum.files,
                    sum.bytes,
                    sum.bytes as f64 / (1 << 20) as f64 / secs.max(1e-9),
                    sum.dirs,
                    sum.symlinks,
                    sum.skipped,
                    failed
                );
            }
        }
        Err(CopyError::Interrupted) => {
            eprintln!("iolab cp: {}", CopyError::Interrupted);
            return ExitCode::from(130);
        }
        Err(e) => {
            eprintln!("iolab cp: {e}");
            return ExitCode::from(1);
        }
    }
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn report(ev: Event, verbose: bool) {
    match ev {
        Event::Failed(e) => eprintln!("iolab cp: {e}"),
        Event::Stale { path } => eprintln!(
            "iolab cp: removed '{}', left by an interrupted copy",
            path.display()
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
            println!(
                "'{}' -> '{}' ({how}, {bytes} bytes{crc})",
                src.display(),
                dst.display()
            );
        }
        Event::Dir { dst } => println!("created directory '{}'", dst.display()),
        Event::Symlink { dst, target } => {
            println!("'{}' -> '{}' (symlink)", dst.display(), target.display())
        }
        Event::Skipped { dst } => println!("not replacing '{}' (-n)", dst.display()),
    }
}

/// The progress bar, fed from the copy's byte counter by its own thread.
struct Progress {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Progress {
    fn start(total: u64, opts: &CopyOpts) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        let (s, done) = (Arc::clone(&stop), Arc::clone(&opts.progress));
        let thread = std::thread::spawn(move || {
            let bar = indicatif::ProgressBar::new(total);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta}",
            ) {
                bar.set_style(style);
            }
            while !s.load(Ordering::Relaxed) {
                bar.set_position(done.load(Ordering::Relaxed));
                std::thread::sleep(Duration::from_millis(100));
            }
            bar.set_position(done.load(Ordering::Relaxed));
            bar.finish_and_clear();
        });
        Progress { stop, thread }
    }

    fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn short_flags_combine_and_long_options_take_values() {
        let a = parse(&args(
            "-rpvn --engine=libaio --bs=64k --iodepth=8 --sync=dsync a b",
        ))
        .unwrap()
        .unwrap();
        assert!(a.opts.recursive && a.opts.preserve && a.opts.no_clobber && a.verbose);
        assert_eq!(a.opts.engine, EngineKind::Libaio);
        assert_eq!((a.opts.bs, a.opts.iodepth), (65536, 8));
        assert_eq!(a.opts.sync, SyncWrites::Dsync);
        assert_eq!(a.paths, vec![PathBuf::from("a"), PathBuf::from("b")]);
    }

    #[test]
    fn bad_options_are_named() {
        for (line, want) in [
            ("--bs=12q a b", "--bs=12q"),
            ("--iodepth=0 a b", "--iodepth=0"),
            ("--engine=null a b", "cannot copy"),
            ("--method=fast a b", "--method=fast"),
            ("--direct=1 a b", "takes no value"),
            ("-x a b", "'-x'"),
            ("a", "missing destination"),
            ("--frobnicate a b", "--frobnicate"),
        ] {
            let e = parse(&args(line)).err().unwrap_or_default();
            assert!(e.contains(want), "{line}: {e}");
        }
    }
}
