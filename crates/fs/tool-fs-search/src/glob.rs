//! The model-facing `glob` tool: arguments in, one listing, dsh's text, value and card out.

use dsh_tools::{ContentBlock, ToolDefinition, ToolError, ToolOutput, ToolRunContext};
use serde_json::{Value, json};

use crate::args::GlobArgs;
use crate::config::SearchCaps;
use crate::glob_search::list_files;
use crate::meta::glob_meta;
use crate::render::{glob_card_page, glob_full_text, render_glob};
use crate::run::run_search;
use crate::schema;
use crate::spill::save_text;
use crate::value::{GlobValue, glob_output_schema};
use crate::workdir::{launch_dir, to_workdir_relative, workdir};

/// The model-facing `glob` tool.
pub struct GlobTool {
    caps: SearchCaps,
    description: String,
    parameters: Value,
    output_schema: Value,
}

impl GlobTool {
    /// The tool with the deployment's caps.
    pub fn new(caps: SearchCaps) -> Self {
        Self {
            description: schema::glob_description(&caps),
            parameters: schema::glob_parameters(),
            output_schema: glob_output_schema(),
            caps,
        }
    }

    /// The output of a value: the text (with `saved`, where its full list was stored), and the
    /// card when `with_meta`.
    fn output(&self, value: GlobValue, saved: Option<&str>, with_meta: bool) -> ToolOutput {
        let text = render_glob(&value.paths, &value.root, &self.caps, saved);
        let meta = with_meta.then(|| {
            let (page, truncated) = glob_card_page(&value.paths, &value.root, &self.caps);
            glob_meta(page, truncated, value.paths.len(), self.caps.meta_max_bytes)
        });
        let paths = value.paths.into_iter().map(Value::String).collect();
        let output = ToolOutput::new(
            json!({"root": value.root, "paths": Value::Array(paths)}),
            vec![ContentBlock::text(text)],
        );
        match meta {
            Some(meta) => output.with_meta(meta),
            None => output,
        }
    }
}

/// Whether `run` is a direct call of a session's agent: only those save an over-cap result
/// (a nested call's caller has the whole value; outside a session there is no owner to save
/// it for).
pub(crate) fn saves_results(run: &ToolRunContext) -> bool {
    run.call_id == run.root_call_id
        && run
            .caller
            .as_ref()
            .is_some_and(|caller| caller.session_id.is_some())
}

#[dsh_tools::async_trait]
impl ToolDefinition for GlobTool {
    fn name(&self) -> &str {
        "glob"
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&self.output_schema)
    }

    async fn execute(&self, args: Value, run: ToolRunContext) -> Result<ToolOutput, ToolError> {
        let args = GlobArgs::parse(&args)?;
        let workdir = workdir(&run);
        let caps = self.caps;
        let search_dir = workdir.clone();
        let (pattern, requested) = (args.pattern.clone(), args.path.clone());
        let paths = run_search(
            "glob",
            (self.caps.timeout_ms, self.caps.grace_ms),
            &run.signal,
            move |stop| {
                let path = requested.as_deref();
                let dir = launch_dir("glob", search_dir.as_deref(), &[Some(&pattern), path])?;
                list_files(&dir, (&pattern, path), &caps, stop)
            },
        )
        .await?;
        let root = match (&args.path, &workdir) {
            (None, _) => ".".to_owned(),
            (Some(path), Some(dir)) => to_workdir_relative(path, dir),
            (Some(path), None) => path.clone(),
        };
        let value = GlobValue { root, paths };
        let saved = if value.paths.len() > self.caps.glob_max_results && saves_results(&run) {
            let full = glob_full_text(&value.paths);
            tokio::task::spawn_blocking(move || save_text("glob-results.txt", &full))
                .await
                .ok()
                .flatten()
        } else {
            None
        };
        Ok(self.output(value, saved.as_deref(), run.call_id == run.root_call_id))
    }

    fn render(&self, _args: &Value, value: Value) -> Result<ToolOutput, ToolError> {
        let value: GlobValue = serde_json::from_value(value)
            .map_err(|cause| ToolError::new(format!("invalid glob value: {cause}")))?;
        Ok(self.output(value, None, true))
    }
}
