//! The admin console's own files (`client-web/admin/`, built into
//! `client-web/dist-admin` by `npm run build:admin`), served at `/admin/`
//! from `--admin-console-dir` without a token: the same page and script for
//! everyone, holding no data; the page asks for the token and sends it with
//! each API request. Served with a content security policy that allows only
//! this origin's scripts, styles and requests, and no framing.

use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use std::path::PathBuf;
use tower_http::services::ServeDir;

/// The policy the console's pages are served with.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/// What `/admin/` answers when no console folder is configured.
pub const NOT_INSTALLED: &str = "the admin console is not installed on this shard: start mino-server with \
     --admin-console-dir (client-web/dist-admin, built by `npm run build:admin`); its API is at /admin/api/\n";

/// The routes of the console's files: `/admin` (redirected to `/admin/`),
/// `/admin/` and everything under it that the API does not take.
pub fn routes<S: Clone + Send + Sync + 'static>(dir: Option<PathBuf>) -> Router<S> {
    let files = dir.map(|d| ServeDir::new(d).append_index_html_on_directories(true));
    let serve = move |request: Request| serve(files.clone(), request);
    Router::new()
        .route("/admin", get(|| async { Redirect::permanent("/admin/") }))
        .route("/admin/", get(serve.clone()))
        .route("/admin/{*path}", get(serve))
}

/// Serves the file the path under `/admin/` names.
async fn serve(files: Option<ServeDir>, mut request: Request) -> Response {
    let Some(files) = files else { return (StatusCode::NOT_FOUND, NOT_INSTALLED).into_response() };
    let inner = request.uri().path().strip_prefix("/admin").unwrap_or("/").to_owned();
    match inner.parse::<Uri>() {
        Ok(uri) => *request.uri_mut() = uri,
        Err(_) => return StatusCode::NOT_FOUND.into_response(),
    }
    let mut response = match tower::ServiceExt::oneshot(files, request).await {
        Ok(r) => r.into_response(),
        Err(never) => match never {},
    };
    let h = response.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    let cache = if inner.starts_with("/assets/") { "public, max-age=31536000, immutable" } else { "no-cache" };
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    response
}
