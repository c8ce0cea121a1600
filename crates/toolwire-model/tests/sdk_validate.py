"""Validates toolwire's encoded request bodies against the providers' official SDK types.

Usage: sdk_validate.py FILE...   where each FILE is `<name>.<provider>.json` holding
{"request": body}. Exit 0 when all are valid, 1 with reasons otherwise, 3 when an SDK
package is missing (the Rust test decides whether that fails or skips).

Types used: anthropic MessageCreateParamsNonStreaming; openai chat
CompletionCreateParamsNonStreaming and ResponseCreateParamsNonStreaming (TypedDicts);
google-genai Content / Tool / GenerationConfig (pydantic models, extra="forbid").
TypedDict validation ignores unknown keys, so for those every key of the input must also
survive validation: a key the SDK type does not know is reported as an error.
"""

import json
import sys

try:
    import pydantic
    from anthropic.types import message_create_params as anthropic_params
    from openai.types.chat import completion_create_params as chat_params
    from openai.types.responses import response_create_params as responses_params
    from google.genai import types as genai
except ImportError as e:  # pragma: no cover - reported to the Rust test
    print(f"missing SDK package: {e}", file=sys.stderr)
    sys.exit(3)

# The SDKs type list fields as `Iterable[...]`, which pydantic validates lazily (only when
# iterated) and so would let a wrong block through. Validating them as lists makes every
# nested block checked eagerly. This touches a private pydantic hook; fail loudly if it moved.
from pydantic._internal import _generate_schema
from pydantic_core import core_schema

if not hasattr(_generate_schema.GenerateSchema, "_iterable_schema"):
    print("pydantic has no GenerateSchema._iterable_schema; update sdk_validate.py", file=sys.stderr)
    sys.exit(2)


def _eager_iterable(self, type_):
    return core_schema.list_schema(self.generate_schema(self._get_first_arg_or_any(type_)))


_generate_schema.GenerateSchema._iterable_schema = _eager_iterable


def unknown_keys(given, kept, path="$"):
    """Paths of object keys in `given` that validation dropped."""
    out = []
    if isinstance(given, dict) and isinstance(kept, dict):
        for key, value in given.items():
            if key not in kept:
                out.append(f"{path}.{key}")
            else:
                out.extend(unknown_keys(value, kept[key], f"{path}.{key}"))
    elif isinstance(given, list) and isinstance(kept, list):
        for i, (g, k) in enumerate(zip(given, kept)):
            out.extend(unknown_keys(g, k, f"{path}[{i}]"))
    return out


def check_typed_dict(typ, body):
    adapter = pydantic.TypeAdapter(typ)
    validated = adapter.validate_python(body, strict=False)
    kept = adapter.dump_python(validated, mode="json", warnings=False)
    return [f"unknown key {p}" for p in unknown_keys(body, kept)]


def check_gemini(body):
    errors = []
    allowed = {"contents", "systemInstruction", "tools", "generationConfig"}
    errors += [f"unknown key $.{k}" for k in body if k not in allowed]
    pydantic.TypeAdapter(list[genai.Content]).validate_json(json.dumps(body["contents"]))
    if "systemInstruction" in body:
        genai.Content.model_validate_json(json.dumps(body["systemInstruction"]))
    if "tools" in body:
        pydantic.TypeAdapter(list[genai.Tool]).validate_json(json.dumps(body["tools"]))
    if "generationConfig" in body:
        genai.GenerationConfig.model_validate_json(json.dumps(body["generationConfig"]))
    return errors


def opens_with_user(messages, role_key="role", user="user"):
    """The providers' documented rule the types cannot say: the first turn is the user's
    (Anthropic refuses an assistant turn first; Gemini a model turn, and a function call
    that does not follow a user turn or a function response)."""
    if not messages:
        return []
    first = messages[0].get(role_key)
    return [] if first == user else [f"the first turn is {first!r}, not {user!r}"]


def check_anthropic(body):
    errors = check_typed_dict(anthropic_params.MessageCreateParamsNonStreaming, body)
    return errors + opens_with_user(body.get("messages", []))


def check_gemini_rules(body):
    errors = check_gemini(body)
    contents = body.get("contents", [])
    errors += opens_with_user(contents)
    for i, turn in enumerate(contents):
        calls = any("functionCall" in p for p in turn.get("parts", []))
        if calls and i > 0:
            before = contents[i - 1]
            answered = any("functionResponse" in p for p in before.get("parts", []))
            if before.get("role") != "user" and not answered:
                errors.append(f"contents[{i}]: a function call after a {before.get('role')!r} turn")
    return errors


CHECKS = {
    "anthropic": check_anthropic,
    "openai-chat": lambda b: check_typed_dict(chat_params.CompletionCreateParamsNonStreaming, b),
    "openai-responses": lambda b: check_typed_dict(responses_params.ResponseCreateParamsNonStreaming, b),
    "gemini": check_gemini_rules,
}


def main(paths):
    failed = 0
    for path in paths:
        provider = path.rsplit("/", 1)[-1].split(".")[-2]
        body = json.load(open(path, encoding="utf-8"))["request"]
        try:
            errors = CHECKS[provider](body)
        except pydantic.ValidationError as e:
            # Unions make pydantic list every alternative; the first lines say enough.
            errors = str(e).splitlines()[:12]
        if errors:
            failed += 1
            print(f"INVALID {path}:", *errors, sep="\n  ")
        else:
            print(f"ok {path}")
    print(f"{len(paths) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
