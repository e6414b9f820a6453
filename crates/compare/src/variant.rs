//! What compare puts side by side: an engine (`EngineKind`) with engine options, under a name
//! the command line and the table use (`io_uring-sqpoll` → "io_uring sqpoll").

use iolab_engine::{Caps, EngineKind, EngineOpts, FsOp};

/// One engine configuration to compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    /// What the table calls it.
    pub label: String,
    /// The engine and its options; `depth` is set per run.
    pub opts: EngineOpts,
}

/// A variant beyond the plain engine names: its name, its label, its engine, what it
/// switches on.
type Extra = (&'static str, &'static str, EngineKind, fn(&mut EngineOpts));

const fn uring_meta(name: &'static str, label: &'static str, kind: EngineKind) -> Extra {
    (name, label, kind, |o| o.meta_io_uring = true)
}

/// The variants `--engines` takes beyond the plain engine names.
const EXTRA: [Extra; 9] = [
    (
        "io_uring-sqpoll",
        "io_uring sqpoll",
        EngineKind::IoUring,
        |o| o.sqpoll = true,
    ),
    (
        "io_uring-fixed",
        "io_uring fixedbufs+regfiles",
        EngineKind::IoUring,
        |o| {
            o.fixedbufs = true;
            o.registerfiles = true;
        },
    ),
    (
        "io_uring-hipri",
        "io_uring hipri",
        EngineKind::IoUring,
        |o| o.hipri = true,
    ),
    uring_meta(
        "filecreate-uring",
        "filecreate io_uring",
        EngineKind::FileCreate,
    ),
    uring_meta("filestat-uring", "filestat io_uring", EngineKind::FileStat),
    uring_meta(
        "filedelete-uring",
        "filedelete io_uring",
        EngineKind::FileDelete,
    ),
    uring_meta(
        "dircreate-uring",
        "dircreate io_uring",
        EngineKind::DirCreate,
    ),
    uring_meta("dirstat-uring", "dirstat io_uring", EngineKind::DirStat),
    uring_meta(
        "dirdelete-uring",
        "dirdelete io_uring",
        EngineKind::DirDelete,
    ),
];

/// The default `--engines`: the engines people choose between.
pub const DEFAULT_ENGINES: [&str; 6] = [
    "psync",
    "libaio",
    "io_uring",
    "io_uring-sqpoll",
    "io_uring-fixed",
    "posixaio",
];

impl Variant {
    /// The variant called `name` on the command line (`io_uring_sqpoll` is also accepted).
    pub fn parse(name: &str) -> Option<Variant> {
        if let Some(kind) = EngineKind::from_name(name) {
            return Some(Variant {
                label: kind.name().to_string(),
                opts: EngineOpts::new(kind, 1),
            });
        }
        let dashed = name.replace('_', "-").replacen("io-uring", "io_uring", 1);
        let (_, label, kind, set) = EXTRA.iter().find(|(n, ..)| *n == dashed)?;
        let mut opts = EngineOpts::new(*kind, 1);
        set(&mut opts);
        Some(Variant {
            label: label.to_string(),
            opts,
        })
    }

    /// Every name `parse` takes, for "did you mean" and the usage text.
    pub fn names() -> impl Iterator<Item = &'static str> {
        EngineKind::ALL
            .into_iter()
            .map(EngineKind::name)
            .chain(EXTRA.iter().map(|(n, ..)| *n))
    }

    /// What the engine, opened at `depth`, can do (opening is how an engine tells: its
    /// capabilities depend on its options and on the kernel). `None` when it cannot be
    /// opened here; the run then says why.
    pub fn caps(&self, depth: u32) -> Option<Caps> {
        let mut o = self.opts.clone();
        o.depth = depth.max(1);
        iolab_engine::open(&o).ok().map(|e| e.caps().clone())
    }
}

/// `--engines=LIST`: the variants, or the name that is not one (with the closest that is).
pub fn parse_list(list: &str) -> Result<Vec<Variant>, String> {
    let names: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        return Err("--engines: no engine named".into());
    }
    let vs = names
        .into_iter()
        .map(|n| {
            Variant::parse(n).ok_or_else(|| match iolab_job::closest(n, Variant::names()) {
                Some(s) => format!("--engines: unknown engine '{n}'; did you mean '{s}'?"),
                None => format!("--engines: unknown engine '{n}'"),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    comparable(&vs)?;
    Ok(vs)
}

/// A request of a metadata engine (or falloc, ftruncate) is a file-system operation, not a
/// transfer: its figures say nothing beside a data engine's, so the two kinds are compared
/// each among their own.
fn comparable(vs: &[Variant]) -> Result<(), String> {
    let op = |v: &Variant| FsOp::of(v.opts.kind);
    let meta = vs.iter().find(|v| op(v).is_some());
    let data = vs.iter().find(|v| op(v).is_none());
    if let (Some(m), Some(d)) = (meta, data) {
        return Err(format!(
            "--engines: '{}' does a file-system operation per request and '{}' moves data; \
             compare the metadata engines (filecreate, filestat, ..., and their -uring \
             variants) with each other",
            m.label, d.label
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_engines_with_options() {
        let v = Variant::parse("io_uring-sqpoll").expect("known");
        assert_eq!(v.opts.kind, EngineKind::IoUring);
        assert!(v.opts.sqpoll && !v.opts.fixedbufs);
        assert_eq!(
            Variant::parse("io_uring_fixed").map(|v| v.label),
            Some("io_uring fixedbufs+regfiles".into())
        );
        assert_eq!(
            Variant::parse("libaio").map(|v| v.opts.kind),
            Some(EngineKind::Libaio)
        );
        for n in DEFAULT_ENGINES {
            assert!(Variant::parse(n).is_some(), "{n}");
        }
    }

    #[test]
    fn metadata_engines_compare_with_each_other_and_not_with_data_engines() {
        let v = parse_list("filecreate,filecreate-uring,filestat_uring").expect("comparable");
        assert_eq!(v[1].opts.kind, EngineKind::FileCreate);
        assert!(v[1].opts.meta_io_uring && !v[0].opts.meta_io_uring);
        assert_eq!(v[2].label, "filestat io_uring");
        let e = parse_list("psync,filecreate").unwrap_err();
        assert!(
            e.contains("'filecreate' does a file-system operation"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_engine_is_named_once_with_a_suggestion() {
        let e = parse_list("psync,libaoi").unwrap_err();
        assert_eq!(
            e,
            "--engines: unknown engine 'libaoi'; did you mean 'libaio'?"
        );
        assert!(parse_list(" , ").is_err());
    }

    #[test]
    fn a_synchronous_engine_says_so_in_its_caps() {
        let caps = Variant::parse("psync")
            .and_then(|v| v.caps(8))
            .expect("psync opens");
        assert!(caps.sync_only);
        let null = Variant::parse("null")
            .and_then(|v| v.caps(8))
            .expect("null opens");
        assert!(!null.sync_only);
    }
}
