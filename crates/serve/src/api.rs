//! The JSON API and its routes (docs/studies.md). Bodies are read as bytes and parsed here,
//! so that every refusal (a body too large, malformed JSON, a missing field) is a 4xx with a
//! JSON message of ours, never the framework's plain text.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, State as Extract};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use dhumbal_runner::scenario::study::valid_code;
use dhumbal_runner::scenario::{Study, StudyCodes};
use dhumbal_runner::study::{Folder, Participant};

use crate::session::{self, Refused, Request, Session, State};

/// The largest request body accepted (an action is some 30 bytes).
pub const MAX_BODY: usize = 4096;

/// How long a request waits for the agents to play up to the person's next decision.
const WAIT: Duration = Duration::from_secs(60);

/// What every request shares.
pub struct App {
    name: String,
    study: Arc<Study>,
    folder: Folder,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Token → participant code.
    tokens: Mutex<HashMap<String, String>>,
    /// Sign-ups one at a time (a code's number is its place among them).
    signup: Mutex<()>,
}

impl App {
    pub fn new(name: String, study: Arc<Study>, folder: Folder) -> Arc<App> {
        Arc::new(App {
            name,
            study,
            folder,
            sessions: Mutex::new(HashMap::new()),
            tokens: Mutex::new(HashMap::new()),
            signup: Mutex::new(()),
        })
    }
}

type Shared = Arc<App>;

pub fn router(app: Shared) -> Router {
    Router::new()
        .route("/", get(crate::page::html))
        .route("/page.css", get(crate::page::css))
        .route("/page.js", get(crate::page::js))
        .route("/api/study", get(study_info))
        .route("/api/signin", post(signin))
        .route("/api/signup", post(signup))
        .route("/api/participants/{code}/state", get(state))
        .route("/api/participants/{code}/action", post(action))
        .route("/api/participants/{code}/hint", post(hint))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(app)
}

/// A refusal as the API answers it: the status and `{"error": message}`.
pub struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.0, axum::Json(json!({ "error": self.1 }))).into_response();
        no_store(r.headers_mut());
        r
    }
}

impl From<Refused> for ApiError {
    fn from(r: Refused) -> ApiError {
        ApiError(
            StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST),
            r.message,
        )
    }
}

fn err(status: StatusCode, message: impl Into<String>) -> ApiError {
    ApiError(status, message.into())
}

fn no_store(h: &mut HeaderMap) {
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

fn ok(value: Value) -> Response {
    let mut r = axum::Json(value).into_response();
    no_store(r.headers_mut());
    r
}

/// The body as `T`: too large a body is 413, anything else unreadable 400, each with what
/// was expected.
fn body<T: DeserializeOwned>(
    raw: Result<Bytes, BytesRejection>,
    expected: &str,
) -> Result<T, ApiError> {
    let bytes = raw.map_err(|r| {
        let status = r.status();
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            err(status, format!("the body is larger than {MAX_BODY} bytes"))
        } else {
            err(status, format!("cannot read the body: {}", r.body_text()))
        }
    })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        err(
            StatusCode::BAD_REQUEST,
            format!("expected a JSON body {expected}: {e}"),
        )
    })
}

async fn not_found() -> ApiError {
    err(
        StatusCode::NOT_FOUND,
        "no such page or API route (docs/studies.md)",
    )
}

