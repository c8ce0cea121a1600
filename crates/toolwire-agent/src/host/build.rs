//! Building a [`Host`]: its stores (by directory or URLs), workspace, tools and sources.

use std::path::PathBuf;
use std::sync::Arc;

use toolwire_runtime::trace::Tracer;
use toolwire_runtime::{EventBus, Executor, ExecutorConfig, Registry};
use toolwire_store::{StoreConfig, StoreError, Stores};
use toolwire_tool::{Tool, ToolSource};
use toolwire_tools::{Workspace, builtin_tools};

use super::{Host, Sources};
use crate::read_result;

/// Why a [`Host`] could not be built or its stores opened. What can go wrong once it runs
/// is a [`HostError`](super::HostError).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The workspace directory could not be opened.
    #[error("workspace {}", .path.display())]
    Workspace {
        /// The directory that was asked for.
        path: PathBuf,
        /// Why it could not be used.
        #[source]
        source: toolwire_tools::WorkspaceError,
    },
    /// A tool could not be registered (two with one name).
    #[error(transparent)]
    Registry(#[from] toolwire_runtime::RegistryError),
    /// The stores in this directory could not be opened.
    #[error("cannot open the stores in {}", .dir.display())]
    OpenStores {
        /// The data directory.
        dir: PathBuf,
        /// What the store said.
        #[source]
        source: StoreError,
    },
    /// A database or blob URL (Postgres, S3) could not be opened; the error names it.
    #[error("cannot open the stores: {source}")]
    OpenStoreUrls {
        /// What the store said.
        #[source]
        source: StoreError,
    },
    /// No data directory was given and none could be found.
    #[error("no data directory: pass --data-dir or set TOOLWIRE_DATA_DIR")]
    NoDataDir,
}

/// Builds a [`Host`]; see the module example.
#[derive(Default)]
pub struct HostBuilder {
    location: StoreLocation,
    stores: Option<Stores>,
    workspace: Option<PathBuf>,
    tools: Vec<Arc<dyn Tool>>,
    sources: Vec<Arc<dyn ToolSource>>,
    no_builtins: bool,
    executor: Option<ExecutorConfig>,
    tracer: Option<Arc<dyn Tracer>>,
}

impl std::fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuilder")
            .field("location", &self.location)
            .field("workspace", &self.workspace)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl HostBuilder {
    /// Where the SQLite history and the blob directory live (default: `$TOOLWIRE_DATA_DIR`,
    /// else the platform data directory).
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.location.data_dir = Some(dir.into());
        self
    }

    /// Where the stores are, by directory and URLs; see [`StoreLocation`].
    pub fn location(mut self, location: StoreLocation) -> Self {
        self.location = location;
        self
    }

    /// Stores opened elsewhere (another backend, a test's); overrides `data_dir`.
    pub fn stores(mut self, stores: Stores) -> Self {
        self.stores = Some(stores);
        self
    }

    /// The directory the built-in tools are confined to. Without one, no built-in that
    /// touches files is registered.
    pub fn workspace(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workspace = Some(dir.into());
        self
    }

    /// More tools, registered after the built-ins.
    pub fn tools(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Sources of tools with a state of their own (MCP servers), listed by
    /// [`Host::sources`]; their tools arrive through [`Host::replace_tools`].
    pub fn sources(mut self, sources: impl IntoIterator<Item = Arc<dyn ToolSource>>) -> Self {
        self.sources.extend(sources);
        self
    }

    /// Leaves the built-in tools out (`read_result` stays: it reads the host's own store).
    pub fn without_builtins(mut self) -> Self {
        self.no_builtins = true;
        self
    }

    /// The executor's limits (default: [`ExecutorConfig::from_env`]).
    pub fn executor_config(mut self, config: ExecutorConfig) -> Self {
        self.executor = Some(config);
        self
    }

    /// Where the spans of turns, model requests and calls go (default: none; tracing
    /// off costs nothing).
    pub fn tracer(mut self, tracer: Arc<dyn Tracer>) -> Self {
        self.tracer = Some(tracer);
        self
    }

    /// Opens the stores, builds the executor and the tools, and returns the host.
    pub async fn build(self) -> Result<Host, BuildError> {
        let stores = match self.stores {
            Some(stores) => stores,
            None => self.location.open().await?,
        };
        let mut registry = Registry::new();
        if let (Some(dir), false) = (&self.workspace, self.no_builtins) {
            let workspace = Workspace::new(dir).map_err(|source| BuildError::Workspace {
                path: dir.clone(),
                source,
            })?;
            for tool in builtin_tools(Arc::new(workspace)) {
                registry.register_arc(tool)?;
            }
        }
        registry.register(read_result(stores.history_reader()))?;
        for tool in self.tools {
            registry.register_arc(tool)?;
        }
        let events = EventBus::new(Arc::clone(stores.events()));
        let mut executor = Executor::builder(registry)
            .events(Arc::clone(&events))
            .suspensions(Arc::clone(stores.suspensions()))
            .config(self.executor.unwrap_or_else(ExecutorConfig::from_env))
            .sink(crate::landing::StoreSink::new(stores.clone(), events));
        if let Some(tracer) = self.tracer {
            executor = executor.tracer(tracer);
        }
        let executor = executor.build();
        Ok(Host {
            stores,
            executor: Arc::new(executor),
            sources: Sources(Arc::new(self.sources)),
        })
    }
}

/// Where history and blobs live. By default both under one data directory (SQLite +
/// `blobs/`); either can be moved elsewhere by URL: the history to `postgres://…`, the
/// blobs to `s3://bucket/prefix`, so several machines share them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreLocation {
    /// Default: `$TOOLWIRE_DATA_DIR`, else the platform data directory.
    pub data_dir: Option<PathBuf>,
    /// `sqlite://PATH` or `postgres://…` (default: `history.db` in the data directory).
    pub database_url: Option<String>,
    /// `file:///DIR` or `s3://BUCKET/PREFIX` (default: `blobs/` in the data directory).
    pub blob_url: Option<String>,
}

impl StoreLocation {
    /// Opens the history and blob stores where this location says.
    pub async fn open(&self) -> Result<Stores, BuildError> {
        let dir = match &self.data_dir {
            Some(dir) => dir.clone(),
            None if self.database_url.is_some() && self.blob_url.is_some() => PathBuf::new(),
            None => Stores::default_data_dir().map_err(|_| BuildError::NoDataDir)?,
        };
        if self.database_url.is_none() && self.blob_url.is_none() {
            return Stores::open(&dir, StoreConfig::from_env())
                .await
                .map_err(|source| BuildError::OpenStores { dir, source });
        }
        let absolute = std::path::absolute(&dir).unwrap_or(dir);
        let database = self.database_url.clone().unwrap_or_else(|| {
            format!(
                "sqlite://{}",
                absolute.join(toolwire_store::HISTORY_FILE).display()
            )
        });
        let blobs = self.blob_url.clone().unwrap_or_else(|| {
            format!(
                "file://{}",
                absolute.join(toolwire_store::BLOB_DIR).display()
            )
        });
        if self.database_url.is_none() || self.blob_url.is_none() {
            std::fs::create_dir_all(&absolute).map_err(|e| BuildError::OpenStores {
                dir: absolute.clone(),
                source: StoreError::Io {
                    path: absolute.clone(),
                    source: e,
                },
            })?;
        }
        Stores::open_urls(&database, &blobs, StoreConfig::from_env())
            .await
            .map_err(|source| BuildError::OpenStoreUrls { source })
    }
}
