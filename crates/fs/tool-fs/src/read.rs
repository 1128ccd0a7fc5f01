//! The `read` tool: a numbered window of a text file.

use std::sync::Arc;

use dsh_fs::{
    FS_ERROR_NAME, FileSystem, FsErrorCode, FsInfo, FsKind, FsObservation, FsTarget, events, quoted,
};
use dsh_kernel::Context;
use dsh_tools::{ContentBlock, ToolDefinition, ToolError, ToolOutput, ToolRunContext};
use serde_json::{Value, json};

use crate::blocking::{on_disk, required_path};
use crate::config::ReadCaps;
use crate::context::{actor, session_cwd};
use crate::error::tool_error;
use crate::render::{format_read_output, lang_from_path};
use crate::schema::{READ_DESCRIPTION, read_parameters};
use crate::window::{WindowBuilder, WindowLine, WindowRequest};

/// The `read` tool.
pub struct ReadTool {
    ctx: Context,
    fs: Arc<dyn FileSystem>,
    caps: ReadCaps,
    parameters: Value,
    output_schema: Value,
}

impl ReadTool {
    /// The tool over `fs` with `caps`; `ctx` dispatches `fs/observed`.
    pub fn new(ctx: Context, fs: Arc<dyn FileSystem>, caps: ReadCaps) -> Self {
        Self {
            ctx,
            fs,
            parameters: read_parameters(caps.limit),
            caps,
            output_schema: json!({
                "type": "object", "additionalProperties": false,
                "properties": {
                    "path": {"type": "string"}, "offset": {"type": "integer"},
                    "lines": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                        "properties": {"number": {"type": "integer"}, "text": {"type": "string"}},
                        "required": ["number", "text"]}},
                    "totalLines": {"type": "integer"}},
                "required": ["path", "offset", "lines", "totalLines"]
            }),
        }
    }
}

/// The checked window arguments: offset and limit.
fn window_args(args: &Value, max_limit: u64) -> Result<(u64, u64), ToolError> {
    let positive = |key: &str| -> Result<Option<u64>, ToolError> {
        match args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_f64()
                .filter(|n| n.is_finite() && *n >= 1.0 && n.fract() == 0.0)
                // Saturates past u64::MAX: such an offset is out of range, such a limit over
                // the cap, as in dsh.
                .map(|n| Some(n as u64))
                .ok_or_else(|| ToolError::new(format!("{key} must be a positive integer"))),
        }
    };
    let offset = positive("offset")?.unwrap_or(1);
    let limit = positive("limit")?.unwrap_or(max_limit);
    if limit > max_limit {
        return Err(ToolError::new(format!(
            "limit must be less than or equal to {max_limit}"
        )));
    }
    Ok((offset, limit))
}

/// One stat: a regular file, or dsh's not-found (after recording absence) / not-regular.
pub(crate) async fn regular_read_target(
    ctx: &Context,
    fs: &Arc<dyn FileSystem>,
    run: &ToolRunContext,
    path: &str,
) -> Result<(FsTarget, FsInfo), ToolError> {
    let cwd = session_cwd(run, path);
    let path = path.to_owned();
    let (target, info) = on_disk(fs, move |fs| {
        let target = fs.resolve(&path, cwd.as_deref())?;
        let info = fs.stat(&target)?;
        Ok((target, info))
    })
    .await
    .map_err(tool_error)?;
    let shown = quoted(&target.display_path);
    match info {
        None => {
            events::observe(ctx, &target, FsObservation::Absent, &actor(run))
                .map_err(|error| ToolError::new(error.to_string()))?;
            Err(ToolError::harness(
                FS_ERROR_NAME,
                FsErrorCode::NotFound.as_str(),
                format!("cannot read {shown}: not found"),
            ))
        }
        Some(info) if info.kind != FsKind::File => Err(ToolError::harness(
            FS_ERROR_NAME,
            FsErrorCode::NotRegularFile.as_str(),
            format!("cannot read {shown}: not a regular file"),
        )),
        Some(info) => Ok((target, info)),
    }
}

