//! Booting part of a profile: the rows a subcommand needs (`dsh sessions`, `dsh tools`), so
//! the same `--profile`/`--patch` that shape a run shape what it sees.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use dsh_compose::boot;
use dsh_compose::expr::LaunchEnv;
use dsh_kernel::{Context, Kernel};
use dsh_shell::SANDBOX_PROTECTION;

use crate::builtins;
use crate::prepare::prepare;
use crate::protection;

/// Composes `profile` with `patches`, keeps the rows whose plugin `keep` accepts, boots them,
/// runs `work` with the root context and the dsh home, then shuts the kernel down. A boot
/// failure is reported with `what` (such as "the tools").
pub async fn with_rows<T, F, Fut>(
    profile: &str,
    patches: &[String],
    keep: impl Fn(&str) -> bool,
    what: &str,
    work: F,
) -> anyhow::Result<T>
where
    F: FnOnce(Context, PathBuf) -> Fut,
    Fut: Future<Output = anyhow::Result<T>>,
{
    let mut prepared = prepare(profile, true, patches)?;
    prepared.composition.retain_rows(|row| {
        row.as_map()
            .and_then(|map| map.get("name"))
            .and_then(|name| name.as_str())
            .is_some_and(&keep)
    });
    let kernel = Kernel::new()?;
    let (protection, _held) = protection::for_launch(&prepared);
    kernel.root().provide(&SANDBOX_PROTECTION, protection)?;
    let home = prepared.home.root().to_path_buf();
    let launch = Arc::new(LaunchEnv::capture(home.clone()));
    let registry = builtins::registry();
    let outcome = match boot(&kernel, &prepared.composition, &registry, launch).await {
        Err(error) => Err(anyhow::Error::new(error).context(format!("{what} failed to load"))),
        Ok(_) => work(kernel.root(), home).await,
    };
    kernel.shutdown().await;
    outcome
}
