//! The registry: built-in facts, contributors, and the per-call snapshot.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

use dsh_kernel::sync::lock;
use dsh_kernel::{Context, Disposer, ServiceKey};
use dsh_session::SessionHeader;

use crate::error::ShellEnvError;

/// The registry service (`ctx.shellEnv` in dsh).
pub const SHELL_ENV: ServiceKey<ShellEnv> = ServiceKey::new("shellEnv");

/// The harness home.
pub const DSH_HOME: &str = "DSH_HOME";
/// Always `1` inside a harness shell.
pub const DSH_SHELL: &str = "DSH_SHELL";
/// The calling session's id.
pub const DSH_SESSION_ID: &str = "DSH_SESSION_ID";
/// The calling session's JSONL file (owned by the `session-persistence` contributor).
pub const DSH_SESSION_JSONL: &str = "DSH_SESSION_JSONL";
/// The keys only the registry sets.
pub const RESERVED_KEYS: [&str; 3] = [DSH_HOME, DSH_SHELL, DSH_SESSION_ID];

/// What a shell call knows about its caller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellEnvFacts {
    /// The calling agent's session, when the call has one.
    pub session: Option<SessionHeader>,
}

/// Computes a contributor's available values for one call.
pub type ShellEnvResolver = Arc<dyn Fn(&ShellEnvFacts) -> BTreeMap<String, String> + Send + Sync>;

/// A plugin's contribution: the keys it owns, with descriptions, and how to compute them.
#[derive(Clone)]
pub struct ShellEnvContributor {
    /// Unique, non-blank name used in messages.
    pub name: String,
    /// Every key it may return, with a description of the fact.
    pub variables: BTreeMap<String, String>,
    /// Returns the values available for a call (a subset of `variables`).
    pub resolve: ShellEnvResolver,
}

impl ShellEnvContributor {
    /// A contributor called `name` computing its values with `resolve`; declare keys with
    /// [`ShellEnvContributor::variable`].
    pub fn new(
        name: impl Into<String>,
        resolve: impl Fn(&ShellEnvFacts) -> BTreeMap<String, String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            variables: BTreeMap::new(),
            resolve: Arc::new(resolve),
        }
    }

    /// Declares `key` with `description`.
    #[must_use]
    pub fn variable(mut self, key: impl Into<String>, description: impl Into<String>) -> Self {
        self.variables.insert(key.into(), description.into());
        self
    }
}

impl fmt::Debug for ShellEnvContributor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShellEnvContributor")
            .field("name", &self.name)
            .field("variables", &self.variables)
            .finish_non_exhaustive()
    }
}

/// One declared key, as [`ShellEnv::list`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellEnvVariableInfo {
    /// The key.
    pub key: String,
    /// The contributor owning it.
    pub contributor: String,
    /// What it holds.
    pub description: String,
}

#[derive(Default)]
struct State {
    contributors: BTreeMap<String, ShellEnvContributor>,
    owners: BTreeMap<String, String>,
}

/// The `DSH_*` registry. See the crate docs.
pub struct ShellEnv {
    dsh_home: String,
    state: Arc<Mutex<State>>,
}

impl fmt::Debug for ShellEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShellEnv")
            .field("dsh_home", &self.dsh_home)
            .field("variables", &self.list())
            .finish()
    }
}

/// A contributor's registration: dropping it (or [`ShellEnvRegistration::dispose`])
/// unregisters the contributor.
#[must_use = "dropping the registration unregisters the contributor"]
pub struct ShellEnvRegistration {
    state: Weak<Mutex<State>>,
    name: String,
}

impl ShellEnvRegistration {
    /// Unregisters the contributor now.
    pub fn dispose(self) {}
}

impl Drop for ShellEnvRegistration {
    fn drop(&mut self) {
        if let Some(state) = self.state.upgrade() {
            let mut state = lock(&state);
            if let Some(contributor) = state.contributors.remove(&self.name) {
                for key in contributor.variables.keys() {
                    state.owners.remove(key);
                }
            }
        }
    }
}

impl fmt::Debug for ShellEnvRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ShellEnvRegistration")
            .field(&self.name)
            .finish()
    }
}

/// Whether `key` is `DSH_` followed by `[A-Z][A-Z0-9_]*`.
fn valid_key(key: &str) -> bool {
    let Some(suffix) = key.strip_prefix("DSH_") else {
        return false;
    };
    let mut bytes = suffix.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_uppercase())
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

