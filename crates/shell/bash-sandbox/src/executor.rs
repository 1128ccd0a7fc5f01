//! `SandboxBashExecutor`: the shell seam with every command confined (dsh's
//! `bash-sandbox/src/index.ts`).

use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use dsh_kernel::sync::lock;
use dsh_shell::{
    BashRunner, LaunchOptions, LaunchThread, ProcessSettlement, ProtectedPath,
    STATUS_FD_PLACEHOLDER, SandboxExecutionPolicy, SandboxMode, SandboxProtection, SettleHook,
    ShellError, ShellExecRequest, ShellExecSpec, ShellExecutor, ShellProcess, ShellRunResult,
    ShellSandboxInfo, WritePlan, bash_argv, write_plan,
};

use crate::backend::{
    Backend, Enforcement, LaunchStrategy, SandboxOptions, bwrap_profile_args, landlock_confinement,
    runner_profile_args, select_backend, wrapped_argv,
};
use crate::classify::{is_runner_spawn_failure, launch_failure, matches_signature};
use crate::confine::{Confinement, LandlockSupport};
use crate::filters::HarnessGuard;
use crate::held::{Held, HeldConfinements};
use crate::standing::StandingPolicy;

/// How moving or removing a carve-out fails: it is a mount point.
const CARVE_OUT_DENIAL: &str = "device or resource busy";

/// The owner named for the spill directory when it is protected.
const SPILL_OWNER: &str = "the spill files of dsh's commands";

/// Runs `bash -c <command>` confined by the first usable backend (Landlock, then
/// bubblewrap), through a [`BashRunner`]'s process runner.
///
/// - `resolve` is the runner's, plus the policy: the request's, else the standing one.
/// - `danger-full-access` runs unconfined, as the runner does; its foreground result says so.
/// - Otherwise the backend is chosen once (the first confined call probes; the verdict,
///   "unavailable" included, is kept for the executor's life). With none, the call fails
///   with [`ShellError::SandboxUnavailable`] and nothing is spawned.
/// - The call's [`WritePlan`] (with the protected paths of the policy, the fenced ports of
///   the [`SandboxProtection`] registry and this executor's spill directory) decides the
///   confinement. Under Landlock it is held on a launch thread the command is forked on;
///   the runner process applies it where a thread cannot (see [`LaunchStrategy`]).
/// - A launcher failure (reported on the status channel, where the command cannot write)
///   fails a foreground call with `SandboxUnavailable` and the launcher's detail, and marks
///   a background process `runnerFailed`. Other outcomes carry `{mode, denied, enforcement}`.
pub struct SandboxBashExecutor {
    bash: BashRunner,
    policy: Arc<dyn StandingPolicy>,
    selector: Arc<Selector>,
    threads: Arc<Threads>,
    protection: Option<Arc<SandboxProtection>>,
}

struct Selector {
    options: SandboxOptions,
    verdict: OnceLock<Option<Backend>>,
}

impl Selector {
    /// The cached verdict, probing (blocking) on first use.
    fn verdict(&self) -> Option<Backend> {
        *self.verdict.get_or_init(|| select_backend(&self.options))
    }
}

/// The launch threads the runner and bubblewrap are forked on: a base confinement of
/// fenced ports and scoped signals only (no file access handled, so what runs there may
/// still enter namespaces and mount). Replaced ones are kept: a runner or bubblewrap dies
/// with the thread that forked it (`PR_SET_PDEATHSIG`), so those threads must outlive it.
#[derive(Default)]
struct Bases {
    current: Mutex<Option<(Confinement, Arc<LaunchThread>)>>,
    retired: Mutex<Vec<Arc<LaunchThread>>>,
}

