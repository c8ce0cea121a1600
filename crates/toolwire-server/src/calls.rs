//! The calls this server runs for people (`POST /api/sessions/{id}/calls`), by call id,
//! with the token that stops each: what `POST .../calls/{call}/cancel` reaches.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use toolwire_agent::CancellationToken;

/// Most calls tracked at once; past it the oldest cannot be cancelled by id any more
/// (they still finish), so memory stays bounded whatever a client posts.
pub const MAX_TRACKED: usize = 10_000;

/// Running calls and their stop tokens.
#[derive(Debug, Default, Clone)]
pub struct RunningCalls {
    calls: Arc<Mutex<HashMap<String, (String, CancellationToken)>>>,
}

/// Forgets its call when dropped, however the call ends.
#[derive(Debug)]
pub struct Tracked {
    calls: RunningCalls,
    call_id: String,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.calls.calls.lock() {
            calls.remove(&self.call_id);
        }
    }
}

impl RunningCalls {
    /// Tracks call `call_id` of `session_id`: its stop token, and the guard that forgets it.
    pub fn track(&self, session_id: &str, call_id: &str) -> (CancellationToken, Tracked) {
        let token = CancellationToken::new();
        if let Ok(mut calls) = self.calls.lock()
            && calls.len() < MAX_TRACKED
        {
            calls.insert(call_id.to_owned(), (session_id.to_owned(), token.clone()));
        }
        let tracked = Tracked {
            calls: self.clone(),
            call_id: call_id.to_owned(),
        };
        (token, tracked)
    }

    /// Stops call `call_id` of `session_id`; false when no such call runs here.
    pub fn cancel(&self, session_id: &str, call_id: &str) -> bool {
        let token = self.calls.lock().ok().and_then(|calls| {
            calls
                .get(call_id)
                .filter(|(session, _)| session == session_id)
                .map(|(_, token)| token.clone())
        });
        token.map(|t| t.cancel()).is_some()
    }
}
