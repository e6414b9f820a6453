//! Job files: sections, `[global]`, comments, bare flags, `include`, `${ENV}`, `$pagesize`,
//! `$mb_memory`, `$ncpus`. Produces a [`JobFile`]: for each job, the options that apply to it
//! (globals above it, then its own) with their source lines, each already checked against its
//! grammar. Turning them into typed [`crate::JobSpec`]s is [`JobFile::resolve`]'s job.

use std::path::{Path, PathBuf};

use crate::error::{ErrorKind, JobError, Loc, Warning};
use crate::options::{self, OptDef};

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
    /// Globals first, then the job's own options; later ones win.
    pub options: Vec<RawOption>,
    /// Index of the job file (or 0 for the command line); fio stonewalls between files.
    pub group: usize,
}

/// Parsed job files: the jobs and any warnings, not yet resolved.
#[derive(Debug, Clone, Default)]
pub struct JobFile {
    /// The jobs in order.
    pub jobs: Vec<RawJob>,
    /// Things fio accepts but that are probably not what was meant.
    pub warnings: Vec<Warning>,
}

/// Looks up an environment variable.
pub type EnvLookup = Box<dyn Fn(&str) -> Option<String>>;

/// Values of fio's `$` keywords and of environment variables, injectable for tests.
pub struct Vars {
    /// `$pagesize`.
    pub pagesize: u64,
    /// `$ncpus`.
    pub ncpus: u64,
    /// `$mb_memory`: total memory in MiB.
    pub mb_memory: u64,
    /// `${NAME}` lookup; fio substitutes an empty string for an unset variable.
    pub env: EnvLookup,
}

impl Vars {
    /// The running system's values: page size from `/proc/self/auxv` (AT_PAGESZ, 4096 if
    /// unreadable), CPUs from the scheduler, memory from `/proc/meminfo`.
    pub fn system() -> Self {
        let pagesize = std::fs::read("/proc/self/auxv")
            .ok()
            .and_then(|b| {
                b.chunks_exact(16).find_map(|c| {
                    let key = u64::from_ne_bytes(c[..8].try_into().ok()?);
                    let val = u64::from_ne_bytes(c[8..].try_into().ok()?);
                    (key == 6).then_some(val)
                })
            })
            .unwrap_or(4096);
        let ncpus = std::thread::available_parallelism()
            .map(|n| n.get() as u64)
            .unwrap_or(1);
        let mb_memory = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .map(|kb| kb / 1024)
            .unwrap_or(0);
        Vars {
            pagesize,
            ncpus,
            mb_memory,
            env: Box::new(|k| std::env::var(k).ok()),
        }
    }

    /// Expands `${NAME}` and fio's `$pagesize`, `$mb_memory`, `$ncpus` in `s`.
    pub fn expand(&self, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let tail = &rest[i..];
            if let Some(close) = tail.strip_prefix("${").and_then(|t| t.find('}')) {
                out.push_str(&(self.env)(&tail[2..2 + close]).unwrap_or_default());
                rest = &tail[close + 3..];
                continue;
            }
            let kw = [
                ("$pagesize", self.pagesize),
                ("$mb_memory", self.mb_memory),
                ("$ncpus", self.ncpus),
            ]
            .into_iter()
            .find(|(k, _)| tail.starts_with(k));
            match kw {
                Some((k, v)) => {
                    out.push_str(&v.to_string());
                    rest = &tail[k.len()..];
                }
                None => {
                    out.push('$');
                    rest = &tail[1..];
                }
            }
        }
        out.push_str(rest);
        out
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

const MAX_INCLUDE_DEPTH: usize = 16;

struct State<'a> {
    opts: &'a ParseOpts,
    group: usize,
    globals: Vec<RawOption>,
    current: Option<Section>,
    out: JobFile,
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

    fn file(
        &mut self,
        text: &str,
        name: &str,
        dir: Option<&Path>,
        depth: usize,
    ) -> Result<(), JobError> {
        for (idx, raw_line) in text.lines().enumerate() {
            let loc = Loc::new(name, idx + 1);
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
                        format!("unterminated section header '{line}'"),
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
                let mut options = self.opts.base.clone();
                options.extend(self.globals.iter().cloned());
                Section::Job(RawJob {
                    name: name.to_string(),
                    loc: loc.clone(),
                    options,
                    group: self.group,
                })
            });
            return Ok(());
        }
        if let Some(file) = line
            .strip_prefix("include")
            .filter(|r| r.starts_with([' ', '\t']))
        {
            return self.include(file.trim(), loc, dir, depth);
        }
        let line = self.opts.vars.expand(line);
        let opt = parse_option(&line, loc, false)?;
        match &mut self.current {
            None => Err(
                JobError::new(ErrorKind::Syntax, "option outside of a [section]")
                    .at(loc)
                    .option(&opt.spelled),
            ),
            Some(Section::Global) => {
                self.globals.push(opt);
                Ok(())
            }
            Some(Section::Job(j)) => {
                j.options.push(opt);
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
                format!("include nested too deeply at '{file}'"),
            )
            .at(loc));
        }
        let path = match dir {
            Some(d) if Path::new(file).is_relative() => d.join(file),
            _ => PathBuf::from(file),
        };
        let text = std::fs::read_to_string(&path).map_err(|e| {
            JobError::new(
                ErrorKind::Io,
                format!("cannot include '{}': {e}", path.display()),
            )
            .at(loc)
        })?;
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
    for o in options::OPTIONS {
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

fn collect_warnings(out: &mut JobFile) {
    let mut warnings = Vec::new();
    for j in &out.jobs {
        for o in &j.options {
            if let Ok(ws) = o.def.check(o.value.as_deref()) {
                for w in ws {
                    let w = Warning {
                        loc: o.loc.clone(),
                        option: o.spelled.clone(),
                        message: w,
                    };
                    if !warnings.contains(&w) {
                        warnings.push(w);
                    }
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
    let mut st = State {
        opts,
        group: 0,
        globals: Vec::new(),
        current: None,
        out: JobFile::default(),
    };
    for (i, (text, name)) in texts.iter().enumerate() {
        st.group = i;
        st.globals.clear();
        st.current = None;
        let dir = Path::new(name)
            .parent()
            .filter(|p| !p.as_os_str().is_empty());
        st.file(text, name, dir, 0)?;
        st.finish_section();
    }
    let mut out = st.out;
    collect_warnings(&mut out);
    Ok(out)
}

/// Reads a job file, `-` meaning standard input.
pub fn read_job_file(path: &str) -> Result<String, JobError> {
    if path == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map_err(|e| {
            JobError::new(ErrorKind::Io, format!("cannot read standard input: {e}"))
        })?;
        return Ok(s);
    }
    std::fs::read_to_string(path)
        .map_err(|e| JobError::new(ErrorKind::Io, format!("cannot read job file '{path}': {e}")))
}

#[cfg(test)]
mod tests {}
