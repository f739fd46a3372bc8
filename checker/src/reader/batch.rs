//! Parsing a long run of array elements (a snapshot's pods) on several
//! threads at once, without ever trusting a guess.
//!
//! Most of the time of reading a big snapshot goes into walking the bytes of
//! the pods (validating and skipping what the projection drops). That walk
//! is sequential by nature, since where an element ends is known only by
//! parsing it. But kubectl indents its JSON, and JSON strings cannot hold a
//! raw newline: after a `\n` the parser is always between tokens. So a line
//! holding only the indentation of the current element and a `{` is, very
//! likely, the start of a later element. Compact JSON (the apiserver's own
//! pages) has no newlines, but every element of a list starts with the same
//! bytes (`{"metadata":{"name":`), which the nested objects of a pod do not.
//! The buffer is cut there into parts; each thread parses the elements of
//! its part.
//!
//! The guess is then checked, never trusted: part 0 starts where the reader
//! stands (a real element), and a cut counts only when the part before it,
//! parsed element by element, ends with `,` exactly at the cut. A part is
//! kept only when every cut before it counted. Anything else (a cut inside
//! a nested array or a string, an element the fast parser gives up on)
//! keeps what was verified and leaves the rest to the
//! sequential reader, which also words every error. So the result is the
//! same document a single thread reads, which `tests/` check.

use super::fast_parser::{parse_fast, Workspace};
use super::plan::Plan;
use jaq_json::Val;

/// A thread's own workspace (interned strings, what it saw of each field,
/// scratch room); the plan is shared.
pub(crate) struct Lane {
    work: Workspace,
}

impl Lane {
    /// A lane that starts from what `work` (the reader's) saw of each field.
    pub(crate) fn new(work: &Workspace) -> Self {
        Self { work: work.fresh() }
    }
}

/// Elements parsed from the front of a buffer.
pub(crate) struct Batch {
    /// The elements, in order.
    pub values: Vec<Val>,
    /// Bytes used: up to the end of the last element (its `,` is not used).
    pub used: usize,
}

/// Parse the elements at the start of `data` (it starts with one, whose
/// first byte is at `column` of its line) by `plan`, each starting where
/// jq's parser stack is `depth` high, with the calling thread and one more
/// thread per lane. `eof`: nothing follows `data`. `None` when not even one
/// element could be parsed here.
pub(crate) fn elements(
    data: &[u8],
    column: usize,
    eof: bool,
    (plan, depth): (&Plan, u32),
    work: &mut Workspace,
    lanes: &mut [Lane],
) -> Option<Batch> {
    let cuts = cuts(data, column, lanes.len() + 1);
    let mut parts = Vec::with_capacity(cuts.len() + 1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = lanes
            .iter_mut()
            .zip(&cuts)
            .enumerate()
            .map(|(i, (lane, &from))| {
                let to = cuts.get(i + 1).copied();
                // No thread to be had (a container's pid limit, say): that
                // part and the ones after it are left to the reader.
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || {
                        run(data, (from, to), eof, (plan, depth), &mut lane.work)
                    })
                    .ok()
            })
            .collect();
        let first = (0, cuts.first().copied());
        parts.push(run(data, first, eof, (plan, depth), work));
        parts.extend(workers.into_iter().map(|worker| match worker {
            Some(thread) => thread.join().expect("a parsing thread panicked"),
            None => Part::default(),
        }));
    });
    join(parts, &cuts)
}

/// The elements parsed from `data[from..]`, stopping at `to`.
#[derive(Default)]
struct Part {
    values: Vec<Val>,
    /// End of the last element parsed.
    end: usize,
    /// Where the element after it starts (after its `,`), if one does.
    next: Option<usize>,
}

