//! `iolab cp` against GNU cp: the same flags on the same tree must give the same result (file
//! types, sizes, modes, times where kept, link counts and hard-link groups, symlink targets,
//! device numbers, contents, holes, xattrs where kept). Skips, saying why, where GNU cp is not
//! installed; the device node needs root (mknod), and is left out otherwise.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant, SystemTime};

fn dir(name: &str) -> PathBuf {
    iolab_testkit::scratch_dir!(&format!("cp_gnu/{name}"))
}

/// GNU cp, if this machine has it.
fn gnu_cp() -> Option<&'static str> {
    let out = Command::new("cp").arg("--version").output().ok()?;
    String::from_utf8_lossy(&out.stdout)
        .contains("GNU coreutils")
        .then_some("cp")
}

/// Whether GNU cp is here; if not, `case` is skipped, saying so.
fn have_gnu_cp(case: &str) -> bool {
    let have = gnu_cp().is_some();
    if !have {
        iolab_testkit::skip(case, &"GNU cp is not installed");
    }
    have
}

fn is_root() -> bool {
    fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn run(prog: &str, pre: &[&str], args: &[&OsStr], cwd: &Path) -> Output {
    let out = Command::new(prog)
        .args(pre)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    out
}

fn iolab(args: &[&OsStr], cwd: &Path) -> Output {
    run(env!("CARGO_BIN_EXE_iolab"), &["cp"], args, cwd)
}

fn gnu(args: &[&OsStr], cwd: &Path) -> Output {
    run("cp", &[], args, cwd)
}

fn sh(cmd: &str, args: &[&OsStr]) -> bool {
    Command::new(cmd)
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

/// A tree with what cp has to get right: holes (all hole, trailing hole, 2 MiB of zeros in
/// data), an empty file, hard links, symlinks (one dangling), a FIFO, a device node (root),
/// modes, old times, an xattr, and a name that is not UTF-8.
fn make_tree(root: &Path) -> bool {
    fs::create_dir_all(root.join("sub/deeper")).expect("mkdir");
    fs::write(root.join("plain"), b"hello\n").expect("write");
    fs::write(root.join("empty"), b"").expect("write");
    fs::File::create(root.join("allhole"))
        .and_then(|f| f.set_len(10 << 20))
        .expect("truncate");
    let tail = fs::File::create(root.join("sub/tailhole")).expect("create");
    tail.set_len(6 << 20).expect("size");
    std::os::unix::fs::FileExt::write_all_at(&tail, &[7u8; 5000], 4096).expect("write");
    let mut zeros = vec![1u8; 1 << 20];
    zeros.extend(vec![0u8; 2 << 20]);
    zeros.extend(vec![2u8; 1 << 20]);
    fs::write(root.join("zeros"), &zeros).expect("write");
    fs::hard_link(root.join("plain"), root.join("sub/hardlink")).expect("link");
    fs::hard_link(root.join("plain"), root.join("sub/deeper/hardlink2")).expect("link");
    std::os::unix::fs::symlink("../plain", root.join("sub/rel")).expect("symlink");
    std::os::unix::fs::symlink("/nonexistent", root.join("dangling")).expect("symlink");
    assert!(sh("mkfifo", &[root.join("fifo").as_os_str()]), "mkfifo");
    let dev = is_root()
        && sh(
            "mknod",
            &[
                root.join("null").as_os_str(),
                OsStr::new("c"),
                OsStr::new("1"),
                OsStr::new("3"),
            ],
        );
    fs::write(root.join(OsStr::from_bytes(b"caf\xe9")), b"not utf-8").expect("write");
    fs::set_permissions(root.join("sub/tailhole"), fs::Permissions::from_mode(0o640))
        .expect("chmod");
    fs::set_permissions(root.join("sub/deeper"), fs::Permissions::from_mode(0o750)).expect("chmod");
    let xattr = sh(
        "setfattr",
        &[
            OsStr::new("-n"),
            OsStr::new("user.iolab"),
            OsStr::new("-v"),
            OsStr::new("kept"),
            root.join("plain").as_os_str(),
        ],
    );
    if !xattr {
        iolab_testkit::skip(
            "cp_gnu make_tree",
            &"user xattrs not available here; not compared",
        );
    }
    // An ACL: GNU cp keeps it with the mode (-p), not only with xattr.
    if !sh(
        "setfacl",
        &[
            OsStr::new("-m"),
            OsStr::new("u:nobody:r"),
            root.join("zeros").as_os_str(),
        ],
    ) {
        iolab_testkit::skip(
            "cp_gnu make_tree",
            &"setfacl failed or is missing; no ACL in the tree",
        );
    }
    let old = SystemTime::UNIX_EPOCH + Duration::new(1_000_000_000, 123_456_789);
    for p in ["plain", "zeros", "sub/tailhole"] {
        fs::File::options()
            .write(true)
            .open(root.join(p))
            .and_then(|f| f.set_modified(old))
            .expect("mtime");
    }
    dev
}

/// What is compared of one entry.
#[derive(Debug, PartialEq, Eq)]
struct Node {
    kind: &'static str,
    size: u64,
    mode: u32,
    nlink: u64,
    /// The first path (in sorted order) of the inode's hard-link group.
    group: String,
    target: Option<PathBuf>,
    rdev: u64,
    data: Option<Vec<u8>>,
    /// (no blocks at all, fewer blocks than bytes): holes as `ls -s` sees them.
    holes: (bool, bool),
    mtime: Option<(i64, i64)>,
    xattr: Option<String>,
}

fn snapshot(root: &Path, times: bool, xattrs: bool) -> BTreeMap<String, Node> {
    let mut out = BTreeMap::new();
    let mut groups: BTreeMap<(u64, u64), String> = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    let mut all = Vec::new();
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            if fs::symlink_metadata(&p).expect("stat").is_dir() {
                stack.push(p.clone());
            }
            all.push(p);
        }
    }
    all.sort();
    for p in all {
        let m = fs::symlink_metadata(&p).expect("stat");
        let rel = p
            .strip_prefix(root)
            .expect("inside")
            .to_string_lossy()
            .into_owned();
        let ft = m.file_type();
        let kind = if ft.is_dir() {
            "dir"
        } else if ft.is_symlink() {
            "symlink"
        } else if ft.is_fifo() {
            "fifo"
        } else if ft.is_char_device() {
            "chardev"
        } else {
            "file"
        };
        let group = groups
            .entry((m.dev(), m.ino()))
            .or_insert_with(|| rel.clone())
            .clone();
        let xattr = (xattrs && ft.is_file()).then(|| {
            let o = Command::new("getfattr")
                .args(["-d", "-m", "-", "--absolute-names"])
                .arg(&p)
                .output()
                .expect("getfattr");
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.starts_with("user.") || l.starts_with("system.posix_acl"))
                .collect::<Vec<_>>()
                .join(",")
        });
        out.insert(
            rel,
            Node {
                kind,
                size: if ft.is_dir() { 0 } else { m.len() },
                mode: m.mode() & 0o7777,
                nlink: if ft.is_dir() { 0 } else { m.nlink() },
                group,
                target: ft
                    .is_symlink()
                    .then(|| fs::read_link(&p).expect("readlink")),
                rdev: m.rdev(),
                data: ft.is_file().then(|| fs::read(&p).expect("read")),
                holes: (m.blocks() == 0, m.blocks() * 512 < m.len()),
                mtime: times.then(|| recent_or((m.mtime(), m.mtime_nsec()))),
                xattr,
            },
        );
    }
    out
}

