use std::path::PathBuf;

use dsh_shell::{NetworkPolicy, ProtectedPath};
use pretty_assertions::assert_eq;

use super::*;

struct Fixed(SandboxExecutionPolicy);

impl SandboxPolicyService for Fixed {
    fn resolve(
        &self,
        _session_id: Option<&str>,
        _session_cwd: Option<&str>,
        approved: Option<SandboxMode>,
    ) -> SandboxExecutionPolicy {
        let mut policy = self.0.clone();
        if let Some(mode) = approved {
            policy.mode = mode;
        }
        policy
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    workspace: PathBuf,
    outside: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let workspace = root.join("ws");
    let outside = root.join("outside");
    std::fs::create_dir_all(workspace.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    Setup {
        _dir: dir,
        workspace,
        outside,
    }
}

fn disk(setup: &Setup, mode: SandboxMode, protected: Vec<ProtectedPath>) -> SandboxedDisk {
    let policy = SandboxExecutionPolicy {
        mode,
        workspace_root: setup.workspace.clone(),
        session_id: None,
        network: NetworkPolicy::Allow,
        protected_paths: protected,
    };
    SandboxedDisk::new(
        LocalDisk::new(&setup.workspace, dsh_fs::DEFAULT_DIFF_BASIS_MAX_BYTES),
        Arc::new(Fixed(policy)),
    )
}

fn write(disk: &SandboxedDisk, path: &str) -> Result<(), String> {
    let target = disk.resolve(path, None).map_err(|e| e.to_string())?;
    disk.write_text(&target, "x", None, None)
        .map(|_| ())
        .map_err(|error| {
            format!(
                "{}: {}",
                error.code().map_or("-", FsErrorCode::as_str),
                error.message()
            )
        })
}

#[test]
fn read_only_denies_every_mutation_and_allows_reads() {
    let setup = setup();
    std::fs::write(setup.workspace.join("a.txt"), "old").unwrap();
    let disk = disk(&setup, SandboxMode::ReadOnly, Vec::new());
    assert_eq!(disk.sandbox_mode(), Some(SandboxMode::ReadOnly));
    let target = disk.resolve("a.txt", None).unwrap();
    let shown = &target.display_path;
    assert_eq!(
        write(&disk, "a.txt").unwrap_err(),
        format!(
            "FS_SANDBOX_DENIED: cannot write \"{shown}\": file access denied under read-only mode"
        )
    );
    let edit = FsEditRequest {
        old_string: "old".into(),
        new_string: "new".into(),
        replace_all: false,
    };
    let error = disk.edit_text(&target, &edit, None, None).unwrap_err();
    assert_eq!(error.code(), Some(FsErrorCode::SandboxDenied));
    assert_eq!(disk.read_text(&target).unwrap(), "old");
}

#[test]
fn workspace_write_fences_to_the_workspace_and_temp() {
    let setup = setup();
    let disk = disk(&setup, SandboxMode::WorkspaceWrite, Vec::new());
    write(&disk, "inside.txt").unwrap();
    write(&disk, "sub/new/deeper.txt").unwrap();
    let tmp = tempfile::NamedTempFile::new_in("/tmp").unwrap();
    write(&disk, &tmp.path().to_string_lossy()).unwrap();
    let outside = setup.outside.join("x.txt");
    assert!(
        write(&disk, &outside.to_string_lossy())
            .unwrap_err()
            .contains("FS_SANDBOX_DENIED")
    );
    assert!(
        write(&disk, "../outside/y.txt")
            .unwrap_err()
            .contains("workspace-write mode")
    );
    std::os::unix::fs::symlink(&setup.outside, setup.workspace.join("link")).unwrap();
    assert!(
        write(&disk, "link/z.txt")
            .unwrap_err()
            .contains("FS_SANDBOX_DENIED")
    );
    assert!(!setup.outside.join("z.txt").exists());
    assert!(!outside.exists());
}

#[test]
fn a_link_swapped_in_after_resolution_is_judged_by_where_it_points() {
    let setup = setup();
    let disk = disk(&setup, SandboxMode::WorkspaceWrite, Vec::new());
    std::fs::create_dir(setup.workspace.join("dir")).unwrap();
    let target = disk.resolve("dir/f.txt", None).unwrap();
    std::fs::remove_dir(setup.workspace.join("dir")).unwrap();
    std::os::unix::fs::symlink(&setup.outside, setup.workspace.join("dir")).unwrap();
    let error = disk.write_text(&target, "x", None, None).unwrap_err();
    assert_eq!(error.code(), Some(FsErrorCode::SandboxDenied));
    assert!(!setup.outside.join("f.txt").exists());
}

#[test]
fn protected_paths_stay_read_only_inside_the_workspace() {
    let setup = setup();
    let store = setup.workspace.join("store");
    std::fs::create_dir(&store).unwrap();
    let disk = disk(
        &setup,
        SandboxMode::WorkspaceWrite,
        vec![ProtectedPath::new(&store, "the session store")],
    );
    assert!(
        write(&disk, "store/log.jsonl")
            .unwrap_err()
            .contains("FS_SANDBOX_DENIED")
    );
    write(&disk, "elsewhere.txt").unwrap();
}

#[test]
fn full_access_and_an_approved_escalation_write_anywhere() {
    let setup = setup();
    let disk = disk(&setup, SandboxMode::ReadOnly, Vec::new());
    let outside = setup.outside.join("granted.txt");
    let target = disk.resolve(&outside.to_string_lossy(), None).unwrap();
    let granted = SandboxExecutionPolicy {
        mode: SandboxMode::DangerFullAccess,
        ..disk.policies.standing()
    };
    disk.write_text(&target, "ok", None, Some(&granted))
        .unwrap();
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "ok");
}

#[test]
fn the_harness_proc_entries_are_never_read() {
    let setup = setup();
    let disk = disk(&setup, SandboxMode::DangerFullAccess, Vec::new());
    for path in ["/proc/self/environ", "/proc/self/status"] {
        let target = disk.resolve(path, None).unwrap();
        let error = disk.read_text(&target).unwrap_err();
        assert_eq!(error.code(), Some(FsErrorCode::SandboxDenied), "{path}");
    }
    let own = format!("/proc/{}/maps", std::process::id());
    let target = disk.resolve(&own, None).unwrap();
    assert!(disk.read_bytes(&target, 1 << 20).is_err());
}
