//! A tool that returns each well-known result kind, run through the host and drawn for
//! the terminal: `cargo run -p toolwire-examples --bin kinds [KIND]`.
//!
//! The tool needs only `toolwire-tool` and `toolwire-core`; the host stores every result
//! (media into the blob store) in a throwaway data directory.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolwire_agent::{AutoApprove, CallOptions, Host};
use toolwire_core::{FileEntry, ResourceLinkData, Source, ToolCall, Value, WellKnown, new_id};
use toolwire_term::{TermOptions, render};
use toolwire_tool::{ToolContext, ToolError, tool_fn};

/// A 1×1 transparent PNG.
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// One of the well-known kinds: text, diff, file_content, ...
    kind: String,
}

/// What a tool returns for each kind: a constructor per kind, nothing hand-built.
fn sample(kind: WellKnown) -> Value {
    match kind {
        WellKnown::Text => Value::text("Build finished in 4.2 s; 0 warnings."),
        WellKnown::Diff => Value::diff(
            "src/lib.rs",
            Some("fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n".into()),
            "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        ),
        WellKnown::FileContent => {
            Value::file_content("hello.py", "def hello():\n    print('hi')\n").language("python")
        }
        WellKnown::FileList => Value::file_list(
            "src",
            vec![
                FileEntry::file("lib.rs", 1200),
                FileEntry::file("main.rs", 300),
            ],
            false,
        ),
        WellKnown::Table => Value::table(
            ["city", "population"],
            [
                json!({"city": "Lyon", "population": 522_000}),
                json!({"city": "Porto", "population": 232_000}),
            ],
        ),
        WellKnown::Image => Value::image(
            Source::Base64 {
                base64: PNG_BASE64.into(),
            },
            "image/png",
        ),
        WellKnown::File => Value::file(
            Source::Base64 {
                base64: "YSxiCjEsMgo=".into(),
            },
            "text/csv",
            Some("numbers.csv".into()),
        ),
        WellKnown::ResourceLink => Value::resource_link(ResourceLinkData {
            uri: "https://example.com/report.pdf".into(),
            name: Some("report.pdf".into()),
            description: Some("The quarterly report".into()),
            size: Some(48_000),
        }),
        WellKnown::Structured => Value::structured(json!({"ok": true, "retries": 2})),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let only = std::env::args().nth(1);
    let tool = tool_fn(
        "sample",
        "Returns a sample value of the given kind.",
        |args: Args, _ctx: ToolContext| async move {
            let kind = WellKnown::from_name(&args.kind)
                .ok_or_else(|| ToolError::failed(format!("unknown kind {:?}", args.kind)))?;
            Ok::<_, ToolError>(sample(kind))
        },
    );
    let data = std::env::temp_dir().join(format!("toolwire-example-kinds-{}", std::process::id()));
    let host = Host::builder()
        .data_dir(&data)
        .without_builtins()
        .tools([Arc::new(tool) as _])
        .build()
        .await?;
    let session = host.session(None, "kinds example").await?;
    let opts = TermOptions::plain(80);
    for kind in WellKnown::ALL {
        if only.as_deref().is_some_and(|k| k != kind.name()) {
            continue;
        }
        let input = json!({"kind": kind.name()});
        let call = ToolCall::new(new_id("call"), "sample", input).by_person("example");
        let running = host
            .run_call(&session.id, call, CallOptions::new(Arc::new(AutoApprove)))
            .await?;
        let result = running.finish().await?;
        result
            .validate()
            .map_err(|v| anyhow::anyhow!("{}: {v:?}", kind.name()))?;
        println!("── {} ({})", kind.name(), result.status.as_str());
        print!("{}", render(&result, &opts));
    }
    std::fs::remove_dir_all(&data)?;
    Ok(())
}
