//! `iolab cp` end to end: byte-exact copies at the sizes where alignment and block boundaries
//! bite, through every method and engine, buffered and direct; sparse files; trees; and the
//! failures that must not lose data (a full disk, a kill in the middle, Ctrl-C, a file onto
//! itself).

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn dir(name: &str) -> PathBuf {
    iolab_testkit::scratch_dir!(&format!("cp/{name}"))
}

fn cp_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iolab"));
    c.arg("cp").args(args);
    c
}

fn cp(args: &[&str]) -> Output {
    let out = cp_cmd(args).output().expect("run iolab cp");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    out
}

fn ok(args: &[&str]) -> String {
    let out = cp(args);
    assert!(
        out.status.success(),
        "iolab cp {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The names in a directory, sorted.
fn names(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(d)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

const BS: usize = 64 << 10;
const SIZES: [usize; 9] = [0, 1, 4095, 4096, 4097, BS - 1, BS, BS + 1, 3 * BS + 17];

#[test]
fn every_size_is_copied_byte_exact_by_every_method_and_engine_buffered_and_direct() {
    let d = dir("sizes");
    let src = d.join("src");
    fs::create_dir(&src).expect("mkdir");
    let mut files = Vec::new();
    for (i, n) in SIZES.iter().enumerate() {
        let p = src.join(format!("f{n}"));
        fs::write(&p, iolab_testkit::pattern(i as u64, *n)).expect("write source");
        files.push(p);
    }
    let bs = format!("--bs={BS}");
    let variants: &[&[&str]] = &[
        &[],
        &["--method=copy_file_range"],
        &["--method=engine", "--engine=io_uring"],
        &["--method=engine", "--engine=libaio"],
        &["--method=engine", "--engine=psync"],
        &["--method=engine", "--engine=posixaio"],
        &["--direct", "--engine=io_uring"],
        &["--direct", "--engine=libaio", "--iodepth=1"],
        &["--direct", "--engine=psync"],
        &["--sync=dsync", "--engine=io_uring", "--verify"],
    ];
    for (k, v) in variants.iter().enumerate() {
        let out = d.join(format!("out{k}"));
        fs::create_dir(&out).expect("mkdir");
        let mut args: Vec<&str> = vec!["-v", &bs];
        args.extend_from_slice(v);
        args.extend(files.iter().map(|p| s(p)));
        args.push(s(&out));
        let said = ok(&args);
        for (i, n) in SIZES.iter().enumerate() {
            let got = fs::read(out.join(format!("f{n}"))).expect("read copy");
            assert!(
                got == iolab_testkit::pattern(i as u64, *n),
                "{v:?}: size {n} differs (len {})",
                got.len()
            );
        }
        let want_method = match v.first() {
            Some(&"--method=copy_file_range") | None => "copy_file_range",
            _ => v
                .iter()
                .find_map(|a| a.strip_prefix("--engine="))
                .unwrap_or("?"),
        };
        assert!(said.contains(want_method), "{v:?} said: {said}");
        assert_eq!(names(&out).len(), SIZES.len(), "{v:?}: stray files");
    }
}

#[test]
fn a_100_mib_file_is_byte_exact_through_each_engine_with_its_crc_verified() {
    let d = dir("big");
    let data = iolab_testkit::pattern(7, 100 << 20);
    let src = d.join("big");
    fs::write(&src, &data).expect("write");
    // The default on ext4: the engine with an O_DIRECT destination.
    let dst = d.join("copy-auto");
    let said = ok(&["-v", "--verify", s(&src), s(&dst)]);
    assert!(said.contains("verified crc32c"), "{said}");
    assert!(fs::read(&dst).expect("read") == data, "auto: copy differs");
    for engine in ["io_uring", "libaio", "psync"] {
        let dst = d.join(format!("copy-{engine}"));
        let e = format!("--engine={engine}");
        let said = ok(&["-v", "--direct", "--verify", &e, s(&src), s(&dst)]);
        assert!(said.contains("verified crc32c"), "{said}");
        assert!(
            fs::read(&dst).expect("read") == data,
            "{engine}: copy differs"
        );
    }
}

#[test]
fn sparse_files_stay_sparse_by_every_method() {
    let d = dir("sparse");
    let src = d.join("sparse");
    let f = fs::File::create(&src).expect("create");
    f.set_len(64 << 20).expect("size");
    use std::os::unix::fs::FileExt;
    f.write_all_at(&iolab_testkit::pattern(1, 10_000), 8 << 20)
        .expect("write");
    f.write_all_at(&iolab_testkit::pattern(2, 5), (64 << 20) - 5)
        .expect("write");
    drop(f);
    let want = fs::read(&src).expect("read");
    for (k, v) in [
        vec![],
        vec!["--method=copy_file_range"],
        vec!["--method=engine"],
        vec!["--method=engine", "--direct", "--engine=libaio"],
    ]
    .iter()
    .enumerate()
    {
        let dst = d.join(format!("copy{k}"));
        let mut args = v.clone();
        args.extend([s(&src), s(&dst)]);
        ok(&args);
        let m = fs::metadata(&dst).expect("stat");
        assert_eq!(m.len(), 64 << 20, "{v:?}");
        assert!(
            m.blocks() * 512 < 1 << 20,
            "{v:?}: {} KiB allocated for 10 KiB of data",
            m.blocks() / 2
        );
        assert!(fs::read(&dst).expect("read") == want, "{v:?}: differs");
    }
}

/// Regression: a file that is all hole (`truncate -s 10M`) was copied as 0 bytes, exit 0, by
/// the engine (the default on ext4 for big files, --method=engine, any --engine, and in -r).
#[test]
fn all_hole_empty_and_trailing_hole_files_keep_size_and_holes_by_every_method() {
    let d = dir("holes");
    let src = d.join("src");
    fs::create_dir(&src).expect("mkdir");
    let sizes = [("allhole", 10 << 20), ("empty", 0), ("tail", 6 << 20)];
    for (name, len) in sizes {
        fs::File::create(src.join(name))
            .and_then(|f| f.set_len(len))
            .expect("truncate");
    }
    use std::os::unix::fs::FileExt;
    fs::File::options()
        .write(true)
        .open(src.join("tail"))
        .and_then(|f| f.write_all_at(&iolab_testkit::pattern(3, 5000), 4096))
        .expect("write");
    for (k, v) in [
        vec![],
        vec!["--method=engine"],
        vec!["--engine=psync"],
        vec!["--method=engine", "--engine=libaio", "--direct"],
        vec!["--method=copy_file_range"],
        vec!["--sparse=always"],
        vec!["--reflink=never"],
    ]
    .iter()
    .enumerate()
    {
        for tree in [false, true] {
            let out = d.join(format!("out{k}{tree}"));
            let mut args = v.clone();
            if tree {
                args.extend(["-r", s(&src), s(&out)]);
                ok(&args);
            } else {
                fs::create_dir(&out).expect("mkdir");
                for (name, _) in sizes {
                    let mut a = args.clone();
                    let (from, to) = (src.join(name), out.join(name));
                    a.extend([s(&from), s(&to)]);
                    ok(&a);
                }
            }
            for (name, len) in sizes {
                let m = fs::metadata(out.join(name)).expect("stat");
                assert_eq!(m.len(), len, "{v:?} tree={tree}: {name}");
                assert!(m.blocks() * 512 <= 64 << 10, "{v:?}: {name} not sparse");
                assert!(
                    fs::read(out.join(name)).expect("read")
                        == fs::read(src.join(name)).expect("read"),
                    "{v:?} tree={tree}: {name} differs"
                );
            }
        }
    }
}

#[test]
fn trees_keep_structure_links_modes_and_times_with_p() {
    let d = dir("tree");
    let src = d.join("src");
    fs::create_dir_all(src.join("a/b/empty")).expect("mkdir");
    let mut want = Vec::new();
    for i in 0..300usize {
        let rel = format!("a/{}/f{i}", if i % 2 == 0 { "b" } else { "." });
        let p = src.join(&rel);
        fs::write(&p, iolab_testkit::pattern(i as u64, i * 37)).expect("write");
        want.push(rel);
    }
    fs::set_permissions(src.join("a/f1"), fs::Permissions::from_mode(0o751)).expect("chmod");
    fs::set_permissions(src.join("a/b/f0"), fs::Permissions::from_mode(0o600)).expect("chmod");
    std::os::unix::fs::symlink("b/f2", src.join("a/link")).expect("symlink");
    std::os::unix::fs::symlink("/nonexistent/target", src.join("a/dangling")).expect("symlink");
    let old = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    fs::File::options()
        .write(true)
        .open(src.join("a/f3"))
        .and_then(|f| f.set_modified(old))
        .expect("set mtime");
    for (k, extra) in [
        vec!["-rp"],
        vec!["-rp", "--method=engine", "--iodepth=4"],
        vec!["-rp", "--method=engine", "--engine=psync"],
        vec!["-rp", "--direct", "--engine=libaio", "--bs=64k"],
    ]
    .iter()
    .enumerate()
    {
        let dst = d.join(format!("dst{k}"));
        let mut args = extra.clone();
        args.extend([s(&src), s(&dst)]);
        ok(&args);
        for rel in &want {
            assert!(
                fs::read(src.join(rel)).expect("src") == fs::read(dst.join(rel)).expect("dst"),
                "{extra:?}: {rel} differs"
            );
        }
        assert!(dst.join("a/b/empty").is_dir());
        assert_eq!(
            fs::read_link(dst.join("a/link")).expect("link"),
            Path::new("b/f2")
        );
        assert_eq!(
            fs::read_link(dst.join("a/dangling")).expect("link"),
            Path::new("/nonexistent/target")
        );
        let mode = |p: &Path| fs::metadata(p).expect("stat").mode() & 0o7777;
        assert_eq!(mode(&dst.join("a/f1")), 0o751, "{extra:?}");
        assert_eq!(mode(&dst.join("a/b/f0")), 0o600, "{extra:?}");
        assert_eq!(
            fs::metadata(dst.join("a/f3"))
                .expect("stat")
                .modified()
                .expect("mtime"),
            old
        );
        assert_eq!(names(&dst.join("a")).len(), names(&src.join("a")).len());
    }
}

#[test]
fn no_clobber_keeps_the_destination_and_a_file_is_never_copied_onto_itself() {
    let d = dir("refuse");
    let (a, b) = (d.join("a"), d.join("b"));
    fs::write(&a, b"new").expect("write");
    fs::write(&b, b"old").expect("write");
    let said = ok(&["-nv", s(&a), s(&b)]);
    assert!(said.contains("not replacing"), "{said}");
    assert_eq!(fs::read(&b).expect("read"), b"old");

    let out = cp(&[s(&a), s(&a)]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("same file"), "{err}");
    assert_eq!(fs::read(&a).expect("read"), b"new");

    let out = cp(&[s(&d), s(&d.join("x"))]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("use -r"));

    let out = cp(&["-r", s(&d), s(&d.join("inside"))]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("into itself"));

    let out = cp(&["--direct", "--bs=6000", s(&a), s(&b)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("multiple of 4096"));
    assert_eq!(fs::read(&b).expect("read"), b"old");

    let out = cp(&["--iodepth=lots", s(&a), s(&b)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--iodepth=lots"));
    assert_eq!(names(&d), vec!["a", "b"]);
}

/// A small tmpfs to fill, or `None` (with the reason printed) where we may not mount.
struct SmallFs(PathBuf);

impl SmallFs {
    fn mount(at: &Path, size: &str) -> Option<SmallFs> {
        fs::create_dir_all(at).ok()?;
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs", s(at)])
            .stderr(Stdio::null())
            .status();
        match st {
            Ok(st) if st.success() => Some(SmallFs(at.to_path_buf())),
            _ => {
                iolab_testkit::skip(
                    "cp a_full_disk_is_named_and_leaves_the_old_destination_whole",
                    &"cannot mount a tmpfs here (needs root)",
                );
                None
            }
        }
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_is_named_and_leaves_the_old_destination_whole() {
    let d = dir("enospc");
    let Some(small) = SmallFs::mount(&d.join("small"), "2m") else {
        return;
    };
    let dst = small.0.join("dst");
    fs::write(&dst, b"the old destination").expect("write");
    // Dense: the preallocation fails. Sparse: the writes themselves fail midway.
    let dense = d.join("dense");
    fs::write(&dense, iolab_testkit::pattern(3, 4 << 20)).expect("write");
    let sparse = d.join("sparse");
    let f = fs::File::create(&sparse).expect("create");
    f.set_len(16 << 20).expect("size");
    use std::os::unix::fs::FileExt;
    f.write_all_at(&iolab_testkit::pattern(4, 3 << 20), 1 << 20)
        .expect("write");
    drop(f);
    for tmpfile in ["1", "0"] {
        for (src, extra) in [(&dense, vec![]), (&sparse, vec!["--method=engine"])] {
            let mut args = extra.clone();
            args.extend([s(src), s(&dst)]);
            let out = cp_cmd(&args)
                .env("IOLAB_CP_TMPFILE", tmpfile)
                .output()
                .expect("run");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{err}");
            assert!(err.contains("No space left on device"), "{err}");
            assert!(err.contains("ENOSPC") && err.contains(s(&dst)), "{err}");
            assert!(err.contains("was not changed"), "{err}");
            assert_eq!(fs::read(&dst).expect("read"), b"the old destination");
            assert_eq!(names(&small.0), vec!["dst"], "tmpfile={tmpfile} {extra:?}");
        }
    }
}

fn wait_exit(child: &mut std::process::Child) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(st) = child.try_wait().expect("wait") {
            return st;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "copy did not stop");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts a copy slow enough to interrupt (4 KiB O_SYNC writes one at a time).
fn slow_copy(src: &Path, dst: &Path, tmpfile: &str) -> std::process::Child {
    cp_cmd(&[
        "--method=engine",
        "--sync",
        "--bs=4k",
        "--iodepth=1",
        s(src),
        s(dst),
    ])
    .env("IOLAB_CP_TMPFILE", tmpfile)
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn")
}

/// A slow copy, 300 ms in and still running.
fn copy_midway(src: &Path, dst: &Path, tmpfile: &str) -> std::process::Child {
    let mut child = slow_copy(src, dst, tmpfile);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().expect("wait").is_none(),
        "copy ended too soon to test"
    );
    child
}

#[test]
fn a_killed_copy_leaves_the_old_destination_and_at_most_a_temporary_the_next_run_removes() {
    let d = dir("kill");
    let src = d.join("src");
    fs::write(&src, iolab_testkit::pattern(5, 64 << 20)).expect("write");
    let dst = d.join("dst");
    fs::write(&dst, b"old").expect("write");
    // O_TMPFILE: nothing at all is left.
    let mut child = copy_midway(&src, &dst, "1");
    child.kill().expect("SIGKILL");
    wait_exit(&mut child);
    assert_eq!(fs::read(&dst).expect("read"), b"old");
    assert_eq!(names(&d), vec!["dst", "src"]);

    // A new destination: nothing under its name, nothing else either.
    let fresh = d.join("fresh");
    let mut child = copy_midway(&src, &fresh, "1");
    child.kill().expect("SIGKILL");
    wait_exit(&mut child);
    assert!(!fresh.exists());
    assert_eq!(names(&d), vec!["dst", "src"]);

    // A named temporary file: left by the kill, removed (and named) by the next run.
    let mut child = slow_copy(&src, &dst, "0");
    let host = fs::read_to_string("/proc/sys/kernel/hostname").expect("host name");
    let tmp = d.join(format!(".dst.iolab-{}-{}.tmp", host.trim(), child.id()));
    let t = Instant::now();
    while fs::metadata(&tmp).map(|m| m.len()).unwrap_or(0) == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "no temporary file appeared"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    wait_exit(&mut child);
    assert_eq!(fs::read(&dst).expect("read"), b"old");
    assert!(tmp.exists(), "the kill should have left {}", tmp.display());
    let small = d.join("small");
    fs::write(&small, b"next").expect("write");
    let out = cp(&[s(&small), s(&d.join("next"))]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("left by an interrupted copy") && err.contains(".dst.iolab-"),
        "{err}"
    );
    assert!(!tmp.exists());
}

#[test]
fn ctrl_c_stops_removes_the_temporary_and_exits_130() {
    let d = dir("sigint");
    let src = d.join("src");
    fs::write(&src, iolab_testkit::pattern(6, 64 << 20)).expect("write");
    let dst = d.join("dst");
    fs::write(&dst, b"old").expect("write");
    for tmpfile in ["1", "0"] {
        let mut child = copy_midway(&src, &dst, tmpfile);
        let st = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(st.success());
        let st = wait_exit(&mut child);
        assert_eq!(st.code(), Some(130), "tmpfile={tmpfile}");
        let mut err = String::new();
        use std::io::Read;
        if let Some(mut e) = child.stderr.take() {
            e.read_to_string(&mut err).expect("stderr");
        }
        assert!(err.contains("interrupted"), "{err}");
        assert_eq!(fs::read(&dst).expect("read"), b"old");
        assert_eq!(names(&d), vec!["dst", "src"], "tmpfile={tmpfile}");
    }
}

#[test]
fn reflink_is_used_where_the_file_system_shares_blocks() {
    let d = dir("reflink");
    let mkfs = ["/usr/sbin/mkfs.xfs", "/sbin/mkfs.xfs"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(mkfs) = mkfs else {
        iolab_testkit::skip(
            "cp reflink_is_used_where_the_file_system_shares_blocks",
            &"mkfs.xfs is not installed (apt-get install xfsprogs)",
        );
        return;
    };
    let img = d.join("xfs.img");
    fs::File::create(&img)
        .and_then(|f| f.set_len(320 << 20))
        .expect("image");
    let st = Command::new(mkfs)
        .args(["-q", "-m", "reflink=1", s(&img)])
        .status()
        .expect("mkfs");
    assert!(st.success());
    let mnt = d.join("mnt");
    fs::create_dir(&mnt).expect("mkdir");
    let st = Command::new("mount")
        .args(["-o", "loop", s(&img), s(&mnt)])
        .stderr(Stdio::null())
        .status();
    if !st.is_ok_and(|s| s.success()) {
        iolab_testkit::skip(
            "cp reflink_is_used_where_the_file_system_shares_blocks",
            &"cannot mount a loop device here (needs root)",
        );
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _u = Unmount(mnt.clone());
    let src = mnt.join("src");
    let data = iolab_testkit::pattern(9, (8 << 20) + 123);
    fs::write(&src, &data).expect("write");
    for v in [vec!["-v"], vec!["-v", "--method=reflink"]] {
        let dst = mnt.join(format!("dst{}", v.len()));
        let mut args = v.clone();
        args.extend([s(&src), s(&dst)]);
        let said = ok(&args);
        assert!(said.contains("(reflink,"), "{v:?}: {said}");
        assert!(fs::read(&dst).expect("read") == data);
    }
    // A file that is all hole keeps its size and its holes through a reflink too.
    let hole = mnt.join("hole");
    fs::File::create(&hole)
        .and_then(|f| f.set_len(10 << 20))
        .expect("truncate");
    for v in ["--method=reflink", "--method=auto"] {
        let dst = mnt.join(format!("hole{v}"));
        ok(&[v, s(&hole), s(&dst)]);
        let m = fs::metadata(&dst).expect("stat");
        assert_eq!((m.len(), m.blocks()), (10 << 20, 0), "{v}");
    }
    // On a file system without reflinks, forcing it is a clear error and nothing is created.
    let out = cp(&["--method=reflink", s(&src), s(&d.join("no"))]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot share blocks"));
    assert!(!d.join("no").exists());
}

/// procfs says 0 bytes and sysfs 4096, whatever the contents: copying by size gave an empty
/// /proc/cpuinfo and refused sysfs attributes as "shrank".
#[test]
fn pseudo_files_are_copied_to_their_end_not_their_size() {
    let d = dir("pseudo");
    for src in ["/proc/version", "/sys/class/mem/null/dev"] {
        let Ok(want) = fs::read(src) else {
            iolab_testkit::skip(
                "cp pseudo_files_are_copied_to_their_end_not_their_size",
                &format!("{src} is not readable here"),
            );
            continue;
        };
        assert!(!want.is_empty());
        let dst = d.join(src.replace('/', "_"));
        let said = ok(&["-v", src, s(&dst)]);
        assert!(said.contains("read/write to end of file"), "{said}");
        assert_eq!(fs::read(&dst).expect("read"), want, "{src}");
    }
}

/// --verify is only worth having if a bad copy never gets its name: with a byte flipped in the
/// copy before it is read back (the IOLAB_CP_TEST_CORRUPT hook), the copy fails and the old
/// destination stays.
#[test]
fn verify_catches_a_corrupted_copy_and_does_not_name_it() {
    let d = dir("verify");
    let src = d.join("src");
    fs::write(&src, iolab_testkit::pattern(8, 300_000)).expect("write");
    let dst = d.join("dst");
    fs::write(&dst, b"old").expect("write");
    for method in ["--method=engine", "--method=copy_file_range"] {
        let out = cp_cmd(&["--verify", method, s(&src), s(&dst)])
            .env("IOLAB_CP_TEST_CORRUPT", "1")
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{method}: {err}");
        assert!(err.contains("verification failed"), "{method}: {err}");
        assert_eq!(fs::read(&dst).expect("read"), b"old", "{method}");
        assert_eq!(names(&d), vec!["dst", "src"], "{method}");
    }
    // Without the flip the same copy verifies and lands.
    ok(&["--verify", s(&src), s(&dst)]);
    assert!(fs::read(&dst).expect("read") == iolab_testkit::pattern(8, 300_000));
}

/// Regression: at 80 columns the bar wrapped and erased the `-v` lines, and a finished bar stayed
/// at 96%. Under a pseudo-terminal 80 columns wide (script(1)): every bar line fits, every `-v`
/// line is printed whole, and the bar is cleared at the end.
#[test]
fn the_progress_bar_fits_80_columns_keeps_v_lines_and_clears() {
    if Command::new("script").arg("--version").output().is_err() {
        iolab_testkit::skip(
            "cp the_progress_bar_fits_80_columns_keeps_v_lines_and_clears",
            &"script(1) is not installed (util-linux)",
        );
        return;
    }
    let d = dir("progress");
    let src = d.join("src");
    fs::create_dir(&src).expect("mkdir");
    for i in 0..3 {
        fs::write(
            src.join(format!("f{i}")),
            iolab_testkit::pattern(i, 8 << 20),
        )
        .expect("write");
    }
    let dst = d.join("dst");
    let line = format!(
        "stty cols 80; {} cp -r -v --progress --method=engine --sync --bs=64k {} {}",
        env!("CARGO_BIN_EXE_iolab"),
        s(&src),
        s(&dst)
    );
    let out = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .output()
        .expect("script");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let raw = String::from_utf8_lossy(&out.stdout).into_owned();
    let plain = strip_escapes(&raw);
    let bars: Vec<&str> = plain
        .split(['\r', '\n'])
        .filter(|l| l.contains('%') && l.contains("files"))
        .collect();
    assert!(!bars.is_empty(), "no bar was drawn: {raw:?}");
    for b in &bars {
        assert!(
            b.chars().count() <= 80,
            "{} columns: {b}",
            b.chars().count()
        );
    }
    for i in 0..3 {
        let want = format!(
            "'{}' -> '{}' (",
            s(&src.join(format!("f{i}"))),
            s(&dst.join(format!("f{i}")))
        );
        assert!(
            plain.split(['\r', '\n']).any(|l| l.starts_with(&want)),
            "{want} missing: {raw:?}"
        );
    }
    // The last thing drawn on the bar's line is its erasure.
    let last_bar = raw.rfind("/3 files").expect("bar");
    assert!(
        raw[last_bar..].contains("\x1b[2K"),
        "bar left on screen: {:?}",
        &raw[last_bar..]
    );
    assert!(plain.contains("3 files, 24.0 MiB"), "{plain}");
}

/// Removes terminal escape sequences (CSI ... letter).
fn strip_escapes(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for n in chars.by_ref() {
                if n.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// -i asks on standard input: "y" replaces, anything else keeps the destination.
#[test]
fn interactive_asks_and_keeps_the_destination_unless_told_yes() {
    use std::io::Write;
    let d = dir("interactive");
    let (a, b) = (d.join("a"), d.join("b"));
    fs::write(&a, b"new").expect("write");
    for (answer, want) in [("n\n", &b"old"[..]), ("", b"old"), ("y\n", b"new")] {
        fs::write(&b, b"old").expect("write");
        let mut child = cp_cmd(&["-i", s(&a), s(&b)])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        if let Some(mut i) = child.stdin.take() {
            i.write_all(answer.as_bytes()).expect("answer");
        }
        let out = child.wait_with_output().expect("wait");
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("overwrite"));
        assert_eq!(fs::read(&b).expect("read"), want, "answer {answer:?}");
    }
}

/// Regression: `iolab cp -rv ... | head -2` panicked on the first `-v` line after head exited,
/// leaving the tree half copied. A closed standard output ends no copy.
#[test]
fn a_closed_stdout_does_not_stop_a_verbose_copy() {
    let d = dir("epipe");
    let src = d.join("src");
    fs::create_dir(&src).expect("mkdir");
    for i in 0..50 {
        fs::write(src.join(format!("f{i}")), iolab_testkit::pattern(i, 100)).expect("write");
    }
    let dst = d.join("dst");
    let mut child = cp_cmd(&["-rv", s(&src), s(&dst)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("panicked"), "{err}");
    assert_eq!(names(&dst).len(), 50);
    let help = cp_cmd(&["--help"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            drop(c.stdout.take());
            c.wait_with_output()
        })
        .expect("help");
    assert!(
        help.status.success(),
        "{}",
        String::from_utf8_lossy(&help.stderr)
    );
}

/// null moves no data and mmap's mapping dies with a truncated source: the engine's `Caps`
/// refuse them before any directory or file is made.
#[test]
fn an_engine_that_cannot_copy_is_refused_before_anything_is_made() {
    let d = dir("unfit");
    fs::create_dir_all(d.join("src/sub")).expect("mkdir");
    fs::write(d.join("src/sub/f"), b"data").expect("write");
    for engine in ["null", "mmap"] {
        let dst = d.join(engine);
        let out = cp(&[
            "-r",
            &format!("--engine={engine}"),
            s(&d.join("src")),
            s(&dst),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{engine}: {err}");
        assert!(err.contains("cannot copy with it"), "{engine}: {err}");
        assert!(!dst.exists(), "{engine}: the copy was started");
    }
}
