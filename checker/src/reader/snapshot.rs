//! The reader's entry point: a snapshot (`kubectl get pods -A -o json`) or
//! an events list from a file, stdin or kubectl's stdout, streamed,
//! projected, never held whole; errors name line and column.
//!
//! Parsers are fastest on a slice (serde_json's reader-based parser goes
//! byte by byte through `io::Bytes`), but a slice of a 1.7 GB document is
//! the whole document in memory. So the outer frame of the document (the
//! top-level object and the arrays right under it, like `items`) is walked
//! over a refilled buffer (`frame.rs`, `input.rs`), and every value inside
//! that frame (one pod, one key's value) is parsed from the buffer as a
//! slice, with the projection: by `fast_parser.rs`, or by serde_json
//! (`serde_fallback.rs`) when the fast parser doubts it. Only the buffer
//! (two MiB, more when a single value is larger) and the projected values
//! stay in memory.
//!
//! The elements of a long array (the pods) are parsed by several threads at
//! once, each taking a share of the buffer; see `batch.rs` for why that
//! gives exactly the document one thread reads.
//!
//! The reading is in three parts besides this entry point: `frame.rs` walks
//! the document's outer frame (and names a document that is no List),
//! `input.rs` holds the refilled buffer and hands each value in it to a
//! parser, `fault.rs` words what could not be read, with line and column.

pub use super::fault::SnapshotError;
use super::frame::{document, documents};
use super::input::Input;
pub use super::input::{ReadOptions, ScanPath};
use super::plan::Plan;
use super::shape::Shape;
use jaq_json::Val;
use std::io::Read;

/// Parse one JSON document from `reader`, keeping only what `shape` keeps.
/// Anything after the document but whitespace is an error.
pub fn read(reader: impl Read, source: &str, shape: &Shape) -> Result<Val, SnapshotError> {
    read_with(reader, source, shape, &ReadOptions::default())
}

/// [`read`], with the reading machinery chosen by `options`.
pub fn read_with(
    reader: impl Read,
    source: &str,
    shape: &Shape,
    options: &ReadOptions,
) -> Result<Val, SnapshotError> {
    let plan = Plan::new(shape);
    let mut input = Input::new(reader, options);
    document(&mut input, &plan).map_err(|fault| fault.into_error(source))
}

/// Parse every JSON document of `reader` until its end, each kept as
/// `shape` keeps it: a snapshot is one `kubectl get pods -A -o json` List or
/// the raw pages of a paged list, written one after the other (`jq -s`
/// reads both alike). Whitespace between documents is allowed, nothing at
/// all is an error ("empty input"), as for [`read`].
pub fn read_documents(
    reader: impl Read,
    source: &str,
    shape: &Shape,
) -> Result<Vec<Val>, SnapshotError> {
    read_documents_with(reader, source, shape, &ReadOptions::default())
}

/// [`read_documents`], with the reading machinery chosen by `options`.
pub fn read_documents_with(
    reader: impl Read,
    source: &str,
    shape: &Shape,
    options: &ReadOptions,
) -> Result<Vec<Val>, SnapshotError> {
    let plan = Plan::new(shape);
    let mut input = Input::new(reader, options);
    documents(&mut input, &plan).map_err(|fault| fault.into_error(source))
}

#[cfg(test)]
mod tests {
    use super::super::input::BATCH_MIN;
    use super::*;
    use crate::contract::words;

    /// Read `data` with `threads`: the document (as JSON) or the error, and
    /// how many elements were read in batches.
    fn read_threads(data: &[u8], shape: &Shape, threads: usize) -> (Result<String, String>, usize) {
        let (doc, batched, _) = read_batches(data, shape, threads);
        (doc, batched)
    }

    /// [`read_threads`], and how many batches were set up.
    fn read_batches(
        data: &[u8],
        shape: &Shape,
        threads: usize,
    ) -> (Result<String, String>, usize, usize) {
        let options = ReadOptions {
            threads,
            ..ReadOptions::default()
        };
        let mut input = Input::new(data, &options);
        let doc = document(&mut input, &Plan::new(shape))
            .map(|v| crate::engine::to_json(&v))
            .map_err(|fault| fault.into_error("big.json").to_string());
        (doc, input.batched, input.batches)
    }

