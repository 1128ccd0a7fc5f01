//! The `read_image` tool. Images reach the model as attachments, and no attachment store is
//! composed in this build, so after dsh's gates every call fails with a clear error instead
//! of pretending to read the image: a text-only model route (dsh's default
//! `deepseek-v4-flash`) hears that it takes no images, any other that no attachment service
//! is mounted. The route gate runs before the attachment gate (dsh checks the attachment
//! service first, but registers the tool only where one exists), so the model learns the
//! reason it can act on.

use dsh_kernel::Context;
use dsh_llm::LLM;
use dsh_tools::{ToolDefinition, ToolError, ToolOutput, ToolRunContext};
use serde_json::Value;

use crate::blocking::required_path;
use crate::schema::{READ_IMAGE_DESCRIPTION, read_image_parameters};

/// The media type of an image path's extension (PNG, JPEG, WebP, GIF), case-insensitive.
pub fn image_media_type(path: &str) -> Option<&'static str> {
    // Node's `extname`: the last segment (trailing separators ignored), a leading dot not an
    // extension.
    let base = path
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let dot = base.rfind('.').filter(|&dot| dot > 0)?;
    let ext = base.get(dot + 1..)?.to_ascii_lowercase();
    match ext.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "webp" => Some("image/webp"),
        "gif" => Some("image/gif"),
        _ => None,
    }
}

/// The `read_image` tool; `ctx` supplies the model registry (`llm`) for the route gate.
pub struct ReadImageTool {
    ctx: Context,
    parameters: Value,
}

impl ReadImageTool {
    /// The tool.
    pub fn new(ctx: Context) -> Self {
        Self {
            ctx,
            parameters: read_image_parameters(),
        }
    }

    /// dsh's route gate: the calling agent's model must declare image input.
    async fn check_route(&self, shown: &str, run: &ToolRunContext) -> Result<(), ToolError> {
        let unresolved = || {
            ToolError::new(format!(
                "cannot read {shown} as an image: the current model route could not be resolved"
            ))
        };
        let caller = run.caller.as_ref().ok_or_else(unresolved)?;
        let (Some(provider), Some(model)) = (&caller.provider, &caller.model) else {
            return Err(unresolved());
        };
        let llm = self.ctx.get(&LLM).ok_or_else(unresolved)?;
        let info = llm
            .resolve_model(provider, model, &run.signal)
            .await
            .map_err(|_| unresolved())?;
        if info.accepts_images() != Some(true) {
            return Err(ToolError::new(format!(
                "cannot read {shown} as an image: model \"{model}\" does not declare image \
                 input; switch to an image-capable model to read images"
            )));
        }
        Ok(())
    }
}

#[dsh_tools::async_trait]
impl ToolDefinition for ReadImageTool {
    fn name(&self) -> &str {
        "read_image"
    }

    fn description(&self) -> &str {
        READ_IMAGE_DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        true
    }

    async fn execute(&self, args: Value, run: ToolRunContext) -> Result<ToolOutput, ToolError> {
        let path = required_path(&args, "file_path")?;
        let shown = dsh_fs::quoted(&path);
        if image_media_type(&path).is_none() {
            return Err(ToolError::new(format!(
                "cannot read {shown}: read_image only accepts PNG/JPEG/WebP/GIF paths"
            )));
        }
        self.check_route(&shown, &run).await?;
        Err(ToolError::new(format!(
            "cannot read {shown} as an image: no attachment service is mounted"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types() {
        assert_eq!(image_media_type("/a/B.PNG"), Some("image/png"));
        assert_eq!(image_media_type("x.jpeg"), Some("image/jpeg"));
        assert_eq!(image_media_type("x.svg"), None);
        assert_eq!(image_media_type("png"), None);
        assert_eq!(image_media_type("/a/.png"), None);
        assert_eq!(image_media_type("x.png/"), Some("image/png"));
    }
}
