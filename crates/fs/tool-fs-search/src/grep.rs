//! The model-facing `grep` tool: arguments in, one content search, dsh's text, value and card
//! out.

use dsh_tools::{ContentBlock, ToolDefinition, ToolError, ToolOutput, ToolRunContext};
use serde_json::{Map, Value};

use crate::args::GrepArgs;
use crate::config::SearchCaps;
use crate::glob::saves_results;
use crate::grep_search::search_files;
use crate::meta::grep_meta;
use crate::render::{grep_full_text, render_grep, retain_matches};
use crate::run::run_search;
use crate::schema;
use crate::spill::save_text;
use crate::value::{GrepMatch, GrepValue, grep_output_schema};
use crate::workdir::{launch_dir, workdir};

/// The model-facing `grep` tool.
pub struct GrepTool {
    caps: SearchCaps,
    description: String,
    parameters: Value,
    output_schema: Value,
}

impl GrepTool {
    /// The tool with the deployment's caps.
    pub fn new(caps: SearchCaps) -> Self {
        Self {
            description: schema::grep_description(&caps),
            parameters: schema::grep_parameters(),
            output_schema: grep_output_schema(),
            caps,
        }
    }

    /// The output of `matches`: the text (with `saved`, where the full result was stored), the
    /// card when `with_meta`, and the value, which takes the matches.
    fn output(&self, matches: Vec<GrepMatch>, saved: Option<&str>, with_meta: bool) -> ToolOutput {
        let retained = retain_matches(&matches, &self.caps);
        let text = render_grep(&retained, saved);
        let meta = with_meta.then(|| grep_meta(&retained, self.caps.meta_max_bytes));
        let output = ToolOutput::new(value_of(matches), vec![ContentBlock::text(text)]);
        match meta {
            Some(meta) => output.with_meta(meta),
            None => output,
        }
    }
}

/// `{matches:[{path, lineNumber, line}]}`, built by moving the strings in.
fn value_of(matches: Vec<GrepMatch>) -> Value {
    let items = matches
        .into_iter()
        .map(|found| {
            let mut item = Map::with_capacity(3);
            item.insert("path".into(), Value::String(found.path));
            item.insert("lineNumber".into(), Value::from(found.line_number));
            item.insert("line".into(), Value::String(found.line));
            Value::Object(item)
        })
        .collect();
    let mut value = Map::with_capacity(1);
    value.insert("matches".into(), Value::Array(items));
    Value::Object(value)
}

#[dsh_tools::async_trait]
impl ToolDefinition for GrepTool {
    fn name(&self) -> &str {
        "grep"
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
        let args = GrepArgs::parse(&args)?;
        let workdir = workdir(&run);
        let caps = self.caps;
        let matches = run_search(
            "grep",
            (self.caps.timeout_ms, self.caps.grace_ms),
            &run.signal,
            move |stop| {
                let (path, include) = (args.path.as_deref(), args.include.as_deref());
                let arguments = [Some(args.pattern.as_str()), path, include];
                let dir = launch_dir("grep", workdir.as_deref(), &arguments)?;
                search_files(&dir, (&args.pattern, path, include), &caps, stop)
            },
        )
        .await?;
        let (matches, saved) = if matches.len() > self.caps.grep_max_matches && saves_results(&run)
        {
            let max_line_bytes = self.caps.grep_max_line_bytes;
            let matches = std::sync::Arc::new(matches);
            let saving = std::sync::Arc::clone(&matches);
            // A save that fails (even by panicking) only loses the saved copy, never the search.
            let saved = tokio::task::spawn_blocking(move || {
                save_text("grep-results.txt", &grep_full_text(&saving, max_line_bytes))
            })
            .await
            .ok()
            .flatten();
            let matches =
                std::sync::Arc::try_unwrap(matches).unwrap_or_else(|shared| (*shared).clone());
            (matches, saved)
        } else {
            (matches, None)
        };
        Ok(self.output(matches, saved.as_deref(), run.call_id == run.root_call_id))
    }

    fn render(&self, _args: &Value, value: Value) -> Result<ToolOutput, ToolError> {
        let value: GrepValue = serde_json::from_value(value)
            .map_err(|cause| ToolError::new(format!("invalid grep value: {cause}")))?;
        Ok(self.output(value.matches, None, true))
    }
}
