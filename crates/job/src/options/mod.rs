//! The option table: every fio job option iolab knows, each defined once.
//!
//! A definition ([`OptDef`]) holds the option's name, its aliases, the grammar of its value,
//! its one default, a help line, its category (and, for engine options, the engines that take
//! it) and how its value is applied to a [`JobSpec`]. Options iolab does not implement have no
//! `apply`: they are still listed, so that using them is refused by name ("not supported by
//! iolab") instead of "unknown option". The parser checks values against the grammar;
//! [`crate::spec`] runs `apply`; `JobSpec::default()` is every default applied; `--cmdhelp`,
//! `--enghelp` and the documentation's option list are printed from the definitions.
//!
//! The definitions live in one file per fio category ([`Category`]), each with the tests of its
//! options under them: a table (`tests::ACTS`) with a row per implemented option showing it act
//! on the `JobSpec`, which a test here requires, and one of values refused (`tests::REFUSED`).
//! Adding an option is one entry there and its row, plus the code that acts on it.

use crate::value::{self, PerDir, SizeOrPct, TimeUnit};
use crate::JobSpec;

mod buffer;
mod engine;
mod file;
mod help;
mod io;
mod iolog;
mod job;
mod process;
mod random;
mod rate;
mod report;
mod sync;
mod time;
mod verify;
mod zone;

pub use engine::{engine_by_name, iolab_engines, refusal, EngineName, FIO_ENGINES};
pub use help::{cmdhelp, enghelp, markdown, summary};
pub use iolog::skip as replay_skip;
pub use verify::{PATTERN_WITH_HEADER, VERIFY_TYPES};

/// The grammar of an option's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Free text.
    Str,
    /// Free text, or the name alone (`write_bw_log`): the value is then empty.
    StrOrBare,
    /// fio's "empty or boolean": a bare name means 1 (`time_based`), or an integer, any but 0
    /// meaning on (fio stores it without a maximum: `time_based=2` runs time based).
    Flag,
    /// A boolean that needs its value (`direct=1`); a bare name is refused, as in fio.
    Bool,
    /// An integer, with size suffixes allowed (`iodepth=32`).
    Int,
    /// A size in bytes (`filesize=1g`).
    Size,
    /// A size or a percentage (`size=50%`).
    SizePct,
    /// A time with the given default unit.
    Time(TimeUnit),
    /// Per-direction size ranges (`bsrange=1k-4k,2k-8k`).
    Range,
    /// A size or a size range (`filesize=1g` or `filesize=1g-2g`).
    SizeOrRange,
    /// Per-direction sizes (`bs=4k,64k`).
    PerDirSize,
    /// Per-direction integers (`rate_iops=100,200`).
    PerDirInt,
    /// `bssplit`.
    BsSplit,
    /// One of a fixed list of words.
    Choice(&'static [&'static str]),
    /// `rw`.
    Rw,
    /// `random_distribution`.
    Distribution,
    /// `:`-separated floats.
    FloatList,
    /// `ioengine`: one of [`FIO_ENGINES`] (or `external:path`).
    Engine,
}

impl Kind {
    /// The type line of `--cmdhelp=opt`, in fio's words.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Str
            | Kind::StrOrBare
            | Kind::Choice(_)
            | Kind::Rw
            | Kind::Distribution
            | Kind::BsSplit
            | Kind::Engine => "string (opt=bla)",
            Kind::Flag => "empty or boolean value ([0|1])",
            Kind::Bool => "boolean value (opt=1)",
            Kind::Int | Kind::PerDirInt | Kind::PerDirSize => "integer value (opt=100)",
            Kind::Size | Kind::SizePct => "string with possible k/m/g postfix (opt=4k)",
            Kind::Time(_) => "string with time postfix (opt=10s)",
            Kind::Range => "one to three ranges (opt=1k-4k[,4k-8k[,1k-8k]])",
            Kind::SizeOrRange => "size or range (opt=4k or opt=1k-4k)",
            Kind::FloatList => "list of floating point values separated by ':' (opt=5.9:7.8)",
        }
    }
}

