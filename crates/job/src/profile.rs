//! fio's built-in profiles (`--profile=NAME`): a profile is a command line of its own, parsed
//! after the user's, whose globals join the user's and whose `name=` entries are jobs.
//!
//! `tiobench` is fio 3.33's: four stonewalled jobs (seqwrite, randwrite, seqread, randread)
//! over four files in the current directory. fio 3.33 reads the profile's own options
//! (`size`, `block`, `numruns`, `dir`, `threads`) into one place and builds the command line
//! from another, so they never take effect: the size is always `4*1024*$mb_memory`, the block
//! 4096, one loop, one job, `directory=./` (seen with `fio --profile=tiobench --block=8192
//! --threads=2 --dir=/x --output-format=json`). iolab runs the same jobs and says on standard
//! error that those options are ignored, as fio ignores them.
//!
//! The job option `profile=` in a job file only names a profile, as in fio 3.33: the hooks
//! and jobs of a profile come with `--profile` alone, so such a job runs as it is.

use crate::cmdline::{place_option, Invocation, SharedGlobals};
use crate::error::{ErrorKind, JobError, Loc};
use crate::parse::{self, Vars};
use crate::read::Budget;

/// The profiles fio 3.33 has.
pub const PROFILES: &[&str] = &["tiobench", "act"];

/// tiobench's command line as fio 3.33 builds it.
const TIOBENCH: &[&str] = &[
    "buffered=0",
    "size=4*1024*$mb_memory",
    "bs=4096",
    "loops=1",
    "directory=./",
    "numjobs=1",
    "timeout=600",
    "group_reporting",
    "thread",
    "overwrite=1",
    "filename=.fio.tio.1:.fio.tio.2:.fio.tio.3:.fio.tio.4",
    "ioengine=sync",
    "name=seqwrite",
    "rw=write",
    "end_fsync=1",
    "name=randwrite",
    "stonewall",
    "rw=randwrite",
    "end_fsync=1",
    "name=seqread",
    "stonewall",
    "rw=read",
    "name=randread",
    "stonewall",
    "rw=randread",
];

/// A profile's own option for `--cmdhelp`: name, help, fio's type line, default, and
/// whether it takes a value.
type Own = (&'static str, &'static str, &'static str, &'static str, bool);

const STR: &str = "string (opt=bla)";
const INT: &str = "integer value (opt=100)";
const NONE: &str = "no default";

/// tiobench's own options, which fio 3.33 accepts and ignores.
const TIOBENCH_OPTIONS: &[Own] = &[
    ("size", "Size in MiB", STR, NONE, true),
    ("block", "Block size in bytes", INT, "4096", true),
    ("numruns", "Number of runs", INT, NONE, true),
    ("dir", "Test directory", STR, NONE, true),
    ("threads", "Number of Threads", INT, NONE, true),
];

/// act's own options, which fio 3.33 reads.
const ACT_OPTIONS: &[Own] = &[
    ("device-names", "Devices to use", STR, NONE, true),
    ("load", "ACT load multipler (default 1x)", INT, "1", true),
    (
        "test-duration",
        "How long the entire test takes to run",
        "string with time postfix (opt=10s)",
        "24h",
        true,
    ),
    (
        "threads-per-queue",
        "Number of read IO threads per device",
        INT,
        "8",
        true,
    ),
    (
        "read-req-num-512-blocks",
        "Number of 512B blocks to read at the time",
        INT,
        "3",
        true,
    ),
    (
        "large-block-op-kbytes",
        "Size of large block ops in KiB (writes)",
        INT,
        "131072",
        true,
    ),
    (
        "prep",
        "Set to run ACT prep phase",
        "empty or boolean value ([0|1])",
        NONE,
        false,
    ),
];

fn own_options(profile: Option<&str>) -> &'static [Own] {
    match profile {
        Some("tiobench") => TIOBENCH_OPTIONS,
        Some("act") => ACT_OPTIONS,
        _ => &[],
    }
}

