//! `iolab compare`'s command line: its own options, the depths, and which of fio's options
//! may shape the workload (compare sets the engine, the job count and the job itself).

use std::path::PathBuf;

use iolab_job::options::{all, find, Kind, OptDef};

use crate::Variant;

/// `iolab compare --help`.
pub const USAGE: &str = "\
usage: iolab compare [JOBFILE] [options] [fio options]

Runs one workload on every engine side by side (default: 4 KiB random O_DIRECT reads of a
512 MiB file in the current directory, 4 s per run) and explains what it sees. Each engine
runs --trials times, in rotation (A B C A B C ...); every figure is the median of its trials
with a confidence interval, and a best is marked only where the intervals do not overlap.
The default run (6 engines x 3 trials x 4 s, plus laying out the file) takes under 90 s.

  --engines=LIST      psync,libaio,io_uring,io_uring-sqpoll,io_uring-fixed,posixaio (default),
                      also sync, pvsync2, mmap, null, io_uring-hipri; or, among themselves,
                      the metadata engines filecreate, filestat, filedelete, dircreate,
                      dirstat, dirdelete and each one's -uring variant (through io_uring)
  --iodepth=1,16,64   depths to compare (default 32)
  --trials=N          runs of each engine and depth, in rotation (default 3; 1: no interval,
                      no ranking)
  --directory=DIR     where the test file goes (default: the current directory)
  --report=FILE.html  where the HTML report with plots goes (default, with the table:
                      iolab-compare-DATE-TIME.html in the current directory)
  --output-format=normal|json
  --qos               latency against load: each engine open-loop (Poisson arrivals) at 10% to
                      125% of its closed-loop capacity, latency from each I/O's due time; the
                      knee (the highest IOPS before p99 goes over the target) in words and
                      drawn (one run per step; --trials does not apply to the steps)
  --qos-target=p99=1ms  the target: p50, p90, p99 or p99.9 under a latency in us, ms or s
                      (implies --qos; default p99 under 5 x the lowest p99 at the lowest load)
  --qos-step-time=2s  each step's length (and the closed-loop run's; default 2s)
  -h, --help          print this help
  fio options         --rw=randrw --bs=128k --direct=0 --size=1g --runtime=4 ... change the
                      workload; a JOBFILE's first job replaces the default workload";

/// Compare's own options; everything else is fio's.
const LONGS: &[&str] = &[
    "engines",
    "iodepth",
    "trials",
    "directory",
    "report",
    "output-format",
    "qos",
    "qos-target",
    "qos-step-time",
    "help",
];

pub struct Args {
    pub variants: Vec<Variant>,
    pub depths: Vec<u32>,
    /// `--trials N`: runs of each variant and depth (`None`: the default).
    pub trials: Option<u32>,
    pub report: Option<PathBuf>,
    pub json: bool,
    pub job_file: Option<String>,
    /// fio options for the workload, as `--name=value`.
    pub fio: Vec<String>,
    pub directory: Option<String>,
    /// `--qos`, `--qos-target`, `--qos-step-time`: the sweep of offered load, if asked for.
    pub qos: Option<crate::qos::QosOpts>,
}

/// What the command line asks for: to run, or for the usage.
pub enum Parsed {
    Run(Box<Args>),
    Help,
}