    /// A kubectl-like snapshot of `pods` pods, indented, about 1 KB each.
    fn big_snapshot(pods: usize) -> Vec<u8> {
        let items: Vec<serde_json::Value> = (0..pods)
            .map(|i| {
                serde_json::json!({
                    "metadata": {"name": format!("pod-{i}"), "namespace": format!("ns-{}", i % 7),
                                 "uid": format!("uid-{i}"), "labels": {"app": "web", "n": i},
                                 "ownerReferences": [{"kind": if i % 3 == 0 { "Job" } else { "ReplicaSet" }}]},
                    "spec": {"nodeName": if i % 5 == 0 { String::new() } else { format!("node-{}", i % 11) },
                             "containers": [{"name": "c", "image": "busybox", "args": ["sleep", "3600"]}]},
                    "status": {"phase": (["Running", "Pending", "Failed"][i % 3]),
                               "containerStatuses": [{"state": {"terminated": {"reason": "Error", "message": "exit 1"}}}],
                               "conditions": [{"type": "Ready", "status": "True", "message": "x".repeat(i % 300)}]}
                })
            })
            .collect();
        serde_json::to_vec_pretty(
            &serde_json::json!({"apiVersion": "v1", "items": items, "kind": "List"}),
        )
        .unwrap()
    }

    #[test]
    fn threads_read_the_same_document_in_batches() {
        let data = big_snapshot(12_000);
        let shape = crate::reader::Projection::canonical().pods;
        let (alone, none) = read_threads(&data, &shape, 1);
        assert!(alone.is_ok(), "{alone:?}");
        assert_eq!(none, 0);
        for threads in 2..=4 {
            let (together, batched) = read_threads(&data, &shape, threads);
            assert!(together == alone, "{threads} threads read another document");
            assert!(
                batched > 11_000,
                "{threads} threads: only {batched} pods in batches"
            );
        }
    }

    #[test]
    fn threads_refuse_alike_where_one_thread_refuses() {
        let data = big_snapshot(6_000);
        let shape = crate::reader::Projection::canonical().pods;
        let late = data.len() * 3 / 4;
        let at = late
            + data[late..]
                .windows(4)
                .position(|w| w == b"\"xx\"")
                .unwrap()
            + 1;
        let faults: [&[u8]; 4] = [b"\xff", b"\\q", b"\\u00e9", b"\n"];
        for fault in faults {
            let mut bad = data.clone();
            bad.splice(at..at, fault.iter().copied());
            let (alone, _) = read_threads(&bad, &shape, 1);
            let (together, _) = read_threads(&bad, &shape, 2);
            assert_eq!(together, alone, "{:?}", String::from_utf8_lossy(fault));
        }
    }

    /// kubectl's Go encoder writes `&`, `<` and `>` as `\u0026`, `\u003c`
    /// and `\u003e`. An escape in every pod must not end a batch: the
    /// threads once set their batch up again before every such pod.
    #[test]
    fn escapes_do_not_end_a_batch() {
        let shape = crate::reader::Projection::canonical().pods;
        let escape = |json: Vec<u8>| {
            let text = String::from_utf8(json).unwrap();
            let arg = r#"sh -c \"a \u0026\u0026 b \u003e c\""#;
            text.replace("busybox", arg).into_bytes()
        };
        let indented = escape(big_snapshot(12_000));
        let parsed: serde_json::Value = serde_json::from_slice(&indented).unwrap();
        let compact = escape(serde_json::to_vec(&parsed).unwrap());
        assert!(compact.len() > 8 * BATCH_MIN, "{} bytes", compact.len());
        for (form, data) in [("indented", indented), ("compact", compact)] {
            let (alone, _, _) = read_batches(&data, &shape, 1);
            assert!(alone.is_ok(), "{alone:?}");
            for threads in 2..=3 {
                let (together, batched, batches) = read_batches(&data, &shape, threads);
                assert!(
                    together == alone,
                    "{form}, {threads} threads read another document"
                );
                assert!(
                    batched > 11_000,
                    "{form}, {threads} threads: {batched} pods in batches"
                );
                assert!(
                    batches < 100,
                    "{form}, {threads} threads: {batches} batches set up"
                );
            }
        }
    }

