//! Signal names as Node reports them (`SIGTERM`, `SIGKILL`, ...).

use nix::sys::signal::Signal;

/// The name of signal `number`: `SIGTERM` for 15; `SIG<n>` for numbers without a name.
pub fn signal_name(number: i32) -> String {
    Signal::try_from(number).map_or_else(
        |_| format!("SIG{number}"),
        |signal| signal.as_str().to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_common_signals() {
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(2), "SIGINT");
        assert_eq!(signal_name(200), "SIG200");
    }
}
