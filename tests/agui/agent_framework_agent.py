"""A Microsoft Agent Framework agent that toolwire follows in
crates/toolwire/tests/agui_follow.rs, served by agent-framework-ag-ui's own FastAPI endpoint
(`add_agent_framework_fastapi_endpoint`), not toolwire's code.

Its model is a scripted chat client (no network, no key) on Agent Framework's own
`BaseChatClient` with its `FunctionInvocationLayer` (the layer that runs tools for every
real client): the first request calls every tool at once, the next answers with text.

- `POST /`: the client streams (`ChatResponseUpdate`s).
- `POST /quiet`: the client answers whole (one `ChatResponse`) when not asked to stream,
  and in one update when it is.

Its tools return text, a dict, an image (`Content.from_data`), 201,000 characters, and fail
(a `ValueError`).

    python agent_framework_agent.py   # prints "listening on PORT" once it accepts connections
"""


from agent_framework import (
    Agent,
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationLayer,
    Message,
    tool,
)
from agent_framework.ag_ui import add_agent_framework_fastapi_endpoint
from fastapi import FastAPI

from serving import LONG, png, serve


PNG = png(32, 32, seed=45)


@tool
def weather(city: str) -> str:
    """The weather in a city, as text."""
    return f"sunny in {city}"


@tool
def forecast(city: str) -> dict:
    """Tomorrow's forecast, as a dict."""
    return {"city": city, "high": 21, "low": 12, "rain": False}


@tool
def radar() -> list:
    """The radar picture: a caption and the image."""
    return [Content.from_text("the radar"), Content.from_data(data=PNG, media_type="image/png")]


@tool
def ratio(a: int, b: int) -> float:
    """a / b; fails on b = 0."""
    if b == 0:
        raise ValueError("division by zero in ratio")
    return a / b


@tool
def archive() -> str:
    """A long record, 201,000 characters."""
    return LONG


TOOLS = [weather, forecast, radar, ratio, archive]
CALLS = [
    ("call_weather", "weather", '{"city": "Paris"}'),
    ("call_forecast", "forecast", '{"city": "Paris"}'),
    ("call_radar", "radar", "{}"),
    ("call_ratio", "ratio", '{"a": 1, "b": 0}'),
    ("call_archive", "archive", "{}"),
]
ANSWER = "It is sunny in Paris; the ratio failed."


def reply(messages: list) -> list:
    """The contents of the next answer: every call when the last message is the user's,
    else the answer."""
    if messages and messages[-1].role == "tool":
        return [Content.from_text(ANSWER)]
    return [Content.from_function_call(call_id=c, name=n, arguments=a) for c, n, a in CALLS]


class ScriptedClient(FunctionInvocationLayer, BaseChatClient):
    """A chat client that answers from the script, streaming or not."""

    def __init__(self, streams: bool, **kwargs):
        super().__init__(**kwargs)
        self.streams = streams

    def _inner_get_response(self, *, messages, stream, options, **kwargs):
        contents = reply(list(messages))
        if stream:

            async def updates():
                if self.streams and contents[0].type == "text":
                    # The answer word by word.
                    words = contents[0].text.split(" ")
                    for i, word in enumerate(words):
                        text = word if i == 0 else " " + word
                        yield ChatResponseUpdate(role="assistant", contents=[Content.from_text(text)], message_id="answer")
                else:
                    yield ChatResponseUpdate(role="assistant", contents=contents, message_id="turn")

            return self._build_response_stream(updates())

        async def whole():
            return ChatResponse(messages=[Message(role="assistant", contents=contents)], response_id="scripted")

        return whole()


app = FastAPI()
for path, streams in (("/", True), ("/quiet", False)):
    agent = Agent(client=ScriptedClient(streams), name="weather", tools=TOOLS)
    add_agent_framework_fastapi_endpoint(app, agent, path=path, single_user=True)


if __name__ == "__main__":
    serve(app)
