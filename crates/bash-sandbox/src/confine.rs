//! One confinement as a value, and how it is put on the calling thread: carve-outs (a
//! private mount namespace), then one Landlock layer (file accesses, the TCP port fence,
//! signal scoping), then the seccomp network filter. Everything forked from that thread
//! afterwards inherits all of it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, LandlockStatus, NetPort, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::carve::{NamespaceMode, keep_read_only};

/// The Landlock ABI whose file accesses are handled: dsh's launcher's (ABI 5 added device
/// ioctls; ABIs 6 to 8 add no file access). An older kernel enforces a subset: partial.
pub const HANDLED_ABI: ABI = ABI::V5;

/// The first Landlock ABI that restricts TCP connects by port.
pub const NET_ABI: u8 = 4;

/// The first Landlock ABI that scopes signals to the sandbox.
pub const SCOPE_ABI: u8 = 6;

/// The failure detail when the kernel enforces no Landlock ruleset.
pub const NOT_ENFORCED_MESSAGE: &str =
    "landlock is not enforced by this kernel (ABI unsupported or disabled)";

/// How completely the kernel enforced the file accesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Enforced {
    /// Every handled access is enforced.
    Full,
    /// An older ABI enforces only some of the handled accesses.
    Partial,
}

/// Everything one class of confined commands is held to. Equal confinements share a launch
/// thread.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Confinement {
    /// Read and execute beneath each path.
    pub read_only: Vec<PathBuf>,
    /// Every handled file access but making device nodes beneath each path (a file keeps
    /// the file accesses).
    pub read_write: Vec<PathBuf>,
    /// Kept read-only inside the writable paths, by a private mount namespace.
    pub carve_outs: Vec<PathBuf>,
    /// Refuse sockets other than `AF_UNIX` (seccomp).
    pub deny_network: bool,
    /// TCP ports nothing may connect to (Landlock ABI 4; every other port stays open).
    pub fenced_ports: Vec<u16>,
    /// Signals may reach only processes of the same confinement (Landlock ABI 6).
    pub scope_signals: bool,
    /// Whether file accesses are handled at all (a launch base that only fences ports and
    /// scopes signals handles none, so its children may still mount).
    pub confine_files: bool,
}

impl Confinement {
    /// Puts the confinement on the calling thread: carve-outs in a mount namespace entered
    /// as `mode` says, then Landlock, then the network filter.
    pub fn apply(&self, mode: NamespaceMode) -> Result<Enforced, String> {
        keep_read_only(&self.carve_outs, mode)?;
        let enforced = self.restrict()?;
        if self.deny_network {
            deny_network()?;
        }
        Ok(enforced)
    }

    /// The Landlock layer: one ruleset for file accesses, fenced ports and scoping.
    fn restrict(&self) -> Result<Enforced, String> {
        if !self.confine_files && self.fenced_ports.is_empty() && !self.scope_signals {
            return Ok(Enforced::Full);
        }
        let error = |error: landlock::RulesetError| format!("landlock ruleset error: {error}");
        let handled = AccessFs::from_all(HANDLED_ABI);
        let mut ruleset = Ruleset::default();
        if self.confine_files {
            ruleset = ruleset.handle_access(handled).map_err(error)?;
        }
        if !self.fenced_ports.is_empty() {
            ruleset = ruleset
                .handle_access(AccessNet::ConnectTcp)
                .map_err(error)?;
        }
        if self.scope_signals {
            ruleset = ruleset.scope(Scope::Signal).map_err(error)?;
        }
        let mut created = ruleset.create().map_err(error)?;
        if self.confine_files {
            let read = AccessFs::from_read(HANDLED_ABI);
            // Device nodes are never made: a block device made in a writable root would
            // open the raw disk to a command running as root.
            let write = handled & !(AccessFs::MakeBlock | AccessFs::MakeChar);
            let grants = self
                .read_only
                .iter()
                .map(|path| (path, read))
                .chain(self.read_write.iter().map(|path| (path, write)));
            for (path, access) in grants {
                created = created.add_rule(path_rule(path, access)?).map_err(error)?;
            }
        }
        if !self.fenced_ports.is_empty() {
            for port in (0..=u16::MAX).filter(|port| !self.fenced_ports.contains(port)) {
                created = created
                    .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
                    .map_err(error)?;
            }
        }
        let status = created.restrict_self().map_err(error)?;
        match status.ruleset {
            RulesetStatus::FullyEnforced => Ok(Enforced::Full),
            RulesetStatus::PartiallyEnforced => Ok(Enforced::Partial),
            RulesetStatus::NotEnforced => Err(NOT_ENFORCED_MESSAGE.to_owned()),
        }
    }
}