/// A time set by the copy itself ("now") differs between two runs; only kept times compare.
fn recent_or(t: (i64, i64)) -> (i64, i64) {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    if (t.0 - now).abs() < 600 {
        (0, 0)
    } else {
        t
    }
}

fn assert_same(flags: &[&str], ours: &Path, theirs: &Path, times: bool, xattrs: bool) {
    let (a, b) = (
        snapshot(ours, times, xattrs),
        snapshot(theirs, times, xattrs),
    );
    let names = |m: &BTreeMap<String, Node>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b), "{flags:?}: different entries");
    for (k, v) in &a {
        assert_eq!(
            Some(v),
            b.get(k),
            "{flags:?}: '{k}' differs (ours, then GNU cp's)"
        );
    }
}

/// Tree copies: every flag set, same tree, same result as GNU cp.
#[test]
fn trees_match_gnu_cp_for_the_same_flags() {
    if !have_gnu_cp("cp_gnu trees_match_gnu_cp_for_the_same_flags") {
        return;
    }
    let d = dir("trees");
    let src = d.join("src");
    if !make_tree(&src) {
        iolab_testkit::skip(
            "cp_gnu trees_match_gnu_cp_for_the_same_flags",
            &"not root; the device node is left out of the tree",
        );
    }
    let xattrs = Command::new("getfattr").arg("--version").output().is_ok();
    // (flags, times compared, xattrs compared)
    let cases: &[(&[&str], bool, bool)] = &[
        (&["-r"], false, false),
        (&["-a"], true, xattrs),
        (&["-rp"], true, xattrs),
        (&["-r"], false, xattrs),
        (&["-rd"], false, false),
        (&["-r", "--preserve=links"], false, false),
        (&["-a", "--no-preserve=links"], true, false),
        (&["-rL"], false, false),
        (&["-r", "--sparse=always"], false, false),
        (&["-r", "--sparse=never"], false, false),
        (&["-a", "--reflink=auto"], true, false),
        (&["-rl"], false, false),
        (&["-r", "--attributes-only", "-p"], true, false),
        (&["-rH", "LINK"], false, false),
        (&["-rP", "LINK"], false, false),
        (&["-rL", "LINK"], false, false),
        (&["-r", "LINK"], false, false),
        (&["-aH", "LINK"], true, false),
    ];
    std::os::unix::fs::symlink("src", d.join("srclink")).expect("symlink");
    for (k, (flags, times, xa)) in cases.iter().enumerate() {
        let (ours, theirs) = (d.join(format!("ours{k}")), d.join(format!("gnu{k}")));
        // "LINK": the source is a symbolic link to the tree (for -H, -L, -P).
        let mut args: Vec<&OsStr> = flags
            .iter()
            .filter(|f| **f != "LINK")
            .map(OsStr::new)
            .collect();
        let link = d.join("srclink");
        args.push(if flags.contains(&"LINK") {
            link.as_os_str()
        } else {
            src.as_os_str()
        });
        let mut a = args.clone();
        a.push(ours.as_os_str());
        let o = iolab(&a, &d);
        let mut g = args.clone();
        g.push(theirs.as_os_str());
        let t = gnu(&g, &d);
        assert_eq!(
            o.status.code(),
            t.status.code(),
            "{flags:?}: exit status; ours said {}; GNU said {}",
            String::from_utf8_lossy(&o.stderr),
            String::from_utf8_lossy(&t.stderr)
        );
        assert_same(flags, &ours, &theirs, *times, *xa);
    }
}

