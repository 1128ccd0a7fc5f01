//! The bundles and profiles shipped inside the binary, so it works outside the repository.

use dsh_compose::profile::Catalog;
use dsh_compose::profile::ProfileError;

/// The shipped catalog: bundles `dsh-base`, `dsh-headless`, `dsh-web`; profiles `headless`
/// and `web`.
pub fn shipped() -> Result<Catalog, ProfileError> {
    Catalog::new()
        .with_bundle(
            "dsh-base",
            include_str!("../../../profiles/bundles/base.patch.yml"),
        )
        .with_bundle(
            "dsh-headless",
            include_str!("../../../profiles/bundles/headless.patch.yml"),
        )
        .with_bundle(
            "dsh-web",
            include_str!("../../../profiles/bundles/web.patch.yml"),
        )
        .with_template(
            "headless",
            include_str!("../../../profiles/headless/profile.yml"),
        )?
        .with_template("web", include_str!("../../../profiles/web/profile.yml"))
}