/// `--cmdhelp[=NAME]`: with `--profile`, fio 3.33 lists (or describes) the profile's own
/// options only; without, every job option.
pub fn cmdhelp(profile: Option<&str>, which: Option<&str>) -> Result<String, String> {
    let (Some(prof), own) = (profile, own_options(profile)) else {
        return crate::options::cmdhelp(which);
    };
    let Some(name) = which.filter(|w| *w != "all") else {
        return Ok(own
            .iter()
            .map(|(n, h, ..)| format!("{n:<24}: {h}\n"))
            .collect());
    };
    let (n, h, t, d, _) = own
        .iter()
        .find(|o| o.0 == name)
        .ok_or_else(|| format!("No such command: {name}"))?;
    let range = if *t == INT {
        "\n               range: min=0, max=-1"
    } else {
        ""
    };
    Ok(format!(
        "{n:>20}: {h}\n                type: {t}\n             default: {d}\n               \
         valid: only for profile '{prof}'{range}\n\n"
    ))
}

/// Checks a `--profile=` value as fio does.
pub(crate) fn check(name: &str) -> Result<String, String> {
    match name {
        "tiobench" => Ok(name.to_string()),
        "act" => Ok(name.to_string()),
        _ => Err(format!("profile '{name}' not found")),
    }
}

/// Whether the profile option `name` takes a value (`--load=2`; act's `--prep` alone).
pub(crate) fn takes_value(name: &str) -> bool {
    ACT_OPTIONS
        .iter()
        .chain(TIOBENCH_OPTIONS)
        .any(|o| o.0 == name && o.4)
}

/// Whether `name` is one of the loaded profile's own options (`--dir=...`): tiobench's are
/// taken and ignored as fio 3.33 ignores them, act's are read.
pub(crate) fn own_option(profile: Option<&str>, name: &str) -> bool {
    if profile == Some("act") {
        return ACT_OPTIONS.iter().any(|o| o.0 == name);
    }
    profile == Some("tiobench")
        && TIOBENCH_OPTIONS
            .iter()
            .any(|o| o.0 == name && o.0 != "size")
}

/// The profile whose own option `name` is, when no `--profile` is given: fio 3.33 registers
/// every profile's options at start, so `--device-names=...` without `--profile=act` is taken
/// and does nothing. None for a job option iolab has of the same name (tiobench's `size`).
pub(crate) fn unloaded_owner(name: &str) -> Option<&'static str> {
    if crate::options::find(name).is_some_and(|o| o.implemented()) {
        return None;
    }
    [("act", ACT_OPTIONS), ("tiobench", TIOBENCH_OPTIONS)]
        .into_iter()
        .find(|(_, own)| own.iter().any(|o| o.0 == name))
        .map(|(p, _)| p)
}

/// Adds the profile's jobs to `inv`: they start from the user's globals and the profile's.
pub(crate) fn expand(
    inv: &mut Invocation,
    vars: &Vars,
    budget: &mut Budget,
) -> Result<(), JobError> {
    let Some(name) = inv.top.profile.clone() else {
        return Ok(());
    };
    let act;
    let entries: Vec<&str> = match name.as_str() {
        "tiobench" => TIOBENCH.to_vec(),
        "act" => {
            act = Act::of(&inv.top.profile_opts)
                .map_err(|m| JobError::new(ErrorKind::Usage, format!("act: {m}")))?
                .command_line();
            act.iter().map(String::as_str).collect()
        }
        _ => return Ok(()),
    };
    let loc = Loc::cmdline(0);
    let mut own = Invocation {
        globals: inv.globals.clone(),
        ..Invocation::default()
    };
    let mut shared: Option<SharedGlobals> = None;
    for e in entries {
        let (k, v) = match e.split_once('=') {
            Some((k, v)) => (k, Some(vars.expand_within(v, budget)?)),
            None => (e, None),
        };
        let text = match v {
            Some(v) => format!("{k}={v}"),
            None => k.to_string(),
        };
        let opt = parse::parse_option(&text, &loc, false).map_err(|e| {
            JobError::new(ErrorKind::Usage, format!("profile {name}: {e}")).at(&loc)
        })?;
        place_option(&mut own, &mut shared, budget, opt, &loc)?;
    }
    inv.cmdline_jobs.append(&mut own.cmdline_jobs);
    Ok(())
}

/// The I/O hook act puts on every job of the run: latencies counted in hour-long slices
/// (`JobSpec::act_duration`, the test's length in seconds). Not with `--prep`.
pub fn apply_hooks(top: &crate::cmdline::TopLevel, jobs: &mut [crate::JobSpec]) {
    if top.profile.as_deref() != Some("act") {
        return;
    }
    if let Ok(a) = Act::of(&top.profile_opts) {
        if !a.prep {
            for j in jobs {
                j.act_duration = Some(a.duration_s);
            }
        }
    }
}

