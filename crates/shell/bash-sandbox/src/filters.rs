//! The seccomp filters a confinement installs: the network denial, the port fence's
//! complement (the ways to reach a TCP port that Landlock's connect rules do not see), and
//! the harness guard (the harness's own processes and threads cannot be signalled,
//! throttled or limited, and no file is opened by handle).

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

/// `AF_SMC`: SMC sockets fall back to TCP.
const AF_SMC: u64 = 43;

/// `IPPROTO_SMC` (Linux 6.11): an `AF_INET` or `AF_INET6` socket of this protocol is an SMC
/// socket.
const IPPROTO_SMC: u64 = 256;

/// The socket type bits of `socket(2)`'s second argument (the rest are flags).
const SOCK_TYPE_MASK: u64 = 0xf;

fn error(error: impl std::fmt::Display) -> String {
    format!("cannot build a seccomp filter: {error}")
}

/// A filter refusing (with `EPERM`) the syscalls of `rules` that match; everything else is
/// allowed. A process of another architecture than this build's is killed by the filter's
/// architecture check, and on x86_64 every x32 system call is refused: x32 calls carry the
/// x86_64 architecture but their own numbers (`__X32_SYSCALL_BIT` set), which no rule names,
/// so a kernel with x32 enabled would otherwise let them past every rule.
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
    let mut program = BpfProgram::try_from(filter).map_err(error)?;
    if cfg!(target_arch = "x86_64") {
        refuse_x32_after_arch_check(&mut program, eperm);
    }
    Ok(program)
}

/// `__X32_SYSCALL_BIT` (`asm/unistd.h`).
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The length of seccompiler's architecture check, which opens every program it builds:
/// load the architecture, compare, kill on mismatch.
const ARCH_CHECK_LEN: usize = 3;

/// Inserts, right after the architecture check, `if nr >= __X32_SYSCALL_BIT: return
/// ERRNO(errno)`. Later jumps are relative and start after the insertion, so none moves.
fn refuse_x32_after_arch_check(program: &mut BpfProgram, errno: u32) {
    const BPF_LD_W_ABS: u16 = 0x20;
    const BPF_JGE_K: u16 = 0x35;
    const BPF_RET_K: u16 = 0x06;
    let at = ARCH_CHECK_LEN.min(program.len());
    let check = [
        sock_filter {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0, // seccomp_data.nr
        },
        sock_filter {
            code: BPF_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | errno,
        },
    ];
    program.splice(at..at, check);
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
/// (`MSG_FASTOPEN` connects from `sendto`/`sendmsg`), and io_uring are refused; and so are
/// packet and raw IP sockets, which could read or forge the fenced port's loopback traffic
/// (a confined command holds no `CAP_NET_RAW` either). Netlink sockets stay open.
pub fn fence_filter() -> Result<BpfProgram, String> {
    let mptcp = u64::try_from(libc::IPPROTO_MPTCP).map_err(error)?;
    let packet = u64::try_from(libc::AF_PACKET).map_err(error)?;
    let raw = u64::try_from(libc::SOCK_RAW).map_err(error)?;
    let (inet, inet6) = (
        u64::try_from(libc::AF_INET).map_err(error)?,
        u64::try_from(libc::AF_INET6).map_err(error)?,
    );
    // Raw IP sockets only: netlink's are raw too, and `ip`, `ss` and `getifaddrs` need them.
    let raw_of = |family: u64| -> Result<SeccompRule, String> {
        rule(vec![
            arg(0, SeccompCmpOp::Eq, family)?,
            arg(1, SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK), raw)?,
        ])
    };
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
                rule(vec![arg(2, SeccompCmpOp::Eq, IPPROTO_SMC)?])?,
                rule(vec![arg(0, SeccompCmpOp::Eq, AF_SMC)?])?,
                rule(vec![arg(0, SeccompCmpOp::Eq, packet)?])?,
                raw_of(inet)?,
                raw_of(inet6)?,
            ],
        ),
        (libc::SYS_sendto, fast_open_at(3)?),
        (libc::SYS_sendmsg, fast_open_at(2)?),
        (libc::SYS_sendmmsg, fast_open_at(3)?),
        (libc::SYS_io_uring_setup, Vec::new()),
    ]))
}

