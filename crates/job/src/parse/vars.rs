//! fio's variables in job text: `${NAME}` from the environment and the `$pagesize`,
//! `$mb_memory`, `$ncpus` keywords, with fio's bc arithmetic on values that use them.

use crate::error::{ErrorKind, JobError};
use crate::read::Budget;

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
        self.expand_max(s, usize::MAX).unwrap_or_default()
    }

    /// [`Vars::expand`], charging what the text grows by to the budget: `${HOME}` repeated
    /// over a 16 MiB file must not become gigabytes.
    pub(crate) fn expand_within(&self, s: &str, budget: &mut Budget) -> Result<String, JobError> {
        let max = s
            .len()
            .saturating_add(usize::try_from(budget.text).unwrap_or(usize::MAX));
        let out = self
            .expand_max(s, max)
            .ok_or_else(|| {
                let mib = crate::read::MAX_TEXT_BYTES >> 20;
                let m = format!("variables expand past {mib} MiB of job text in all");
                JobError::new(ErrorKind::Io, m)
            })
            .and_then(|out| {
                budget
                    .take_text(out.len().saturating_sub(s.len()), "variables expand")
                    .map(|()| out)
            })?;
        Ok(out)
    }

    /// Expands, or None when the result would be longer than `max` bytes.
    fn expand_max(&self, s: &str, max: usize) -> Option<String> {
        let mut out = String::with_capacity(s.len().min(max));
        let mut rest = s;
        let mut calc = false;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let tail = &rest[i..];
            if let Some(close) = tail.strip_prefix("${").and_then(|t| t.find('}')) {
                out.push_str(&(self.env)(&tail[2..2 + close]).unwrap_or_default());
                rest = &tail[close + 3..];
            } else {
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
                        calc = true;
                    }
                    None => {
                        out.push('$');
                        rest = &tail[1..];
                    }
                }
            }
            if out.len() > max {
                return None;
            }
        }
        out.push_str(rest);
        if calc {
            out = calculated(out);
        }
        (out.len() <= max).then_some(out)
    }
}

/// fio 3.33 hands a value in which it replaced `$pagesize`, `$mb_memory` or `$ncpus` and that
/// holds `+ - * /` to bc (`size=4*1024*$mb_memory` is that many bytes, where `size=4*1024`
/// is 4). iolab evaluates such a value as its own `(...)` arithmetic, for values made only of
/// numbers and operators; others are left as they are (bc would fail on them).
fn calculated(s: String) -> String {
    let (head, value) = match s.split_once('=') {
        Some((k, v)) => (format!("{k}="), v),
        None => (String::new(), s.as_str()),
    };
    let math = value.contains(['+', '-', '*', '/']);
    let plain = value
        .trim()
        .chars()
        .all(|c| c.is_ascii_digit() || "+-*/%^. ".contains(c));
    if math && plain && !value.trim().is_empty() {
        format!("{head}({})", value.trim())
    } else {
        s
    }
}
