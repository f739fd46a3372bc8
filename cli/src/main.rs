//! `verify-pods`: see the library of this package.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    verify_pods::main(verify_pods::Invocation::Direct)
}
