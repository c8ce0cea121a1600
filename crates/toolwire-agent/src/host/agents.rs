//! Agents over the host's tools, and their turns.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use toolwire_model::{EncodeNote, Provider, ProviderClient};
use toolwire_runtime::Registry;
use toolwire_store::{NewSession, Session};

use super::{Host, HostError, ProviderSettings, Running};
use crate::{Agent, AgentConfig, Approver, ModelRequest, TaskTool, TurnOutcome};

impl Host {
    /// An agent over this host's tools (plus `task`, for subagents), talking to the
    /// configured provider; suspended calls go to `approver`.
    pub fn agent(
        &self,
        settings: &ProviderSettings,
        approver: Arc<dyn Approver>,
    ) -> Result<HostAgent, HostError> {
        let client = ProviderClient::new(settings.client_config()?)?;
        let (registry, task) = self.agent_tools()?;
        // The host's events, suspensions, limits and sink, over these tools.
        let executor = self.executor.with_tools(registry);
        let agent = Agent::new(
            client,
            settings.agent_config(),
            Arc::new(executor),
            self.stores.clone(),
            approver,
        );
        task.bind(&agent);
        Ok(HostAgent {
            agent,
            host: self.clone(),
        })
    }

    /// The tools an agent of this host offers: the host's, plus `task`.
    fn agent_tools(&self) -> Result<(Registry, TaskTool), HostError> {
        let task = TaskTool::new();
        let mut registry = Registry::clone(&self.executor.registry());
        registry.register(task.clone())?;
        Ok((registry, task))
    }

    /// The exact request body an agent of this host with `config` would send `provider`
    /// next for session `session_id` (`toolwire export`, the server's `/export`): the
    /// agent loop's own request, over the same tools, and no key needed.
    pub async fn export(
        &self,
        session_id: &str,
        provider: Provider,
        config: &AgentConfig,
    ) -> Result<(Vec<u8>, Vec<EncodeNote>), HostError> {
        let (registry, _) = self.agent_tools()?;
        ModelRequest::new(provider, config, &registry)
            .export(&self.stores, session_id)
            .await
    }
}

/// An agent made by [`Host::agent`]: its turns stream their events.
#[derive(Debug, Clone)]
pub struct HostAgent {
    agent: Arc<Agent>,
    host: Host,
}

/// The events of a running turn, ending with the turn.
pub type TurnEvents = Running<TurnOutcome>;

impl HostAgent {
    /// The agent itself (its provider, model and settings).
    pub fn agent(&self) -> &Arc<Agent> {
        &self.agent
    }

    /// Creates a session for this agent's turns and announces it.
    pub async fn start_session(&self, new: NewSession) -> Result<Session, HostError> {
        Ok(self.agent.start_session(new).await?)
    }

    /// Announces that nobody will add to the session any more (the chat ended).
    pub async fn end_session(&self, session_id: &str) {
        self.agent.end_session(session_id).await;
    }

    /// Runs one user message to the end of its turn, streaming its events.
    pub async fn turn(&self, session_id: &str, text: &str) -> Result<TurnEvents, HostError> {
        self.turn_with_cancel(session_id, text, CancellationToken::new())
            .await
    }

    /// [`Self::turn`] with a cancel (Ctrl-C, a stop button): calls still running get
    /// `cancelled` results, which are stored.
    pub async fn turn_with_cancel(
        &self,
        session_id: &str,
        text: &str,
        cancel: CancellationToken,
    ) -> Result<TurnEvents, HostError> {
        let agent = Arc::clone(&self.agent);
        let (session, text) = (session_id.to_owned(), text.to_owned());
        self.host
            .run(session_id, async move {
                Ok(agent.run_turn(&session, &text, cancel).await?)
            })
            .await
    }
}
