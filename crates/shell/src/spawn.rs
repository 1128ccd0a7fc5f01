//! Starting one command: its own process group, piped output, stdin from `/dev/null` or a
//! pipe, and exactly the environment given.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::Stdio;

use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use crate::error::ShellError;

/// A started child and its pipes.
pub(crate) struct Spawned {
    pub(crate) child: Child,
    pub(crate) pid: u32,
    pub(crate) stdout: ChildStdout,
    pub(crate) stderr: ChildStderr,
    pub(crate) stdin: Option<ChildStdin>,
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

/// Spawns `argv` in `cwd` as the leader of a new process group.
pub(crate) fn spawn_child(
    argv: &[String],
    cwd: &Path,
    env: &BTreeMap<OsString, OsString>,
    with_stdin: bool,
) -> Result<Spawned, ShellError> {
    let (program, args) = split_argv(argv)?;
    let fail = |source: io::Error| ShellError::Spawn {
        program: program.clone(),
        cwd: cwd.to_path_buf(),
        source,
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(env)
        .stdin(if with_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(false);
    let mut child = command.spawn().map_err(fail)?;
    let pipes = (child.id(), child.stdout.take(), child.stderr.take());
    let (Some(pid), Some(stdout), Some(stderr)) = pipes else {
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
    })
}
