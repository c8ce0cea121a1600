"""The four MCP tool results the framework tests send through toolwire, as an MCP
server returns them (CallToolResult JSON): an image (server-everything's
get-tiny-image, recorded in tests/fixtures), text beside structuredContent, an error,
and 2 MB of text with one line worth finding."""

import toolwire
from conftest import FIXTURES, load

IMAGE = load(FIXTURES / "mcp" / "get-tiny-image.json")
IMAGE_B64 = IMAGE["content"][1]["data"]
BOTH = {
    "content": [{"type": "text", "text": "It is -3 °C in Oslo."}],
    "structuredContent": {"city": "Oslo", "tempC": -3},
}
ERROR = {"content": [{"type": "text", "text": "permission denied: /etc/shadow"}], "isError": True}
BIG_TEXT = "\n".join(
    "line %06d: FATAL disk full" % i if i == 77_777 else "line %06d: all well" % i
    for i in range(110_000)
)
BIG = {"content": [{"type": "text", "text": BIG_TEXT}]}
assert len(BIG_TEXT) > 2_000_000


def both_channels(blocks: list) -> bool:
    """Whether a model's view of BOTH has the text and the structured content."""
    seen = "".join(b.get("text", "") for b in blocks if isinstance(b, dict)) + "".join(
        b for b in blocks if isinstance(b, str)
    )
    return "It is -3 °C in Oslo." in seen and '{"city":"Oslo","tempC":-3}' in seen

MCP_TOOLS = {"get_image": IMAGE, "get_weather": BOTH, "read_secret": ERROR, "get_logs": BIG}

# Characters of one result a model sees; the 2 MB log is cut to this.
BUDGET = 4_000


def through_toolwire(raw: dict, tool: str, call_id: str):
    """The normalized result and what toolwire gives the model of it: its Anthropic
    tool_result block (text blocks, image blocks, is_error, the cut marker)."""
    result = toolwire.normalize(raw, tool=tool, call_id=call_id)
    body = toolwire.to_model([result], "anthropic", budget=BUDGET)
    (block,) = body["messages"][1]["content"]
    assert block["type"] == "tool_result" and block["tool_use_id"] == call_id
    return result, block
