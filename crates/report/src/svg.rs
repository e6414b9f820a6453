//! Plot primitives for the HTML report, written as SVG text by hand: axes with ticks and
//! labels (linear, log latency, percentile "nines"), line charts with a legend, horizontal bar
//! charts. No scripts, no fonts, no URLs, so the page works offline; inline SVG in HTML5
//! needs no `xmlns`. Every coordinate goes through [`num`], so NaN or infinity never reaches
//! the output.

use std::fmt::Write as _;

/// Width of every chart in CSS pixels: readable as is in a 900 px column.
pub const WIDTH: f64 = 900.0;

/// A fixed palette (Okabe–Ito without its yellow, plus brown), distinct for the common forms
/// of colour blindness; a row keeps its colour in every plot. Past eight rows lines are dashed.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C564B",
];

/// The colour of series `i`.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

fn dash(i: usize) -> &'static str {
    match (i / PALETTE.len()) % 3 {
        0 => "",
        1 => " stroke-dasharray=\"8 4\"",
        _ => " stroke-dasharray=\"2 3\"",
    }
}

/// Escapes text for HTML and SVG content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A coordinate with one decimal; anything not finite becomes 0.
pub fn num(v: f64) -> String {
    if v.is_finite() {
        let s = format!("{v:.1}");
        s.strip_suffix(".0").map(str::to_owned).unwrap_or(s)
    } else {
        "0".to_owned()
    }
}

/// Up to three significant figures, trailing zeros dropped: `1.5`, `12.3`, `250`.
pub fn sig3(x: f64) -> String {
    if !x.is_finite() {
        return "0".to_owned();
    }
    let a = x.abs();
    let s = if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// A latency in ns in a human unit: `850 ns`, `12.3 µs`, `4.5 ms`, `1.2 s`.
pub fn fmt_ns(v: f64) -> String {
    let (d, u) = if v >= 1e9 {
        (1e9, "s")
    } else if v >= 1e6 {
        (1e6, "ms")
    } else if v >= 1e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    };
    format!("{} {u}", sig3(v / d))
}

/// A count or rate with a decimal suffix: `950`, `12.5k`, `1.2M`.
pub fn fmt_si(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{}G", sig3(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", sig3(v / 1e6))
    } else if a >= 1e3 {
        format!("{}k", sig3(v / 1e3))
    } else {
        sig3(v)
    }
}

/// Percentile to the "nines" coordinate, `-log10(1 - p/100)`: 90 → 1, 99 → 2, 99.999 → 5.
/// Clamped to [0, 6] so that 100 % and below-zero inputs stay finite.
pub fn nines(p: f64) -> f64 {
    // NaN too.
    if p.is_nan() || p <= 0.0 {
        return 0.0;
    }
    let q = (1.0 - p / 100.0).clamp(1e-6, 1.0);
    (-q.log10()).clamp(0.0, 6.0)
}

/// How values map onto an axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Linear {
        lo: f64,
        hi: f64,
    },
    /// log10; values at or below zero are clamped to `lo`.
    Log {
        lo: f64,
        hi: f64,
    },
    /// Percent values through [`nines`], from 0 to `hi` nines.
    Nines {
        hi: f64,
    },
}

impl Scale {
    /// Position of `v` along the axis, 0 to 1, clamped.
    pub fn frac(&self, v: f64) -> f64 {
        let f = match *self {
            Scale::Linear { lo, hi } => (v - lo) / (hi - lo),
            Scale::Log { lo, hi } => {
                let v = if v > lo { v } else { lo };
                (v.log10() - lo.log10()) / (hi.log10() - lo.log10())
            }
            Scale::Nines { hi } => nines(v) / hi,
        };
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
}

/// One axis: scale, label (with the unit) and ticks (value, text).
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub scale: Scale,
    pub label: String,
    pub ticks: Vec<(f64, String)>,
}

/// The smallest of 1, 2, 5 × 10^k that is at least `x` (x > 0).
fn nice_up(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&v| v >= x * (1.0 - 1e-9))
        .unwrap_or(10.0 * p)
}

