//! Boot: mount the composed rows on a kernel, wait for them to settle, and audit them.

use std::fmt;
use std::sync::Arc;

use dsh_kernel::AuditError;
use dsh_kernel::BoxError;
use dsh_kernel::ConfigSource;
use dsh_kernel::Context;
use dsh_kernel::DynPlugin;
use dsh_kernel::FiberId;
use dsh_kernel::FiberLabel;
use dsh_kernel::Kernel;
use dsh_kernel::KernelError;
use dsh_kernel::Mount;
use dsh_kernel::Plugin;
use tracing::Instrument;

use crate::compose::Composition;
use crate::expr::Expression;
use crate::expr::LaunchEnv;
use crate::expr::Template;
use crate::node::Map;
use crate::node::Node;
use crate::patch::quoted;
use crate::registry::GROUP_PLUGIN;
use crate::registry::Registry;

/// Why a composition did not boot.
#[derive(Debug, thiserror::Error)]
pub enum BootError {
    /// Some rows cannot be mounted at all (unknown plugin, bad key, bad expression).
    #[error("{}", rows_message(.errors, .hint.as_deref()))]
    Rows {
        /// One entry per problem, in row order.
        errors: Vec<RowError>,
        /// What to do about plugins this build lacks, when some are missing.
        hint: Option<String>,
    },
    /// Rows were mounted but did not all activate.
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// The kernel refused a mount.
    #[error(transparent)]
    Kernel(#[from] KernelError),
}

/// One row that cannot be mounted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowError {
    /// How the row is named: `row "id"`, or `row N` when it has no id.
    pub row: String,
    /// The row's id, when it has one.
    pub id: Option<String>,
    /// What is wrong.
    pub problem: RowProblem,
}

/// What is wrong with a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowProblem {
    /// Its plugin is not in the registry.
    PluginNotBuilt(String),
    /// It is malformed: the message says how.
    Invalid(String),
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            RowProblem::PluginNotBuilt(plugin) => {
                write!(
                    f,
                    "{}: plugin \"{plugin}\" is not built into this dsh",
                    self.row
                )
            }
            RowProblem::Invalid(message) => write!(f, "{}: {message}", self.row),
        }
    }
}

fn rows_message(errors: &[RowError], hint: Option<&str>) -> String {
    let noun = if errors.len() == 1 {
        "problem"
    } else {
        "problems"
    };
    let mut text = format!("{} {noun} with rows:", errors.len());
    for error in errors {
        text.push_str("\n  ");
        text.push_str(&error.to_string());
    }
    if let Some(hint) = hint {
        text.push('\n');
        text.push_str(hint);
    }
    text
}

/// The rows a boot mounted.
#[derive(Debug, Clone)]
pub struct BootedTree {
    rows: Vec<MountedRow>,
}

#[derive(Debug, Clone)]
struct MountedRow {
    fiber: FiberId,
    /// The member rows, for a group.
    members: Option<Vec<RowPlan>>,
}

impl BootedTree {
    /// The fibers of every mounted row, group members included, in row order.
    pub fn fibers(&self, kernel: &Kernel) -> Vec<FiberId> {
        let mut fibers = Vec::new();
        for row in &self.rows {
            collect_fibers(kernel, row.fiber, row.members.as_deref(), &mut fibers);
        }
        fibers
    }
}

fn collect_fibers(
    kernel: &Kernel,
    fiber: FiberId,
    members: Option<&[RowPlan]>,
    out: &mut Vec<FiberId>,
) {
    out.push(fiber);
    if let Some(members) = members {
        // A group mounts exactly its members, in order.
        for (child, plan) in kernel.children(fiber).into_iter().zip(members) {
            collect_fibers(kernel, child, plan.members(), out);
        }
    }
}

/// Mounts every enabled row of `composition` under the kernel's root, waits until nothing is
/// loading, and audits that every mounted row is active. Rows that cannot be mounted (an
/// unknown plugin, a bad key or expression) are all reported before anything is mounted.
pub async fn boot(
    kernel: &Kernel,
    composition: &Composition,
    registry: &Registry,
    launch: Arc<LaunchEnv>,
) -> Result<BootedTree, BootError> {
    let span = tracing::debug_span!("boot", rows = composition.rows().len());
    async {
        let plans = plan_rows(composition.rows(), registry, &launch)?;
        let root = kernel.root();
        let mut rows = Vec::with_capacity(plans.len());
        for plan in plans {
            let members = plan.members().map(<[RowPlan]>::to_vec);
            let fiber = mount_row(&root, plan, &launch)?;
            rows.push(MountedRow { fiber, members });
        }
        kernel.settle().await;
        let tree = BootedTree { rows };
        kernel.audit(&tree.fibers(kernel))?;
        Ok(tree)
    }
    .instrument(span)
    .await
}