/// Reads compare's command line (without the program name).
pub fn parse(args: &[String]) -> Result<Parsed, String> {
    let mut a = Args {
        variants: crate::parse_list(&crate::DEFAULT_ENGINES.join(","))?,
        depths: vec![32],
        trials: None,
        report: None,
        json: false,
        job_file: None,
        fio: Vec::new(),
        directory: None,
        qos: None,
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let Some(body) = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-').filter(|b| !b.is_empty()))
        else {
            if let Some(first) = &a.job_file {
                return Err(format!("one job file at most: '{first}', then '{arg}'"));
            }
            a.job_file = Some(arg.clone());
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| rest.next().cloned())
                .ok_or_else(|| format!("--{name} needs a value"))
        };
        match name {
            "help" | "h" => return Ok(Parsed::Help),
            "engines" => a.variants = crate::parse_list(&value()?)?,
            "iodepth" => a.depths = depths(&value()?)?,
            "trials" => a.trials = Some(trials(&value()?)?),
            "report" => a.report = Some(PathBuf::from(value()?)),
            "output-format" => match value()?.as_str() {
                "json" => a.json = true,
                "normal" => a.json = false,
                other => return Err(format!("--output-format: '{other}': normal or json")),
            },
            "directory" => a.directory = Some(value()?),
            "qos" if inline.is_none() => {
                a.qos.get_or_insert_with(Default::default);
            }
            "qos" => {
                return Err("--qos takes no value (--qos-target=p99=1ms sets the target)".into())
            }
            "qos-target" => {
                let t = iolab_report::qos::parse_target(&value()?)?;
                a.qos.get_or_insert_with(Default::default).target = Some(t);
            }
            "qos-step-time" => {
                let d = crate::qos::step_time(&value()?)?;
                a.qos.get_or_insert_with(Default::default).step = d;
            }
            _ => {
                let def = fio_option(name, LONGS)?;
                // As fio's getopt: an option with a value takes the next argument (`--bs 8k`).
                let inline = match inline {
                    None if def.kind != Kind::Flag => rest.next().cloned(),
                    v => v,
                };
                a.fio.push(match inline {
                    Some(v) => format!("--{name}={v}"),
                    None => format!("--{name}"),
                });
            }
        }
    }
    Ok(Parsed::Run(Box::new(a)))
}

/// `--iodepth=1,16,64`: the depths to compare, each 1 or more.
pub fn depths(list: &str) -> Result<Vec<u32>, String> {
    list.split(',')
        .map(|d| {
            d.trim()
                .parse::<u32>()
                .ok()
                .filter(|&d| d > 0)
                .ok_or_else(|| format!("--iodepth: '{}' is not a depth (1 or more)", d.trim()))
        })
        .collect()
}

/// `--trials N`: 1 or more.
pub fn trials(n: &str) -> Result<u32, String> {
    n.trim()
        .parse::<u32>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            format!(
                "--trials: '{}' is not a number of trials (1 or more)",
                n.trim()
            )
        })
}

/// The fio option that `--name` names (its exact name, an alias or fio's unique prefix) when
/// compare passes it on to the workload, or why not: an unknown name gets the closest of
/// compare's own options (`own`) and fio's.
pub fn fio_option(name: &str, own: &[&str]) -> Result<&'static OptDef, String> {
    let def = match find(name) {
        Some(def) => def,
        None => match iolab_job::parse::find_prefix(name) {
            Ok(def) => def,
            Err(e) if e.kind == iolab_job::ErrorKind::UnknownOption => {
                let fio =
                    all().flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()));
                return Err(
                    match iolab_job::closest(name, own.iter().copied().chain(fio)) {
                        Some(s) => format!("unknown option '--{name}'; did you mean '--{s}'?"),
                        None => format!("unknown option '--{name}'"),
                    },
                );
            }
            Err(e) => return Err(e.message),
        },
    };
    // A second job would be dropped: compare runs the first one.
    if def.name == "name" {
        return Err(format!(
            "--{name}: compare runs one job; give its options alone, or a job file"
        ));
    }
    // Compare sets these per run; taken silently they would be ignored.
    if matches!(def.name, "ioengine" | "numjobs") {
        return Err(format!(
            "--{name}: compare sets it for each run; choose engines with --engines and depths \
             with --iodepth"
        ));
    }
    Ok(def)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths_are_positive_numbers() {
        assert_eq!(depths("1, 16,64"), Ok(vec![1, 16, 64]));
        assert!(depths("0").is_err());
        assert!(depths("8,x").is_err_and(|e| e.contains("'x'")));
    }

    #[test]
    fn options_compare_sets_itself_are_refused_and_others_pass() {
        assert_eq!(fio_option("bs", &[]).map(|d| d.name), Ok("bs"));
        assert!(fio_option("ioengine", &[]).is_err_and(|e| e.contains("--engines")));
        assert!(fio_option("name", &[]).is_err_and(|e| e.contains("one job")));
        let e = fio_option("engins", &["engines"]).expect_err("unknown");
        assert!(e.contains("did you mean '--engines'"), "{e}");
    }
}