/// The 1-2-5 sequence of values from 1 ns to 100 s.
fn seq125() -> impl Iterator<Item = f64> {
    (0..=11).flat_map(|k| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(k)))
}

impl Axis {
    /// A linear axis from `lo` to `hi` widened to whole ticks, about five of them.
    pub fn linear(lo: f64, hi: f64, label: &str, fmt: fn(f64) -> String) -> Axis {
        let (lo, hi) = if lo.is_finite() && hi.is_finite() && hi > lo {
            (lo, hi)
        } else if lo.is_finite() && lo != 0.0 {
            (lo.min(0.0), lo.abs().max(hi.abs()))
        } else {
            (0.0, 1.0)
        };
        let step = nice_up((hi - lo) / 5.0);
        let a = (lo / step).floor();
        let b = (hi / step).ceil().max(a + 1.0);
        let ticks = (0..=((b - a) as i64))
            .map(|i| {
                let v = (a + i as f64) * step;
                // -0 would print as "-0".
                let v = if v.abs() < step * 1e-9 { 0.0 } else { v };
                (v, fmt(v))
            })
            .collect();
        Axis {
            scale: Scale::Linear {
                lo: a * step,
                hi: b * step,
            },
            label: label.to_owned(),
            ticks,
        }
    }

    /// A log axis for latencies in ns between `min` and `max`, widened to the 1-2-5 values
    /// around them (at least 1 ns). Ticks at 1, 2 and 5 per decade when the range is short,
    /// at whole decades when it is long.
    pub fn log_ns(min: f64, max: f64, label: &str) -> Axis {
        let min = if min.is_finite() && min >= 1.0 {
            min
        } else {
            1.0
        };
        let max = if max.is_finite() && max > min {
            max
        } else {
            min
        };
        let all: Vec<f64> = seq125().collect();
        let eps = 1e-9;
        let lo = all
            .iter()
            .copied()
            .rev()
            .find(|&v| v <= min * (1.0 + eps))
            .unwrap_or(1.0);
        let mut hi = all
            .iter()
            .copied()
            .find(|&v| v >= max * (1.0 - eps))
            .unwrap_or(1e11);
        if hi <= lo {
            hi = all.iter().copied().find(|&v| v > lo).unwrap_or(lo * 10.0);
        }
        let inside: Vec<f64> = all
            .into_iter()
            .filter(|&v| v >= lo * (1.0 - eps) && v <= hi * (1.0 + eps))
            .collect();
        let ticks: Vec<f64> = if inside.len() <= 10 {
            inside
        } else {
            let decades: Vec<f64> = inside.iter().copied().filter(|&v| is_decade(v)).collect();
            if decades.len() >= 2 {
                decades
            } else {
                vec![lo, hi]
            }
        };
        Axis {
            scale: Scale::Log { lo, hi },
            label: label.to_owned(),
            ticks: ticks.into_iter().map(|v| (v, fmt_ns(v))).collect(),
        }
    }

    /// The percentile axis: 0 to 99.999 (or 99.9999 when `max_pct` goes beyond 99.999),
    /// ticks at 50, 90, 99, 99.9, ...
    pub fn nines(max_pct: f64, label: &str) -> Axis {
        let hi = if nines(max_pct) > 5.0 + 1e-9 {
            6.0
        } else {
            5.0
        };
        let mut ticks = vec![(0.0, "0".to_owned()), (50.0, "50".to_owned())];
        let labels = ["90", "99", "99.9", "99.99", "99.999", "99.9999"];
        for (k, l) in labels.iter().enumerate().take(hi as usize) {
            ticks.push((100.0 - 10f64.powi(1 - k as i32), (*l).to_owned()));
        }
        Axis {
            scale: Scale::Nines { hi },
            label: label.to_owned(),
            ticks,
        }
    }
}

fn is_decade(v: f64) -> bool {
    let l = v.log10();
    (l - l.round()).abs() < 1e-9
}

