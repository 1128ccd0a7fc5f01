//! The `systemPrompt` service: registrations owned by fibers, and assembly.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use dsh_kernel::sync::lock;
use dsh_kernel::{Context, Disposer, ServiceKey};
use dsh_llm::ToolSchema;

use crate::assembly::{AssembledSection, PromptAssembly};
use crate::error::PromptError;
use crate::events::{SystemPromptAssemble, SystemPromptChange};
use crate::input::{
    AssembleContext, PromptContext, PromptSection, ToolProvider, ToolProviderResult,
};
use crate::plugin::SystemPromptConfig;
use crate::render::{VARIABLE_NAME_PATTERN, is_variable_name};
use crate::table::{Kind, Table};
use crate::tool_order::{order_tools, validate_tool_order};

/// The system-prompt service, `systemPrompt` (dsh's `ctx.systemPrompt`).
pub const SYSTEM_PROMPT: ServiceKey<SystemPrompt> = ServiceKey::new("systemPrompt");

/// The deployment persona's section. A composition replaces the persona by registering its
/// own section under this name once the deployment's is gone.
pub const PERSONA_SECTION: &str = "deployment:persona";

/// The persona's order: the first section after the harness identity.
pub const PERSONA_ORDER: f64 = 0.0;

/// The harness identity's section.
pub const HARNESS_IDENTITY_SECTION: &str = "harness:identity";

/// The harness identity's order: before everything a deployment contributes.
pub const HARNESS_IDENTITY_ORDER: f64 = -100.0;

/// The harness identity's text.
pub const HARNESS_IDENTITY: &str = "You are an AI agent powered by DeepSeek Harness.";

/// What the built-in registrations' duplicate messages suggest instead (dsh's wording).
const OVERRIDE_HINT: &str = "for a per-agent override, register through that agent's \
                             `agent.ctx` instead";
const VALUE_HINT: &str = "for a per-agent value, register through that agent's \
                          `agent.ctx` instead";

/// The registry of prompt inputs, assembled before each model step
/// ([`SystemPrompt::assemble`]).
///
/// Every registration belongs to the fiber of the `owner` context it was made through: it is
/// undone when that fiber unloads, or when the returned [`Disposer`] is disposed. Each
/// registration and removal emits [`SystemPromptChange`].
pub struct SystemPrompt {
    inner: Arc<Inner>,
}

struct Inner {
    /// The providing plugin's context, through which events are dispatched.
    ctx: Context,
    table: Mutex<Table>,
    tool_order: Option<Vec<String>>,
}

/// The registrations one assembly works from, taken under the lock.
struct Snapshot {
    sections: Vec<Arc<PromptSection>>,
    contexts: Vec<Arc<PromptContext>>,
    tools: Vec<ToolProvider>,
}

impl std::fmt::Debug for SystemPrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let table = self.inner.lock();
        let sections: Vec<&str> = table
            .sections
            .iter()
            .map(|(_, s)| s.name.as_str())
            .collect();
        let contexts: Vec<&str> = table
            .contexts
            .iter()
            .map(|(_, c)| c.name.as_str())
            .collect();
        let variables: Vec<&str> = table.variables.iter().map(|(_, n, _)| n.as_str()).collect();
        f.debug_struct("SystemPrompt")
            .field("sections", &sections)
            .field("contexts", &contexts)
            .field("variables", &variables)
            .field("tool_providers", &table.tools.len())
            .field("runtime_context_suppressed", &!table.suppressors.is_empty())
            .field("tool_order", &self.inner.tool_order)
            .finish()
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Table> {
        lock(&self.table)
    }

    /// Removes registration `id` and, when it was still there, announces the change.
    fn unregister(&self, kind: Kind, id: u64) {
        let removed = self.lock().remove(kind, id);
        if removed.is_some() {
            drop(removed);
            if let Err(error) = self.ctx.emit::<SystemPromptChange>(&()) {
                tracing::warn!("a system-prompt/change listener failed: {error}");
            }
        }
    }
}

impl SystemPrompt {
    /// The service of the plugin whose context is `ctx`, with its built-in registrations
    /// owned by `ctx`: the harness identity (unless `includeHarnessIdentity` is false), the
    /// persona (always, empty by default, so an empty persona renders nothing), and a
    /// runtime-context suppression when `includeRuntimeContext` is false. A `toolOrder`
    /// listing a name twice or lacking [`crate::TOOL_ORDER_REST`] is refused here.
    pub fn new(ctx: Context, config: &SystemPromptConfig) -> Result<Self, PromptError> {
        if let Some(tool_order) = &config.tool_order {
            validate_tool_order(tool_order)?;
        }
        let service = Self {
            inner: Arc::new(Inner {
                ctx: ctx.clone(),
                table: Mutex::default(),
                tool_order: config.tool_order.clone(),
            }),
        };
        if config.include_harness_identity.unwrap_or(true) {
            service.section(
                &ctx,
                PromptSection::new(
                    HARNESS_IDENTITY_SECTION,
                    HARNESS_IDENTITY_ORDER,
                    HARNESS_IDENTITY,
                ),
            )?;
        }
        let persona = config.persona.clone().unwrap_or_default();
        service.section(
            &ctx,
            PromptSection::new(PERSONA_SECTION, PERSONA_ORDER, persona),
        )?;
        if !config.include_runtime_context.unwrap_or(true) {
            service.suppress_runtime_context(&ctx)?;
        }
        Ok(service)
    }

