//! One confinement as a value, and how it is put on the calling thread: carve-outs (a
//! private mount namespace), then one Landlock layer (file accesses, the TCP port fence,
//! signal scoping), then the seccomp network filter. Everything forked from that thread
//! afterwards inherits all of it.

use std::path::{Path, PathBuf};

use std::os::fd::OwnedFd;

use crate::carve::{NamespaceMode, keep_read_only};
use crate::filters::{HarnessGuard, fence_filter, install, network_filter};
use crate::powers::drop_powers;
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, LandlockStatus, NetPort, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

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
    /// Drop the capabilities of [`crate::powers::DROPPED`] (a launch base keeps them for
    /// the runner's namespaces, which drops them itself).
    pub drop_powers: bool,
    /// Install the [`HarnessGuard`] (on a launch thread; the runner inherits its base's).
    pub guard_harness: bool,
}

impl Confinement {
    /// Puts the confinement on the calling thread: carve-outs in a mount namespace entered
    /// as `mode` says, then Landlock, then the seccomp filters (the network denial, the
    /// fence's complement, and `guard`, what no command may do to the harness), then the
    /// capability drop.
    pub fn apply(
        &self,
        mode: NamespaceMode,
        guard: Option<&HarnessGuard>,
    ) -> Result<Enforced, String> {
        keep_read_only(&self.carve_outs, &self.read_write, mode)?;
        let enforced = self.restrict()?;
        if self.deny_network || !self.fenced_ports.is_empty() || guard.is_some() {
            // Landlock set it already when it restricted anything; seccomp needs it.
            nix::sys::prctl::set_no_new_privs()
                .map_err(|error| format!("cannot set no_new_privs: {error}"))?;
        }
        if self.deny_network {
            install(&network_filter()?, "network filter")?;
        }
        if !self.fenced_ports.is_empty() {
            install(&fence_filter()?, "port fence filter")?;
        }
        if let Some(guard) = guard {
            install(&guard.filter()?, "harness guard")?;
        }
        if self.drop_powers {
            drop_powers()?;
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
/// asked for, never a silent skip), and so does one reached through a symbolic link: the
/// roots are resolved once, when a session starts, and a link put in their place since must
/// not move a grant elsewhere.
fn path_rule(path: &Path, access: BitFlags<AccessFs>) -> Result<PathBeneath<OwnedFd>, String> {
    let cannot_open = |error: &dyn std::fmt::Display| {
        format!("cannot open rule path: {}: {error}", path.display())
    };
    let fd = open_without_links(path).map_err(|error| cannot_open(&error))?;
    let metadata = std::fs::File::from(fd.try_clone().map_err(|error| cannot_open(&error))?)
        .metadata()
        .map_err(|error| cannot_open(&error))?;
    let access = if metadata.is_dir() {
        access
    } else {
        access & AccessFs::from_file(HANDLED_ABI)
    };
    Ok(PathBeneath::new(fd, access))
}

/// `path` opened `O_PATH`, refusing symbolic links in any component (`openat2` with
/// `RESOLVE_NO_SYMLINKS`; on a kernel before 5.6, a plain open after checking that the
/// path resolves to itself).
fn open_without_links(path: &Path) -> std::io::Result<OwnedFd> {
    use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2};
    let how = OpenHow::new()
        .flags(OFlag::O_PATH | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS);
    match openat2(nix::fcntl::AT_FDCWD, path, how) {
        Ok(fd) => Ok(fd),
        Err(nix::errno::Errno::ENOSYS) => {
            if std::fs::canonicalize(path)? != path {
                return Err(std::io::Error::other(
                    "it is reached through a symbolic link",
                ));
            }
            use std::os::unix::fs::OpenOptionsExt;
            let file = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(nix::libc::O_PATH)
                .open(path)?;
            Ok(OwnedFd::from(file))
        }
        Err(errno) => Err(std::io::Error::from(errno)),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_reports_this_kernel() {
        let support = probe().unwrap();
        assert!(support.abi >= 1, "{support:?}");
        assert_eq!(support.fences_ports(), support.abi >= 4);
    }
}
