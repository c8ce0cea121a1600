"""Type stubs of toolwire's native module (bindings/python/src/lib.rs)."""

from os import PathLike
from typing import Any, Literal, overload

# JSON as Python holds it: what json.loads returns.
Json = dict[str, Any] | list[Any] | str | int | float | bool | None
ToolResult = dict[str, Any]
Message = dict[str, Any]
Provider = Literal["anthropic", "openai-chat", "openai-responses", "gemini"]
Budget = int | dict[str, Any]

class ToolwireError(Exception):
    """A toolwire failure; ``str(e)`` is the message the toolwire CLI prints."""

    code: str
    """invalid_input, not_found, store, encode or render."""

def normalize(raw: Json, *, tool: str | None = None, call_id: str | None = None) -> ToolResult:
    """The canonical ToolResult of a raw tool payload (MCP CallToolResult of either
    revision, ART, golem-forge, a canonical result, any plain value)."""

def validate(result: ToolResult) -> list[str]:
    """The contract's violations, one line each; empty when valid."""

def schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of the ToolResult wire format."""

def render_terminal(
    result: Json, *, width: int = 80, color: bool = False, expand: bool = False
) -> str:
    """A ToolResult, a Value or a list of them, drawn for a terminal."""

def read_result(
    result: ToolResult,
    *,
    part: int = 0,
    offset: int = 0,
    limit: int | None = None,
    pattern: str | None = None,
    pointer: str | None = None,
) -> str:
    """A page of a whole result, as a cut view's marker names it."""

@overload
def to_model(
    messages: list[Message] | list[ToolResult] | ToolResult,
    provider: Provider,
    *,
    model: str | None = None,
    budget: Budget | None = None,
    system: str = "",
    notes: Literal[False] = False,
) -> dict[str, Any]: ...
@overload
def to_model(
    messages: list[Message] | list[ToolResult] | ToolResult,
    provider: Provider,
    *,
    model: str | None = None,
    budget: Budget | None = None,
    system: str = "",
    notes: Literal[True],
) -> tuple[dict[str, Any], list[dict[str, Any]]]: ...

class Store:
    """History and blob stores: a data directory (SQLite + files) by default, or the
    binary's database_url (sqlite://, postgres://) and blob_url (file://, s3://)."""

    def __init__(
        self,
        data_dir: str | PathLike[str] | None = None,
        *,
        database_url: str | None = None,
        blob_url: str | None = None,
    ) -> None: ...
    def create_session(self, *, title: str | None = None, id: str | None = None) -> str: ...
    def sessions(self, *, limit: int = 50, offset: int = 0) -> list[dict[str, Any]]: ...
    def persist(self, session: str, result: ToolResult) -> ToolResult: ...
    def append(self, session: str, message: Message) -> dict[str, Any]: ...
    def load(self, session: str, *, inline_media: bool = True) -> list[dict[str, Any]]: ...
    @overload
    def to_model(
        self,
        session: str,
        provider: Provider,
        *,
        model: str | None = None,
        budget: Budget | None = None,
        system: str = "",
        notes: Literal[False] = False,
    ) -> dict[str, Any]: ...
    @overload
    def to_model(
        self,
        session: str,
        provider: Provider,
        *,
        model: str | None = None,
        budget: Budget | None = None,
        system: str = "",
        notes: Literal[True],
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]: ...
    def read_result(
        self,
        session: str,
        call_id: str,
        *,
        part: int = 0,
        offset: int = 0,
        limit: int | None = None,
        pattern: str | None = None,
        pointer: str | None = None,
    ) -> str: ...
    def blob(self, key: str) -> bytes: ...
