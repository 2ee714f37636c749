//! Size limits of a manifest, and a lexical pre-scan of its text.
//!
//! Every size a manifest can ask for is checked against one of these limits
//! before anything is allocated for it (issue 11): the file size before the
//! file is read, the nesting depth and YAML tags before the YAML parser sees
//! the text (a YAML parser's work and stack grow with the nesting depth: a
//! 200 KB file nested 100,000 deep once ran for minutes),
//! the number of sweep points as a product before the sweep is expanded, and
//! the number of tasks before the planner allocates them. The README's
//! "Limits" section lists the same numbers.

/// Largest manifest file, in bytes (checked before the file is read).
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Deepest nesting of mappings and lists (block indentation levels, list
/// markers and flow brackets counted together). Manifests need about 6.
pub const MAX_DEPTH: usize = 32;
/// Longest id: manifest, series, figure and table ids, sweep axes, parameter names.
pub const MAX_ID_CHARS: usize = 64;
/// Longest string value (titles, labels, descriptions, string parameters).
pub const MAX_STRING_CHARS: usize = 16_384;
/// Most series in one manifest.
pub const MAX_SERIES: usize = 64;
/// Most figures plus tables, and most `compare` entries, in one manifest.
pub const MAX_OUTPUTS: usize = 256;
/// Most sweep entries (axes or zip groups) in one manifest.
pub const MAX_AXES: usize = 16;
/// Most points of one sweep (the product of its axes' lengths).
pub const MAX_POINTS: u64 = 1_000_000;
/// Most replications of one series.
pub const MAX_REPLICATIONS: u32 = 10_000;
/// Most tasks one manifest, or one run, may plan (points × replications, summed over series).
pub const MAX_TASKS: u64 = 1_000_000;

/// A problem found by [`scan`]: the 1-based line (and column, for a tag)
/// and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanError {
    pub line: usize,
    pub column: Option<usize>,
    pub message: String,
}

