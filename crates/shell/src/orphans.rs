//! The orphan guard: the process groups this harness spawned die with it, even when it is
//! killed with SIGKILL and has no chance to clean up.
//!
//! One small watchdog per process (`bash` running [`GUARD_SCRIPT`], in a process group of
//! its own, ignoring the terminal's signals) reads `+<pgid>` and `-<pgid>` lines on a pipe
//! whose only writer is this process (and, until they exec, its children). The pipe reaches
//! end-of-file when this process is gone, however it ended; the watchdog then sends SIGKILL
//! to every group still registered and exits. Each child registers its own group between
//! `fork` and `exec`, so no group escapes a harness killed mid-spawn; the harness withdraws
//! it once it is seen gone, so a reused group id is never hit. A process that left its group
//! (`setsid`) is not covered.

use std::io::Write;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};

use nix::fcntl::{FcntlArg, OFlag, fcntl};

/// The watchdog's program: keep the set of live groups; at end of input, kill them all.
pub const GUARD_SCRIPT: &str = r#"trap '' HUP INT TERM QUIT TSTP TTIN TTOU PIPE
declare -A groups=()
while IFS= read -r line; do
  case $line in
    +*) groups[${line#+}]=1 ;;
    -*) unset "groups[${line#-}]" ;;
  esac
done
for pgid in "${!groups[@]}"; do kill -KILL -- "-$pgid" 2>/dev/null; done"#;

struct Guard {
    child: Child,
    input: ChildStdin,
}

/// The process's guard: started on first use; `None` once it could not start or died.
fn guard() -> &'static Mutex<Option<Guard>> {
    static GUARD: OnceLock<Mutex<Option<Guard>>> = OnceLock::new();
    GUARD.get_or_init(|| Mutex::new(start()))
}

fn start() -> Option<Guard> {
    let spawned = Command::new("bash")
        .args(["-c", GUARD_SCRIPT, "dsh-orphan-guard"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => {
            tracing::warn!(
                "cannot start the orphan guard (bash): {error}; commands may outlive dsh \
                 if it is killed"
            );
            return None;
        }
    };
    let input = child.stdin.take()?;
    // A stalled guard must never stall the harness: registrations that do not fit are
    // dropped rather than waited for.
    let _ = fcntl(input.as_fd(), FcntlArg::F_SETFL(OFlag::O_NONBLOCK));
    Some(Guard { child, input })
}

fn send(line: &str) {
    let mut slot = guard().lock().unwrap_or_else(PoisonError::into_inner);
    let Some(guard) = slot.as_mut() else {
        return;
    };
    if let Err(error) = guard.input.write_all(line.as_bytes()) {
        if error.kind() == std::io::ErrorKind::WouldBlock {
            tracing::warn!("the orphan guard is not reading; {line:?} was not registered");
            return;
        }
        tracing::warn!("the orphan guard is gone ({error}); commands may outlive dsh");
        let _ = guard.child.try_wait();
        *slot = None;
    }
}

/// Starts the guard in the background, if it is not running yet, so that it is up before the
/// first command (registering a group right after its spawn is then only a write) without
/// delaying the caller.
pub(crate) fn start_guard() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("dsh-orphan-guard".to_owned())
            .spawn(|| {
                guard();
            });
    });
}

/// The descriptor a child writes its own `+<pgid>` line to, between `fork` and `exec`
/// (see `child_reset`): registered before it can run anything, so even a harness killed in
/// the middle of a spawn leaves no group behind. Waits until the guard is up (it normally
/// is: [`start_guard`] ran when the runner was made); `None` without a guard.
pub(crate) fn guard_input() -> Option<i32> {
    let slot = guard().lock().unwrap_or_else(PoisonError::into_inner);
    slot.as_ref().map(|guard| guard.input.as_raw_fd())
}

/// Withdraws process group `pgid` (it is gone).
pub(crate) fn withdraw(pgid: i32) {
    if pgid > 0 {
        send(&format!("-{pgid}\n"));
    }
}
