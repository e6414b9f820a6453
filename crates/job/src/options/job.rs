//! Job description and units: names, grouping, cloning, error handling, kb_base.

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Job, "name", [], Str, None, "Name of this job",
        |s, a| { s.name = a.v.to_string(); Ok(()) }),
    imp!(Job, "description", [], Str, None, "Text description of the job",
        |s, a| { s.description = Some(a.v.to_string()); Ok(()) }),
    imp!(Job, "wait_for", [], Str, None, "Start after the named job has finished",
        |s, a| { s.wait_for = Some(a.v.to_string()); Ok(()) }),
    imp!(Job, "stonewall", ["wait_for_previous"], Flag, None, "Wait for preceding jobs to finish before starting",
        |s, a| { s.stonewall = a.flag()?; Ok(()) }),
    imp!(Job, "new_group", [], Flag, None, "Start a new reporting group",
        |s, a| { s.new_group = a.flag()?; Ok(()) }),
    imp!(Job, "group_reporting", [], Flag, None, "Report a group as a whole, not per job",
        |s, a| { s.group_reporting = a.flag()?; Ok(()) }),
    imp!(Job, "numjobs", [], Int, Some("1"), "Clone this job N times",
        |s, a| {
            s.numjobs = to_u32(a.int()?)?;
            if s.numjobs == 0 {
                return Err("must be at least 1".into());
            };
            Ok(())
        }),
    imp!(Job, "thread", [], Flag, None, "Use threads instead of processes (iolab always uses threads)",
        |s, a| { s.thread = a.flag()?; Ok(()) }),
    imp!(Job, "exitall", [], Flag, None, "Stop all jobs when one finishes",
        |s, a| { s.exitall = a.flag()?; Ok(()) }),
    imp!(Job, "continue_on_error", [], Choice(&["none", "read", "write", "io", "verify", "all", "0", "1"]), Some("none"), "Keep going on these errors instead of stopping the job",
        |s, a| {
            s.continue_on_error = match a.choice()? {
                "0" => "none",
                "1" => "all",
                c => c,
            };
            Ok(())
        }),
    imp!(Units, "kb_base", [], Choice(&["1024", "1000"]), Some("1024"), "Meaning of k/m/g in inputs: 1024 (fio default, KiB means 1000) or 1000",
        |s, a| { s.kb_base = if a.choice()? == "1000" { 1000 } else { 1024 }; Ok(()) }),
    imp!(Units, "unit_base", [], Choice(&["0", "8", "1"]), Some("0"), "Report in bytes (8) or bits (1); 0 picks",
        |s, a| { s.unit_base = a.choice()?.parse().unwrap_or(0); Ok(()) }),
    imp!(Job, "ignore_error", [], Str, None, "Errors to go on after: read,write,verify lists of errno names or numbers, ':'-separated",
        |s, a| {
            for (slot, list) in s.ignore_error.iter_mut().zip(control::parse_ignore_error(a.v)?) {
                if list.is_some() {
                    *slot = list;
                }
            }
            Ok(())
        }),
    imp!(Job, "exit_what", [], Choice(&["group", "stonewall", "all"]), Some("group"), "Which jobs exitall stops: its group, all running, or all",
        |s, a| {
            s.exit_what = match a.choice()? {
                "stonewall" => ExitWhat::Stonewall,
                "all" => ExitWhat::All,
                _ => ExitWhat::Group,
            };
            Ok(())
        }),
    imp!(Job, "exitall_on_error", [], Flag, None, "Stop all jobs when one ends on an error",
        |s, a| { s.exitall_on_error = a.flag()?; Ok(()) }),
    imp!(Job, "error_dump", [], Bool, Some("0"), "Print every I/O error, also those continue_on_error goes on after",
        |s, a| { s.error_dump = a.flag()?; Ok(()) }),
    imp!(Job, "profile", [], Choice(crate::profile::PROFILES), None, "Name a built-in profile; in a job file it only names it, as in fio 3.33 (the profile's jobs come with --profile)",
        |s, a| { s.profile = Some(a.choice()?.to_string()); Ok(()) }),
];

#[cfg(test)]
pub(super) mod tests {
    use crate::control::ExitWhat;
    use crate::options::testing::{applied, spec, Acts, Refused};

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["name=seq-reader"], |s| s.name == "seq-reader"),
        (&["description=one reader"], |s| s.description.as_deref() == Some("one reader")),
        (&["wait_for=writer"], |s| s.wait_for.as_deref() == Some("writer")),
        (&["stonewall"], |s| s.stonewall),
        (&["wait_for_previous=1"], |s| s.stonewall),
        (&["new_group"], |s| s.new_group),
        (&["group_reporting"], |s| s.group_reporting),
        (&["numjobs=4"], |s| s.numjobs == 4),
        (&["thread"], |s| s.thread),
        (&["exitall"], |s| s.exitall),
        (&["continue_on_error=verify"], |s| s.continue_on_error == "verify"),
        (&["continue_on_error=1"], |s| s.continue_on_error == "all"),
        (&["kb_base=1000"], |s| s.kb_base == 1000),
        (&["unit_base=8"], |s| s.unit_base == 8),
        (&["unit_base=1"], |s| s.unit_base == 1),
        // fio's own example: EAGAIN for reads; ENOSPC and 122 for writes; verify as it was.
        (&["ignore_error=EAGAIN,ENOSPC:122"], |s| {
            s.ignore_error == [Some(vec![libc::EAGAIN]), Some(vec![libc::ENOSPC, 122]), None]
        }),
        (&["ignore_error=,,EILSEQ"], |s| {
            s.ignore_error[2] == Some(vec![libc::EILSEQ]) && s.ignore_error[0].is_none()
        }),
        (&["exit_what=all"], |s| s.exit_what == ExitWhat::All),
        (&["exit_what=stonewall"], |s| s.exit_what == ExitWhat::Stonewall),
        (&["exitall_on_error"], |s| s.exitall_on_error),
        (&["error_dump=1"], |s| s.error_dump),
        (&["profile=tiobench"], |s| s.profile.as_deref() == Some("tiobench")),
    ];

    /// Values fio refuses (negative counts: iolab's, where fio would wrap them).
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["numjobs=0"],
        &["numjobs=-1"],
        &["continue_on_error=some"],
        &["kb_base=1001"],
        &["unit_base=2"],
        &["ignore_error=EBOGUS"],
        &["ignore_error=EIO,EIO,EIO,EIO"],
        &["exit_what=none"],
        &["error_dump"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn numjobs_must_be_at_least_one() {
        assert_eq!(spec(&["numjobs=4"]).numjobs, 4);
        assert!(applied(&["numjobs=0"]).is_err());
    }

    #[test]
    fn continue_on_error_takes_fios_numbers() {
        assert_eq!(spec(&["continue_on_error=1"]).continue_on_error, "all");
        assert_eq!(spec(&["continue_on_error=0"]).continue_on_error, "none");
        assert_eq!(spec(&["continue_on_error=read"]).continue_on_error, "read");
    }

    #[test]
    fn kb_base_sets_the_unit_of_later_sizes() {
        assert_eq!(spec(&["kb_base=1000", "bs=4k"]).bs.read, 4000);
        assert_eq!(spec(&["bs=4k"]).bs.read, 4096);
        assert!(applied(&["kb_base=1001"]).is_err());
    }

    #[test]
    fn profile_names_one_of_fios_profiles() {
        assert_eq!(spec(&[]).profile, None);
        assert_eq!(
            spec(&["profile=tiobench"]).profile.as_deref(),
            Some("tiobench")
        );
        assert!(applied(&["profile=bogus"]).is_err());
    }
}
