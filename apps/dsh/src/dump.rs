//! `--dump-config` and `--dump-default-config`: print the composition without booting.

use crate::output;
use crate::prepare::prepare;

/// Prints the composed rows of `profile` as one YAML document with provenance comments.
pub fn dump(profile: &str, default_only: bool, patches: &[String]) -> anyhow::Result<()> {
    let prepared = prepare(profile, !default_only, patches)?;
    output::stdout(&prepared.composition.render_dump());
    Ok(())
}