async fn study_info(Extract(app): Extract<Shared>) -> Response {
    let s = &app.study;
    ok(json!({
        "name": app.name,
        "instructions": s.instructions,
        "consent": s.consent,
        "games": s.games,
        "players": s.players(),
        "scoring": if s.is_points() { "points" } else { "coins" },
        "rounds": s.rounds,
        "hints": s.advisor.is_some(),
        "signup": s.codes == StudyCodes::SignUp,
        "access_code": s.access_code.is_some(),
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SignIn {
    code: String,
    #[serde(default)]
    consent: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SignUp {
    #[serde(default)]
    access_code: Option<String>,
    #[serde(default)]
    consent: bool,
}

async fn signin(
    Extract(app): Extract<Shared>,
    raw: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let b: SignIn = body(raw, r#"{"code": "...", "consent": true}"#)?;
    check_consent(&app, b.consent)?;
    let index = match &app.study.codes {
        StudyCodes::Listed(codes) => codes.iter().position(|c| *c == b.code),
        StudyCodes::SignUp => {
            let signups = app.folder.signups().map_err(internal)?;
            signups.iter().position(|c| *c == b.code)
        }
    };
    let Some(index) = index else {
        return Err(err(
            StatusCode::UNAUTHORIZED,
            "unknown participant code: check the code you were given",
        ));
    };
    enter(
        &app,
        Participant {
            code: b.code,
            index,
        },
    )
    .await
}

async fn signup(
    Extract(app): Extract<Shared>,
    raw: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let b: SignUp = body(raw, r#"{"access_code": "...", "consent": true}"#)?;
    if app.study.codes != StudyCodes::SignUp {
        return Err(err(
            StatusCode::FORBIDDEN,
            "this study has no open sign-up: sign in with the code you were given",
        ));
    }
    if let Some(want) = &app.study.access_code
        && b.access_code.as_deref() != Some(want.as_str())
    {
        return Err(err(StatusCode::FORBIDDEN, "wrong access code"));
    }
    check_consent(&app, b.consent)?;
    let who = {
        let _one = app
            .signup
            .lock()
            .expect("the sign-up lock is never poisoned");
        let index = app.folder.signups().map_err(internal)?.len();
        let code = format!("P{index:03}-{}", random_hex(3));
        app.folder.add_signup(&code).map_err(internal)?;
        Participant { code, index }
    };
    enter(&app, who).await
}

fn check_consent(app: &App, consent: bool) -> Result<(), ApiError> {
    if !app.study.consent.is_empty() && !consent {
        return Err(err(
            StatusCode::BAD_REQUEST,
            "the study's consent must be agreed to before playing (`consent: true`)",
        ));
    }
    Ok(())
}

fn internal(e: impl std::fmt::Display) -> ApiError {
    err(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
}

/// `bytes` random bytes in hex, from the operating system's randomness (through the
/// standard library's hasher keys): a token must not be guessable.
fn random_hex(bytes: usize) -> String {
    let mut out = String::new();
    while out.len() < 2 * bytes {
        let word = RandomState::new().hash_one(out.len());
        out.push_str(&format!("{word:016x}"));
    }
    out.truncate(2 * bytes);
    out
}

/// Signs `who` in: their session (started if it is not), a fresh token, their state.
async fn enter(app: &Shared, who: Participant) -> Result<Response, ApiError> {
    if !valid_code(&who.code) {
        return Err(err(StatusCode::BAD_REQUEST, "not a participant code"));
    }
    let session = {
        let mut sessions = app.sessions.lock().expect("never poisoned");
        let live = sessions
            .get(&who.code)
            .filter(|s| !matches!(*s.state.borrow(), State::Failed { .. }))
            .cloned();
        match live {
            Some(s) => s,
            None => {
                let s = session::start(app.study.clone(), app.folder.clone(), who.clone());
                sessions.insert(who.code.clone(), s.clone());
                s
            }
        }
    };
    let token = random_hex(16);
    app.tokens
        .lock()
        .expect("never poisoned")
        .insert(token.clone(), who.code.clone());
    let state = settled(&session, |s| !matches!(s, State::Starting)).await;
    Ok(ok(json!({
        "participant": who.code,
        "token": token,
        "state": state,
    })))
}

/// The session's state once `ready` says it is (or after [`WAIT`]).
async fn settled(session: &Session, ready: impl Fn(&State) -> bool) -> State {
    let mut rx = session.state.clone();
    let got = tokio::time::timeout(WAIT, rx.wait_for(|s| ready(s)))
        .await
        .ok()
        .and_then(|r| r.ok().map(|s| s.clone()));
    got.unwrap_or_else(|| session.state.borrow().clone())
}

/// The session of `code`, if the request's token is that participant's.
fn authorised(app: &App, headers: &HeaderMap, code: &str) -> Result<Arc<Session>, ApiError> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or_else(|| {
            err(
                StatusCode::UNAUTHORIZED,
                "no token: sign in first (Authorization: Bearer TOKEN)",
            )
        })?;
    let owner = app
        .tokens
        .lock()
        .expect("never poisoned")
        .get(token)
        .cloned()
        .ok_or_else(|| {
            err(
                StatusCode::UNAUTHORIZED,
                "unknown or expired token: sign in again with your code",
            )
        })?;
    if owner != code {
        return Err(err(
            StatusCode::FORBIDDEN,
            "this token is another participant's: you may play only your own game",
        ));
    }
    app.sessions
        .lock()
        .expect("never poisoned")
        .get(code)
        .cloned()
        .ok_or_else(|| err(StatusCode::UNAUTHORIZED, "no session: sign in again"))
}

async fn state(
    Extract(app): Extract<Shared>,
    Path(code): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let session = authorised(&app, &headers, &code)?;
    let state = settled(&session, |s| !matches!(s, State::Starting)).await;
    Ok(ok(json!({ "participant": session.code, "state": state })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Act {
    seq: u64,
    action: usize,
}

async fn action(
    Extract(app): Extract<Shared>,
    Path(code): Path<String>,
    headers: HeaderMap,
    raw: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let session = authorised(&app, &headers, &code)?;
    let b: Act = body(raw, r#"{"seq": N, "action": I}"#)?;
    ask(&session, |reply| Request::Act {
        seq: b.seq,
        index: b.action,
        reply,
    })
    .await?;
    let state = settled(&session, |s| s.after(b.seq)).await;
    Ok(ok(json!({ "participant": session.code, "state": state })))
}

/// Sends the session's thread the request `made` around a reply channel, and awaits its
/// answer: what it gives, or its refusal; a thread that has ended is [`over`].
async fn ask<T>(
    session: &Session,
    made: impl FnOnce(tokio::sync::oneshot::Sender<Result<T, Refused>>) -> Request,
) -> Result<T, ApiError> {
    let (reply, answer) = tokio::sync::oneshot::channel();
    if session.requests.send(made(reply)).is_err() {
        return Err(over(session));
    }
    match answer.await {
        Ok(Ok(given)) => Ok(given),
        Ok(Err(refused)) => Err(refused.into()),
        Err(_) => Err(over(session)),
    }
}

/// The refusal of a request to a session whose thread has ended.
fn over(session: &Session) -> ApiError {
    match &*session.state.borrow() {
        State::Failed { message } => err(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the session failed: {message}"),
        ),
        _ => err(StatusCode::CONFLICT, "your games are over: nothing to play"),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AskHint {
    seq: u64,
}

async fn hint(
    Extract(app): Extract<Shared>,
    Path(code): Path<String>,
    headers: HeaderMap,
    raw: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let session = authorised(&app, &headers, &code)?;
    let b: AskHint = body(raw, r#"{"seq": N}"#)?;
    let h = ask(&session, |reply| Request::Hint { seq: b.seq, reply }).await?;
    Ok(ok(json!({ "hint": h })))
}
