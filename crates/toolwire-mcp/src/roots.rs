//! The roots toolwire declares to an MCP server: the folders a server may work in. Fixed
//! ones (the workspace of `call` and `serve`, or the server's own `"roots"` entry), or a
//! host's, passed on as they change (the gateway's: a server behind it gets the roots of
//! the host in front, never the gateway's own working directory).

// Roots are deprecated by SEP-2577 (2026-07-28), but 2025-11-25 servers and hosts use
// them, and a server given none falls back to what it was started with.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use rmcp::model::Root;
use tokio::sync::watch;

/// Roots one client (the gateway's host) gave, at most this many passed on: the list is
/// the host's, and a hostile one must not make every server's `roots/list` unbounded.
pub const MAX_PASSED_ROOTS: usize = 256;

/// What a connection declares as its roots.
#[derive(Debug, Clone)]
pub(crate) enum Roots {
    /// These, for the connection's life; none declares no roots capability at all.
    Fixed(Arc<Vec<Root>>),
    /// Another client's, as they are now; declared with `listChanged`, so the server is
    /// told when they change.
    Passed(PassedRoots),
}

impl Default for Roots {
    fn default() -> Self {
        Roots::Fixed(Arc::new(Vec::new()))
    }
}

impl Roots {
    /// `dirs` as roots named `name`.
    pub(crate) fn fixed(dirs: &[std::path::PathBuf], name: &str) -> Roots {
        let roots = dirs
            .iter()
            .map(|dir| {
                let mut root = Root::new(file_uri(dir));
                root.name = Some(name.to_owned());
                root
            })
            .collect();
        Roots::Fixed(Arc::new(roots))
    }

    /// The roots as they are now.
    pub(crate) fn list(&self) -> Vec<Root> {
        match self {
            Roots::Fixed(roots) => roots.as_ref().clone(),
            Roots::Passed(passed) => passed.list(),
        }
    }

    /// The roots capability declared: `None` (no capability), or whether the list may
    /// change (`listChanged`).
    pub(crate) fn declared(&self) -> Option<bool> {
        match self {
            Roots::Fixed(roots) if roots.is_empty() => None,
            Roots::Fixed(_) => Some(false),
            Roots::Passed(_) => Some(true),
        }
    }
}

/// A host's roots, shared by the servers they are passed on to: set when the host's
/// list comes (and again when it changes), and each connected server told then by
/// `notifications/roots/list_changed`. Empty until the host gives a list, and for ever if
/// it declares no roots: a server behind the gateway gets no folder the host did not give.
#[derive(Debug, Clone)]
pub struct PassedRoots {
    list: Arc<Mutex<Vec<Root>>>,
    changed: Arc<watch::Sender<u64>>,
}

impl Default for PassedRoots {
    fn default() -> Self {
        PassedRoots {
            list: Arc::new(Mutex::new(Vec::new())),
            changed: Arc::new(watch::channel(0).0),
        }
    }
}

impl PassedRoots {
    /// No roots yet.
    pub fn new() -> Self {
        PassedRoots::default()
    }

    /// The host's roots are now `roots` (the first [`MAX_PASSED_ROOTS`]): every
    /// connected server is told they changed.
    pub fn set(&self, mut roots: Vec<Root>) {
        roots.truncate(MAX_PASSED_ROOTS);
        if let Ok(mut list) = self.list.lock() {
            *list = roots;
        }
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The roots as they are now.
    pub fn list(&self) -> Vec<Root> {
        self.list.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Woken at each [`PassedRoots::set`].
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }
}

/// Tells one connection's server of each change of a host's roots, for as long as the
/// connection lives (the task ends when this is dropped with the connection).
#[derive(Debug)]
pub(crate) struct Forwarding(tokio::task::JoinHandle<()>);

impl Forwarding {
    /// Starts telling `peer` of the changes of `passed` from now on.
    pub(crate) fn start(
        passed: &PassedRoots,
        peer: rmcp::service::Peer<rmcp::service::RoleClient>,
    ) -> Self {
        let mut changed = passed.subscribe();
        changed.mark_unchanged();
        Forwarding(tokio::spawn(async move {
            while changed.changed().await.is_ok() {
                if peer.is_transport_closed() || peer.notify_roots_list_changed().await.is_err() {
                    break;
                }
            }
        }))
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A directory as a `file://` URI: unreserved characters and `/` as they are, every
/// other byte percent-encoded (spaces, non-ASCII names).
pub(crate) fn file_uri(path: &std::path::Path) -> String {
    let mut uri = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}
