"""toolwire's engine for Python: normalize, validate, model views, read_result, terminal
rendering and the store of AI-agent tool results. Values go in and come out as plain
dict/list/str; every failure is a ToolwireError with a ``code`` and the CLI's message."""

from ._toolwire import (
    Store,
    ToolwireError,
    normalize,
    read_result,
    render_terminal,
    schema,
    to_model,
    validate,
)

__all__ = [
    "Store",
    "ToolwireError",
    "normalize",
    "read_result",
    "render_terminal",
    "schema",
    "to_model",
    "validate",
]
