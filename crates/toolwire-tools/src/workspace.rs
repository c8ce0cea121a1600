//! `Workspace`: the directory the built-in file tools are confined to, and the path checks
//! that keep a model's path from reaching outside it.

use std::io;
use std::path::{Component, Path, PathBuf};

use toolwire_tool::ToolError;

/// Why a path was refused or could not be resolved. Messages name the path the model gave,
/// so it can correct itself.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// The root cannot be opened or canonicalized.
    #[error("workspace root `{}` is not usable: {source}", .root.display())]
    Root {
        /// The root as given.
        root: PathBuf,
        /// Why it cannot be used.
        #[source]
        source: io::Error,
    },
    /// The root exists but is not a directory.
    #[error("workspace root `{}` is not a directory", .0.display())]
    RootNotDir(PathBuf),
    /// A relative path climbs out of the root with `..`.
    #[error("path `{path}` escapes the workspace root with `..`; use a path inside the workspace")]
    DotDotEscape {
        /// The path as the model gave it.
        path: String,
    },
    /// An absolute path lies outside the root.
    #[error(
        "absolute path `{path}` is outside the workspace root `{}`; use a path relative to the workspace",
        .root.display()
    )]
    OutsideRoot {
        /// The path as the model gave it.
        path: String,
        /// The workspace root.
        root: PathBuf,
    },
    /// A symlink inside the root points outside it.
    #[error(
        "path `{path}` resolves through a symlink to `{}`, which is outside the workspace root `{}`",
        .target.display(), .root.display()
    )]
    SymlinkEscape {
        /// The path as the model gave it.
        path: String,
        /// Where the symlink leads.
        target: PathBuf,
        /// The workspace root.
        root: PathBuf,
    },
    /// The path goes through a symlink whose target does not exist.
    #[error("path `{path}` goes through a broken symlink at `{}`", .link.display())]
    BrokenSymlink {
        /// The path as the model gave it.
        path: String,
        /// The broken link.
        link: PathBuf,
    },
    /// The path could not be resolved for another reason (permissions, I/O).
    #[error("path `{path}` could not be resolved: {source}")]
    Io {
        /// The path as the model gave it.
        path: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

impl WorkspaceError {
    /// The `error.code` a tool reports for this refusal.
    pub fn code(&self) -> &'static str {
        match self {
            WorkspaceError::Root { .. } | WorkspaceError::RootNotDir(_) => "workspace_root",
            WorkspaceError::DotDotEscape { .. }
            | WorkspaceError::OutsideRoot { .. }
            | WorkspaceError::SymlinkEscape { .. } => "outside_workspace",
            WorkspaceError::BrokenSymlink { .. } => "broken_symlink",
            WorkspaceError::Io { .. } => "io",
        }
    }
}

impl From<WorkspaceError> for ToolError {
    fn from(e: WorkspaceError) -> Self {
        ToolError::with_code(e.code(), e.to_string())
    }
}

/// A path inside the workspace, safe to open: every existing component has been resolved
/// through its symlinks and found under the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Absolute, under the canonical root; components past the deepest existing one are
    /// plain names (no `..`, no symlinks, since they do not exist yet).
    pub path: PathBuf,
    /// Relative to the root with `/` separators, `.` for the root itself: what values show.
    pub display: String,
}

/// The root the built-in file tools may touch. Cheap to share behind an `Arc`.
///
/// Checks are made when a path is resolved; a process that swaps a directory for a
/// symlink between the check and the open can still win that race. The guard is against a
/// model's mistaken or adversarial path, not against a hostile local process.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// As given, so absolute paths the model copies from earlier output still match.
    given: PathBuf,
    canonical: PathBuf,
}

