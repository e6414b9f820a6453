//! `random_distribution=`: uniform, zipf, pareto, normal and fio's zones.

use super::{parse_per_dir, parse_size, PerDir, SizeOrPct};

/// One zone of `random_distribution=zoned:` or `zoned_abs:`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Zone {
    /// Share of the accesses, percent.
    pub access_pct: f64,
    /// Size of the zone: percent of the file (`zoned`) or bytes (`zoned_abs`).
    pub size: SizeOrPct,
}

/// `random_distribution=`.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Distribution {
    /// Uniform (default).
    #[default]
    Random,
    /// Zipf with exponent θ.
    Zipf(f64),
    /// Pareto with power h.
    Pareto(f64),
    /// Normal (gauss) with standard deviation σ in percent.
    Normal(f64),
    /// Zones relative to the file size, per direction.
    Zoned(PerDir<Vec<Zone>>),
    /// Zones with absolute sizes, per direction.
    ZonedAbs(PerDir<Vec<Zone>>),
    /// A distribution newer fio versions have and iolab does not (`sequence`); refused when
    /// the job is resolved.
    NotInIolab(String),
}

fn parse_zones(s: &str, abs: bool, kb_base: u64) -> Result<PerDir<Vec<Zone>>, String> {
    let one = |f: &str| -> Result<Vec<Zone>, String> {
        let mut zones = Vec::new();
        let mut total = 0.0;
        let (mut size_sum, mut blanks) = (0.0, 0usize);
        for z in f.split(':').filter(|z| !z.trim().is_empty()) {
            let (a, b) = z
                .split_once('/')
                .ok_or_else(|| format!("invalid zone '{z}' (pct/size)"))?;
            let access_pct: f64 = a
                .trim()
                .parse()
                .map_err(|_| format!("invalid zone '{z}'"))?;
            let b = b.trim();
            let size = if abs {
                SizeOrPct::Bytes(parse_size(b, kb_base)?)
            } else if b.is_empty() {
                // A blank size takes (a share of) what the others leave of 100%, like bssplit.
                blanks += 1;
                SizeOrPct::Percent(f64::NAN)
            } else {
                let p: f64 = b
                    .trim_end_matches('%')
                    .parse()
                    .map_err(|_| format!("invalid zone '{z}'"))?;
                size_sum += p;
                SizeOrPct::Percent(p)
            };
            total += access_pct;
            zones.push(Zone { access_pct, size });
        }
        if zones.is_empty() {
            return Err(format!("no zones in '{f}'"));
        }
        if total > 100.0 + 1e-9 {
            return Err(format!(
                "zone access percentages add to more than 100 in '{f}'"
            ));
        }
        if size_sum > 100.0 + 1e-9 {
            return Err(format!("zone sizes add to more than 100% in '{f}'"));
        }
        for z in &mut zones {
            if matches!(z.size, SizeOrPct::Percent(p) if p.is_nan()) {
                z.size = SizeOrPct::Percent((100.0 - size_sum) / blanks as f64);
            }
        }
        Ok(zones)
    };
    let fields = parse_per_dir(s, false, one)?;
    let mut out: PerDir<Vec<Zone>> = PerDir::default();
    out.update(fields);
    Ok(out)
}

/// `random` | `zipf:θ` | `pareto:h` | `normal:σ` (`gauss`) | `zoned:P/S:...` | `zoned_abs:P/S:...`.
pub fn parse_distribution(s: &str, kb_base: u64) -> Result<Distribution, String> {
    let s = s.trim();
    let (kind, arg) = match s.split_once(':') {
        Some((k, a)) => (k, Some(a)),
        None => (s, None),
    };
    let num = |name: &str| -> Result<f64, String> {
        let a = arg.ok_or_else(|| format!("{name} needs a parameter ({name}:value)"))?;
        let first = a.split([':', ',']).next().unwrap_or(a);
        first
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("invalid {name} parameter '{a}'"))
    };
    Ok(match kind {
        "random" => Distribution::Random,
        "zipf" => Distribution::Zipf(num("zipf")?),
        "pareto" => Distribution::Pareto(num("pareto")?),
        "normal" | "gauss" => Distribution::Normal(num("normal")?),
        "zoned" => Distribution::Zoned(parse_zones(arg.unwrap_or(""), false, kb_base)?),
        "zoned_abs" => Distribution::ZonedAbs(parse_zones(arg.unwrap_or(""), true, kb_base)?),
        "sequence" => Distribution::NotInIolab(s.to_string()),
        _ => {
            return Err(format!(
                "invalid distribution '{kind}' (random, zipf, pareto, normal, zoned, zoned_abs)"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions() {
        assert_eq!(parse_distribution("random", 1024), Ok(Distribution::Random));
        assert_eq!(
            parse_distribution("zipf:1.2", 1024),
            Ok(Distribution::Zipf(1.2))
        );
        assert_eq!(
            parse_distribution("pareto:0.9", 1024),
            Ok(Distribution::Pareto(0.9))
        );
        assert_eq!(
            parse_distribution("normal:5", 1024),
            Ok(Distribution::Normal(5.0))
        );
        assert!(parse_distribution("zipf", 1024).is_err());
        match parse_distribution("zoned:60/10:30/20:8/30:2/40", 1024) {
            Ok(Distribution::Zoned(z)) => {
                assert_eq!(z.read.len(), 4);
                assert_eq!(z.trim.len(), 4);
            }
            other => panic!("{other:?}"),
        }
        match parse_distribution("zoned_abs:60/20g:30/100g:10/500g", 1024) {
            Ok(Distribution::ZonedAbs(z)) => {
                assert_eq!(z.read[0].size, SizeOrPct::Bytes(20 << 30));
            }
            other => panic!("{other:?}"),
        }
        assert!(parse_distribution("zoned:60/10:50/20", 1024).is_err());
        // rand-zones.fio: a blank zone size takes the rest.
        match parse_distribution("zoned:50/5:30/15:20/", 1024) {
            Ok(Distribution::Zoned(z)) => assert_eq!(z.read[2].size, SizeOrPct::Percent(80.0)),
            other => panic!("{other:?}"),
        }
        assert!(parse_distribution("bogus:1", 1024).is_err());
    }
}
