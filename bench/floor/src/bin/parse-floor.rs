//! The parse floor of `make bench`: serde_json validating one JSON document
//! (`serde_json::from_slice::<IgnoredAny>`), building nothing. What any
//! reader that checks every byte of a snapshot is held against: the checker
//! must read, project and judge the same file in fewer instructions than
//! this program takes merely to validate it (bench/instructions.py counts
//! both with cachegrind).
//!
//! Usage: parse-floor FILE

#![forbid(unsafe_code)]

use serde::de::IgnoredAny;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: parse-floor FILE");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("parse-floor: {}: {e}", path.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    match serde_json::from_slice::<IgnoredAny>(&bytes) {
        Ok(IgnoredAny) => {
            println!("valid JSON, {} bytes", bytes.len());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("parse-floor: {}: {e}", path.to_string_lossy());
            ExitCode::from(1)
        }
    }
}
