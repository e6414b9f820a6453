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

/// tiobench's own options, which fio 3.33 accepts and ignores: name, help, and the type,
/// default and range lines of `--cmdhelp=NAME`.
const TIOBENCH_OPTIONS: &[(&str, &str, &str)] = &[
    (
        "size",
        "Size in MiB",
        "string (opt=bla)\n             default: no default",
    ),
    (
        "block",
        "Block size in bytes",
        "integer value (opt=100)\n             default: 4096",
    ),
    (
        "numruns",
        "Number of runs",
        "integer value (opt=100)\n             default: no default",
    ),
    (
        "dir",
        "Test directory",
        "string (opt=bla)\n             default: no default",
    ),
    (
        "threads",
        "Number of Threads",
        "integer value (opt=100)\n             default: no default",
    ),
];

/// `--cmdhelp[=NAME]`: with `--profile`, fio 3.33 lists (or describes) the profile's own
/// options only; without, every job option.
pub fn cmdhelp(profile: Option<&str>, which: Option<&str>) -> Result<String, String> {
    if profile != Some("tiobench") {
        return crate::options::cmdhelp(which);
    }
    let Some(name) = which.filter(|w| *w != "all") else {
        return Ok(TIOBENCH_OPTIONS
            .iter()
            .map(|(n, h, _)| format!("{n:<24}: {h}\n"))
            .collect());
    };
    let (n, h, t) = TIOBENCH_OPTIONS
        .iter()
        .find(|(n, _, _)| *n == name)
        .ok_or_else(|| format!("No such command: {name}"))?;
    let range = if t.starts_with("integer") {
        "\n               range: min=0, max=-1"
    } else {
        ""
    };
    Ok(format!(
        "{n:>20}: {h}\n                type: {t}\n               valid: only for profile 'tiobench'{range}\n\n"
    ))
}

/// Checks a `--profile=` value as fio does.
pub(crate) fn check(name: &str) -> Result<String, String> {
    match name {
        "tiobench" => Ok(name.to_string()),
        // fio's act profile runs its own latency-slice accounting through hooks on every I/O
        // and prints its own table; iolab has not built that.
        "act" => Err(
            "not supported by iolab: fio's act profile (its per-slice latency table \
                      and PASSED/FAILED verdict) is not implemented"
                .to_string(),
        ),
        _ => Err(format!("profile '{name}' not found")),
    }
}

/// Whether `name` is one of the loaded profile's own options (`--dir=...`), taken and
/// ignored as fio 3.33 ignores them.
pub(crate) fn own_option(profile: Option<&str>, name: &str) -> bool {
    profile == Some("tiobench")
        && TIOBENCH_OPTIONS
            .iter()
            .any(|(n, _, _)| *n == name && *n != "size")
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
    let entries = match name.as_str() {
        "tiobench" => TIOBENCH,
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
            None => (*e, None),
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
    fn unknown_and_unbuilt_profiles_are_refused_by_name() {
        let e = parse_cmdline_with(&["--profile=bogus"], &vars()).unwrap_err();
        assert!(e.to_string().contains("profile 'bogus' not found"), "{e}");
        let e = parse_cmdline_with(&["--profile=act"], &vars()).unwrap_err();
        assert!(e.to_string().contains("act profile"), "{e}");
        // Without the profile its options are unknown, as typos are.
        assert!(parse_cmdline_with(&["--name=x", "--block=4k"], &vars()).is_err());
    }
}
