"""The package and the `toolwire` binary agree byte for byte: the fixture corpus of the
Rust tests (tests/fixtures, tests/hostile) normalized, rendered and validated, the
schema, and a stored session's request body, each dumped as JSON by Python and printed
by the CLI."""

import json

import pytest

import toolwire
from conftest import FIXTURES, HOSTILE, corpus, load, run_cli


def dumps(value) -> str:
    """JSON as the CLI prints it: pretty, two spaces, UTF-8 kept, a final newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def session_part(body: dict, provider: str) -> str:
    """The encoded session in a request body: its turns, without a system prompt."""
    key = {"anthropic": "messages", "openai-chat": "messages", "openai-responses": "input", "gemini": "contents"}[provider]
    turns = [t for t in body[key] if t.get("role") not in ("system", "developer")]
    return json.dumps(turns, ensure_ascii=False)


def escaped(text: str) -> str:
    """What the CLI's output escaping does to characters a terminal would act on (C1
    controls, bidi overrides, invisible characters: toolwire_term's sanitize_json), so a
    hostile payload's Python dump can be compared with the CLI's safe print."""
    out = []
    for ch in text:
        c = ord(ch)
        if 0x80 <= c <= 0x9F or ch in "\u061c\u200b\u200c\u200d\u200e\u200f\u2028\u2029\u2060\ufeff" or 0x202A <= c <= 0x202E or 0x2066 <= c <= 0x2069:
            out.append(f"\\u{c:04x}")
        else:
            out.append(ch)
    return "".join(out)


# tests/hostile/deep_json.json nests 100,000 deep: the CLI refuses it as JSON, and
# Python's json module cannot load it; test_deep_input_is_refused_as_the_cli_refuses_it.
CORPUS = [p for p in corpus() if p.stem != "deep_json"]


def test_the_corpus_is_the_rust_tests_corpus():
    names = {p.parent.name + "/" + p.stem for p in CORPUS}
    assert len([n for n in names if not n.startswith("hostile/")]) >= 16
    assert {"mcp/get-tiny-image", "legacy/art-success", "hostile/escapes_mcp"} <= names


def nested(levels: int):
    value = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_deep_input_is_refused_as_the_cli_refuses_it(cli):
    _, err, code = run_cli(cli, "normalize", str(HOSTILE / "deep_json.json"))
    assert code == 1 and "not JSON: recursion limit exceeded" in err
    with pytest.raises(toolwire.ToolwireError) as e:
        toolwire.normalize(nested(100_000))
    assert e.value.code == "invalid_input"
    assert "not JSON: nested 128 levels deep or more" in str(e.value)
    # The same limit as the CLI's JSON reader: 127 levels pass, 128 do not.
    for levels, ok in [(127, True), (128, False)]:
        _, _, code = run_cli(cli, "normalize", "-", stdin=json.dumps(nested(levels)).encode())
        assert (code == 0) == ok, levels
        try:
            toolwire.normalize(nested(levels))
            assert ok, levels
        except toolwire.ToolwireError:
            assert not ok, levels


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_normalize_prints_the_same_json(cli, path):
    out, err, code = run_cli(cli, "normalize", str(path), "--tool", path.stem)
    assert code == 0, err
    ours = toolwire.normalize(load(path), tool=path.stem)
    assert escaped(dumps(ours)) == out
    compact, _, _ = run_cli(cli, "normalize", "--compact", str(path), "--tool", path.stem)
    assert escaped(json.dumps(ours, ensure_ascii=False, separators=(",", ":"))) + "\n" == compact


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_render_and_validate_say_what_the_cli_says(cli, path, tmp_path):
    result = toolwire.normalize(load(path), tool=path.stem)
    normalized = tmp_path / "result.json"
    normalized.write_text(json.dumps(result))
    out, err, code = run_cli(cli, "render", "--width", "80", str(normalized))
    assert code == 0, err
    assert toolwire.render_terminal(result, width=80) == out
    out, err, code = run_cli(cli, "validate", str(normalized))
    assert code == 0 and out.startswith("ok: "), err
    assert toolwire.validate(result) == []


def test_schema_is_the_clis(cli):
    out, _, code = run_cli(cli, "schema")
    assert code == 0
    assert json.loads(out) == toolwire.schema()
    assert json.dumps(toolwire.schema(), indent=2, ensure_ascii=False) == out.rstrip("\n")


@pytest.mark.parametrize(
    "bad",
    [
        {"callId": 1},
        {"callId": "c", "toolName": "t", "status": "success", "output": [{}]},
        {"callId": "c", "toolName": "t", "status": "maybe", "output": []},
        [1, 2],
    ],
)
def test_bad_input_gets_the_clis_message(cli, bad):
    _, err, code = run_cli(cli, "validate", "-", stdin=json.dumps(bad).encode())
    assert code == 1
    with pytest.raises(toolwire.ToolwireError) as e:
        toolwire.validate(bad)
    # The CLI names its input (<stdin>), the package its argument (result); the rest is
    # the same words.
    assert err == "error: <stdin>: " + str(e.value).removeprefix("result: ") + "\n"


def test_violations_are_the_clis_lines(cli, tmp_path):
    result = toolwire.normalize({"content": [{"type": "text", "text": "x"}]})
    result["output"][0]["kind"] = "Bad Kind"
    result["callId"] = ""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(result))
    _, err, code = run_cli(cli, "validate", str(path))
    assert code == 1
    assert err.splitlines() == toolwire.validate(result)


@pytest.mark.parametrize("provider", ["anthropic", "openai-chat", "openai-responses", "gemini"])
def test_a_stored_session_exports_the_same_body(cli, tmp_path, provider):
    data = tmp_path / "data"
    store = toolwire.Store(str(data))
    session = store.create_session(title="parity")
    results = [
        toolwire.normalize(load(FIXTURES / "mcp" / "get-tiny-image.json"), call_id="c_img"),
        toolwire.normalize(load(FIXTURES / "mcp" / "get-structured-content.json"), call_id="c_both"),
        toolwire.normalize({"content": [{"type": "text", "text": "no"}], "isError": True}, call_id="c_err"),
        toolwire.normalize({"content": [{"type": "text", "text": "y" * 200_000}]}, call_id="c_big"),
    ]
    calls = [{"id": r["callId"], "name": r["toolName"], "input": {}} for r in results]
    store.append(session, {"role": "user", "content": {"text": "go"}})
    store.append(session, {"role": "assistant", "content": {"text": "", "toolCalls": calls}})
    for r in results:
        store.persist(session, r)
    out, err, code = run_cli(
        cli, "export", session, "--provider", provider, "--max-chars", "3000", "--data-dir", str(data)
    )
    assert code == 0, err
    body = store.to_model(session, provider, budget=3000)
    # `toolwire export` is the agent's whole request (its tools, system prompt and stream
    # flag beside the session); `Store.to_model` encodes the session with the caller's
    # options. The session's part must be the same, byte for byte.
    assert session_part(body, provider) == session_part(json.loads(out), provider)
