//! Starting one command: the leader of a session of its own, piped output, stdin from `/dev/null` or a
//! pipe, exactly the environment given, no inherited descriptor above 2 (but the status
//! channel, when asked for), forked on the caller's thread or on a [`LaunchThread`].

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use crate::error::ShellError;
use crate::launch::LaunchThread;

/// The argv element a provider writes where the status channel's descriptor number goes
/// (for example `--status-fd {status-fd}`); the runner replaces it at spawn.
pub const STATUS_FD_PLACEHOLDER: &str = "{status-fd}";

/// Where and how a command is forked.
#[derive(Debug, Clone, Default)]
pub struct LaunchOptions {
    /// The thread to fork on (its confinement is inherited); `None`: the calling thread.
    pub thread: Option<Arc<LaunchThread>>,
    /// Give the child a status channel: a pipe whose write end it inherits (its number
    /// replaces [`STATUS_FD_PLACEHOLDER`] in the argv) and whose content is read once the
    /// child exited. A confining launcher reports its own failures there, where the command
    /// it then runs cannot write.
    pub status_channel: bool,
}

/// A started child and its pipes.
pub(crate) struct Spawned {
    pub(crate) child: Child,
    pub(crate) pid: u32,
    pub(crate) stdout: ChildStdout,
    pub(crate) stderr: ChildStderr,
    pub(crate) stdin: Option<ChildStdin>,
    /// The read end of the status channel.
    pub(crate) status: Option<OwnedFd>,
}

/// What to spawn, owned, so it can move to a launch thread.
pub(crate) struct SpawnRequest {
    pub(crate) argv: Vec<String>,
    pub(crate) cwd: PathBuf,
    pub(crate) env: BTreeMap<OsString, OsString>,
    pub(crate) with_stdin: bool,
    /// The orphan guard's input, which the child registers its group on.
    pub(crate) guard: Option<i32>,
}

/// Splits `argv` into a non-empty program name and its arguments.
pub(crate) fn split_argv(argv: &[String]) -> Result<(&String, &[String]), ShellError> {
    match argv.split_first() {
        Some((program, args)) if !program.is_empty() => Ok((program, args)),
        _ => Err(ShellError::InvalidRequest(
            "invalid argv: expected a non-empty program name at argv[0]".to_owned(),
        )),
    }
}

/// Spawns `request` as the leader of a new session (and so of a new process group), where
/// `launch` says.
pub(crate) fn spawn_child(
    request: SpawnRequest,
    launch: &LaunchOptions,
    handle: &tokio::runtime::Handle,
) -> Result<Spawned, ShellError> {
    let status_channel = launch.status_channel;
    match &launch.thread {
        None => spawn_here(request, status_channel),
        Some(thread) => {
            let handle = handle.clone();
            thread.run(move || {
                let _runtime = handle.enter();
                spawn_here(request, status_channel)
            })?
        }
    }
}

fn spawn_here(request: SpawnRequest, status_channel: bool) -> Result<Spawned, ShellError> {
    let SpawnRequest {
        mut argv,
        cwd,
        env,
        with_stdin,
        guard,
    } = request;
    let program = split_argv(&argv)?.0.clone();
    let fail = |source: io::Error| ShellError::Spawn {
        program: program.clone(),
        cwd: cwd.clone(),
        source,
    };
    let channel = if status_channel {
        let (read, write) = status_pipe().map_err(fail)?;
        let number = write.as_raw_fd().to_string();
        for arg in &mut argv {
            if arg == STATUS_FD_PLACEHOLDER {
                arg.clone_from(&number);
            }
        }
        Some((read, write))
    } else {
        None
    };
    let keep = channel.as_ref().map(|(_, write)| write.as_raw_fd());
    let (_, args) = split_argv(&argv)?;
    let mut command = Command::new(&program);
    command
        .args(args)
        .current_dir(&cwd)
        .env_clear()
        .envs(&env)
        .stdin(if with_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    crate::child_reset::reset_before_exec(&mut command, keep, guard);
    let mut waited = crate::tree::waited_children();
    let spawned = command.spawn();
    if let Some(pid) = spawned.as_ref().ok().and_then(Child::id) {
        waited.insert(i32::try_from(pid).unwrap_or(i32::MAX));
    }
    drop(waited);
    // The child has its copy of the write end; ours must go, or the channel never ends.
    let status = channel.map(|(read, _write)| read);
    let mut child = spawned.map_err(fail)?;
    let pipes = (child.id(), child.stdout.take(), child.stderr.take());
    let (Some(pid), Some(stdout), Some(stderr)) = pipes else {
        if let Some(pid) = pipes.0.and_then(|pid| i32::try_from(pid).ok()) {
            crate::tree::waited_children().remove(&pid);
        }
        let _ = child.start_kill();
        return Err(fail(io::Error::other("the child's pipes are missing")));
    };
    let stdin = child.stdin.take();
    Ok(Spawned {
        child,
        pid,
        stdout,
        stderr,
        stdin,
        status,
    })
}

/// A pipe, both ends close-on-exec: the child's hook clears the flag on the write end
/// between `fork` and `exec`, so no other program this process starts meanwhile (with the
/// standard library's own `Command`) inherits another command's channel.
fn status_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(io::Error::from)?;
    fcntl(read.as_fd(), FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).map_err(io::Error::from)?;
    Ok((read, write))
}

/// Everything the child wrote on its status channel (read once it exited; a writer that
/// still holds the channel open is not waited for).
pub(crate) fn read_status(channel: OwnedFd) -> Option<String> {
    use std::io::Read;
    let mut file = std::fs::File::from(channel);
    let mut bytes = Vec::new();
    let mut buffer = [0_u8; 4096];
    while bytes.len() < 64 * 1024 {
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => bytes.extend_from_slice(buffer.get(..read).unwrap_or_default()),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let text = String::from_utf8_lossy(&bytes).trim_end().to_owned();
    (!text.is_empty()).then_some(text)
}
