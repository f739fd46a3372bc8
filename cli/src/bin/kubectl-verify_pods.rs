//! `kubectl verify-pods`: kubectl runs the executable `kubectl-verify_pods`
//! found on PATH for it (a dash of the command is an underscore of the file
//! name). Installed beside `verify-pods` by `cargo install`, with no step of
//! the user's own; the same program.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    verify_pods::main(verify_pods::Invocation::KubectlPlugin)
}
