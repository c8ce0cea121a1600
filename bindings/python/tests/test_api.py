"""Each function of the toolwire package on real payloads: what it returns, and the
ToolwireError (code and message) it raises for bad input."""

import base64
import json
import sys
import threading
import time

import pytest

import toolwire
from conftest import FIXTURES, load

IMAGE = load(FIXTURES / "mcp" / "get-tiny-image.json")
PNG = base64.b64decode(IMAGE["content"][1]["data"])


def text_result(text: str, **extra):
    return {"content": [{"type": "text", "text": text}], **extra}


def test_normalize_takes_every_payload_shape():
    # MCP 2025-06-18: content blocks beside structuredContent, both kept.
    both = toolwire.normalize(
        {
            "content": [{"type": "text", "text": '{"temp": 21}'}],
            "structuredContent": {"temp": 21},
        },
        tool="weather",
        call_id="c1",
    )
    assert (both["callId"], both["toolName"], both["status"]) == ("c1", "weather", "success")
    kinds = [v["kind"] for v in both["output"]]
    assert "structured" in kinds or "json" in kinds, both
    assert any(v["data"] == {"temp": 21} for v in both["output"]), both

    # MCP 2026-07-28: a result that asks for input is a suspension.
    asking = toolwire.normalize(
        {
            "resultType": "input_required",
            "inputRequests": {
                "who": {
                    "method": "elicitation/create",
                    "params": {"message": "Your name?", "requestedSchema": {"type": "object"}},
                }
            },
            "requestState": "opaque-1",
        },
        tool="t",
        call_id="c9",
    )
    assert asking["status"] == "suspended"
    assert asking["suspension"]["prompt"] == "Your name?"

    # An MCP error, ART and golem-forge envelopes, plain values.
    error = toolwire.normalize({"content": [{"type": "text", "text": "boom"}], "isError": True})
    assert error["status"] == "error" and "boom" in json.dumps(error["error"])
    art = toolwire.normalize(load(FIXTURES / "legacy" / "art-success.json"))
    assert art["status"] == "success" and art["output"]
    golem = toolwire.normalize(load(FIXTURES / "legacy" / "golem-diff.json"))
    assert golem["output"][0]["kind"] == "diff"
    assert toolwire.normalize("plain text")["output"][0]["data"]["content"] == "plain text"
    assert toolwire.normalize(42)["status"] == "success"
    assert toolwire.normalize([1, 2])["output"]

    # Names default as the CLI's: the payload's own, else tool / call_1.
    plain = toolwire.normalize({"x": 1})
    assert (plain["callId"], plain["toolName"]) == ("call_1", "tool")
    own = toolwire.normalize({"callId": "k", "toolName": "n", "status": "success", "output": []})
    assert (own["callId"], own["toolName"]) == ("k", "n")


def test_normalize_of_an_image_keeps_it_an_image_and_is_idempotent():
    r = toolwire.normalize(IMAGE, tool="get-tiny-image")
    assert [v["kind"] for v in r["output"]] == ["text", "image", "text"]
    assert r["output"][1]["mimeType"] == "image/png"
    assert r["output"][1]["data"]["source"]["base64"] == IMAGE["content"][1]["data"]
    assert toolwire.normalize(r) == r
    assert toolwire.validate(r) == []


def test_normalize_refuses_what_is_not_json():
    with pytest.raises(toolwire.ToolwireError) as e:
        toolwire.normalize({"a": object()})
    assert e.value.code == "invalid_input"
    assert str(e.value) == "raw.a: not JSON: a value of type object"
    # What json.dumps would write but JSON has not (NaN), or would need another reader
    # for (ints past 64 bits), is refused, never silently changed.
    for bad, says in [
        (float("nan"), "raw: not JSON: NaN has no JSON form"),
        ({"n": [2**70]}, "raw.n[0]: not JSON: an integer larger than 64 bits"),
        ({"a": {1: 2}}, "raw.a: not JSON: a key of type int (keys must be str)"),
    ]:
        with pytest.raises(toolwire.ToolwireError) as e:
            toolwire.normalize(bad)
        assert str(e.value) == says
    with pytest.raises(TypeError):
        toolwire.normalize({}, "positional tool name")


def test_validate_lists_violations_and_raises_on_what_is_no_result():
    r = toolwire.normalize(text_result("hi"))
    r["output"][0]["kind"] = "Not A Kind"
    r["callId"] = ""
    lines = toolwire.validate(r)
    assert len(lines) >= 2, lines
    assert any(line.startswith("callId") for line in lines), lines
    assert any(line.startswith("output[0].kind") for line in lines), lines
    with pytest.raises(toolwire.ToolwireError) as e:
        toolwire.validate({"callId": "c", "toolName": "t", "status": "success", "output": [{}]})
    assert e.value.code == "invalid_input"
    assert str(e.value).startswith("result: output[0]"), str(e.value)
    with pytest.raises(toolwire.ToolwireError):
        toolwire.validate("no result")


