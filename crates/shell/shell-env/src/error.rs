//! Registry errors, in dsh's words.

use dsh_kernel::KernelError;

/// A refused registration or a failed collection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellEnvError {
    /// The contributor's name is blank.
    #[error("bash env contributor name must be non-empty")]
    BlankName,
    /// A contributor with this name is registered.
    #[error("bash env contributor \"{0}\" is already registered")]
    DuplicateName(String),
    /// A declared key is not `DSH_` followed by `[A-Z][A-Z0-9_]*`.
    #[error("bash env contributor \"{contributor}\" declared invalid key \"{key}\"")]
    InvalidKey {
        /// The contributor.
        contributor: String,
        /// The key.
        key: String,
    },
    /// A declared key belongs to the registry itself.
    #[error("bash env contributor \"{contributor}\" cannot own reserved key \"{key}\"")]
    ReservedKey {
        /// The contributor.
        contributor: String,
        /// The key.
        key: String,
    },
    /// A declared key has a blank description.
    #[error("bash env contributor \"{contributor}\" must describe \"{key}\"")]
    MissingDescription {
        /// The contributor.
        contributor: String,
        /// The key.
        key: String,
    },
    /// Another contributor owns the key.
    #[error(
        "bash env key \"{key}\" is already owned by contributor \"{owner}\"; contributor \
         \"{contributor}\" cannot also own it"
    )]
    KeyOwned {
        /// The key.
        key: String,
        /// Its owner.
        owner: String,
        /// The contributor that asked.
        contributor: String,
    },
    /// A contributor returned a key it did not declare.
    #[error("bash env contributor \"{contributor}\" returned undeclared key \"{key}\"")]
    Undeclared {
        /// The contributor.
        contributor: String,
        /// The key.
        key: String,
    },
    /// No home directory to default `DSH_HOME` from.
    #[error("cannot resolve DSH_HOME: the home directory is unknown; set DSH_HOME or HOME")]
    NoHome,
    /// Tying a registration to a fiber failed.
    #[error(transparent)]
    Kernel(#[from] KernelError),
}
