//! An agent embedded through the host, in under 30 lines: built-in tools on the current
//! directory, any provider whose key is set (or `OPENAI_BASE_URL` for a local server),
//! events printed as the turn runs. `cargo run -p toolwire-examples --bin host_agent -- "What is in README.md?"`

use std::sync::Arc;

use toolwire_agent::{AutoApprove, Host, ProviderSettings};
use toolwire_core::EventKind;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "List the files here.".into());
    let host = Host::builder().workspace(".").build().await?;
    let agent = host.agent(&ProviderSettings::default(), Arc::new(AutoApprove))?;
    let session = agent.start_session(Default::default()).await?;
    let mut turn = agent.turn(&session.id, &question).await?;
    while let Some(event) = turn.next().await {
        match event.kind {
            EventKind::AssistantDelta { text } => print!("{text}"),
            EventKind::ToolCallStarted { tool_name, .. } => println!("\n→ {tool_name}"),
            _ => {}
        }
    }
    let outcome = turn.finish().await?;
    println!(
        "\n[{:?} after {} model requests]",
        outcome.stop, outcome.iterations
    );
    Ok(())
}
