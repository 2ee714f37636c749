//! One module per command: `fn NAME(args, registry) -> Result<ExitCode>`
//! takes what clap parsed (main.rs), calls the pipeline's stages in order
//! (manifest -> plan -> execute -> measure -> render, as far as the command
//! goes) and prints their answer. What a command does is in its file; the
//! stages know no command.

pub mod check;
pub mod compare;
pub mod export;
pub mod list;
pub mod list_claims;
mod pages;
pub mod programs;
pub mod report;
pub mod run;
pub mod solve;
pub mod status;
pub mod why;
pub mod worker;

use anyhow::Context;
use pipeline::manifest::ManifestError;
use pipeline::plan::PlanError;
use pipeline::shared::{exit, open_store, sqlite_file, BadInput, InputError};
use solvers::Fidelity;
use std::error::Error;
use store::{Store, StoreError};

/// What the user sees of a failed command and its exit code: the one place
/// where errors become exit codes. Bad input (exit 2) when the user caused
/// the error or one of its causes (a manifest, a flag, a plan over the task
/// limit, a store location that cannot be opened or a store too new for this
/// binary); an internal error (exit 4) otherwise.
pub(crate) fn failure(e: &anyhow::Error) -> (String, u8) {
    let code = if e.chain().any(user_caused) {
        exit::BAD_INPUT
    } else {
        exit::INTERNAL
    };
    (message(e), code)
}

/// Whether an error is one the user can fix in what they gave repro.
pub(crate) fn user_caused(e: &(dyn Error + 'static)) -> bool {
    e.is::<InputError>()
        || e.is::<BadInput>()
        || e.is::<ManifestError>()
        || e.is::<PlanError>()
        || matches!(
            e.downcast_ref::<StoreError>(),
            Some(StoreError::Open { .. } | StoreError::TooNew { .. })
        )
}

/// An error and its causes, outermost first, joined by ": "; a cause whose
/// words the message already holds (many errors repeat their source's) is
/// not said twice.
fn message(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let words = cause.to_string();
        if text.contains(&words) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&words);
    }
    text
}

/// The async runtime for the store. Tokio's default worker count (the number of
/// cores, or `TOKIO_WORKER_THREADS`): solver tasks are bounded by `--jobs`, not by it.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// The fidelity a command selects with `--quick`.
pub(crate) fn fidelity_of(quick: bool) -> Fidelity {
    if quick {
        Fidelity::Quick
    } else {
        Fidelity::Full
    }
}

/// Opens the store if it exists: planning commands (`run --dry-run`, `why`)
/// never create one.
pub(crate) async fn existing_store(location: &str) -> anyhow::Result<Option<Store>> {
    Ok(match sqlite_file(location) {
        Some(f) if !f.is_file() => None,
        _ => Some(open_store(location).await?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_to_exit_codes_and_say_each_cause_once() {
        let input = anyhow::Error::new(InputError("no manifest at x.yaml".into()));
        assert_eq!(
            failure(&input),
            ("no manifest at x.yaml".into(), exit::BAD_INPUT)
        );
        // A store that cannot be opened: the user's to fix; its cause kept
        // (the sqlx error is its source) and said once.
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let open = StoreError::Open {
            location: "r/repro.sqlite".into(),
            cause: store::OpenError::CreateDir {
                path: "r".into(),
                source: io,
            },
        };
        assert!(open.source().is_some());
        let (text, code) = failure(&anyhow::Error::new(open));
        assert_eq!(code, exit::BAD_INPUT);
        assert_eq!(
            text,
            "cannot open the result store at r/repro.sqlite: cannot create directory r: denied"
        );
        // A plan over the task limit, refused with what it means for the run.
        let plan = PlanError {
            tasks: 9,
            manifests: vec![("m.yaml".into(), 9)],
        };
        let words = plan.to_string();
        assert_eq!(
            words,
            format!(
                "this run would plan 9 tasks; the limit is {} tasks per run (largest: m.yaml \
                 with 9); run fewer manifests at once",
                pipeline::manifest::limits::MAX_TASKS
            )
        );
        let (text, code) = failure(&anyhow::Error::new(run::NothingRun(plan)));
        assert_eq!(code, exit::BAD_INPUT);
        assert_eq!(text, format!("{words}; nothing was run"));
        // Bad input explained by another error: what, then why.
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let bad = BadInput::new("--out man", io);
        assert!(bad.source().is_some());
        assert_eq!(
            failure(&anyhow::Error::new(bad)),
            ("--out man: denied".into(), exit::BAD_INPUT)
        );
        let m = ManifestError {
            file: "e/x.yaml".into(),
            line: Some(4),
            column: Some(5),
            key: "series.a.solver".into(),
            message: "unknown solver `q`".into(),
        };
        assert_eq!(
            failure(&anyhow::Error::new(m)),
            (
                "e/x.yaml:4:5: key `series.a.solver`: unknown solver `q`".into(),
                exit::BAD_INPUT
            )
        );
        // A figure that cannot be drawn: internal, its reason kept as the source.
        let draw = reports::ReportError::Draw {
            id: "f".into(),
            cause: "no finite point".into(),
        };
        assert!(draw.source().is_some());
        let e = anyhow::Error::new(draw).context("rendering figure f");
        assert_eq!(
            failure(&e),
            (
                "rendering figure f: cannot draw figure f: no finite point".into(),
                exit::INTERNAL
            )
        );
        // Anything else is internal, with its context first.
        let internal = anyhow::anyhow!("disk full").context("writing index.html");
        assert_eq!(
            failure(&internal),
            ("writing index.html: disk full".into(), exit::INTERNAL)
        );
        let db = StoreError::Invalid("bad row".into());
        assert_eq!(failure(&anyhow::Error::new(db)).1, exit::INTERNAL);
    }
}
