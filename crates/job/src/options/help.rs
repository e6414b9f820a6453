//! Help printed from the definitions: `--cmdhelp`, `--enghelp` and the documentation's list.

use std::fmt::Write as _;

use super::engine::iolab_engines;
use super::{all, find, unknown_message, Category, Kind, OptDef};
use crate::value;

/// `--cmdhelp` (all options) or `--cmdhelp=name`, formatted like fio's.
pub fn cmdhelp(name: Option<&str>) -> Result<String, String> {
    let mut out = String::new();
    match name {
        None | Some("all") => {
            for o in all() {
                let mark = if o.implemented() {
                    ""
                } else {
                    " (not in iolab)"
                };
                let _ = writeln!(out, "{:<24}: {}{}", o.name, o.help, mark);
            }
        }
        Some(n) => {
            let o = find(n).ok_or_else(|| unknown_message(n))?;
            let _ = writeln!(out, "{:>20}: {}", o.name, o.help);
            for a in o.aliases {
                let _ = writeln!(out, "{:>20}: {}", "alias", a);
            }
            let _ = writeln!(out, "{:>20}: {}", "type", o.kind.describe());
            let _ = writeln!(
                out,
                "{:>20}: {}",
                "default",
                o.default.unwrap_or("no default")
            );
            let _ = writeln!(out, "{:>20}: {}", "category", category_line(o));
            if o.help == super::LATER {
                let _ = writeln!(out, "{:>20}: {}", "iolab", super::LATER);
            } else if !o.implemented() {
                let _ = writeln!(out, "{:>20}: not implemented by iolab", "iolab");
            }
            for (i, v) in values(o).into_iter().enumerate() {
                let label = if i == 0 { "valid values" } else { "" };
                let _ = writeln!(out, "{label:>20}: {v}");
            }
        }
    }
    Ok(out)
}

/// `engine` or `engine:io_uring,pvsync2`.
fn category_line(o: &OptDef) -> String {
    match o.engines {
        [] => o.category.name().to_string(),
        e => format!("{}:{}", o.category.name(), e.join(",")),
    }
}

/// The words an option takes, where it takes a fixed list.
fn values(o: &OptDef) -> Vec<&'static str> {
    match o.kind {
        Kind::Choice(list) => list.to_vec(),
        Kind::Rw => value::RW_NAMES.to_vec(),
        Kind::Engine => iolab_engines().collect(),
        _ => Vec::new(),
    }
}

/// The options engine `engine` takes beyond the common ones.
fn engine_options(engine: &str) -> impl Iterator<Item = &'static OptDef> + '_ {
    all().filter(move |o| o.implemented() && o.engines.contains(&engine))
}

/// fio's `--enghelp`: the engines, or one engine's options (`--enghelp=io_uring[,option]`).
pub fn enghelp(which: Option<&str>) -> Result<String, String> {
    let Some(which) = which.filter(|w| !w.is_empty()) else {
        let mut s = String::from("Available IO engines:\n");
        for name in iolab_engines() {
            let _ = writeln!(s, "\t{name}");
        }
        return Ok(s);
    };
    let (engine, only) = match which.split_once(',') {
        Some((e, o)) => (e, Some(o)),
        None => (which, None),
    };
    if !iolab_engines().any(|e| e == engine) {
        return Err(format!(
            "--enghelp: no engine '{}' (iolab has: {})",
            super::shown(engine),
            iolab_engines().collect::<Vec<_>>().join(", ")
        ));
    }
    let mut s = String::new();
    for o in engine_options(engine).filter(|o| only.is_none_or(|n| o.matches(n))) {
        let _ = writeln!(s, "{:<24}: {}", o.name, o.help);
    }
    if s.is_empty() {
        s = match only {
            Some(o) => {
                return Err(format!(
                    "--enghelp: engine {engine} has no option '{}'",
                    super::shown(o)
                ))
            }
            None => format!("engine {engine} has no engine-specific options\n"),
        };
    }
    Ok(s)
}

/// `iolab run --help`'s summary of the job options: the implemented ones by category.
pub fn summary() -> String {
    let mut cats: Vec<Category> = Vec::new();
    for o in all() {
        if o.implemented() && !cats.contains(&o.category) {
            cats.push(o.category);
        }
    }
    let mut s = String::new();
    for c in cats {
        let names: Vec<&str> = all()
            .filter(|o| o.category == c && o.implemented())
            .map(|o| o.name)
            .collect();
        let mut line = format!("  {:<8}", c.name());
        for n in names {
            if line.len() + n.len() + 1 > 98 {
                let _ = writeln!(s, "{line}");
                line = " ".repeat(10);
            }
            line.push(' ');
            line.push_str(n);
        }
        let _ = writeln!(s, "{line}");
    }
    s
}