/// One line of a line chart; `color` indexes [`PALETTE`].
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub color: usize,
    pub points: Vec<(f64, f64)>,
    /// Draw a dot at each point (for short series such as percentile lists).
    pub markers: bool,
    /// Drawn dashed whatever its colour (writes beside reads, a service time beside the
    /// latency it is part of); otherwise only a colour past the palette's eight is dashed.
    pub dashed: bool,
    /// How opaque, 0 to 1 (1: solid; lighter lines tell apart one engine's values of a sweep).
    pub opacity: f64,
}

impl Series {
    /// A solid line of colour `color`.
    pub fn new(name: String, color: usize, points: Vec<(f64, f64)>, markers: bool) -> Series {
        Series {
            name,
            color,
            points,
            markers,
            dashed: false,
            opacity: 1.0,
        }
    }

    /// The stroke's dash and opacity attributes.
    fn style(&self) -> String {
        let mut a = match self.dashed {
            true => DASHED.to_string(),
            false => dash(self.color).to_string(),
        };
        if self.opacity < 1.0 && self.opacity.is_finite() {
            a.push_str(&format!(" stroke-opacity=\"{:.2}\"", self.opacity.max(0.1)));
        }
        a
    }
}

/// The dash of a [`Series::dashed`] line.
pub const DASHED: &str = " stroke-dasharray=\"8 4\"";

/// Plot area inside a chart of [`WIDTH`] × `h`.
struct Area {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Area {
    fn x(&self, a: &Axis, v: f64) -> f64 {
        self.x0 + a.scale.frac(v) * (self.x1 - self.x0)
    }
    fn y(&self, a: &Axis, v: f64) -> f64 {
        self.y1 - a.scale.frac(v) * (self.y1 - self.y0)
    }
}

const LEGEND_COL: f64 = 280.0;
const LEGEND_ROW: f64 = 20.0;

fn open(s: &mut String, title: &str, h: f64) {
    let t = esc(title);
    let _ = write!(
        s,
        "<svg class=\"plot\" role=\"img\" aria-label=\"{t}\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\">\
         <title>{t}</title>\
         <rect width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>\
         <text x=\"{cx}\" y=\"22\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">{t}</text>",
        w = num(WIDTH),
        h = num(h),
        cx = num(WIDTH / 2.0),
    );
}

fn axes(s: &mut String, ar: &Area, x: &Axis, y: &Axis) {
    for (v, l) in &x.ticks {
        let px = num(ar.x(x, *v));
        let _ = write!(
            s,
            "<line x1=\"{px}\" y1=\"{y0}\" x2=\"{px}\" y2=\"{y1}\" stroke=\"#e3e3e3\"/>\
             <line x1=\"{px}\" y1=\"{y1}\" x2=\"{px}\" y2=\"{y2}\" stroke=\"#333\"/>\
             <text x=\"{px}\" y=\"{ty}\" text-anchor=\"middle\" font-size=\"12\">{l}</text>",
            y0 = num(ar.y0),
            y1 = num(ar.y1),
            y2 = num(ar.y1 + 5.0),
            ty = num(ar.y1 + 19.0),
            l = esc(l),
        );
    }
    for (v, l) in &y.ticks {
        let py = num(ar.y(y, *v));
        let _ = write!(
            s,
            "<line x1=\"{x0}\" y1=\"{py}\" x2=\"{x1}\" y2=\"{py}\" stroke=\"#e3e3e3\"/>\
             <line x1=\"{xm}\" y1=\"{py}\" x2=\"{x0}\" y2=\"{py}\" stroke=\"#333\"/>\
             <text x=\"{tx}\" y=\"{ty}\" text-anchor=\"end\" font-size=\"12\">{l}</text>",
            x0 = num(ar.x0),
            x1 = num(ar.x1),
            xm = num(ar.x0 - 5.0),
            tx = num(ar.x0 - 8.0),
            ty = num(ar.y(y, *v) + 4.0),
            l = esc(l),
        );
    }
    let _ = write!(
        s,
        "<path d=\"M{x0} {y0}V{y1}H{x1}\" fill=\"none\" stroke=\"#333\"/>\
         <text x=\"{cx}\" y=\"{ly}\" text-anchor=\"middle\" font-size=\"13\">{xl}</text>\
         <text transform=\"translate(16 {cy}) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">{yl}</text>",
        x0 = num(ar.x0),
        y0 = num(ar.y0),
        y1 = num(ar.y1),
        x1 = num(ar.x1),
        cx = num((ar.x0 + ar.x1) / 2.0),
        ly = num(ar.y1 + 40.0),
        xl = esc(&x.label),
        cy = num((ar.y0 + ar.y1) / 2.0),
        yl = esc(&y.label),
    );
}

fn no_data(s: &mut String, ar: &Area) {
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"14\" fill=\"#777\">no data</text>",
        num((ar.x0 + ar.x1) / 2.0),
        num((ar.y0 + ar.y1) / 2.0),
    );
}

