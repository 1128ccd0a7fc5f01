//! The app's command line.

use dsh_kernel::ServiceKey;

/// The arguments after the launcher's own flags, for the app rows that parse them.
pub const CMDLINE_ARGS: ServiceKey<CmdlineArgs> = ServiceKey::new("cmdlineArgs");

/// The app's command line, frozen at launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmdlineArgs {
    args: Vec<String>,
}

impl CmdlineArgs {
    /// Wraps `args`.
    pub fn new(args: Vec<String>) -> Self {
        Self { args }
    }

    /// The arguments, in order.
    pub fn args(&self) -> &[String] {
        &self.args
    }
}