/// fio's option categories (its `.category`/`.group` fields, coarsened), one file each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // each is the fio category of the same name
pub enum Category {
    Job,
    Units,
    File,
    Io,
    Engine,
    Sync,
    Time,
    Random,
    Rate,
    Buffer,
    Report,
    Log,
    Process,
    Flow,
    Steadystate,
    Verify,
    Iolog,
    Zone,
}

impl Category {
    /// The name help output shows.
    pub fn name(self) -> &'static str {
        match self {
            Category::Job => "job",
            Category::Units => "units",
            Category::File => "file",
            Category::Io => "io",
            Category::Engine => "engine",
            Category::Sync => "sync",
            Category::Time => "time",
            Category::Random => "random",
            Category::Rate => "rate",
            Category::Buffer => "buffer",
            Category::Report => "report",
            Category::Log => "log",
            Category::Process => "process",
            Category::Flow => "flow",
            Category::Steadystate => "steadystate",
            Category::Verify => "verify",
            Category::Iolog => "iolog",
            Category::Zone => "zone",
        }
    }
}

/// How an option's value changes a [`JobSpec`]; the message is for an invalid value.
pub type ApplyFn = fn(&mut JobSpec, &Arg<'_>) -> Result<(), String>;

/// One option.
#[derive(Debug, Clone, Copy)]
pub struct OptDef {
    /// fio's name.
    pub name: &'static str,
    /// Other accepted spellings.
    pub aliases: &'static [&'static str],
    /// Value grammar.
    pub kind: Kind,
    /// The default, as fio prints it; `JobSpec::default()` is made by applying these.
    pub default: Option<&'static str>,
    /// One line of help.
    pub help: &'static str,
    /// Group for help output and the documentation.
    pub category: Category,
    /// For options of particular engines: fio's names of those engines (empty: every engine).
    pub engines: &'static [&'static str],
    /// How the value is applied; None = iolab does not implement the option, and using it is
    /// an error naming it.
    pub apply: Option<ApplyFn>,
}

/// An implemented option: category (with the engines that take it, if any), name, aliases,
/// grammar, default, help, and how its value is applied.
macro_rules! imp {
    ($cat:ident $([$($eng:literal),*])?, $name:literal, [$($al:literal),*], $kind:expr,
     $def:expr, $help:literal, $apply:expr) => {
        $crate::options::OptDef {
            name: $name,
            aliases: &[$($al),*],
            kind: $kind,
            default: $def,
            help: $help,
            category: $crate::options::Category::$cat,
            engines: &[$($($eng),*)?],
            apply: Some($apply),
        }
    };
}

/// A row refused by name, with the reason `help` gives.
macro_rules! refused {
    ($help:expr, $cat:ident $([$($eng:literal),*])?, $name:literal, [$($al:literal),*], $kind:expr) => {
        $crate::options::OptDef {
            name: $name,
            aliases: &[$($al),*],
            kind: $kind,
            default: None,
            help: $help,
            category: $crate::options::Category::$cat,
            engines: &[$($($eng),*)?],
            apply: None,
        }
    };
}

/// An option of fio that iolab does not implement (names and aliases as fio 3.33 spells them).
macro_rules! not {
    ($($row:tt)*) => {
        $crate::options::refused!("fio option not implemented by iolab", $($row)*)
    };
}

/// What a `later!` row says: the option is fio's, but newer than the fio iolab follows.
pub const LATER: &str = "came after fio 3.33; iolab follows fio 3.33";

/// An option fio gained after 3.33: refused by name as having come after fio 3.33.
macro_rules! later {
    ($($row:tt)*) => {
        $crate::options::refused!($crate::options::LATER, $($row)*)
    };
}
pub(crate) use {imp, later, not, refused};

/// What the category files need.
mod prelude {
    pub(super) use super::{imp, later, not, pct, to_u32, Kind::*, OptDef};
    pub(super) use crate::control::{self, ExitWhat};
    pub(super) use crate::spec::{
        split_filenames, ClockSource, Fadvise, FileLock, FileService, RateProcess, SyncMode,
        UnifiedRw,
    };
    pub(super) use crate::value::{self, Distribution, TimeUnit};
    pub(super) const S: TimeUnit = TimeUnit::Seconds;
    pub(super) const US: TimeUnit = TimeUnit::Micros;
}