/// Legend entries below the plot, in columns of [`LEGEND_COL`] px starting at `x0`.
fn legend(s: &mut String, items: &[(&str, usize, String)], x0: f64, top: f64) {
    let per_row = (((WIDTH - x0) / LEGEND_COL).floor() as usize).max(1);
    for (k, (name, c, style)) in items.iter().enumerate() {
        let x = x0 + (k % per_row) as f64 * LEGEND_COL;
        let y = top + (k / per_row) as f64 * LEGEND_ROW;
        let _ = write!(
            s,
            "<line x1=\"{x}\" y1=\"{y}\" x2=\"{x2}\" y2=\"{y}\" stroke=\"{col}\" stroke-width=\"3\"{style}/>\
             <text x=\"{tx}\" y=\"{ty}\" font-size=\"13\">{n}</text>",
            x = num(x),
            x2 = num(x + 24.0),
            y = num(y),
            col = color(*c),
            tx = num(x + 30.0),
            ty = num(y + 4.0),
            n = esc(&truncate(name, 34)),
        );
    }
}

fn legend_height(n: usize, x0: f64) -> f64 {
    let per_row = (((WIDTH - x0) / LEGEND_COL).floor() as usize).max(1);
    n.div_ceil(per_row) as f64 * LEGEND_ROW
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

/// A line chart with the legend below it.
pub fn line_chart(title: &str, x: &Axis, y: &Axis, series: &[Series]) -> String {
    let plot_h = 320.0;
    let ar = Area {
        x0: 80.0,
        x1: WIDTH - 24.0,
        y0: 40.0,
        y1: 40.0 + plot_h,
    };
    let shown: Vec<&Series> = series.iter().filter(|s| !s.points.is_empty()).collect();
    let leg_top = ar.y1 + 62.0;
    let h = leg_top + legend_height(shown.len(), ar.x0) + 8.0;
    let mut s = String::new();
    open(&mut s, title, h);
    axes(&mut s, &ar, x, y);
    if shown.is_empty() {
        no_data(&mut s, &ar);
    }
    for se in &shown {
        let pts: Vec<String> = se
            .points
            .iter()
            .map(|&(a, b)| format!("{},{}", num(ar.x(x, a)), num(ar.y(y, b))))
            .collect();
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" stroke-linejoin=\"round\"{} points=\"{}\"><title>{}</title></polyline>",
            color(se.color),
            se.style(),
            pts.join(" "),
            esc(&se.name),
        );
        if se.markers {
            for p in &pts {
                if let Some((cx, cy)) = p.split_once(',') {
                    let _ = write!(
                        s,
                        "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"3\" fill=\"{}\"/>",
                        color(se.color)
                    );
                }
            }
        }
    }
    let items: Vec<(&str, usize, String)> = (shown.iter())
        .map(|s| (s.name.as_str(), s.color, s.style()))
        .collect();
    legend(&mut s, &items, ar.x0, leg_top);
    s.push_str("</svg>");
    s
}

/// One bar: `value` None draws no bar and shows `text` (e.g. "failed") instead.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    pub color: usize,
    pub value: Option<f64>,
    pub text: String,
}

