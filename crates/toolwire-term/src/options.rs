//! `TermOptions`: what the renderer may assume about the terminal, explicit for tests and
//! detected from the real terminal for the binary.

pub use crate::modes::{ColorMode, ImageProtocol};
use crate::registry::WidgetRegistry;

/// Everything rendering depends on. Rendering is a pure function of the result and these.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TermOptions {
    /// Columns; every rendered line fits in it.
    pub width: usize,
    /// Whether and how lines are coloured.
    pub color: ColorMode,
    /// How images are drawn, if at all.
    pub images: ImageProtocol,
    /// Lines per value before it is cut (a value's own `maxHeight` may cut sooner).
    pub max_height: Option<usize>,
    /// Ignore `collapsed` and every height limit.
    pub expand_all: bool,
    /// Terminal renderers for widgets, by widget id.
    pub widgets: WidgetRegistry,
}

/// The narrowest width we lay out for; narrower terminals get lines this wide.
pub(crate) const MIN_WIDTH: usize = 16;

impl TermOptions {
    /// No colour, no images, no height limit: the deterministic options tests use.
    pub fn plain(width: usize) -> Self {
        TermOptions {
            width,
            color: ColorMode::Off,
            images: ImageProtocol::None,
            max_height: None,
            expand_all: false,
            widgets: WidgetRegistry::default(),
        }
    }

    /// The same options with another colour mode.
    pub fn with_color(mut self, color: ColorMode) -> Self {
        self.color = color;
        self
    }

    /// The same options with another height limit (`None`: no limit).
    pub fn with_max_height(mut self, lines: Option<usize>) -> Self {
        self.max_height = lines;
        self
    }

    /// The same options with another image protocol.
    pub fn with_images(mut self, images: ImageProtocol) -> Self {
        self.images = images;
        self
    }

    /// The same options, ignoring (or not) every fold and height limit.
    pub fn with_expand_all(mut self, expand: bool) -> Self {
        self.expand_all = expand;
        self
    }

    /// The same options with these widget renderers.
    pub fn with_widgets(mut self, widgets: WidgetRegistry) -> Self {
        self.widgets = widgets;
        self
    }

    pub(crate) fn layout_width(&self) -> usize {
        self.width.max(MIN_WIDTH)
    }

    /// Options for the real terminal on stdout: its size (else `COLUMNS`/`LINES`),
    /// colour unless `NO_COLOR` is set or stdout is not a terminal (`CLICOLOR_FORCE`
    /// forces it), and the image protocol from `TERM`, `TERM_PROGRAM`, `KITTY_WINDOW_ID`
    /// (`TOOLWIRE_IMAGES=kitty|iterm|sixel|none` overrides). On a terminal each value is
    /// cut to fit the screen; piped output is complete.
    pub fn detect() -> Self {
        let term = console::Term::stdout();
        let is_tty = term.is_term();
        let size = if is_tty { term.size_checked() } else { None };
        TermOptions::from_env(|k| std::env::var(k).ok(), is_tty, size)
    }

    /// [`TermOptions::detect`] with its inputs given: `env` looks a variable up, `size`
    /// is (rows, columns).
    pub fn from_env(
        env: impl Fn(&str) -> Option<String>,
        is_tty: bool,
        size: Option<(u16, u16)>,
    ) -> Self {
        let set = |k: &str| env(k).is_some_and(|v| !v.is_empty());
        let number = |k: &str| {
            env(k)
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|n| *n > 0)
        };
        let (rows, cols) = match size {
            Some((r, c)) if r > 0 && c > 0 => (Some(usize::from(r)), Some(usize::from(c))),
            _ => (number("LINES"), number("COLUMNS")),
        };
        let width = cols.unwrap_or(80);

        let forced = env("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0");
        let color =
            if set("NO_COLOR") || (!is_tty && !forced) || env("TERM").as_deref() == Some("dumb") {
                ColorMode::Off
            } else if matches!(env("COLORTERM").as_deref(), Some("truecolor" | "24bit")) {
                ColorMode::TrueColor
            } else {
                ColorMode::Ansi256
            };

