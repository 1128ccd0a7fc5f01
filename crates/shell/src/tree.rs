//! A command's process tree: the process group its direct child leads.
//!
//! Liveness is `kill(-pgid, 0)`. Once the direct child is reaped, a group whose remaining
//! members are all zombies counts as dead on Linux (their parent may never reap them, and
//! they can run nothing). Once the tree is seen dead it is never signalled again, so a
//! reused group id is safe.

use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// The process group of one spawned command.
#[derive(Debug)]
pub(crate) struct ProcessTree {
    pgid: i32,
    reaped: AtomicBool,
    exited: AtomicBool,
}

impl ProcessTree {
    pub(crate) fn new(pgid: i32) -> Self {
        Self {
            pgid,
            reaped: AtomicBool::new(false),
            exited: AtomicBool::new(false),
        }
    }

    /// The group id (the direct child's pid).
    pub(crate) fn pgid(&self) -> i32 {
        self.pgid
    }

    /// Records that the direct child was reaped.
    pub(crate) fn mark_reaped(&self) {
        self.reaped.store(true, Ordering::SeqCst);
    }

    /// Records that the whole tree was seen gone: no signal is sent after this.
    pub(crate) fn mark_exited(&self) {
        self.exited.store(true, Ordering::SeqCst);
    }

    /// Whether the whole tree was seen gone.
    pub(crate) fn exited(&self) -> bool {
        self.exited.load(Ordering::SeqCst)
    }

    /// Whether any process of the group can still run.
    pub(crate) fn alive(&self) -> bool {
        if self.exited() || self.pgid <= 0 {
            return false;
        }
        let reaped = self.reaped.load(Ordering::SeqCst);
        if reaped {
            reap_group(self.pgid);
        }
        match killpg(Pid::from_raw(self.pgid), None) {
            Ok(()) => !reaped || group_has_live_members(self.pgid) != Some(false),
            Err(Errno::ESRCH) => false,
            Err(Errno::EPERM) => true,
            Err(_) => !reaped,
        }
    }

    /// Sends `signal` to the group if it is alive, falling back to the direct child when the
    /// group cannot be signalled. Returns whether the tree was alive.
    pub(crate) fn signal(&self, signal: Signal) -> bool {
        if !self.alive() {
            return false;
        }
        if killpg(Pid::from_raw(self.pgid), signal).is_err() && !self.reaped.load(Ordering::SeqCst)
        {
            let _ = kill(Pid::from_raw(self.pgid), signal);
        }
        true
    }
}

/// Makes this process the reaper of its orphaned descendants (Linux), once: a command's
/// grandchildren that outlive it then become our children, so [`reap_group`] can collect
/// them instead of leaving zombies to an init that may never reap them.
pub(crate) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            if let Err(error) = nix::sys::prctl::set_child_subreaper(true) {
                tracing::debug!("cannot become the child subreaper: {error}");
            }
        });
    }
}

/// Collects the exited members of group `pgid` that are our children (orphans handed to us
/// as subreaper). Only called once the group's leader was reaped by its own waiter, so no
/// child another waiter expects is taken.
fn reap_group(pgid: i32) {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    while let Ok(status) = waitpid(Pid::from_raw(-pgid), Some(WaitPidFlag::WNOHANG)) {
        if status == WaitStatus::StillAlive {
            break;
        }
    }
    reap_adopted_sessions();
}

/// Collects exited children handed to us that left our session (daemons that called
/// `setsid`, such as `ssh -f` or an agent): they belong to no group we watch, and nothing
/// else waits for them. Every process this harness spawns stays in its session, so no child
/// another waiter expects is taken.
fn reap_adopted_sessions() {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::wait::{WaitPidFlag, waitpid};
        let own = std::process::id();
        let Ok(own_sid) = nix::unistd::getsid(None) else {
            return;
        };
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|name| name.parse::<i32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let Some((state, parent, session)) = zombie_facts(&stat) else {
                continue;
            };
            if state == 'Z' && parent == own && session != own_sid.as_raw() {
                let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
            }
        }
    }
}

/// `(state, ppid, session)` of a `/proc/<pid>/stat` line.
fn zombie_facts(stat: &str) -> Option<(char, u32, i32)> {
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    let _group: i32 = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some((state, parent, session))
}

/// Whether process group `pgid` has a process that can still run: `kill(-pgid, 0)`, and on
/// Linux a group holding only zombies counts as gone.
pub fn process_group_alive(pgid: i32) -> bool {
    if pgid <= 0 {
        return false;
    }
    match killpg(Pid::from_raw(pgid), None) {
        Ok(()) => group_has_live_members(pgid) != Some(false),
        Err(Errno::ESRCH) => false,
        Err(_) => true,
    }
}

/// On Linux: `Some(true)` when a member of group `pgid` is not a zombie, `Some(false)` when
/// every member is one or none is left (the group emptied after `kill(-pgid, 0)` answered),
/// `None` when `/proc` cannot be read. Elsewhere always `None`.
fn group_has_live_members(pgid: i32) -> Option<bool> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let entries = std::fs::read_dir("/proc").ok()?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((state, group)) = parse_stat(&stat) else {
            continue;
        };
        if group == pgid && !matches!(state, 'Z' | 'X' | 'x') {
            return Some(true);
        }
    }
    Some(false)
}

/// The state and process group of a `/proc/<pid>/stat` line (the command name may hold
/// spaces and parentheses, so fields are counted from the last `)`).
fn parse_stat(line: &str) -> Option<(char, i32)> {
    let (_, rest) = line.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _parent = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    Some((state, group))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_lines_with_odd_names() {
        assert_eq!(
            parse_stat("1234 (sleep) S 1 1234 1234 0 -1 4194560 95 0"),
            Some(('S', 1234))
        );
        assert_eq!(parse_stat("77 (a) b (c)) Z 5 70 70 0"), Some(('Z', 70)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn a_group_that_never_existed_is_dead() {
        assert!(!process_group_alive(0));
        assert!(!process_group_alive(-3));
        assert!(!ProcessTree::new(0).alive());
    }

    #[test]
    fn our_own_group_is_alive() {
        let own = nix::unistd::getpgrp().as_raw();
        assert!(process_group_alive(own));
        assert_eq!(
            group_has_live_members(own),
            cfg!(target_os = "linux").then_some(true)
        );
    }
}
