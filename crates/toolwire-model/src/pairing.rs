//! Pairing: every call of an assistant turn gets exactly one result, in call order.
//!
//! Results are stored in completion order and may be missing (a crash, an interrupt) or
//! stray (a result for a call that is not in the turn). The plan puts them in call order,
//! synthesizes an error for each missing one and drops strays with a diagnostic, so no
//! provider ever sees an unpaired call.

use std::borrow::Cow;

use toolwire_core::ToolResult;

use crate::conversation::{Message, ToolCall};
use crate::note::{EncodeNote, NoteCode};

/// The text of the result given to a call that has none.
pub(crate) const INTERRUPTED: &str =
    "The tool call was interrupted before completion; no result was recorded.";

/// The conversation in the order every provider needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan<'a> {
    pub system: Vec<&'a str>,
    pub turns: Vec<PlannedTurn<'a>>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PlannedTurn<'a> {
    /// The person's words, or a line saying that they made the calls after it.
    User(Cow<'a, str>),
    Assistant {
        text: &'a str,
        calls: &'a [ToolCall],
    },
    /// One result per call of the assistant turn before, in call order; then any user text
    /// that arrived while the calls ran.
    Results {
        results: Vec<PlannedResult<'a>>,
        then_user: Vec<&'a str>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PlannedResult<'a> {
    Stored {
        call: &'a ToolCall,
        result: &'a ToolResult,
    },
    Interrupted {
        call: &'a ToolCall,
    },
}

impl<'a> PlannedResult<'a> {
    pub(crate) fn call(&self) -> &'a ToolCall {
        match self {
            PlannedResult::Stored { call, .. } | PlannedResult::Interrupted { call } => call,
        }
    }
}

struct Pending<'a> {
    calls: &'a [ToolCall],
    /// Where this turn's results start in the plan's one list of found results.
    first: usize,
    then_user: Vec<&'a str>,
}

impl<'a> Pending<'a> {
    /// `found` holds this turn's results, one slot per call, from `self.first` on.
    fn finish(
        self,
        found: &[Option<&'a ToolResult>],
        diags: &mut Vec<EncodeNote>,
    ) -> PlannedTurn<'a> {
        let slots = found.get(self.first..).unwrap_or_default();
        let results = self
            .calls
            .iter()
            .zip(slots.iter().copied().chain(std::iter::repeat(None)))
            .map(|(call, result)| match result {
                Some(result) => PlannedResult::Stored { call, result },
                None => {
                    diags.push(EncodeNote::new(
                        NoteCode::SynthesizedResult,
                        Some(&call.id),
                        format!(
                            "call {} ({}) had no result; sent as interrupted",
                            call.id, call.name
                        ),
                    ));
                    PlannedResult::Interrupted { call }
                }
            })
            .collect();
        PlannedTurn::Results {
            results,
            then_user: self.then_user,
        }
    }
}

/// Orders `messages` (a conversation's, or a stored session's borrowed in place) for
/// encoding; repairs are reported in `diags`. A `whole` request that opens with a model
/// turn gets a user turn before it; a fragment of the caller's conversation does not.
///
/// A result pairs with the assistant turn that made its call, wherever it was stored
/// after it: calls a person starts back to back (two `toolwire call`s, the web app) are
/// each stored as a turn of their own, and the first one's result may land after the
/// second turn began. Only a result whose call was never made is dropped.
pub(crate) fn plan<'a>(
    messages: impl IntoIterator<Item = &'a Message>,
    whole: bool,
    diags: &mut Vec<EncodeNote>,
) -> Plan<'a> {
    let messages = messages.into_iter();
    /// A turn of the plan, or the place of a turn's results (filled in at the end).
    enum Slot<'a> {
        Turn(PlannedTurn<'a>),
        Results(usize),
    }
    let mut system = Vec::new();
    let mut slots = Vec::new();
    let mut pending: Vec<Pending<'a>> = Vec::new();
    // Every turn's result slots in one list (a turn's from its `first` on, one per call):
    // a vector per turn was an allocation, and a cache miss to free, per turn.
    let mut found: Vec<Option<&'a ToolResult>> = Vec::new();
    // Which slot of `found` each call id's result goes to (the first call that made it).
    // foldhash, seeded per process: SipHash of every id was a tenth of encoding a long
    // session, and the seed still keeps a hostile session from choosing collisions.
    let mut owner: foldhash::HashMap<&'a str, usize> = foldhash::HashMap::with_capacity_and_hasher(
        messages.size_hint().0,
        foldhash::fast::RandomState::default(),
    );
    // The ids of calls an MCP App made of its own app-only tools: neither they nor their
    // results are the model's to see (an app's polls are not the conversation).
    let mut apps_alone: foldhash::HashSet<&'a str> = foldhash::HashSet::default();
    // The turn whose calls are the latest: user text until the next assistant message
    // arrived while they ran.
    let mut current: Option<usize> = None;
    // Whether a user turn came yet: providers refuse a model turn first (Anthropic, Gemini).
    // A fragment of the caller's conversation follows the caller's own user turn.
    let mut spoken = !whole;
    for message in messages {
        match message {
            Message::System { text } => system.push(text.as_str()),
            Message::User { text } => {
                spoken = true;
                match current {
                    Some(i) => pending[i].then_user.push(text),
                    None => slots.push(Slot::Turn(PlannedTurn::User(Cow::Borrowed(text)))),
                }
            }
            Message::Assistant { text, tool_calls }
                if text.is_empty()
                    && !tool_calls.is_empty()
                    && tool_calls.iter().all(ToolCall::is_app_only) =>
            {
                // Left out whole, as if never made: it is no turn of the model's, and the
                // turn before it goes on (user text after it still joins that turn's results).
                apps_alone.extend(tool_calls.iter().map(|c| c.id.as_str()));
            }
            Message::Assistant { text, tool_calls } => {
                current = None;
                if let Some(said) = made_by_person(text, tool_calls) {
                    slots.push(Slot::Turn(PlannedTurn::User(Cow::Owned(said))));
                } else if !spoken {
                    slots.push(Slot::Turn(PlannedTurn::User(Cow::Borrowed(OPENING))));
                    diags.push(EncodeNote::new(
                        NoteCode::OpeningTurn,
                        None,
                        "the session begins with a model turn: a user turn saying so was put \
                         before it",
                    ));
                }
                spoken = true;
                slots.push(Slot::Turn(PlannedTurn::Assistant {
                    text,
                    calls: tool_calls,
                }));
                if !tool_calls.is_empty() {
                    let i = pending.len();
                    let first = found.len();
                    for (j, call) in tool_calls.iter().enumerate() {
                        owner.entry(call.id.as_str()).or_insert(first + j);
                    }
                    found.resize(first + tool_calls.len(), None);
                    pending.push(Pending {
                        calls: tool_calls,
                        first,
                        then_user: Vec::new(),
                    });
                    slots.push(Slot::Results(i));
                    current = Some(i);
                }
            }
            Message::ToolResult(result) if apps_alone.contains(result.call_id.as_str()) => {}
            Message::ToolResult(result) => {
                let slot = owner
                    .get(result.call_id.as_str())
                    .and_then(|&k| found.get_mut(k));
                match slot {
                    Some(slot @ None) => *slot = Some(result),
                    Some(Some(_)) => diags.push(EncodeNote::new(
                        NoteCode::DuplicateResult,
                        Some(&result.call_id),
                        format!("a second result for call {} was dropped", result.call_id),
                    )),
                    None => diags.push(EncodeNote::new(
                        NoteCode::OrphanResult,
                        Some(&result.call_id),
                        format!(
                            "result for call {} ({}) matches no call made before it; dropped",
                            result.call_id, result.tool_name
                        ),
                    )),
                }
            }
            // Widgets are for people only; no model view includes them.
            Message::Widget { .. } => {}
        }
    }
    let mut finished: Vec<Option<PlannedTurn<'a>>> = pending
        .into_iter()
        .map(|p| Some(p.finish(&found, diags)))
        .collect();
    let turns = slots
        .into_iter()
        .filter_map(|slot| match slot {
            Slot::Turn(turn) => Some(turn),
            Slot::Results(i) => finished.get_mut(i).and_then(Option::take),
        })
        .collect();
    Plan { system, turns }
}

