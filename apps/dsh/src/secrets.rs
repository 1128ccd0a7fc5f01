//! Keeping the secrets of dsh's environment away from its commands.
//!
//! `/proc/<pid>/environ` shows the bytes of the environment block the kernel gave the process
//! at `exec`, for its whole life: unsetting a variable changes nothing there. So a `dsh` that
//! runs commands moves each credential-looking variable (`DEEPSEEK_API_KEY`, anything named
//! like `*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`) onto the heap (unset, then set again:
//! the C library copies the new value), then overwrites the value in the start-up block with
//! zero bytes through `/proc/self/mem`. The process also marks itself non-dumpable, so other
//! processes of the same user cannot read its memory or descriptors through `/proc` (a
//! confined command cannot anyway: Landlock denies it the harness's `/proc` entries).

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;

/// Hides the credentials of this process's start-up environment, as the module says. Must
/// run before any thread starts. A failure is reported and the process goes on.
pub fn hide_credentials() {
    let held: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| dsh_shell::is_credential_name(name))
        .collect();
    if !held.is_empty() {
        move_to_heap(&held);
        // Before the process turns non-dumpable: then even its own /proc/self/mem is
        // root's, and an unprivileged dsh could no longer write it.
        if let Err(error) = scrub_start_up_block(&held) {
            crate::output::diagnostic(&format!(
                "cannot clear the credentials from /proc/self/environ ({error}); a process \
                 of this user that can read it could see them"
            ));
        }
    }
    if let Err(error) = dsh_bash_sandbox::keep_memory_private() {
        crate::output::diagnostic(&format!(
            "{error}; a process of this user could read this one's memory and descriptors"
        ));
    }
}

/// Unsets and sets each variable again: the environment then points at heap copies, and no
/// longer into the start-up block.
fn move_to_heap(held: &[(OsString, OsString)]) {
    #[expect(
        unsafe_code,
        reason = "the environment is changed once, at the start of main, before any thread"
    )]
    // SAFETY: this runs first in main, while the process is single-threaded, so no other
    // thread reads or writes the environment meanwhile.
    unsafe {
        for (name, value) in held {
            std::env::remove_var(name);
            std::env::set_var(name, value);
        }
    }
}

/// Overwrites the values of `held` in the start-up block (`env_start` of
/// `/proc/self/stat`) with zero bytes.
fn scrub_start_up_block(held: &[(OsString, OsString)]) -> std::io::Result<()> {
    let block = std::fs::read("/proc/self/environ")?;
    let start = env_start()?;
    let memory = OpenOptions::new().write(true).open("/proc/self/mem")?;
    for (offset, length) in value_spans(&block, held) {
        let at = start + u64::try_from(offset).map_err(std::io::Error::other)?;
        memory.write_all_at(&vec![0; length], at)?;
    }
    Ok(())
}

/// Where each value of `held` lies in `block` (`NAME=VALUE\0…`): offset and length.
fn value_spans(block: &[u8], held: &[(OsString, OsString)]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut offset = 0;
    for entry in block.split(|byte| *byte == 0) {
        if let Some(equals) = entry.iter().position(|byte| *byte == b'=') {
            let name = entry.get(..equals).unwrap_or_default();
            if held.iter().any(|(held, _)| held.as_bytes() == name) {
                spans.push((offset + equals + 1, entry.len() - equals - 1));
            }
        }
        offset += entry.len() + 1;
    }
    spans
}

/// The address of the start-up environment block: field 50 of `/proc/self/stat`.
fn env_start() -> std::io::Result<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    // Fields are counted after the command name, which may hold spaces and parentheses.
    let after_name = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or_else(|| std::io::Error::other("/proc/self/stat has no command name"))?;
    after_name
        .split_whitespace()
        .nth(50 - 3)
        .and_then(|field| field.parse().ok())
        .ok_or_else(|| std::io::Error::other("/proc/self/stat has no env_start field"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_values_of_held_names_are_spanned() {
        let block = b"PATH=/bin\0DEEPSEEK_API_KEY=sk-x\0A_TOKEN=\0LAST=1\0";
        let held = vec![
            (OsString::from("DEEPSEEK_API_KEY"), OsString::from("sk-x")),
            (OsString::from("A_TOKEN"), OsString::new()),
        ];
        assert_eq!(value_spans(block, &held), vec![(27, 4), (40, 0)]);
        assert_eq!(&block[27..31], b"sk-x");
    }

    #[test]
    fn the_start_up_block_is_found() {
        assert!(env_start().unwrap() > 0);
    }
}