/// -x: what is mounted inside the tree is not copied; its mount point is, empty, as GNU cp.
#[test]
fn one_file_system_matches_gnu_cp() {
    if !have_gnu_cp("cp_gnu one_file_system_matches_gnu_cp") {
        return;
    }
    let d = dir("onefs");
    let src = d.join("src");
    fs::create_dir_all(src.join("mnt")).expect("mkdir");
    fs::write(src.join("f"), b"x").expect("write");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "none"])
        .arg(src.join("mnt"))
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        iolab_testkit::skip(
            "cp_gnu one_file_system_matches_gnu_cp",
            &"cannot mount a tmpfs here (needs root)",
        );
        return;
    }
    fs::write(src.join("mnt/inside"), b"other fs").expect("write");
    let (ours, theirs) = (d.join("ours"), d.join("gnu"));
    let o = iolab(&[OsStr::new("-rx"), src.as_os_str(), ours.as_os_str()], &d);
    let t = gnu(
        &[OsStr::new("-rx"), src.as_os_str(), theirs.as_os_str()],
        &d,
    );
    let _ = Command::new("umount").arg(src.join("mnt")).status();
    assert_eq!(o.status.code(), t.status.code());
    assert_same(&["-rx"], &ours, &theirs, false, false);
    assert!(ours.join("mnt").is_dir() && !ours.join("mnt/inside").exists());
}

/// One operation on a fresh copy of a small scene, by both programs.
fn scene(d: &Path, name: &str) -> PathBuf {
    let s = d.join(name);
    fs::create_dir_all(s.join("dir")).expect("mkdir");
    fs::write(s.join("a"), b"new contents").expect("write");
    fs::write(s.join("b"), b"old").expect("write");
    fs::write(s.join("dir/a"), b"old in dir").expect("write");
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    let new = SystemTime::UNIX_EPOCH + Duration::from_secs(4_000_000_000);
    for (p, t) in [("a", old), ("b", new)] {
        fs::File::options()
            .write(true)
            .open(s.join(p))
            .and_then(|f| f.set_modified(t))
            .expect("mtime");
    }
    s
}

