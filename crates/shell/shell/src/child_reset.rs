//! What every child is reset to between `fork` and `exec`: a session of its own (so it has
//! no controlling terminal, and a process that leaves its group stays in its tree); no
//! descriptor above 2, whatever this process inherited or opened (a caller's `9>>file`),
//! except one the launcher hands over on purpose; and the system's transparent-huge-page
//! setting, which a harness that turned it off for itself would otherwise pass on (the
//! setting survives `exec`).

use tokio::process::Command;

/// Above this many descriptors, the fallback of kernels without `close_range`'s
/// `CLOSE_RANGE_CLOEXEC` (before Linux 5.11) stops marking them one by one.
const FALLBACK_LIMIT: i32 = 65_536;

/// Makes the child the leader of a new session, registers it with the orphan guard (on
/// `guard`, its input), makes every descriptor above 2 close when `command` execs, except
/// `keep`, and gives the command the system's transparent-huge-page setting.
///
/// This runs in the child between `fork` and `exec`, where only async-signal-safe calls are
/// allowed: `setsid`, `close_range` with `CLOSE_RANGE_CLOEXEC` marks whole ranges at once
/// (the standard library's own error pipe is already close-on-exec, so it keeps working),
/// `fcntl` one descriptor at a time where the kernel lacks it, and one `prctl`.
pub(crate) fn reset_before_exec(command: &mut Command, keep: Option<i32>, guard: Option<i32>) {
    let limit = open_file_limit();
    let hook = move || {
        new_session()?;
        if let Some(guard) = guard {
            register_own_group(guard);
        }
        mark_range(3, i32::MAX, limit);
        if let Some(fd) = keep.filter(|fd| *fd >= 3) {
            keep_open_across_exec(fd);
        }
        restore_huge_pages();
        Ok(())
    };
    #[expect(
        unsafe_code,
        reason = "the hook only makes async-signal-safe syscalls (setsid, getpid, write, \
                  close_range, fcntl, prctl) between fork and exec, as pre_exec requires"
    )]
    // SAFETY: `hook` allocates nothing, takes no lock and only calls setsid(2), getpid(2),
    // write(2), close_range(2), fcntl(2) and prctl(2), which are async-signal-safe.
    unsafe {
        command.pre_exec(hook);
    }
}

/// Makes the calling child the leader of a new session and process group, both with its pid
/// as id (a child after `fork` leads no group, so this cannot fail for it).
fn new_session() -> std::io::Result<()> {
    #[expect(
        unsafe_code,
        reason = "a raw setsid(2) call in the child after fork, where no allocation may happen"
    )]
    // SAFETY: setsid takes nothing; on failure errno is read without allocating.
    let result = unsafe { nix::libc::setsid() };
    if result < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Writes `+<pid>\n` to `guard`: the child leads its own session and process group by now
/// (see [`new_session`]), so its pid is their id. Formatted on the stack: nothing may
/// allocate here.
fn register_own_group(guard: i32) {
    let mut line = [0_u8; 24];
    #[expect(
        unsafe_code,
        reason = "raw getpid(2) and write(2) calls in the child after fork, where no allocation \
                  may happen"
    )]
    // SAFETY: getpid takes nothing; write reads `len` bytes of `line`, which lives on this
    // stack frame for the call.
    unsafe {
        let pid = nix::libc::getpid();
        let len = format_line(pid, &mut line);
        nix::libc::write(guard, line.as_ptr().cast(), len);
    }
}

/// Writes `+<value>\n` into `out` (big enough for any `i32`) and returns its length.
fn format_line(value: i32, out: &mut [u8; 24]) -> usize {
    let mut digits = [0_u8; 12];
    let mut count = 0;
    let mut rest = value.unsigned_abs();
    loop {
        if let Some(slot) = digits.get_mut(count) {
            *slot = b'0' + u8::try_from(rest % 10).unwrap_or(0);
        }
        count += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let mut len = 0;
    for byte in std::iter::once(b'+')
        .chain(digits.iter().take(count).rev().copied())
        .chain(std::iter::once(b'\n'))
    {
        if let Some(slot) = out.get_mut(len) {
            *slot = byte;
            len += 1;
        }
    }
    len
}

/// `PR_SET_THP_DISABLE` off (the kernel default) for the calling process.
fn restore_huge_pages() {
    #[expect(
        unsafe_code,
        reason = "a raw prctl(2) call in the child after fork, where no allocation may happen"
    )]
    // SAFETY: prctl(PR_SET_THP_DISABLE, 0) takes plain integers.
    unsafe {
        nix::libc::prctl(nix::libc::PR_SET_THP_DISABLE, 0, 0, 0, 0);
    }
}