impl Bases {
    fn get(&self, base: &Confinement) -> Result<Arc<LaunchThread>, String> {
        let mut current = lock(&self.current);
        if let Some((key, thread)) = current.as_ref()
            && key == base
        {
            return Ok(Arc::clone(thread));
        }
        crate::powers::keep_memory_private()?;
        let owned = base.clone();
        // Under Landlock the runner's commands share the base's domain for signals, so the
        // base guards dsh's ids and its own; bubblewrap's commands get a PID namespace (and a
        // setuid bubblewrap could not run under the guard's `no_new_privs`).
        let guard = base.guard_harness.then(HarnessGuard::of_harness);
        let (thread, _) = LaunchThread::start("dsh-confine-base", move || {
            let guard = guard.map(HarnessGuard::and_this_thread);
            owned.apply(crate::carve::NamespaceMode::MountOnly, guard.as_ref())
        })?;
        if let Some((_, old)) = current.replace((base.clone(), Arc::clone(&thread))) {
            lock(&self.retired).push(old);
        }
        Ok(thread)
    }

    fn is_current(&self, base: &Confinement) -> bool {
        lock(&self.current)
            .as_ref()
            .is_some_and(|(key, _)| key == base)
    }
}

/// How one confined command is launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// Forked on a thread holding its whole confinement.
    Held,
    /// Through the Landlock runner process.
    Runner,
    /// Through bubblewrap.
    Bwrap,
}

/// A launch thread a confined command needs.
#[derive(Debug, Clone)]
enum Need {
    /// The thread holding a whole confinement.
    Held(Confinement),
    /// The base thread a runner or bubblewrap is forked on.
    Base(Confinement),
}

/// One confined launch before its thread is known: what runs and how its outcome is read.
struct Planned {
    mode: SandboxMode,
    backend: Backend,
    route: Route,
    argv: Vec<String>,
    need: Need,
    carve_outs: bool,
}

/// One confined launch, ready.
struct Confined {
    planned: Planned,
    enforcement: Enforcement,
    launch: LaunchOptions,
}

impl Confined {
    fn info(&self, denied: bool, runner_failed: bool) -> ShellSandboxInfo {
        ShellSandboxInfo {
            mode: self.planned.mode.as_str().to_owned(),
            denied,
            enforcement: Some(self.enforcement.as_str().to_owned()),
            runner_failed: runner_failed.then_some(true),
        }
    }

    fn program(&self) -> &str {
        self.planned.argv.first().map_or("", String::as_str)
    }

    /// The launcher's failure, if the command never ran.
    fn failure(
        &self,
        exit_code: Option<i32>,
        stderr: &str,
        report: Option<&str>,
    ) -> Option<String> {
        match self.planned.route {
            Route::Held => None,
            Route::Runner => launch_failure::runner(report),
            Route::Bwrap => launch_failure::bwrap(exit_code, stderr, report),
        }
    }

    fn denied(&self, exit_code: Option<i32>, stderr: &str) -> bool {
        matches_signature(exit_code, stderr, self.planned.backend.denial_signatures())
            || (self.planned.carve_outs
                && matches_signature(exit_code, stderr, &[CARVE_OUT_DENIAL]))
    }
}

fn unavailable(mode: SandboxMode, detail: Option<&str>) -> ShellError {
    ShellError::SandboxUnavailable {
        message: dsh_shell::sandbox_unavailable_message(mode, detail),
    }
}

/// A confinement that could not be set up for this call: the command did not run.
fn not_set_up(mode: SandboxMode, detail: &str) -> ShellError {
    ShellError::SandboxUnavailable {
        message: format!(
            "sandbox mode \"{}\": the command was not run because its confinement could not \
             be set up: {detail}",
            mode.as_str()
        ),
    }
}

/// The launch threads of one executor.
struct Threads {
    held: HeldConfinements,
    bases: Bases,
}

impl Threads {
    /// Whether `need` is built already (so getting it does not block).
    fn is_ready(&self, need: &Need) -> bool {
        match need {
            Need::Held(confinement) => self.held.is_held(confinement),
            Need::Base(base) => self.bases.is_current(base),
        }
    }

    /// The thread of `need` and, for a held confinement, how it is enforced; builds it
    /// (blocking) if needed.
    fn get(&self, need: &Need) -> Result<Ready, String> {
        match need {
            Need::Held(confinement) => {
                let Held { thread, enforced } = self.held.get(confinement)?;
                Ok((thread, Some(Enforcement::of(enforced))))
            }
            Need::Base(base) => Ok((self.bases.get(base)?, None)),
        }
    }
}

