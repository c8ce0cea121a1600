"""LangChain and LangGraph with toolwire between their MCP tools and the model: the same
four results (image, text beside structuredContent, error, 2 MB) as ToolMessages, run by
LangGraph's ToolNode for langchain_core's fake chat model, and checked in the exact
request body that ChatAnthropic sends a local stand-in for the Anthropic API. Needs
tests/requirements-frameworks.txt (.ci/run installs it); skipped without it outside CI."""

import json
from typing import Annotated

import pytest

import toolwire
from conftest import need
from mcp_results import BUDGET, BIG_TEXT, IMAGE_B64, MCP_TOOLS, both_channels, through_toolwire
from stub_provider import StubAnthropic, text, tool_results, tool_uses

try:
    from langchain_anthropic import ChatAnthropic
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import InjectedToolCallId, ToolException, tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
except ImportError:  # pragma: no cover - reported by the tests
    ChatAnthropic = None

CALLS = [
    ("c_image", "get_image"),
    ("c_weather", "get_weather"),
    ("c_secret", "read_secret"),
    ("c_logs", "get_logs"),
]


def for_langchain(block: dict):
    """toolwire's tool_result block as LangChain standard content blocks; an error
    raised as ToolException, which ToolNode turns into a ToolMessage with status error."""
    blocks = []
    for b in block["content"]:
        if b["type"] == "text":
            blocks.append({"type": "text", "text": b["text"]})
        elif b["type"] == "image":
            blocks.append(
                {"type": "image", "base64": b["source"]["data"], "mime_type": b["source"]["media_type"]}
            )
    if block.get("is_error"):
        raise ToolException("\n".join(b["text"] for b in blocks if b["type"] == "text"))
    return blocks


def mcp_tools(stored: dict):
    def make(name):
        @tool(name, response_format="content_and_artifact")
        def call(tool_call_id: Annotated[str, InjectedToolCallId]):
            """An MCP server's tool, through toolwire."""
            result, block = through_toolwire(MCP_TOOLS[name], name, tool_call_id)
            stored[tool_call_id] = result
            # The whole result rides along as the artifact; the model sees the content.
            return for_langchain(block), result

        call.handle_tool_error = True
        return call

    tools = [make(name) for name in MCP_TOOLS]

    @tool
    def read_result(callId: str, part: int = 0, offset: int = 0, pattern: str | None = None) -> str:
        """Reads more of a result that was cut for you."""
        return toolwire.read_result(stored[callId], part=part, offset=offset, pattern=pattern)

    return tools + [read_result]


def agent_graph(model, tools):
    """The usual LangGraph agent: the model, then ToolNode for its calls, until it answers."""
    graph = StateGraph(MessagesState)
    graph.add_node("model", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile()


def require():
    if ChatAnthropic is None:
        need("langchain-anthropic and langgraph", "pip install -r tests/requirements-frameworks.txt")


def test_tool_node_makes_tool_messages_for_the_fake_chat_model():
    require()
    stored = {}
    fake = GenericFakeChatModel(
        messages=iter(
            [
                AIMessage(content="", tool_calls=[{"id": i, "name": n, "args": {}} for i, n in CALLS]),
                AIMessage(content="done"),
            ]
        )
    )
    final = agent_graph(fake, mcp_tools(stored)).invoke({"messages": [HumanMessage("check")]})
    out = [m for m in final["messages"] if isinstance(m, ToolMessage)]
    assert len(out) == 4 and final["messages"][-1].content == "done"
    by_id = {m.tool_call_id: m for m in out}
    assert all(isinstance(m, ToolMessage) for m in out)
    image = by_id["c_image"].content
    assert {"type": "image", "base64": IMAGE_B64, "mime_type": "image/png"} in image
    assert both_channels(by_id["c_weather"].content)
    assert by_id["c_secret"].status == "error"
    assert "permission denied: /etc/shadow" in by_id["c_secret"].content
    logs = "".join(b["text"] for b in by_id["c_logs"].content)
    assert len(logs) < 2 * BUDGET and 'read_result {"callId":"c_logs"' in logs
    # The artifact is the whole normalized result, the one read_result reads.
    assert by_id["c_logs"].artifact["output"][0]["data"]["content"] == BIG_TEXT


def test_langgraph_sends_image_both_channels_error_and_marker():
    require()
    stored = {}
    marker = {}

    def follow_marker(body):
        words = json.dumps(tool_results(body)["c_logs"]["content"])
        at = words.index("read_result {") + len("read_result ")
        call = json.loads(words[at : words.index("}", at) + 1].replace('\\"', '"'))
        marker.update(call)
        return tool_uses(("c_read", "read_result", call))(body)

    with StubAnthropic([tool_uses(*[(i, n, {}) for i, n in CALLS]), follow_marker, text("done")]) as stub:
        tools = mcp_tools(stored)
        model = ChatAnthropic(
            model="claude-sonnet-4-5", api_key="test", base_url=stub.url, max_retries=0
        ).bind_tools(tools)
        final = agent_graph(model, tools).invoke({"messages": [HumanMessage("check the machine")]})
    assert final["messages"][-1].content == "done"
    assert len(stub.bodies) == 3
    results = tool_results(stub.bodies[1])
    image = results["c_image"]["content"]
    assert {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": IMAGE_B64}} in image, image
    assert both_channels(results["c_weather"]["content"]), results["c_weather"]
    assert results["c_secret"].get("is_error") is True, results["c_secret"]
    logs = json.dumps(results["c_logs"]["content"])
    assert len(logs) < 2 * BUDGET
    assert marker["callId"] == "c_logs" and marker["offset"] > 0
    page = json.dumps(tool_results(stub.bodies[2])["c_read"]["content"])
    assert json.dumps(BIG_TEXT[marker["offset"] : marker["offset"] + 200])[1:-1] in page
