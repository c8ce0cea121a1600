//! Logging in to a tool source (an MCP server behind OAuth) from the web app: the app asks
//! for the authorization page, opens it in a tab, and the authorization server redirects
//! that tab back here, where the login is finished and the tab told it is done.

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use serde_json::Value as Json_;

use crate::AppState;
use crate::error::ApiError;

/// Where the authorization server sends the browser back: served by this server.
pub(crate) const CALLBACK_PATH: &str = "/oauth/callback";

fn no_server(name: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "no_server",
        format!("no MCP server is named {name:?}"),
    )
}

/// The source named `name` and its way of logging in.
fn login_of(
    state: &AppState,
    name: &str,
) -> Result<std::sync::Arc<dyn toolwire_tool::ToolSource>, ApiError> {
    let source = state.host.source(name).ok_or_else(|| no_server(name))?;
    if source.login().is_none() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "login_unsupported",
            format!("{name:?} is not a server one logs in to (only HTTP servers are)"),
        ));
    }
    Ok(source)
}

/// `POST /api/servers/{name}/login`: begins a login; answers the page to open. The
/// redirect comes back to this server under the name the request used (one the Host
/// guard accepts), so the tab that opens the page ends up here.
pub(crate) async fn begin(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Json<Json_>, ApiError> {
    let source = login_of(&state, &name)?;
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .ok_or_else(|| ApiError::new(StatusCode::BAD_REQUEST, "no_host", "no Host header"))?;
    let scheme = if state.guard.secure_cookies {
        "https"
    } else {
        "http"
    };
    let redirect = format!("{scheme}://{host}{CALLBACK_PATH}");
    let login = source.login().ok_or_else(|| no_server(&name))?;
    let start = login
        .begin_login(&redirect)
        .await
        .map_err(|why| ApiError::new(StatusCode::BAD_GATEWAY, "login_failed", why))?;
    Ok(Json(serde_json::json!({ "url": start.url })))
}

/// `POST /api/servers/{name}/logout`: forgets the server's tokens.
pub(crate) async fn logout(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<Json_>, ApiError> {
    let source = login_of(&state, &name)?;
    let login = source.login().ok_or_else(|| no_server(&name))?;
    let removed = login
        .logout()
        .await
        .map_err(|why| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "logout_failed", why))?;
    Ok(Json(serde_json::json!({ "removed": removed })))
}

/// `GET /oauth/callback?code=…&state=…`: the authorization server's redirect. The login
/// whose `state` it carries is finished (code exchanged, tokens stored, the server
/// reconnected in the background), and the tab is told how it went.
pub(crate) async fn callback(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let query = query.unwrap_or_default();
    let wanted = url_state(&query);
    let source = wanted.as_deref().and_then(|wanted| {
        state
            .host
            .source_list()
            .into_iter()
            .find(|s| s.login().is_some_and(|l| l.awaits(wanted)))
    });
    let (Some(wanted), Some(source)) = (wanted, source) else {
        return page(
            StatusCode::BAD_REQUEST,
            "Login not finished",
            "No login started here waits for this redirect (it may have expired, or been \
             finished already). Start it again from toolwire.",
        );
    };
    let name = source.status().name;
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let redirect = format!("http://{host}{CALLBACK_PATH}?{query}");
    let Some(login) = source.login() else {
        return page(StatusCode::BAD_REQUEST, "Login not finished", "");
    };
    match login.finish_login(&wanted, &redirect).await {
        Ok(()) => page(
            StatusCode::OK,
            "Logged in",
            &format!("toolwire is logged in to {name}. You can close this tab."),
        ),
        Err(why) => page(
            StatusCode::BAD_GATEWAY,
            "Login failed",
            &format!("Logging in to {name} failed: {why}"),
        ),
    }
}

/// The `state` parameter of a query string.
fn url_state(query: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
}

/// A small page for the tab: no script (the app's policy allows none inline), its text
/// escaped (it quotes a server's name and an authorization server's error).
fn page(status: StatusCode, title: &str, text: &str) -> Response {
    let body = format!(
        "<!doctype html><meta charset=utf-8><title>toolwire: {t}</title>\
         <h1 id=login-result data-status={s}>{t}</h1><p>{x}</p><p><a href=\"/\">Back to toolwire</a></p>",
        t = escape(title),
        s = status.as_u16(),
        x = escape(text)
    );
    let mut response = (status, Html(body)).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    response
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}
