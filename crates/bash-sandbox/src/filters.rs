//! The seccomp filters a confinement installs: the network denial, the port fence's
//! complement (the ways to reach a TCP port that Landlock's connect rules do not see), and
//! the signal guard (the harness's own processes and threads cannot be signalled).

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// `AF_SMC`: SMC sockets fall back to TCP.
const AF_SMC: u64 = 43;

fn error(error: impl std::fmt::Display) -> String {
    format!("cannot build a seccomp filter: {error}")
}

/// A filter refusing (with `EPERM`) the syscalls of `rules` that match; everything else is
/// allowed. A process of another architecture than this build's is killed by the filter's
/// architecture check.
fn refusing(rules: BTreeMap<i64, Vec<SeccompRule>>) -> Result<BpfProgram, String> {
    let eperm = u32::try_from(libc::EPERM).map_err(error)?;
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(error)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(eperm),
        arch,
    )
    .map_err(error)?;
    BpfProgram::try_from(filter).map_err(error)
}

fn arg(index: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value).map_err(error)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(error)
}

/// The network denial: `socket(domain != AF_UNIX, …)` and `io_uring_setup` (which could
/// open sockets past the filter) fail.
pub fn network_filter() -> Result<BpfProgram, String> {
    let unix = u64::try_from(libc::AF_UNIX).map_err(error)?;
    refusing(BTreeMap::from([
        (
            libc::SYS_socket,
            vec![rule(vec![arg(0, SeccompCmpOp::Ne, unix)?])?],
        ),
        (libc::SYS_io_uring_setup, Vec::new()),
    ]))
}

/// What a port fence needs besides Landlock's connect rules: Landlock governs `connect(2)`
/// on TCP sockets, so MPTCP and SMC sockets (which fall back to TCP), TCP Fast Open
/// (`MSG_FASTOPEN` connects from `sendto`/`sendmsg`), and io_uring are refused.
pub fn fence_filter() -> Result<BpfProgram, String> {
    let mptcp = u64::try_from(libc::IPPROTO_MPTCP).map_err(error)?;
    let fast_open = u64::try_from(libc::MSG_FASTOPEN).map_err(error)?;
    let fast_open_at = |index| -> Result<Vec<SeccompRule>, String> {
        Ok(vec![rule(vec![arg(
            index,
            SeccompCmpOp::MaskedEq(fast_open),
            fast_open,
        )?])?])
    };
    refusing(BTreeMap::from([
        (
            libc::SYS_socket,
            vec![
                rule(vec![arg(2, SeccompCmpOp::Eq, mptcp)?])?,
                rule(vec![arg(0, SeccompCmpOp::Eq, AF_SMC)?])?,
            ],
        ),
        (libc::SYS_sendto, fast_open_at(3)?),
        (libc::SYS_sendmsg, fast_open_at(2)?),
        (libc::SYS_sendmmsg, fast_open_at(3)?),
        (libc::SYS_io_uring_setup, Vec::new()),
    ]))
}

/// The processes and threads of the harness a confined command must not signal: each is
/// refused as the target of `kill`, `tgkill`, `rt_sigqueueinfo` and `rt_tgsigqueueinfo`;
/// `kill(-1)` and `kill(-<group>)` of the harness's process group too. `tkill` and
/// `pidfd_send_signal` (whose targets a filter cannot see) are refused outright; callers
/// such as runtimes that prefer pidfds fall back to `kill`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignalGuard {
    /// Process or thread ids (the harness, its orphan guard, the launch thread itself).
    pub ids: Vec<u32>,
    /// The harness's process group.
    pub group: Option<u32>,
}

impl SignalGuard {
    /// The harness's process, its process group and its orphan guard (starting the guard
    /// if it is not up yet, so call this on a thread without confinement).
    pub fn of_harness() -> Self {
        let mut ids = vec![std::process::id()];
        ids.extend(dsh_shell::guard_pid());
        Self {
            ids,
            group: u32::try_from(nix::unistd::getpgrp().as_raw()).ok(),
        }
    }

    /// Also the calling thread (a launch thread, which its children share a Landlock domain
    /// with, so Landlock's signal scoping lets them reach it).
    #[must_use]
    pub fn and_this_thread(mut self) -> Self {
        if let Ok(tid) = u32::try_from(nix::unistd::gettid().as_raw()) {
            self.ids.push(tid);
        }
        self.ids.sort_unstable();
        self.ids.dedup();
        self
    }

    /// The filter.
    pub fn filter(&self) -> Result<BpfProgram, String> {
        let target = |index: u8, id: u32| -> Result<SeccompRule, String> {
            rule(vec![arg(index, SeccompCmpOp::Eq, u64::from(id))?])
        };
        let mut kill = Vec::new();
        let mut by_id = Vec::new();
        for id in &self.ids {
            kill.push(target(0, *id)?);
            by_id.push(target(0, *id)?);
        }
        // kill(-1): every process of the user; kill(-pgid): the harness's group.
        kill.push(target(0, u32::MAX)?);
        if let Some(group) = self.group {
            kill.push(target(0, group.wrapping_neg())?);
        }
        refusing(BTreeMap::from([
            (libc::SYS_kill, kill),
            (libc::SYS_tgkill, by_id.clone()),
            (libc::SYS_rt_sigqueueinfo, by_id.clone()),
            (libc::SYS_rt_tgsigqueueinfo, by_id),
            (libc::SYS_tkill, Vec::new()),
            (libc::SYS_pidfd_send_signal, Vec::new()),
        ]))
    }
}

/// Installs `program` on the calling thread (and, through fork, everything it starts).
pub fn install(program: &BpfProgram, what: &str) -> Result<(), String> {
    seccompiler::apply_filter(program)
        .map_err(|error| format!("cannot install the {what}: {error}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_compile() {
        assert!(!network_filter().unwrap().is_empty());
        assert!(!fence_filter().unwrap().is_empty());
        let guard = SignalGuard::of_harness().and_this_thread();
        assert!(guard.ids.contains(&std::process::id()));
        assert!(
            guard.ids.len() >= 2,
            "the calling thread is not the main one"
        );
        assert!(!guard.filter().unwrap().is_empty());
    }
}
