"""toolwire.Store on every backend this machine runs (SQLite + blob files always;
Postgres + S3 when tests/services/start is up, and always in CI): results persisted with
their media, a session loaded back identical, the model's view and read_result of it."""

import base64
import json

import pytest

import toolwire
from conftest import FIXTURES, load

IMAGE = load(FIXTURES / "mcp" / "get-tiny-image.json")


def results():
    image = toolwire.normalize(IMAGE, tool="get-tiny-image", call_id="c_img")
    log = "\n".join(f"line {i}" for i in range(300_000)) + "\nFATAL: disk full"
    big = toolwire.normalize({"content": [{"type": "text", "text": log}]}, tool="logs", call_id="c_log")
    return image, big


def test_a_session_loads_back_identical_with_its_media(backends):
    for name, where in backends:
        store = toolwire.Store(**where)
        session = store.create_session(title="python " + name)
        image, big = results()
        calls = [{"id": r["callId"], "name": r["toolName"], "input": {}} for r in (image, big)]
        store.append(session, {"role": "user", "content": {"text": "look"}})
        store.append(session, {"role": "assistant", "content": {"text": "", "toolCalls": calls}})
        stored = store.persist(session, image)
        store.persist(session, big)

        # The image went to the blob store; the row holds a reference.
        source = stored["output"][1]["data"]["source"]
        assert "blob" in source and "base64" not in source, (name, source)
        assert store.blob(source["blob"]) == base64.b64decode(IMAGE["content"][1]["data"])

        # A second Store on the same place loads the session back as it was given.
        again = toolwire.Store(**where)
        messages = again.load(session)
        assert [m["content"] if m["role"] != "tool_result" else None for m in messages][:1] == [{"text": "look"}]
        loaded = [m["content"] for m in messages if m["role"] == "tool_result"]
        assert loaded[1] == big, name
        # The image result is as given, plus the store's record of the blob it now holds.
        resources = loaded[0].pop("resources")
        assert loaded[0] == image, name
        assert resources == [
            {"uri": source["blob"], "kind": "image", "mimeType": "image/png", "size": 4033}
        ], name
        assert any(s["id"] == session for s in again.sessions(limit=1000)), name
        # Without inline media the reference stays.
        refs = again.load(session, inline_media=False)
        assert refs[2]["content"] == stored, name

        # The request toolwire would send for it: the stored image read back from the
        # blob store, the log cut with a marker that Store.read_result follows.
        body = again.to_model(session, "anthropic", budget=2_000)
        text = json.dumps(body)
        assert IMAGE["content"][1]["data"] in text, name
        assert 'read_result {\\"callId\\":\\"c_log\\"' in text, name
        found = again.read_result(session, "c_log", pattern="FATAL")
        assert "FATAL: disk full" in found, (name, found)

        with pytest.raises(toolwire.ToolwireError) as e:
            again.read_result(session, "c_nope")
        assert e.value.code == "not_found"
        with pytest.raises(toolwire.ToolwireError) as e:
            again.load("ses_missing")
        assert (e.value.code, str(e.value)) == ("not_found", 'no session "ses_missing"')
        with pytest.raises(toolwire.ToolwireError) as e:
            again.to_model("ses_missing", "gemini")
        assert e.value.code == "not_found"


def test_bad_places_and_rows_are_errors_not_crashes(tmp_path):
    with pytest.raises(toolwire.ToolwireError) as e:
        toolwire.Store(database_url="mysql://x", blob_url=f"file://{tmp_path}")
    assert e.value.code == "store"
    assert "mysql" in str(e.value)
    store = toolwire.Store(str(tmp_path / "d"))
    session = store.create_session()
    with pytest.raises(toolwire.ToolwireError) as e:
        store.append(session, {"role": "wizard", "content": {}})
    assert e.value.code == "invalid_input" and str(e.value).startswith("message: ")
    # A result pointing at a blob that is not stored is refused, not half-written.
    dangling = toolwire.normalize(IMAGE, call_id="c_dangling")
    dangling["output"][1]["data"]["source"] = {"blob": "blake3:" + "0" * 64}
    with pytest.raises(toolwire.ToolwireError) as e:
        store.persist(session, dangling)
    assert e.value.code == "store"
    assert store.load(session) == []
    with pytest.raises(toolwire.ToolwireError) as e:
        store.blob("../../etc/passwd")
    assert e.value.code == "store"
