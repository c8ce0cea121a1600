//! The `display.language` hint for a file, from its name: the fence names renderers and
//! syntax highlighters know (`rust`, `python`, ...).

use std::path::Path;

/// The language of `path` by extension or well-known file name; `None` for plain text or
/// anything unknown, so renderers fall back to their own guess.
pub fn language_for(path: &str) -> Option<&'static str> {
    let p = Path::new(path);
    let name = p.file_name()?.to_str()?;
    let by_name = match name {
        "Makefile" | "makefile" | "GNUmakefile" => Some("makefile"),
        "Dockerfile" | "Containerfile" => Some("dockerfile"),
        "CMakeLists.txt" => Some("cmake"),
        "Cargo.lock" => Some("toml"),
        ".bashrc" | ".bash_profile" | ".profile" | ".zshrc" => Some("bash"),
        _ => None,
    };
    if by_name.is_some() {
        return by_name;
    }
    let ext = p.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "jsx",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "tsx",
        "json" | "jsonl" | "ndjson" => "json",
        "toml" => "toml",
        "yaml" | "yml" => "yaml",
        "md" | "markdown" => "markdown",
        "sh" | "bash" | "zsh" => "bash",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "swift" => "swift",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "cs" => "csharp",
        "rb" => "ruby",
        "php" => "php",
        "lua" => "lua",
        "pl" | "pm" => "perl",
        "r" => "r",
        "scala" => "scala",
        "hs" => "haskell",
        "ml" | "mli" => "ocaml",
        "ex" | "exs" => "elixir",
        "erl" => "erlang",
        "clj" => "clojure",
        "html" | "htm" => "html",
        "css" => "css",
        "scss" => "scss",
        "xml" | "svg" => "xml",
        "sql" => "sql",
        "proto" => "protobuf",
        "tex" => "latex",
        "diff" | "patch" => "diff",
        "ini" | "cfg" => "ini",
        "csv" => "csv",
        "dockerfile" => "dockerfile",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_extension_and_name() {
        assert_eq!(language_for("src/main.rs"), Some("rust"));
        assert_eq!(language_for("a/B.PY"), Some("python"));
        assert_eq!(language_for("Makefile"), Some("makefile"));
        assert_eq!(language_for("notes.txt"), None);
        assert_eq!(language_for("README"), None);
    }
}
