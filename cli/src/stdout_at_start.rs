//! Whether stdout was closed when the process started (`verify-pods check
//! >&-`), read before the Rust runtime hides it.
//!
//! Before `main`, the Rust runtime opens /dev/null (for reading and
//! writing) on every standard descriptor it finds closed, so from `main` on
//! a closed stdout cannot be told from one a parent gave a read-write
//! /dev/null on purpose (Python's `subprocess.DEVNULL`). On Linux the
//! dynamic loader runs the functions of `.init_array` before the C `main`
//! that starts the Rust runtime: [`probe`] runs there and records what
//! descriptor 1 was. Elsewhere nothing is recorded, and [`closed`] says
//! `None`: the caller falls back to its guess.
//!
//! This is the one module of the crate with `unsafe` code:
//! - `#[link_section = ".init_array"]` places a pointer to `probe` where
//!   the loader calls it, with no arguments, once, before any Rust code of
//!   the program runs; `probe` takes no arguments, returns nothing, panics
//!   never and touches only an atomic, so running it that early is sound.
//! - `fcntl(1, F_GETFD)` reads the descriptor's flags and changes nothing;
//!   it is safe for any integer descriptor (a closed one is `EBADF`, -1).
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU8, Ordering};

/// 0: not probed (not Linux, or the loader did not run `probe`);
/// 1: stdout was open at start; 2: stdout was closed at start.
static STDOUT_AT_START: AtomicU8 = AtomicU8::new(0);

/// Whether stdout was closed at start: `None` where that was not recorded.
pub(crate) fn closed() -> Option<bool> {
    match STDOUT_AT_START.load(Ordering::Relaxed) {
        1 => Some(false),
        2 => Some(true),
        _ => None,
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::{Ordering, STDOUT_AT_START};
    use std::os::raw::c_int;

    const F_GETFD: c_int = 1;

    extern "C" {
        fn fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
    }

    /// Records whether descriptor 1 is open, before the runtime starts.
    extern "C" fn probe() {
        // SAFETY: F_GETFD only reads the flags of the descriptor (module doc).
        let open = unsafe { fcntl(1, F_GETFD) } != -1;
        STDOUT_AT_START.store(if open { 1 } else { 2 }, Ordering::Relaxed);
    }

    /// The loader's entry for `probe` (module doc: why this is sound).
    #[used]
    #[link_section = ".init_array"]
    static PROBE: extern "C" fn() = probe;
}
