//! fio's options around a job (CPUs, NUMA, priorities, identity, cgroup, I/O scheduler,
//! commands before and after), each observed from outside the job: this test reads the job
//! thread's /proc entries, its I/O priority, its cgroup and the device's scheduler file while
//! `iolab run` runs. Where the machine cannot show an effect (one NUMA node, not root, no
//! cgroup v2, no losetup) the test says so and checks what it can.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use iolab_sys::task;

use crate::run::{Out, TestDir};

const BIN: &str = env!("CARGO_BIN_EXE_iolab");

/// A null-engine job named `t` that runs long enough to be looked at.
const RUNNING: &[&str] = &[
    "--name=t",
    "--ioengine=null",
    "--size=1m",
    "--runtime=1500ms",
    "--time_based",
];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

/// Runs `iolab run ARGS` in `d` and calls `look` on each job thread (its comm is `job.N`)
/// every 20 ms while it runs: the last value seen for each thread, and the run's output.
fn watch<T>(
    d: &TestDir,
    args: &[&str],
    look: impl Fn(&Path, i32) -> Option<T>,
) -> (BTreeMap<String, T>, Out) {
    let child = Command::new(BIN)
        .arg("run")
        .args(args)
        .current_dir(&d.path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut seen = BTreeMap::new();
    let tasks = PathBuf::from(format!("/proc/{pid}/task"));
    let mut child = child;
    while child.try_wait().unwrap().is_none() {
        for e in fs::read_dir(&tasks).into_iter().flatten().flatten() {
            let comm = fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            let comm = comm.trim();
            let tid: i32 = e.file_name().to_string_lossy().parse().unwrap_or(0);
            if comm.contains('.') && tid != pid as i32 {
                if let Some(v) = look(&e.path(), tid) {
                    seen.insert(comm.to_string(), v);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    let out = Out {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    (seen, out)
}

/// A `Key:` line of a task's status file (`Cpus_allowed_list`, `Uid`).
fn status_field(task: &Path, key: &str) -> Option<String> {
    let s = fs::read_to_string(task.join("status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .map(|v| v.trim().to_string())
}

/// Field `n` (1-based, as proc(5) numbers them) of a task's stat.
fn stat_field(task: &Path, n: usize) -> Option<i64> {
    let s = fs::read_to_string(task.join("stat")).ok()?;
    // The fields after the command name, which may hold spaces, start at field 3.
    let after = &s[s.rfind(')')? + 2..];
    after.split(' ').nth(n - 3)?.parse().ok()
}

fn is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|u| u.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

#[test]
fn cpus_allowed_policy_split_gives_each_job_its_own_cpu() {
    if task::cpus_configured() < 2 {
        iolab_testkit::skip("split", &"needs two CPUs");
        return;
    }
    let d = TestDir::new("place-split");
    let cpus = |t: &Path, _| status_field(t, "Cpus_allowed_list");
    let args = with(RUNNING, &["--numjobs=2", "--cpus_allowed=0-1"]);
    let (shared, out) = watch(&d, &args, cpus);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(shared.values().collect::<Vec<_>>(), ["0-1", "0-1"]);
    let split = with(&args, &["--cpus_allowed_policy=split"]);
    let (seen, out) = watch(&d, &split, cpus);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(seen.get("t.0").map(String::as_str), Some("0"), "{seen:?}");
    assert_eq!(seen.get("t.1").map(String::as_str), Some("1"), "{seen:?}");
}

#[test]
fn cpumask_pins_the_job_and_it_runs_there() {
    if task::cpus_configured() < 2 {
        iolab_testkit::skip("cpumask", &"needs two CPUs");
        return;
    }
    let d = TestDir::new("place-cpumask");
    // cpumask=2 is CPU 1; the CPU it last ran on is field 39 of its stat.
    let look = |t: &Path, _| Some((status_field(t, "Cpus_allowed_list")?, stat_field(t, 39)?));
    let (seen, out) = watch(&d, &with(RUNNING, &["--cpumask=2"]), look);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(seen.get("t.0"), Some(&("1".to_string(), 1)), "{seen:?}");
    // A CPU the machine lacks is refused, in fio's words.
    let n = task::cpus_configured();
    let too_big = format!("--cpus_allowed={n}");
    let out = d.run(&["--name=t", "--ioengine=null", "--size=64k", &too_big]);
    let out = out.fails();
    assert!(
        out.stderr
            .contains(&format!("CPU {n} too large (max={})", n - 1)),
        "{}",
        out.stderr
    );
}

/// The NUMA nodes this machine has.
fn nodes() -> Vec<u32> {
    let s = fs::read_to_string("/sys/devices/system/node/online").unwrap_or("0".into());
    iolab_job::place::parse_list(s.trim()).unwrap_or_else(|_| vec![0])
}

#[test]
fn numa_options_apply_their_policy_and_refuse_missing_nodes() {
    let d = TestDir::new("place-numa");
    let nodes = nodes();
    if nodes.len() == 1 {
        eprintln!("one NUMA node here: policies are checked on node 0, placement across nodes cannot show");
    }
    let node0 = fs::read_to_string("/sys/devices/system/node/node0/cpulist").unwrap_or_default();
    let cpus = |t: &Path, _| status_field(t, "Cpus_allowed_list");
    let (seen, out) = watch(&d, &with(RUNNING, &["--numa_cpu_nodes=0"]), cpus);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(seen.get("t.0").map(String::as_str), Some(node0.trim()));
    // The thread's policy shows in its numa_maps, on every mapping without one of its own.
    let has_numa_maps = Path::new("/proc/self/numa_maps").exists();
    for (opt, shown) in [
        ("local", "local"),
        ("prefer:0", "prefer:0"),
        ("bind:0", "bind:0"),
        ("interleave:0", "interleave:0"),
    ] {
        let arg = format!("--numa_mem_policy={opt}");
        let policy = |t: &Path, _| {
            let maps = fs::read_to_string(t.join("numa_maps")).ok()?;
            let heap = maps.lines().find(|l| l.contains(" heap "))?;
            heap.split_whitespace().nth(1).map(str::to_string)
        };
        let (seen, out) = watch(&d, &with(RUNNING, &[&arg]), policy);
        assert_eq!(out.code, Some(0), "{opt}: {}", out.stderr);
        if has_numa_maps {
            assert_eq!(seen.get("t.0").map(String::as_str), Some(shown), "{opt}");
        }
    }
    if !has_numa_maps {
        iolab_testkit::skip("numa_mem_policy", &"no numa_maps (kernel without NUMA)");
    }
    let missing = nodes.iter().max().unwrap_or(&0) + 1;
    for opt in [
        format!("--numa_cpu_nodes={missing}"),
        format!("--numa_mem_policy=bind:{missing}"),
    ] {
        let out = d.run(&["--name=t", "--ioengine=null", "--size=64k", &opt]);
        let out = out.fails();
        let want = format!("node {missing} does not exist");
        assert!(out.stderr.contains(&want), "{opt}: {}", out.stderr);
    }
}

#[test]
fn nice_prio_and_prioclass_set_the_job_threads_priorities() {
    let d = TestDir::new("place-prio");
    let look = |t: &Path, tid| Some((stat_field(t, 19)?, task::ioprio(tid).ok()?));
    // fio's nice adds to the nice the run started with (nice(2)), so the test may itself run
    // under `nice`: iolab inherits this thread's value.
    let base = i64::from(task::nice(0).unwrap());
    let args = with(RUNNING, &["--nice=3", "--prio=6", "--prioclass=3"]);
    let (seen, out) = watch(&d, &args, look);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let niced = (base + 3).clamp(-20, 19);
    assert_eq!(
        seen.get("t.0"),
        Some(&(niced, (task::IOPRIO_CLASS_IDLE, 6)))
    );
    // prio alone is best effort, as in fio.
    let (seen, out) = watch(&d, &with(RUNNING, &["--prio=2"]), look);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(seen.get("t.0"), Some(&(base, (task::IOPRIO_CLASS_BE, 2))));
    let out = d.run(&["--name=t", "--ioengine=null", "--prioclass=4"]);
    assert!(out
        .fails()
        .stderr
        .contains("max value out of range: 4 (3 max)"));
}

#[test]
fn uid_and_gid_give_the_job_thread_alone_that_identity() {
    if !is_root() {
        iolab_testkit::skip("uid/gid", &"needs root to change a thread's identity");
        return;
    }
    let d = TestDir::new("place-uid");
    let ids = |t: &Path, _| {
        let uid = status_field(t, "Uid")?;
        let gid = status_field(t, "Gid")?;
        Some((
            uid.split_whitespace().next()?.to_string(),
            gid.split_whitespace().next()?.to_string(),
        ))
    };
    let args = with(RUNNING, &["--uid=65534", "--gid=65533"]);
    let (seen, out) = watch(&d, &args, ids);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(seen.get("t.0"), Some(&("65534".into(), "65533".into())));
}

/// cgroup v2's mount point, if it is mounted read-write.
fn cgroup2() -> Option<PathBuf> {
    let mounts = iolab_sys::dev::mounts().ok()?;
    mounts
        .into_iter()
        .find(|m| m.fstype == "cgroup2" && m.rw)
        .map(|m| m.point)
}

/// Why a job needing root and a writable cgroup v2 cannot run here, if it cannot.
pub(crate) fn unprivileged() -> Option<&'static str> {
    match (is_root(), cgroup2().is_some()) {
        (true, true) => None,
        (false, _) => Some("needs root"),
        (true, false) => Some("needs a read-write cgroup v2 mount"),
    }
}

#[test]
fn cgroup_runs_the_job_thread_in_its_own_cgroup_removed_after() {
    let Some(mount) = cgroup2().filter(|_| is_root()) else {
        iolab_testkit::skip("cgroup", &"needs root and a read-write cgroup v2 mount");
        return;
    };
    let own = fs::read_to_string("/proc/self/cgroup").unwrap();
    let base = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .unwrap()
        .to_string();
    let name = format!("iolab-test-{}", std::process::id());
    let want = format!("0::{}/{name}", base.trim_end_matches('/'));
    let dir = mount.join(base.trim_start_matches('/')).join(&name);
    // Whatever fails below, the test leaves no cgroup behind.
    struct Rmdir(PathBuf);
    impl Drop for Rmdir {
        fn drop(&mut self) {
            let _ = fs::remove_dir(&self.0);
        }
    }
    let _cleanup = Rmdir(dir.clone());
    let d = TestDir::new("place-cgroup");
    let arg = format!("--cgroup={name}");
    let cg = |t: &Path, _| {
        let text = fs::read_to_string(t.join("cgroup")).ok()?;
        text.lines()
            .find(|l| l.starts_with("0::"))
            .map(str::to_string)
    };
    let (seen, out) = watch(&d, &with(RUNNING, &[&arg]), cg);
    if out.stderr.contains("cannot make") {
        iolab_testkit::skip("cgroup", &out.stderr.trim());
        return;
    }
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(seen.get("t.0"), Some(&want), "{seen:?}");
    assert!(!dir.exists(), "the cgroup is removed after the run");
    // cgroup_nodelete keeps it.
    let (_, out) = watch(&d, &with(RUNNING, &[&arg, "--cgroup_nodelete=1"]), cg);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(dir.exists(), "cgroup_nodelete=1 keeps the cgroup");
    fs::remove_dir(&dir).unwrap();
    // A cgroup that exists as a domain is not turned threaded (that cannot be undone).
    fs::create_dir(&dir).unwrap();
    let out = d.run(&["--name=t", "--ioengine=null", "--size=64k", &arg]);
    fs::remove_dir(&dir).unwrap();
    let err = out.fails().stderr;
    assert!(err.contains("exists and is not threaded"), "{err}");
    // As fio 3.33 on cgroup v2: a weight is an error.
    let out = d.run(&[
        "--name=t",
        "--ioengine=null",
        "--size=64k",
        &arg,
        "--cgroup_weight=500",
    ]);
    assert!(out.fails().stderr.contains("cgroup_weight"));
    assert!(!dir.exists());
}

#[test]
fn exec_prerun_and_postrun_save_their_output_as_fio_does() {
    let d = TestDir::new("place-exec");
    let out = d.run(&[
        "--name=t",
        "--ioengine=null",
        "--size=64k",
        "--exec_prerun=echo before",
        "--exec_postrun=echo after",
    ]);
    let out = out.ok();
    assert!(out
        .stdout
        .contains("t : Saving output of prerun in t.prerun.txt"));
    assert!(out
        .stdout
        .contains("t : Saving output of postrun in t.postrun.txt"));
    assert_eq!(
        fs::read_to_string(d.path.join("t.prerun.txt")).unwrap(),
        "before\n"
    );
    assert_eq!(
        fs::read_to_string(d.path.join("t.postrun.txt")).unwrap(),
        "after\n"
    );
    // A failing prerun fails the job before any I/O, and postrun does not run.
    fs::remove_file(d.path.join("t.postrun.txt")).unwrap();
    let out = d.run(&[
        "--name=t",
        "--ioengine=null",
        "--size=64k",
        "--exec_prerun=exit 3",
        "--exec_postrun=echo after",
    ]);
    let out = out.fails();
    assert!(
        out.stderr.contains("exec_prerun: 'exit 3' failed"),
        "{}",
        out.stderr
    );
    assert!(!d.path.join("t.postrun.txt").exists());
}

/// A loop device over a file of the test's, detached when dropped.
struct Loop {
    dev: String,
}

impl Loop {
    fn new(d: &TestDir) -> Option<Loop> {
        let back = d.path.join("loop.img");
        fs::write(&back, vec![0u8; 16 << 20]).ok()?;
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&back)
            .output()
            .ok()?;
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && dev.starts_with("/dev/loop")).then_some(Loop { dev })
    }

    fn scheduler_file(&self) -> PathBuf {
        let name = self.dev.trim_start_matches("/dev/");
        PathBuf::from(format!("/sys/block/{name}/queue/scheduler"))
    }

    /// The scheduler in brackets.
    fn scheduler(&self) -> String {
        let s = fs::read_to_string(self.scheduler_file()).unwrap_or_default();
        let open = s.find('[').map_or(0, |i| i + 1);
        let close = s.find(']').unwrap_or(open);
        s[open..close].to_string()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

#[test]
fn ioscheduler_switches_the_device_for_the_run_and_puts_it_back() {
    let d = TestDir::new("place-sched");
    let Some(lo) = Loop::new(&d).filter(|_| is_root()) else {
        iolab_testkit::skip("ioscheduler", &"needs root and losetup for a loop device");
        return;
    };
    let have = fs::read_to_string(lo.scheduler_file()).unwrap();
    if !have.contains("mq-deadline") || lo.scheduler() == "mq-deadline" {
        iolab_testkit::skip(
            "ioscheduler",
            &format!("loop device offers: {}", have.trim()),
        );
        return;
    }
    let before = lo.scheduler();
    let file = format!("--filename={}", lo.dev);
    let job = [
        "--name=t",
        "--rw=read",
        "--bs=4k",
        "--runtime=1500ms",
        "--time_based",
    ];
    // The legacy name of the seed article's job maps to today's, with a note.
    let args = with(&job, &[&file, "--ioscheduler=deadline"]);
    let (seen, out) = watch(&d, &args, |_, _| Some(lo.scheduler()));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(seen.get("t.0").map(String::as_str), Some("mq-deadline"));
    assert!(
        out.stdout
            .contains("ioscheduler=deadline is called mq-deadline"),
        "{}",
        out.stdout
    );
    assert_eq!(lo.scheduler(), before, "put back after the run");

    // A scheduler the kernel lacks: an error listing those it has; nothing changes.
    let out = d.run(&with(&job, &[&file, "--ioscheduler=anticipatory"]));
    let err = out.fails().stderr;
    assert!(
        err.contains("no scheduler 'anticipatory'") && err.contains("mq-deadline"),
        "{err}"
    );
    assert_eq!(lo.scheduler(), before);

    // A job of the phase that fails to start: put back too.
    let cpus = format!("--cpus_allowed={}", task::cpus_configured());
    let bad = with(&args, &["--name=u", &cpus]);
    d.run(&bad).fails();
    assert_eq!(lo.scheduler(), before, "put back after a failed start");

    // Ctrl-C during the run: put back before iolab exits.
    let long = with(&job, &[&file, "--ioscheduler=mq-deadline", "--runtime=20s"]);
    let mut child = Command::new(BIN)
        .arg("run")
        .args(&long)
        .current_dir(&d.path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut switched = false;
    for _ in 0..500 {
        if lo.scheduler() == "mq-deadline" {
            switched = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let pid = child.id().to_string();
    Command::new("kill").args(["-INT", &pid]).status().unwrap();
    child.wait().unwrap();
    assert!(switched, "the scheduler was switched while the job ran");
    assert_eq!(lo.scheduler(), before, "put back after Ctrl-C");
}

/// `iolab run ARGS --output-format=json` in `d`: (prioclass, prio, N) of each direction's
/// `prios`, and the direction's clat N.
/// (prioclass, prio, N) of each entry of a direction's `prios`, and the direction's clat N.
type Prios = (Vec<(u64, u64, u64)>, u64);

fn prios(d: &TestDir, args: &[&str]) -> [Prios; 2] {
    let out = d.run(&with(args, &["--output-format=json"])).ok();
    let v = out.json();
    ["read", "write"].map(|k| {
        let dir = &v["jobs"][0][k];
        let list = dir["prios"].as_array().cloned().unwrap_or_default();
        let list = list
            .iter()
            .map(|p| {
                let n = p["clat_ns"]["N"].as_u64().unwrap();
                (
                    p["prioclass"].as_u64().unwrap(),
                    p["prio"].as_u64().unwrap(),
                    n,
                )
            })
            .collect();
        (list, dir["clat_ns"]["N"].as_u64().unwrap_or(0))
    })
}

/// `n` of `all` is `pct` percent, within what 1024 draws allow.
fn near(n: u64, all: u64, pct: f64) -> bool {
    (n as f64 * 100.0 / all as f64 - pct).abs() < 8.0
}

#[test]
fn cmdprio_percentage_gives_that_share_of_ios_a_priority_reported_apart() {
    let d = TestDir::new("place-cmdprio");
    for engine in ["--ioengine=io_uring", "--ioengine=libaio"] {
        let args = [
            "--name=t",
            engine,
            "--filename=data",
            "--size=8m",
            "--bs=4k",
            "--rw=randrw",
            "--cmdprio_percentage=30,60",
            "--cmdprio_class=2",
            "--cmdprio=3",
        ];
        let [(r, rn), (w, wn)] = prios(&d, &args);
        assert_eq!(
            r.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(),
            [(0, 0), (2, 3)]
        );
        assert_eq!(
            r.iter().map(|p| p.2).sum::<u64>(),
            rn,
            "{engine}: every read is in one"
        );
        assert_eq!(
            w.iter().map(|p| p.2).sum::<u64>(),
            wn,
            "{engine}: every write is in one"
        );
        assert!(near(r[1].2, rn, 30.0), "{engine}: {r:?} of {rn}");
        assert!(near(w[1].2, wn, 60.0), "{engine}: {w:?} of {wn}");
        // As fio: with one priority only (100%), no per-priority figures.
        let all = with(&args[..6], &["--cmdprio_percentage=100"]);
        assert!(prios(&d, &all)[0].0.is_empty());
    }
    let text = d.run(&[
        "--name=t",
        "--ioengine=io_uring",
        "--filename=data",
        "--size=4m",
        "--rw=randread",
        "--cmdprio_percentage=50",
    ]);
    let text = text.ok().stdout;
    assert!(
        text.contains("    clat prio 1/0 (") && text.contains("% of IOs) percentiles ("),
        "{text}"
    );
}

#[test]
fn cmdprio_bssplit_gives_each_block_size_its_priorities() {
    let d = TestDir::new("place-cmdprio-bssplit");
    let args = [
        "--name=t",
        "--ioengine=io_uring",
        "--filename=data",
        "--size=8m",
        "--rw=randread",
        "--bssplit=4k/50:8k/50",
        "--cmdprio_bssplit=4k/50/3/1:8k/100",
        // Without the random map's cut (fio's mark_random_map, which turns the tail of the
        // pass into 4k I/Os) the sizes keep bssplit's shares exactly.
        "--norandommap",
    ];
    let [(r, n), _] = prios(&d, &args);
    let keys: Vec<_> = r.iter().map(|p| (p.0, p.1)).collect();
    // The job's own first, then in block size order; 8k/100 takes cmdprio_class's default (1).
    assert_eq!(keys, [(0, 0), (3, 1), (1, 0)]);
    assert!(
        near(r[0].2, n, 25.0) && near(r[1].2, n, 25.0) && near(r[2].2, n, 50.0),
        "{r:?}"
    );
    let both = with(&args, &["--cmdprio_percentage=10"]);
    let err = d.run(&both).fails().stderr;
    assert!(err.contains("mutually exclusive"), "{err}");
    let psync = d.run(&[
        "--name=t",
        "--ioengine=psync",
        "--size=64k",
        "--cmdprio_percentage=10",
    ]);
    assert!(psync
        .fails()
        .stderr
        .contains("cannot give single I/Os a priority"));
}

#[test]
fn cmdprio_class_reaches_the_kernel_which_refuses_realtime_to_a_plain_user() {
    if !is_root() {
        iolab_testkit::skip("cmdprio EPERM", &"needs root to run a job as another user");
        return;
    }
    let d = TestDir::new("place-cmdprio-perm");
    d.write("data", &"x".repeat(64 << 10));
    for engine in ["--ioengine=io_uring", "--ioengine=libaio"] {
        let job = [
            "--name=t",
            engine,
            "--filename=data",
            "--size=64k",
            "--uid=65534",
        ];
        // Best effort is anyone's: the job runs.
        d.run(&with(
            &job,
            &["--cmdprio_percentage=100", "--cmdprio_class=2"],
        ))
        .ok();
        // Realtime needs CAP_SYS_NICE or CAP_SYS_ADMIN: the kernel refuses each such I/O.
        let out = d.run(&with(
            &job,
            &["--cmdprio_percentage=100", "--cmdprio_class=1"],
        ));
        assert!(
            out.stdout.contains("err= 1") || out.stderr.contains("EPERM"),
            "{engine}: {out:?}"
        );
    }
}
