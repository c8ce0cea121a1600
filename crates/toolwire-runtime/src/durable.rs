//! The runtime's event log and suspension store on top of `toolwire-store`'s history
//! database: events resume across restarts, and a suspended call can be resolved by
//! another process.

use std::sync::Arc;

use futures::future::BoxFuture;
use toolwire_store::HistoryStore;

use crate::events::{Event, EventLog, EventLogError};
use crate::suspend::{PendingCall, SuspensionStore, SuspensionStoreError};

/// Events in the history database's `events` table.
#[derive(Debug, Clone)]
pub struct StoreEventLog(pub Arc<dyn HistoryStore>);

fn log_err(e: impl std::fmt::Display) -> EventLogError {
    EventLogError::Backend(e.to_string())
}

impl EventLog for StoreEventLog {
    fn append(&self, event: &Event) -> BoxFuture<'_, Result<(), EventLogError>> {
        let body = serde_json::to_string(event);
        let (session, seq) = (event.session_id.clone(), event.seq as i64);
        Box::pin(async move {
            self.0
                .append_event(&session, seq, body.map_err(log_err)?)
                .await
                .map_err(log_err)
        })
    }

    fn since(&self, session: &str, after: u64) -> BoxFuture<'_, Result<Vec<Event>, EventLogError>> {
        let session = session.to_owned();
        Box::pin(async move {
            let rows = self
                .0
                .events_since(&session, after as i64)
                .await
                .map_err(log_err)?;
            rows.into_iter()
                .map(|(seq, body)| {
                    serde_json::from_str(&body).map_err(|e| {
                        log_err(format!("event {seq} of {session} is unreadable: {e}"))
                    })
                })
                .collect()
        })
    }

    fn last_seq(&self, session: &str) -> BoxFuture<'_, Result<u64, EventLogError>> {
        let session = session.to_owned();
        Box::pin(async move {
            Ok(self
                .0
                .last_event_seq(&session)
                .await
                .map_err(log_err)?
                .max(0) as u64)
        })
    }
}

/// Pending calls in the history database's `suspensions` table.
#[derive(Debug, Clone)]
pub struct StoreSuspensions(pub Arc<dyn HistoryStore>);

fn susp_err(e: impl std::fmt::Display) -> SuspensionStoreError {
    SuspensionStoreError::Backend(e.to_string())
}

impl SuspensionStore for StoreSuspensions {
    fn put(&self, pending: &PendingCall) -> BoxFuture<'_, Result<(), SuspensionStoreError>> {
        let body = serde_json::to_string(pending);
        let (id, session) = (pending.suspension.id.clone(), pending.session_id.clone());
        Box::pin(async move {
            self.0
                .put_suspension(&id, &session, body.map_err(susp_err)?)
                .await
                .map_err(susp_err)
        })
    }

    fn take(
        &self,
        suspension_id: &str,
    ) -> BoxFuture<'_, Result<Option<PendingCall>, SuspensionStoreError>> {
        let id = suspension_id.to_owned();
        Box::pin(async move {
            match self.0.take_suspension(&id).await.map_err(susp_err)? {
                None => Ok(None),
                Some(body) => serde_json::from_str(&body)
                    .map(Some)
                    .map_err(|e| susp_err(format!("pending call {id} is unreadable: {e}"))),
            }
        })
    }

    fn list(
        &self,
        session_id: &str,
    ) -> BoxFuture<'_, Result<Vec<PendingCall>, SuspensionStoreError>> {
        let session = session_id.to_owned();
        Box::pin(async move {
            let bodies = self.0.suspensions(&session).await.map_err(susp_err)?;
            bodies
                .iter()
                .map(|b| serde_json::from_str(b).map_err(susp_err))
                .collect()
        })
    }
}
