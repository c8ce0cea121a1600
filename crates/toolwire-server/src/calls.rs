//! The calls this server runs for people (`POST /api/sessions/{id}/calls`), by call id,
//! with the token that stops each: what `POST .../calls/{call}/cancel` reaches.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use toolwire_tool::CancellationToken;

/// Most calls tracked at once; past it the oldest cannot be cancelled by id any more
/// (they still finish), so memory stays bounded whatever a client posts.
pub(crate) const MAX_TRACKED: usize = 10_000;

/// A call as this server knows it: (session, call id). Call ids repeat across sessions.
type CallKey = (String, String);

/// Running calls and their stop tokens.
#[derive(Debug, Default, Clone)]
pub(crate) struct RunningCalls {
    calls: Arc<Mutex<HashMap<CallKey, CancellationToken>>>,
}

/// Forgets its call when dropped, however the call ends.
#[derive(Debug)]
pub(crate) struct Tracked {
    calls: RunningCalls,
    key: CallKey,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.calls.calls.lock() {
            calls.remove(&self.key);
        }
    }
}

impl RunningCalls {
    /// Tracks call `call_id` of `session_id`: its stop token, and the guard that forgets it.
    pub(crate) fn track(&self, session_id: &str, call_id: &str) -> (CancellationToken, Tracked) {
        let token = CancellationToken::new();
        let key = (session_id.to_owned(), call_id.to_owned());
        if let Ok(mut calls) = self.calls.lock()
            && calls.len() < MAX_TRACKED
        {
            calls.insert(key.clone(), token.clone());
        }
        let tracked = Tracked {
            calls: self.clone(),
            key,
        };
        (token, tracked)
    }

    /// Stops call `call_id` of `session_id`; false when no such call runs here.
    pub(crate) fn cancel(&self, session_id: &str, call_id: &str) -> bool {
        let key = (session_id.to_owned(), call_id.to_owned());
        let token = self
            .calls
            .lock()
            .ok()
            .and_then(|calls| calls.get(&key).cloned());
        token.map(|t| t.cancel()).is_some()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Two sessions running calls under one id each stop their own; one ending does not
    /// forget the other (keyed by call id alone, the second replaced the first, and the
    /// first's end then forgot the second).
    #[test]
    fn a_call_id_is_tracked_per_session() {
        let calls = RunningCalls::default();
        let (a, tracked_a) = calls.track("s_a", "gemini_call_0");
        let (b, _tracked_b) = calls.track("s_b", "gemini_call_0");
        assert!(calls.cancel("s_a", "gemini_call_0"));
        assert!(a.is_cancelled());
        assert!(!b.is_cancelled());
        drop(tracked_a);
        assert!(calls.cancel("s_b", "gemini_call_0"));
        assert!(b.is_cancelled());
        assert!(!calls.cancel("s_c", "gemini_call_0"));
    }
}
