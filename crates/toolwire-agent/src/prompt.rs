//! The system prompt: the host's instructions, plus guidance on when to delegate to a
//! subagent, only when the `task` tool is offered.

use super::task::TASK_TOOL;

/// Instructions used when the host gives none.
pub const DEFAULT_INSTRUCTIONS: &str = "You are a helpful assistant working in the user's \
workspace with tools. Use the tools to find out what you need instead of guessing, and \
answer concisely when you are done.";

/// Instructions of a subagent: it works alone and reports back once.
pub const SUBAGENT_INSTRUCTIONS: &str = "You are a subagent started by another agent for one \
task. You have a fresh context and a restricted set of tools. Work on the task with the \
tools, then reply with a concise, self-contained report of what you found or did: the \
agent that started you sees only your final message.";

/// When to use the `task` tool and when a direct tool is better, in this tool set's names.
pub const TASK_TOOL_GUIDANCE: &str = r#"
## Task Tool Usage (Subagents)

The task tool launches a subagent with its own fresh, isolated context and the same tools
except task. Use it strategically:

### When to Use the Task Tool:
- **Open-ended exploration**: "How does authentication work?" → task (subagent_type: explore)
- **Multiple rounds of searching**: finding patterns across many files → task (explore)
- **Complex multi-step operations**: tasks requiring both exploration and modification → task (general_purpose)
- **Verbose output expected**: running tests, fetching docs → isolates output from the main context

### When NOT to Use the Task Tool:
- Reading a specific file path → use read_file directly
- Searching for a specific class like "class Foo" → use run (grep) or list_dir directly
- Searching within 2-3 known files → use read_file directly
- Running a simple command → use run directly

### Subagent Types:
| Type | Use When |
|------|----------|
| explore | Codebase search, finding files, understanding structure |
| plan | Designing an implementation approach |
| bash | Git operations, command execution |
| general_purpose | Complex tasks needing exploration + action |

### Key Principle:
Use direct tools for **targeted, single operations**.
Use task for **open-ended exploration or multi-step workflows**.
The subagent returns only its final report, not its transcript.
"#;

/// The system prompt for a tool set: `instructions`, then the task guidance when `task`
/// is among `tool_names`.
pub fn system_prompt<'a>(
    instructions: &str,
    tool_names: impl IntoIterator<Item = &'a str>,
) -> String {
    let mut prompt = instructions.trim_end().to_owned();
    if tool_names.into_iter().any(|n| n == TASK_TOOL) {
        prompt.push_str("\n\n");
        prompt.push_str(TASK_TOOL_GUIDANCE.trim());
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guidance_only_with_the_task_tool() {
        let with = system_prompt("Be brief.", ["read_file", "task"]);
        assert!(with.starts_with("Be brief.\n\n## Task Tool Usage (Subagents)"));
        assert!(with.contains("When NOT to Use the Task Tool"));
        let without = system_prompt("Be brief.", ["read_file"]);
        assert_eq!(without, "Be brief.");
    }
}
