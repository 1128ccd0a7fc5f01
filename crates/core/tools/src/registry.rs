//! The registry: which tools and guards exist, owned by the fibers that registered them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

use dsh_kernel::sync::lock;
use dsh_kernel::{Context, Disposer, ServiceKey};
use serde_json::Value;

use dsh_llm::ToolSchema;

use crate::definition::ToolDefinition;
use crate::error::ToolError;
use crate::execution::{ToolExecution, ToolExecutionInput};
use crate::schema;

/// The tool registry service, `tools` (dsh's `ctx.tools`).
pub const TOOLS: ServiceKey<ToolRegistry> = ServiceKey::new("tools");

/// The name dsh reserves for its Code Mode transport.
pub const RUN_CODE_NAME: &str = "run_code";

/// A guard: runs after `tools/pre-execute` allowed a call; a returned reason denies it. A
/// guard can never allow a call something else denied.
pub type ToolGuard = Arc<dyn Fn(&ToolExecution) -> Option<String> + Send + Sync>;

/// How a call may be scheduled beside its siblings (dsh's `executionMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutionMode {
    /// May overlap other parallel calls.
    Parallel,
    /// Runs alone: an ordering barrier.
    Exclusive,
}

/// One registered tool, with the schemas read at registration.
pub(crate) struct Registered {
    id: u64,
    pub(crate) definition: Arc<dyn ToolDefinition>,
    pub(crate) parameters: Value,
    pub(crate) output_schema: Option<Value>,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    tools: BTreeMap<String, Arc<Registered>>,
    guards: Vec<(u64, ToolGuard)>,
}

/// The tool registry and its execution pipeline ([`ToolRegistry::execute`]).
///
/// Registrations belong to the registering fiber: they are undone when it unloads, so a
/// plugin's tools disappear with it.
pub struct ToolRegistry {
    pub(crate) ctx: Context,
    table: Arc<Mutex<Table>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .finish_non_exhaustive()
    }
}

impl ToolRegistry {
    /// A registry that dispatches its events through `ctx` (the providing plugin's).
    pub fn new(ctx: Context) -> Self {
        Self {
            ctx,
            table: Arc::default(),
        }
    }

    /// Registers `definition` for as long as `ctx`'s fiber is loaded, or until the returned
    /// disposer runs. Refused: a name already registered, the reserved `run_code`, and
    /// `parameters` or an output schema outside the subset
    /// (`unsupported JSON schema: parameters.x.pattern is not a supported keyword ...`).
    pub fn register(
        &self,
        ctx: &Context,
        definition: Arc<dyn ToolDefinition>,
    ) -> Result<Disposer, ToolError> {
        let name = definition.name().to_owned();
        if name == RUN_CODE_NAME {
            return Err(ToolError::new(format!(
                "tool name \"{RUN_CODE_NAME}\" is reserved for the Code Mode presentation \
                 transport and cannot be registered or shadowed"
            )));
        }
        let parameters = definition.parameters().clone();
        let output_schema = definition.output_schema().cloned();
        let mut violations = schema::schema_violations(&parameters, "parameters");
        if let Some(output) = &output_schema {
            violations.extend(schema::schema_violations(output, "schema"));
        }
        if !violations.is_empty() {
            return Err(ToolError::unsupported_schema(&violations));
        }
        let id = {
            let mut table = lock(&self.table);
            if table.tools.contains_key(&name) {
                return Err(ToolError::new(format!(
                    "tool \"{name}\" is already registered"
                )));
            }
            table.next_id += 1;
            let id = table.next_id;
            table.tools.insert(
                name.clone(),
                Arc::new(Registered {
                    id,
                    definition,
                    parameters,
                    output_schema,
                }),
            );
            id
        };
        let weak = Arc::downgrade(&self.table);
        let undo = {
            let name = name.clone();
            move || remove_tool(&weak, &name, id)
        };
        ctx.effect(undo).map_err(|error| {
            remove_tool(&Arc::downgrade(&self.table), &name, id);
            ToolError::new(error.to_string())
        })
    }

