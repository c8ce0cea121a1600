"""A protected MCP server for toolwire's login tests (tests/web/oauth.test.mjs): the
official SDK's MCPServer (FastMCP) with the SDK's own OAuth routes (metadata, dynamic
registration, authorize, token, revoke, bearer checks, RFC 8707 resource checks), backed
by an in-memory provider, since the SDK ships the provider protocol and not a store.

The authorization page asks a person to approve, as a real one does: a form with an
"Approve" button, which the test's Chromium clicks. Access tokens live `--token-seconds`,
so that a test can see toolwire refresh one; `GET /stats` says how many were issued and
refreshed (public, holds no token).

Run: venv/bin/python oauth_server.py PORT [--token-seconds N]
"""

import argparse
import asyncio
import html
import secrets
import time

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

SCOPE = "mcp:tools"


class MemoryProvider:
    """Clients, codes and tokens in dictionaries; every approval is a person's click."""

    def __init__(self, base: str, token_seconds: int):
        self.base = base
        self.token_seconds = token_seconds
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.waiting: dict[str, tuple[OAuthClientInformationFull, AuthorizationParams]] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.stats = {"issued": 0, "refreshed": 0, "registered": 0}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info
        self.stats["registered"] += 1

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        ticket = secrets.token_urlsafe(16)
        self.waiting[ticket] = (client, params)
        return f"{self.base}/consent?ticket={ticket}"

    def approve(self, ticket: str) -> str | None:
        found = self.waiting.pop(ticket, None)
        if found is None:
            return None
        client, params = found
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code: str):
        code = self.codes.get(authorization_code)
        return code if code and code.client_id == client.client_id else None

    async def exchange_authorization_code(self, client, authorization_code) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self.issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    def issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access = secrets.token_urlsafe(32)
        refresh = secrets.token_urlsafe(32)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + self.token_seconds,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        self.stats["issued"] += 1
        return OAuthToken(
            access_token=access,
            expires_in=self.token_seconds,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    async def load_refresh_token(self, client, refresh_token: str):
        token = self.refresh.get(refresh_token)
        return token if token and token.client_id == client.client_id else None

    async def exchange_refresh_token(self, client, refresh_token, scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        self.stats["refreshed"] += 1
        return self.issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--token-seconds", type=int, default=3600)
    args = parser.parse_args()
    base = f"http://127.0.0.1:{args.port}"
    provider = MemoryProvider(base, args.token_seconds)
    server = MCPServer(
        "toolwire-oauth-fixture",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=True,
            required_scopes=[SCOPE],
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
            ),
            revocation_options=RevocationOptions(enabled=True),
        ),
    )

    @server.tool()
    def whoami() -> str:
        """Says that the caller got through."""
        return "hello from the protected server"

    @server.custom_route("/consent", methods=["GET"])
    async def consent_page(request: Request) -> Response:
        ticket = html.escape(request.query_params.get("ticket", ""))
        return HTMLResponse(
            "<!doctype html><title>Approve toolwire</title><h1>toolwire asks for access</h1>"
            f'<form method="post" action="/consent"><input type="hidden" name="ticket" value="{ticket}">'
            '<button type="submit" id="approve">Approve</button></form>'
        )

    @server.custom_route("/consent", methods=["POST"])
    async def consent(request: Request) -> Response:
        form = await request.form()
        target = provider.approve(str(form.get("ticket", "")))
        if target is None:
            return HTMLResponse("unknown or used ticket", status_code=400)
        return RedirectResponse(target, status_code=302)

    @server.custom_route("/stats", methods=["GET"])
    async def stats(request: Request) -> Response:
        return JSONResponse(provider.stats)

    asyncio.run(server.run_streamable_http_async(host="127.0.0.1", port=args.port))


if __name__ == "__main__":
    main()
