//! The host the `call` and `chat` commands run tools in: the stores under the data
//! directory, the built-in tools confined to a workspace, and an executor whose events
//! and suspensions are durable.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use toolwire_runtime::builtin::{Workspace, read_result, register_builtins};
use toolwire_runtime::{
    EventBus, Executor, ExecutorConfig, Registry, StoreEventLog, StoreSuspensions, Tool,
};
use toolwire_store::Stores;

use crate::data;

pub(crate) struct Host {
    pub stores: Stores,
    pub executor: Arc<Executor>,
}

impl Host {
    /// Opens the stores and registers the built-ins, `read_result` and `extra_tools`.
    pub async fn open(
        data_dir: Option<&Path>,
        workspace: &Path,
        extra_tools: Vec<Arc<dyn Tool>>,
    ) -> Result<Host> {
        let stores = data::open(data_dir).await?;
        let workspace = Arc::new(
            Workspace::new(workspace)
                .with_context(|| format!("workspace {}", workspace.display()))?,
        );
        let mut registry = Registry::new();
        register_builtins(&mut registry, workspace)?;
        registry.register(read_result(Arc::clone(&stores.history)))?;
        for tool in extra_tools {
            registry.register_arc(tool)?;
        }
        let executor = Executor::with(
            Arc::new(registry),
            EventBus::new(Arc::new(StoreEventLog(Arc::clone(&stores.history)))),
            Arc::new(StoreSuspensions(Arc::clone(&stores.history))),
            ExecutorConfig::default(),
        );
        Ok(Host {
            stores,
            executor: Arc::new(executor),
        })
    }
}