/// File operations: -u, -n, -f, backups, -t, -T, --parents, -s, -l, --remove-destination.
#[test]
fn file_operations_match_gnu_cp() {
    if !have_gnu_cp("cp_gnu file_operations_match_gnu_cp") {
        return;
    }
    let d = dir("ops");
    let cases: &[&[&str]] = &[
        &["-u", "a", "b"],
        &["-n", "a", "b"],
        &["a", "b"],
        &["--backup=numbered", "a", "b"],
        &["-b", "a", "b"],
        &["--backup=simple", "-S", ".orig", "a", "b"],
        &["--backup=existing", "a", "b"],
        &["-t", "dir", "a", "b"],
        &["-T", "a", "dir"],
        &["--parents", "dir/a", "b", "dir"],
        &["-s", "a", "c"],
        &["-s", "a", "b"],
        &["-sf", "a", "b"],
        &["-l", "a", "c"],
        &["-l", "a", "b"],
        &["-lf", "a", "b"],
        &["--remove-destination", "a", "b"],
        &["-p", "a", "c"],
        &["--attributes-only", "a", "b"],
        &["-i", "a", "b"],
    ];
    for (k, flags) in cases.iter().enumerate() {
        let (ours, theirs) = (
            scene(&d, &format!("ours{k}")),
            scene(&d, &format!("gnu{k}")),
        );
        let args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
        let o = iolab(&args, &ours);
        let t = gnu(&args, &theirs);
        assert_eq!(
            o.status.code(),
            t.status.code(),
            "{flags:?}: exit status; ours said {}; GNU said {}",
            String::from_utf8_lossy(&o.stderr),
            String::from_utf8_lossy(&t.stderr)
        );
        assert_same(flags, &ours, &theirs, true, false);
    }
    // The backup keeps the old file; running it again numbers on.
    let s = scene(&d, "again");
    for _ in 0..2 {
        let o = iolab(
            &[OsStr::new("--backup=t"), OsStr::new("a"), OsStr::new("b")],
            &s,
        );
        assert!(o.status.success());
    }
    assert_eq!(fs::read(s.join("b.~1~")).expect("backup"), b"old");
    assert_eq!(fs::read(s.join("b.~2~")).expect("backup"), b"new contents");
}

