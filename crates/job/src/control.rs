//! Values of the options that act while a job runs: the error policy (`continue_on_error`,
//! `ignore_error`), steady state (`steadystate`), and `exit_what`. Parsed here so that the
//! runner gets them typed; what they do is `runner`'s business.

/// fio's error types, the bits of `continue_on_error` (fio's `ERROR_TYPE_*_BIT`).
pub const ERR_READ: u8 = 1;
/// A write (or trim, or sync) failed.
pub const ERR_WRITE: u8 = 2;
/// Verification failed (EILSEQ).
pub const ERR_VERIFY: u8 = 4;

/// `continue_on_error=`'s word as fio's bit mask: which error types may be non-fatal.
pub fn continue_classes(word: &str) -> u8 {
    match word {
        "read" => ERR_READ,
        "write" => ERR_WRITE,
        "io" => ERR_READ | ERR_WRITE,
        "verify" => ERR_VERIFY,
        "all" | "1" => ERR_READ | ERR_WRITE | ERR_VERIFY,
        _ => 0,
    }
}

/// Whether errors may be non-fatal in the job (`continue_on_error`, or an `ignore_error`
/// list): fio then reports `total_err` and `first_error`.
pub fn errors_may_pass(s: &crate::JobSpec) -> bool {
    continue_classes(s.continue_on_error) != 0 || s.ignore_error.iter().any(Option::is_some)
}

/// errno names `ignore_error` takes, with Linux's numbers (fio 3.33 knows EPERM to ERANGE by
/// name; the rest are taken too rather than asking for the number).
static ERRNOS: &[(&str, i32)] = &[
    ("EPERM", libc::EPERM),
    ("ENOENT", libc::ENOENT),
    ("ESRCH", libc::ESRCH),
    ("EINTR", libc::EINTR),
    ("EIO", libc::EIO),
    ("ENXIO", libc::ENXIO),
    ("E2BIG", libc::E2BIG),
    ("ENOEXEC", libc::ENOEXEC),
    ("EBADF", libc::EBADF),
    ("ECHILD", libc::ECHILD),
    ("EAGAIN", libc::EAGAIN),
    ("EWOULDBLOCK", libc::EWOULDBLOCK),
    ("ENOMEM", libc::ENOMEM),
    ("EACCES", libc::EACCES),
    ("EFAULT", libc::EFAULT),
    ("ENOTBLK", libc::ENOTBLK),
    ("EBUSY", libc::EBUSY),
    ("EEXIST", libc::EEXIST),
    ("EXDEV", libc::EXDEV),
    ("ENODEV", libc::ENODEV),
    ("ENOTDIR", libc::ENOTDIR),
    ("EISDIR", libc::EISDIR),
    ("EINVAL", libc::EINVAL),
    ("ENFILE", libc::ENFILE),
    ("EMFILE", libc::EMFILE),
    ("ENOTTY", libc::ENOTTY),
    ("ETXTBSY", libc::ETXTBSY),
    ("EFBIG", libc::EFBIG),
    ("ENOSPC", libc::ENOSPC),
    ("ESPIPE", libc::ESPIPE),
    ("EROFS", libc::EROFS),
    ("EMLINK", libc::EMLINK),
    ("EPIPE", libc::EPIPE),
    ("EDOM", libc::EDOM),
    ("ERANGE", libc::ERANGE),
    ("EDEADLK", libc::EDEADLK),
    ("ENAMETOOLONG", libc::ENAMETOOLONG),
    ("ENOLCK", libc::ENOLCK),
    ("ENOSYS", libc::ENOSYS),
    ("ENODATA", libc::ENODATA),
    ("ETIME", libc::ETIME),
    ("EOVERFLOW", libc::EOVERFLOW),
    ("EILSEQ", libc::EILSEQ),
    ("EOPNOTSUPP", libc::EOPNOTSUPP),
    ("ENOTSUP", libc::ENOTSUP),
    ("ETIMEDOUT", libc::ETIMEDOUT),
    ("ESTALE", libc::ESTALE),
    ("EREMOTEIO", libc::EREMOTEIO),
    ("EDQUOT", libc::EDQUOT),
    ("ENOMEDIUM", libc::ENOMEDIUM),
    ("EMEDIUMTYPE", libc::EMEDIUMTYPE),
    ("ECANCELED", libc::ECANCELED),
    ("EBADMSG", libc::EBADMSG),
    ("ENOLINK", libc::ENOLINK),
    ("EHWPOISON", libc::EHWPOISON),
];

