//! Ending a call early from another thread: a kubectl process group, or a
//! connection to the check's proxy, whichever the call runs on.

use crate::cancel;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

/// Ends a running [`super::kubectl::Kubectl::run_stoppable`] call from another thread.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<Mutex<StopState>>);

#[derive(Debug, Default)]
struct StopState {
    /// The process group of the running call.
    group: Option<u32>,
    /// The connection of a call the proxy answers.
    socket: Option<UnixStream>,
    /// Stopped: a call that starts later is killed at once.
    stopped: bool,
}

impl Stop {
    fn state(&self) -> std::sync::MutexGuard<'_, StopState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Kill the call's kubectl (and what it started), now or when it starts.
    pub fn stop(&self) {
        let mut state = self.state();
        state.stopped = true;
        if let Some(group) = state.group {
            cancel::kill_group(group);
        }
        if let Some(socket) = &state.socket {
            let _ = socket.shutdown(std::net::Shutdown::Both);
        }
    }

    /// A call through the proxy reads from `socket`; false when stopped
    /// already (the call is not made).
    pub(super) fn started_socket(&self, socket: UnixStream) -> bool {
        let mut state = self.state();
        state.socket = Some(socket);
        !state.stopped
    }

    pub(super) fn started(&self, group: u32) {
        let mut state = self.state();
        state.group = Some(group);
        if state.stopped {
            cancel::kill_group(group);
        }
    }

    pub(super) fn ended(&self) {
        let mut state = self.state();
        state.group = None;
        state.socket = None;
    }
}