/// A row checked and ready to mount.
#[derive(Clone)]
struct RowPlan {
    label: FiberLabel,
    inject: Vec<String>,
    kind: RowKind,
}

#[derive(Clone)]
enum RowKind {
    /// A plugin row with its config.
    Plugin {
        plugin: Arc<dyn DynPlugin>,
        config: Template,
    },
    /// A `cordis:group` row with its member rows.
    Group(Vec<RowPlan>),
}

impl RowPlan {
    fn members(&self) -> Option<&[RowPlan]> {
        match &self.kind {
            RowKind::Group(members) => Some(members),
            RowKind::Plugin { .. } => None,
        }
    }
}

impl fmt::Debug for RowPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RowPlan")
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

fn plan_rows(
    rows: &[Node],
    registry: &Registry,
    launch: &LaunchEnv,
) -> Result<Vec<RowPlan>, BootError> {
    let mut errors = Vec::new();
    let plans = plan_list(rows, registry, launch, &mut errors);
    if errors.is_empty() {
        return Ok(plans);
    }
    let missing: Vec<&RowError> = errors
        .iter()
        .filter(|error| matches!(error.problem, RowProblem::PluginNotBuilt(_)))
        .collect();
    let hint = (!missing.is_empty()).then(|| {
        let known: Vec<&str> = registry.names().collect();
        let known = if known.is_empty() {
            "none".to_owned()
        } else {
            known.join(", ")
        };
        let example = missing
            .iter()
            .find_map(|error| error.id.as_deref())
            .map_or_else(
                || "give the row an id, then patch it with `disabled: true`".to_owned(),
                |id| {
                    format!(
                        "patch it off with an entry such as `- {{id: {}, disabled: true}}`",
                        quoted(id)
                    )
                },
            );
        format!("This dsh is built with the plugins: {known}. To boot without a row, {example}.")
    });
    Err(BootError::Rows { errors, hint })
}

fn plan_list(
    rows: &[Node],
    registry: &Registry,
    launch: &LaunchEnv,
    errors: &mut Vec<RowError>,
) -> Vec<RowPlan> {
    rows.iter()
        .enumerate()
        .filter_map(|(index, row)| plan_row(row, index + 1, registry, launch, errors))
        .collect()
}

const ROW_KEYS: [&str; 8] = [
    "id",
    "name",
    "config",
    "disabled",
    "inject",
    "group",
    "isolate",
    "intercept",
];

fn plan_row(
    row: &Node,
    position: usize,
    registry: &Registry,
    launch: &LaunchEnv,
    errors: &mut Vec<RowError>,
) -> Option<RowPlan> {
    let Some(map) = row.as_map() else {
        errors.push(RowError {
            row: format!("row {position}"),
            id: None,
            problem: RowProblem::Invalid("must be a mapping with id and name".to_owned()),
        });
        return None;
    };
    let id = map.get("id").and_then(Node::as_str);
    let name_of_row = id.map_or_else(|| format!("row {position}"), |id| format!("row \"{id}\""));
    let mut fail = |problem: RowProblem| {
        errors.push(RowError {
            row: name_of_row.clone(),
            id: id.map(str::to_owned),
            problem,
        });
    };
    match is_disabled(map, launch) {
        Ok(true) => return None,
        Ok(false) => {}
        Err(message) => {
            fail(RowProblem::Invalid(message));
            return None;
        }
    }
    let mut ok = true;
    if map.get("id").is_some_and(|id| id.as_str().is_none()) {
        fail(RowProblem::Invalid("`id` must be a string".to_owned()));
        ok = false;
    }
    for (key, value) in map.iter() {
        if !ROW_KEYS.contains(&key) {
            fail(RowProblem::Invalid(format!(
                "unknown key `{key}` (a row has {})",
                ROW_KEYS.join(", ")
            )));
            ok = false;
        } else if matches!(key, "isolate" | "intercept") && !is_empty(value) {
            fail(RowProblem::Invalid(format!(
                "`{key}` is not supported by this dsh: all rows share one service realm"
            )));
            ok = false;
        }
    }
    let inject = match row_inject(map) {
        Ok(inject) => inject,
        Err(message) => {
            fail(RowProblem::Invalid(message));
            ok = false;
            Vec::new()
        }
    };
    let Some(name) = map.get("name").and_then(Node::as_str) else {
        fail(RowProblem::Invalid(
            "needs a `name` naming its plugin".to_owned(),
        ));
        return None;
    };
    let label = FiberLabel {
        row: id.map(str::to_owned),
        plugin: name.to_owned(),
    };
    if name == GROUP_PLUGIN {
        let members = match map.get("config") {
            None | Some(Node::Null) => Vec::new(),
            Some(Node::Seq(members)) => members.clone(),
            Some(_) => {
                fail(RowProblem::Invalid(
                    "a cordis:group row's `config` must be its list of rows".to_owned(),
                ));
                return None;
            }
        };
        let members = plan_list(&members, registry, launch, errors);
        return ok.then_some(RowPlan {
            label,
            inject,
            kind: RowKind::Group(members),
        });
    }
    if map.get("group").is_some_and(Node::is_truthy) {
        fail(RowProblem::Invalid(format!(
            "only {GROUP_PLUGIN} rows can be groups"
        )));
        ok = false;
    }
    let plugin = registry.get(name).cloned();
    if plugin.is_none() {
        fail(RowProblem::PluginNotBuilt(name.to_owned()));
    }
    let config = match Template::compile(map.get("config").unwrap_or(&Node::Null), "config") {
        Ok(config) => Some(config),
        Err(problems) => {
            for problem in problems {
                fail(RowProblem::Invalid(problem.to_string()));
            }
            None
        }
    };
    match (plugin, config) {
        (Some(plugin), Some(config)) if ok => Some(RowPlan {
            label,
            inject,
            kind: RowKind::Plugin { plugin, config },
        }),
        _ => None,
    }
}

