//! Embeds the web app (`web/` at the workspace root) into the server at compile time: a
//! generated table of every file's path and bytes, so the binary serves the app with no
//! files beside it and no path is ever built from a request.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            walk(root, &path, out);
        } else if let Ok(rel) = path.strip_prefix(root) {
            println!("cargo:rerun-if-changed={}", path.display());
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.push((rel, path));
        }
    }
}

fn main() -> std::io::Result<()> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let web = manifest.join("../../web");
    println!("cargo:rerun-if-changed={}", web.display());
    let mut files = Vec::new();
    walk(&web, &web, &mut files);
    // The build's version of the app: a hash of every file's name and bytes. The page asks
    // for its assets under it (`/web/v-…/app.js`), so browsers may keep them for good and a
    // new build's page asks for new ones.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (rel, path) in &files {
        let bytes = std::fs::read(path)?;
        for b in rel.bytes().chain([0]).chain(bytes) {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    let mut code = format!("pub(crate) static VERSION: &str = \"v-{hash:016x}\";\n");
    code.push_str("pub(crate) static FILES: &[(&str, &[u8])] = &[\n");
    for (rel, path) in &files {
        let abs = path.canonicalize().unwrap_or_else(|_| path.clone());
        let _ = writeln!(
            code,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.display().to_string()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("web_files.rs");
    std::fs::write(&out, code)
}
