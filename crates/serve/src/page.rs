//! The participant's page: HTML, CSS and JavaScript compiled into the binary and served as
//! they are. Nothing on the page is written from text as HTML: the script sets text only
//! (`textContent`), so a study's instructions, a code or an agent's words cannot inject
//! markup, and the Content-Security-Policy allows the page's own script and style alone.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

const HTML: &str = include_str!("page/page.html");
const CSS: &str = include_str!("page/page.css");
const JS: &str = include_str!("page/page.js");

fn with_type(body: &'static str, kind: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

pub async fn html() -> Response {
    with_type(HTML, "text/html; charset=utf-8")
}

pub async fn css() -> Response {
    with_type(CSS, "text/css; charset=utf-8")
}

pub async fn js() -> Response {
    with_type(JS, "text/javascript; charset=utf-8")
}