/// The table: the category files' definitions, in help order.
static GROUPS: &[&[OptDef]] = &[
    job::OPTIONS,
    file::OPTIONS,
    io::OPTIONS,
    engine::OPTIONS,
    sync::OPTIONS,
    time::OPTIONS,
    random::OPTIONS,
    rate::OPTIONS,
    buffer::OPTIONS,
    report::OPTIONS,
    process::OPTIONS,
    verify::OPTIONS,
    iolog::OPTIONS,
    zone::OPTIONS,
];

/// Every option, in help order.
pub fn all() -> impl Iterator<Item = &'static OptDef> + Clone {
    GROUPS.iter().flat_map(|g| g.iter())
}

impl OptDef {
    /// Does `name` (exactly) name this option?
    pub fn matches(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }

    /// Does iolab honour this option? If not, using it is an error naming it.
    pub fn implemented(&self) -> bool {
        self.apply.is_some()
    }

    /// Checks a value against the grammar (with `kb_base=1024`; sizes are re-read with the
    /// job's final `kb_base` when the job is resolved). Returns warnings worth showing.
    /// Values of options iolab does not implement are not checked: resolving refuses them by
    /// name anyway, and example files hold placeholders there (`port=[port]`, `pool=`).
    pub fn check(&self, v: Option<&str>) -> Result<Vec<String>, String> {
        if !self.implemented() {
            return Ok(Vec::new());
        }
        let Some(v) = v else {
            return match self.kind {
                Kind::Flag | Kind::StrOrBare => Ok(Vec::new()),
                _ => Err("needs a value (name=value)".into()),
            };
        };
        let v = v.trim();
        let mut warnings = Vec::new();
        let numeric = matches!(
            self.kind,
            Kind::Int | Kind::Size | Kind::SizePct | Kind::SizeOrRange
        );
        if numeric && !v.starts_with('(') && v.contains(['*', '/', '+', '^']) {
            let lead: String = v.chars().take_while(char::is_ascii_alphanumeric).collect();
            warnings.push(format!(
                "fio evaluates arithmetic only inside (...): '{v}' is read as '{lead}'"
            ));
        }
        match self.kind {
            // An empty string (`directory=` left for the user to fill) is refused when the job
            // is resolved, so that the file still parses; so is an engine iolab lacks, so that
            // the refusal names it with its reason.
            Kind::Str | Kind::StrOrBare | Kind::Engine => {}
            Kind::Flag => {
                value::parse_int(v)?;
            }
            Kind::Bool => {
                value::parse_bool(v)?;
            }
            Kind::Int => {
                value::parse_int(v)?;
            }
            Kind::Size => {
                value::parse_size(v, 1024)?;
            }
            Kind::SizePct => {
                value::parse_size_pct(v, 1024)?;
            }
            Kind::Time(u) => warnings.extend(value::parse_time(v, u)?.warning),
            Kind::Range => {
                value::parse_per_dir(v, false, |s| value::parse_range(s, 1024))?;
            }
            Kind::SizeOrRange => {
                value::parse_size_or_range(v, 1024)?;
            }
            Kind::PerDirSize => {
                value::parse_per_dir(v, true, |s| value::parse_size(s, 1024))?;
            }
            Kind::PerDirInt => {
                value::parse_per_dir(v, true, value::parse_int)?;
            }
            Kind::BsSplit => warnings.extend(value::parse_bssplit(v, 1024)?.1),
            Kind::Choice(list) => {
                choice(v, list)?;
            }
            Kind::Rw => {
                value::parse_rw(v, 1024)?;
            }
            Kind::Distribution => {
                value::parse_distribution(v, 1024)?;
            }
            Kind::FloatList => {
                value::parse_float_list(v)?;
            }
        }
        Ok(warnings)
    }
}

