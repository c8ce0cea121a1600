"""AG-UI agents that toolwire follows in crates/toolwire/tests/agui_follow.rs, written with
the AG-UI packages from PyPI, not toolwire's code:

- `POST /`: a Pydantic AI agent served by Pydantic AI's own AG-UI adapter (`AGUIAdapter`).
- `POST /encoder`: a scripted run written with ag-ui-protocol's `EventEncoder`, for what
  Pydantic AI does not send: an image result in AG-UI 1.0's multimodal form (Pydantic AI
  serializes a returned image into the result's text, as JSON with URL-safe base64), a
  malformed event, a result for a call never made, and a stream that ends mid-call.

Its model is Pydantic AI's `TestModel` (no network, no key): the first request calls every
tool once, the next answers with text. Its tools return text, JSON and an image (PNG bytes,
as Pydantic AI's `BinaryImage`), the three kinds of result toolwire must keep apart.

    python pydantic_agent.py   # prints "listening on PORT" once it accepts connections
"""

import base64

from ag_ui.core import (
    DataSource,
    ImagePart,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TextPart,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder
from pydantic_ai import Agent, BinaryImage
from pydantic_ai.models.test import TestModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from serving import png, serve


PNG = png(32, 32, seed=29)

agent = Agent(TestModel(), instructions="You report the weather.")


@agent.tool_plain
def weather(city: str) -> str:
    """The weather in a city, as text."""
    return f"sunny in {city}"


@agent.tool_plain
def forecast(city: str) -> dict:
    """Tomorrow's forecast, as JSON."""
    return {"city": city, "high": 21, "low": 12, "rain": False}


@agent.tool_plain
def radar() -> BinaryImage:
    """The radar picture, as an image."""
    return BinaryImage(data=PNG, media_type="image/png")


async def run_agent(request: Request) -> Response:
    """The AG-UI endpoint: Pydantic AI's adapter reads the RunAgentInput and streams events."""
    return await AGUIAdapter.dispatch_request(request, agent=agent)


async def scripted(request: Request) -> Response:
    """A run written event by event with ag-ui-protocol's encoder; it ends without
    RUN_FINISHED while a call's arguments are still streaming (a dropped stream)."""
    body = await request.json()
    thread, run = body["threadId"], body["runId"]
    encoder = EventEncoder(accept=request.headers.get("accept"))
    image = base64.b64encode(PNG).decode()

    async def events():
        yield encoder.encode(RunStartedEvent(thread_id=thread, run_id=run))
        yield encoder.encode(TextMessageStartEvent(message_id="m1", role="assistant"))
        yield encoder.encode(TextMessageContentEvent(message_id="m1", delta="Here is the chart."))
        yield encoder.encode(TextMessageEndEvent(message_id="m1"))
        yield encoder.encode(ToolCallStartEvent(tool_call_id="call-chart", tool_call_name="chart", parent_message_id="m1"))
        yield encoder.encode(ToolCallArgsEvent(tool_call_id="call-chart", delta='{"size":'))
        yield encoder.encode(ToolCallArgsEvent(tool_call_id="call-chart", delta="32}"))
        yield encoder.encode(ToolCallEndEvent(tool_call_id="call-chart"))
        yield encoder.encode(
            ToolCallResultEvent(
                message_id="r1",
                tool_call_id="call-chart",
                content=[
                    TextPart(text="the chart"),
                    ImagePart(source=DataSource(value=image, mime_type="image/png")),
                ],
            )
        )
        # Not JSON, and a result for a call that was never made: both must be reported
        # and skipped.
        yield "data: {this is not json\n\n"
        yield encoder.encode(ToolCallResultEvent(message_id="r2", tool_call_id="call-ghost", content="boo"))
        yield encoder.encode(ToolCallStartEvent(tool_call_id="call-slow", tool_call_name="slow", parent_message_id="m1"))
        yield encoder.encode(ToolCallArgsEvent(tool_call_id="call-slow", delta='{"n":'))
        # The stream ends here: no TOOL_CALL_END, no RUN_FINISHED.

    return StreamingResponse(events(), media_type=encoder.get_content_type())


app = Starlette(routes=[Route("/", run_agent, methods=["POST"]), Route("/encoder", scripted, methods=["POST"])])


if __name__ == "__main__":
    serve(app)
