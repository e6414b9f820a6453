//! The units and line breaking of compare's text: `45.6us`, `71.0k`, and text wrapped to fit a
//! 120-column terminal. Shared by the table (`compare`, `columns`) and the QoS table (`qos`).

/// `123ns`, `45.6us`, `7.89ms`.
pub fn human_ns(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0}ns")
    } else if ns < 1_000_000.0 {
        format!("{:.1}us", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.2}s", ns / 1e9)
    }
}

/// `71.0k`, `1.25M`.
pub fn human_count(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// The widest line the text table writes: it fits a 120-column terminal. Columns that do not
/// fit go to a second block under the first; the whole table is in the JSON and the HTML.
pub const TABLE_WIDTH: usize = 119;

/// `text` broken into lines of at most [`TABLE_WIDTH`] at spaces, the later ones indented.
pub(crate) fn wrap(text: &str, indent: &str) -> String {
    wrap_after(text, indent, 0)
}

/// [`wrap`] for text that starts `first` characters into its line; its leading spaces stay.
pub(crate) fn wrap_after(text: &str, indent: &str, first: usize) -> String {
    let body = text.trim_start_matches(' ');
    let len = |s: &str| s.chars().count();
    let mut out = String::new();
    let mut line = " ".repeat(text.len() - body.len());
    let mut fresh = true;
    let mut taken = first;
    for word in body.split(' ') {
        if !fresh && taken + len(&line) + 1 + len(word) > TABLE_WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = indent.to_string();
            fresh = true;
            taken = 0;
        }
        if !fresh {
            line.push(' ');
        }
        line.push_str(word);
        fresh = false;
    }
    out.push_str(&line);
    out
}
