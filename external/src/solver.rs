//! A declared program as a [`Solver`]: parameters checked and completed with
//! their defaults, the request written, the program run under its limits,
//! and its answer checked into an [`Outcome`]; every failure a
//! [`SolveError::Program`] that says what happened and shows the tail of the
//! program's stderr.

use crate::code::Code;
use crate::protocol;
use crate::run::{self, describe_status, Ending, Limits, Ran};
use crate::spec::Program;
use serde_json::{json, Value as Json};
use solvers::{Kind, Outcome, ParamDoc, SolveError, Solver, SolverDoc, TaskContext};
use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

/// The solver contract names things with `&'static str`; declared names and
/// texts are made static once each (a process loads a bounded set of them).
fn intern(s: &str) -> &'static str {
    static SEEN: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut g = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let set = g.get_or_insert_with(HashSet::new);
    if let Some(x) = set.get(s) {
        return x;
    }
    let x: &'static str = Box::leak(s.to_string().into_boxed_str());
    set.insert(x);
    x
}

/// A program a manifest declares, ready to run.
#[derive(Debug)]
pub struct ExternalSolver {
    program: Program,
    name: &'static str,
    /// The files as read when this solver was made, or why they could not be.
    code: Result<Code, String>,
    /// The hash the tasks were planned with, when it came from elsewhere (a
    /// worker rebuilding the solver from a queued task's definition).
    planned: Option<String>,
}

impl PartialEq for ExternalSolver {
    fn eq(&self, other: &Self) -> bool {
        self.program == other.program && self.code_hash() == other.code_hash()
    }
}

impl ExternalSolver {
    /// Reads and hashes the program's files now.
    pub fn new(program: Program) -> Self {
        let code = Code::of(&program);
        ExternalSolver {
            name: intern(&program.name),
            program,
            code,
            planned: None,
        }
    }

    /// Rebuilds a solver from [`Solver::definition`]. Its files are hashed
    /// here; if they differ from the ones the task was planned with, every
    /// solve fails and says which file differs.
    pub fn from_definition(def: &Json) -> Result<Self, String> {
        let program: Program =
            serde_json::from_value(def.get("program").cloned().unwrap_or(Json::Null))
                .map_err(|e| format!("not a program definition: {e}"))?;
        let planned = def
            .get("code")
            .cloned()
            .map(serde_json::from_value::<Code>)
            .transpose()
            .map_err(|e| format!("not a program definition: {e}"))?;
        let mut s = ExternalSolver::new(program);
        if let Some(p) = planned {
            let here = s.code.as_ref().map(Code::hash).ok();
            if here.as_deref() != Some(p.hash().as_str()) {
                let what = match &s.code {
                    Ok(c) => c
                        .diff(&p)
                        .into_iter()
                        .map(|(w, a, b)| format!("{w}: planned {a}, here {b}"))
                        .collect::<Vec<_>>()
                        .join("; "),
                    Err(e) => e.clone(),
                };
                s.code = Err(format!(
                    "the program's files on this machine differ from those the task was planned with ({what}); \
                     workers need the same files at the same path (a shared file system)"
                ));
            }
            s.planned = Some(p.hash());
        }
        Ok(s)
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The files' hashes, or why they could not be read.
    pub fn code(&self) -> Result<&Code, &str> {
        self.code.as_ref().map_err(String::as_str)
    }

    fn fail(&self, what: &str, ran: Option<&Ran>) -> SolveError {
        let mut m = format!(
            "external solver `{}` ({} in {}) {what}",
            self.name,
            self.program.command_line(),
            self.program.dir.display()
        );
        if let Some(r) = ran {
            let tail = r.stderr_tail.trim_end();
            if tail.is_empty() {
                m.push_str("; its stderr was empty");
            } else {
                let shown = if r.stderr_bytes > r.stderr_tail.len() as u64 {
                    format!("last {} of {} bytes", r.stderr_tail.len(), r.stderr_bytes)
                } else {
                    "all of it".to_string()
                };
                m.push_str(&format!("\n  its stderr ({shown}):"));
                for l in tail.lines() {
                    m.push_str("\n  | ");
                    m.push_str(l);
                }
            }
        }
        SolveError::Program(m)
    }

    fn memory_hint(&self, ran: &Ran) -> &'static str {
        let t = ran.stderr_tail.as_str();
        if [
            "MemoryError",
            "Cannot allocate memory",
            "bad_alloc",
            "out of memory",
        ]
        .iter()
        .any(|w| t.contains(w))
        {
            " (its address space is limited to memory_mb; raise memory_mb if it needs more)"
        } else {
            ""
        }
    }
}