impl Workspace {
    /// A workspace at `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, WorkspaceError> {
        let given = root.as_ref().to_path_buf();
        let canonical = given
            .canonicalize()
            .map_err(|source| WorkspaceError::Root {
                root: given.clone(),
                source,
            })?;
        if !canonical.is_dir() {
            return Err(WorkspaceError::RootNotDir(given));
        }
        let given = if given.is_absolute() {
            normalize_lexically(&given).unwrap_or_else(|| canonical.clone())
        } else {
            canonical.clone()
        };
        Ok(Workspace { given, canonical })
    }

    /// The canonical root: where shell commands run.
    pub fn root(&self) -> &Path {
        &self.canonical
    }

    /// Resolves a path the model gave. Relative paths are taken from the root; absolute
    /// ones must lie under it; `..` may not climb above it; and the deepest existing
    /// ancestor, once its symlinks are resolved, must still be under the root, so neither
    /// reading through a link nor creating a file under a linked directory leaves it.
    pub fn resolve(&self, user_path: &str) -> Result<Resolved, WorkspaceError> {
        let relative = self.relative_part(user_path)?;
        let mut existing = self.canonical.clone();
        let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
        // Walk down while the path exists; each step is re-canonicalized so a symlink at
        // any depth is followed and checked.
        let mut components = relative.iter();
        for name in components.by_ref() {
            let next = existing.join(name);
            match std::fs::symlink_metadata(&next) {
                Ok(_) => {
                    existing = match next.canonicalize() {
                        Ok(c) => c,
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {
                            return Err(WorkspaceError::BrokenSymlink {
                                path: user_path.to_owned(),
                                link: self.display_of(&next),
                            });
                        }
                        Err(source) => {
                            return Err(WorkspaceError::Io {
                                path: user_path.to_owned(),
                                source,
                            });
                        }
                    };
                    if !existing.starts_with(&self.canonical) {
                        return Err(WorkspaceError::SymlinkEscape {
                            path: user_path.to_owned(),
                            target: existing,
                            root: self.canonical.clone(),
                        });
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    rest.push(name);
                    break;
                }
                Err(source) => {
                    return Err(WorkspaceError::Io {
                        path: user_path.to_owned(),
                        source,
                    });
                }
            }
        }
        rest.extend(components);
        let mut path = existing;
        path.extend(rest);
        let display = self.display_string(&path);
        Ok(Resolved { path, display })
    }

    /// The part of `user_path` below the root, with `.` and `..` folded away.
    fn relative_part(&self, user_path: &str) -> Result<PathBuf, WorkspaceError> {
        let p = Path::new(user_path);
        let joined = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.given.join(p)
        };
        let outside = || WorkspaceError::OutsideRoot {
            path: user_path.to_owned(),
            root: self.given.clone(),
        };
        let normal = normalize_lexically(&joined).ok_or_else(|| {
            if p.is_absolute() {
                outside()
            } else {
                WorkspaceError::DotDotEscape {
                    path: user_path.to_owned(),
                }
            }
        })?;
        let under = normal
            .strip_prefix(&self.given)
            .or_else(|_| normal.strip_prefix(&self.canonical));
        match under {
            Ok(rel) => Ok(rel.to_path_buf()),
            Err(_) if p.is_absolute() => Err(outside()),
            Err(_) => Err(WorkspaceError::DotDotEscape {
                path: user_path.to_owned(),
            }),
        }
    }

    fn display_of(&self, path: &Path) -> PathBuf {
        path.strip_prefix(&self.canonical)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| path.to_path_buf())
    }

    fn display_string(&self, path: &Path) -> String {
        let rel = self.display_of(path);
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.is_empty() {
            ".".to_owned()
        } else {
            parts.join("/")
        }
    }
}

/// Writes `bytes` as the new content of `path` by writing a temporary file beside it and
/// renaming it over `path`. The rename replaces the directory entry, so a hard link that
/// points at a file outside the workspace is cut loose rather than written through, and a
/// crash mid-write leaves the old content whole, never half a file. An existing file's
/// permissions are kept.
pub(crate) async fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.{}.tmp", toolwire_core::new_id("tw")));
    let permissions = tokio::fs::metadata(path)
        .await
        .ok()
        .map(|m| m.permissions());
    let written = async {
        tokio::fs::write(&temp, bytes).await?;
        if let Some(p) = permissions {
            tokio::fs::set_permissions(&temp, p).await?;
        }
        tokio::fs::rename(&temp, path).await
    }
    .await;
    if written.is_err() {
        let _ = tokio::fs::remove_file(&temp).await;
    }
    written
}

/// Folds `.` and `..` without touching the disk; `None` when `..` climbs above `/`.
fn normalize_lexically(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            Component::Normal(name) => out.push(name),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_normalization() {
        assert_eq!(
            normalize_lexically(Path::new("/a/./b/../c")),
            Some(PathBuf::from("/a/c"))
        );
        assert_eq!(normalize_lexically(Path::new("/..")), None);
        assert_eq!(normalize_lexically(Path::new("/a/../..")), None);
    }
}