/// Horizontal bars from zero, one per row, labelled on the left with a colour swatch that
/// matches the row's lines in the other plots, the value printed at the end of each bar.
pub fn bar_chart(title: &str, x_label: &str, bars: &[Bar], fmt: fn(f64) -> String) -> String {
    let longest = bars
        .iter()
        .map(|b| b.label.chars().count())
        .max()
        .unwrap_or(0);
    let x0 = (longest.min(34) as f64 * 7.5 + 40.0).clamp(120.0, 300.0);
    let row = 30.0;
    let n = bars.len().max(1) as f64;
    let ar = Area {
        x0,
        x1: WIDTH - 100.0,
        y0: 40.0,
        y1: 40.0 + n * row + 8.0,
    };
    let h = ar.y1 + 52.0;
    let max = bars
        .iter()
        .filter_map(|b| b.value)
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let x = Axis::linear(0.0, if max > 0.0 { max } else { 1.0 }, x_label, fmt);
    let y = Axis {
        scale: Scale::Linear { lo: 0.0, hi: 1.0 },
        label: String::new(),
        ticks: Vec::new(),
    };
    let mut s = String::new();
    open(&mut s, title, h);
    axes(&mut s, &ar, &x, &y);
    if bars.is_empty() {
        no_data(&mut s, &ar);
    }
    for (k, b) in bars.iter().enumerate() {
        let top = ar.y0 + 8.0 + k as f64 * row;
        let mid = top + (row - 8.0) / 2.0 + 4.0;
        let _ = write!(
            s,
            "<rect x=\"{sx}\" y=\"{sy}\" width=\"10\" height=\"10\" fill=\"{c}\"/>\
             <text x=\"{tx}\" y=\"{mid}\" text-anchor=\"end\" font-size=\"13\">{l}</text>",
            sx = num(ar.x0 - 18.0),
            sy = num(mid - 9.0),
            c = color(b.color),
            tx = num(ar.x0 - 24.0),
            mid = num(mid),
            l = esc(&truncate(&b.label, 34)),
        );
        let v = b.value.filter(|v| v.is_finite()).unwrap_or(0.0).max(0.0);
        let end = ar.x(&x, v);
        if b.value.is_some() {
            let _ = write!(
                s,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{bh}\" fill=\"{c}\"><title>{l}: {t}</title></rect>",
                x = num(ar.x0),
                y = num(top),
                w = num(end - ar.x0),
                bh = num(row - 8.0),
                c = color(b.color),
                l = esc(&b.label),
                t = esc(&b.text),
            );
        }
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>",
            num(end + 6.0),
            num(mid),
            esc(&b.text),
        );
    }
    s.push_str("</svg>");
    s
}