/// One errno of an `ignore_error` list: a name (`ENOSPC`) or a number (`28`, `-28`, `0x1c`).
fn errno(s: &str) -> Result<i32, String> {
    let bad = || format!("unknown error '{s}' (use an errno name such as ENOSPC, or its number)");
    if s.starts_with('E') {
        return ERRNOS
            .iter()
            .find(|(n, _)| *n == s)
            .map(|&(_, v)| v)
            .ok_or_else(bad);
    }
    let t = s.trim_start_matches('-');
    let n = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => i32::from_str_radix(h, 16),
        None => t.parse(),
    };
    n.ok().filter(|&n| n > 0).ok_or_else(bad)
}

/// `ignore_error=READ,WRITE,VERIFY`, each a `:`-separated errno list; an empty field leaves
/// that type as it was (fio's default list, EIO and EILSEQ).
pub fn parse_ignore_error(v: &str) -> Result<[Option<Vec<i32>>; 3], String> {
    let fields: Vec<&str> = v.split(',').collect();
    if fields.len() > 3 {
        return Err(format!(
            "too many lists in '{v}' (read,write,verify, each ':'-separated)"
        ));
    }
    let mut out = [None, None, None];
    for (slot, f) in out.iter_mut().zip(&fields) {
        // fio stops a list at its first empty entry.
        let list = f
            .split(':')
            .map(str::trim)
            .take_while(|e| !e.is_empty())
            .map(errno)
            .collect::<Result<Vec<_>, _>>()?;
        if !list.is_empty() {
            *slot = Some(list);
        }
    }
    Ok(out)
}

/// What steady state is judged on (fio's `steadystate=` criterion).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SteadyKind {
    /// Every IOPS sample within the limit of the mean.
    Iops,
    /// The least-squares slope of IOPS below the limit.
    #[default]
    IopsSlope,
    /// Every bandwidth sample within the limit of the mean.
    Bw,
    /// The least-squares slope of bandwidth below the limit.
    BwSlope,
}

impl SteadyKind {
    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            SteadyKind::Iops => "iops",
            SteadyKind::IopsSlope => "iops_slope",
            SteadyKind::Bw => "bw",
            SteadyKind::BwSlope => "bw_slope",
        }
    }

    /// Judged on IOPS (else bandwidth).
    pub fn iops(self) -> bool {
        matches!(self, SteadyKind::Iops | SteadyKind::IopsSlope)
    }

    /// Judged on the slope (else the largest deviation from the mean).
    pub fn slope(self) -> bool {
        matches!(self, SteadyKind::IopsSlope | SteadyKind::BwSlope)
    }
}

/// `steadystate=kind:limit[%]`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Steady {
    pub kind: SteadyKind,
    pub limit: f64,
    /// The limit is a percentage of the mean.
    pub pct: bool,
}

impl Steady {
    /// As fio prints it in JSON's `"ss"`: `iops_slope:0.010000%`.
    pub fn describe(&self) -> String {
        let pct = if self.pct { "%" } else { "" };
        format!("{}:{:.6}{pct}", self.kind.name(), self.limit)
    }

    /// fio's `--debug=parse` line for it: a percentage and an IOPS limit as `%f`, a
    /// bandwidth in whole bytes (fio reads it as a size).
    pub fn parse_line(&self) -> String {
        if self.pct {
            format!("set steady state threshold to {:.6}%", self.limit)
        } else if self.kind.iops() {
            format!("set steady state IOPS threshold to {:.6}", self.limit)
        } else {
            format!("set steady state BW threshold to {}", self.limit as i64)
        }
    }
}

/// Parses `steadystate=` (`iops:10%`, `bw_slope:2m`; a bare limit is a number, with size
/// suffixes for bandwidth as fio reads it).
pub fn parse_steadystate(v: &str, kb: u64) -> Result<Steady, String> {
    let (k, limit) = v
        .split_once(':')
        .ok_or_else(|| format!("'{v}' needs a criterion and a limit (iops_slope:0.1%)"))?;
    let kind = match k.trim() {
        "iops" => SteadyKind::Iops,
        "iops_slope" => SteadyKind::IopsSlope,
        "bw" => SteadyKind::Bw,
        "bw_slope" => SteadyKind::BwSlope,
        o => {
            return Err(format!(
                "unknown criterion '{o}' (iops, iops_slope, bw, bw_slope)"
            ))
        }
    };
    let limit = limit.trim();
    // As fio 3.33 reads it: a `%` anywhere ends the number (`5%%` is 5%); a percentage and
    // an IOPS limit are floats, a bandwidth a size in whole bytes (`1.5` is 1, `1k` 1024).
    // A negative limit is taken, as fio takes it: no criterion is ever below it.
    let (limit, pct) = match limit.split_once('%') {
        Some((p, _)) => (crate::value::parse_float(p)?, true),
        None if kind.iops() => (crate::value::parse_float(limit)?, false),
        None => (bytes_limit(limit, kb)?, false),
    };
    if !limit.is_finite() {
        return Err(format!("limit '{v}' must be a finite number"));
    }
    Ok(Steady { kind, limit, pct })
}

