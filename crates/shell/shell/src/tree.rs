//! A command's process tree: the session its direct child leads (each command is spawned as
//! a session leader, so its process group and its session have the child's pid as id).
//!
//! Liveness is `kill(-pgid, 0)`, and once the direct child is reaped and the group is gone,
//! whether any process of its session can still run: a process that left the group
//! (`setpgid`, as `timeout` or a shell's job control do) is still part of the tree; one that
//! left the session (`setsid`) is not. A group whose remaining members are all zombies
//! counts as dead on Linux (their parent may never reap them, and they can run nothing).
//! Once the tree is seen dead it is never signalled again, so a reused id is safe.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use dsh_kernel::sync::lock;
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
        waited_children().remove(&self.pgid);
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

    /// Whether any process of the tree can still run.
    pub(crate) fn alive(&self) -> bool {
        if self.exited() || self.pgid <= 0 {
            return false;
        }
        let reaped = self.reaped.load(Ordering::SeqCst);
        if reaped {
            reap_group(self.pgid);
        }
        let group = match killpg(Pid::from_raw(self.pgid), None) {
            Ok(()) => !reaped || has_live_member(self.pgid, |stat| stat.group) != Some(false),
            Err(Errno::ESRCH) => false,
            Err(Errno::EPERM) => true,
            Err(_) => !reaped,
        };
        // While the leader lives the group does too (a session leader cannot leave it).
        group || (reaped && session_outlives_group(self.pgid))
    }

    /// Sends `signal` to the group and to every process of its session that left it if the
    /// tree is alive, falling back to the direct child when the group cannot be signalled.
    /// Returns whether the tree was alive.
    pub(crate) fn signal(&self, signal: Signal) -> bool {
        if !self.alive() {
            return false;
        }
        if killpg(Pid::from_raw(self.pgid), signal).is_err() && !self.reaped.load(Ordering::SeqCst)
        {
            let _ = kill(Pid::from_raw(self.pgid), signal);
        }
        signal_strays(self.pgid, signal);
        true
    }
}

/// Our direct children whose own waiter reaps them: never taken by [`reap_adopted`].
static WAITED: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// The set of direct children with a waiter; hold it across a spawn and add the child, so
/// no sweep takes it in between.
pub(crate) fn waited_children() -> MutexGuard<'static, BTreeSet<i32>> {
    lock(&WAITED)
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
    reap_adopted();
}

/// Collects exited children handed to us from outside our own session: descendants of a
/// command (each command leads a session of its own) that outlived it, including daemons
/// that called `setsid` (`ssh -f`, an agent). Nothing else waits for them. Our direct
/// children with a waiter of their own are left to it ([`waited_children`]); processes
/// this harness starts otherwise stay in its session and are not taken either.
fn reap_adopted() {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::wait::{WaitPidFlag, waitpid};
        let own = std::process::id();
        let Ok(own_session) = nix::unistd::getsid(None) else {
            return;
        };
        let waited = waited_children();
        let candidates: Vec<(i32, Stat)> = match adopted_children() {
            Some(children) => children,
            None => processes().filter(|(_, stat)| stat.parent == own).collect(),
        };
        for (pid, stat) in candidates {
            if stat.state == 'Z' && stat.session != own_session.as_raw() && !waited.contains(&pid) {
                let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
            }
        }
    }
}

/// Whether a process of session `session` still runs once its group is gone. Each such
/// process descends from the group, so the outermost of them lost its parent and was handed
/// to us (the subreaper): looking among our own children is enough, and far cheaper than a
/// walk over `/proc`, which is the fallback where the kernel does not list children.
fn session_outlives_group(session: i32) -> bool {
    match adopted_children() {
        Some(children) => children
            .iter()
            .any(|(_, stat)| stat.session == session && !matches!(stat.state, 'Z' | 'X' | 'x')),
        None => has_live_member(session, |stat| stat.session) == Some(true),
    }
}

