//! What compare accepts on its command line beyond its own options: depths, and which of fio's
//! options may shape the workload (compare sets the engine, the job count and the job itself).

use iolab_job::options::{all, find, OptDef};

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
