//! The `read_image` tool. Images reach the model as attachments, and no attachment store is
//! composed in this build, so after dsh's argument gates every call fails with dsh's
//! "no attachment service" error instead of pretending to read the image.

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

/// The `read_image` tool.
pub struct ReadImageTool {
    parameters: Value,
}

impl ReadImageTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            parameters: read_image_parameters(),
        }
    }
}

impl Default for ReadImageTool {
    fn default() -> Self {
        Self::new()
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

    async fn execute(&self, args: Value, _run: ToolRunContext) -> Result<ToolOutput, ToolError> {
        let path = required_path(&args, "file_path")?;
        let shown = dsh_fs::quoted(&path);
        if image_media_type(&path).is_none() {
            return Err(ToolError::new(format!(
                "cannot read {shown}: read_image only accepts PNG/JPEG/WebP/GIF paths"
            )));
        }
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
