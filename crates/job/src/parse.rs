//! Job files: sections, `[global]`, comments, bare flags, `include`, `${ENV}`, `$pagesize`,
//! `$mb_memory`, `$ncpus`. Produces a [`JobFile`]: for each job, the options that apply to it
//! (globals above it, then its own) with their source lines, each already checked against its
//! grammar. Turning them into typed [`crate::JobSpec`]s is [`JobFile::resolve`]'s job.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{ErrorKind, JobError, Loc, Warning};
use crate::options::{self, OptDef};
use crate::read::{self, Budget, MAX_INCLUDES, MAX_INCLUDE_DEPTH, MAX_JOBS};

mod vars;
pub use vars::{EnvLookup, Vars};

/// One `name[=value]` as written, checked against its option's grammar.
#[derive(Debug, Clone)]
pub struct RawOption {
    /// The option (aliases already resolved).
    pub def: &'static OptDef,
    /// How the user spelled the name (alias or prefix).
    pub spelled: String,
    /// The value after `=`, with variables expanded; None for a bare name.
    pub value: Option<String>,
    /// Where it was written.
    pub loc: Loc,
}

/// One job as written: its name and its options in the order they apply.
#[derive(Debug, Clone)]
pub struct RawJob {
    /// The section name (or `--name=`).
    pub name: String,
    /// The `[name]` line (or the `--name` argument).
    pub loc: Loc,
    /// The options it inherits: the command line's globals and the `[global]` options above
    /// it. Shared with the other jobs, not copied: 20,000 sections under one large `[global]`
    /// value once took 3.9 GB.
    pub inherited: Inherited,
    /// The job's own options, after the inherited ones.
    pub own: Vec<RawOption>,
    /// Index of the job file (or 0 for the command line); fio stonewalls between files.
    pub group: usize,
}

impl RawJob {
    /// A job with no options.
    pub fn new(name: impl Into<String>, loc: Loc, group: usize) -> Self {
        RawJob {
            name: name.into(),
            loc,
            inherited: Inherited::default(),
            own: Vec::new(),
            group,
        }
    }

    /// Every option in the order it applies (globals first, later ones win).
    pub fn options(&self) -> impl DoubleEndedIterator<Item = &RawOption> + '_ {
        self.inherited.iter().chain(&self.own)
    }
}

/// Options a job shares with others: the base (command-line globals), then the first `len`
/// options of its file's `[global]` sections.
#[derive(Debug, Clone, Default)]
pub struct Inherited {
    /// Applies to every job.
    pub base: Arc<[RawOption]>,
    /// All the `[global]` options of the job's file, in order.
    pub globals: Arc<[RawOption]>,
    /// How many of `globals` were written above the job.
    pub len: usize,
}

impl Inherited {
    /// The inherited options in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &RawOption> + '_ {
        let g = self.globals.get(..self.len).unwrap_or(&self.globals[..]);
        self.base.iter().chain(g)
    }
}

/// The weight of options for [`Budget::apply`]: how many, and how many bytes of values.
pub(crate) fn weight<'a>(opts: impl IntoIterator<Item = &'a RawOption>) -> (usize, usize) {
    opts.into_iter().fold((0, 0), |(n, b), o| {
        (n + 1, b + o.value.as_ref().map_or(0, String::len))
    })
}

/// Parsed job files: the jobs and any warnings, not yet resolved.
#[derive(Debug, Clone, Default)]
pub struct JobFile {
    /// The jobs in order.
    pub jobs: Vec<RawJob>,
    /// Things fio accepts but that are probably not what was meant.
    pub warnings: Vec<Warning>,
}

impl JobFile {
    /// fio's `global options`: the command line's options before the first job and the job
    /// file's `[global]` sections, as written; a bare flag is left out, as fio leaves it out.
    pub fn global_options(&self) -> Vec<(String, String)> {
        let Some(first) = self.jobs.first() else {
            return Vec::new();
        };
        let all = first
            .inherited
            .base
            .iter()
            .chain(first.inherited.globals.iter());
        // fio's JSON leaves out an option given without a value (`group_reporting`).
        all.filter_map(|o| {
            (o.value.as_ref())
                .filter(|v| !v.is_empty())
                .map(|v| (o.def.name.to_string(), v.clone()))
        })
        .collect()
    }
}
/// How to parse: which sections to keep (`--section`), and the variables.
pub struct ParseOpts {
    /// Only these job sections (globals are always used); empty = all.
    pub sections: Vec<String>,
    /// Variable values.
    pub vars: Vars,
    /// Options that apply before every file's own globals (the command line's globals).
    pub base: Vec<RawOption>,
}

