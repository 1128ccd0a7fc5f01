//! Whether this process's mount table changed: a held carve-out copies the table into its
//! private mount namespace once, when it is built, so after a change (the host mounted
//! another view of a writable root, which would expose a carve-out writable) it is built
//! again. The kernel marks a `mountinfo` file with `POLLPRI` after every change in its
//! namespace; one `poll` with no timeout per launch reads the mark. The file is the first
//! caller's (`/proc/thread-self`): every thread of the harness shares one namespace, and a
//! test that gives its threads another one watches that.

use std::fs::File;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use dsh_kernel::sync::lock;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// How many changes were seen so far: a confinement built at an older count is stale. Stays
/// 0 where the table cannot be watched.
pub(crate) fn mount_generation() -> u64 {
    static WATCH: OnceLock<Option<Mutex<File>>> = OnceLock::new();
    static GENERATION: AtomicU64 = AtomicU64::new(0);
    let watch = WATCH.get_or_init(|| File::open(crate::mountinfo::TABLE).ok().map(Mutex::new));
    if let Some(file) = watch {
        let file = lock(file);
        let mut fds = [PollFd::new(file.as_fd(), PollFlags::POLLPRI)];
        let marked = poll(&mut fds, PollTimeout::ZERO).is_ok_and(|ready| ready > 0)
            && fds
                .first()
                .and_then(PollFd::revents)
                .is_some_and(|events| events.intersects(PollFlags::POLLPRI | PollFlags::POLLERR));
        if marked {
            GENERATION.fetch_add(1, Ordering::SeqCst);
        }
    }
    GENERATION.load(Ordering::SeqCst)
}