/// Checks the nesting depth and rejects YAML tags, in one linear pass over
/// the text, before the YAML parser runs.
///
/// The scan is lexical and conservative: it follows quotes, comments, block
/// scalars (`|`, `>`) and flow collections well enough for manifests, and
/// may count a level too many on exotic YAML (which the limit's headroom
/// absorbs), but it never lets a deep document through: every nesting level
/// needs either more indentation, a `- ` marker or a flow bracket, and all
/// three are counted.
pub fn scan(text: &str) -> Result<(), ScanError> {
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    // Inside a multi-line quoted scalar: the quote character.
    let mut quote: Option<u8> = None;
    // Inside a block scalar: lines indented more than this belong to it.
    let mut block_scalar: Option<usize> = None;
    for (ln, line) in text.lines().enumerate() {
        let lineno = ln + 1;
        let b = line.as_bytes();
        let indent = b.iter().take_while(|&&c| c == b' ').count();
        let blank = b[indent..].iter().all(|c| c.is_ascii_whitespace());
        if let Some(parent) = block_scalar {
            if blank || indent > parent {
                continue;
            }
            block_scalar = None;
        }
        if blank && quote.is_none() {
            continue;
        }
        let mut i = 0;
        let mut level_base = 0;
        if quote.is_none() && flow == 0 {
            if b[indent] == b'#' {
                continue;
            }
            while indents.last().is_some_and(|&top| top >= indent) {
                indents.pop();
            }
            indents.push(indent);
            i = indent;
            // Each leading `- ` (or `? `) opens one more level on the same line.
            while i + 1 < b.len() && matches!(b[i], b'-' | b'?') && b[i + 1] == b' ' {
                level_base += 1;
                i += 2;
                while i < b.len() && b[i] == b' ' {
                    i += 1;
                }
            }
        }
        let depth_here = indents.len() + level_base;
        if depth_here + flow > MAX_DEPTH {
            return Err(too_deep(lineno));
        }
        // Where a node may start: a tag (`!x`) or a flow bracket is an indicator there.
        let mut node_start = quote.is_none();
        let mut last_value_start = None;
        while i < b.len() {
            let c = b[i];
            if let Some(q) = quote {
                if c == b'\\' && q == b'"' {
                    i += 2;
                    continue;
                }
                if c == q {
                    if q == b'\'' && b.get(i + 1) == Some(&b'\'') {
                        i += 2;
                        continue;
                    }
                    quote = None;
                }
                i += 1;
                continue;
            }
            match c {
                b' ' | b'\t' => {
                    i += 1;
                    continue;
                }
                b'#' if i == 0 || matches!(b[i - 1], b' ' | b'\t') => break,
                b'"' | b'\'' if node_start => quote = Some(c),
                b'!' if node_start => {
                    let tag: String = line[i..]
                        .chars()
                        .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | ']' | '}'))
                        .take(40)
                        .collect();
                    return Err(ScanError {
                        line: lineno,
                        column: Some(line[..i].chars().count() + 1),
                        message: format!(
                            "YAML tag `{tag}`: manifests use plain YAML values without tags"
                        ),
                    });
                }
                b'[' | b'{' if node_start || flow > 0 => {
                    flow += 1;
                    if depth_here + flow > MAX_DEPTH {
                        return Err(too_deep(lineno));
                    }
                    node_start = true;
                    i += 1;
                    continue;
                }
                b']' | b'}' if flow > 0 => flow -= 1,
                b',' if flow > 0 => {
                    node_start = true;
                    i += 1;
                    continue;
                }
                b':' if b.get(i + 1).is_none_or(|n| *n == b' ' || *n == b'\t')
                    || (flow > 0
                        && b.get(i + 1)
                            .is_some_and(|n| matches!(n, b',' | b']' | b'}'))) =>
                {
                    node_start = true;
                    last_value_start = Some(i + 1);
                    i += 1;
                    continue;
                }
                b'-' | b'?' if node_start && b.get(i + 1).is_none_or(|n| *n == b' ') => {
                    i += 1;
                    continue;
                }
                _ => {}
            }
            node_start = false;
            i += 1;
        }
        // `key: |` or `- >-` starts a block scalar: its lines are text, not structure.
        if quote.is_none() && flow == 0 {
            let tail = match last_value_start {
                Some(s) => line[s..].trim(),
                None => line[indent..].trim_start_matches(['-', ' ']).trim(),
            };
            let tail = tail.split(" #").next().unwrap_or(tail).trim();
            if tail.starts_with(['|', '>'])
                && tail[1..]
                    .chars()
                    .all(|c| matches!(c, '+' | '-') || c.is_ascii_digit())
            {
                block_scalar = Some(indent);
            }
        }
    }
    Ok(())
}

fn too_deep(line: usize) -> ScanError {
    ScanError {
        line,
        column: None,
        message: format!("nested more than {MAX_DEPTH} levels deep (the limit)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_style_manifests_pass() {
        let t = "id: a\ntitle: \"x [y\" # c {\nparams: { a: [1, 2], b: 'it''s' }\nseries:\n  m:\n    solver: x\n    params: { c: 1 }\ndescription: |\n  text [[[ {{{\n        deeply: indented: text\nfigures:\n  - { id: f, y: [a, b] }\n";
        assert_eq!(scan(t), Ok(()));
    }

    #[test]
    fn deep_flow_and_block_nesting_are_refused_with_the_line() {
        let deep = format!(
            "id: a\nparams: {{ x: {}{} }}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let e = scan(&deep).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("nested more than 32"), "{e:?}");
        let mut block = String::from("a:\n");
        for d in 1..40 {
            block.push_str(&format!("{}k{d}:\n", " ".repeat(d)));
        }
        assert!(scan(&block).is_err());
        let dashes = format!("a:\n  {}x\n", "- ".repeat(40));
        assert!(scan(&dashes).is_err());
    }

    #[test]
    fn tags_are_refused_but_bangs_inside_text_are_not() {
        let e = scan("params:\n  mu1: !custom 6.0\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, Some(8)));
        assert!(e.message.contains("`!custom`"), "{e:?}");
        assert!(scan("a: [1, !!float 2]\n").is_err());
        assert!(scan("- !x\n").is_err());
        assert_eq!(scan("title: Wow! it works\nb: 'a !b'\n"), Ok(()));
    }
}
