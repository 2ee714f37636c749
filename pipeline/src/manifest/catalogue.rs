//! The catalogue of paper entries (figures and tables with data, in the
//! papers' order): the table rows of `docs/figures.md`, compiled in. Claims
//! name these ids in `entries:`; the index shows one row per entry.

/// `docs/figures.md`, compiled in.
const FIGURES_MD: &str = include_str!("../../../docs/figures.md");

/// One paper entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub id: String,
    pub paper: String,
    pub what: String,
}

/// Every entry, in the papers' order.
pub fn catalogue() -> Vec<Entry> {
    FIGURES_MD
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .strip_prefix('|')?
                .split('|')
                .map(str::trim)
                .collect();
            let (id, paper, what) = (cells.first()?, cells.get(1)?, cells.get(2)?);
            let is_id = id.contains('-')
                && id.starts_with(|c: char| c.is_ascii_lowercase())
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
            is_id.then(|| Entry {
                id: id.to_string(),
                paper: paper.to_string(),
                what: what.to_string(),
            })
        })
        .collect()
}

pub use verdicts::covers;

/// Whether an entry is a measurement on real hardware (its description says
/// "hardware" as a word).
pub fn is_hardware(what: &str) -> bool {
    what.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| w.eq_ignore_ascii_case("hardware"))
}