/// Parse element after element from `data[from..]` (an element starts
/// there) until one starts at or after `to`, or the fast parser stops.
fn run(
    data: &[u8],
    (from, to): (usize, Option<usize>),
    eof: bool,
    (plan, depth): (&Plan, u32),
    work: &mut Workspace,
) -> Part {
    let mut part = Part {
        values: Vec::new(),
        end: from,
        next: Some(from),
    };
    while let Some(at) = part.next.filter(|&at| to.is_none_or(|to| at < to)) {
        let rest = &data[at..];
        let Ok((value, used)) = parse_fast(rest, plan, work, depth) else {
            break;
        };
        // Ending right at the end of the buffer, it may be cut short.
        if used == rest.len() && !eof {
            break;
        }
        part.values.push(value);
        part.end = at + used;
        part.next = after_comma(data, part.end);
    }
    part
}

/// Where the next element starts, when `,` follows `end` (whitespace around).
fn after_comma(data: &[u8], end: usize) -> Option<usize> {
    let comma = end + whitespace(&data[end..]);
    (data.get(comma) == Some(&b',')).then(|| {
        let next = comma + 1;
        next + whitespace(&data[next..])
    })
}

fn whitespace(data: &[u8]) -> usize {
    data.iter()
        .position(|b| !matches!(b, b' ' | b'\n' | b'\t' | b'\r'))
        .unwrap_or(data.len())
}

/// Keep part 0, then every part whose cut the part before it ended at.
fn join(parts: Vec<Part>, cuts: &[usize]) -> Option<Batch> {
    let mut batch = Batch {
        values: Vec::new(),
        used: 0,
    };
    for (i, part) in parts.into_iter().enumerate() {
        if part.values.is_empty() {
            break;
        }
        batch.used = part.end;
        batch.values.extend(part.values);
        if part.next != cuts.get(i).copied() {
            break;
        }
    }
    (!batch.values.is_empty()).then_some(batch)
}

/// Up to `parts - 1` cuts, near equal shares of `data`: offsets of a `{`
/// that starts a line indented by `column` spaces, after a `,`; in compact
/// JSON (the apiserver's own pages), offsets after a `,` of the bytes the
/// first element starts with (see [`signature`]).
fn cuts(data: &[u8], column: usize, parts: usize) -> Vec<usize> {
    let signature = signature(data);
    let mut cuts: Vec<usize> = Vec::with_capacity(parts.saturating_sub(1));
    for share in 1..parts {
        let from = (data.len() * share / parts).max(cuts.last().map_or(0, |c| c + 1));
        let cut = match signature {
            Some(signature) => signed_start(data, from, signature),
            None => element_start(data, from, column),
        };
        match cut {
            Some(cut) => cuts.push(cut),
            None => break,
        }
    }
    cuts
}