/// What a confined command may not do to the harness's own processes and threads, or to
/// files past its path rules: a filter refusing (`EPERM`)
///
/// - signals to them: `kill`, `tgkill` and the `rt_*sigqueueinfo` calls aimed at one of
///   [`HarnessGuard::ids`], `kill(-1)` and `kill(-<group>)`; `tkill` and
///   `pidfd_send_signal` outright (a filter cannot see their targets; callers such as
///   runtimes that prefer pidfds fall back to `kill`);
/// - signals by proxy: `fcntl(F_SETOWN)` naming one of them (the kernel would send `SIGIO`
///   or `SIGURG` there later), and `F_SETOWN_EX`, `FIOSETOWN` and `SIOCSPGRP` outright
///   (their targets sit behind a pointer);
/// - their resource limits (`prlimit64` setting a limit of another process: the calling
///   process's own, pid 0, stay settable, and reading any stays allowed), their scheduling
///   and I/O priority (`setpriority`, `ioprio_set`, the `sched_set*` calls aimed at one of
///   them, or at every process of the user);
/// - `open_by_handle_at`, which opens a file by its inode, past every path rule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HarnessGuard {
    /// Process or thread ids (the harness, its orphan guard, the launch thread itself).
    pub ids: Vec<u32>,
    /// Process groups (the harness's, and the orphan guard's own).
    pub groups: Vec<u32>,
}

/// `setpriority(2)`'s and `ioprio_set(2)`'s kinds of target.
const PRIO_PROCESS: u32 = 0;
const PRIO_PGRP: u32 = 1;
const PRIO_USER: u32 = 2;
const IOPRIO_WHO_PROCESS: u32 = 1;
const IOPRIO_WHO_PGRP: u32 = 2;
const IOPRIO_WHO_USER: u32 = 3;

/// `fcntl(2)`'s `F_SETOWN_EX` (`linux/fcntl.h`), which names a thread behind a pointer.
const F_SETOWN_EX: u32 = 15;

/// `ioctl` requests that make a process the owner of a socket's signals (`linux/sockios.h`).
const FIOSETOWN: u32 = 0x8901;
const SIOCSPGRP: u32 = 0x8902;