/// The soft limit on open descriptors, read before the fork (bounded).
fn open_file_limit() -> i32 {
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .ok()
        .and_then(|(soft, _)| i32::try_from(soft).ok())
        .unwrap_or(FALLBACK_LIMIT)
        .min(FALLBACK_LIMIT)
}

/// Marks descriptors `first..=last` close-on-exec.
fn mark_range(first: i32, last: i32, limit: i32) {
    if first > last {
        return;
    }
    #[expect(
        unsafe_code,
        reason = "a raw close_range(2) call on descriptor numbers, in the child after fork \
                  where no allocation may happen"
    )]
    // SAFETY: the call takes plain integers and touches only the descriptor table.
    let marked = unsafe {
        use nix::libc;
        libc::syscall(
            libc::SYS_close_range,
            libc::c_uint::try_from(first).unwrap_or(3),
            libc::c_uint::try_from(last).unwrap_or(libc::c_uint::MAX),
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if marked != 0 {
        for fd in first..=last.min(limit) {
            mark_one(fd);
        }
    }
}

/// Clears descriptor `fd`'s close-on-exec flag: the one descriptor the command inherits.
fn keep_open_across_exec(fd: i32) {
    #[expect(
        unsafe_code,
        reason = "a raw fcntl(2) on a descriptor number, between fork and exec"
    )]
    // SAFETY: F_SETFD takes plain integers and touches only the descriptor table.
    unsafe {
        nix::libc::fcntl(fd, nix::libc::F_SETFD, 0);
    }
}

/// Marks descriptor `fd` close-on-exec (nothing happens when it is not open).
fn mark_one(fd: i32) {
    #[expect(
        unsafe_code,
        reason = "a raw fcntl(2) on a descriptor number, also used between fork and exec"
    )]
    // SAFETY: F_SETFD takes plain integers and touches only the descriptor table.
    unsafe {
        nix::libc::fcntl(fd, nix::libc::F_SETFD, nix::libc::FD_CLOEXEC);
    }
}

/// Makes every descriptor of this process from `first` up close when it execs: for a
/// program that starts with descriptors it did not open (a caller's `9>>file`) and execs
/// others later. Returns whether the kernel did it in one call (Linux 5.11 and later);
/// otherwise each open descriptor listed in `/proc/self/fd` is marked.
pub fn mark_inherited_close_on_exec(first: i32) -> bool {
    let limit = open_file_limit();
    #[expect(
        unsafe_code,
        reason = "close_range(2) takes plain descriptor numbers and only sets their flags"
    )]
    // SAFETY: the call reads no memory of ours.
    let marked = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_close_range,
            nix::libc::c_uint::try_from(first.max(0)).unwrap_or(3),
            nix::libc::c_uint::MAX,
            nix::libc::CLOSE_RANGE_CLOEXEC,
        )
    } == 0;
    if !marked {
        let listed = std::fs::read_dir("/proc/self/fd").into_iter().flatten();
        let numbers = listed
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok());
        for fd in numbers.filter(|fd| (first..limit).contains(fd)) {
            mark_one(fd);
        }
    }
    marked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_lines_are_formatted_without_allocating() {
        let mut out = [0_u8; 24];
        let len = format_line(4_194_304, &mut out);
        assert_eq!(&out[..len], b"+4194304\n");
        let len = format_line(7, &mut out);
        assert_eq!(&out[..len], b"+7\n");
        let len = format_line(i32::MAX, &mut out);
        assert_eq!(&out[..len], b"+2147483647\n");
    }
}
