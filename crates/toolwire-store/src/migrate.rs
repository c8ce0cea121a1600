//! `migrate`: copies one store into another (SQLite + files → Postgres + S3, or any pair),
//! checking every copied message by its canonical bytes and every blob by its hash.
//!
//! Resumable: what the target already holds is compared, not copied again, so a second
//! run after an interruption (or after the source grew) copies only the rest. Sessions go
//! parents first; a session's messages are appended in order, in atomic chunks, after
//! the blobs they reference; events keep their numbers.

use std::collections::{BTreeSet, HashMap, HashSet};

use toolwire_core::{Event, EventKind, StoredAt};

use crate::error::{Result, StoreError};
use crate::history::{NewSession, Page, Session};
use crate::ids::BlobKey;
use crate::refs::message_blob_refs;
use crate::stores::Stores;

/// Messages appended per transaction on the target.
const CHUNK: usize = 500;
/// Bytes read per range request when a blob is copied: a video is never held whole.
const BLOB_PIECE: u64 = 8 << 20;
const PAGE: u32 = 500;

/// What a run copied; what was already there is not counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MigrateReport {
    /// Sessions in the source.
    pub sessions: usize,
    /// Sessions the target did not have.
    pub sessions_created: usize,
    /// Messages the target did not have.
    pub messages_copied: usize,
    /// Messages the target had already, checked byte for byte against the source.
    pub messages_verified: usize,
    /// Events the target did not have.
    pub events_copied: usize,
    /// Pending calls the target did not have.
    pub suspensions_copied: usize,
    /// Calls that were being answered when the source stopped (`resolving`): copying one
    /// as pending could run it twice, so they are left out and counted here.
    pub suspensions_skipped: usize,
    /// Blobs the target did not have.
    pub blobs_copied: usize,
    /// Bytes of those blobs.
    pub blob_bytes_copied: u64,
}

/// Copies everything in `from` that `to` lacks. Fails, copying nothing more, when the
/// target disagrees with the source (a message with other bytes, an event with another
/// number, a blob whose bytes do not hash to its key).
pub async fn migrate(from: &Stores, to: &Stores) -> Result<MigrateReport> {
    let mut report = MigrateReport::default();
    let mut copied_blobs = HashSet::new();
    for session in parents_first(all_sessions(from).await?) {
        report.sessions += 1;
        copy_session(from, to, &session, &mut copied_blobs, &mut report).await?;
    }
    Ok(report)
}

async fn all_sessions(stores: &Stores) -> Result<Vec<Session>> {
    let mut out = Vec::new();
    loop {
        let page = Page {
            offset: u32::try_from(out.len()).unwrap_or(u32::MAX),
            limit: PAGE,
        };
        let got = stores.history.list_sessions(page).await?;
        let done = got.len() < PAGE as usize;
        out.extend(got);
        if done {
            return Ok(out);
        }
    }
}

/// Oldest first, and every parent before its children (a subagent's session refers to
/// its parent's).
fn parents_first(mut sessions: Vec<Session>) -> Vec<Session> {
    sessions.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
    let known: HashSet<String> = sessions.iter().map(|s| s.id.clone()).collect();
    let mut placed: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(sessions.len());
    while !sessions.is_empty() {
        let before = sessions.len();
        let (ready, rest): (Vec<_>, Vec<_>) = sessions.into_iter().partition(|s| {
            s.parent_id
                .as_ref()
                .is_none_or(|p| placed.contains(p) || !known.contains(p))
        });
        for s in ready {
            placed.insert(s.id.clone());
            out.push(s);
        }
        sessions = rest;
        if sessions.len() == before {
            // A cycle cannot be stored (a parent must exist first); keep the rest in order.
            out.append(&mut sessions);
        }
    }
    out
}

fn conflict(session: &str, message: String) -> StoreError {
    StoreError::MigrateConflict {
        session_id: session.to_owned(),
        message,
    }
}

