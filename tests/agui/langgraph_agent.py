"""A LangGraph agent that toolwire follows in crates/toolwire/tests/agui_follow.rs, served by
ag-ui-langgraph's own FastAPI endpoint (`add_langgraph_fastapi_endpoint`), not toolwire's code.

Its models are langchain_core's fake chat models (no network, no key): the first turn calls
every tool at once, the next answers with text.

- `POST /`: the model streams (`GenericFakeChatModel`), so its answer comes as
  `TEXT_MESSAGE_*` events.
- `POST /quiet`: the model does not stream (`FakeMessagesListChatModel`), so its answer
  comes only in `MESSAGES_SNAPSHOT`.

Its tools return text, a dict, a LangChain image block, 201,000 characters, and fail two
ways: a `ToolException` (the tool handles it) and a `ValueError` (`ToolNode` catches it).

    python langgraph_agent.py   # prints "listening on PORT" once it accepts connections
"""

import base64

from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
from fastapi import FastAPI
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from serving import archive, forecast, png, ratio, serve, weather


PNG = png(32, 32, seed=44)


@tool
def radar() -> list:
    """The radar picture, as LangChain content blocks."""
    return [
        {"type": "text", "text": "the radar"},
        {"type": "image", "base64": base64.b64encode(PNG).decode(), "mime_type": "image/png"},
    ]


@tool
def station(city: str) -> str:
    """A weather station that is offline."""
    raise ToolException(f"the station in {city} is offline")


# The tool handles its own ToolException: its message becomes the result, flagged an error.
station.handle_tool_error = True


TOOLS = [tool(weather), tool(forecast), radar, station, tool(ratio), tool(archive)]
CALLS = [
    {"name": "weather", "args": {"city": "Paris"}, "id": "call_weather"},
    {"name": "forecast", "args": {"city": "Paris"}, "id": "call_forecast"},
    {"name": "radar", "args": {}, "id": "call_radar"},
    {"name": "station", "args": {"city": "Paris"}, "id": "call_station"},
    {"name": "ratio", "args": {"a": 1, "b": 0}, "id": "call_ratio"},
    {"name": "archive", "args": {}, "id": "call_archive"},
]
ANSWER = "It is sunny in Paris; the station is offline."


def reply(messages: list) -> AIMessage:
    """Calls every tool when the last message is the user's; else answers."""
    if isinstance(messages[-1], ToolMessage):
        return AIMessage(content=ANSWER)
    return AIMessage(content="", tool_calls=CALLS)


def graph(streaming: bool):
    def agent(state: MessagesState) -> dict:
        wanted = reply(state["messages"])
        # GenericFakeChatModel streams text but not tool calls: the calling turn does not
        # stream either way.
        if streaming and not wanted.tool_calls:
            model = GenericFakeChatModel(messages=iter([wanted]))
        else:
            model = FakeMessagesListChatModel(responses=[wanted])
        return {"messages": [model.invoke(state["messages"])]}

    def route(state: MessagesState) -> str:
        return "tools" if state["messages"][-1].tool_calls else END

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(TOOLS, handle_tool_errors=True))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=MemorySaver())


app = FastAPI()
add_langgraph_fastapi_endpoint(app, LangGraphAgent(name="weather", graph=graph(True)), path="/")
add_langgraph_fastapi_endpoint(app, LangGraphAgent(name="quiet", graph=graph(False)), path="/quiet")


if __name__ == "__main__":
    serve(app)