/// A rule granting `access` beneath `path`; a grant on a non-directory keeps only the
/// accesses that apply to files. An unopenable path fails (never a narrower profile than
/// asked for, never a silent skip).
fn path_rule(path: &Path, access: BitFlags<AccessFs>) -> Result<PathBeneath<PathFd>, String> {
    let cannot_open = |error: &dyn std::fmt::Display| {
        format!("cannot open rule path: {}: {error}", path.display())
    };
    let metadata = std::fs::metadata(path).map_err(|error| cannot_open(&error))?;
    let access = if metadata.is_dir() {
        access
    } else {
        access & AccessFs::from_file(HANDLED_ABI)
    };
    let fd = PathFd::new(path).map_err(|error| cannot_open(&error))?;
    Ok(PathBeneath::new(fd, access))
}

/// What the kernel's Landlock offers, as found by [`probe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LandlockSupport {
    /// How completely the file accesses are enforced.
    pub enforced: Enforced,
    /// The ABI in effect (the kernel's, capped at what the `landlock` crate knows).
    pub abi: u8,
}

impl LandlockSupport {
    /// Whether TCP connects can be fenced by port.
    pub const fn fences_ports(self) -> bool {
        self.abi >= NET_ABI
    }

    /// Whether signals can be scoped to the sandbox.
    pub const fn scopes_signals(self) -> bool {
        self.abi >= SCOPE_ABI
    }
}

/// Enforces a read-only ruleset on a short-lived thread of this process and reports what
/// the kernel offers; `Err` with the reason when Landlock enforces nothing here.
pub fn probe() -> Result<LandlockSupport, String> {
    std::thread::Builder::new()
        .name("dsh-landlock-probe".to_owned())
        .spawn(|| {
            let error = |error: landlock::RulesetError| format!("landlock ruleset error: {error}");
            let status = Ruleset::default()
                .handle_access(AccessFs::from_all(HANDLED_ABI))
                .map_err(error)?
                .create()
                .map_err(error)?
                .add_rule(path_rule(Path::new("/"), AccessFs::from_read(HANDLED_ABI))?)
                .map_err(error)?
                .restrict_self()
                .map_err(error)?;
            let abi = match status.landlock {
                LandlockStatus::Available { effective_abi, .. } => {
                    u8::try_from(effective_abi as i32).unwrap_or(0)
                }
                _ => 0,
            };
            let enforced = match status.ruleset {
                RulesetStatus::FullyEnforced => Enforced::Full,
                RulesetStatus::PartiallyEnforced => Enforced::Partial,
                RulesetStatus::NotEnforced => return Err(NOT_ENFORCED_MESSAGE.to_owned()),
            };
            Ok(LandlockSupport { enforced, abi })
        })
        .map_err(|error| format!("cannot start the landlock probe: {error}"))?
        .join()
        .map_err(|_| "the landlock probe panicked".to_owned())?
}

/// The seccomp program of a network denial: `socket(domain != AF_UNIX, …)` and
/// `io_uring_setup` fail with `EPERM` (io_uring could open sockets past the filter);
/// everything else is allowed. A process of another architecture than this build's is
/// killed by the filter's architecture check.
pub fn network_filter() -> Result<BpfProgram, String> {
    fn error(error: impl std::fmt::Display) -> String {
        format!("cannot build the network filter: {error}")
    }
    let unix = u64::try_from(libc::AF_UNIX).map_err(error)?;
    let eperm = u32::try_from(libc::EPERM).map_err(error)?;
    let not_unix =
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, unix).map_err(error)?;
    let rules = BTreeMap::from([
        (
            libc::SYS_socket,
            vec![SeccompRule::new(vec![not_unix]).map_err(error)?],
        ),
        (libc::SYS_io_uring_setup, Vec::new()),
    ]);
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

/// Installs [`network_filter`] on the calling thread.
fn deny_network() -> Result<(), String> {
    let program = network_filter()?;
    seccompiler::apply_filter(&program)
        .map_err(|error| format!("cannot install the network filter: {error}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_network_filter_compiles() {
        assert!(!network_filter().unwrap().is_empty());
    }

    #[test]
    fn the_probe_reports_this_kernel() {
        let support = probe().unwrap();
        assert!(support.abi >= 1, "{support:?}");
        assert_eq!(support.fences_ports(), support.abi >= 4);
    }
}
