//! What the terminal can show: colour depth and the inline image protocol. A leaf module:
//! the options, the widget registry and every renderer read these without importing each
//! other.

/// How much colour the terminal takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMode {
    /// No escape sequences at all.
    Off,
    /// 16 palette colours plus the 256-colour cube for highlighted code.
    Ansi256,
    /// 24-bit colour for highlighted code.
    TrueColor,
}

/// How images can be shown inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageProtocol {
    /// The kitty graphics protocol (kitty, WezTerm, Ghostty).
    Kitty,
    /// iTerm2's inline images (iTerm2, WezTerm).
    ITerm,
    /// Sixel graphics (xterm with sixel, foot, mlterm).
    Sixel,
    /// One line describing the image instead.
    None,
}

impl ImageProtocol {
    pub(crate) fn from_name(name: &str) -> Option<ImageProtocol> {
        match name.to_ascii_lowercase().as_str() {
            "kitty" => Some(ImageProtocol::Kitty),
            "iterm" | "iterm2" => Some(ImageProtocol::ITerm),
            "sixel" => Some(ImageProtocol::Sixel),
            "none" | "off" => Some(ImageProtocol::None),
            _ => None,
        }
    }
}