impl HarnessGuard {
    /// The harness's process, its process group and its orphan guard (starting the guard
    /// if it is not up yet, so call this on a thread without confinement).
    pub fn of_harness() -> Self {
        let guard = dsh_shell::guard_pid();
        let mut ids = vec![std::process::id()];
        ids.extend(guard);
        let mut groups: Vec<u32> = u32::try_from(nix::unistd::getpgrp().as_raw())
            .ok()
            .into_iter()
            .collect();
        // The guard leads a process group of its own.
        groups.extend(guard);
        groups.sort_unstable();
        groups.dedup();
        Self { ids, groups }
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
        let eq = |index: u8, value: u32| arg(index, SeccompCmpOp::Eq, u64::from(value));
        let at = |index: u8, id: u32| -> Result<SeccompRule, String> { rule(vec![eq(index, id)?]) };
        let of_ids = |index: u8| -> Result<Vec<SeccompRule>, String> {
            self.ids.iter().map(|id| at(index, *id)).collect()
        };
        // kill(-1): every process of the user.
        let mut kill = of_ids(0)?;
        kill.push(at(0, u32::MAX)?);
        let set_owner = u32::try_from(libc::F_SETOWN).map_err(error)?;
        let mut fcntl = self
            .ids
            .iter()
            .map(|id| pair_at(1, set_owner, 2, *id))
            .collect::<Result<Vec<_>, _>>()?;
        fcntl.push(at(1, F_SETOWN_EX)?);
        let mut priority = vec![rule(vec![eq(0, PRIO_USER)?])?];
        let mut io_priority = vec![rule(vec![eq(0, IOPRIO_WHO_USER)?])?];
        for id in &self.ids {
            priority.push(pair_at(0, PRIO_PROCESS, 1, *id)?);
            io_priority.push(pair_at(0, IOPRIO_WHO_PROCESS, 1, *id)?);
        }
        // A group is named negated to kill(2) and F_SETOWN.
        for group in &self.groups {
            kill.push(at(0, group.wrapping_neg())?);
            fcntl.push(pair_at(1, set_owner, 2, group.wrapping_neg())?);
            priority.push(pair_at(0, PRIO_PGRP, 1, *group)?);
            io_priority.push(pair_at(0, IOPRIO_WHO_PGRP, 1, *group)?);
        }
        let another_process = rule(vec![
            arg(0, SeccompCmpOp::Ne, 0)?,
            SeccompCondition::new(2, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)
                .map_err(error)?,
        ])?;
        refusing(BTreeMap::from([
            (libc::SYS_kill, kill),
            (libc::SYS_tgkill, of_ids(0)?),
            (libc::SYS_rt_sigqueueinfo, of_ids(0)?),
            (libc::SYS_rt_tgsigqueueinfo, of_ids(0)?),
            (libc::SYS_tkill, Vec::new()),
            (libc::SYS_pidfd_send_signal, Vec::new()),
            (libc::SYS_fcntl, fcntl),
            (libc::SYS_ioctl, vec![at(1, FIOSETOWN)?, at(1, SIOCSPGRP)?]),
            (libc::SYS_prlimit64, vec![another_process]),
            (libc::SYS_setpriority, priority),
            (libc::SYS_ioprio_set, io_priority),
            (libc::SYS_sched_setscheduler, of_ids(0)?),
            (libc::SYS_sched_setparam, of_ids(0)?),
            (libc::SYS_sched_setattr, of_ids(0)?),
            (libc::SYS_sched_setaffinity, of_ids(0)?),
            (libc::SYS_open_by_handle_at, Vec::new()),
        ]))
    }
}

/// A rule matching argument `first` equal to `a` and argument `second` equal to `b`.
fn pair_at(first: u8, a: u32, second: u8, b: u32) -> Result<SeccompRule, String> {
    rule(vec![
        arg(first, SeccompCmpOp::Eq, u64::from(a))?,
        arg(second, SeccompCmpOp::Eq, u64::from(b))?,
    ])
}

/// Installs `program` on the calling thread (and, through fork, everything it starts).
pub fn install(program: &BpfProgram, what: &str) -> Result<(), String> {
    seccompiler::apply_filter(program)
        .map_err(|error| format!("cannot install the {what}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn every_filter_refuses_x32_calls_right_after_its_architecture_check() {
        let programs = [
            network_filter().unwrap(),
            fence_filter().unwrap(),
            HarnessGuard::of_harness().filter().unwrap(),
        ];
        for program in programs {
            // seccompiler's check: load the architecture, compare, kill.
            assert_eq!(program[0].k, 4, "the architecture's offset in seccomp_data");
            assert_eq!(program[2].k, libc::SECCOMP_RET_KILL_PROCESS);
            assert_eq!((program[3].code, program[3].k), (0x20, 0));
            assert_eq!((program[4].code, program[4].k), (0x35, X32_SYSCALL_BIT));
            assert_eq!(program[5].k, libc::SECCOMP_RET_ERRNO | 1);
        }
    }

    #[test]
    fn the_filters_compile() {
        assert!(!network_filter().unwrap().is_empty());
        assert!(!fence_filter().unwrap().is_empty());
        let guard = HarnessGuard::of_harness().and_this_thread();
        assert!(guard.ids.contains(&std::process::id()));
        assert!(
            guard.ids.len() >= 2,
            "the calling thread is not the main one"
        );
        assert!(!guard.filter().unwrap().is_empty());
    }
}
