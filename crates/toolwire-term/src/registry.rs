//! The widget registry: terminal renderers by widget id, and what a renderer sees. Apart
//! from `widgets` (which draws them) so that `TermOptions` can hold a registry without the
//! options depending on the renderers that depend on the options.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value as Json;

use crate::modes::ColorMode;

/// What a widget renderer may know about the terminal.
#[derive(Debug, Clone, Copy)]
pub struct WidgetContext {
    /// Columns the widget's lines must fit in.
    pub width: usize,
    /// Whether colour codes may be used.
    pub color: ColorMode,
}

impl WidgetContext {
    /// `text` in SGR `codes` (e.g. `"1;32"`) when colour is on, as is otherwise.
    pub fn paint(&self, codes: &str, text: &str) -> String {
        if self.color == ColorMode::Off {
            text.to_owned()
        } else {
            format!("\x1b[{codes}m{text}\x1b[0m")
        }
    }
}

/// Why a renderer could not draw its widget; the fallback text is shown instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WidgetError {
    /// The widget's data is not in the shape the renderer draws.
    #[error("widget data does not match what the renderer expects: {0}")]
    BadData(String),
}

/// Draws one widget type as text. Output may hold SGR colour codes; every other control
/// character is neutralized, since the data it draws is untrusted.
pub trait WidgetRenderer: Send + Sync {
    /// The widget's lines, fitting `ctx.width`.
    fn render(&self, data: &Json, ctx: &WidgetContext) -> Result<String, WidgetError>;
}

impl<F> WidgetRenderer for F
where
    F: Fn(&Json, &WidgetContext) -> Result<String, WidgetError> + Send + Sync,
{
    fn render(&self, data: &Json, ctx: &WidgetContext) -> Result<String, WidgetError> {
        self(data, ctx)
    }
}

/// Terminal renderers by widget id. Cheap to clone.
#[derive(Clone, Default)]
pub struct WidgetRegistry {
    renderers: Arc<BTreeMap<String, Arc<dyn WidgetRenderer>>>,
}

impl std::fmt::Debug for WidgetRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.renderers.keys()).finish()
    }
}

impl WidgetRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        WidgetRegistry::default()
    }

    /// Registers (or replaces) the renderer for `widget`.
    pub fn register(
        &mut self,
        widget: impl Into<String>,
        renderer: impl WidgetRenderer + 'static,
    ) -> &mut Self {
        Arc::make_mut(&mut self.renderers).insert(widget.into(), Arc::new(renderer));
        self
    }

    /// The renderer for `widget`, if one is registered.
    pub fn get(&self, widget: &str) -> Option<&Arc<dyn WidgetRenderer>> {
        self.renderers.get(widget)
    }

    /// The widget ids that have a renderer, sorted.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.renderers.keys().map(String::as_str)
    }
}
