//! Running a program once: its own process group, an address-space limit,
//! a timeout, the request on stdin, stdout read up to a cap and the tail of
//! stderr kept, all three pipes served by their own threads so that neither
//! side waits on a full pipe. On timeout, cancellation or too much output the
//! whole group is killed; after the program ends by itself the group is
//! killed too, so nothing it started outlives the task.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Most bytes of stdout read; a program that prints more is killed.
pub const STDOUT_CAP: usize = 16 << 20;
/// Bytes of stderr kept for messages (the last ones).
pub const STDERR_TAIL: usize = 4096;
/// How long to wait for the pipes to close once the group is killed.
const DRAIN: Duration = Duration::from_secs(2);

#[derive(Debug, Clone)]
pub struct Limits {
    pub timeout: Duration,
    /// RLIMIT_AS of the program (and what it starts), bytes.
    pub memory_bytes: Option<u64>,
    pub stdout_cap: usize,
    pub stderr_tail: usize,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The program ended by itself (any exit code or signal).
    Exited(ExitStatus),
    /// Killed at the timeout.
    TimedOut,
    /// Killed because the task was cancelled.
    Cancelled,
    /// Killed because stdout passed the cap.
    StdoutTooLarge,
}

#[derive(Debug)]
pub struct Ran {
    pub ending: Ending,
    pub stdout: Vec<u8>,
    /// False when stdout was still open after the group was killed (a process
    /// the program started outside its group holds it): `stdout` is partial.
    pub stdout_closed: bool,
    /// The last [`Limits::stderr_tail`] bytes of stderr, as text.
    pub stderr_tail: String,
    pub stderr_bytes: u64,
    pub elapsed: Duration,
}

/// Keeps the last `cap` bytes written.
struct Tail {
    buf: Vec<u8>,
    cap: usize,
    total: u64,
}

impl Tail {
    fn push(&mut self, b: &[u8]) {
        self.total += b.len() as u64;
        let b = &b[b.len().saturating_sub(self.cap)..];
        self.buf.extend_from_slice(b);
        if self.buf.len() > self.cap {
            let cut = self.buf.len() - self.cap;
            self.buf.drain(..cut);
        }
    }

    fn text(&self) -> String {
        let s = String::from_utf8_lossy(&self.buf).to_string();
        // Start at a line when the tail was cut.
        if self.total > self.buf.len() as u64 {
            if let Some(i) = s.find('\n') {
                if i + 1 < s.len() {
                    return s[i + 1..].to_string();
                }
            }
        }
        s
    }
}

/// The program to start: a first word with a `/` that is relative is
/// relative to `dir` (std would resolve it against our own folder).
fn program_path(first: &str, dir: &Path) -> PathBuf {
    let p = Path::new(first);
    if first.contains('/') && p.is_relative() {
        dir.join(p)
    } else {
        p.to_path_buf()
    }
}

/// Runs `argv` in `dir` with `input` on stdin. `Err` only when the program
/// cannot be started (not found, not executable) or the OS refuses a pipe.
pub fn run(
    argv: &[String],
    dir: &Path,
    input: &[u8],
    limits: &Limits,
    cancelled: &dyn Fn() -> bool,
) -> io::Result<Ran> {
    let Some(first) = argv.first() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the command is empty",
        ));
    };
    let mut cmd = Command::new(program_path(first, dir));
    cmd.args(&argv[1..])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    sys::confine(&mut cmd, limits.memory_bytes);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let group = child.id();

    // stdin: written by its own thread, which ignores a reader that left.
    if let Some(mut stdin) = child.stdin.take() {
        let input = input.to_vec();
        std::thread::spawn(move || {
            sys::block_sigpipe();
            let _ = stdin.write_all(&input);
        });
    }
    // stdout: up to the cap; past it the flag is raised and the pipe dropped.
    let out = Arc::new(Mutex::new(Vec::new()));
    let overflow = Arc::new(AtomicBool::new(false));
    let (out_done_tx, out_done) = mpsc::channel::<()>();
    if let Some(mut stdout) = child.stdout.take() {
        let (out, overflow, cap) = (out.clone(), overflow.clone(), limits.stdout_cap);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            loop {
                match stdout.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let mut o = out.lock().expect("stdout buffer");
                        if o.len() + n > cap {
                            overflow.store(true, Ordering::Relaxed);
                            break;
                        }
                        o.extend_from_slice(&buf[..n]);
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = out_done_tx.send(());
        });
    }
    // stderr: read to the end, keeping the tail.
    let tail = Arc::new(Mutex::new(Tail {
        buf: Vec::new(),
        cap: limits.stderr_tail,
        total: 0,
    }));
    let (err_done_tx, err_done) = mpsc::channel::<()>();
    if let Some(mut stderr) = child.stderr.take() {
        let tail = tail.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            loop {
                match stderr.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => tail.lock().expect("stderr tail").push(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = err_done_tx.send(());
        });
    }

    let mut nap = Duration::from_millis(1);
    let killed = loop {
        if sys::has_exited(group) {
            break None;
        }
        if overflow.load(Ordering::Relaxed) {
            break Some(Ending::StdoutTooLarge);
        }
        if cancelled() {
            break Some(Ending::Cancelled);
        }
        let left = limits.timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            break Some(Ending::TimedOut);
        }
        std::thread::sleep(nap.min(left));
        nap = (nap * 2).min(Duration::from_millis(20));
    };
    // The leader is not reaped yet, so the group id is still ours to kill.
    sys::kill_group(group);
    let status = child.wait()?;
    let elapsed = start.elapsed();
    let deadline = Instant::now() + DRAIN;
    let stdout_closed = out_done
        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .is_ok();
    let _ = err_done.recv_timeout(deadline.saturating_duration_since(Instant::now()));
    let ending = match killed {
        Some(e) => e,
        // Output past the cap is the cause even if the program then died of it.
        None if overflow.load(Ordering::Relaxed) => Ending::StdoutTooLarge,
        None => Ending::Exited(status),
    };
    let stdout = std::mem::take(&mut *out.lock().expect("stdout buffer"));
    let t = tail.lock().expect("stderr tail");
    Ok(Ran {
        ending,
        stdout,
        stdout_closed,
        stderr_tail: t.text(),
        stderr_bytes: t.total,
        elapsed,
    })
}

