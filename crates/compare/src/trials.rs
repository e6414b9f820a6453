//! A variant's runs at one depth (its trials) made into one row.

use iolab_report::compare::CompareRow;

/// The row of one variant at one depth from its runs, in the order they ran.
pub fn combine(
    mut runs: Vec<CompareRow>,
    label: &str,
    engine: &str,
    depth: u32,
    jobs: u32,
) -> CompareRow {
    runs.retain(|r| !crate::run::is_cut(r));
    match runs.pop() {
        Some(r) => r,
        None => CompareRow {
            label: label.to_string(),
            engine: engine.to_string(),
            depth,
            jobs,
            error: Some("interrupted before it ran".into()),
            ..CompareRow::default()
        },
    }
}