async fn copy_session(
    from: &Stores,
    to: &Stores,
    session: &Session,
    copied_blobs: &mut HashSet<BlobKey>,
    report: &mut MigrateReport,
) -> Result<()> {
    let id = &session.id;
    if to.history.session(id).await?.is_none() {
        to.history
            .create_session(NewSession {
                id: Some(id.clone()),
                parent_id: session.parent_id.clone(),
                title: session.title.clone(),
            })
            .await?;
        report.sessions_created += 1;
    }
    let source = from.history.load(id).await?;
    let target = to.history.load(id).await?;
    if target.len() > source.len() {
        return Err(conflict(
            id,
            format!(
                "the target holds {} messages, the source only {}",
                target.len(),
                source.len()
            ),
        ));
    }
    for (s, t) in source.iter().zip(&target) {
        if serde_json::to_string(&s.content)? != serde_json::to_string(&t.content)? {
            return Err(conflict(
                id,
                format!("message {} differs between source and target", s.seq),
            ));
        }
    }
    report.messages_verified += target.len();
    // A result's event read back names its message's row in the source; logged in the
    // target it names the target's row of the same message (the same seq), so the target
    // holds each result once too.
    let seq_of: HashMap<i64, i64> = source.iter().map(|m| (m.id, m.seq)).collect();
    let mut row_at: HashMap<i64, i64> = target.iter().map(|m| (m.seq, m.id)).collect();
    for chunk in source[target.len()..].chunks(CHUNK) {
        let mut keys = BTreeSet::new();
        for m in chunk {
            keys.extend(message_blob_refs(&m.content));
        }
        for key in keys {
            let key = BlobKey::parse(&key)?;
            if copied_blobs.contains(&key) {
                continue;
            }
            if let Some(bytes) = copy_blob(from, to, &key).await? {
                report.blobs_copied += 1;
                report.blob_bytes_copied += bytes;
            }
            copied_blobs.insert(key);
        }
        let contents = chunk.iter().map(|m| m.content.clone()).collect();
        let stored = to.history.append_many(id, contents).await?;
        for (s, t) in chunk.iter().zip(&stored) {
            if s.seq != t.seq {
                return Err(conflict(
                    id,
                    format!("message {} was stored as {}", s.seq, t.seq),
                ));
            }
            row_at.insert(t.seq, t.id);
        }
        report.messages_copied += chunk.len();
    }
    let last = to.events.last_event_seq(id).await?;
    for event in from.events.events_since(id, last).await? {
        // Taken apart, not cloned: a result's event holds the whole result.
        let Event {
            seq, at, mut kind, ..
        } = event;
        if let EventKind::ToolResult { stored, .. } = &mut kind {
            let there = stored
                .0
                .and_then(|row| seq_of.get(&row))
                .and_then(|seq| row_at.get(seq));
            *stored = StoredAt(there.copied());
        }
        let copied = to.events.append_event(id, at, kind).await?;
        if copied.seq != seq {
            return Err(conflict(
                id,
                format!("event {seq} was numbered {} on the target", copied.seq),
            ));
        }
        report.events_copied += 1;
    }
    let waiting: HashSet<String> = to
        .suspensions
        .suspensions(id)
        .await?
        .into_iter()
        .map(|p| p.suspension.id)
        .collect();
    for pending in from.suspensions.suspensions(id).await? {
        if pending.resolving {
            report.suspensions_skipped += 1;
        } else if !waiting.contains(&pending.suspension.id) {
            to.suspensions.put_suspension(&pending).await?;
            report.suspensions_copied += 1;
        }
    }
    Ok(())
}

/// Streams one blob across unless the target has it; the target computes the key from
/// the bytes it received, which must be the source's key. Returns the bytes copied.
async fn copy_blob(from: &Stores, to: &Stores, key: &BlobKey) -> Result<Option<u64>> {
    if to.blobs.size(key).await?.is_some() {
        return Ok(None);
    }
    let size = from
        .blobs
        .size(key)
        .await?
        .ok_or_else(|| StoreError::BlobNotFound {
            key: key.to_string(),
        })?;
    let mut writer = to.blobs.writer(Some(size)).await?;
    let mut at = 0;
    while at < size {
        let end = (at + BLOB_PIECE).min(size);
        let piece = match from.blobs.get_range(key, at..end).await {
            Ok(piece) => piece,
            Err(e) => {
                let _ = writer.abort().await;
                return Err(e);
            }
        };
        if let Err(e) = writer.write(&piece).await {
            let _ = writer.abort().await;
            return Err(e);
        }
        at = end;
    }
    let stored = writer.finish().await?;
    if &stored.key != key {
        // The target now holds the bytes under their true key, referenced by nothing;
        // gc removes them. The message pointing at `key` is not copied.
        return Err(StoreError::BlobHashMismatch {
            key: key.to_string(),
            actual: stored.key.to_string(),
        });
    }
    Ok(Some(size))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(id: &str, parent: Option<&str>, at: i64) -> Session {
        Session {
            id: id.into(),
            parent_id: parent.map(str::to_owned),
            title: None,
            created_at_ms: at,
            updated_at_ms: at,
            message_count: 0,
            call_count: 0,
            pending_count: 0,
            error_count: 0,
        }
    }

    #[test]
    fn parents_come_before_children_even_when_younger() {
        let ordered = parents_first(vec![
            s("child", Some("parent"), 1),
            s("parent", None, 2),
            s("orphan", Some("gone"), 0),
        ]);
        let ids: Vec<&str> = ordered.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["orphan", "parent", "child"]);
    }
}