impl ShellEnv {
    /// A registry whose `DSH_HOME` is `dsh_home` (see [`crate::resolve_dsh_home`]).
    pub fn new(dsh_home: &Path) -> Self {
        Self {
            dsh_home: dsh_home.to_string_lossy().into_owned(),
            state: Arc::new(Mutex::new(State::default())),
        }
    }

    /// The `DSH_HOME` every snapshot carries.
    pub fn dsh_home(&self) -> &str {
        &self.dsh_home
    }

    /// Registers `contributor` until the returned registration is dropped or disposed.
    pub fn register(
        &self,
        contributor: ShellEnvContributor,
    ) -> Result<ShellEnvRegistration, ShellEnvError> {
        let name = contributor.name.clone();
        if name.trim().is_empty() {
            return Err(ShellEnvError::BlankName);
        }
        let mut state = lock(&self.state);
        if state.contributors.contains_key(&name) {
            return Err(ShellEnvError::DuplicateName(name));
        }
        for (key, description) in &contributor.variables {
            let refuse = |key: &str| (name.clone(), key.to_owned());
            if !valid_key(key) {
                let (contributor, key) = refuse(key);
                return Err(ShellEnvError::InvalidKey { contributor, key });
            }
            if RESERVED_KEYS.contains(&key.as_str()) {
                let (contributor, key) = refuse(key);
                return Err(ShellEnvError::ReservedKey { contributor, key });
            }
            if description.trim().is_empty() {
                let (contributor, key) = refuse(key);
                return Err(ShellEnvError::MissingDescription { contributor, key });
            }
            if let Some(owner) = state.owners.get(key) {
                return Err(ShellEnvError::KeyOwned {
                    key: key.clone(),
                    owner: owner.clone(),
                    contributor: name,
                });
            }
        }
        for key in contributor.variables.keys() {
            state.owners.insert(key.clone(), name.clone());
        }
        state.contributors.insert(name.clone(), contributor);
        Ok(ShellEnvRegistration {
            state: Arc::downgrade(&self.state),
            name,
        })
    }

    /// Registers `contributor` for as long as the fiber of `ctx` is loaded (dsh's
    /// effect-scoped registration); the disposer unregisters it earlier.
    pub fn register_in(
        &self,
        ctx: &Context,
        contributor: ShellEnvContributor,
    ) -> Result<Disposer, ShellEnvError> {
        let registration = self.register(contributor)?;
        Ok(ctx.effect(move || drop(registration))?)
    }

    /// The `DSH_*` snapshot for one call: the built-ins, then each contributor's values in
    /// name order. A contributor returning a key it did not declare is an error.
    pub fn collect(
        &self,
        facts: &ShellEnvFacts,
    ) -> Result<BTreeMap<String, String>, ShellEnvError> {
        let mut values = BTreeMap::from([
            (DSH_HOME.to_owned(), self.dsh_home.clone()),
            (DSH_SHELL.to_owned(), "1".to_owned()),
        ]);
        if let Some(session) = &facts.session {
            values.insert(DSH_SESSION_ID.to_owned(), session.id.clone());
        }
        // Resolvers run without the lock, so they may use the registry themselves.
        let contributors: Vec<ShellEnvContributor> =
            lock(&self.state).contributors.values().cloned().collect();
        for contributor in contributors {
            for (key, value) in (contributor.resolve)(facts) {
                if !contributor.variables.contains_key(&key) {
                    return Err(ShellEnvError::Undeclared {
                        contributor: contributor.name,
                        key,
                    });
                }
                values.insert(key, value);
            }
        }
        Ok(values)
    }

    /// Every contributed key with its owner and description, by key (the built-ins are not
    /// listed, as in dsh).
    pub fn list(&self) -> Vec<ShellEnvVariableInfo> {
        let state = lock(&self.state);
        let mut list: Vec<ShellEnvVariableInfo> = state
            .contributors
            .values()
            .flat_map(|contributor| {
                contributor
                    .variables
                    .iter()
                    .map(|(key, description)| ShellEnvVariableInfo {
                        key: key.clone(),
                        contributor: contributor.name.clone(),
                        description: description.clone(),
                    })
            })
            .collect();
        list.sort_by(|a, b| a.key.cmp(&b.key));
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_grammar() {
        for key in ["DSH_A", "DSH_SESSION_JSONL", "DSH_X1_2"] {
            assert!(valid_key(key), "{key}");
        }
        for key in [
            "dsh_invalid",
            "DSH_",
            "DSH_1A",
            "DSH__A",
            "DSH_a",
            "HOME",
            "DSH_A-B",
        ] {
            assert!(!valid_key(key), "{key}");
        }
    }
}