def test_schema_is_the_wire_format_schema():
    s = toolwire.schema()
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert {"callId", "toolName", "status", "output"} <= set(s["properties"])


def test_render_terminal_draws_within_the_width_and_colours_on_request():
    r = toolwire.normalize(load(FIXTURES / "legacy" / "golem-diff.json"))
    plain = toolwire.render_terminal(r, width=40)
    assert plain and "\x1b" not in plain
    assert all(len(line) <= 40 for line in plain.splitlines()), plain
    assert "\x1b[" in toolwire.render_terminal(r, width=40, color=True)
    image = toolwire.render_terminal(toolwire.normalize(IMAGE), width=60)
    assert "[image image/png 20×20" in image, image
    with pytest.raises(toolwire.ToolwireError) as e:
        toolwire.render_terminal(7)
    assert e.value.code == "render"
    assert "found a number" in str(e.value)


def two_mb_log():
    lines = [f"line {i}: all well" for i in range(100_000)]
    lines[77_777] = "line 77777: FATAL disk full"
    text = "\n".join(lines)
    assert len(text) > 2_000_000
    return text


def test_to_model_pairs_cuts_with_a_marker_and_read_result_follows_it():
    big = toolwire.normalize(text_result(two_mb_log()), tool="logs", call_id="c_log")
    image = toolwire.normalize(IMAGE, tool="get-tiny-image", call_id="c_img")
    body, notes = toolwire.to_model([image, big], "anthropic", budget=5_000, notes=True)
    assert body["model"] == "claude-sonnet-4-5"
    calls, results = body["messages"]
    assert [c["id"] for c in calls["content"]] == ["c_img", "c_log"]
    by_id = {r["tool_use_id"]: r for r in results["content"]}
    assert [b["type"] for b in by_id["c_img"]["content"]] == ["text", "image", "text"]
    assert by_id["c_img"]["content"][1]["source"]["data"] == IMAGE["content"][1]["data"]
    cut = json.dumps(by_id["c_log"]["content"])
    assert len(cut) < 10_000
    assert 'read_result {\\"callId\\":\\"c_log\\"' in cut, cut[-600:]
    assert any(n["code"] and n.get("callId") == "c_log" for n in notes), notes

    # The marker's call reads on from exactly where the model's view stopped.
    marker = cut[cut.index("read_result {") + len("read_result ") :]
    call = json.loads(marker[: marker.index("}") + 1].replace('\\"', '"'))
    page = toolwire.read_result(big, part=call["part"], offset=call["offset"], limit=100)
    assert page.startswith(two_mb_log()[call["offset"] : call["offset"] + 20])
    found = toolwire.read_result(big, pattern="FATAL")
    assert "line 77777: FATAL disk full" in found


def test_to_model_routes_media_per_model_and_takes_conversations():
    image = toolwire.normalize(IMAGE, tool="get-tiny-image", call_id="c_img")
    # Media goes where each provider takes it: in the tool result (Anthropic, OpenAI
    # Responses, Gemini's function response parts), or for OpenAI Chat, whose tool
    # messages are text only, in a user message right after, named in the tool message.
    data = IMAGE["content"][1]["data"]
    chat = toolwire.to_model([image], "openai-chat")["messages"]
    assert [m["role"] for m in chat] == ["assistant", "tool", "user"]
    assert "attached in the next user message" in chat[1]["content"]
    assert chat[2]["content"][1]["image_url"]["url"] == "data:image/png;base64," + data
    responses = toolwire.to_model([image], "openai-responses")["input"][1]["output"]
    assert responses[1] == {
        "type": "input_image",
        "image_url": "data:image/png;base64," + data,
        "detail": "auto",
    }
    gemini = toolwire.to_model([image], "gemini")["contents"][1]["parts"][0]
    assert gemini["functionResponse"]["parts"][0]["inlineData"]["data"] == data
    # A format no provider takes becomes a described placeholder, not bytes.
    tiff = toolwire.normalize(
        {"content": [{"type": "image", "data": base64.b64encode(b"II*\x00" + bytes(64)).decode(), "mimeType": "image/tiff"}]},
        call_id="c_tiff",
    )
    body, notes = toolwire.to_model([tiff], "anthropic", notes=True)
    assert "image/tiff" in json.dumps(body) and '"type": "image"' not in json.dumps(body)
    assert any(n.get("callId") == "c_tiff" for n in notes), notes

    conversation = [
        {"role": "user", "content": {"text": "show me"}},
        {
            "role": "assistant",
            "content": {"text": "", "toolCalls": [{"id": "c_img", "name": "get-tiny-image", "input": {}}]},
        },
        {"role": "tool_result", "content": image},
        # An orphan result (no call made it) is dropped, and a note says so.
        {"role": "tool_result", "content": toolwire.normalize("late", call_id="c_orphan")},
    ]
    for provider in ("anthropic", "openai-chat", "openai-responses", "gemini"):
        body, notes = toolwire.to_model(conversation, provider, system="Be brief.", notes=True)
        assert "c_orphan" not in json.dumps(body), provider
        assert any(n.get("callId") == "c_orphan" for n in notes), (provider, notes)


