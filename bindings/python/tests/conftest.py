"""Shared helpers of the toolwire package's tests: the repository's fixture corpus, the
`toolwire` binary to compare against, and the scale-out backends when they are up.

Tests that need something outside Python (the binary, Postgres + S3) skip when it is
missing, except in CI (CI=true), where a missing one fails the test: .ci/run provides
them all."""

import json
import os
import pathlib
import shutil
import subprocess
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures"
HOSTILE = ROOT / "tests" / "hostile"


def need(what: str, why: str) -> None:
    """Skips outside CI; in CI a missing dependency is a failure, never a skip."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing: {why}")
    pytest.skip(f"{what} is missing: {why}")


def corpus() -> list[pathlib.Path]:
    """The recorded real payloads the Rust fixture tests run (tests/fixtures/mcp and
    legacy; `_`-prefixed files are not payloads), and the hostile ones."""
    paths = []
    for folder in (FIXTURES / "mcp", FIXTURES / "legacy", HOSTILE):
        paths += sorted(
            p for p in folder.glob("*.json") if not p.name.startswith("_")
        )
    return paths


def load(path: pathlib.Path):
    return json.loads(path.read_bytes())


@pytest.fixture(scope="session")
def cli() -> str:
    """The toolwire binary: $TOOLWIRE_BIN, else the debug build in $CARGO_TARGET_DIR or
    the repository's target/."""
    candidates = [os.environ.get("TOOLWIRE_BIN")]
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(os.path.join(os.environ["CARGO_TARGET_DIR"], "debug", "toolwire"))
    candidates.append(str(ROOT / "target" / "debug" / "toolwire"))
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    found = shutil.which("toolwire")
    if found:
        return found
    need("the toolwire binary", "cargo build -p toolwire, or set TOOLWIRE_BIN")
    raise AssertionError("unreachable")


def run_cli(cli: str, *args: str, stdin: bytes | None = None, env: dict | None = None):
    """The binary's stdout, stderr and exit code; colour off as for any pipe."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    done = subprocess.run(
        [cli, *args], input=stdin, capture_output=True, env=full_env, timeout=120
    )
    return done.stdout.decode(), done.stderr.decode(), done.returncode


@pytest.fixture()
def backends(tmp_path):
    """(name, Store keyword arguments) for every backend this machine runs: SQLite + a
    blob directory always, Postgres + S3 when tests/services/start has exported their
    URLs (each test under an S3 prefix of its own; sessions have unique ids)."""
    out = [("sqlite+file", {"data_dir": str(tmp_path / "data")})]
    pg = os.environ.get("TOOLWIRE_TEST_POSTGRES_URL")
    s3 = os.environ.get("TOOLWIRE_TEST_S3_URL")
    if not pg or not s3:
        if os.environ.get("CI"):
            pytest.fail(
                "TOOLWIRE_TEST_POSTGRES_URL / TOOLWIRE_TEST_S3_URL are not set: CI must "
                'run the store on Postgres + S3 (eval "$(tests/services/start)")'
            )
        return out
    base, _, query = s3.partition("?")
    prefix = "py" + uuid.uuid4().hex[:12]
    out.append(
        (
            "postgres+s3",
            {"database_url": pg, "blob_url": f"{base.rstrip('/')}/{prefix}?{query}"},
        )
    )
    return out
