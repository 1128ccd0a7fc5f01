//! The orphan guard: the commands this harness spawned die with it, even when it is killed
//! with SIGKILL and has no chance to clean up.
//!
//! One small watchdog per process (the system's `bash` running [`GUARD_SCRIPT`], in a
//! process group of its own, with an empty environment, ignoring the terminal's signals)
//! reads `+<id>` and `-<id>` lines on a pipe whose only writer is this process (and, until
//! they exec, its children). The pipe reaches end-of-file when this process is gone, however
//! it ended; the watchdog then sends SIGKILL to every process group still registered and to
//! every process of the sessions of the same ids (each command leads a session of its own,
//! so a process that left its command's group, as `timeout` does, is found too), and exits.
//!
//! Each child registers its own id between `fork` and `exec`, so no command escapes a
//! harness killed mid-spawn; the harness withdraws it once it is seen gone. The watchdog
//! notes the start time of each leader when it registers, and at the end spares an id that
//! now belongs to a process started later (a reused id). A process that left its session
//! (`setsid`) is not covered.

use std::io::Write;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use dsh_kernel::sync::lock;
use nix::fcntl::{FcntlArg, OFlag, fcntl};

/// The watchdog's program: keep the live ids and their leaders' start times; at end of
/// input, kill each group whose id was not taken by a newer process meanwhile, then (twice,
/// for what forked meanwhile) each process of those sessions that left its group.
pub const GUARD_SCRIPT: &str = r#"trap '' HUP INT TERM QUIT TSTP TTIN TTOU PIPE
started() { local s; read -r s < "/proc/$1/stat" 2>/dev/null || return; s=${s##*) }; set -- $s; echo "${20}"; }
declare -A groups=() doomed=()
while IFS= read -r line; do
  case $line in
    +*) id=${line#+}; groups[$id]="$(started "$id")-" ;;
    -*) unset "groups[${line#-}]" ;;
  esac
done
for id in "${!groups[@]}"; do
  now=$(started "$id")
  if [ -z "$now" ] || [ "$now-" = "${groups[$id]}" ]; then doomed[$id]=1; kill -KILL -- "-$id" 2>/dev/null; fi
done
[ ${#doomed[@]} -eq 0 ] && exit 0
for pass in 1 2; do
  for stat in /proc/[0-9]*/stat; do
    read -r s < "$stat" 2>/dev/null || continue
    pid=${stat#/proc/}; pid=${pid%/stat}; s=${s##*) }; set -- $s
    [ -n "${doomed[$4]}" ] && kill -KILL "$pid" 2>/dev/null
  done
done"#;

/// The running watchdog. Its input is never closed while this process lives, even when the
/// watchdog died: children may hold its descriptor number, which must not be reused.
struct Guard {
    child: Child,
    input: ChildStdin,
    alive: bool,
}

/// The process's guard: started on first use; `None` when it could not start.
fn guard() -> &'static Mutex<Option<Guard>> {
    static GUARD: OnceLock<Mutex<Option<Guard>>> = OnceLock::new();
    GUARD.get_or_init(|| Mutex::new(start()))
}

fn start() -> Option<Guard> {
    // The system's bash, never one found through PATH (where a command may have planted
    // one), in an empty environment: the watchdog holds none of this process's secrets.
    let Some(bash) = crate::system_program("bash") else {
        tracing::warn!(
            "cannot start the orphan guard: no bash owned by root in {}; commands may \
             outlive dsh if it is killed",
            crate::SYSTEM_PROGRAM_DIRS.join(", ")
        );
        return None;
    };
    let spawned = Command::new(&bash)
        .args(["-c", GUARD_SCRIPT, "dsh-orphan-guard"])
        .env_clear()
        .env("PATH", crate::system_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => {
            tracing::warn!(
                "cannot start the orphan guard ({}): {error}; commands may outlive dsh if \
                 it is killed",
                bash.display()
            );
            return None;
        }
    };
    let input = child.stdin.take()?;
    // A stalled guard must never stall the harness: registrations that do not fit are
    // dropped rather than waited for.
    let _ = fcntl(input.as_fd(), FcntlArg::F_SETFL(OFlag::O_NONBLOCK));
    Some(Guard {
        child,
        input,
        alive: true,
    })
}

fn send(line: &str) {
    let mut slot = lock(guard());
    let Some(guard) = slot.as_mut().filter(|guard| guard.alive) else {
        return;
    };
    if let Err(error) = guard.input.write_all(line.as_bytes()) {
        if error.kind() == std::io::ErrorKind::WouldBlock {
            tracing::warn!(
                "the orphan guard is not reading, so it did not get `{}`: that command may \
                 outlive dsh if dsh is killed",
                line.trim_end()
            );
            return;
        }
        tracing::warn!("the orphan guard is gone ({error}); commands may outlive dsh");
        let _ = guard.child.try_wait();
        guard.alive = false;
    }
}

/// Starts the guard in the background, if it is not running yet, so that it is up before the
/// first command without delaying the caller. Call it from a thread that holds no
/// confinement: the watchdog inherits the credentials of the thread that starts it.
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
/// the middle of a spawn leaves no group behind. Starts the guard if needed (so call it on a
/// thread without confinement, never on a launch thread); `None` without a live guard.
pub(crate) fn guard_input() -> Option<i32> {
    let slot = lock(guard());
    slot.as_ref()
        .filter(|guard| guard.alive)
        .map(|guard| guard.input.as_raw_fd())
}

/// The guard's process id, when it runs (confined commands may not signal it).
pub fn guard_pid() -> Option<u32> {
    let slot = lock(guard());
    slot.as_ref()
        .filter(|guard| guard.alive)
        .map(|guard| guard.child.id())
}

/// Withdraws process group `pgid` (it is gone).
pub(crate) fn withdraw(pgid: i32) {
    if pgid > 0 {
        send(&format!("-{pgid}\n"));
    }
}