/// `disabled`: absent, a literal (JavaScript truthiness), or an expression evaluated now.
fn is_disabled(map: &Map, launch: &LaunchEnv) -> Result<bool, String> {
    match map.get("disabled") {
        None => Ok(false),
        Some(Node::Expr(source)) => Expression::parse(source)
            .and_then(|expression| expression.evaluate_truthy(launch))
            .map_err(|error| format!("disabled: {error}")),
        Some(value) => Ok(value.is_truthy()),
    }
}

fn is_empty(value: &Node) -> bool {
    match value {
        Node::Null => true,
        Node::Map(map) => map.is_empty(),
        Node::Seq(items) => items.is_empty(),
        _ => false,
    }
}

/// A row's `inject`: a list of service names, or a mapping whose keys are the names.
fn row_inject(map: &Map) -> Result<Vec<String>, String> {
    let shape = || "`inject` must be a list of service names".to_owned();
    match map.get("inject") {
        None | Some(Node::Null) => Ok(Vec::new()),
        Some(Node::Seq(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned).ok_or_else(shape))
            .collect(),
        Some(Node::Map(services)) => services
            .iter()
            .map(|(name, value)| {
                if is_empty(value) || matches!(value, Node::Bool(true)) {
                    Ok(name.to_owned())
                } else {
                    Err(format!(
                        "`inject.{name}` carries intercept config, which this dsh does not support"
                    ))
                }
            })
            .collect(),
        Some(_) => Err(shape()),
    }
}

fn mount_row(
    parent: &Context,
    plan: RowPlan,
    launch: &Arc<LaunchEnv>,
) -> Result<FiberId, KernelError> {
    let (plugin, config): (Arc<dyn DynPlugin>, ConfigSource) = match plan.kind {
        RowKind::Group(members) => (
            Arc::new(Group {
                members,
                launch: Arc::clone(launch),
            }),
            ConfigSource::none(),
        ),
        RowKind::Plugin { plugin, config } => (plugin, config_source(config, launch)),
    };
    parent
        .mount(Mount {
            label: plan.label,
            plugin,
            inject: plan.inject,
            config,
        })
        .map(|fiber| fiber.id())
}

/// A fixed config, or one resolved at each activation with the row's injected services.
fn config_source(template: Template, launch: &Arc<LaunchEnv>) -> ConfigSource {
    if let Some(value) = template.as_literal() {
        return ConfigSource::Value(value.clone());
    }
    let launch = Arc::clone(launch);
    ConfigSource::resolver(move |ctx| {
        let services = |name: &str| ctx.service_fields(name).map_err(|error| error.to_string());
        template
            .resolve("config", &launch, Some(&services))
            .map_err(|error| Box::new(error) as BoxError)
    })
}

/// The `cordis:group` row: mounts its member rows as its children.
struct Group {
    members: Vec<RowPlan>,
    launch: Arc<LaunchEnv>,
}

impl Plugin for Group {
    type Config = ();

    async fn apply(&self, ctx: Context, (): ()) -> Result<(), BoxError> {
        for member in &self.members {
            mount_row(&ctx, member.clone(), &self.launch)?;
        }
        Ok(())
    }
}
