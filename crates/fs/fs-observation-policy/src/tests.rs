use std::path::PathBuf;

use dsh_fs::events::{edit_intent, observe, write_intent};
use dsh_fs::{FsActor, FsTarget, FsVersion};
use dsh_kernel::Kernel;
use pretty_assertions::assert_eq;

use super::*;

fn target() -> FsTarget {
    FsTarget {
        target_key: PathBuf::from("/ws/a.txt"),
        display_path: "/ws/a.txt".into(),
    }
}

fn actor(session: Option<&str>) -> FsActor {
    FsActor {
        session_id: session.map(str::to_owned),
        tool_name: "read".into(),
        call_id: "c1".into(),
    }
}

async fn kernel() -> Kernel {
    let kernel = Kernel::new().unwrap();
    kernel
        .root()
        .plugin(FsObservationPolicyPlugin, serde_json::Value::Null)
        .unwrap();
    kernel.settle().await;
    kernel
}

async fn decisions(
    ctx: &Context,
    session: Option<&str>,
) -> (Option<FsWriteIntent>, Result<Option<FsVersion>, String>) {
    let write = write_intent(ctx, target(), actor(session), None)
        .await
        .unwrap();
    let edit = edit_intent(ctx, target(), actor(session))
        .await
        .map_err(|error| {
            format!(
                "{}: {}",
                error.code().map_or("-", FsErrorCode::as_str),
                error.message()
            )
        });
    (write, edit)
}

#[tokio::test]
async fn the_decision_tables() {
    let kernel = kernel().await;
    let ctx = kernel.root();
    assert_eq!(
        decisions(&ctx, Some("s1")).await,
        (
            Some(FsWriteIntent::CreateIfAbsent),
            Err("FS_NOT_OBSERVED: edit requires reading \"/ws/a.txt\" first".into())
        )
    );
    let v1 = FsVersion("1:2:3:4:5".into());
    observe(
        &ctx,
        &target(),
        FsObservation::Present(v1.clone()),
        &actor(Some("s1")),
    )
    .unwrap();
    assert_eq!(
        decisions(&ctx, Some("s1")).await,
        (
            Some(FsWriteIntent::ReplaceIfVersion(v1.clone())),
            Ok(Some(v1.clone()))
        )
    );
    observe(&ctx, &target(), FsObservation::Absent, &actor(Some("s1"))).unwrap();
    assert_eq!(
        decisions(&ctx, Some("s1")).await,
        (
            Some(FsWriteIntent::CreateIfAbsent),
            Err("FS_NOT_FOUND: cannot edit \"/ws/a.txt\": not found".into())
        )
    );
    let v2 = FsVersion("2".into());
    observe(
        &ctx,
        &target(),
        FsObservation::Present(v2.clone()),
        &actor(Some("s1")),
    )
    .unwrap();
    assert_eq!(decisions(&ctx, Some("s1")).await.1, Ok(Some(v2)));
    kernel.shutdown().await;
}

#[tokio::test]
async fn sessions_are_isolated_and_calls_without_one_are_not_kept() {
    let kernel = kernel().await;
    let ctx = kernel.root();
    observe(
        &ctx,
        &target(),
        FsObservation::Present(FsVersion("v".into())),
        &actor(Some("s1")),
    )
    .unwrap();
    assert!(decisions(&ctx, Some("s2")).await.1.is_err());
    observe(
        &ctx,
        &target(),
        FsObservation::Present(FsVersion("v".into())),
        &actor(None),
    )
    .unwrap();
    assert_eq!(
        decisions(&ctx, None).await.0,
        Some(FsWriteIntent::CreateIfAbsent)
    );
    assert!(decisions(&ctx, None).await.1.is_err());
    kernel.shutdown().await;
}

#[tokio::test]
async fn the_first_decider_wins() {
    let kernel = kernel().await;
    let ctx = kernel.root();
    ctx.on::<FsWriteIntentEvent>(|_args: dsh_fs::events::FsIntentArgs, _next| async { Ok(None) })
        .unwrap();
    assert_eq!(
        decisions(&ctx, Some("s1")).await.0,
        Some(FsWriteIntent::CreateIfAbsent)
    );
    kernel.shutdown().await;
}