impl Default for ParseOpts {
    fn default() -> Self {
        ParseOpts {
            sections: Vec::new(),
            vars: Vars::system(),
            base: Vec::new(),
        }
    }
}

struct State<'a> {
    opts: &'a ParseOpts,
    base: Arc<[RawOption]>,
    group: usize,
    globals: Vec<RawOption>,
    /// What the current globals weigh (see [`weight`]), and the base.
    globals_weight: (usize, usize),
    current: Option<Section>,
    out: JobFile,
    budget: Budget,
}

enum Section {
    Global,
    Job(RawJob),
    Skipped,
}

impl State<'_> {
    fn finish_section(&mut self) {
        if let Some(Section::Job(j)) = self.current.take() {
            self.out.jobs.push(j);
        }
    }

    fn new_job(&mut self, name: &str, loc: &Loc) -> Result<RawJob, JobError> {
        if self.out.jobs.len() >= MAX_JOBS {
            return Err(JobError::new(
                ErrorKind::Syntax,
                format!(
                    "job '{}': more than {MAX_JOBS} jobs (fio's limit)",
                    options::shown(name)
                ),
            )
            .at(loc));
        }
        let (n, b) = self.globals_weight;
        self.budget.apply(n, b).map_err(|m| {
            JobError::new(
                ErrorKind::Syntax,
                format!("job '{}': {m}", options::shown(name)),
            )
            .at(loc)
        })?;
        let mut job = RawJob::new(name, loc.clone(), self.group);
        job.inherited.base = self.base.clone();
        job.inherited.len = self.globals.len();
        Ok(job)
    }

    fn file(
        &mut self,
        text: &str,
        name: &str,
        dir: Option<&Path>,
        depth: usize,
    ) -> Result<(), JobError> {
        let name: Arc<str> = name.into();
        for (idx, raw_line) in text.lines().enumerate() {
            let loc = Loc {
                file: name.clone(),
                line: idx + 1,
            };
            if raw_line.contains('\0') {
                // A NUL ends the line in fio (C strings); in a job name it panicked when the
                // thread was named.
                return Err(JobError::new(ErrorKind::Syntax, "NUL byte in line").at(&loc));
            }
            self.line(raw_line, &loc, dir, depth)?;
        }
        Ok(())
    }

    fn line(
        &mut self,
        raw: &str,
        loc: &Loc,
        dir: Option<&Path>,
        depth: usize,
    ) -> Result<(), JobError> {
        // fio (strip_blank_end) cuts a line at the first ';' or '#', wherever it is.
        let line = raw.split([';', '#']).next().unwrap_or("").trim();
        if line.is_empty() {
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest
                .strip_suffix(']')
                .or_else(|| rest.split_once(']').map(|(n, _)| n))
                .ok_or_else(|| {
                    JobError::new(
                        ErrorKind::Syntax,
                        format!("unterminated section header '{}'", options::shown(line)),
                    )
                    .at(loc)
                })?
                .trim();
            if name.is_empty() {
                return Err(JobError::new(ErrorKind::Syntax, "empty section name").at(loc));
            }
            self.finish_section();
            self.current = Some(if name.starts_with("global") {
                Section::Global
            } else if !self.opts.sections.is_empty()
                && !self.opts.sections.iter().any(|s| s == name)
            {
                Section::Skipped
            } else {
                Section::Job(self.new_job(name, loc)?)
            });
            return Ok(());
        }
        if let Some(file) = line
            .strip_prefix("include")
            .filter(|r| r.starts_with([' ', '\t']))
        {
            return self.include(file.trim(), loc, dir, depth);
        }
        let line = self
            .opts
            .vars
            .expand_within(line, &mut self.budget)
            .map_err(|e| e.at(loc))?;
        let opt = parse_option(&line, loc, false)?;
        let (n, b) = weight([&opt]);
        match &mut self.current {
            None => Err(
                JobError::new(ErrorKind::Syntax, "option outside of a [section]")
                    .at(loc)
                    .option(&opt.spelled),
            ),
            Some(Section::Global) => {
                self.globals.push(opt);
                self.globals_weight.0 += n;
                self.globals_weight.1 += b;
                Ok(())
            }
            Some(Section::Job(j)) => {
                self.budget
                    .apply(n, b)
                    .map_err(|m| JobError::new(ErrorKind::Syntax, m).at(loc))?;
                j.own.push(opt);
                Ok(())
            }
            Some(Section::Skipped) => Ok(()),
        }
    }

    fn include(
        &mut self,
        file: &str,
        loc: &Loc,
        dir: Option<&Path>,
        depth: usize,
    ) -> Result<(), JobError> {
        if depth >= MAX_INCLUDE_DEPTH {
            return Err(JobError::new(
                ErrorKind::Syntax,
                format!(
                    "include nested too deeply (more than {MAX_INCLUDE_DEPTH} levels) at '{}'",
                    options::shown(file)
                ),
            )
            .at(loc));
        }
        if self.budget.includes == 0 {
            return Err(JobError::new(
                ErrorKind::Syntax,
                format!(
                    "more than {MAX_INCLUDES} included files at '{}'",
                    options::shown(file)
                ),
            )
            .at(loc));
        }
        self.budget.includes -= 1;
        let path = match dir {
            Some(d) if Path::new(file).is_relative() => d.join(file),
            _ => PathBuf::from(file),
        };
        let what = format!("cannot include '{}'", path.display());
        let text = read::file(&path, &mut self.budget, &what).map_err(|e| e.at(loc))?;
        let name = path.display().to_string();
        self.file(&text, &name, path.parent(), depth + 1)
    }
}