impl Solver for ExternalSolver {
    fn name(&self) -> &'static str {
        self.name
    }

    fn version(&self) -> u32 {
        self.program.version
    }

    fn kind(&self) -> Kind {
        self.program.kind
    }

    fn doc(&self) -> SolverDoc {
        let summary = if self.program.summary.is_empty() {
            format!("external program: {}", self.program.command_line())
        } else {
            self.program.summary.clone()
        };
        SolverDoc {
            summary: intern(&summary),
            params: self
                .program
                .params
                .iter()
                .map(|p| ParamDoc {
                    name: intern(&p.name),
                    doc: intern(&p.describe()),
                })
                .collect(),
            metrics: self.program.metrics.iter().map(|m| intern(m)).collect(),
        }
    }

    fn solve(&self, params: &Json, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let params = self.program.check_params(params)?;
        if let Err(e) = &self.code {
            return Err(self.fail(&format!("cannot run: {e}"), None));
        }
        let input = protocol::request(self.name, &params, ctx);
        let limits = Limits {
            timeout: Duration::from_secs_f64(self.program.timeout_s),
            memory_bytes: Some(self.program.memory_mb.saturating_mul(1 << 20)),
            stdout_cap: run::STDOUT_CAP,
            stderr_tail: run::STDERR_TAIL,
        };
        let ran = run::run(
            &self.program.command,
            &self.program.dir,
            &input,
            &limits,
            &|| ctx.is_cancelled(),
        )
        .map_err(|e| {
            let first = self.program.command.first().map_or("", String::as_str);
            let hint = match e.kind() {
                std::io::ErrorKind::NotFound => {
                    "; is it installed and on PATH (or a path relative to the manifest's folder)?"
                }
                std::io::ErrorKind::PermissionDenied => {
                    "; is it executable (chmod +x), or should the command start with its interpreter?"
                }
                _ => "",
            };
            self.fail(&format!("could not start `{first}`: {e}{hint}"), None)
        })?;
        let status = match ran.ending {
            Ending::Cancelled => return Err(SolveError::Cancelled),
            Ending::TimedOut => {
                return Err(self.fail(
                    &format!(
                        "was killed (with its process group) at its timeout of {} s (timeout_s)",
                        self.program.timeout_s
                    ),
                    Some(&ran),
                ))
            }
            Ending::StdoutTooLarge => {
                return Err(self.fail(
                    &format!(
                        "printed more than {} MiB on stdout and was killed; stdout is for the one \
                         JSON answer, diagnostics go to stderr",
                        run::STDOUT_CAP >> 20
                    ),
                    Some(&ran),
                ))
            }
            Ending::Exited(s) => s,
        };
        if !status.success() {
            return Err(self.fail(
                &format!(
                    "{} after {:.1} s{}",
                    describe_status(&status),
                    ran.elapsed.as_secs_f64(),
                    self.memory_hint(&ran)
                ),
                Some(&ran),
            ));
        }
        if !ran.stdout_closed {
            return Err(self.fail(
                "ended, but its stdout stayed open (a process it started outside its process \
                 group still holds it)",
                Some(&ran),
            ));
        }
        let outcome = protocol::outcome(&ran.stdout, &self.program.metrics)
            .map_err(|e| self.fail(&format!("exited 0 but {e}"), Some(&ran)))?;
        Ok(outcome)
    }

    fn code_hash(&self) -> Option<String> {
        Some(match (&self.planned, &self.code) {
            (Some(p), _) => p.clone(),
            (None, Ok(c)) => c.hash(),
            (None, Err(_)) => "unavailable".to_string(),
        })
    }

    fn definition(&self) -> Option<Json> {
        Some(json!({
            "program": self.program,
            "code": self.code.as_ref().ok(),
        }))
    }
}