/// How the elements of a compact array start: the first element's bytes up
/// to its second `:` (`{"apiVersion":"v1","kind":` in kubectl's key order,
/// `{"metadata":{"name":` in the apiserver's). Every pod of a list starts
/// alike, while the nested objects that repeat inside a pod (managedFields,
/// ownerReferences) differ by their second key. None for indented JSON, or
/// when an escape or a long first value makes the prefix unusual.
fn signature(data: &[u8]) -> Option<&[u8]> {
    const LONGEST: usize = 128;
    if !data.starts_with(b"{\"") {
        return None;
    }
    let mut colons = 0;
    let mut in_string = false;
    for (i, &b) in data.iter().enumerate().take(LONGEST) {
        match b {
            b'\\' => return None,
            b'"' => in_string = !in_string,
            b':' if !in_string => {
                colons += 1;
                if colons == 2 {
                    return Some(&data[..=i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The first offset at or after `from` that follows a `,` and starts with
/// `signature`.
fn signed_start(data: &[u8], from: usize, signature: &[u8]) -> Option<usize> {
    let mut at = from;
    loop {
        let comma = at + memchr::memchr(b',', data.get(at..)?)?;
        let start = comma + 1;
        if data[start..].starts_with(signature) {
            return Some(start);
        }
        at = start;
    }
}

/// The first `\n`, `column` spaces, `{` at or after `from`, after a `,`.
fn element_start(data: &[u8], from: usize, column: usize) -> Option<usize> {
    let mut at = from;
    loop {
        let newline = at + memchr::memchr(b'\n', data.get(at..)?)?;
        let open = newline + 1 + column;
        let indented = data.get(newline + 1..open)?.iter().all(|&b| b == b' ');
        if indented && data.get(open) == Some(&b'{') && after_comma_of(data, newline) {
            return Some(open);
        }
        at = newline + 1;
    }
}

/// Whether the last non-whitespace byte before `at` is a `,`.
fn after_comma_of(data: &[u8], at: usize) -> bool {
    data[..at]
        .iter()
        .rev()
        .find(|b| !matches!(b, b' ' | b'\n' | b'\t' | b'\r'))
        == Some(&b',')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::to_json;
    use crate::reader::Shape;

    /// An indented array body as kubectl prints one: elements at column 4.
    fn body(elements: &[&str]) -> Vec<u8> {
        let mut out = String::new();
        for (i, e) in elements.iter().enumerate() {
            out.push_str(&format!("    {e}"));
            out.push_str(if i + 1 < elements.len() {
                ",\n"
            } else {
                "\n  ]\n}\n"
            });
        }
        out.into_bytes()
    }

    fn pods(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("{{\n      \"name\": \"pod-{i}\",\n      \"n\": [\n        {{\"x\": {i}}}\n      ]\n    }}"))
            .collect()
    }

    fn parse(data: &[u8], threads: usize) -> (Vec<String>, usize) {
        parse_at(data, 4, threads)
    }

    /// The elements at the start of `data` (the first at `column`), read
    /// with `threads`, as JSON, and the bytes used.
    fn parse_at(data: &[u8], column: usize, threads: usize) -> (Vec<String>, usize) {
        let plan = Plan::new(&Shape::Keep);
        let mut lanes: Vec<Lane> = (1..threads)
            .map(|_| Lane::new(&Workspace::default()))
            .collect();
        let batch = elements(
            data,
            column,
            true,
            (&plan, 3),
            &mut Workspace::default(),
            &mut lanes,
        )
        .unwrap();
        (batch.values.iter().map(to_json).collect(), batch.used)
    }

    #[test]
    fn every_thread_count_reads_every_element_in_order() {
        let pods = pods(500);
        let data = body(&pods.iter().map(String::as_str).collect::<Vec<_>>());
        let (one, used) = parse(&data, 1);
        assert_eq!(one.len(), 500);
        assert_eq!(&data[used..], b"\n  ]\n}\n");
        for threads in 2..=5 {
            assert_eq!(
                parse(&data, threads),
                (one.clone(), used),
                "{threads} threads"
            );
        }
    }

    #[test]
    fn cuts_fall_on_element_starts_in_near_equal_shares() {
        let pods = pods(400);
        let data = body(&pods.iter().map(String::as_str).collect::<Vec<_>>());
        let cuts = cuts(&data, 4, 4);
        assert_eq!(cuts.len(), 3);
        for (i, &cut) in cuts.iter().enumerate() {
            assert_eq!(&data[cut - 5..=cut], b"\n    {");
            let share = data.len() * (i + 1) / 4;
            assert!(cut >= share && cut < share + 200, "cut {cut} share {share}");
        }
    }

    #[test]
    fn a_cut_inside_a_nested_array_is_not_trusted() {
        // Each element holds an array whose objects sit at column 4 too:
        // most cuts land inside an element. The result must not change.
        let odd: Vec<String> = (0..300)
            .map(|i| {
                format!(
                    "{{\"name\": \"p{i}\", \"n\": [1,\n    {{\"x\": {i}}},\n    {{\"y\": 2}}]}}"
                )
            })
            .collect();
        let data = body(&odd.iter().map(String::as_str).collect::<Vec<_>>());
        let (one, used) = parse(&data, 1);
        assert_eq!(one.len(), 300);
        for threads in 2..=4 {
            let plan = Plan::new(&Shape::Keep);
            let mut lanes: Vec<Lane> = (1..threads)
                .map(|_| Lane::new(&Workspace::default()))
                .collect();
            let mut got = Vec::new();
            let mut at = 0;
            // As the reader does: take a batch, step over the `,`, go on.
            while let Some(batch) = elements(
                &data[at..],
                4,
                true,
                (&plan, 3),
                &mut Workspace::default(),
                &mut lanes,
            ) {
                got.extend(batch.values.iter().map(to_json));
                at += batch.used;
                match after_comma(&data, at) {
                    Some(next) => at = next,
                    None => break,
                }
            }
            assert_eq!((got, at), (one.clone(), used), "{threads} threads");
        }
    }

    /// A compact array body as the apiserver sends one.
    fn compact(n: usize) -> Vec<u8> {
        let elements: Vec<String> = (0..n)
            .map(|i| {
                // Nested objects that start like a pod (same first key):
                // only their second key tells them apart.
                format!(
                    "{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"p{i}\",\"managed\":[\
                     {{\"apiVersion\":\"v1\",\"fields\":{i}}},{{\"apiVersion\":\"v1\",\"fields\":0}}]}}"
                )
            })
            .collect();
        format!("{}]}}", elements.join(",")).into_bytes()
    }

    #[test]
    fn compact_json_is_cut_where_elements_start() {
        let data = compact(400);
        let cuts = cuts(&data, 0, 4);
        assert_eq!(cuts.len(), 3);
        for &cut in &cuts {
            assert!(data[cut..].starts_with(b"{\"apiVersion\":\"v1\",\"kind\":"));
            assert_eq!(data[cut - 1], b',');
        }
        let one = parse_at(&data, 0, 1);
        assert_eq!(one.0.len(), 400);
        for threads in 2..=4 {
            assert_eq!(parse_at(&data, 0, threads), one, "{threads} threads");
        }
    }

    #[test]
    fn compact_json_without_a_usable_signature_stays_on_one_thread() {
        let data = br#"{"a":1},{"a":2},{"a":3}]"#;
        assert!(cuts(data, 4, 2).is_empty());
        assert!(cuts(br#"{"a\"b":1,"c":2},{"a\"b":1,"c":2}]"#, 0, 2).is_empty());
        assert_eq!(parse_at(data, 0, 2).0.len(), 3);
    }

    #[test]
    fn parsing_stops_before_an_element_it_cannot_read() {
        let mut pods = pods(200);
        pods[150] = "{\"name\": \"\\x\"}".to_owned(); // bad JSON: serde_json words it
        let data = body(&pods.iter().map(String::as_str).collect::<Vec<_>>());
        for threads in 1..=3 {
            let (values, used) = parse(&data, threads);
            assert_eq!(values.len(), 150, "{threads} threads");
            assert!(data[used..].starts_with(b",\n    {\"name\": \"\\x\"}"));
        }
    }

    #[test]
    fn an_element_cut_by_the_buffer_end_is_left_for_later() {
        let pods = pods(100);
        let data = body(&pods.iter().map(String::as_str).collect::<Vec<_>>());
        let inside_61st = data.windows(8).position(|w| w == b"\"pod-60\"").unwrap();
        let cut_short = &data[..inside_61st];
        let plan = Plan::new(&Shape::Keep);
        let mut lanes = vec![Lane::new(&Workspace::default())];
        let batch = elements(
            cut_short,
            4,
            false,
            (&plan, 3),
            &mut Workspace::default(),
            &mut lanes,
        )
        .unwrap();
        assert_eq!(batch.values.len(), 60);
        assert_eq!(&cut_short[batch.used..batch.used + 1], b",");
    }
}