/// Parses one `name[=value]` (already expanded) and checks the value. `prefix` allows
/// unambiguous prefixes of option names, as fio's command line (getopt_long) does; job files
/// need exact names.
pub fn parse_option(text: &str, loc: &Loc, prefix: bool) -> Result<RawOption, JobError> {
    let (name, value) = match text.split_once('=') {
        Some((n, v)) => (n.trim(), Some(v.trim().to_string())),
        None => (text.trim(), None),
    };
    let def = match options::find(name) {
        Some(d) => d,
        None if prefix => find_prefix(name).map_err(|e| e.at(loc))?,
        None => {
            return Err(
                JobError::new(ErrorKind::UnknownOption, options::unknown_message(name)).at(loc),
            );
        }
    };
    let kind = if value.is_none() {
        ErrorKind::MissingValue
    } else {
        ErrorKind::InvalidValue
    };
    def.check(value.as_deref())
        .map_err(|m| JobError::new(kind, m).at(loc).option(name))?;
    Ok(RawOption {
        def,
        spelled: name.to_string(),
        value,
        loc: loc.clone(),
    })
}

/// A unique prefix of an option name or alias (fio's command line).
pub fn find_prefix(name: &str) -> Result<&'static OptDef, JobError> {
    let mut hits: Vec<&'static OptDef> = Vec::new();
    let mut spelled: Vec<&str> = Vec::new();
    for o in options::all() {
        for n in std::iter::once(o.name).chain(o.aliases.iter().copied()) {
            if !name.is_empty() && n.starts_with(name) {
                spelled.push(n);
                if !hits.iter().any(|h| std::ptr::eq(*h, o)) {
                    hits.push(o);
                }
            }
        }
    }
    match hits.as_slice() {
        [one] => Ok(one),
        [] => Err(JobError::new(
            ErrorKind::UnknownOption,
            options::unknown_message(name),
        )),
        _ => Err(JobError::new(
            ErrorKind::AmbiguousOption,
            format!(
                "option '{name}' is ambiguous; possibilities: {}",
                spelled.join(", ")
            ),
        )),
    }
}

/// Warnings of the options that apply to some job, each option looked at once even when
/// many jobs share it, each warning reported once.
fn collect_warnings(out: &mut JobFile) {
    let mut warnings = Vec::new();
    let mut seen = HashSet::new();
    // How much of each shared slice has been looked at, by address.
    let mut done: HashMap<*const RawOption, usize> = HashMap::new();
    for j in &out.jobs {
        let inh = &j.inherited;
        let shared = [(&inh.base, inh.base.len()), (&inh.globals, inh.len)];
        let mut fresh: Vec<&RawOption> = Vec::new();
        for (slice, len) in shared {
            let from = done.entry(slice.as_ptr()).or_insert(0);
            if let Some(new) = slice.get(*from..len) {
                fresh.extend(new);
                *from = len;
            }
        }
        for o in fresh.into_iter().chain(&j.own) {
            for w in o.def.check(o.value.as_deref()).unwrap_or_default() {
                let w = Warning {
                    loc: o.loc.clone(),
                    option: o.spelled.clone(),
                    message: w,
                };
                if seen.insert(w.clone()) {
                    warnings.push(w);
                }
            }
        }
    }
    out.warnings = warnings;
}

/// Parses job text; `name` is used in error locations and as the base for relative includes
/// (its directory).
pub fn parse_str_with(text: &str, name: &str, opts: &ParseOpts) -> Result<JobFile, JobError> {
    parse_texts(&[(text.to_string(), name.to_string())], opts)
}