/// The children of this process's main thread (where the kernel hands orphans to a
/// subreaper), with their stat; `None` where `/proc` does not list children.
fn adopted_children() -> Option<Vec<(i32, Stat)>> {
    let own = std::process::id();
    let listed = std::fs::read_to_string(format!("/proc/{own}/task/{own}/children")).ok()?;
    Some(
        listed
            .split_whitespace()
            .filter_map(|pid| pid.parse::<i32>().ok())
            .filter_map(|pid| Some((pid, read_stat(pid)?)))
            .collect(),
    )
}

/// Sends `signal` to each process group of session `session` but the one of the same id
/// (which `killpg` reached already): a group signalled as a whole takes along what its
/// members fork meanwhile, and cannot reach past the session (a group never spans two).
fn signal_strays(session: i32, signal: Signal) {
    let groups: BTreeSet<i32> = processes()
        .filter(|(_, stat)| stat.session == session && stat.group != session)
        .map(|(_, stat)| stat.group)
        .collect();
    for group in groups {
        let _ = killpg(Pid::from_raw(group), signal);
    }
}

/// Whether group `pgid` has a process that can still run: `kill(-pgid, 0)`, and on Linux a
/// group holding only zombies counts as gone.
pub fn process_group_alive(pgid: i32) -> bool {
    if pgid <= 0 {
        return false;
    }
    match killpg(Pid::from_raw(pgid), None) {
        Ok(()) => has_live_member(pgid, |stat| stat.group) != Some(false),
        Err(Errno::ESRCH) => false,
        Err(_) => true,
    }
}

/// On Linux: `Some(true)` when a process whose `id_of` is `id` is not a zombie,
/// `Some(false)` when none is (or none is left), `None` when `/proc` cannot be read.
/// Elsewhere always `None`.
fn has_live_member(id: i32, id_of: impl Fn(&Stat) -> i32) -> Option<bool> {
    if !cfg!(target_os = "linux") || std::fs::metadata("/proc/self/stat").is_err() {
        return None;
    }
    Some(processes().any(|(_, stat)| id_of(&stat) == id && !matches!(stat.state, 'Z' | 'X' | 'x')))
}

/// What `/proc/<pid>/stat` says about one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    state: char,
    parent: u32,
    group: i32,
    session: i32,
}

/// Every process listed in `/proc`, with its stat (those gone meanwhile are skipped).
fn processes() -> impl Iterator<Item = (i32, Stat)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, read_stat(pid)?)))
}

fn read_stat(pid: i32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// A `/proc/<pid>/stat` line (the command name may hold spaces and parentheses, so fields
/// are counted from the last `)`).
fn parse_stat(line: &str) -> Option<Stat> {
    let (_, rest) = line.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some(Stat {
        state,
        parent,
        group,
        session,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_lines_with_odd_names() {
        assert_eq!(
            parse_stat("1234 (sleep) S 1 1234 1230 0 -1 4194560 95 0"),
            Some(Stat {
                state: 'S',
                parent: 1,
                group: 1234,
                session: 1230
            })
        );
        assert_eq!(
            parse_stat("77 (a) b (c)) Z 5 70 71 0").map(|stat| (stat.state, stat.group)),
            Some(('Z', 70))
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn a_group_that_never_existed_is_dead() {
        assert!(!process_group_alive(0));
        assert!(!process_group_alive(-3));
        assert!(!ProcessTree::new(0).alive());
    }

    #[test]
    fn our_own_group_and_session_are_alive() {
        let own = nix::unistd::getpgrp().as_raw();
        assert!(process_group_alive(own));
        let linux = cfg!(target_os = "linux").then_some(true);
        assert_eq!(has_live_member(own, |stat| stat.group), linux);
        let session = nix::unistd::getsid(None).unwrap().as_raw();
        assert_eq!(has_live_member(session, |stat| stat.session), linux);
    }
}
