"""A FastMCP server (mcp 2.x `MCPServer`) for the hosts' matrix
(crates/toolwire/tests/gateway_hosts.rs): the results a host must carry to its model that
server-everything does not return. Each is deterministic, so the test can look for it in
what the host sends its model.

Run: venv/bin/python hosts_server.py  (stdio)
"""

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

server = MCPServer("toolwire-hosts-fixture")


@server.tool()
def forecast_summary(city: str) -> CallToolResult:
    """A forecast as text for people and as structuredContent for programs: the text says
    what the value does not (the advice), the value holds what the text does not (humidity)."""
    return CallToolResult(
        content=[TextContent(type="text", text=f"{city}: sunny, take a hat (the server's own summary)")],
        structured_content={"city": city, "temperature_c": 21.5, "humidity_pct": 40},
    )


@server.tool()
def fail_quota() -> str:
    """Always fails, as a tool that hit a limit does."""
    raise ToolError("disk quota exceeded on /var/data: 0 bytes free")


@server.tool()
def build_log() -> str:
    """About 300 KB of a build's log; only its last line says how the build ended."""
    lines = [f"step {i:05d} compiling crate_{i % 97} ... ok" for i in range(1, 8001)]
    lines.append("BUILD FAILED: 1 test failed: tests::the_last_line_matters")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    server.run()
