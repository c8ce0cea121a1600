//! A tool that shows a widget to the person while it answers the model in text:
//! `cargo run -p toolwire-examples --bin widget`.
//!
//! The widget travels beside the result (`widgets`), is stored with it, and is drawn by
//! the terminal (its fallback text) and the web app; the model sees only the text.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolwire_agent::{AutoApprove, CallOptions, Host};
use toolwire_core::{ToolCall, Value, new_id};
use toolwire_term::{TermOptions, render};
use toolwire_tool::{ToolContext, ToolError, tool_fn};

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// Daily build times in seconds, oldest first.
    seconds: Vec<f64>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let tool = tool_fn(
        "build_times",
        "Charts recent build times and reports the trend.",
        |args: Args, ctx: ToolContext| async move {
            let (first, last) = match (args.seconds.first(), args.seconds.last()) {
                (Some(f), Some(l)) => (*f, *l),
                _ => return Err(ToolError::failed("no build times given")),
            };
            let trend = if last < first { "faster" } else { "slower" };
            let fallback = format!("build times: {first:.0} s → {last:.0} s ({trend})");
            ctx.display_widget(
                "chart.line",
                json!({"title": "Build time (s)", "points": args.seconds}),
                &fallback,
            );
            Ok::<_, ToolError>(Value::text(format!(
                "Builds got {trend}: {first:.0} s then {last:.0} s."
            )))
        },
    );
    let data = std::env::temp_dir().join(format!("toolwire-example-widget-{}", std::process::id()));
    let host = Host::builder()
        .data_dir(&data)
        .without_builtins()
        .tools([Arc::new(tool) as _])
        .build()
        .await?;
    let session = host.session(None, "widget example").await?;
    let input = json!({"seconds": [240.0, 210.0, 180.0]});
    let call = ToolCall::new(new_id("call"), "build_times", input).by_person("example");
    let running = host
        .run_call(&session.id, call, CallOptions::new(Arc::new(AutoApprove)))
        .await?;
    let result = running.finish().await?;
    println!("widgets: {}", serde_json::to_string(&result.widgets)?);
    print!("{}", render(&result, &TermOptions::plain(80)));
    std::fs::remove_dir_all(&data)?;
    Ok(())
}