/// The documentation's option list (Markdown): one table per category, implemented options
/// first, then the names iolab refuses.
pub fn markdown() -> String {
    let mut cats: Vec<Category> = Vec::new();
    for o in all() {
        if !cats.contains(&o.category) {
            cats.push(o.category);
        }
    }
    let mut s = String::from(
        "# Job options\n\nGenerated from the option definitions (`crates/job/src/options/`): \
         `IOLAB_BLESS=1 cargo test -p iolab-job --test options_md` rewrites it; do not edit by hand.\n",
    );
    for c in cats {
        let _ = write!(s, "\n## {}\n\n", c.name());
        let mut refused = Vec::new();
        let mut rows = String::new();
        for o in all().filter(|o| o.category == c) {
            if !o.implemented() {
                refused.push(format!("`{}`", o.name));
                continue;
            }
            let aliases: Vec<String> = o.aliases.iter().map(|a| format!("`{a}`")).collect();
            let engines = match o.engines {
                [] => String::new(),
                e => format!(" (engines: {})", e.join(", ")),
            };
            let _ = writeln!(
                rows,
                "| `{}` | {} | {} | {}{} |",
                o.name,
                aliases.join(", "),
                o.default.map(|d| format!("`{d}`")).unwrap_or_default(),
                o.help.replace('|', "\\|"),
                engines
            );
        }
        if !rows.is_empty() {
            s.push_str("| option | aliases | default | what it does |\n|---|---|---|---|\n");
            s.push_str(&rows);
        }
        if !refused.is_empty() {
            if !rows.is_empty() {
                s.push('\n');
            }
            let _ = writeln!(
                s,
                "fio options iolab refuses by name: {}.",
                refused.join(", ")
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdhelp_formats() {
        let all = cmdhelp(None).unwrap_or_default();
        assert!(all.contains("bs                      : Block size"));
        let bs = cmdhelp(Some("bs")).unwrap_or_default();
        assert!(bs.contains("               alias: blocksize"));
        assert!(bs.contains("             default: 4096"));
        let rw = cmdhelp(Some("readwrite")).unwrap_or_default();
        assert!(rw.contains("        valid values: read"));
        assert!(cmdhelp(Some("blocksze")).is_err());
        let hipri = cmdhelp(Some("hipri")).unwrap_or_default();
        assert!(
            hipri.contains("category: engine:io_uring,pvsync2"),
            "{hipri}"
        );
    }

    #[test]
    fn enghelp_comes_from_the_definitions() {
        let list = enghelp(None).unwrap_or_default();
        for e in iolab_engines() {
            assert!(list.contains(&format!("\t{e}\n")), "{e}");
        }
        // Every implemented engine option is listed under each engine it names, and nowhere else.
        for o in all().filter(|o| o.implemented() && !o.engines.is_empty()) {
            for e in iolab_engines() {
                let listed = enghelp(Some(e))
                    .unwrap_or_default()
                    .lines()
                    .any(|l| l.starts_with(&format!("{:<24}:", o.name)));
                assert_eq!(listed, o.engines.contains(&e), "{} under {e}", o.name);
            }
        }
        let one = enghelp(Some("io_uring,sqthread_poll")).unwrap_or_default();
        assert_eq!(one.lines().count(), 1, "{one}");
        assert!(enghelp(Some("psync"))
            .unwrap_or_default()
            .contains("no engine-specific options"));
        assert!(enghelp(Some("rbd")).is_err());
        assert!(enghelp(Some("psync,hipri")).is_err());
    }

    #[test]
    fn the_engines_own_option_lists_are_the_rows() {
        // `EngineKind::options()` (what copy reads) is a second list of the same fact; it
        // drifted once (libaio's nonvectored only there, the cmdprio options only here).
        for kind in iolab_engine::EngineKind::ALL {
            let mut rows: Vec<&str> = all()
                .filter(|o| o.implemented() && o.engines.contains(&kind.name()))
                .map(|o| o.name)
                .collect();
            let mut listed = kind.options().to_vec();
            rows.sort_unstable();
            listed.sort_unstable();
            assert_eq!(listed, rows, "{}", kind.name());
        }
    }

    #[test]
    fn the_summary_names_every_implemented_option() {
        let s = summary();
        for o in all() {
            let listed = s.split_whitespace().any(|w| w == o.name);
            assert_eq!(listed, o.implemented(), "{}", o.name);
        }
        assert!(s.lines().all(|l| l.len() <= 100));
    }

    #[test]
    fn the_markdown_list_has_every_option() {
        let md = markdown();
        for o in all() {
            assert!(md.contains(&format!("`{}`", o.name)), "{}", o.name);
        }
    }
}