/// act's options as read (fio 3.33's defaults where not given).
struct Act {
    devices: Vec<String>,
    load: u64,
    duration_s: u64,
    threads: u64,
    read_blocks: u64,
    write_size: u64,
    prep: bool,
}

impl Act {
    fn of(opts: &[(String, Option<String>)]) -> Result<Act, String> {
        let mut a = Act {
            devices: Vec::new(),
            load: 1,
            duration_s: 24 * 3600,
            threads: 8,
            read_blocks: 3,
            write_size: 131_072,
            prep: false,
        };
        for (k, v) in opts {
            let v = v.as_deref().unwrap_or("");
            let count = |what: &str| {
                crate::value::parse_int(v)
                    .ok()
                    .and_then(|n| u64::try_from(n).ok())
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("{what} must be a whole number above 0, not '{v}'"))
            };
            match k.as_str() {
                "device-names" => {
                    a.devices = v
                        .split(',')
                        .filter(|d| !d.is_empty())
                        .map(String::from)
                        .collect()
                }
                "load" => a.load = count(k)?,
                "test-duration" => {
                    let t = crate::value::parse_time(v, crate::value::TimeUnit::Seconds)?;
                    a.duration_s = (t.us / 1_000_000).max(1);
                }
                "threads-per-queue" => a.threads = count(k)?,
                "read-req-num-512-blocks" => a.read_blocks = count(k)?,
                "large-block-op-kbytes" => a.write_size = count(k)?,
                _ => a.prep = true,
            }
        }
        if a.devices.is_empty() {
            return Err("you need to set IO target(s) with the device-names option.".into());
        }
        Ok(a)
    }

    /// fio 3.33's act command line: its globals, then per device the read and write jobs,
    /// 2000 reads and 1000 writes of read-sized units a second per load (or, with prep, a
    /// zeroing pass and a random overwrite). As in fio, `large-block-op-kbytes` is bytes.
    fn command_line(&self) -> Vec<String> {
        let globals = [
            "direct=1",
            "ioengine=sync",
            "random_generator=lfsr",
            "group_reporting=1",
            "thread",
        ];
        let mut v: Vec<String> = globals.map(String::from).to_vec();
        for d in &self.devices {
            if self.prep {
                v.extend([format!("name=act-prep-zeroes-{d}"), format!("filename={d}")]);
                v.extend(["bs=1048576", "zero_buffers", "rw=write"].map(String::from));
                v.extend([
                    format!("name=act-prep-salt-{d}"),
                    "stonewall".into(),
                    format!("filename={d}"),
                ]);
                v.extend(
                    ["bs=4096", "ioengine=libaio", "iodepth=64", "rw=randwrite"].map(String::from),
                );
                continue;
            }
            v.extend([
                format!("runtime={}s", self.duration_s),
                "time_based=1".into(),
            ]);
            let read_bs = self.read_blocks.saturating_mul(512);
            v.extend([
                format!("name=act-read-{d}"),
                format!("filename={d}"),
                "rw=randread".into(),
            ]);
            v.extend([
                format!("numjobs={}", self.threads),
                format!(
                    "rate_iops={}",
                    self.load.saturating_mul(2000) / self.threads
                ),
                format!("bs={read_bs}"),
            ]);
            let rsize = (self.write_size / read_bs).max(1);
            v.extend([
                format!("name=act-write-{d}"),
                format!("filename={d}"),
                "rw=randwrite".into(),
            ]);
            v.extend([
                format!(
                    "rate_iops={}",
                    self.load.saturating_mul(1000).div_ceil(rsize)
                ),
                format!("bs={}", self.write_size),
            ]);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::cmdline::parse_cmdline_with;

    fn vars() -> Vars {
        Vars {
            mb_memory: 64,
            ..Vars::system()
        }
    }

    #[test]
    fn tiobench_makes_fios_four_stonewalled_jobs_with_its_fixed_options() {
        let inv = parse_cmdline_with(
            &["--io_size=16k", "--profile=tiobench", "--block=8192"],
            &vars(),
        )
        .unwrap();
        let file = inv.load().unwrap();
        let jobs = file.resolve().unwrap().jobs;
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["seqwrite", "randwrite", "seqread", "randread"]);
        for j in &jobs {
            // 4*1024*$mb_memory bytes, 4096-byte blocks whatever --block says, one loop.
            assert_eq!(
                j.size,
                Some(crate::value::SizeOrPct::Bytes(4 * 1024 * 64)),
                "{}",
                j.name
            );
            assert_eq!(j.bs.write, 4096);
            let io = Some(crate::value::SizeOrPct::Bytes(16 * 1024));
            assert_eq!(j.io_size, io, "the user's globals apply");
            assert_eq!(j.filename.len(), 4);
        }
        assert!(!jobs[0].stonewall && jobs[1..].iter().all(|j| j.stonewall));
        assert!(jobs[0].end_fsync && jobs[1].end_fsync && !jobs[2].end_fsync);
    }

    /// fio 3.33 registers every profile's options at start: without --profile they are taken
    /// (with the next word as value, as getopt) and do nothing; the job runs as written.
    #[test]
    fn profile_options_without_the_profile_are_taken_and_do_nothing() {
        for args in [
            &["--name=t", "--device-names=/dev/x", "--size=8k"][..],
            &["--name=t", "--numruns", "3", "--threads=2", "--size=8k"],
            &[
                "--name=t",
                "--prep",
                "--load=2",
                "--block=8192",
                "--size=8k",
            ],
        ] {
            let inv = parse_cmdline_with(args, &vars()).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            assert!(
                inv.job_files.is_empty() && inv.top.profile_opts.is_empty(),
                "{args:?}"
            );
            let jobs = inv.load().unwrap().resolve().unwrap().jobs;
            assert_eq!(jobs.len(), 1);
            assert_eq!(jobs[0].size, Some(crate::value::SizeOrPct::Bytes(8192)));
        }
        // A job option of the same name stays the job's.
        let inv = parse_cmdline_with(&["--name=t", "--size=16k"], &vars()).unwrap();
        let jobs = inv.load().unwrap().resolve().unwrap().jobs;
        assert_eq!(jobs[0].size, Some(crate::value::SizeOrPct::Bytes(16384)));
    }

    #[test]
    fn cmdhelp_with_the_profile_shows_its_options_as_fio_does() {
        let all = cmdhelp(Some("tiobench"), None).unwrap();
        assert!(
            all.starts_with("size                    : Size in MiB\nblock "),
            "{all}"
        );
        assert_eq!(all.lines().count(), 5);
        let block = cmdhelp(Some("tiobench"), Some("block")).unwrap();
        assert_eq!(
            block,
            "               block: Block size in bytes\n                type: integer value (opt=100)\n             \
             default: 4096\n               valid: only for profile 'tiobench'\n               range: min=0, max=-1\n\n"
        );
        assert!(cmdhelp(Some("tiobench"), Some("bs")).is_err());
        assert!(cmdhelp(None, Some("bs")).is_ok());
    }

    #[test]
    fn act_makes_fios_read_and_write_jobs_per_device() {
        let args = [
            "--profile=act",
            "--device-names=/d/a",
            "--test-duration=2",
            "--load",
            "2",
        ];
        let inv = parse_cmdline_with(&args, &vars()).unwrap();
        let jobs = inv.load().unwrap().resolve().unwrap().jobs;
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["act-read-/d/a", "act-write-/d/a"]);
        let (r, w) = (&jobs[0], &jobs[1]);
        assert_eq!((r.numjobs, r.bs.read, r.rate_iops.read), (8, 1536, 500));
        // 128 KiB writes at ceil(2 * 1000 / 85) a second.
        assert_eq!((w.bs.write, w.rate_iops.write), (131_072, 24));
        assert!(r.direct && r.time_based && r.group_reporting && w.direct);
        let mut specs = jobs.clone();
        apply_hooks(&inv.top, &mut specs);
        assert!(specs.iter().all(|s| s.act_duration == Some(2)));
        let bad = ["--profile=act", "--device-names=x", "--threads-per-queue=0"];
        assert!(parse_cmdline_with(&bad, &vars()).is_err());
    }

    #[test]
    fn unknown_and_unbuilt_profiles_are_refused_by_name() {
        let e = parse_cmdline_with(&["--profile=bogus"], &vars()).unwrap_err();
        assert!(e.to_string().contains("profile 'bogus' not found"), "{e}");
        let e = parse_cmdline_with(&["--profile=act"], &vars()).unwrap_err();
        assert!(e.to_string().contains("device-names option"), "{e}");
        // A typo near a profile's option is still unknown.
        assert!(parse_cmdline_with(&["--name=x", "--blok=4k"], &vars()).is_err());
    }
}