    /// Registers a prompt section. Refused: a non-finite order
    /// (`prompt section "x" order must be a finite number`) and a name already registered.
    pub fn section(
        &self,
        owner: &Context,
        section: PromptSection,
    ) -> Result<Disposer, PromptError> {
        if !section.order.is_finite() {
            return Err(PromptError(format!(
                "prompt section \"{}\" order must be a finite number",
                section.name
            )));
        }
        self.register(owner, Kind::Section, |table, id| {
            if table.sections.iter().any(|(_, s)| s.name == section.name) {
                return Err(PromptError(format!(
                    "prompt section \"{}\" is already registered ({OVERRIDE_HINT})",
                    section.name
                )));
            }
            table.sections.push((id, Arc::new(section)));
            Ok(())
        })
    }

    /// Registers a runtime-context contribution. Refused: a non-finite order and a name
    /// already registered.
    pub fn context(
        &self,
        owner: &Context,
        context: PromptContext,
    ) -> Result<Disposer, PromptError> {
        if !context.order.is_finite() {
            return Err(PromptError(format!(
                "prompt context \"{}\" order must be a finite number",
                context.name
            )));
        }
        self.register(owner, Kind::Context, |table, id| {
            if table.contexts.iter().any(|(_, c)| c.name == context.name) {
                return Err(PromptError(format!(
                    "prompt context \"{}\" is already registered ({OVERRIDE_HINT})",
                    context.name
                )));
            }
            table.contexts.push((id, Arc::new(context)));
            Ok(())
        })
    }

    /// Registers prompt variable `name`, evaluated for each assembly; `None` means no value in
    /// that assembly (rendering a reference to it then fails). Refused: a name not matching
    /// `^[a-z][a-z0-9_]*$` and a name already registered.
    pub fn variable(
        &self,
        owner: &Context,
        name: &str,
        value: impl Fn(&AssembleContext) -> Option<String> + Send + Sync + 'static,
    ) -> Result<Disposer, PromptError> {
        if !is_variable_name(name) {
            return Err(PromptError(format!(
                "invalid prompt variable name \"{name}\" (must match {VARIABLE_NAME_PATTERN})"
            )));
        }
        self.register(owner, Kind::Variable, |table, id| {
            if table.variables.iter().any(|(_, known, _)| known == name) {
                return Err(PromptError(format!(
                    "prompt variable \"{name}\" is already registered ({VALUE_HINT})"
                )));
            }
            table.variables.push((id, name.to_owned(), Arc::new(value)));
            Ok(())
        })
    }

    /// Registers a tool-schema provider, evaluated for each assembly. Every provider
    /// contributes; returning the reserved [`crate::TOOL_ORDER_REST`] name fails the assembly.
    pub fn tools(
        &self,
        owner: &Context,
        provider: impl Fn(&AssembleContext) -> ToolProviderResult + Send + Sync + 'static,
    ) -> Result<Disposer, PromptError> {
        self.register(owner, Kind::Tools, |table, id| {
            table.tools.push((id, Arc::new(provider)));
            Ok(())
        })
    }

    /// Suppresses every runtime-context contribution while the registration lasts: contexts
    /// are neither evaluated nor kept from the waterfall. Suppressions are independent; one
    /// left is enough.
    pub fn suppress_runtime_context(&self, owner: &Context) -> Result<Disposer, PromptError> {
        self.register(owner, Kind::Suppressor, |table, id| {
            table.suppressors.push(id);
            Ok(())
        })
    }

    /// Inserts a registration, ties its removal to `owner`'s fiber and announces it. A change
    /// listener failing undoes the registration, which then fails with that error.
    fn register(
        &self,
        owner: &Context,
        kind: Kind,
        insert: impl FnOnce(&mut Table, u64) -> Result<(), PromptError>,
    ) -> Result<Disposer, PromptError> {
        let id = {
            let mut table = self.inner.lock();
            let id = table.next_id();
            insert(&mut table, id)?;
            id
        };
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let undo = move || {
            if let Some(inner) = weak.upgrade() {
                inner.unregister(kind, id);
            }
        };
        let disposer = match owner.effect(undo) {
            Ok(disposer) => disposer,
            Err(error) => {
                let removed = self.inner.lock().remove(kind, id);
                drop(removed);
                return Err(error.into());
            }
        };
        if let Err(error) = self.inner.ctx.emit::<SystemPromptChange>(&()) {
            // The effect stays behind, finding nothing to remove.
            self.inner.unregister(kind, id);
            return Err(error.into());
        }
        Ok(disposer)
    }

    /// Whether runtime context is suppressed now (by config or a registration).
    pub fn runtime_context_suppressed(&self) -> bool {
        !self.inner.lock().suppressors.is_empty()
    }

