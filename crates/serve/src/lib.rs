//! `dhumbal-run serve`: a study's web table (docs/studies.md). The server holds every card;
//! each participant gets only their seat's view ([`dhumbal_runner::study::View`], made from
//! the seat's `Observation`), as `play`'s person does.
//!
//! Each participant's games run on a thread of their own ([`session`]), the study's engine
//! (`dhumbal_runner::study::run_participant`) blocking there while it waits for the person and
//! while the agents think; the HTTP side (axum on a small tokio runtime) only passes
//! requests to that thread through a channel and reads the state it publishes. So no agent
//! ever runs on the async runtime, and several participants play at once, each in their own
//! game.
//!
//! The API (JSON, docs/studies.md): `GET /api/study`; `POST /api/signin` `{code, consent}` or
//! `POST /api/signup` `{access_code, consent}` → a token; with `Authorization: Bearer TOKEN`,
//! `GET /api/participants/{code}/state`, `POST .../action` `{seq, action}` (an index into the
//! state's `legal`), `POST .../hint` `{seq}`. Every refusal is a 4xx with `{"error": "..."}`.

mod api;
mod page;
mod session;

use std::net::SocketAddr;
use std::sync::Arc;

use dhumbal_runner::scenario::Study;
use dhumbal_runner::study::Folder;

pub use api::MAX_BODY;

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error("the server stopped: {0}")]
    Serve(std::io::Error),
}

/// What `serve` serves.
pub struct Options {
    /// The scenario's name (shown on the page).
    pub name: String,
    pub study: Arc<Study>,
    pub folder: Folder,
    /// Where to listen (port 0: any free port).
    pub addr: SocketAddr,
    /// Called with the address listened on, once listening.
    pub on_listen: Box<dyn FnOnce(SocketAddr) + Send>,
}

/// Serves the study until the process ends. Blocks.
pub fn serve(options: Options) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("serve")
        .enable_all()
        .build()
        .map_err(Error::Serve)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(options.addr)
            .await
            .map_err(|source| Error::Listen {
                addr: options.addr.to_string(),
                source,
            })?;
        let addr = listener.local_addr().map_err(Error::Serve)?;
        let app = api::router(api::App::new(options.name, options.study, options.folder));
        (options.on_listen)(addr);
        axum::serve(listener, app).await.map_err(Error::Serve)
    })
}