impl SandboxBashExecutor {
    /// An executor confining through `options`, running its processes with `bash`, with
    /// `policy` for calls that bring none.
    pub fn new(bash: BashRunner, policy: Arc<dyn StandingPolicy>, options: SandboxOptions) -> Self {
        Self {
            bash,
            policy,
            selector: Arc::new(Selector {
                options,
                verdict: OnceLock::new(),
            }),
            threads: Arc::new(Threads {
                held: HeldConfinements::default(),
                bases: Bases::default(),
            }),
            protection: None,
        }
    }

    /// Also keeps confined commands away from the ports `protection` fences.
    #[must_use]
    pub fn with_protection(mut self, protection: Arc<SandboxProtection>) -> Self {
        self.protection = Some(protection);
        self
    }

    /// The runner whose process runner owns the processes.
    pub fn bash(&self) -> &BashRunner {
        &self.bash
    }

    /// Where this executor looks for confinement.
    pub fn options(&self) -> &SandboxOptions {
        &self.selector.options
    }

    /// The backend confined commands use; `None` when none is usable. Probes on first use
    /// (blocking, each probe bounded by the probe timeout); the verdict is kept.
    pub fn backend(&self) -> Option<Backend> {
        self.selector.verdict()
    }

    /// Probes the backend and builds the launch thread of the standing policy on a blocking
    /// thread, so the first confined command does not wait for them. Needs a tokio runtime;
    /// without one it does nothing.
    pub fn warm_up(self: &Arc<Self>) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let executor = Arc::clone(self);
        drop(handle.spawn_blocking(move || {
            let policy = executor.policy.standing();
            if policy.mode == SandboxMode::DangerFullAccess {
                return;
            }
            if let Ok(planned) = executor.plan_launch("", &policy, executor.backend(), false) {
                let _ = executor.threads.get(&planned.need);
            }
        }));
    }

    /// Terminates every process tree still alive and waits until each is gone; afterwards
    /// nothing more is started.
    pub async fn shutdown(&self) {
        self.bash.shutdown().await;
    }

    fn policy_of(&self, spec: &ShellExecSpec) -> SandboxExecutionPolicy {
        spec.sandbox_policy
            .clone()
            .unwrap_or_else(|| self.policy.standing())
    }

    fn fenced_ports(&self) -> Vec<u16> {
        self.protection
            .as_ref()
            .map(|protection| protection.fenced_ports())
            .unwrap_or_default()
    }

    async fn backend_async(&self, mode: SandboxMode) -> Result<Option<Backend>, ShellError> {
        if let Some(verdict) = self.selector.verdict.get() {
            return Ok(*verdict);
        }
        let selector = Arc::clone(&self.selector);
        let handle = tokio::runtime::Handle::try_current().map_err(|_| ShellError::NoRuntime)?;
        handle
            .spawn_blocking(move || selector.verdict())
            .await
            .map_err(|error| unavailable(mode, Some(&format!("the backend probe failed: {error}"))))
    }

    /// Plans the confined launch of `command` under `policy`: its write plan (with this
    /// executor's spill directory protected too), the fenced ports, the route, the argv and
    /// the launch thread it needs. `force_runner` takes the runner route under Landlock.
    fn plan_launch(
        &self,
        command: &str,
        policy: &SandboxExecutionPolicy,
        backend: Option<Backend>,
        force_runner: bool,
    ) -> Result<Planned, ShellError> {
        let mode = policy.mode;
        let backend = backend.ok_or_else(|| unavailable(mode, None))?;
        let mut policy = policy.clone();
        if let Ok(spill) = self.bash.process_runner().spill_root() {
            policy
                .protected_paths
                .push(ProtectedPath::new(spill, SPILL_OWNER));
        }
        let plan = write_plan(&policy)
            .map_err(|refusal| ShellError::SandboxUnavailable {
                message: refusal.to_string(),
            })?
            .ok_or_else(|| {
                ShellError::InvalidRequest(
                    "bash-sandbox: danger-full-access has no confinement profile".to_owned(),
                )
            })?;
        let fenced = self.fenced_ports();
        if !fenced.is_empty()
            && !backend
                .landlock()
                .is_some_and(LandlockSupport::fences_ports)
        {
            warn_unfenceable();
        }
        let options = &self.selector.options;
        let mut route = route_of(backend, options, &plan);
        if force_runner && route == Route::Held {
            route = Route::Runner;
        }
        let carve_outs = !plan.carve_outs.is_empty();
        let (argv, need) = match (route, backend.landlock()) {
            (Route::Held, Some(support)) => (
                bash_argv(command),
                Need::Held(landlock_confinement(&policy, &plan, support, &fenced)),
            ),
            (Route::Runner, Some(support)) => {
                let confinement = landlock_confinement(&policy, &plan, support, &fenced);
                let mut prefix = options.runner.argv_prefix()?;
                prefix.extend(runner_profile_args(&confinement)?);
                (
                    wrapped_argv(prefix, command),
                    Need::Base(base_of(&confinement)),
                )
            }
            _ => {
                let bwrap = options
                    .bwrap
                    .as_ref()
                    .ok_or_else(|| unavailable(mode, None))?;
                let mut prefix = bwrap.argv_prefix()?;
                prefix.extend(bwrap_profile_args(&policy, &plan, !fenced.is_empty())?);
                prefix.extend(["--info-fd".to_owned(), STATUS_FD_PLACEHOLDER.to_owned()]);
                (
                    wrapped_argv(prefix, command),
                    Need::Base(Confinement::default()),
                )
            }
        };
        Ok(Planned {
            mode,
            backend,
            route,
            argv,
            need,
            carve_outs,
        })
    }

    /// The confined launch of `command` with its thread (built now if needed): a held
    /// confinement with carve-outs that no thread of this process can hold (no mount
    /// namespace for it here) falls back to the runner, which enters a user namespace.
    fn confined(
        &self,
        command: &str,
        policy: &SandboxExecutionPolicy,
        backend: Option<Backend>,
    ) -> Result<Confined, ShellError> {
        let planned = self.plan_launch(command, policy, backend, false)?;
        match self.thread_blocking(&planned.need) {
            Ok(ready) => Ok(confined(planned, ready)),
            Err(_) if planned.route == Route::Held && planned.carve_outs => {
                let planned = self.plan_launch(command, policy, backend, true)?;
                let ready = self
                    .thread_blocking(&planned.need)
                    .map_err(|detail| not_set_up(policy.mode, &detail))?;
                Ok(confined(planned, ready))
            }
            Err(detail) => Err(not_set_up(policy.mode, &detail)),
        }
    }

    /// The thread of `need`. A build (well under a millisecond, tens of milliseconds with a
    /// port fence) runs in place of the worker's other tasks on a multi-threaded runtime:
    /// they move to another worker meanwhile.
    fn thread_blocking(&self, need: &Need) -> Result<Ready, String> {
        let multi_threaded = tokio::runtime::Handle::try_current().is_ok_and(|handle| {
            handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
        });
        if multi_threaded && !self.threads.is_ready(need) {
            tokio::task::block_in_place(|| self.threads.get(need))
        } else {
            self.threads.get(need)
        }
    }
}

