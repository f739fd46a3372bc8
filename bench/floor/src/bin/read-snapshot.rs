//! The checker's reader alone, as `check --snapshot FILE --workloads
//! false` reads the pods: every document of FILE, projected by the pods
//! projection of that check, and nothing judged. `make bench` counts its instructions beside the whole
//! check's, to tell the reader's share from jaq's.
//!
//! Usage: read-snapshot FILE [THREADS]

#![forbid(unsafe_code)]

use checker::reader::{Projection, Reads};
use checker::snapshot::{self, ReadOptions};
use std::process::ExitCode;

/// The allocator of verify-pods, so that the reader alone costs here what
/// it costs in the checker.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: read-snapshot FILE [THREADS]");
        return ExitCode::from(2);
    };
    let mut options = ReadOptions::default();
    if let Some(threads) = args.next() {
        match threads.to_str().and_then(|t| t.parse().ok()) {
            Some(threads) => options.threads = threads,
            None => {
                eprintln!("read-snapshot: THREADS is a number");
                return ExitCode::from(2);
            }
        }
    }
    let name = path.to_string_lossy().into_owned();
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) => {
            eprintln!("read-snapshot: {name}: {e}");
            return ExitCode::from(2);
        }
    };
    // As the bench's check reads them (`--workloads false`): the pods
    // keep no owners but the excluded kinds'.
    let reads = Reads {
        selector: false,
        workloads: false,
    };
    let owner_kinds = checker::Programs::default_excluded_owner_kinds();
    let shape = Projection::for_reads(&owner_kinds, reads).pods;
    match snapshot::read_documents_with(file, &name, &shape, &options) {
        Ok(documents) => {
            println!("{} documents read", documents.len());
            // The check leaves the last snapshot's values unfreed as the
            // process ends (cli/src/check.rs): so does the reader alone,
            // whose count would otherwise hold a free per value the check
            // never makes.
            std::mem::forget(documents);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("read-snapshot: {e}");
            ExitCode::from(1)
        }
    }
}