/// The user turn put before a session that begins with a model turn: a session the
/// gateway recorded holds the calls another agent's model made, not what it was asked.
const OPENING: &str = "(This record begins with your calls; what you were asked before them \
                       was not recorded.)";

/// What the model is told before calls a person made (a turn of calls the model did not
/// make, stored as [`toolwire_core::ByPerson`]): that the person ran them, and where.
/// Providers also need a user turn there (Anthropic and Gemini refuse a model turn first).
fn made_by_person(text: &str, calls: &[ToolCall]) -> Option<String> {
    let first = calls.first()?.by_person.as_ref()?;
    if !text.is_empty() || calls.iter().any(|c| c.by_person.is_none()) {
        return None;
    }
    let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    let via = match first.via.as_str() {
        "cli" => "from the toolwire command line".to_owned(),
        "web" => "in the toolwire web app".to_owned(),
        "api" => "through toolwire's API".to_owned(),
        other => match other.strip_prefix("app:") {
            Some(tool) => format!("from the view of tool {tool}'s app"),
            None => format!("through {other}"),
        },
    };
    Some(format!(
        "(I ran {} myself, {via}; you did not make this call. Its result follows.)",
        names.join(", ")
    ))
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;
    use crate::conversation::Conversation;
    use serde_json::json;
    use toolwire_core::{CallRef, Value};

    fn ok(id: &str) -> Message {
        Message::tool(ToolResult::success(CallRef::new(id, "t"), Value::text(id)))
    }

    /// A person's call is stored as theirs; the model is told it did not make it, in a
    /// user turn that also lets a session open with the call (Anthropic, Gemini).
    #[test]
    fn a_persons_call_is_said_to_be_theirs() {
        let mine = ToolCall::new("a", "search", json!({})).by_person("web");
        let conv = Conversation::new(vec![Message::assistant("", vec![mine]), ok("a")]);
        let mut diags = Vec::new();
        let plan = plan(&conv.messages, true, &mut diags);
        let PlannedTurn::User(said) = &plan.turns[0] else {
            panic!("{:?}", plan.turns)
        };
        assert!(
            said.contains("I ran search myself, in the toolwire web app"),
            "{said}"
        );
        assert!(matches!(plan.turns[1], PlannedTurn::Assistant { .. }));
        assert!(matches!(plan.turns[2], PlannedTurn::Results { .. }));
        assert!(diags.is_empty());
        // The model's own calls get no such line.
        let model = Conversation::new(vec![
            Message::user("go"),
            Message::assistant("", vec![ToolCall::new("b", "search", json!({}))]),
            ok("b"),
        ]);
        assert_eq!(plan_of(&model).turns.len(), 3);
    }

    /// An MCP App's calls of its own app-only tool (a monitor's polls) are in the record
    /// but in no model view: no turn, no result, no note, and the model's own turn around
    /// them pairs as if they were not there. An app's call of a tool the model may call
    /// too is the person's, said to be theirs.
    #[test]
    fn an_apps_calls_of_its_own_tool_are_not_the_models_to_see() {
        let poll = |id: &str| {
            Message::assistant(
                "",
                vec![ToolCall::new(id, "sm__poll", json!({})).by_app("sm__view", true)],
            )
        };
        let conv = Conversation::new(vec![
            Message::user("how busy is the machine?"),
            Message::assistant("", vec![ToolCall::new("m", "sm__view", json!({}))]),
            poll("p1"),
            ok("p1"),
            ok("m"),
            poll("p2"),
            Message::user("thanks"),
            ok("p2"),
        ]);
        let mut diags = Vec::new();
        let plan = plan(&conv.messages, true, &mut diags);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(plan.turns.len(), 3, "{:?}", plan.turns);
        let PlannedTurn::Assistant { calls, .. } = &plan.turns[1] else {
            panic!("{:?}", plan.turns)
        };
        assert_eq!(calls.len(), 1);
        let PlannedTurn::Results { results, then_user } = &plan.turns[2] else {
            panic!("{:?}", plan.turns)
        };
        let ids: Vec<&str> = results.iter().map(|r| r.call().id.as_str()).collect();
        assert_eq!(ids, ["m"]);
        assert!(matches!(results[0], PlannedResult::Stored { .. }));
        assert_eq!(then_user, &vec!["thanks"]);

        // The same app calling a tool the model may call: the person's call, told.
        let shared = ToolCall::new("s", "sm__stats", json!({})).by_app("sm__view", false);
        assert!(!shared.is_app_only());
        let told = Conversation::new(vec![Message::assistant("", vec![shared]), ok("s")]);
        let PlannedTurn::User(said) = &plan_of(&told).turns[0] else {
            panic!()
        };
        assert!(
            said.contains("from the view of tool sm__view's app"),
            "{said}"
        );
    }

    /// A session that begins with the model's calls (another agent's, recorded by the
    /// gateway) gets a user turn first, saying the record begins there, and a note; a
    /// session with the user's words first gets neither.
    #[test]
    fn a_session_that_begins_with_a_model_turn_is_opened_by_a_user_turn() {
        let calls = vec![ToolCall::new("a", "search", json!({}))];
        let conv = Conversation::new(vec![Message::assistant("", calls.clone()), ok("a")]);
        let mut diags = Vec::new();
        let plan = plan(&conv.messages, true, &mut diags);
        let PlannedTurn::User(said) = &plan.turns[0] else {
            panic!("{:?}", plan.turns)
        };
        assert_eq!(said, OPENING);
        assert!(matches!(plan.turns[1], PlannedTurn::Assistant { .. }));
        assert_eq!(plan.turns.len(), 3);
        let codes: Vec<NoteCode> = diags.iter().map(|d| d.code).collect();
        assert_eq!(codes, [NoteCode::OpeningTurn]);
        // A system prompt first changes nothing; a user turn first needs no opening.
        let system = Conversation::new(vec![
            Message::system("be brief"),
            Message::assistant("", calls.clone()),
            ok("a"),
        ]);
        assert!(matches!(&plan_of(&system).turns[0], PlannedTurn::User(t) if t == OPENING));
        let asked = Conversation::new(vec![
            Message::user("go"),
            Message::assistant("", calls),
            ok("a"),
        ]);
        assert!(matches!(&plan_of(&asked).turns[0], PlannedTurn::User(t) if t == "go"));
        // A fragment (a framework's own request holds the user turn) is left as given.
        let mut quiet = Vec::new();
        let piece = super::plan(&conv.messages, false, &mut quiet);
        assert!(matches!(piece.turns[0], PlannedTurn::Assistant { .. }));
        assert!(quiet.is_empty());
    }

    fn plan_of(conv: &Conversation) -> Plan<'_> {
        plan(&conv.messages, true, &mut Vec::new())
    }

    #[test]
    fn results_come_back_in_call_order_with_repairs() {
        let calls = vec![
            ToolCall::new("a", "t", json!({})),
            ToolCall::new("b", "t", json!({})),
            ToolCall::new("c", "t", json!({})),
        ];
        let conv = Conversation::new(vec![
            Message::user("go"),
            Message::assistant("", calls),
            ok("c"),
            ok("zzz"),
            Message::user("also this"),
            ok("a"),
            ok("a"),
        ]);
        let mut diags = Vec::new();
        let plan = plan(&conv.messages, true, &mut diags);
        let PlannedTurn::Results { results, then_user } = &plan.turns[2] else {
            panic!("expected results, got {:?}", plan.turns[2]);
        };
        let ids: Vec<&str> = results.iter().map(|r| r.call().id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert!(matches!(results[1], PlannedResult::Interrupted { .. }));
        assert_eq!(then_user, &vec!["also this"]);
        let codes: Vec<NoteCode> = diags.iter().map(|d| d.code).collect();
        assert_eq!(
            codes,
            [
                NoteCode::OrphanResult,
                NoteCode::DuplicateResult,
                NoteCode::SynthesizedResult
            ]
        );
    }

    /// Two calls a person made back to back, each stored as a turn of its own, the first
    /// one's result landing after the second turn began: each result pairs with its own
    /// call, and neither call reads as interrupted.
    #[test]
    fn a_result_stored_after_the_next_turn_still_pairs_with_its_call() {
        let conv = Conversation::new(vec![
            Message::user("toolwire call t a"),
            Message::assistant("", vec![ToolCall::new("a", "t", json!({}))]),
            Message::user("toolwire call t b"),
            Message::assistant("", vec![ToolCall::new("b", "t", json!({}))]),
            ok("b"),
            ok("a"),
        ]);
        let mut diags = Vec::new();
        let plan = plan(&conv.messages, true, &mut diags);
        assert!(diags.is_empty(), "{diags:?}");
        let paired: Vec<(&str, bool)> = plan
            .turns
            .iter()
            .filter_map(|t| match t {
                PlannedTurn::Results { results, .. } => Some(results),
                _ => None,
            })
            .flatten()
            .map(|r| {
                (
                    r.call().id.as_str(),
                    matches!(r, PlannedResult::Stored { .. }),
                )
            })
            .collect();
        assert_eq!(paired, [("a", true), ("b", true)]);
        // Each result right after its own call, the second request between them.
        let PlannedTurn::Results { then_user, .. } = &plan.turns[2] else {
            panic!("{:?}", plan.turns[2]);
        };
        assert_eq!(then_user, &vec!["toolwire call t b"]);
    }
}