/// A launch thread and, for a held confinement, how it is enforced.
type Ready = (Arc<LaunchThread>, Option<Enforcement>);

fn confined(planned: Planned, (thread, enforced): Ready) -> Confined {
    Confined {
        enforcement: enforced.unwrap_or_else(|| planned.backend.enforcement()),
        launch: LaunchOptions {
            thread: Some(thread),
            status_channel: planned.route != Route::Held,
        },
        planned,
    }
}

/// Says once that fenced ports cost confined commands the network on this host.
fn warn_unfenceable() {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        tracing::warn!(
            "sandbox: this host cannot keep confined commands from one TCP port (that needs \
             Landlock ABI 4, Linux 6.7); while dsh's server runs, confined commands get no \
             network at all"
        );
    });
}

/// How a command with `plan` is launched under `backend`.
fn route_of(backend: Backend, options: &SandboxOptions, plan: &WritePlan) -> Route {
    match backend {
        Backend::Bwrap => Route::Bwrap,
        Backend::Landlock { .. } => match options.strategy {
            LaunchStrategy::Runner => Route::Runner,
            // Only root may enter a mount namespace from a thread; a user namespace needs a
            // single-threaded process.
            LaunchStrategy::Thread
                if !plan.carve_outs.is_empty() && !nix::unistd::geteuid().is_root() =>
            {
                Route::Runner
            }
            LaunchStrategy::Thread => Route::Held,
        },
    }
}