    /// Registers a guard for as long as `ctx`'s fiber is loaded. Guards run in registration
    /// order after `tools/pre-execute` allowed a call; the first reason returned denies it.
    pub fn register_guard(
        &self,
        ctx: &Context,
        guard: impl Fn(&ToolExecution) -> Option<String> + Send + Sync + 'static,
    ) -> Result<Disposer, ToolError> {
        let id = {
            let mut table = lock(&self.table);
            table.next_id += 1;
            let id = table.next_id;
            table.guards.push((id, Arc::new(guard)));
            id
        };
        let weak = Arc::downgrade(&self.table);
        ctx.effect(move || remove_guard(&weak, id))
            .map_err(|error| {
                remove_guard(&Arc::downgrade(&self.table), id);
                ToolError::new(error.to_string())
            })
    }

    /// Every registered tool, sorted by name.
    pub fn list(&self) -> Vec<Arc<dyn ToolDefinition>> {
        lock(&self.table)
            .tools
            .values()
            .map(|entry| Arc::clone(&entry.definition))
            .collect()
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<String> {
        lock(&self.table).tools.keys().cloned().collect()
    }

    /// The model-facing schemas of every tool, sorted by name (what a model request's
    /// `tools` lists).
    pub fn schemas(&self) -> Vec<ToolSchema> {
        lock(&self.table)
            .tools
            .values()
            .map(|entry| ToolSchema {
                name: entry.definition.name().to_owned(),
                description: entry.definition.description().to_owned(),
                parameters: entry.parameters.clone(),
            })
            .collect()
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn ToolDefinition>> {
        self.entry(name).map(|entry| Arc::clone(&entry.definition))
    }

    pub(crate) fn entry(&self, name: &str) -> Option<Arc<Registered>> {
        self.lookup().entry(name)
    }

    /// A handle that finds tools from inside `'static` futures (the dispatch stage).
    pub(crate) fn lookup(&self) -> Lookup {
        Lookup(Arc::clone(&self.table))
    }

    /// `Parallel` only when the tool exists, the arguments are valid, and the tool says this
    /// call is concurrency safe; otherwise `Exclusive`.
    pub fn execution_mode(&self, input: &ToolExecutionInput) -> ExecutionMode {
        let Some(entry) = self.entry(&input.name) else {
            return ExecutionMode::Exclusive;
        };
        if !schema::validate(&entry.parameters, &input.arguments).is_empty() {
            return ExecutionMode::Exclusive;
        }
        if entry.definition.is_concurrency_safe(&input.arguments) {
            ExecutionMode::Parallel
        } else {
            ExecutionMode::Exclusive
        }
    }

    /// The first guard's denial, if any.
    pub(crate) fn guard_reason(&self, exec: &ToolExecution) -> Option<String> {
        let guards: Vec<ToolGuard> = lock(&self.table)
            .guards
            .iter()
            .map(|(_, guard)| Arc::clone(guard))
            .collect();
        guards.iter().find_map(|guard| guard(exec))
    }
}

/// Finds registered tools; cheap to clone.
#[derive(Clone)]
pub(crate) struct Lookup(Arc<Mutex<Table>>);

impl Lookup {
    /// The tool called `name`, as registered now.
    pub(crate) fn entry(&self, name: &str) -> Option<Arc<Registered>> {
        lock(&self.0).tools.get(name).cloned()
    }
}

fn remove_tool(table: &Weak<Mutex<Table>>, name: &str, id: u64) {
    let Some(table) = table.upgrade() else {
        return;
    };
    let removed = {
        let mut table = lock(&table);
        if table.tools.get(name).is_some_and(|entry| entry.id == id) {
            table.tools.remove(name)
        } else {
            None
        }
    };
    // The definition may run arbitrary code when dropped; not under the lock.
    drop(removed);
}

fn remove_guard(table: &Weak<Mutex<Table>>, id: u64) {
    let Some(table) = table.upgrade() else {
        return;
    };
    let removed = {
        let mut table = lock(&table);
        table
            .guards
            .iter()
            .position(|(guard_id, _)| *guard_id == id)
            .map(|index| table.guards.remove(index))
    };
    drop(removed);
}