/// Regression: any argument that was not UTF-8 panicked. Names are bytes: a file and a tree
/// whose names are not UTF-8 are copied under the same bytes.
#[test]
fn names_that_are_not_utf8_are_copied_as_bytes() {
    let d = dir("bytes");
    let name = OsStr::from_bytes(b"caf\xe9");
    let src = d.join(name);
    fs::write(&src, b"x").expect("write");
    let dst = d.join(OsStr::from_bytes(b"copy\xff"));
    let o = iolab(&[src.as_os_str(), dst.as_os_str()], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(fs::read(&dst).expect("read"), b"x");
    let tree = d.join(OsStr::from_bytes(b"tr\xeae"));
    fs::create_dir_all(tree.join(name)).expect("mkdir");
    fs::write(tree.join(name).join(name), b"deep").expect("write");
    let out = d.join(OsStr::from_bytes(b"out\x80"));
    let o = iolab(&[OsStr::new("-r"), tree.as_os_str(), out.as_os_str()], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(fs::read(out.join(name).join(name)).expect("read"), b"deep");
    // A bad option value that is not UTF-8 is named, not a panic.
    let o = iolab(
        &[
            OsStr::from_bytes(b"--bs=\xff"),
            src.as_os_str(),
            dst.as_os_str(),
        ],
        &d,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not valid UTF-8"));
}

/// Regression: with a stalled source, iolab cp needed two SIGINTs or a SIGKILL. A FIFO with no
/// writer (stuck in open) and one whose writer stops writing (stuck in read) both stop on the
/// first SIGINT, exit 130, and leave nothing behind.
#[test]
fn one_sigint_stops_a_copy_whose_source_stalls() {
    let d = dir("stall");
    let fifo = d.join("fifo");
    assert!(sh("mkfifo", &[fifo.as_os_str()]), "mkfifo");
    for (k, writer) in [false, true].into_iter().enumerate() {
        for tmpfile in ["1", "0"] {
            let dst = d.join(format!("dst{k}"));
            let mut child = Command::new(env!("CARGO_BIN_EXE_iolab"))
                .args(["cp", "--engine=psync"])
                .arg(&fifo)
                .arg(&dst)
                .env("IOLAB_CP_TMPFILE", tmpfile)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn");
            // A writer that writes a little and then stalls, holding the FIFO open.
            let held = writer.then(|| {
                let mut w = fs::File::options()
                    .write(true)
                    .open(&fifo)
                    .expect("open fifo");
                std::io::Write::write_all(&mut w, b"some bytes").expect("write");
                w
            });
            std::thread::sleep(Duration::from_millis(300));
            assert!(
                child.try_wait().expect("wait").is_none(),
                "ended before the signal"
            );
            assert!(Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status()
                .is_ok_and(|s| s.success()));
            let t = Instant::now();
            let st = loop {
                if let Some(st) = child.try_wait().expect("wait") {
                    break st;
                }
                if t.elapsed() > Duration::from_secs(10) {
                    let _ = child.kill();
                    panic!("one SIGINT did not stop the copy (writer={writer})");
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            drop(held);
            assert_eq!(st.code(), Some(130), "writer={writer} tmpfile={tmpfile}");
            let mut left: Vec<_> = fs::read_dir(&d)
                .expect("read dir")
                .map(|e| e.expect("entry").file_name())
                .collect();
            left.sort();
            assert_eq!(
                left,
                vec![OsStr::new("fifo")],
                "writer={writer} tmpfile={tmpfile}"
            );
        }
    }
}

/// The subcommand's help is on standard output, exit 0, and lists the options.
#[test]
fn help_is_on_stdout_and_lists_the_gnu_options() {
    let d = dir("help");
    for flag in ["--help", "-h"] {
        let o = iolab(&[OsStr::new(flag)], &d);
        assert_eq!(o.status.code(), Some(0));
        let text = String::from_utf8_lossy(&o.stdout);
        for opt in [
            "--archive",
            "--reflink",
            "--sparse",
            "--backup",
            "--parents",
            "-x",
        ] {
            assert!(text.contains(opt), "{flag}: {opt} not listed");
        }
    }
    let o = iolab(
        &[OsStr::new("--archiv"), OsStr::new("a"), OsStr::new("b")],
        &d,
    );
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("did you mean '--archive'"), "{err}");
    assert_eq!(err.matches("--archiv'").count(), 1, "{err}");
}

/// A destination we may not write to is replaced only with -f, as in GNU cp (run as nobody in
/// a directory nobody may write to, on a file only root may write).
#[test]
fn a_read_only_destination_needs_f_as_in_gnu_cp() {
    if gnu_cp().is_none() || !is_root() {
        iolab_testkit::skip(
            "cp_gnu a_read_only_destination_needs_f_as_in_gnu_cp",
            &"needs GNU cp and root (to run as another user)",
        );
        return;
    }
    let d = dir("readonly");
    fs::set_permissions(&d, fs::Permissions::from_mode(0o777)).expect("chmod");
    let as_nobody = |prog: &str, pre: &[&str], args: &[&str], cwd: &Path| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", prog])
            .args(pre)
            .args(args)
            .current_dir(cwd)
            .output()
            .expect("setpriv")
    };
    for flags in [
        &["a", "b"][..],
        &["-f", "a", "b"],
        &["--remove-destination", "a", "b"],
    ] {
        let mut status = Vec::new();
        for who in ["ours", "gnu"] {
            let s = d.join(format!("{who}{}", flags.len()));
            fs::create_dir_all(&s).expect("mkdir");
            fs::set_permissions(&s, fs::Permissions::from_mode(0o777)).expect("chmod");
            fs::write(s.join("a"), b"new").expect("write");
            fs::write(s.join("b"), b"old").expect("write");
            fs::set_permissions(s.join("b"), fs::Permissions::from_mode(0o444)).expect("chmod");
            let out = if who == "ours" {
                as_nobody(env!("CARGO_BIN_EXE_iolab"), &["cp"], flags, &s)
            } else {
                as_nobody("cp", &[], flags, &s)
            };
            if out.status.code().is_none()
                || String::from_utf8_lossy(&out.stderr).contains("setpriv")
            {
                iolab_testkit::skip(
                    "cp_gnu a_read_only_destination_needs_f_as_in_gnu_cp",
                    &"setpriv cannot switch to nobody here",
                );
                return;
            }
            let m = fs::metadata(s.join("b")).expect("stat");
            status.push((
                out.status.code(),
                fs::read(s.join("b")).expect("read"),
                m.mode() & 0o7777,
                m.uid(),
            ));
        }
        assert_eq!(status[0], status[1], "{flags:?}: ours, then GNU cp's");
    }
}
