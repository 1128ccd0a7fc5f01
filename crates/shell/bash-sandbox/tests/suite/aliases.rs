//! A carve-out stays read-only through every path the host's mounts show it under, not only
//! its own: Landlock grants inodes, so another mount of the same directory (`/tmp` also
//! bound at `/var/tmp/alt`, a project bound at `/workspace`) would otherwise reach it.
//!
//! The test needs root: it makes that other mount itself, in a mount namespace of its own
//! (entered on the test thread before any other thread starts, so the runtime's threads,
//! the launch threads and the runner processes all inherit it and nothing reaches the host).

use std::path::{Path, PathBuf};

use dsh_shell::{NetworkPolicy, ProtectedPath, SandboxMode};
use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::sched::{CloneFlags, unshare};

use super::support::{both, outside_dir, policy, run_in, shell_quote};

/// Says why the test did nothing.
#[expect(
    clippy::print_stderr,
    reason = "a skipped test says so where the test runner shows it"
)]
fn skipped(reason: &str) {
    eprintln!("skipped: {reason}");
}

/// A bind mount, detached when dropped (before the directories it joins are removed, so
/// removing the mount point does not reach through it).
struct Bind(PathBuf);

impl Bind {
    fn new(source: &Path, target: &Path) -> Self {
        mount(
            Some(source),
            target,
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        )
        .unwrap();
        Self(target.to_path_buf())
    }
}

impl Drop for Bind {
    fn drop(&mut self) {
        let _ = umount2(&self.0, MntFlags::MNT_DETACH);
    }
}

/// Enters a private mount namespace of this thread's own, or says why not (not root).
fn own_namespace() -> bool {
    if !nix::unistd::geteuid().is_root() {
        skipped("needs root");
        return false;
    }
    unshare(CloneFlags::CLONE_NEWNS).unwrap();
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .unwrap();
    true
}

/// A runtime started after the namespace was entered: its threads inherit it.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A workspace `<base>/work` with the carve-out `<base>/work/dh` holding `settings.yml`
/// and `profiles/`, and its standing policy.
fn workspace(base: &Path) -> (PathBuf, PathBuf, dsh_shell::SandboxExecutionPolicy) {
    let workspace = base.join("work");
    let home = workspace.join("dh");
    std::fs::create_dir_all(home.join("profiles")).unwrap();
    std::fs::write(home.join("settings.yml"), "kept: true\n").unwrap();
    let mut standing = policy(
        SandboxMode::WorkspaceWrite,
        &workspace,
        NetworkPolicy::Allow,
    );
    standing.protected_paths = vec![ProtectedPath::new(&home, "dsh's home ($DSH_HOME)")];
    (workspace, home, standing)
}

#[test]
fn a_carve_out_stays_read_only_through_another_mount_of_its_directory() {
    if !own_namespace() {
        return;
    }
    // base/work is the workspace, base/work/dh the carve-out; base is also seen at alias.
    let (_base, base) = outside_dir();
    let (_alias, alias) = outside_dir();
    let (workspace, home, standing) = workspace(&base);
    let _bind = Bind::new(&base, &alias);
    let through_alias = alias.join("work");
    assert_eq!(
        std::fs::read_to_string(through_alias.join("dh/settings.yml")).unwrap(),
        "kept: true\n",
        "the alias shows the workspace"
    );
    runtime().block_on(async {
        for (strategy, fixture) in both(&standing) {
            let settings = shell_quote(&through_alias.join("dh/settings.yml"));
            let planted = shell_quote(&through_alias.join("dh/planted.yml"));
            let command = format!(
                "echo x > {settings}; echo write=$?; touch {planted}; echo plant=$?; \
                 rm -f {settings}; echo remove=$?"
            );
            let result = run_in(&fixture, &command, &workspace, &[]).await;
            for refused in ["write=1", "plant=1", "remove=1"] {
                assert!(
                    result.stdout.text.contains(refused),
                    "{strategy}: {refused}: {result:?}"
                );
            }
            assert_eq!(
                std::fs::read_to_string(home.join("settings.yml")).unwrap(),
                "kept: true\n",
                "{strategy}"
            );
            assert!(!home.join("planted.yml").exists(), "{strategy}");
            // The rest of the workspace stays writable through the alias too.
            let beside = through_alias.join("beside.txt");
            let command = format!("echo ok > {}", shell_quote(&beside));
            let result = run_in(&fixture, &command, &workspace, &[]).await;
            assert_eq!(result.exit_code, Some(0), "{strategy}: {result:?}");
            assert_eq!(
                std::fs::read_to_string(workspace.join("beside.txt")).unwrap(),
                "ok\n",
                "{strategy}"
            );
            std::fs::remove_file(workspace.join("beside.txt")).unwrap();
        }
    });
}

#[test]
fn a_part_of_a_carve_out_mounted_elsewhere_stays_read_only_there() {
    if !own_namespace() {
        return;
    }
    // base/work/dh/profiles is also seen at base/work/mirror, in the writable workspace
    // (elsewhere than under a writable root, Landlock would refuse the write anyway: it walks
    // the path as mounted, and that one passes no granted directory).
    let (_base, base) = outside_dir();
    let (workspace, home, standing) = workspace(&base);
    let mirror = workspace.join("mirror");
    std::fs::create_dir(&mirror).unwrap();
    let _bind = Bind::new(&home.join("profiles"), &mirror);
    runtime().block_on(async {
        for (strategy, fixture) in both(&standing) {
            let command =
                "touch mirror/planted.yml; echo plant=$?; touch beside.txt; echo beside=$?";
            let result = run_in(&fixture, command, &workspace, &[]).await;
            for expected in ["plant=1", "beside=0"] {
                assert!(
                    result.stdout.text.contains(expected),
                    "{strategy}: {expected}: {result:?}"
                );
            }
            assert!(!home.join("profiles/planted.yml").exists(), "{strategy}");
            std::fs::remove_file(workspace.join("beside.txt")).unwrap();
        }
    });
}

#[test]
fn a_mount_made_after_a_carve_out_was_built_is_covered_too() {
    if !own_namespace() {
        return;
    }
    // Mounts of this namespace reach the launch threads' namespaces (they are its slaves),
    // as the host's do.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_SHARED,
        None::<&str>,
    )
    .unwrap();
    let (_base, base) = outside_dir();
    let (_alias, alias) = outside_dir();
    let (workspace, home, standing) = workspace(&base);
    runtime().block_on(async {
        for (strategy, fixture) in both(&standing) {
            // Built (and held, on the thread strategy) before the other view exists.
            let first = run_in(&fixture, "true", &workspace, &[]).await;
            assert_eq!(first.exit_code, Some(0), "{strategy}: {first:?}");
            let bind = Bind::new(&base, &alias);
            let settings = shell_quote(&alias.join("work/dh/settings.yml"));
            let result = run_in(
                &fixture,
                &format!("echo x > {settings}; echo write=$?"),
                &workspace,
                &[],
            )
            .await;
            assert!(
                result.stdout.text.contains("write=1"),
                "{strategy}: {result:?}"
            );
            assert_eq!(
                std::fs::read_to_string(home.join("settings.yml")).unwrap(),
                "kept: true\n",
                "{strategy}"
            );
            drop(bind);
        }
    });
}
