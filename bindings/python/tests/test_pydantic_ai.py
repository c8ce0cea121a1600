"""Pydantic AI with toolwire between its MCP tools and the model: an image, text beside
structuredContent, an error and 2 MB of text, checked in the exact request body that
reaches the provider (a local stand-in for the Anthropic API), then read_result
following the cut marker. Needs tests/requirements-frameworks.txt (.ci/run installs
it); skipped without it outside CI."""

import base64
import json

import pytest

import toolwire
from conftest import need
from mcp_results import BUDGET, BIG_TEXT, IMAGE_B64, MCP_TOOLS, both_channels, through_toolwire
from stub_provider import StubAnthropic, text, tool_results, tool_uses

try:
    from pydantic_ai import Agent, BinaryContent, ModelRetry, RunContext
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
except ImportError:  # pragma: no cover - reported by the test below
    Agent = None


def for_pydantic_ai(block: dict):
    """toolwire's tool_result block as a Pydantic AI tool return: text as str, images as
    BinaryContent; an error raised as ModelRetry, which Pydantic AI flags as one."""
    parts = []
    for b in block["content"]:
        if b["type"] == "text":
            parts.append(b["text"])
        elif b["type"] == "image":
            parts.append(
                BinaryContent(
                    data=base64.b64decode(b["source"]["data"]), media_type=b["source"]["media_type"]
                )
            )
    if block.get("is_error"):
        raise ModelRetry("\n".join(p for p in parts if isinstance(p, str)))
    return parts


def agent_with_mcp_tools(model):
    agent = Agent(model)
    stored = {}

    def mcp_tool(name):
        def call(ctx: RunContext) -> list:
            result, block = through_toolwire(MCP_TOOLS[name], name, ctx.tool_call_id)
            stored[ctx.tool_call_id] = result
            return for_pydantic_ai(block)

        call.__name__ = name
        return call

    for name in MCP_TOOLS:
        agent.tool(mcp_tool(name), retries=0 if name != "read_secret" else 1)

    @agent.tool_plain
    def read_result(callId: str, part: int = 0, offset: int = 0, pattern: str | None = None) -> str:
        """Reads more of a result that was cut for you."""
        return toolwire.read_result(stored[callId], part=part, offset=offset, pattern=pattern)

    return agent, stored


def test_the_request_keeps_image_both_channels_error_and_marker():
    if Agent is None:
        need("pydantic-ai", "pip install -r tests/requirements-frameworks.txt")
    marker = {}

    def follow_marker(body):
        cut = tool_results(body)["c_logs"]
        words = json.dumps(cut["content"])
        at = words.index("read_result {") + len("read_result ")
        call = json.loads(words[at : words.index("}", at) + 1].replace('\\"', '"'))
        marker.update(call)
        return tool_uses(("c_read", "read_result", call), ("c_find", "read_result", {"callId": "c_logs", "pattern": "FATAL"}))(body)

    replies = [
        tool_uses(
            ("c_image", "get_image", {}),
            ("c_weather", "get_weather", {}),
            ("c_secret", "read_secret", {}),
            ("c_logs", "get_logs", {}),
        ),
        follow_marker,
        text("done"),
    ]
    with StubAnthropic(replies) as stub:
        model = AnthropicModel(
            "claude-sonnet-4-5", provider=AnthropicProvider(api_key="test", base_url=stub.url)
        )
        agent, _ = agent_with_mcp_tools(model)
        run = agent.run_sync("Check the machine.")
    assert run.output == "done"
    assert len(stub.bodies) == 3
    results = tool_results(stub.bodies[1])

    # The image is an image block with the tool's bytes, inside the tool result.
    image = results["c_image"]
    blocks = image["content"]
    assert {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": IMAGE_B64}} in [
        {k: v for k, v in b.items() if k != "cache_control"} for b in blocks
    ], blocks
    # Both channels of a text + structuredContent result.
    assert both_channels(results["c_weather"]["content"]), results["c_weather"]
    # The error is flagged as one.
    assert results["c_secret"]["is_error"] is True
    assert "permission denied: /etc/shadow" in json.dumps(results["c_secret"]["content"])
    # The 2 MB log is cut by toolwire, with the marker; the model's read_result call
    # following it reads on from there, and a pattern finds the one bad line.
    logs = json.dumps(results["c_logs"]["content"])
    assert len(logs) < 2 * BUDGET
    assert marker["callId"] == "c_logs" and marker["offset"] > 0
    pages = tool_results(stub.bodies[2])
    page = json.dumps(pages["c_read"]["content"])
    assert json.dumps(BIG_TEXT[marker["offset"] : marker["offset"] + 200])[1:-1] in page
    assert "line 077777: FATAL disk full" in json.dumps(pages["c_find"]["content"])


def test_test_model_calls_each_tool_through_toolwire():
    if Agent is None:
        need("pydantic-ai", "pip install -r tests/requirements-frameworks.txt")
    agent, stored = agent_with_mcp_tools(TestModel(call_tools=["get_image", "get_weather", "get_logs"]))
    run = agent.run_sync("go")
    returns = {
        p.tool_name: p.content
        for m in run.all_messages()
        for p in getattr(m, "parts", [])
        if type(p).__name__ == "ToolReturnPart"
    }
    assert any(isinstance(c, BinaryContent) and c.media_type == "image/png" for c in returns["get_image"])
    assert "read_result" in "".join(returns["get_logs"])
    assert both_channels(returns["get_weather"]), returns["get_weather"]
    assert {r["toolName"] for r in stored.values()} == {"get_image", "get_weather", "get_logs"}
