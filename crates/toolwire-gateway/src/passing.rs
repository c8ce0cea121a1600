//! What the servers behind the gateway offer besides tools, passed through to its hosts:
//! resources (listed, templates, read, subscribed to, and their updates), prompts,
//! completions, and logging (the level set, the messages sent on). Named as the tools
//! are: a prompt, resource or template `name` is `PREFIX__NAME`; a resource keeps its URI,
//! since a tool's `_meta.ui.resourceUri` names it (an MCP App's `ui://` page) and the host
//! reads that URI as it is. A URI is sent to the server that listed it, else to the server
//! of a tool that names it, else to each server that offers resources in turn.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::ErrorData;
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value as Json, json};
use toolwire_mcp::{McpServer, Notice, OnNotice, SEPARATOR};

/// Pages of one server's list followed at most, as for its tools.
const MAX_PAGES: usize = 100;

/// Resource URIs whose server the gateway remembers from its listings; bounded, oldest
/// forgotten first (a URI forgotten is still found by asking each server).
const MAX_OWNERS: usize = 4096;

/// Resource URIs one host may be subscribed to at once.
const MAX_SUBSCRIPTIONS: usize = 1024;

/// Notices waiting for a slow host; past this the oldest are dropped for it (a log
/// message lost rather than memory without bound).
const NOTICE_BACKLOG: usize = 256;

/// The servers behind a gateway, and their notices on their way to its hosts.
#[derive(Clone)]
pub struct Behind {
    servers: Vec<Arc<McpServer>>,
    notices: tokio::sync::broadcast::Sender<(String, Notice)>,
    /// Which server (its prefix) listed each resource URI, newest last.
    owners: Arc<Mutex<Vec<(String, String)>>>,
}

impl std::fmt::Debug for Behind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Behind")
            .field("servers", &self.servers.len())
            .finish_non_exhaustive()
    }
}

impl Default for Behind {
    fn default() -> Self {
        Behind {
            servers: Vec::new(),
            notices: tokio::sync::broadcast::channel(NOTICE_BACKLOG).0,
            owners: Arc::new(Mutex::new(Vec::new())),
        }
    }
}

impl Behind {
    /// Where each server's notices go (`McpServer::with_notices`): to every host
    /// connected to the gateway that takes this.
    pub fn on_notice(&self) -> OnNotice {
        let notices = self.notices.clone();
        Arc::new(move |prefix: &str, notice: Notice| {
            // Nobody connected: nobody to tell.
            let _ = notices.send((prefix.to_owned(), notice));
        })
    }

    /// These servers' resources, prompts, completions and logging are passed through.
    pub fn with_servers(mut self, servers: Vec<Arc<McpServer>>) -> Self {
        self.servers = servers;
        self
    }

    fn server(&self, prefix: &str) -> Option<&Arc<McpServer>> {
        self.servers.iter().find(|s| s.prefix() == prefix)
    }