/// Parses several job texts; each is its own group (fio stonewalls between job files).
pub fn parse_texts(texts: &[(String, String)], opts: &ParseOpts) -> Result<JobFile, JobError> {
    let mut budget = Budget::default();
    for (text, name) in texts {
        budget.take_text(text.len(), name)?;
    }
    parse_texts_within(texts, opts, budget)
}

/// [`parse_texts`] with what is left of the budget after reading the texts.
pub(crate) fn parse_texts_within(
    texts: &[(String, String)],
    opts: &ParseOpts,
    budget: Budget,
) -> Result<JobFile, JobError> {
    let base: Arc<[RawOption]> = opts.base.clone().into();
    let mut st = State {
        globals_weight: weight(base.iter()),
        base,
        opts,
        group: 0,
        globals: Vec::new(),
        current: None,
        out: JobFile::default(),
        budget,
    };
    for (i, (text, name)) in texts.iter().enumerate() {
        st.group = i;
        st.globals.clear();
        st.globals_weight = weight(st.base.iter());
        st.current = None;
        let first_job = st.out.jobs.len();
        let dir = Path::new(name)
            .parent()
            .filter(|p| !p.as_os_str().is_empty());
        st.file(text, name, dir, 0)?;
        st.finish_section();
        // The file's globals are complete: its jobs share them from here on.
        let globals: Arc<[RawOption]> = std::mem::take(&mut st.globals).into();
        for j in st.out.jobs.get_mut(first_job..).unwrap_or_default() {
            j.inherited.globals = globals.clone();
        }
    }
    let mut out = st.out;
    collect_warnings(&mut out);
    Ok(out)
}

/// Reads a job file, `-` meaning standard input, refusing anything but a regular file and
/// more than [`read::MAX_TEXT_BYTES`].
pub fn read_job_file(path: impl AsRef<Path>) -> Result<String, JobError> {
    read::job_file(path.as_ref(), &mut Budget::default())
}

