//! `view_image`: an image file of the workspace as an `image` value, its type sniffed from
//! its bytes.

use std::sync::Arc;

use base64::Engine as _;
use schemars::JsonSchema;
use serde::Deserialize;
use toolwire_core::{Source, Value};

use crate::read_regular_file;
use crate::workspace::Workspace;
use toolwire_tool::ToolAnnotations;
use toolwire_tool::ToolContext;
use toolwire_tool::{Tool, ToolError, tool_fn};

/// Providers reject larger inline images (Anthropic caps at 5 MB after base64); a bigger
/// file is better resized by a command first.
pub(crate) const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ViewImageArgs {
    /// Path of the image, relative to the workspace root.
    pub path: String,
}

/// The `view_image` tool over `workspace`.
pub fn view_image(workspace: Arc<Workspace>) -> impl Tool {
    tool_fn(
        "view_image",
        "Shows an image file of the workspace (PNG, JPEG, GIF, WebP, ...) so you can see \
         it. The type is detected from the file's content, not its name.",
        move |args: ViewImageArgs, _ctx: ToolContext| {
            let workspace = Arc::clone(&workspace);
            async move {
                let resolved = workspace.resolve(&args.path)?;
                let display = resolved.display;
                let bytes = read_regular_file(&resolved.path, &display, MAX_IMAGE_BYTES).await?;
                // The extension can lie (a `.png` that is a JPEG, a screenshot saved without
                // one); the bytes cannot, and providers check them against the MIME type.
                let mime = match infer::get(&bytes) {
                    Some(kind) if kind.mime_type().starts_with("image/") => kind.mime_type(),
                    Some(kind) => {
                        return Err(ToolError::with_code(
                            "not_an_image",
                            format!(
                                "`{display}` is not an image (its content is {}); use read_file for text",
                                kind.mime_type()
                            ),
                        ));
                    }
                    None => {
                        return Err(ToolError::with_code(
                            "not_an_image",
                            format!(
                                "`{display}` is not an image of a known type (PNG, JPEG, GIF, WebP, BMP, TIFF, ICO, AVIF, HEIF); use read_file for text"
                            ),
                        ));
                    }
                };
                let size = bytes.len();
                let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
                Ok::<_, ToolError>(
                    Value::image(Source::base64(b64), mime)
                        .summary(format!("{display}: {mime}, {size} bytes")),
                )
            }
        },
    )
    .with_schema(|s| {
        s.annotations = Some(ToolAnnotations {
            read_only_hint: Some(true),
            ..Default::default()
        });
    })
}
