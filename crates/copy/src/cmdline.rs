//! GNU cp's command line (`iolab cp`): its options with GNU cp's meaning, into [`CopyOpts`] and
//! a [`Terminal`], plus iolab's own options. Paths stay OS strings end to end (Linux file
//! names are bytes).

use std::ffi::OsString;
use std::path::PathBuf;

use iolab_args::{describe, show, text};
use iolab_engine::EngineKind;
use lexopt::prelude::*;

use crate::{
    Backup, BackupKind, CopyOpts, Deref, Make, Method, Preserve, Sparse, SyncWrites, Terminal,
};

/// `iolab cp --help`.
pub const USAGE: &str = "\
usage: iolab cp [options] SRC DST
       iolab cp [options] SRC... DIR
       iolab cp [options] -t DIR SRC...

Copies with a window of reads and writes in flight; a destination appears only when complete
(written, fsynced, renamed into place), so it is never left truncated or half-written.
GNU cp's options have GNU cp's meaning (docs/cp.md has the table):

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

/// Parsed command line.
#[derive(Default)]
pub struct Args {
    pub opts: CopyOpts,
    /// `-v`, `--progress`, `-i`.
    pub term: Terminal,
    /// The sources (and, without `-t`, the destination last, until `check` takes it).
    pub paths: Vec<PathBuf>,
    /// Where the sources go: `-t DIR`, or the last path.
    pub target_dir: Option<PathBuf>,
}

/// What the command line asks for: a copy, or `--help`/`--version`.
pub enum Parsed {
    Copy(Box<Args>),
    Help,
    Version,
}

/// Settings resolved once the whole line is read: backups (`-S` and `--backup` may come in
/// either order; the environment fills in what the line leaves out), trailing slashes.
#[derive(Default)]
struct Late {
    backup: bool,
    control: Option<String>,
    suffix: Option<OsString>,
    strip_slashes: bool,
}

type Parser = lexopt::Parser;

/// Reads GNU cp's command line (without the program name).
pub fn parse(args: &[OsString]) -> Result<Parsed, String> {
    let mut a = Args::default();
    let mut late = Late::default();
    let mut p = lexopt::Parser::from_args(args.iter().cloned());
    while let Some(arg) = p.next().map_err(|e| describe(e, LONGS))? {
        // Owned, so the option's value can be read from the parser.
        let key = match arg {
            Value(v) => {
                a.paths.push(PathBuf::from(v));
                continue;
            }
            Short(c) => format!("-{c}"),
            Long(l) => format!("--{l}"),
        };
        match key.as_str() {
            "-h" | "--help" => return Ok(Parsed::Help),
            "--version" => return Ok(Parsed::Version),
            k => {
                if !what_option(&mut a.opts, k, &mut p)?
                    && !how_option(&mut a, &mut late, k, &mut p)?
                {
                    match k.strip_prefix("--") {
                        Some(name) => {
                            let value = p.optional_value().map(|v| text(v, k));
                            own_option(&mut a, name, value.transpose()?)?
                        }
                        None => return Err(describe(lexopt::Error::UnexpectedOption(key), LONGS)),
                    }
                }
            }
        }
    }
    a.opts.backup = resolve_backup(late.backup, late.control, late.suffix, a.opts.no_clobber)?;
    if late.strip_slashes {
        for path in &mut a.paths {
            *path = strip_trailing_slashes(path);
        }
    }
    check(&mut a)?;
    // Test hook (builds with the `test-hooks` feature, the cli crate's tests): the
    // named-temporary-file path that file systems without O_TMPFILE take.
    if cfg!(feature = "test-hooks")
        && std::env::var_os("IOLAB_CP_TMPFILE").is_some_and(|v| v == "0")
    {
        a.opts.tmpfile = false;
    }
    Ok(Parsed::Copy(Box::new(a)))
}

fn value(p: &mut Parser) -> Result<OsString, String> {
    p.value().map_err(|e| describe(e, LONGS))
}

