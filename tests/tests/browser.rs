//! The report in a real browser (issue 12, item 12; issue 34): headless
//! Chromium renders `index.html` of a quick run *after the results folder has
//! been copied away from the project* (so every link must live inside it), a
//! small checker page reads the DOM after load (summary table, table of
//! contents, back-to-top, every image loaded and described by its alt text,
//! no broken link or anchor), and screenshots of the summary and of one
//! section at a laptop's width are written to `target/browser/`.
//!
//! Without Chromium the test says it was skipped and why (run with
//! `--nocapture` to see it; `.ci/run` installs Chromium). `REPRO_CHROMIUM`
//! names the browser binary when it is not `chromium` on PATH.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const CHECKER: &str = include_str!("browser/check.html");

fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("REPRO_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Chromium with the flags that work in a container without a display or a
/// D-Bus, a fresh profile each time and no network chatter.
fn chromium(bin: &Path, profile: &Path) -> Command {
    let mut c = Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

fn file_url(p: &Path) -> String {
    format!("file://{}", p.canonicalize().unwrap().display())
}

#[test]
fn the_report_loads_in_headless_chromium_with_every_image_and_link() {
    let Some(bin) = find_chromium() else {
        println!(
            "SKIPPED the_report_loads_in_headless_chromium: no `chromium` on PATH and REPRO_CHROMIUM unset \
             (install it with `apt-get install -y --no-install-recommends chromium`)"
        );
        return;
    };
    let p = project(&["yan-credit-downstream", "yan-5.3-5.5"]);
    // The model document the index links (copied into the results folder).
    let docs = p.path().join("docs/models");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::copy(
        shipped_experiments().join("../docs/models/credit.md"),
        docs.join("credit.md"),
    )
    .unwrap();
    ok(&repro(p.path(), &["run", "--quick", "--no-progress"]));
    // Published on its own: the folder copied where no docs/ or manifest is.
    let away = tempfile::tempdir().unwrap();
    let quick = away.path().join("published");
    copy_dir(&p.path().join("results/quick"), &quick);
    drop(p);
    std::fs::write(quick.join("check.html"), CHECKER).unwrap();
    let profile = tempfile::tempdir().unwrap();

    // The DOM after load, as the checker page reports it.
    let out = chromium(&bin, profile.path())
        .args([
            "--allow-file-access-from-files",
            "--virtual-time-budget=30000",
            "--dump-dom",
        ])
        .arg(file_url(&quick.join("check.html")))
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    let json = dom
        .split("RESULT ")
        .filter_map(|s| s.split("</pre>").next())
        .find_map(|s| serde_json::from_str::<serde_json::Value>(s).ok())
        .unwrap_or_else(|| {
            panic!(
                "no RESULT from the checker page; chromium exit {:?}\n{}\n{}",
                out.status.code(),
                dom,
                String::from_utf8_lossy(&out.stderr)
            )
        });
    assert_eq!(json["summary"], true, "no summary table: {json}");
    assert!(json["images"].as_u64().unwrap() >= 8, "{json}");
    assert_eq!(json["broken_images"], serde_json::json!([]), "{json}");
    assert!(json["links"].as_u64().unwrap() > 20, "{json}");
    assert_eq!(json["broken_links"], serde_json::json!([]), "{json}");
    assert_eq!(
        json["described"], json["images"],
        "an image lacks its alt text: {json}"
    );
    assert!(
        json["toc"].as_u64().unwrap() >= 2,
        "no table of contents: {json}"
    );
    assert_eq!(json["top"], true, "no back-to-top link: {json}");
    assert!(
        quick.join("models/credit.md").is_file(),
        "model doc not copied"
    );

    // Screenshots for people to look at: the summary and one section, at a
    // laptop's width.
    let shot_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/browser");
    std::fs::create_dir_all(&shot_dir).unwrap();
    // One section: the page with every other part hidden (a URL fragment
    // does not scroll a headless screenshot).
    let html = std::fs::read_to_string(quick.join("index.html")).unwrap();
    let only = "<style>header, nav.toc, #summary, section.exp:not(#exp-yan-credit-downstream) \
                { display: none; }</style></head>";
    std::fs::write(
        quick.join("section.html"),
        html.replacen("</head>", only, 1),
    )
    .unwrap();
    for (name, url) in [
        ("index-quick.png", file_url(&quick.join("index.html"))),
        ("section-quick.png", file_url(&quick.join("section.html"))),
    ] {
        let shot = shot_dir.join(name);
        let _ = std::fs::remove_file(&shot);
        let profile = tempfile::tempdir().unwrap();
        let out = chromium(&bin, profile.path())
            .args(["--window-size=1366,1400", "--hide-scrollbars"])
            .arg(format!("--screenshot={}", shot.display()))
            .arg(url)
            .output()
            .expect("run chromium");
        assert!(
            shot.is_file() && std::fs::metadata(&shot).unwrap().len() > 10_000,
            "no screenshot {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        println!("screenshot: {}", shot.canonicalize().unwrap().display());
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