/// The base a runner of `confinement` is forked on: its port fence, signal scoping and guard.
fn base_of(confinement: &Confinement) -> Confinement {
    Confinement {
        fenced_ports: confinement.fenced_ports.clone(),
        scope_signals: confinement.scope_signals,
        guard_harness: confinement.guard_harness,
        ..Confinement::default()
    }
}

#[async_trait]
impl ShellExecutor for SandboxBashExecutor {
    fn resolve(&self, request: ShellExecRequest) -> Result<ShellExecSpec, ShellError> {
        let mut spec = self.bash.resolve(request)?;
        if spec.sandbox_policy.is_none() {
            spec.sandbox_policy = Some(self.policy.standing());
        }
        Ok(spec)
    }

    async fn run(&self, spec: ShellExecSpec) -> Result<ShellRunResult, ShellError> {
        let policy = self.policy_of(&spec);
        if policy.mode == SandboxMode::DangerFullAccess {
            let mut result = self.bash.run(spec).await?;
            result.sandbox = Some(ShellSandboxInfo {
                mode: policy.mode.as_str().to_owned(),
                denied: false,
                enforcement: None,
                runner_failed: None,
            });
            return Ok(result);
        }
        let backend = self.backend_async(policy.mode).await?;
        let confined = self.confined(&spec.command, &policy, backend)?;
        let launched = self
            .bash
            .process_runner()
            .run_with(&confined.planned.argv, &spec, &confined.launch)
            .await;
        let (mut result, report) = match launched {
            Ok(launched) => launched,
            Err(error) if is_runner_spawn_failure(&error, confined.program(), &spec.workdir) => {
                return Err(unavailable(confined.planned.mode, Some(&error.to_string())));
            }
            Err(error) => return Err(error),
        };
        // A launcher failure outranks a denial: the command did not run.
        if let Some(detail) =
            confined.failure(result.exit_code, &result.stderr.text, report.as_deref())
        {
            return Err(not_set_up(confined.planned.mode, &detail));
        }
        let denied = confined.denied(result.exit_code, &result.stderr.text);
        result.sandbox = Some(confined.info(denied, false));
        Ok(result)
    }

    fn start(&self, spec: ShellExecSpec) -> Result<ShellProcess, ShellError> {
        let policy = self.policy_of(&spec);
        if policy.mode == SandboxMode::DangerFullAccess {
            return self.bash.start(spec);
        }
        let backend = self.selector.verdict();
        let confined = self.confined(&spec.command, &policy, backend)?;
        let argv = confined.planned.argv.clone();
        let launch = confined.launch.clone();
        let workdir = spec.workdir.clone();
        let hook: SettleHook = Box::new(move |settlement: &ProcessSettlement<'_>| {
            let runner_failed = match settlement.spawn_error {
                Some(error) => is_runner_spawn_failure(error, confined.program(), &workdir),
                None => confined
                    .failure(
                        settlement.exit_code,
                        settlement.stderr,
                        settlement.launch_report,
                    )
                    .is_some(),
            };
            let denied = !runner_failed && confined.denied(settlement.exit_code, settlement.stderr);
            Some(confined.info(denied, runner_failed))
        });
        self.bash
            .process_runner()
            .start_with(&argv, &spec, Some(hook), &launch)
    }

    fn sandbox_mode(&self) -> Option<String> {
        Some(self.policy.standing().mode.as_str().to_owned())
    }
}

impl std::fmt::Debug for SandboxBashExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxBashExecutor")
            .field("bash", &self.bash)
            .field("options", &self.selector.options)
            .field("verdict", &self.selector.verdict.get())
            .finish_non_exhaustive()
    }
}
