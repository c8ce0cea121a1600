"""An AWS Strands agent that toolwire follows in crates/toolwire/tests/agui_follow.rs, served
by ag-ui-strands' own FastAPI endpoint (`add_strands_fastapi_endpoint`), not toolwire's code.

Its model is a scripted `strands.models.Model` (no network, no key) that speaks the Bedrock
Converse stream events every Strands provider emits: the first request calls every tool at
once, the next answers with text. Strands' own agent loop runs the tools.

- `POST /`: the answer streams word by word.
- `POST /quiet`: every block arrives whole, in one delta (what Strands' providers emit when
  asked not to stream).

Its tools return text, a dict, an image (a Converse image block), 201,000 characters, and
fail (a `ValueError`).

    python strands_agent.py   # prints "listening on PORT" once it accepts connections
"""

from ag_ui_strands import StrandsAgent, add_strands_fastapi_endpoint
from fastapi import FastAPI
from strands import Agent, tool
from strands.models.model import Model

from serving import ANSWER, CALLS, archive, forecast, png, ratio, serve, weather


PNG = png(32, 32, seed=46)


@tool
def radar() -> dict:
    """The radar picture, as a Converse image block."""
    return {"status": "success", "content": [{"image": {"format": "png", "source": {"bytes": PNG}}}]}


TOOLS = [tool(weather), tool(forecast), radar, tool(ratio), tool(archive)]


class ScriptedModel(Model):
    """A model that answers from the script, in Converse stream events."""

    def __init__(self, streams: bool):
        self.streams = streams
        self.config = {"model_id": "scripted"}

    def update_config(self, **model_config):
        self.config.update(model_config)

    def get_config(self):
        return self.config

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
        raise NotImplementedError("the scripted model has no structured output")
        yield  # pragma: no cover

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        yield {"messageStart": {"role": "assistant"}}
        last = messages[-1]["content"] if messages else []
        if any("toolResult" in block for block in last):
            words = ANSWER.split(" ")
            chunks = [w if i == 0 else " " + w for i, w in enumerate(words)] if self.streams else [ANSWER]
            yield {"contentBlockStart": {"start": {}}}
            for chunk in chunks:
                yield {"contentBlockDelta": {"delta": {"text": chunk}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        for call_id, name, arguments in CALLS:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": name}}}}
            pieces = [arguments[:3], arguments[3:]] if self.streams and len(arguments) > 3 else [arguments]
            for piece in pieces:
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": piece}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}


app = FastAPI()
for path, streams in (("/", True), ("/quiet", False)):
    core = Agent(model=ScriptedModel(streams), tools=TOOLS, callback_handler=None)
    add_strands_fastapi_endpoint(app, StrandsAgent(core, name="weather"), path)


if __name__ == "__main__":
    serve(app)
