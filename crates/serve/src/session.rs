//! A participant's session: the thread that plays their games, the channel that brings it
//! their requests, and the state it publishes.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Instant;

use serde::Serialize;
use tokio::sync::{oneshot, watch};

use dhumbal_runner::scenario::Study;
use dhumbal_runner::study::{self, Answer, Desk, Folder, GameResult, Hint, Participant, View};

/// What a participant sees now.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum State {
    /// Their games are being replayed or the agents are playing.
    Starting,
    /// Their decision.
    Play(Box<View>),
    /// Every game played.
    Done { results: Vec<GameResult> },
    /// The session failed (the server's fault, not theirs).
    Failed { message: String },
}

impl State {
    /// Whether this state comes after the person's decision `seq`.
    pub fn after(&self, seq: u64) -> bool {
        match self {
            State::Starting => false,
            State::Play(v) => v.seq > seq,
            State::Done { .. } | State::Failed { .. } => true,
        }
    }
}

/// A refusal of a request, with its HTTP status.
#[derive(Clone, Debug)]
pub struct Refused {
    pub status: u16,
    pub message: String,
}

fn refused(status: u16, message: String) -> Refused {
    Refused { status, message }
}

/// A request to the participant's thread.
pub enum Request {
    Act {
        seq: u64,
        index: usize,
        reply: oneshot::Sender<Result<(), Refused>>,
    },
    Hint {
        seq: u64,
        reply: oneshot::Sender<Result<Hint, Refused>>,
    },
}

/// A participant's session, shared by the requests.
pub struct Session {
    pub code: String,
    pub requests: mpsc::Sender<Request>,
    pub state: watch::Receiver<State>,
}

/// The participant's [`Desk`]: the requests' channel, the published state.
struct WebDesk {
    requests: mpsc::Receiver<Request>,
    state: watch::Sender<State>,
}

impl Desk for WebDesk {
    fn decide(&mut self, view: &View, hint: &mut dyn FnMut() -> Hint) -> Option<Answer> {
        self.state.send_replace(State::Play(Box::new(view.clone())));
        let shown = Instant::now();
        let n = view.legal.len();
        loop {
            match self.requests.recv().ok()? {
                Request::Hint { seq, reply } => {
                    let _ = reply.send(match check_seq(seq, view.seq) {
                        Err(r) => Err(r),
                        Ok(()) if !view.hints => {
                            Err(refused(403, "this study gives no hints".into()))
                        }
                        Ok(()) => Ok(hint()),
                    });
                }
                Request::Act { seq, index, reply } => {
                    if let Err(r) = check_seq(seq, view.seq) {
                        let _ = reply.send(Err(r));
                        continue;
                    }
                    if index >= n {
                        let _ = reply.send(Err(refused(
                            422,
                            format!(
                                "action {index} is not legal here: the legal actions are 0 to {} \
                                 (the state's `legal`)",
                                n - 1
                            ),
                        )));
                        continue;
                    }
                    let ns = shown.elapsed().as_nanos() as u64;
                    let _ = reply.send(Ok(()));
                    return Some(Answer { index, ns });
                }
            }
        }
    }

    fn finished(&mut self, results: &[GameResult]) {
        self.state.send_replace(State::Done {
            results: results.to_vec(),
        });
    }
}

/// A request's sequence number against the decision's.
fn check_seq(seq: u64, now: u64) -> Result<(), Refused> {
    if seq < now {
        Err(refused(
            409,
            format!(
                "decision {seq} was answered already (a replayed or stale request); the \
                 decision now is {now}"
            ),
        ))
    } else if seq > now {
        Err(refused(
            409,
            format!("not your turn: decision {seq} has not come; the decision now is {now}"),
        ))
    } else {
        Ok(())
    }
}

/// Starts `who`'s session: their games on a thread of their own, from where their journal
/// ends.
pub fn start(study: Arc<Study>, folder: Folder, who: Participant) -> Arc<Session> {
    let (tx, rx) = mpsc::channel();
    let (state_tx, state_rx) = watch::channel(State::Starting);
    let published = state_tx.clone();
    let on_error = state_tx.clone();
    let desk = WebDesk {
        requests: rx,
        state: state_tx,
    };
    let code = who.code.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("participant-{code}"))
        .spawn(move || {
            if let Err(e) = study::run_participant(&study, &folder, &who, Box::new(desk)) {
                published.send_replace(State::Failed {
                    message: e.to_string(),
                });
            }
        });
    if let Err(e) = spawned {
        on_error.send_replace(State::Failed {
            message: format!("cannot start the participant's thread: {e}"),
        });
    }
    Arc::new(Session {
        code,
        requests: tx,
        state: state_rx,
    })
}