/// A bandwidth limit in bytes, signed as fio's str_to_decimal reads it.
fn bytes_limit(v: &str, kb: u64) -> Result<f64, String> {
    let (neg, abs) = match v.strip_prefix('-') {
        Some(a) => (true, a),
        None => (false, v),
    };
    let n = crate::value::parse_size(abs, kb)
        .map(|b| b as f64)
        .or_else(|_| crate::value::parse_float(abs).map(f64::trunc))?;
    Ok(if neg { -n } else { n })
}

/// Most samples a steady-state window holds (two rings of u64 each): 16 MiB, about 12
/// days at fio's 1 s interval. fio allocates duration/interval samples unchecked.
pub const STEADY_MAX_SAMPLES: u128 = 1 << 20;

/// Refuses a steadystate_duration that would need more than [`STEADY_MAX_SAMPLES`] samples of
/// steadystate_check_interval (a window of 10 years at 1 ms is 2.5 TB of memory).
pub fn check_steady_window(s: &crate::JobSpec) -> Result<(), String> {
    let interval = s.steadystate_check_interval.as_nanos().max(1);
    let n = s.steadystate_duration.as_nanos() / interval;
    if n > STEADY_MAX_SAMPLES {
        return Err(format!(
            "{n} samples of steadystate_check_interval ({:?}): at most {STEADY_MAX_SAMPLES} \
             (a longer steadystate_check_interval keeps the window's memory bounded)",
            s.steadystate_check_interval
        ));
    }
    Ok(())
}

/// `exit_what=`: which jobs an `exitall` stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExitWhat {
    /// The jobs of the same reporting group (fio's default).
    #[default]
    Group,
    /// Every job running now; later stonewalled jobs still run.
    Stonewall,
    /// Every job, also those not started yet.
    All,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_error_reads_names_numbers_and_directions() {
        let [r, w, v] = parse_ignore_error("EAGAIN,ENOSPC:122").unwrap();
        assert_eq!(r, Some(vec![libc::EAGAIN]));
        assert_eq!(w, Some(vec![libc::ENOSPC, 122]));
        assert_eq!(v, None);
        let [r, w, _] = parse_ignore_error(",0x1c:-5").unwrap();
        assert_eq!((r, w), (None, Some(vec![28, 5])));
        assert!(parse_ignore_error("ENOTANERROR").is_err());
        assert!(parse_ignore_error("0").is_err());
        assert!(parse_ignore_error("a,b,c,d").is_err());
    }

    #[test]
    fn steadystate_reads_criterion_and_limit() {
        let s = parse_steadystate("iops:10%", 1024).unwrap();
        assert_eq!((s.kind, s.limit, s.pct), (SteadyKind::Iops, 10.0, true));
        assert_eq!(s.describe(), "iops:10.000000%");
        let s = parse_steadystate("bw_slope:1m", 1024).unwrap();
        assert_eq!((s.limit, s.pct), ((1 << 20) as f64, false));
        assert!(parse_steadystate("lat:1", 1024).is_err());
        assert!(parse_steadystate("iops", 1024).is_err());
        // fio 3.33 takes these: a negative limit (never met), text after the first `%`,
        // and a bandwidth in whole bytes.
        assert_eq!(parse_steadystate("iops:-1", 1024).unwrap().limit, -1.0);
        assert_eq!(parse_steadystate("bw:-1k", 1024).unwrap().limit, -1024.0);
        let s = parse_steadystate("iops:5%%", 1024).unwrap();
        assert_eq!((s.limit, s.pct), (5.0, true));
        assert_eq!(parse_steadystate("bw:1.5", 1024).unwrap().limit, 1.0);
        assert!(parse_steadystate("iops:abc", 1024).is_err());
        assert!(parse_steadystate("bw:x%", 1024).is_err());
    }

    #[test]
    fn continue_on_error_words_are_fios_bits() {
        assert_eq!(continue_classes("none"), 0);
        assert_eq!(continue_classes("io"), ERR_READ | ERR_WRITE);
        assert_eq!(continue_classes("all"), 7);
    }
}
