//! Boot and compose benchmarks: 100 rows of no-op plugins through activation and audit, and
//! composing the shipped web profile with its dump.

#![expect(
    clippy::unwrap_used,
    reason = "a benchmark's setup fails by panicking: there is no caller to hand an error to"
)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;

use criterion::Criterion;
use criterion::criterion_group;
use criterion::criterion_main;
use dsh_compose::Layer;
use dsh_compose::Registry;
use dsh_compose::boot;
use dsh_compose::compose;
use dsh_compose::expr::LaunchEnv;
use dsh_compose::patch::PatchFileKind;
use dsh_compose::patch::PatchList;
use dsh_kernel::BoxError;
use dsh_kernel::Context;
use dsh_kernel::Kernel;
use dsh_kernel::Plugin;
use dsh_kernel::ServiceKey;

/// Does nothing.
struct Noop;
impl Plugin for Noop {
    type Config = ();
    async fn apply(&self, _: Context, (): ()) -> Result<(), BoxError> {
        Ok(())
    }
}

/// Provides the service named by its config, so the next row can inject it.
struct Provider;
impl Plugin for Provider {
    type Config = String;
    async fn apply(&self, ctx: Context, name: String) -> Result<(), BoxError> {
        let key: ServiceKey<()> = ServiceKey::new(Box::leak(name.into_boxed_str()));
        ctx.provide(&key, Arc::new(()))?;
        Ok(())
    }
}

fn rows(count: usize, chained: bool) -> Layer {
    let mut text = String::from("- insert:\n");
    for index in 0..count {
        if chained {
            let inject = if index == 0 {
                String::new()
            } else {
                format!(", inject: [svc-{}]", index - 1)
            };
            writeln!(
                text,
                "    - {{id: row-{index}, name: provider, config: svc-{index}{inject}}}"
            )
            .unwrap();
        } else {
            writeln!(text, "    - {{id: row-{index}, name: noop}}").unwrap();
        }
    }
    Layer {
        label: "bench".to_owned(),
        patches: PatchList::parse(&text, "bench", PatchFileKind::Bundle).unwrap(),
    }
}

fn launch() -> Arc<LaunchEnv> {
    Arc::new(LaunchEnv::capture(PathBuf::from("/tmp/dsh-bench")))
}

fn boot_benchmarks(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut registry = Registry::new();
    registry.register("noop", Noop).unwrap();
    registry.register("provider", Provider).unwrap();
    let launch = launch();
    for (name, chained) in [
        ("boot 100 no-op rows", false),
        ("boot 100 rows, each injecting the previous", true),
    ] {
        let composition = compose(&[rows(100, chained)]).unwrap();
        c.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let kernel = Kernel::new().unwrap();
                    let tree = boot(&kernel, &composition, &registry, Arc::clone(&launch))
                        .await
                        .unwrap();
                    black_box(tree);
                    kernel
                })
            });
        });
    }
}

fn compose_benchmarks(c: &mut Criterion) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../profiles/bundles/");
    let read = |name: &str| std::fs::read_to_string(format!("{root}{name}.patch.yml")).unwrap();
    let base = read("base");
    let web = read("web");
    c.bench_function("compose and dump the web profile", |b| {
        b.iter(|| {
            let layers = [
                Layer {
                    label: "dsh-base".to_owned(),
                    patches: PatchList::parse(&base, "dsh-base", PatchFileKind::Bundle).unwrap(),
                },
                Layer {
                    label: "dsh-web".to_owned(),
                    patches: PatchList::parse(&web, "dsh-web", PatchFileKind::Bundle).unwrap(),
                },
            ];
            black_box(compose(&layers).unwrap().render_dump())
        });
    });
}

criterion_group!(benches, boot_benchmarks, compose_benchmarks);
criterion_main!(benches);
