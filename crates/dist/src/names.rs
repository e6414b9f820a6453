//! Where each rank's files go. Generated names carry the rank and host (`$rank`, `$hostname`
//! in `filename_format`; with several ranks and neither written, the name is prefixed with
//! `HOST.RANK.` as fio's `unique_filename` prefixes a client's address), so ranks never share
//! a file by accident. An explicit `filename=` is one file shared by every rank (N-to-1), and
//! `offset_increment` counts the rank's jobs after those of the ranks before it.

use iolab_job::value::SizeOrPct;
use iolab_job::JobSpec;

/// This process's place in the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub rank: u32,
    /// How many ranks run the job.
    pub size: u32,
    pub hostname: String,
}

impl Placement {
    /// A run on this host alone.
    pub fn single() -> Placement {
        Placement {
            rank: 0,
            size: 1,
            hostname: hostname(),
        }
    }
}

/// This host's name, as `hostname` prints it (the UTS namespace's, read from procfs so no
/// system call binding is needed); `localhost` where procfs is missing.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// Names this rank's files and moves its offsets; before planning.
pub fn place(specs: &mut [JobSpec], at: &Placement) -> Result<(), String> {
    for spec in specs {
        if spec.filename.is_empty() {
            spec.filename_format = file_format(&spec.filename_format, at);
        }
        shift_offset(spec, at)?;
    }
    Ok(())
}

fn file_format(format: &str, at: &Placement) -> String {
    let named = format.contains("$rank") || format.contains("$hostname");
    let format = if at.size > 1 && !named {
        // Prefix the last component, so a format with a folder keeps its folder.
        match format.rsplit_once('/') {
            Some((dir, base)) => format!("{dir}/$hostname.$rank.{base}"),
            None => format!("$hostname.$rank.{format}"),
        }
    } else {
        format.to_string()
    };
    format
        .replace("$rank", &at.rank.to_string())
        .replace("$hostname", &at.hostname)
}

/// `offset_increment` numbers a job's clones 0..numjobs on each rank; across ranks they go on
/// counting, so rank r's first clone starts where rank r-1's last one ended.
fn shift_offset(spec: &mut JobSpec, at: &Placement) -> Result<(), String> {
    if at.rank == 0 {
        return Ok(());
    }
    let step = match spec.offset_increment {
        SizeOrPct::Bytes(0) => return Ok(()),
        SizeOrPct::Bytes(b) => b,
        _ => {
            return Err(format!(
                "job <{}>: offset_increment as a percentage with several ranks is not \
                 supported; give it in bytes",
                spec.name
            ))
        }
    };
    let skip = u64::from(at.rank) * u64::from(spec.numjobs.max(1));
    let by = step.checked_mul(skip);
    match (&mut spec.offset, by) {
        (SizeOrPct::Bytes(o), Some(by)) => {
            *o = o.checked_add(by).ok_or_else(|| overflow(&spec.name))?;
            Ok(())
        }
        (SizeOrPct::Bytes(_), None) => Err(overflow(&spec.name)),
        _ => Err(format!(
            "job <{}>: offset as a percentage with offset_increment and several ranks is not \
             supported; give it in bytes",
            spec.name
        )),
    }
}

fn overflow(job: &str) -> String {
    format!("job <{job}>: offset + offset_increment x rank is beyond 2^64")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> JobSpec {
        let loc = iolab_job::Loc {
            file: "x.fio".into(),
            line: 1,
        };
        JobSpec::new("j", loc)
    }

    fn at(rank: u32, size: u32) -> Placement {
        Placement {
            rank,
            size,
            hostname: "node7".into(),
        }
    }

    #[test]
    fn generated_names_carry_host_and_rank_when_there_are_several() {
        let mut s = [spec()];
        place(&mut s, &at(3, 4)).expect("placed");
        assert_eq!(s[0].filename_format, "node7.3.$jobname.$jobnum.$filenum");
        let mut s = [spec()];
        place(&mut s, &at(0, 1)).expect("placed");
        assert_eq!(s[0].filename_format, "$jobname.$jobnum.$filenum");
        let mut s = [spec()];
        s[0].filename_format = "d/$hostname-$rank-$jobnum".into();
        place(&mut s, &at(2, 4)).expect("placed");
        assert_eq!(s[0].filename_format, "d/node7-2-$jobnum");
        let mut s = [spec()];
        s[0].filename_format = "d/f.$jobnum".into();
        place(&mut s, &at(1, 2)).expect("placed");
        assert_eq!(s[0].filename_format, "d/node7.1.f.$jobnum");
    }

    #[test]
    fn a_named_file_is_shared_and_offset_increment_counts_on_across_ranks() {
        let mut s = [spec()];
        s[0].filename = vec!["/shared/f".into()];
        s[0].numjobs = 2;
        s[0].offset = SizeOrPct::Bytes(4096);
        s[0].offset_increment = SizeOrPct::Bytes(1 << 20);
        place(&mut s, &at(3, 4)).expect("placed");
        assert_eq!(s[0].filename, vec![String::from("/shared/f")]);
        // Rank 3's clone 0 is the 7th job: 3 ranks x 2 clones before it.
        assert_eq!(s[0].offset, SizeOrPct::Bytes(4096 + 6 * (1 << 20)));
    }

    #[test]
    fn a_percentage_increment_over_ranks_is_refused_by_name() {
        let mut s = [spec()];
        s[0].offset_increment = SizeOrPct::Percent(10.0);
        let e = place(&mut s, &at(1, 2)).expect_err("refused");
        assert!(
            e.contains("job <j>") && e.contains("offset_increment"),
            "{e}"
        );
    }
}