/// An option's value as `apply` sees it, with the readers the definitions share.
#[derive(Debug, Clone, Copy)]
pub struct Arg<'a> {
    /// The option.
    pub def: &'static OptDef,
    /// The value after `=`, trimmed; None for a bare name.
    pub value: Option<&'a str>,
    /// The value, or "" for a bare name.
    pub v: &'a str,
    /// The job's `kb_base` (1024 or 1000), for sizes.
    pub kb: u64,
}

impl<'a> Arg<'a> {
    /// `value` for the option `def` in a job whose `kb_base` is `kb`.
    pub fn new(def: &'static OptDef, value: Option<&'a str>, kb: u64) -> Arg<'a> {
        let value = value.map(str::trim);
        Arg {
            def,
            value,
            v: value.unwrap_or(""),
            kb,
        }
    }

    /// A boolean; a bare name means true. A [`Kind::Flag`] takes any integer, as fio's
    /// FIO_OPT_STR_SET (no maximum), a [`Kind::Bool`] only 0 or 1.
    pub fn flag(&self) -> Result<bool, String> {
        match (self.value, self.def.kind) {
            (None, _) => Ok(true),
            (Some(v), Kind::Flag) => value::parse_int(v).map(|n| n != 0),
            (Some(v), _) => value::parse_bool(v),
        }
    }

    /// An integer.
    pub fn int(&self) -> Result<i64, String> {
        value::parse_int(self.v)
    }

    /// A count that must not be negative.
    pub fn count(&self) -> Result<u64, String> {
        u64::try_from(self.int()?).map_err(|_| "must not be negative".to_string())
    }

    /// A time, `unit` when the value has none.
    pub fn time(&self, unit: TimeUnit) -> Result<std::time::Duration, String> {
        value::parse_time(self.v, unit).map(|t| std::time::Duration::from_micros(t.us))
    }

    /// The word of a [`Kind::Choice`].
    pub fn choice(&self) -> Result<&'static str, String> {
        match self.def.kind {
            Kind::Choice(list) => choice(self.v, list),
            _ => Err(format!("option '{}' has no list of values", self.def.name)),
        }
    }

    /// A size, a percentage, or zones (`2z`: zonesize bytes each, resolved when planning).
    pub fn size_pct(&self) -> Result<SizeOrPct, String> {
        value::parse_size_pct(self.v, self.kb)
    }

    /// Per-direction sizes, updating the directions given.
    pub fn per_dir_size(&self, cur: &mut PerDir<u64>) -> Result<(), String> {
        let kb = self.kb;
        cur.update(value::parse_per_dir(self.v, true, |x| {
            value::parse_size(x, kb)
        })?);
        Ok(())
    }

    /// Per-direction counts, updating the directions given.
    pub fn per_dir_int(&self, cur: &mut PerDir<u64>) -> Result<(), String> {
        let f = |x: &str| {
            value::parse_int(x)
                .and_then(|n| u64::try_from(n).map_err(|_| format!("negative value '{x}'")))
        };
        cur.update(value::parse_per_dir(self.v, true, f)?);
        Ok(())
    }
}

/// An integer as u32.
pub(crate) fn to_u32(v: i64) -> Result<u32, String> {
    u32::try_from(v).map_err(|_| format!("out of range: {v} (0 to {})", u32::MAX))
}

/// A percentage, 0 to 100.
pub(crate) fn pct(v: i64) -> Result<u32, String> {
    u32::try_from(v)
        .ok()
        .filter(|p| *p <= 100)
        .ok_or_else(|| format!("percentage out of range: {v} (0-100)"))
}

