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

from serving import ANSWER, CALLS, archive, forecast, png, ratio, serve, weather


PNG = png(32, 32, seed=45)


@tool
def radar() -> list:
    """The radar picture: a caption and the image."""
    return [Content.from_text("the radar"), Content.from_data(data=PNG, media_type="image/png")]


TOOLS = [tool(weather), tool(forecast), radar, tool(ratio), tool(archive)]


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