#[cfg(unix)]
mod sys {
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    /// Own process group (so the whole group can be killed), the address
    /// space limit, and no core files.
    pub(super) fn confine(cmd: &mut Command, memory_bytes: Option<u64>) {
        cmd.process_group(0);
        // SAFETY: getpid has no preconditions.
        #[cfg(target_os = "linux")]
        let parent = unsafe { libc::getpid() };
        // SAFETY: the closure runs in the child between fork and exec and
        // calls only setrlimit, prctl and getppid, which are async-signal-safe;
        // it allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(bytes) = memory_bytes {
                    let lim = libc::rlimit {
                        rlim_cur: bytes as libc::rlim_t,
                        rlim_max: bytes as libc::rlim_t,
                    };
                    if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                let none = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &none);
                // Should repro itself be killed (SIGKILL, out of memory), the
                // program goes too instead of running on unwatched. Linux
                // ties this to the thread that started it, which waits for
                // the program until it ends.
                #[cfg(target_os = "linux")]
                {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    if libc::getppid() != parent {
                        return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                    }
                }
                Ok(())
            });
        }
    }

    /// Whether the child has ended, without reaping it (WNOWAIT), so that its
    /// pid, the group's id, cannot be reused before the group is killed.
    pub(super) fn has_exited(pid: u32) -> bool {
        // SAFETY: siginfo_t is plain data; waitid fills it or leaves it zeroed.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if r != 0 {
            // ECHILD: nothing to wait for (already reaped); EINTR: look again.
            return std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD);
        }
        // SAFETY: waitid succeeded, so si_pid is the child's pid or 0 (still running).
        unsafe { info.si_pid() != 0 }
    }

    pub(super) fn kill_group(pid: u32) {
        // SAFETY: plain syscall; the group is the child's own (process_group(0)).
        unsafe {
            libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
        }
    }

    /// A write to a pipe whose reader left raises SIGPIPE in the writing
    /// thread, and repro's default disposition for it ends the process;
    /// blocked here, the write fails with EPIPE instead.
    pub(super) fn block_sigpipe() {
        // SAFETY: sigset operations on a local set; affects this thread only.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
    }
}

#[cfg(not(unix))]
mod sys {
    use std::process::Command;
    pub(super) fn confine(_: &mut Command, _: Option<u64>) {}
    pub(super) fn has_exited(_: u32) -> bool {
        true
    }
    pub(super) fn kill_group(_: u32) {}
    pub(super) fn block_sigpipe() {}
}

/// "exit code 1", "killed by signal 9 (SIGKILL)".
pub fn describe_status(status: &ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            let name = match sig {
                libc::SIGSEGV => " (SIGSEGV: invalid memory access)",
                libc::SIGABRT => " (SIGABRT: aborted)",
                libc::SIGKILL => " (SIGKILL)",
                libc::SIGTERM => " (SIGTERM)",
                libc::SIGBUS => " (SIGBUS)",
                libc::SIGFPE => " (SIGFPE: arithmetic error)",
                libc::SIGPIPE => " (SIGPIPE)",
                libc::SIGINT => " (SIGINT)",
                _ => "",
            };
            return format!("was killed by signal {sig}{name}");
        }
    }
    match status.code() {
        Some(c) => format!("exited with code {c}"),
        None => "ended abnormally".to_string(),
    }
}
