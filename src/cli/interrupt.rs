//! Ctrl-C, in one place. While a command that plays or trains runs, the first Ctrl-C sets a
//! stop flag (the work in hand is saved, then the command exits 130 and says how to finish),
//! and a second one exits at once with 130. The handlers live as long as the [`Interrupt`]
//! guard: dropped, they are unregistered, so that a run inside another process (the Python
//! package's `dhumbal.run`) leaves no handler behind and that process's own Ctrl-C handling
//! comes back.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use signal_hook::SigId;
use signal_hook::consts::SIGINT;

/// The Ctrl-C handlers of one command, and its stop flag.
pub struct Interrupt {
    stop: Arc<AtomicBool>,
    ids: Vec<SigId>,
}

impl Interrupt {
    /// Registers the handlers: the first Ctrl-C sets the flag, a second (the flag already
    /// set) exits the process with 130.
    pub fn install() -> anyhow::Result<Interrupt> {
        let stop = Arc::new(AtomicBool::new(false));
        // The conditional shutdown first: at the second Ctrl-C the flag is already set, so it
        // exits; at the first it is not, and the flag is then set by the second handler.
        let ids = vec![
            signal_hook::flag::register_conditional_shutdown(SIGINT, 130, Arc::clone(&stop))?,
            signal_hook::flag::register(SIGINT, Arc::clone(&stop))?,
        ];
        Ok(Interrupt { stop, ids })
    }

    /// The flag the first Ctrl-C sets.
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }
}

impl Drop for Interrupt {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
