//! The catalogue of paper entries: every figure and table with data of the
//! papers the project reproduces, in the papers' order (`docs/catalogue.yaml`,
//! compiled in). Manifests name their outputs after these ids, claims name
//! them in `entries:`, and index.html has one summary row per entry.
//! `docs/figures.md` shows the same list as a table, generated from it (a test
//! below keeps the two equal).

use serde::Deserialize;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// `docs/catalogue.yaml`, compiled in.
const CATALOGUE_YAML: &str = include_str!("../../../docs/catalogue.yaml");

/// A paper of the catalogue.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paper {
    /// How entries and the index name it ("Yan 2012").
    pub name: String,
    /// The full reference.
    pub citation: String,
}

/// One figure or table of a paper.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// `yan-4.5`, `wu-T7.2`, `gran-7a`: what manifests' output ids and claims use.
    pub id: String,
    /// The `name` of a [`Paper`].
    pub paper: String,
    /// What it shows (the paper's caption, and what tells its panels apart).
    pub what: String,
    /// The paper's figure is a measurement on real hardware: nothing can
    /// regenerate it; its outputs show the printed numbers beside a simulation.
    #[serde(default)]
    pub hardware: bool,
}

/// The papers and their entries, in order.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    pub papers: Vec<Paper>,
    pub entries: Vec<Entry>,
}

impl Catalogue {
    /// Parses and checks a catalogue: ids well formed and unique, every
    /// entry's paper listed, the entries of a paper together and the papers
    /// in the order of `papers:`.
    pub fn parse(text: &str) -> Result<Catalogue, String> {
        let c: Catalogue = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
        let mut ids = BTreeSet::new();
        let mut last_paper = 0;
        for e in &c.entries {
            let well_formed = e.id.contains('-')
                && e.id.starts_with(|ch: char| ch.is_ascii_lowercase())
                && e.id
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '.');
            if !well_formed {
                return Err(format!(
                    "entry id `{}`: a lower-case letter first, then letters, digits, `-` and `.`, with a `-`",
                    e.id
                ));
            }
            if !ids.insert(e.id.as_str()) {
                return Err(format!("entry id `{}` is listed twice", e.id));
            }
            let Some(p) = c.papers.iter().position(|p| p.name == e.paper) else {
                let names: Vec<&str> = c.papers.iter().map(|p| p.name.as_str()).collect();
                return Err(format!(
                    "entry {}: paper `{}` is not in `papers:` ({})",
                    e.id,
                    e.paper,
                    names.join(", ")
                ));
            };
            if p < last_paper {
                return Err(format!(
                    "entry {}: the entries of {} must come together, in the order of `papers:`",
                    e.id, e.paper
                ));
            }
            last_paper = p;
        }
        Ok(c)
    }

    /// The entry with this id.
    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// The table of `docs/figures.md`: one row per entry.
    pub fn markdown_table(&self) -> String {
        let mut s = String::from("| id | paper | what |\n|---|---|---|\n");
        for e in &self.entries {
            s.push_str(&format!(
                "| {} | {} | {} |\n",
                e.id,
                e.paper,
                e.what.replace('|', "\\|")
            ));
        }
        s
    }
}

/// The shipped catalogue (`docs/catalogue.yaml`), parsed once.
pub fn shipped() -> &'static Catalogue {
    static CATALOGUE: OnceLock<Catalogue> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        // Compiled-in data: the test below parses it, so this cannot fail in a
        // binary whose tests passed.
        Catalogue::parse(CATALOGUE_YAML).expect("docs/catalogue.yaml is valid")
    })
}

/// Every entry of the shipped catalogue, in the papers' order.
pub fn catalogue() -> Vec<Entry> {
    shipped().entries.clone()
}

/// Whether an output id stands for a catalogue entry (`wu-3.4` for
/// `wu-3.4a..d`, `yan-5.3-printed` for `yan-5.3`); shared with reports.
pub use verdicts::covers;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const BEGIN: &str = "<!-- catalogue table: generated from docs/catalogue.yaml";
    const END: &str = "<!-- end of the catalogue table -->";

    #[test]
    fn the_shipped_catalogue_loads() {
        let c = Catalogue::parse(CATALOGUE_YAML).unwrap();
        assert_eq!(c.papers.len(), 3);
        assert!(c.entries.len() > 80, "{} entries", c.entries.len());
        assert!(c.get("wu-T7.2").is_some_and(|e| e.what.contains("P_{r_i}")));
        let hardware: Vec<&str> = c
            .entries
            .iter()
            .filter(|e| e.hardware)
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(hardware, ["gran-7a", "gran-7b", "gran-8a", "gran-8b"]);
    }

    #[test]
    fn a_catalogue_with_a_mistake_is_refused() {
        let papers = "papers: [{ name: P 1, citation: c }, { name: Q 2, citation: d }]\n";
        let bad = [
            (
                "entries: [{ id: p-1, paper: P 1, what: a }, { id: p-1, paper: P 1, what: b }]",
                "twice",
            ),
            (
                "entries: [{ id: p-1, paper: R 3, what: a }]",
                "not in `papers:`",
            ),
            ("entries: [{ id: P1, paper: P 1, what: a }]", "lower-case"),
            (
                "entries: [{ id: q-1, paper: Q 2, what: a }, { id: p-1, paper: P 1, what: b }]",
                "together",
            ),
            (
                "entries: [{ id: p-1, paper: P 1, what: a, hardwar: true }]",
                "unknown field",
            ),
        ];
        for (entries, why) in bad {
            let e = Catalogue::parse(&format!("{papers}{entries}\n")).unwrap_err();
            assert!(e.contains(why), "{entries}: {e}");
        }
    }

    /// `docs/figures.md` shows the catalogue's table between two markers;
    /// `REPRO_BLESS=1` rewrites it from `docs/catalogue.yaml`.
    #[test]
    fn docs_figures_md_shows_the_catalogue() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/figures.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let start = text
            .find(BEGIN)
            .expect("the begin marker in docs/figures.md");
        let body = start + text[start..].find('\n').expect("a line after the marker") + 1;
        let end = text.find(END).expect("the end marker in docs/figures.md");
        let want = shipped().markdown_table();
        if text[body..end] == want {
            return;
        }
        if std::env::var_os("REPRO_BLESS").is_some() {
            let new = format!("{}{want}{}", &text[..body], &text[end..]);
            std::fs::write(&path, new).unwrap();
            return;
        }
        panic!(
            "docs/figures.md does not show docs/catalogue.yaml; rewrite its table with \
             `REPRO_BLESS=1 cargo test --release -p pipeline catalogue`"
        );
    }
}