def test_to_model_reports_bad_input_as_the_cli_does():
    with pytest.raises(toolwire.ToolwireError) as e:
        toolwire.to_model([], "bedrock")
    assert e.value.code == "invalid_input"
    assert str(e.value) == (
        "unknown provider `bedrock`; expected anthropic, openai-chat, openai-responses or gemini"
    )
    with pytest.raises(toolwire.ToolwireError) as e:
        toolwire.to_model([{"callId": "c"}], "anthropic")
    assert str(e.value).startswith("results: [0]"), str(e.value)
    with pytest.raises(toolwire.ToolwireError) as e:
        toolwire.to_model("text", "anthropic")
    assert "found a string" in str(e.value)
    with pytest.raises(toolwire.ToolwireError) as e:
        toolwire.to_model([], "anthropic", budget={"maxChars": "many"})
    assert str(e.value).startswith("budget: maxChars: invalid type"), str(e.value)


def test_read_result_errors_say_how_to_ask_again():
    r = toolwire.normalize(IMAGE)
    for kwargs, says in [
        ({"part": 9}, "part 9 is out of range: the result has 3 output values"),
        ({"part": 1}, "part 1 is image"),
        ({"pattern": "[z-a]"}, "is not a regular expression"),
        ({"pointer": "/x"}, "part 0 is text, not JSON, so a pointer cannot go into it"),
    ]:
        with pytest.raises(toolwire.ToolwireError) as e:
            toolwire.read_result(r, **kwargs)
        assert e.value.code == "invalid_input"
        assert says in str(e.value), (kwargs, str(e.value))
    report = toolwire.normalize({"checks": [{"name": "disk", "ok": False}]})
    with pytest.raises(toolwire.ToolwireError) as e:
        toolwire.read_result(report, pointer="x")
    assert "is not a JSON pointer" in str(e.value)
    assert toolwire.read_result(report, pointer="/checks/0/name") == "disk"


def test_the_gil_is_released_while_rust_works():
    # A second thread counts, giving the GIL up at each step (sleep(0)), while the main
    # thread is inside one long call; the switch interval is long, so the interpreter
    # does not take the GIL from a call that holds it. The control, str.replace on 40 MB,
    # holds it: the thread cannot count meanwhile. toolwire releases it while Rust works
    # (here: searching 40 MB with a pattern), so the thread counts on.
    result = toolwire.normalize(text_result("word " * 8_000_000))
    big = "word " * 8_000_000
    count = [0]
    stop = threading.Event()

    def counter():
        while not stop.is_set():
            count[0] += 1
            time.sleep(0)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1.0)
    worker = threading.Thread(target=counter)
    worker.start()
    try:
        time.sleep(0.05)

        def counted_during(call):
            before = count[0]
            call()
            return count[0] - before

        held = counted_during(lambda: big.replace("word", "w0rd"))
        released = counted_during(lambda: toolwire.read_result(result, pattern="never there"))
    finally:
        stop.set()
        worker.join()
        sys.setswitchinterval(interval)
    assert held <= 2, held
    assert released >= 50, released


def test_a_value_that_shares_itself_is_refused_not_walked_without_end():
    # 60 levels of {"a": d, "b": d}: within the depth limit, but 2^60 values when walked
    # as a tree. The walk stops at the value budget instead of running for ever.
    shared: dict = {}
    for _ in range(60):
        shared = {"a": shared, "b": shared}
    with pytest.raises(toolwire.ToolwireError) as e:
        toolwire.normalize(shared)
    assert e.value.code == "invalid_input"
    assert str(e.value).endswith("not JSON: more than 4000000 values"), str(e.value)[-200:]
    cycle: dict = {}
    cycle["self"] = cycle
    with pytest.raises(toolwire.ToolwireError) as e:
        toolwire.validate(cycle)
    assert str(e.value).endswith("not JSON: nested 128 levels deep or more")
