//! The JSON reader: one snapshot (or events list) from a file, stdin or
//! kubectl's stdout into a jq value, streamed and projected, read exactly as
//! jq 1.6 reads it. Where the JSON is parsed, in the order the bytes go:
//!
//! - `snapshot.rs`: the entry point ([`snapshot::read`]) and its options.
//! - `frame.rs`: the frame walker. It walks the document's outer frame (the
//!   top-level object, the arrays right under it) and hands every value
//!   inside it to a parser; it names a document that is no List.
//! - `input.rs`: the buffer refilled from the reader, each value parsed from
//!   it as one slice; `fault.rs`: the error words, with line and column.
//! - `batch.rs`: the pods of a long array parsed on several threads, the
//!   cuts between them verified.
//! - `fast_parser.rs`: the fast byte-level parser that builds only what the
//!   projection keeps; `skip.rs`: its loop over the values the projection
//!   drops; `tokens.rs`: the tokens both read (whitespace, escapes, numbers
//!   with jq's NaN and infinities, literals). `serde_fallback.rs`:
//!   serde_json, for every value the fast parser doubts (it words the
//!   errors).
//! - `scan.rs`: the fast parser's byte scans (to the next token, to the end
//!   of a string's body, the newline count), with SSE2 and AVX2 where the
//!   CPU has them and a portable path that gives the same answers; the
//!   crate's only `unsafe`.
//! - `page.rs`: the head of a raw list page (its resourceVersion and
//!   continue token), read before its items.
//! - `shape.rs`: what to keep ([`Shape`], [`Projection`]) and the plan it
//!   compiles to; `intern.rs`: kept strings that repeat share their bytes,
//!   and kept objects made of such strings share one map.

mod batch;
mod fast_parser;
mod fault;
mod frame;
mod input;
mod intern;
pub mod page;
mod plan;
mod scan;
mod serde_fallback;
mod shape;
mod skip;
pub mod snapshot;
mod tokens;

pub use shape::{Projection, Reads, Shape};

/// The UTF-8 byte order mark: read past before a document's first byte, as
/// jq reads past it (`input.rs`, and `page.rs` for a raw page's head).
const BOM: &[u8] = b"\xef\xbb\xbf";