/// A chart in its `<figure>`, with its caption.
pub(crate) fn figure(s: &mut String, id: &str, svg: &str, caption: &str) {
    let _ = writeln!(
        s,
        "<figure id=\"{id}\">{svg}<figcaption>{}</figcaption></figure>",
        esc(caption)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn nines_transform_by_hand() {
        assert_eq!(nines(0.0), 0.0);
        assert!(close(nines(50.0), 2f64.log10()));
        assert!(close(nines(90.0), 1.0));
        assert!(close(nines(99.0), 2.0));
        assert!(close(nines(99.999), 5.0));
        // 100 % and garbage stay finite.
        assert_eq!(nines(100.0), 6.0);
        assert_eq!(nines(f64::NAN), 0.0);
        assert_eq!(nines(-3.0), 0.0);
    }

    #[test]
    fn nines_axis_ticks_sit_at_whole_nines() {
        let a = Axis::nines(99.999, "p");
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0", "50", "90", "99", "99.9", "99.99", "99.999"]);
        assert_eq!(a.scale, Scale::Nines { hi: 5.0 });
        // 99.9 is three nines out of five: 60 % of the way along.
        assert!(close(a.scale.frac(99.9), 0.6));
        assert!(close(a.scale.frac(a.ticks[6].0), 1.0));
        // A shorter list still gets the axis to 99.999, as the issue asks.
        assert_eq!(Axis::nines(99.0, "p").scale, Scale::Nines { hi: 5.0 });
        assert_eq!(Axis::nines(99.9999, "p").ticks.len(), 8);
    }

    #[test]
    fn log_axis_short_range_gets_1_2_5_ticks() {
        // 3 µs .. 40 µs widens to 2 µs .. 50 µs: ticks 2, 5, 10, 20, 50 µs.
        let a = Axis::log_ns(3_000.0, 40_000.0, "lat");
        assert_eq!(
            a.scale,
            Scale::Log {
                lo: 2_000.0,
                hi: 50_000.0
            }
        );
        let l: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(l, ["2 µs", "5 µs", "10 µs", "20 µs", "50 µs"]);
        // 10 µs is log10(5) of log10(25) along: 0.5.
        assert!(close(a.scale.frac(10_000.0), 0.5));
    }

    #[test]
    fn log_axis_long_range_gets_decades() {
        // 150 ns .. 30 ms: 100 ns .. 50 ms, 18 candidates, so decades only.
        let a = Axis::log_ns(150.0, 30e6, "lat");
        let l: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(l, ["100 ns", "1 µs", "10 µs", "100 µs", "1 ms", "10 ms"]);
    }

    #[test]
    fn log_axis_clamps_zero_and_empty() {
        let a = Axis::log_ns(0.0, 0.0, "lat");
        assert_eq!(a.scale, Scale::Log { lo: 1.0, hi: 2.0 });
        let a = Axis::log_ns(f64::INFINITY, 0.0, "lat");
        assert_eq!(a.scale, Scale::Log { lo: 1.0, hi: 2.0 });
        assert_eq!(a.scale.frac(0.0), 0.0);
        assert_eq!(a.scale.frac(-5.0), 0.0);
        // A single value gets one 1-2-5 step of room.
        let a = Axis::log_ns(1000.0, 1000.0, "lat");
        assert_eq!(
            a.scale,
            Scale::Log {
                lo: 1000.0,
                hi: 2000.0
            }
        );
    }

    #[test]
    fn linear_axis_nice_ticks() {
        let a = Axis::linear(0.0, 23_000.0, "IOPS", fmt_si);
        let l: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(l, ["0", "5k", "10k", "15k", "20k", "25k"]);
        let a = Axis::linear(0.0, 0.0, "x", sig3);
        assert_eq!(a.scale, Scale::Linear { lo: 0.0, hi: 1.0 });
        assert!(a.ticks.iter().all(|t| t.0.is_finite()));
        let a = Axis::linear(f64::NAN, f64::NAN, "x", sig3);
        assert_eq!(a.scale, Scale::Linear { lo: 0.0, hi: 1.0 });
    }

    #[test]
    fn human_units() {
        assert_eq!(fmt_ns(850.0), "850 ns");
        assert_eq!(fmt_ns(12_345.0), "12.3 µs");
        assert_eq!(fmt_ns(4_500_000.0), "4.5 ms");
        assert_eq!(fmt_ns(1e9), "1 s");
        assert_eq!(fmt_si(1_234_567.0), "1.23M");
        assert_eq!(fmt_si(999.0), "999");
        assert_eq!(num(f64::NAN), "0");
        assert_eq!(num(f64::INFINITY), "0");
        assert_eq!(num(2.0), "2");
        assert_eq!(num(2.25), "2.2");
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
    }

    #[test]
    fn empty_charts_say_no_data_and_stay_finite() {
        let x = Axis::nines(0.0, "p");
        let y = Axis::log_ns(f64::INFINITY, 0.0, "lat");
        let s = line_chart("t", &x, &y, &[]);
        assert!(s.contains("no data"));
        let b = bar_chart("b", "x", &[], fmt_si);
        assert!(b.contains("no data"));
        for t in [s, b] {
            assert!(!t.contains("NaN") && !t.contains("inf"), "{t}");
        }
    }
}