fn render(value: &Value, limit: u64) -> ToolOutput {
    let path = value
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let offset = value.get("offset").and_then(Value::as_u64).unwrap_or(1);
    let total = value.get("totalLines").and_then(Value::as_u64).unwrap_or(0);
    let lines: Vec<WindowLine> = value
        .get("lines")
        .and_then(Value::as_array)
        .map(|lines| {
            lines
                .iter()
                .map(|line| WindowLine {
                    number: line.get("number").and_then(Value::as_u64).unwrap_or(0),
                    text: line
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                })
                .collect()
        })
        .unwrap_or_default();
    let end = lines
        .last()
        .map_or_else(|| offset.saturating_sub(1), |line| line.number);
    let capped = (lines.len() as u64) < limit && end < total;
    let text = format_read_output(path, offset, &lines, total, capped);
    let mut meta = json!({"path": path, "offset": offset, "lines": value.get("lines").cloned().unwrap_or_else(|| json!([])), "totalLines": total});
    if let (Some(lang), Some(map)) = (lang_from_path(path), meta.as_object_mut()) {
        map.insert("lang".into(), json!(lang));
    }
    ToolOutput::new(value.clone(), vec![ContentBlock::text(text)]).with_meta(meta)
}

#[dsh_tools::async_trait]
impl ToolDefinition for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn description(&self) -> &str {
        READ_DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&self.output_schema)
    }

    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        true
    }

    async fn execute(&self, args: Value, run: ToolRunContext) -> Result<ToolOutput, ToolError> {
        let path = required_path(&args, "file_path")?;
        let (offset, limit) = window_args(&args, self.caps.limit)?;
        let (target, info) = regular_read_target(&self.ctx, &self.fs, &run, &path).await?;
        let request = WindowRequest {
            offset,
            limit,
            max_line_length: self.caps.max_line_length,
            max_bytes: self.caps.max_bytes,
        };
        let signal = run.signal.clone();
        let shown = target.display_path.clone();
        let reading = target.clone();
        let window = on_disk(&self.fs, move |fs| {
            // Always streamed: the window needs one pass, and memory stays at one chunk
            // whatever the file's size (dsh reads files under readStreamMinSize whole).
            let mut builder = WindowBuilder::new(request);
            fs.stream_text(&reading, &mut |chunk| {
                if signal.is_cancelled() {
                    return Err(dsh_fs::FsError::aborted("read"));
                }
                builder.push(chunk);
                Ok(())
            })?;
            builder.finish(&shown)
        })
        .await
        .map_err(|error| match error.code() {
            Some(FsErrorCode::Aborted) => ToolError::aborted(),
            _ => tool_error(error),
        })?;
        events::observe(
            &self.ctx,
            &target,
            FsObservation::Present(info.version),
            &actor(&run),
        )
        .map_err(|error| ToolError::new(error.to_string()))?;
        let value = json!({
            "path": target.display_path,
            "offset": offset,
            "lines": window.lines,
            "totalLines": window.total_lines,
        });
        Ok(render(&value, limit))
    }

    fn render(&self, args: &Value, value: Value) -> Result<ToolOutput, ToolError> {
        let limit = window_args(args, self.caps.limit).map_or(self.caps.limit, |(_, limit)| limit);
        Ok(render(&value, limit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_arguments_follow_dsh() {
        let check =
            |args: Value| window_args(&args, 2000).map_err(|error| error.message().to_owned());
        assert_eq!(check(json!({})), Ok((1, 2000)));
        assert_eq!(check(json!({"offset": 5, "limit": 4})), Ok((5, 4)));
        assert_eq!(
            check(json!({"offset": 1.5})).unwrap_err(),
            "offset must be a positive integer"
        );
        assert_eq!(
            check(json!({"limit": 0})).unwrap_err(),
            "limit must be a positive integer"
        );
        assert_eq!(
            check(json!({"limit": 2001})).unwrap_err(),
            "limit must be less than or equal to 2000"
        );
    }
}
