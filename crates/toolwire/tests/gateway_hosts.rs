//! Real MCP hosts driven headless: Claude Code (`claude -p`), Gemini CLI (`gemini -p`)
//! and Codex (`codex exec`), each against a scripted model on a loopback provider API in
//! its own wire format (tests/mcp-hosts/provider.py), with server-everything and a FastMCP
//! server (tests/mcp/hosts_server.py) configured directly and then through `toolwire
//! gateway` as `toolwire mcp install` writes it. The model calls one tool a turn; what the
//! host sends back to it is what reached the model. The README's matrix (host x path x
//! result) must say exactly what these runs saw: each test checks its rows there.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::mcp::mcp_host;

/// A host's run may take this long (each takes a few seconds here).
const HOST_TIMEOUT: Duration = Duration::from_secs(150);

/// The last line of the FastMCP server's 300 KB `build_log`.
const LAST_LINE: &str = "BUILD FAILED: 1 test failed: tests::the_last_line_matters";

fn hosts_dir() -> PathBuf {
    support::peers::peers_dir().join("../mcp-hosts")
}

/// The two servers behind every host, as `{"mcpServers": …}` entries: server-everything
/// (`ev`) and the FastMCP fixture (`py`); `None` when tests/mcp is not installed.
fn servers() -> Option<Value> {
    let everything = support::peers::everything()?;
    let python = support::peers::peer("venv/bin/python")?;
    let fixture = support::peers::peers_dir().join("hosts_server.py");
    Some(json!({
        "ev": {"command": "node", "args": [everything, "stdio"]},
        "py": {"command": python, "args": [fixture]},
    }))
}

/// The tiny PNG server-everything's `get-tiny-image` returns, as its source holds it.
fn tiny_image() -> String {
    let source = support::peers::peers_dir()
        .join("node_modules/@modelcontextprotocol/server-everything/dist/tools/get-tiny-image.js");
    let text = std::fs::read_to_string(source).unwrap();
    let start = text.find("MCP_TINY_IMAGE = \"").unwrap() + "MCP_TINY_IMAGE = \"".len();
    let len = text[start..].find('"').unwrap();
    text[start..start + len].to_owned()
}

/// The scripted provider, stopped (by its id) when dropped.
struct Provider {
    child: std::process::Child,
    port: u16,
    record: PathBuf,
}