        let images = match env("TOOLWIRE_IMAGES")
            .as_deref()
            .and_then(ImageProtocol::from_name)
        {
            Some(p) => p,
            None if !is_tty => ImageProtocol::None,
            // A multiplexer swallows image escapes unless configured for passthrough.
            None if set("TMUX") || env("TERM").is_some_and(|t| t.starts_with("screen")) => {
                ImageProtocol::None
            }
            None => detect_images(&env),
        };

        // Leave room for the prompt and a header so a cut value fits on one screen.
        let max_height = if is_tty {
            rows.map(|r| r.saturating_sub(4).max(8))
        } else {
            None
        };

        TermOptions {
            width,
            color,
            images,
            max_height,
            expand_all: false,
            widgets: WidgetRegistry::default(),
        }
    }
}

fn detect_images(env: &impl Fn(&str) -> Option<String>) -> ImageProtocol {
    let term = env("TERM").unwrap_or_default();
    let program = env("TERM_PROGRAM").unwrap_or_default();
    if env("KITTY_WINDOW_ID").is_some() || term.contains("kitty") || program == "ghostty" {
        ImageProtocol::Kitty
    } else if matches!(program.as_str(), "iTerm.app" | "WezTerm")
        || env("ITERM_SESSION_ID").is_some()
    {
        ImageProtocol::ITerm
    } else if term.contains("sixel") || term == "foot" || term.starts_with("mlterm") {
        ImageProtocol::Sixel
    } else {
        ImageProtocol::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn opts(vars: &[(&str, &str)], tty: bool, size: Option<(u16, u16)>) -> TermOptions {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        TermOptions::from_env(|k| map.get(k).cloned(), tty, size)
    }

    #[test]
    fn no_color_and_pipes_turn_colour_off() {
        assert_eq!(opts(&[], true, None).color, ColorMode::Ansi256);
        assert_eq!(opts(&[("NO_COLOR", "1")], true, None).color, ColorMode::Off);
        assert_eq!(opts(&[], false, None).color, ColorMode::Off);
        assert_eq!(
            opts(&[("CLICOLOR_FORCE", "1")], false, None).color,
            ColorMode::Ansi256
        );
        assert_eq!(
            opts(&[("COLORTERM", "truecolor")], true, None).color,
            ColorMode::TrueColor
        );
    }

    #[test]
    fn size_comes_from_the_terminal_then_the_environment() {
        let o = opts(&[("COLUMNS", "100"), ("LINES", "30")], true, Some((24, 80)));
        assert_eq!((o.width, o.max_height), (80, Some(20)));
        let o = opts(&[("COLUMNS", "100"), ("LINES", "30")], true, None);
        assert_eq!((o.width, o.max_height), (100, Some(26)));
        let o = opts(&[("COLUMNS", "100")], false, None);
        assert_eq!((o.width, o.max_height), (100, None));
        assert_eq!(opts(&[("COLUMNS", "x")], false, None).width, 80);
    }

    #[test]
    fn image_protocol_from_the_terminal() {
        assert_eq!(
            opts(&[("KITTY_WINDOW_ID", "1")], true, None).images,
            ImageProtocol::Kitty
        );
        assert_eq!(
            opts(&[("TERM_PROGRAM", "iTerm.app")], true, None).images,
            ImageProtocol::ITerm
        );
        assert_eq!(
            opts(&[("TERM", "foot")], true, None).images,
            ImageProtocol::Sixel
        );
        assert_eq!(
            opts(&[("TERM", "xterm-256color")], true, None).images,
            ImageProtocol::None
        );
        let tmux = opts(&[("KITTY_WINDOW_ID", "1"), ("TMUX", "/tmp/x")], true, None);
        assert_eq!(tmux.images, ImageProtocol::None);
        let forced = opts(&[("TOOLWIRE_IMAGES", "sixel")], true, None);
        assert_eq!(forced.images, ImageProtocol::Sixel);
        assert_eq!(
            opts(&[("KITTY_WINDOW_ID", "1")], false, None).images,
            ImageProtocol::None
        );
    }
}