/// Matches a word against a choice list as fio does: the part before any `:` must equal one of
/// the words. Returns the word.
pub fn choice(v: &str, list: &[&'static str]) -> Result<&'static str, String> {
    let head = v.split(':').next().unwrap_or(v).trim();
    list.iter()
        .find(|w| **w == head)
        .copied()
        .ok_or_else(|| format!("invalid value '{v}' (valid: {})", list.join(", ")))
}

/// The option named `name` exactly (name or alias), as job files require.
pub fn find(name: &str) -> Option<&'static OptDef> {
    all().find(|o| o.matches(name))
}

/// Names longer than this get no "Did you mean": no option name comes close, and the search
/// would cost time in proportion to the length (a 1 MiB name took 11 s).
pub const MAX_SUGGEST_LEN: usize = 64;

/// Levenshtein distance, as fio's `string_distance`, or None once it exceeds `limit`.
fn distance(a: &[char], b: &str, limit: usize) -> Option<usize> {
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        if cur.iter().min().is_some_and(|m| *m > limit) {
            return None;
        }
        prev = cur;
    }
    prev.last().copied().filter(|d| *d <= limit)
}

/// fio's "Did you mean ...?": the closest option name, if it is close enough (fio accepts a
/// distance up to about half the length of what was typed, at least 2).
pub fn suggest(name: &str) -> Option<&'static str> {
    if name.len() > MAX_SUGGEST_LEN {
        return None;
    }
    let typed: Vec<char> = name.chars().collect();
    let limit = (typed.len() / 2).max(2);
    all()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .filter_map(|n| Some((distance(&typed, n, limit)?, n)))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// A name as errors show it: long ones cut (a 1 MiB option name is not worth echoing).
pub fn shown(name: &str) -> String {
    const KEEP: usize = 64;
    if name.len() <= KEEP + 16 {
        return name.to_string();
    }
    let cut = (0..=KEEP)
        .rev()
        .find(|i| name.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}... ({} bytes)", &name[..cut], name.len())
}

/// The message for an unknown name, with the hint when there is one.
pub fn unknown_message(name: &str) -> String {
    let shown = shown(name);
    match suggest(name) {
        Some(s) => format!("unknown option '{shown}'. Did you mean {s}?"),
        None => format!("unknown option '{shown}'"),
    }
}

/// Test helpers the category files share.
#[cfg(test)]
pub(crate) mod testing {
    use crate::JobSpec;