impl Provider {
    fn start(dir: &Path) -> Provider {
        let port_file = dir.join("provider.port");
        let record = dir.join("turns.jsonl");
        // It stops by itself too when its stdin (a pipe held here) closes.
        let child = Command::new("python3")
            .arg(hosts_dir().join("provider.py"))
            .arg(&port_file)
            .arg(&record)
            .arg(dir.join("requests.jsonl"))
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while !port_file.exists() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the scripted provider did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let port = std::fs::read_to_string(&port_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        Provider {
            child,
            port,
            record,
        }
    }

    /// The turns recorded: the call whose result the host forwarded, and what it sent.
    fn turns(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.record).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How the host reaches the servers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Route {
    Direct,
    Gateway,
}

/// One host as the tests run it.
struct Host {
    /// Its name in `toolwire mcp install --host`.
    install: &'static str,
    /// Its name in the README's matrix.
    title: &'static str,
    bin: &'static str,
}

const CLAUDE: Host = Host {
    install: "claude-code",
    title: "Claude Code 2.1.328",
    bin: "claude",
};
const GEMINI: Host = Host {
    install: "gemini",
    title: "Gemini CLI 0.61.0",
    bin: "gemini",
};
const CODEX: Host = Host {
    install: "codex",
    title: "Codex 0.171.0",
    bin: "codex",
};

/// Where `host` reads its MCP servers (and, for Codex, its provider), under `home`.
fn config_file(host: &Host, home: &Path) -> PathBuf {
    match host.install {
        "claude-code" => home.join(".claude.json"),
        "gemini" => home.join(".gemini/settings.json"),
        _ => home.join(".codex/config.toml"),
    }
}

/// Writes `host`'s config in `home`: the provider at `port`, and either the two servers
/// (direct) or what `toolwire mcp install` writes for them (the gateway).
fn configure(host: &Host, home: &Path, port: u16, path: Route, servers: &Value) {
    let file = config_file(host, home);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let direct = path == Route::Direct;
    match host.install {
        "claude-code" => {
            let mut config = json!({});
            if direct {
                config["mcpServers"] = servers.clone();
            }
            std::fs::write(&file, config.to_string()).unwrap();
        }
        "gemini" => {
            let mut config = json!({
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                // Nothing leaves the machine: the test is offline.
                "privacy": {"usageStatisticsEnabled": false},
            });
            if direct {
                config["mcpServers"] = servers.clone();
            }
            std::fs::write(&file, config.to_string()).unwrap();
            // Gemini CLI starts no server of an untrusted folder.
            let trusted = json!({home.to_str().unwrap(): "TRUST_FOLDER"});
            std::fs::write(
                home.join(".gemini/trustedFolders.json"),
                trusted.to_string(),
            )
            .unwrap();
        }
        _ => {
            // A model name Codex does not know: a known one would make it hide the MCP
            // tools behind its tool search, which a scripted model does not use.
            let mut toml = format!(
                "model = \"scripted\"\nmodel_provider = \"scripted\"\n\n\
                 [model_providers.scripted]\nname = \"scripted\"\n\
                 base_url = \"http://127.0.0.1:{port}/v1\"\nwire_api = \"responses\"\n\
                 env_key = \"OPENAI_API_KEY\"\n"
            );
            if direct {
                // `required`: Codex waits for the server at start-up (else its first
                // request may go out before the server's tools are listed), as long as the
                // gateway's installed entry lets it (a loaded CI machine starts slowly).
                for (name, server) in servers.as_object().unwrap() {
                    toml += &format!(
                        "\n[mcp_servers.{name}]\ncommand = {}\nargs = {}\nrequired = true\nstartup_timeout_sec = 60\n",
                        server["command"], server["args"]
                    );
                }
            }
            std::fs::write(&file, toml).unwrap();
        }
    }
    if direct {
        return;
    }
    let servers_file = home.join("servers.json");
    std::fs::write(&servers_file, json!({"mcpServers": servers}).to_string()).unwrap();
    let out = support::mcp::toolwire(
        &home.join("data"),
        &[
            "mcp",
            "install",
            "--host",
            host.install,
            "--config",
            file.to_str().unwrap(),
            "--mcp-config",
            servers_file.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", support::mcp::stderr_of(&out));
}

/// Runs `host` headless in a throwaway HOME, with its servers reached by `path`, against
/// the scripted model; the turns it recorded.
fn run(host: &Host, bin: &Path, path: Route, servers: &Value) -> Vec<Value> {
    // One host at a time: each starts a host, the gateway and two servers, and a host
    // whose servers start slowly on a loaded machine may begin before their tools are
    // listed (the matrix is about results, not start-up races).
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let provider = Provider::start(home);
    configure(host, home, provider.port, path, servers);
    let base = format!("http://127.0.0.1:{}", provider.port);
    let mut command = Command::new(bin);
    command
        .current_dir(home)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("GOOGLE_API_KEY")
        .env_remove("GOOGLE_CLOUD_PROJECT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match host.install {
        "claude-code" => {
            command
                .args(["-p", "run the script", "--allowedTools"])
                .args(["mcp__ev", "mcp__py", "mcp__toolwire"])
                .env("ANTHROPIC_BASE_URL", &base)
                .env("ANTHROPIC_API_KEY", "dummy")
                // Every MCP tool offered at once: with tool search the model would have to
                // look them up first.
                .env("ENABLE_TOOL_SEARCH", "false")
                .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
        }
        "gemini" => {
            command
                .args(["-p", "run the script", "--yolo"])
                .env("GOOGLE_GEMINI_BASE_URL", &base)
                .env("GEMINI_API_KEY", "dummy");
        }
        _ => {
            command
                .args(["exec", "--skip-git-repo-check"])
                .args([
                    "--dangerously-bypass-approvals-and-sandbox",
                    "run the script",
                ])
                .env("CODEX_HOME", home.join(".codex"))
                .env("OPENAI_API_KEY", "dummy")
                .env_remove("OPENAI_BASE_URL");
        }
    }
    let mut child = command.spawn().unwrap();
    // Drained while it runs: a host that fills a pipe would stall.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let said_out = std::thread::spawn(move || {
        let mut s = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut s).map(|_| s)
    });
    let said_err = std::thread::spawn(move || {
        let mut s = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut s).map(|_| s)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > HOST_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let said = String::from_utf8_lossy(&said_out.join().unwrap().unwrap_or_default()).into_owned()
        + &String::from_utf8_lossy(&said_err.join().unwrap().unwrap_or_default());
    let turns = provider.turns();
    // For looking at what a host sent when reading the matrix's cells.
    if let Some(dir) = std::env::var_os("TOOLWIRE_HOSTS_KEEP") {
        let name = format!("{}-{path:?}.jsonl", host.install);
        std::fs::copy(&provider.record, Path::new(&dir).join(name)).unwrap();
    }
    let requests = std::fs::read_to_string(home.join("requests.jsonl")).unwrap_or_default();
    assert!(
        status.is_some_and(|s| s.success()) && turns.len() >= 5,
        "{} ({path:?}) ended with {status:?} after {} turns; it said:\n{}\nrequests: {}",
        host.title,
        turns.len(),
        tail(&said, 4000),
        tail(&requests, 4000),
    );
    turns
}

fn tail(text: &str, n: usize) -> &str {
    let mut start = text.len().saturating_sub(n);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Every string in `value`, depth first.
fn strings(value: &Value) -> Vec<&str> {
    match value {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        Value::Object(map) => map.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

/// What the host forwarded after the model called `tool` (the first such turn).
fn forwarded<'a>(turns: &'a [Value], tool: &str) -> &'a Value {
    &turns
        .iter()
        .find(|t| t["after"] == tool)
        .unwrap_or_else(|| panic!("no turn after {tool}: {turns:?}"))["forwarded"]
}

/// What reached the model of one host by one path, as the README's matrix says it.
#[derive(Debug)]
struct Seen {
    image: &'static str,
    structured: &'static str,
    links: &'static str,
    error: &'static str,
    last_line: &'static str,
    cut_by: &'static str,
    read_back: &'static str,
    /// The model had to call the host's WaitForMcpServers before the tools were there.
    waited: bool,
}

impl Seen {
    fn row(&self, host: &Host, path: Route) -> String {
        let path = match path {
            Route::Direct => "direct",
            Route::Gateway => "through `toolwire gateway`",
        };
        format!(
            "| {} | {path} | {} | {} | {} | {} | {} | {} | {} |",
            host.title,
            self.image,
            self.structured,
            self.links,
            self.error,
            self.last_line,
            self.cut_by,
            self.read_back
        )
    }
}

fn yes(b: bool) -> &'static str {
    if b { "✔" } else { "✘" }
}

/// Reads the turns as the matrix's cells.
fn seen(turns: &[Value]) -> Seen {
    let image = tiny_image();
    let got = forwarded(turns, "get-tiny-image");
    let image_seen = strings(got)
        .iter()
        .any(|s| *s == image || *s == format!("data:image/png;base64,{image}"));

    let got = strings(forwarded(turns, "forecast_summary")).join("\n");
    let text = got.contains("take a hat");
    let value = got.contains("humidity_pct") && got.contains("40");
    let structured = match (text, value) {
        (true, true) => "✔ text and value",
        (false, true) => "✘ value only",
        (true, false) => "✘ text only",
        (false, false) => "✘ neither",
    };

    let got = strings(forwarded(turns, "get-resource-links")).join("\n");
    let links = got.contains("demo://resource/dynamic/blob/1")
        && got.contains("demo://resource/dynamic/text/2");

    let got = forwarded(turns, "fail_quota");
    let message = strings(got)
        .join("\n")
        .contains("disk quota exceeded on /var/data: 0 bytes free");
    // The wire's own error flag: Anthropic's `is_error`, Gemini's `response.error`; the
    // Responses API has none, so there only the text can say it.
    let text = got.to_string();
    let flagged = text.contains("\"is_error\":true") || text.contains("\"response\":{\"error\"");
    // Without a flag, a first line of the tool's output that says the call failed.
    let said = strings(got)
        .iter()
        .any(|s| s.lines().next().is_some_and(|l| l.contains("failed")));
    let error = match (message, flagged, said) {
        (false, ..) => "✘",
        (true, true, _) => "✔ flagged",
        (true, false, true) => "✔ a first line says it failed",
        (true, false, false) => "✔ the server's words only",
    };

    let first = strings(forwarded(turns, "build_log")).join("\n");
    let last_line = first.contains(LAST_LINE);
    // Who cut it, by their markers: Claude Code and Gemini CLI save a large output to a
    // file and say "Output too large", Codex keeps a head and a tail around "tokens
    // truncated"; toolwire's say "by toolwire".
    let by_host = ["Output too large", "tokens truncated…"]
        .iter()
        .any(|m| first.contains(m));
    let by_toolwire =
        first.contains("omitted by toolwire") || first.contains("shortened by toolwire");
    let cut_by = match (by_toolwire, by_host) {
        (true, true) => "toolwire, then the host again",
        (true, false) => "toolwire",
        (false, true) => "the host",
        (false, false) => "nobody",
    };
    // The model followed the first `read_result` the marker offers: its page must be a
    // page of the log (the whole value from its start, or the lines left out).
    let read_back = turns.iter().find(|t| t["after"] == "read_result").map(|t| {
        let page = strings(&t["forwarded"]).join("\n");
        page.matches(" compiling crate_").count() >= 100
    });
    Seen {
        image: yes(image_seen),
        structured,
        links: yes(links),
        error,
        last_line: yes(last_line),
        cut_by,
        read_back: match read_back {
            Some(b) => yes(b),
            None => "—",
        },
        waited: turns.iter().any(|t| t["after"] == "WaitForMcpServers"),
    }
}

/// Runs `host` both ways; checks what the gateway must always carry, and that the
/// README's matrix says what was seen.
fn host_matrix(host: &Host) {
    let (Some(bin), Some(servers)) = (mcp_host(host.bin), servers()) else {
        return;
    };
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    // The matrix names the version it was seen with: the pinned one.
    let version = Command::new(&bin).arg("--version").output().unwrap();
    let pinned = host.title.rsplit(' ').next().unwrap();
    assert!(
        String::from_utf8_lossy(&version.stdout).contains(pinned),
        "{} --version: {}; the README's matrix is of {pinned}",
        host.bin,
        String::from_utf8_lossy(&version.stdout)
    );
    let mut wrong = Vec::new();
    for path in [Route::Direct, Route::Gateway] {
        let turns = run(host, &bin, path, &servers);
        let seen = seen(&turns);
        // Whether the model had to wait is said, not asserted: under load (CI runs the
        // three hosts at once beside other tests) Claude Code's first request may go out
        // before a slow server is up, by itself or behind the gateway.
        eprintln!("{host_title} {path:?}: {seen:?}", host_title = host.title);
        if seen.waited {
            eprintln!("NOTE: the model called WaitForMcpServers before the tools were there");
        }
        if path == Route::Gateway {
            assert_eq!(seen.image, "✔", "{}: the image", host.title);
            assert_eq!(seen.links, "✔", "{}: the links", host.title);
            assert_eq!(seen.last_line, "✔", "{}: the last line", host.title);
            assert_eq!(
                seen.cut_by, "toolwire",
                "{}: the host cut again",
                host.title
            );
            let first = strings(forwarded(&turns, "build_log")).join("\n");
            let marker = first
                .find("read_result")
                .map(|i| &first[i.saturating_sub(300)..]);
            assert_eq!(
                seen.read_back,
                "✔",
                "{}: read_result, after the marker {}",
                host.title,
                marker.map(|m| &m[..m.len().min(800)]).unwrap_or("(none)")
            );
        }
        let row = seen.row(host, path);
        if !readme.lines().any(|l| l == row) {
            wrong.push(row);
        }
    }
    assert!(
        wrong.is_empty(),
        "README.md's hosts matrix must hold these rows, as seen:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn claude_code_by_itself_and_through_the_gateway() {
    host_matrix(&CLAUDE);
}

#[test]
fn gemini_cli_by_itself_and_through_the_gateway() {
    host_matrix(&GEMINI);
}

#[test]
fn codex_by_itself_and_through_the_gateway() {
    host_matrix(&CODEX);
}

/// Claude Code speaks 2026-07-28 to the gateway, where it hears of list changes only on a
/// `subscriptions/listen` stream, and waits for every listing (prompts and resources too)
/// before it offers any of the gateway's tools: a server behind that starts after the
/// first listing (here the FastMCP one, 5 s late) must still reach the model, mid-run.
#[test]
fn claude_code_gets_the_tools_of_a_server_that_starts_late_through_the_gateway() {
    let (Some(bin), Some(mut servers)) = (mcp_host(CLAUDE.bin), servers()) else {
        return;
    };
    let py = &servers["py"];
    let late = format!(
        "sleep 5; exec {} {}",
        py["command"].as_str().unwrap(),
        py["args"][0].as_str().unwrap()
    );
    servers["py"] = json!({"command": "sh", "args": ["-c", late]});
    let turns = run(&CLAUDE, &bin, Route::Gateway, &servers);
    for tool in ["forecast_summary", "fail_quota", "build_log"] {
        let Some(turn) = turns.iter().find(|t| t["after"] == tool) else {
            panic!("{tool} never reached the model: {turns:?}");
        };
        let offered = &turn["offered"];
        assert!(offered.to_string().contains("py__"), "{offered}");
    }
    let first = &turns[0]["offered"];
    assert!(!first.to_string().contains("py__"), "not late: {first}");
}