/// Reads job files (`-` = standard input) into `(text, name)` pairs for [`parse_texts`],
/// within one budget for all of them.
pub(crate) fn read_texts<P: AsRef<Path>>(
    paths: &[P],
) -> Result<(Vec<(String, String)>, Budget), JobError> {
    let mut budget = Budget::default();
    let mut texts = Vec::new();
    for p in paths {
        let p = p.as_ref();
        let name = if p.as_os_str() == "-" {
            "<stdin>".to_string()
        } else {
            p.display().to_string()
        };
        texts.push((read::job_file(p, &mut budget)?, name));
    }
    Ok((texts, budget))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn vars() -> Vars {
        Vars {
            pagesize: 4096,
            ncpus: 8,
            mb_memory: 1024,
            env: Box::new(|k| (k == "SIZE").then(|| "2m".to_string())),
        }
    }

    fn opts() -> ParseOpts {
        ParseOpts {
            sections: Vec::new(),
            vars: vars(),
            base: Vec::new(),
        }
    }

    fn parse(text: &str) -> Result<JobFile, JobError> {
        parse_str_with(text, "job.fio", &opts())
    }

    fn value(f: &JobFile, job: usize, name: &str) -> Option<String> {
        f.jobs[job]
            .options()
            .rev()
            .find(|o| o.def.name == name)
            .and_then(|o| o.value.clone())
    }

    #[test]
    fn sections_globals_and_comments() {
        let f = parse(
            "; comment\n# comment\n[global]\nbs=8k ; inline\n[a]\nrw=randread # inline\n\
             time_based\n[global-more]\niodepth=4\n[b]\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.jobs.len(), 2);
        assert_eq!(value(&f, 0, "bs").as_deref(), Some("8k"));
        assert_eq!(value(&f, 0, "rw").as_deref(), Some("randread"));
        assert!(f.jobs[0]
            .options()
            .any(|o| o.def.name == "time_based" && o.value.is_none()));
        // A global section only affects jobs below it.
        assert_eq!(value(&f, 0, "iodepth"), None);
        assert_eq!(value(&f, 1, "iodepth").as_deref(), Some("4"));
        assert_eq!(f.jobs[1].loc, Loc::new("job.fio", 10));
    }

    #[test]
    fn variables_and_environment() {
        let f = parse("[a]\nsize=${SIZE}\nbs=$pagesize\niodepth=$ncpus\nnumjobs=${UNSET}1\n")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(value(&f, 0, "size").as_deref(), Some("2m"));
        assert_eq!(value(&f, 0, "bs").as_deref(), Some("4096"));
        assert_eq!(value(&f, 0, "iodepth").as_deref(), Some("8"));
        assert_eq!(value(&f, 0, "numjobs").as_deref(), Some("1"));
        assert_eq!(vars().expand("($mb_memory/2)m"), "(1024/2)m");
    }

    #[test]
    fn a_keyword_in_plain_arithmetic_is_calculated_as_fios_bc() {
        // fio 3.33 runs `echo '2*24105' | bc` for size=2*$mb_memory: 48210 bytes, not 2.
        assert_eq!(
            vars().expand("size=4*1024*$mb_memory"),
            "size=(4*1024*1024)"
        );
        assert_eq!(vars().expand("2*$ncpus"), "(2*8)");
        assert_eq!(vars().expand("filename=a-$ncpus.dat"), "filename=a-8.dat");
        assert_eq!(vars().expand("size=4*1024"), "size=4*1024");
        let f = parse("[a]\nsize=2*$mb_memory/3\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(value(&f, 0, "size").as_deref(), Some("(2*1024/3)"));
    }

    #[test]
    fn arithmetic_values_are_accepted() {
        let f = parse("[a]\nsize=(1024*8)k\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(value(&f, 0, "size").as_deref(), Some("(1024*8)k"));
        assert!(parse("[a]\nsize=(1024*8\n").is_err());
    }

    #[test]
    fn unknown_option_has_hint_file_and_line() {
        let e = parse("[a]\n\nblocksze=4k\n")
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.kind, ErrorKind::UnknownOption);
        assert_eq!(
            e.to_string(),
            "job.fio:3: unknown option 'blocksze'. Did you mean blocksize?"
        );
        // Job files need exact names, as fio's (verified: `siz=2m` is "Bad option").
        assert!(parse("[a]\nsiz=1m\n").is_err());
    }

    #[test]
    fn bad_values_and_bare_names_are_refused_with_location() {
        let e = parse("[a]\nbs=4x\n")
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.to_string(), "job.fio:2: option 'bs': invalid size '4x'");
        let e = parse("[a]\ndirect\n")
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.kind, ErrorKind::MissingValue);
        let e = parse("bs=4k\n").err().unwrap_or_else(|| panic!("accepted"));
        assert_eq!(e.kind, ErrorKind::Syntax);
        assert!(parse("[a\nbs=4k\n").is_err());
    }

    #[test]
    fn include_is_relative_to_the_including_file() {
        let dir = std::env::temp_dir().join(format!("iolab-job-inc-{}", std::process::id()));
        let sub = dir.join("sub");
        std::fs::create_dir_all(&sub).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(sub.join("common.fio"), "bs=16k\nbogus=1\n")
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(sub.join("ok.fio"), "iodepth=2\n").unwrap_or_else(|e| panic!("{e}"));
        let main = dir.join("main.fio");
        let name = main.display().to_string();
        let f = parse_str_with("[a]\ninclude sub/ok.fio\n", &name, &opts())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(value(&f, 0, "iodepth").as_deref(), Some("2"));
        let e = parse_str_with("[a]\ninclude sub/common.fio\n", &name, &opts())
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        let loc = e.loc.clone().unwrap_or_default();
        assert!(loc.file.ends_with("common.fio") && loc.line == 2, "{e}");
        let e = parse_str_with("[a]\ninclude nope.fio\n", &name, &opts()).err();
        assert_eq!(e.map(|e| e.kind), Some(ErrorKind::Io));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn section_filter_keeps_globals() {
        let o = ParseOpts {
            sections: vec!["b".into()],
            vars: vars(),
            base: Vec::new(),
        };
        let f = parse_str_with("[global]\nbs=8k\n[a]\n[b]\n", "j.fio", &o)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.jobs.len(), 1);
        assert_eq!(f.jobs[0].name, "b");
        assert_eq!(value(&f, 0, "bs").as_deref(), Some("8k"));
    }

    #[test]
    fn prefixes_are_for_the_command_line_only() {
        assert_eq!(find_prefix("runti").map(|o| o.name).ok(), Some("runtime"));
        assert_eq!(
            find_prefix("filen").err().map(|e| e.kind),
            Some(ErrorKind::AmbiguousOption)
        );
        assert_eq!(
            find_prefix("zzz").err().map(|e| e.kind),
            Some(ErrorKind::UnknownOption)
        );
    }

    #[test]
    fn time_warnings_are_collected() {
        let f = parse("[a]\nruntime=2sec\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.warnings.len(), 1);
        assert_eq!(f.warnings[0].loc, Loc::new("job.fio", 2));
    }
}