    /// Assembles the model input for one step.
    ///
    /// Variables are evaluated first, in registration order (one registered meanwhile is
    /// evaluated too); then the sections, contexts and tool providers registered now are
    /// evaluated with `context`. Sections and contexts are sorted by order (ties keep
    /// registration order); tools are sorted by name, or by the configured `toolOrder`. The
    /// result runs through the [`SystemPromptAssemble`] waterfall; after it, a complete
    /// section is the only section and suppressed runtime context is empty.
    ///
    /// Fails: more than one complete section, a tool-order problem, or a waterfall listener's
    /// error.
    pub async fn assemble(&self, context: &AssembleContext) -> Result<PromptAssembly, PromptError> {
        let suppressed = self.runtime_context_suppressed();
        let variables = self.evaluate_variables(context);
        let snapshot = self.snapshot();

        let mut collected: Vec<ToolSchema> = Vec::new();
        let mut known_names = BTreeSet::new();
        for provider in &snapshot.tools {
            let result = provider(context);
            match result.known_names {
                Some(names) => known_names.extend(names),
                None => known_names.extend(result.schemas.iter().map(|tool| tool.name.clone())),
            }
            collected.extend(result.schemas);
        }

        let mut sections = snapshot.sections;
        sections.sort_by(|a, b| by_order(a.order, b.order));
        let complete: Vec<&Arc<PromptSection>> =
            sections.iter().filter(|section| section.complete).collect();
        if complete.len() > 1 {
            let names: Vec<String> = complete
                .iter()
                .map(|section| quote(&section.name))
                .collect();
            return Err(PromptError(format!(
                "multiple complete prompt sections are active: {}",
                names.join(", ")
            )));
        }
        let mut complete_section = None;
        let mut assembled = Vec::with_capacity(sections.len());
        for section in &sections {
            let entry = AssembledSection::new(section.name.clone(), section.text.resolve(context));
            if section.complete {
                complete_section = Some(entry.clone());
            }
            assembled.push(entry);
        }

        let contexts = if suppressed {
            Vec::new()
        } else {
            let mut contexts = snapshot.contexts;
            contexts.sort_by(|a, b| by_order(a.order, b.order));
            contexts
                .iter()
                .map(|entry| AssembledSection::new(entry.name.clone(), entry.text.resolve(context)))
                .collect()
        };

        let tools = order_tools(collected, self.inner.tool_order.as_deref(), &known_names)?;
        let assembly = PromptAssembly {
            sections: assembled,
            contexts,
            tools,
            variables,
        };
        let mut result = self
            .inner
            .ctx
            .waterfall::<SystemPromptAssemble, _, _>(
                (assembly, context.clone()),
                |(assembly, _context)| async move { Ok(assembly) },
            )
            .await?;
        if let Some(section) = complete_section {
            result.sections = vec![section];
        }
        if suppressed {
            result.contexts.clear();
        }
        Ok(result)
    }

    /// Every variable's value, in registration order, seeing variables registered while
    /// earlier ones are evaluated.
    fn evaluate_variables(&self, context: &AssembleContext) -> Vec<(String, Option<String>)> {
        let mut values = Vec::new();
        let mut after = 0;
        loop {
            // The lock is released before the provider runs: it may register.
            let next = self.inner.lock().variable_after(after);
            let Some((id, name, provider)) = next else {
                break;
            };
            after = id;
            values.push((name, provider(context)));
        }
        values
    }

    fn snapshot(&self) -> Snapshot {
        let table = self.inner.lock();
        Snapshot {
            sections: table.sections.iter().map(|(_, s)| Arc::clone(s)).collect(),
            contexts: table.contexts.iter().map(|(_, c)| Arc::clone(c)).collect(),
            tools: table.tools.iter().map(|(_, t)| Arc::clone(t)).collect(),
        }
    }
}

/// Ascending order; orders are finite, so this is a total order.
fn by_order(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// `name` as a JSON string, as dsh quotes names in messages.
fn quote(name: &str) -> String {
    serde_json::to_string(name).unwrap_or_else(|_| format!("\"{name}\""))
}

#[cfg(test)]
mod tests {

    use super::*;

    fn assert_send<T: Send>(_: &T) {}

    #[tokio::test]
    async fn assembly_futures_are_send() {
        let kernel = dsh_kernel::Kernel::new().unwrap();
        let service = SystemPrompt::new(kernel.root(), &SystemPromptConfig::default()).unwrap();
        let context = AssembleContext::default();
        let assembly = service.assemble(&context);
        assert_send(&assembly);
        assert_eq!(assembly.await.unwrap().sections.len(), 2);
        kernel.shutdown().await;
    }

    #[test]
    fn names_are_quoted_as_json() {
        assert_eq!(quote("a"), "\"a\"");
        assert_eq!(quote("say \"hi\"\n"), "\"say \\\"hi\\\"\\n\"");
    }

    #[test]
    fn orders_compare_numerically() {
        assert_eq!(by_order(-100.0, 0.0), Ordering::Less);
        assert_eq!(by_order(0.0, -0.0), Ordering::Equal);
        assert_eq!(by_order(10.5, 10.0), Ordering::Greater);
    }
}