/// The options that say what is copied and what of it is kept; false: not one of them.
fn what_option(o: &mut CopyOpts, key: &str, p: &mut Parser) -> Result<bool, String> {
    match key {
        "-a" | "--archive" => {
            o.recursive = true;
            o.deref = Some(Deref::Never);
            o.preserve = Preserve::ALL;
        }
        "-r" | "-R" | "--recursive" => o.recursive = true,
        "-d" => {
            o.deref = Some(Deref::Never);
            o.preserve.links = true;
        }
        "-L" | "--dereference" => o.deref = Some(Deref::Always),
        "-P" | "--no-dereference" => o.deref = Some(Deref::Never),
        "-H" => o.deref = Some(Deref::CommandLine),
        "-p" => o.preserve = merge(o.preserve, Preserve::BASIC, true),
        "--preserve" => {
            let list = match p.optional_value() {
                Some(v) => attrs(&text(v, "--preserve")?, "--preserve")?,
                None => Preserve::BASIC,
            };
            o.preserve = merge(o.preserve, list, true);
        }
        "--no-preserve" => {
            let v = text(value(p)?, "--no-preserve")?;
            o.preserve = merge(o.preserve, attrs(&v, "--no-preserve")?, false);
        }
        "-T" | "--no-target-directory" => o.no_target_dir = true,
        "--parents" => o.parents = true,
        "-l" | "--link" => o.make = Make::HardLink,
        "-s" | "--symbolic-link" => o.make = Make::SymLink,
        "-x" | "--one-file-system" => o.one_file_system = true,
        "--attributes-only" => o.attributes_only = true,
        "--copy-contents" => o.copy_contents = true,
        "-Z" | "--context" => {
            return Err(
                "-Z/--context: SELinux contexts are not set by iolab cp; use GNU cp -Z, \
                 or chcon after the copy"
                    .into(),
            )
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The options that say how destinations are replaced and how data moves; false: not one of
/// them.
fn how_option(a: &mut Args, late: &mut Late, key: &str, p: &mut Parser) -> Result<bool, String> {
    let o = &mut a.opts;
    match key {
        // -n and -i: the later one wins, as in GNU cp.
        "-n" | "--no-clobber" => (o.no_clobber, a.term.interactive) = (true, false),
        "-i" | "--interactive" => (o.no_clobber, a.term.interactive) = (false, true),
        "-f" | "--force" => o.force = true,
        "--remove-destination" => o.remove_destination = true,
        "-u" | "--update" => o.update = true,
        "-b" => late.backup = true,
        "--backup" => {
            late.backup = true;
            if let Some(v) = p.optional_value() {
                late.control = Some(text(v, "--backup")?);
            }
        }
        "-S" | "--suffix" => {
            // GNU cp: a suffix asks for backups.
            late.backup = true;
            late.suffix = Some(value(p)?);
        }
        "-t" | "--target-directory" => a.target_dir = Some(PathBuf::from(value(p)?)),
        "--reflink" => {
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
        "--sparse" => {
            let v = text(value(p)?, "--sparse")?;
            o.sparse = match v.as_str() {
                "auto" => Sparse::Auto,
                "always" => Sparse::Always,
                "never" => Sparse::Never,
                w => return Err(format!("--sparse={w}: expected auto, always or never")),
            };
        }
        "--strip-trailing-slashes" => late.strip_slashes = true,
        "-v" | "--verbose" => a.term.verbose = true,
        _ => return Ok(false),
    }
    Ok(true)
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
fn resolve_backup(
    asked: bool,
    control: Option<String>,
    suffix: Option<OsString>,
    no_clobber: bool,
) -> Result<Option<Backup>, String> {
    if !asked {
        return Ok(None);
    }
    if no_clobber {
        return Err("options --backup and --no-clobber are mutually exclusive".into());
    }
    let control = control.or_else(|| {
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
    let suffix = suffix
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
        "progress" => (no_value(&value)?, a.term.progress = true).1,
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

/// An engine by name. Whether it can copy is for the copy to say: it asks the engine's `Caps`.
fn engine(v: &str) -> Result<EngineKind, String> {
    EngineKind::from_name(v).ok_or_else(|| {
        format!(
            "--engine={v}: unknown engine; use io_uring, libaio, psync, pvsync2, posixaio or sync"
        )
    })
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
        assert!(a.term.verbose);
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
        assert!(a.term.interactive && !a.opts.no_clobber);
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
            ("--engine=nosuch a b", "unknown engine"),
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