    /// `JobSpec::default()` with `opts` (`name=value` or a bare name) applied in order.
    pub(crate) fn applied(opts: &[&str]) -> Result<JobSpec, String> {
        let mut s = JobSpec::default();
        for o in opts {
            let (name, value) = match o.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (*o, None),
            };
            let def = super::find(name).ok_or_else(|| format!("no option {name}"))?;
            def.check(value)?;
            let apply = def.apply.ok_or_else(|| format!("{name} not implemented"))?;
            let arg = super::Arg::new(def, value, s.kb_base);
            apply(&mut s, &arg)?;
        }
        Ok(s)
    }

    /// [`applied`], panicking with the message on failure.
    pub(crate) fn spec(opts: &[&str]) -> JobSpec {
        applied(opts).unwrap_or_else(|e| panic!("{opts:?}: {e}"))
    }

    /// A row of a category file's table of its definitions at work: options applied in order
    /// (the last is the one under test; any before it set the scene) and what the last must
    /// make true of the job.
    pub(crate) type Acts = (&'static [&'static str], fn(&JobSpec) -> bool);

    /// A row of refused settings: options applied in order, the last refused (the ones before
    /// it must apply).
    pub(crate) type Refused = &'static [&'static str];

    /// Checks each row: its options apply and its check holds, and the check does NOT hold
    /// without the last option, so that a definition whose apply did nothing fails its row.
    pub(crate) fn check_acts(rows: &[Acts]) {
        for (opts, holds) in rows {
            let Some((last, scene)) = opts.split_last() else {
                panic!("a row with no option");
            };
            assert!(holds(&spec(opts)), "{opts:?}: the check does not hold");
            assert!(
                !holds(&spec(scene)),
                "{opts:?}: the check holds without {last}: it tests nothing"
            );
        }
    }

    /// Checks each row: the options before the last apply, and the last is refused.
    pub(crate) fn check_refused(rows: &[Refused]) {
        for opts in rows {
            let Some((last, scene)) = opts.split_last() else {
                panic!("a row with no option");
            };
            spec(scene);
            assert!(applied(opts).is_err(), "{opts:?}: {last} was taken");
        }
    }

    /// The two tests of a category file's tables (`ACTS`, `REFUSED`), written once.
    macro_rules! table_tests {
        () => {
            #[test]
            fn each_definition_acts() {
                $crate::options::testing::check_acts(ACTS);
            }

            #[test]
            fn bad_values_are_refused() {
                $crate::options::testing::check_refused(REFUSED);
            }
        };
    }
    pub(crate) use table_tests;

    /// The canonical name of the option a row tests (its last), aliases resolved.
    pub(crate) fn tested(opts: &[&str]) -> &'static str {
        let Some(last) = opts.last() else {
            panic!("a row with no option");
        };
        let name = last.split_once('=').map_or(*last, |(n, _)| n);
        super::find(name).map_or_else(|| panic!("no option {name}"), |o| o.name)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{Acts, Refused};
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = HashSet::new();
        for o in all() {
            for n in std::iter::once(o.name).chain(o.aliases.iter().copied()) {
                // dfs's `pool` alias duplicates rbd's `pool` name in fio too; the first wins.
                if n == "pool" {
                    continue;
                }
                assert!(seen.insert(n), "duplicate option name {n}");
            }
        }
    }

    #[test]
    fn every_option_in_issue_3_is_implemented() {
        let names = "name description filename directory filename_format nrfiles filesize size \
            io_size offset offset_increment rw rwmixread rwmixwrite bs bsrange bssplit ba ioengine \
            iodepth iodepth_batch iodepth_batch_complete_min iodepth_batch_complete_max \
            iodepth_low direct buffered sync fsync fdatasync end_fsync fsync_on_close numjobs \
            thread runtime time_based ramp_time startdelay loops randrepeat randseed \
            allrandrepeat norandommap random_generator random_distribution percentage_random \
            rate rate_iops rate_min rate_iops_min rate_process thinktime thinktime_blocks \
            thinktime_spin group_reporting stonewall new_group wait_for invalidate \
            create_on_open fallocate pre_read unlink zero_buffers refill_buffers \
            scramble_buffers buffer_compress_percentage buffer_pattern dedupe_percentage \
            percentile_list clat_percentiles lat_percentiles slat_percentiles \
            unified_rw_reporting kb_base unit_base disk_util allow_mounted_write cpus_allowed \
            exitall continue_on_error hipri nowait sqthread_poll sqthread_poll_cpu fixedbufs \
            registerfiles nonvectored userspace_reap";
        for n in names.split_whitespace() {
            let o = find(n).unwrap_or_else(|| panic!("{n} missing"));
            assert!(o.implemented(), "{n} not implemented");
        }
    }

    #[test]
    fn aliases_resolve_to_the_canonical_option() {
        for (alias, name) in [
            ("readwrite", "rw"),
            ("blocksize", "bs"),
            ("wait_for_previous", "stonewall"),
            ("iodepth_batch_submit", "iodepth_batch"),
            ("iodepth_batch_complete", "iodepth_batch_complete_min"),
            ("timeout", "runtime"),
            ("nr_files", "nrfiles"),
            ("blockalign", "ba"),
            ("ratemin", "rate_min"),
        ] {
            assert_eq!(find(alias).map(|o| o.name), Some(name));
        }
    }

    #[test]
    fn did_you_mean() {
        assert_eq!(suggest("sizee"), Some("size"));
        assert_eq!(suggest("siz"), Some("size"));
        assert_eq!(suggest("iodeph"), Some("iodepth"));
        assert_eq!(suggest("qqqqqqqqqqqqqqqq"), None);
        assert_eq!(suggest("runtme"), Some("runtime"));
        assert_eq!(suggest("rw"), Some("rw"));
        assert_eq!(suggest("ioenigne"), Some("ioengine"));
        assert_eq!(
            unknown_message("blocksze"),
            "unknown option 'blocksze'. Did you mean blocksize?"
        );
    }

    #[test]
    fn regression_a_long_unknown_name_made_did_you_mean_take_seconds() {
        // Bounded by input size: a quadratic search over 1 MiB would not finish in a test run.
        let long = format!("blocksize{}", "x".repeat(1 << 20));
        assert_eq!(suggest(&long), None);
        let m = unknown_message(&long);
        assert!(m.len() < 200 && m.contains("(1048585 bytes)"), "{m}");
        assert_eq!(suggest(&"b".repeat(MAX_SUGGEST_LEN + 1)), None);
        assert_eq!(shown("é".repeat(100).as_str()).chars().take(32).count(), 32);
    }

    #[test]
    fn bare_names_need_a_value_unless_flags() {
        assert!(find("time_based")
            .map(|o| o.check(None).is_ok())
            .unwrap_or(false));
        assert!(find("direct")
            .map(|o| o.check(None).is_err())
            .unwrap_or(false));
        assert!(find("bs").map(|o| o.check(None).is_err()).unwrap_or(false));
        assert!(find("direct")
            .map(|o| o.check(Some("2")).is_err())
            .unwrap_or(false));
    }

    #[test]
    fn every_default_is_valid_for_its_grammar() {
        for o in all().filter(|o| o.implemented()) {
            if let Some(d) = o.default {
                assert!(o.check(Some(d)).is_ok(), "{}: default '{d}'", o.name);
            }
        }
    }

    /// Options whose apply only checks the value (there is no field to see): their row in the
    /// file's table is a refused value.
    const CHECKED_ONLY: &[&str] = &["cmd_type", "log_entries"];

    /// A category file: its name, its definitions, and the tables of its tests.
    type Table = (
        &'static str,
        &'static [OptDef],
        &'static [Acts],
        &'static [Refused],
    );

    /// The category files named, each as a [`Table`].
    macro_rules! tables {
        ($($file:ident),*) => {
            &[$((stringify!($file), $file::OPTIONS, $file::tests::ACTS, $file::tests::REFUSED)),*]
        };
    }

    /// Every category file, in [`GROUPS`]' order.
    static TABLES: &[Table] = tables!(
        job, file, io, engine, sync, time, random, rate, buffer, report, process, verify, iolog,
        zone
    );

    #[test]
    fn every_implemented_option_has_a_row_in_its_files_table() {
        let mut covered = 0;
        for (file, defs, acts, refused) in TABLES {
            let acting: HashSet<&str> = acts.iter().map(|(o, _)| testing::tested(o)).collect();
            let refusing: HashSet<&str> = refused.iter().map(|o| testing::tested(o)).collect();
            for t in acting.iter().chain(&refusing) {
                assert!(
                    defs.iter().any(|d| d.name == *t),
                    "{file}.rs tests {t}, which is defined in another file"
                );
            }
            let missing: Vec<&str> = defs
                .iter()
                .filter(|d| d.implemented())
                .map(|d| d.name)
                .filter(|n| {
                    !(acting.contains(n) || (CHECKED_ONLY.contains(n) && refusing.contains(n)))
                })
                .collect();
            assert!(
                missing.is_empty(),
                "{file}.rs: no row in tests::ACTS for {missing:?}: add one that shows each \
                 acting on the JobSpec"
            );
            covered += defs.iter().filter(|d| d.implemented()).count();
        }
        // Every category file is in TABLES, in GROUPS' order, so every option is counted.
        assert_eq!(
            TABLES.len(),
            GROUPS.len(),
            "a category file is missing from TABLES"
        );
        for ((file, defs, _, _), group) in TABLES.iter().zip(GROUPS) {
            let names = |d: &'static [OptDef]| d.iter().map(|o| o.name);
            assert!(
                names(defs).eq(names(group)),
                "{file}: not GROUPS' file at its place"
            );
        }
        assert_eq!(covered, all().filter(|o| o.implemented()).count());
    }

    #[test]
    fn garbage_values_are_refused_or_taken_without_panic() {
        for o in all() {
            if let Some(apply) = o.apply {
                for v in ["zzz", "", "-1", "99999999999999999999", "1:2:3"] {
                    let mut s = JobSpec::default();
                    let _ = apply(&mut s, &Arg::new(o, Some(v), 1024));
                }
            }
        }
    }
}