    #[test]
    fn a_bom_at_the_start_is_skipped_as_jq_skips_it() {
        let doc = b"\xef\xbb\xbf{\"items\":[{\"metadata\":{\"name\":\"p\"}}]}";
        let got = read_str(doc).unwrap();
        assert_eq!(
            crate::engine::to_json(&got),
            r#"{"items":[{"metadata":{"name":"p"}}]}"#
        );
        let e = read_str(b"\xef\xbb\xbf").unwrap_err();
        assert!(e.to_string().starts_with("snap.json: empty input"), "{e}");
        let e = read_str(b"\xef\xbb\xbf \n\t").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("snap.json:2:1: invalid JSON: EOF"),
            "{e}"
        );
        // Only at the very start, as in jq: anywhere else it is no JSON.
        let e = read_str(b" \xef\xbb\xbf{}").unwrap_err();
        assert_eq!(e.position, Some((1, 2)), "{e}");
        let e = read_str(b"\xef\xbb\xbf\xef\xbb\xbf{}").unwrap_err();
        assert_eq!(e.position, Some((1, 4)), "{e}");
        // Positions after it count its bytes, as they count every byte.
        let e = read_str(b"\xef\xbb\xbf{\"items\":[}").unwrap_err();
        assert_eq!(e.position, Some((1, 14)), "{e}");
    }

    #[test]
    fn numbers_beyond_f64_read_as_jq_prints_them() {
        let shape = crate::reader::Projection::canonical().pods;
        let doc = br#"{"items":[{"spec":{"nodeName":1e400},"status":{"phase":-1E+999}}]}"#;
        let got = read(&doc[..], "snap.json", &shape).unwrap();
        let max = "1.7976931348623157e308";
        let expected =
            format!(r#"{{"items":[{{"spec":{{"nodeName":{max}}},"status":{{"phase":-{max}}}}}]}}"#);
        assert_eq!(crate::engine::to_json(&got), expected);
    }

    #[test]
    fn surrogate_escapes_read_as_jq_reads_them() {
        let shape = crate::reader::Projection::canonical().pods;
        let doc = br#"{"items":[{"metadata":{"name":"a\udc00\ud83d\ude00"}}]}"#;
        let got = read(&doc[..], "snap.json", &shape).unwrap();
        let json = crate::engine::to_json(&got);
        assert_eq!(
            json,
            "{\"items\":[{\"metadata\":{\"name\":\"a\u{fffd}\u{1f600}\"}}]}"
        );
        // jq refuses a lone leading surrogate even where nothing reads it.
        let doc = b"{\"items\":[{\"metadata\":{\"labels\":{\"a\":\n \"x\\ud800\"}}}]}";
        let e = read(&doc[..], "snap.json", &shape).unwrap_err();
        assert_eq!(e.position, Some((2, 4)), "{e}");
        assert!(e.message.contains("lone leading surrogate"), "{e}");
    }

    /// jq 1.6 refuses to open a container on a parser stack 256 high (an
    /// array takes one, an object two: itself and its key), kept or not.
    #[test]
    fn nesting_is_refused_exactly_where_jq_refuses_it() {
        let shape = crate::reader::Projection::canonical().pods;
        let deep = |arrays: usize| format!("{}1{}", "[".repeat(arrays), "]".repeat(arrays));
        // Under `labels.x`, the stack holds 4 objects with their keys and items.
        let labels = |arrays| {
            format!(
                r#"{{"items":[{{"metadata":{{"labels":{{"x":{}}}}}}}]}}"#,
                deep(arrays)
            )
        };
        let kept = |arrays| {
            format!(
                r#"{{"items":[{{"metadata":{{"ownerReferences":{}}}}}]}}"#,
                deep(arrays)
            )
        };
        assert!(read(labels(247).as_bytes(), "s", &shape).is_ok());
        let e = read(labels(248).as_bytes(), "s", &shape).unwrap_err();
        assert_eq!(e.position, Some((1, 37 + 248)), "{e}"); // jq says 285 too
        assert!(e.message.contains("nested deeper than jq 1.6 reads"), "{e}");
        assert!(read(kept(249).as_bytes(), "s", &shape).is_ok());
        assert!(read(kept(250).as_bytes(), "s", &shape).is_err());
        let top = |arrays: usize| format!("{}{}", "[".repeat(arrays), "]".repeat(arrays));
        assert!(read(top(256).as_bytes(), "s", &Shape::Keep).is_ok());
        let e = read(top(257).as_bytes(), "s", &Shape::Keep).unwrap_err();
        assert_eq!(e.position, Some((1, 257)), "{e}");
    }

    fn read_str(s: &[u8]) -> Result<Val, SnapshotError> {
        read(s, "snap.json", &Shape::Keep)
    }

    #[test]
    fn empty_input_is_an_error() {
        let e = read_str(b"").unwrap_err();
        assert!(e.to_string().starts_with("snap.json: empty input"), "{e}");
    }

    /// serde_json words the errors the fast parser doubts, but stops at a
    /// `NaN` that jq reads: the error named is the one jq meets further on,
    /// with the fast parser and without.
    #[test]
    fn an_error_after_a_nan_is_named_where_it_is() {
        let doc = b"{\"items\": [{\"a\": NaN,\n \"b\": -Infinity, \"c\": [1 2]}]}";
        for fast_path in [true, false] {
            let options = ReadOptions {
                fast_path,
                ..ReadOptions::default()
            };
            let e = read_with(&doc[..], "snap.json", &Shape::Keep, &options).unwrap_err();
            assert_eq!(e.position, Some((2, 26)), "{e}");
        }
        // Without an error further on, serde_json alone refuses at the NaN:
        // only an error is taken from the copy that reads it as zero.
        let valid = b"{\"items\": [NaN]}";
        let slow = ReadOptions {
            fast_path: false,
            ..ReadOptions::default()
        };
        let e = read_with(&valid[..], "snap.json", &Shape::Keep, &slow).unwrap_err();
        assert_eq!(e.position, Some((1, 12)), "{e}");
        assert!(read_str(valid).is_ok());
    }

    #[test]
    fn truncated_json_names_line_and_column() {
        let e = read_str(b"{\n  \"items\": [\n").unwrap_err();
        assert_eq!(e.position, Some((3, 0)), "{e}");
        assert!(
            e.to_string()
                .starts_with("snap.json:3:0: invalid JSON: EOF"),
            "{e}"
        );
    }

    #[test]
    fn trailing_garbage_is_an_error() {
        assert!(read_str(b"{\"items\":[]} x").is_err());
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        assert!(read_str(b"{\"items\":[\"\xff\"]}").is_err());
    }

    #[test]
    fn invalid_utf8_in_a_dropped_field_is_an_error() {
        let doc = b"{\"items\":[{\"metadata\":{\"labels\":{\"a\":\n\"\xff\"}}}]}";
        let shape = crate::reader::Projection::canonical().pods;
        let e = read(&doc[..], "snap.json", &shape).unwrap_err();
        assert_eq!(e.position, Some((2, 2)), "{e}");
        assert!(e.message.contains("UTF-8"), "{e}");
    }

    fn docs(data: &[u8]) -> Result<Vec<String>, String> {
        read_documents(data, "pages.json", &Shape::Keep)
            .map(|docs| docs.iter().map(crate::engine::to_json).collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn documents_are_read_until_the_end() {
        let pages = b"{\"items\":[1]}{\"items\":[2]}\n \n{\"items\":[]}\n";
        assert_eq!(
            docs(pages).unwrap(),
            [r#"{"items":[1]}"#, r#"{"items":[2]}"#, r#"{"items":[]}"#]
        );
        assert_eq!(docs(b"\xef\xbb\xbf{}").unwrap(), ["{}"]);
    }

    #[test]
    fn no_document_or_a_broken_last_one_is_an_error() {
        assert_eq!(
            docs(b"").unwrap_err(),
            "pages.json: empty input: expected a JSON document"
        );
        // As `read` words it: the input ended where a value was due.
        assert!(docs(b" \n")
            .unwrap_err()
            .contains("EOF while parsing a value"));
        let cut = docs(b"{\"items\":[1]}\n{\"items\":[").unwrap_err();
        assert!(cut.starts_with("pages.json:2:"), "{cut}");
        assert!(docs(b"{}]").unwrap_err().contains("invalid JSON"));
    }

    #[test]
    fn what_is_no_json_is_named_with_what_is_expected() {
        let expected = |found: &str| words::NOT_A_LIST.format(&[("found", &found)]);
        let cases: [(&[u8], String); 3] = [
            (
                b"apiVersion: v1\nkind: List\n",
                expected(words::FOUND_YAML.text),
            ),
            (b"---\n", expected(words::FOUND_YAML.text)),
            (
                b"NAMESPACE  NAME  READY\nx  y  1/1\n",
                expected(words::FOUND_TABLE.text),
            ),
        ];
        for (data, message) in cases {
            let error = docs(data).unwrap_err();
            assert!(error.ends_with(&message), "{error}");
        }
        // JSON that is no list (null, a bare array, a single object) is
        // read: the programs' list_items refuses it in the bash's words.
        assert!(docs(b"null").is_ok());
        assert!(docs(b" [{\"kind\": \"PodList\"}]").is_ok());
        assert!(docs(b"{\"kind\": \"Pod\", \"spec\": {}}").is_ok());
        // Lists, pages, and what is merely broken keep their own words.
        assert!(docs(b"{\"kind\": \"PodList\"}").is_ok());
        assert!(docs(b"{\"kind\": \"List\", \"items\": []}").is_ok());
        assert!(docs(b"No resources found\n")
            .unwrap_err()
            .contains("invalid JSON"));
        assert!(docs(b"{\"items\": [").unwrap_err().contains("invalid JSON"));
    }
}
