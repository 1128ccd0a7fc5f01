//! What keeps the harness's own memory from a confined command: the process is not
//! dumpable, and the capabilities a confined command never keeps, even as root: the ones that
//! reach past files and its own processes (another process's memory, files opened by handle
//! rather than by path, kernel modules, raw devices and sockets, mount and namespace
//! administration, the clock, the network configuration, other processes' scheduling, ...).
//! They are dropped from the calling thread's bounding, ambient, inheritable, permitted and
//! effective sets, so neither the command nor anything it executes gets them back.

use nix::libc;

/// The dropped capabilities, by number (`linux/capability.h`).
pub const DROPPED: [(u32, &str); 26] = [
    // `open_by_handle_at` opens a file by inode, past every path rule.
    (2, "CAP_DAC_READ_SEARCH"),
    (9, "CAP_LINUX_IMMUTABLE"),
    (12, "CAP_NET_ADMIN"),
    // Raw and packet sockets would read and forge other programs' loopback traffic.
    (13, "CAP_NET_RAW"),
    (15, "CAP_IPC_OWNER"),
    (16, "CAP_SYS_MODULE"),
    (17, "CAP_SYS_RAWIO"),
    (18, "CAP_SYS_CHROOT"),
    (19, "CAP_SYS_PTRACE"),
    (20, "CAP_SYS_PACCT"),
    (21, "CAP_SYS_ADMIN"),
    (22, "CAP_SYS_BOOT"),
    (23, "CAP_SYS_NICE"),
    (25, "CAP_SYS_TIME"),
    (26, "CAP_SYS_TTY_CONFIG"),
    (27, "CAP_MKNOD"),
    (30, "CAP_AUDIT_CONTROL"),
    (31, "CAP_SETFCAP"),
    (32, "CAP_MAC_OVERRIDE"),
    (33, "CAP_MAC_ADMIN"),
    (34, "CAP_SYSLOG"),
    (35, "CAP_WAKE_ALARM"),
    (37, "CAP_AUDIT_READ"),
    (38, "CAP_PERFMON"),
    (39, "CAP_BPF"),
    (40, "CAP_CHECKPOINT_RESTORE"),
];

/// Makes this process non-dumpable: its `/proc` entries (memory, descriptors, executable)
/// then belong to root, and only `CAP_SYS_PTRACE`, which confined commands never keep,
/// opens them. A command forked on a launch thread shares that thread's Landlock domain, so
/// Landlock alone would let it read the process's memory.
pub fn keep_memory_private() -> Result<(), String> {
    nix::sys::prctl::set_dumpable(false)
        .map_err(|error| format!("cannot make this process non-dumpable: {error}"))
}

/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Drops [`DROPPED`] from the calling thread. Without the power to change its bounding set
/// (an unprivileged user has none of these capabilities anyway) the bounding step is
/// skipped; a failure to clear the thread's own sets is an error.
pub fn drop_powers() -> Result<(), String> {
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    #[expect(
        unsafe_code,
        reason = "capget(2), capset(2) and prctl(2) have no safe wrapper in our dependencies"
    )]
    // SAFETY: `header` and `data` are valid, properly laid out (`linux/capability.h`, version
    // 3 takes two data structs) and live across each call; prctl takes plain integers.
    unsafe {
        if libc::syscall(libc::SYS_capget, &raw mut header, data.as_mut_ptr()) != 0 {
            return Err(format!(
                "cannot read the thread's capabilities: {}",
                std::io::Error::last_os_error()
            ));
        }
        let holds_any = data
            .iter()
            .any(|set| set.effective | set.permitted | set.inheritable != 0);
        if !holds_any {
            return Ok(());
        }
        for (cap, _) in DROPPED {
            // EPERM without CAP_SETPCAP, EINVAL on a kernel that does not know it: nothing
            // to drop then.
            libc::prctl(libc::PR_CAPBSET_DROP, libc::c_ulong::from(cap), 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        for (cap, _) in DROPPED {
            let word = usize::try_from(cap / 32).unwrap_or(0);
            if let Some(set) = data.get_mut(word) {
                let bit = !(1_u32 << (cap % 32));
                set.effective &= bit;
                set.permitted &= bit;
                set.inheritable &= bit;
            }
        }
        if libc::syscall(libc::SYS_capset, &raw mut header, data.as_ptr()) != 0 {
            return Err(format!(
                "cannot drop the thread's capabilities: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_powers_stay_dropped_on_the_thread() {
        let effective = std::thread::spawn(|| {
            drop_powers().unwrap();
            std::fs::read_to_string("/proc/thread-self/status").unwrap()
        })
        .join()
        .unwrap();
        let eff = effective
            .lines()
            .find_map(|line| line.strip_prefix("CapEff:"))
            .map(|hex| u64::from_str_radix(hex.trim(), 16).unwrap())
            .unwrap();
        for (cap, name) in DROPPED {
            assert_eq!(eff & (1 << cap), 0, "{name} is still effective");
        }
    }
}