    /// The server a `PREFIX__NAME` belongs to, and the name as that server knows it.
    fn by_name<'n>(&self, name: &'n str) -> Option<(&Arc<McpServer>, &'n str)> {
        self.servers
            .iter()
            .filter_map(|s| {
                let rest = name.strip_prefix(s.prefix())?.strip_prefix(SEPARATOR)?;
                Some((s, rest))
            })
            // The longest prefix, should one server's prefix begin another's.
            .max_by_key(|(s, _)| s.prefix().len())
    }

    /// The prefix of the server that `PREFIX__NAME` (a tool's, a prompt's) belongs to.
    pub(crate) fn prefix_of(&self, name: &str) -> Option<String> {
        self.by_name(name)
            .map(|(server, _)| server.prefix().to_owned())
    }

    /// The servers that declared `capability` (`resources`, `prompts`, `completions`,
    /// `logging`), each with what it declared; a server that is not up is left out (with
    /// `ready_only`, one still starting is not waited for).
    async fn offering(&self, capability: &str, ready_only: bool) -> Vec<(&Arc<McpServer>, Json)> {
        let up = |s: &&Arc<McpServer>| {
            !ready_only || s.status().state == toolwire_tool::SourceState::Ready
        };
        let declared =
            futures::future::join_all(self.servers.iter().filter(up).map(|s| async move {
                let caps = s.capabilities().await.ok()?;
                let offered = caps.get(capability).filter(|c| !c.is_null())?.clone();
                Some((s, offered))
            }))
            .await;
        declared.into_iter().flatten().collect()
    }

    /// Every page of `method`'s list (`key`: `resources`, `resourceTemplates`, `prompts`)
    /// from every server that offers `capability` (with `ready_only`, every such server
    /// that is up now: the rest are announced as they come), each item's `name` given its
    /// server's prefix; one page for the host.
    pub(crate) async fn list(
        &self,
        capability: &str,
        method: &str,
        key: &str,
        ready_only: bool,
    ) -> Json {
        let offering = self.offering(capability, ready_only).await;
        let lists = futures::future::join_all(offering.iter().map(|(server, _)| async move {
            let mut items = Vec::new();
            let mut cursor: Option<Json> = None;
            for _ in 0..MAX_PAGES {
                let params = match &cursor {
                    Some(c) => json!({"cursor": c}),
                    None => json!({}),
                };
                // A server that fails to list is left out of the listing, not the rest.
                let Ok(page) = server.request(method, params).await else {
                    break;
                };
                if let Some(Json::Array(list)) = page.get(key) {
                    items.extend(list.iter().cloned());
                }
                cursor = page.get("nextCursor").filter(|c| !c.is_null()).cloned();
                if cursor.is_none() {
                    break;
                }
            }
            (*server, items)
        }))
        .await;
        let mut all = Vec::new();
        for (server, items) in lists {
            for mut item in items {
                if let Some(uri) = item.get("uri").and_then(Json::as_str) {
                    self.remember(uri, server.prefix());
                }
                if let Some(Json::String(name)) = item.get_mut("name") {
                    *name = format!("{}{SEPARATOR}{name}", server.prefix());
                }
                all.push(item);
            }
        }
        json!({ key: all })
    }

    fn remember(&self, uri: &str, prefix: &str) {
        if let Ok(mut owners) = self.owners.lock() {
            owners.retain(|(known, _)| known != uri);
            if owners.len() >= MAX_OWNERS {
                owners.remove(0);
            }
            owners.push((uri.to_owned(), prefix.to_owned()));
        }
    }

    /// The servers to ask about resource `uri`, in turn: the one that listed it, else the
    /// one of a tool whose `_meta.ui.resourceUri` names it (`ui_owner`), else each that
    /// offers resources.
    async fn for_uri(&self, uri: &str, ui_owner: Option<&str>) -> Vec<&Arc<McpServer>> {
        let listed = self.owners.lock().ok().and_then(|owners| {
            owners
                .iter()
                .rev()
                .find(|(known, _)| known == uri)
                .map(|(_, prefix)| prefix.clone())
        });
        if let Some(server) = listed.as_deref().or(ui_owner).and_then(|p| self.server(p)) {
            return vec![server];
        }
        self.offering("resources", false)
            .await
            .into_iter()
            .map(|(s, _)| s)
            .collect()
    }

    /// `method` (`resources/read`, `resources/subscribe`, `resources/unsubscribe`) for
    /// `uri`, asked of its server (see [`Behind::for_uri`]): the first answer, else the
    /// first server's refusal, else "no resource".
    pub(crate) async fn about_uri(
        &self,
        method: &str,
        params: Json,
        uri: &str,
        ui_owner: Option<&str>,
    ) -> Result<Json, ErrorData> {
        let mut refused = None;
        for server in self.for_uri(uri, ui_owner).await {
            match server.request(method, params.clone()).await {
                Ok(answer) => {
                    self.remember(uri, server.prefix());
                    return Ok(answer);
                }
                Err(e) => {
                    refused.get_or_insert(e);
                }
            }
        }
        Err(refused.unwrap_or_else(|| {
            ErrorData::resource_not_found(format!("no server behind offers {uri:?}"), None)
        }))
    }

    /// `prompts/get` of `PREFIX__NAME`, asked of its server under its own name.
    pub(crate) async fn get_prompt(&self, mut params: Json) -> Result<Json, ErrorData> {
        let name = params
            .get("name")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some((server, own)) = self.by_name(&name) else {
            return Err(ErrorData::invalid_params(
                format!("no prompt {name:?} behind this gateway"),
                None,
            ));
        };
        params["name"] = Json::String(own.to_owned());
        server.request("prompts/get", params).await
    }

    /// `completion/complete` for a prompt's argument (its `PREFIX__NAME`) or a resource
    /// template's, asked of the server that has it.
    pub(crate) async fn complete(
        &self,
        mut params: Json,
        ui_owner: Option<&str>,
    ) -> Result<Json, ErrorData> {
        let reference = params.get("ref").cloned().unwrap_or(Json::Null);
        match reference.get("type").and_then(Json::as_str) {
            Some("ref/prompt") => {
                let name = reference
                    .get("name")
                    .and_then(Json::as_str)
                    .unwrap_or_default();
                let Some((server, own)) = self.by_name(name) else {
                    return Err(ErrorData::invalid_params(
                        format!("no prompt {name:?} behind this gateway"),
                        None,
                    ));
                };
                params["ref"]["name"] = Json::String(own.to_owned());
                server.request("completion/complete", params).await
            }
            _ => {
                let uri = reference
                    .get("uri")
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_owned();
                self.about_uri("completion/complete", params, &uri, ui_owner)
                    .await
            }
        }
    }

    /// `logging/setLevel`, passed to every server that logs; one that refuses keeps its
    /// level (the host is not failed for it).
    pub(crate) async fn set_level(&self, params: Json) {
        let logging = self.offering("logging", false).await;
        futures::future::join_all(
            logging
                .iter()
                .map(|(server, _)| server.request("logging/setLevel", params.clone())),
        )
        .await;
    }

    /// Sends `peer` the servers' notices for as long as it is connected: every log
    /// message (its `logger` named as the tools are), the updates of the resources it
    /// subscribed to, and the servers' changed lists.
    pub(crate) fn tell(&self, peer: Peer<RoleServer>, subscribed: Subscriptions) {
        let mut notices = self.notices.subscribe();
        tokio::spawn(async move {
            loop {
                let (prefix, notice) = match notices.recv().await {
                    Ok(next) => next,
                    // Some were dropped for this slow host; the next ones still go.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                if peer.is_transport_closed() {
                    return;
                }
                let sent = match notice {
                    Notice::Log(params) => send_log(&peer, &prefix, params).await,
                    Notice::ResourceUpdated(uri) if subscribed.has(&uri) => {
                        let params = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
                        peer.notify_resource_updated(params).await.is_ok()
                    }
                    Notice::ResourcesChanged => peer.notify_resource_list_changed().await.is_ok(),
                    Notice::PromptsChanged => peer.notify_prompt_list_changed().await.is_ok(),
                    _ => true,
                };
                if !sent && peer.is_transport_closed() {
                    return;
                }
            }
        });
    }
}

/// A server's log message to the host, its `logger` named as the server's tools are
/// (`PREFIX`, or `PREFIX__LOGGER` when it named one).
#[allow(deprecated)] // Logging: still what 2025-11-25 hosts and servers use.
async fn send_log(peer: &Peer<RoleServer>, prefix: &str, mut params: Json) -> bool {
    let logger = match params.get("logger").and_then(Json::as_str) {
        Some(own) => format!("{prefix}{SEPARATOR}{own}"),
        None => prefix.to_owned(),
    };
    if let Json::Object(map) = &mut params {
        map.insert("logger".into(), Json::String(logger));
    }
    match serde_json::from_value(params) {
        Ok(params) => peer.notify_logging_message(params).await.is_ok(),
        // Not a log message the host could read: not passed on.
        Err(_) => true,
    }
}

/// The resource URIs one host connection subscribed to.
#[derive(Debug, Clone, Default)]
pub(crate) struct Subscriptions(Arc<Mutex<HashSet<String>>>);

impl Subscriptions {
    pub(crate) fn add(&self, uri: &str) -> Result<(), ErrorData> {
        let mut uris = self
            .0
            .lock()
            .map_err(|_| ErrorData::internal_error("subscriptions unreadable", None))?;
        if uris.len() >= MAX_SUBSCRIPTIONS && !uris.contains(uri) {
            return Err(ErrorData::invalid_params(
                format!("at most {MAX_SUBSCRIPTIONS} resources may be subscribed to at once"),
                None,
            ));
        }
        uris.insert(uri.to_owned());
        Ok(())
    }

    pub(crate) fn remove(&self, uri: &str) {
        if let Ok(mut uris) = self.0.lock() {
            uris.remove(uri);
        }
    }

    fn has(&self, uri: &str) -> bool {
        self.0.lock().is_ok_and(|uris| uris.contains(uri))
    }
}
