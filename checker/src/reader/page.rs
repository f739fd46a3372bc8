//! The head of one raw list page (`kubectl get --raw '/api/v1/pods?limit=N'`):
//! its `metadata.resourceVersion` and `metadata.continue`, read without
//! reading its items.
//!
//! The API server writes `kind`, `apiVersion` and `metadata` before
//! `items`, so the token of the next page is in the first bytes: the driver
//! starts the next kubectl while this page's items are still being parsed.
//! The top-level keys are walked with serde_json's stream reader, which
//! stops after each value; the walk ends at `items` once `metadata` has been
//! seen (a page that writes `items` first is still read right, only slower).

use super::fast_parser::{parse_fast, parse_key, Stop, Workspace};
use super::plan::Plan;
use super::serde_fallback::non_finite_as_zeros;
use super::BOM;
use crate::contract::words;
use jaq_json::Val;
use serde::de::IgnoredAny;
use std::io::{self, Read};

/// What the driver needs of a page before its items.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageHead {
    /// The list's `metadata.resourceVersion`: every page of one list
    /// carries the first page's. "" when unset, as the bash's
    /// page-head.jq reads it, so both drivers judge a page alike.
    pub resource_version: String,
    /// `metadata.continue`: the token of the next page (none or empty on
    /// the last one).
    pub continue_token: Option<String>,
}

impl PageHead {
    /// The token of the next page, if there is one.
    pub fn next(&self) -> Option<&str> {
        self.continue_token.as_deref().filter(|t| !t.is_empty())
    }

    /// The head a page's `metadata` tells, or the contract's words when
    /// either field is set but no string (the API server writes strings).
    fn of_metadata(metadata: &Val) -> Result<PageHead, String> {
        let field = |key: &str| match metadata {
            Val::Obj(map) => match map.get(&Val::from(key.to_owned())) {
                None | Some(Val::Null) => Ok(None),
                Some(Val::TStr(text)) => Ok(Some(String::from_utf8_lossy(text).into_owned())),
                Some(_) => Err(words::HEAD_NOT_STRINGS.text.to_owned()),
            },
            _ => Ok(None),
        };
        Ok(PageHead {
            resource_version: field("resourceVersion")?.unwrap_or_default(),
            continue_token: field("continue")?,
        })
    }
}

/// The head of `page`, or why it is not a list page (the whole sentence).
pub fn head(page: &[u8]) -> Result<PageHead, String> {
    let not_a_list_page = |why: &str| format!("not a list page: {why}");
    // A UTF-8 BOM before the first byte is read past, as jq and the
    // snapshot reader read past it (a BOM anywhere else is refused).
    let start = if page.starts_with(BOM) { BOM.len() } else { 0 };
    let mut at = blank(page, start);
    // A page that is no object (null, a bare array) has no head, as
    // page-head.jq reads it: the programs' list_items (lib.jq) then refuses
    // it in the words both drivers print.
    if page.get(at) != Some(&b'{') {
        return Ok(PageHead::default());
    }
    at += 1;
    let mut found = None;
    loop {
        at = blank(page, at);
        if page.get(at) == Some(&b'}') {
            break;
        }
        if page.get(at) != Some(&b'"') {
            return Err(not_a_list_page("expected a key"));
        }
        let (key, used) =
            parse_key(&page[at..]).map_err(|_| not_a_list_page("a key that is no string"))?;
        at = blank(page, at + used);
        if page.get(at) != Some(&b':') {
            return Err(not_a_list_page("expected `:` after a key"));
        }
        at += 1;
        match key.as_str() {
            "metadata" => {
                let (metadata, used) =
                    one(&page[at..], &Plan::Keep).map_err(|why| not_a_list_page(&why))?;
                found = Some(PageHead::of_metadata(&metadata)?);
                at += used;
            }
            "items" if found.is_some() => break,
            _ => {
                at += one(&page[at..], &Plan::Skip)
                    .map_err(|why| not_a_list_page(&why))?
                    .1
            }
        }
        at = blank(page, at);
        match page.get(at) {
            Some(b',') => at += 1,
            Some(b'}') => break,
            _ => return Err(not_a_list_page("expected `,` or `}`")),
        }
    }
    Ok(found.unwrap_or_default())
}

/// The most bytes of a list's start kept to find its head: a head is a
/// few hundred bytes; a list that writes its items first has none to find.
const HEAD_MAX: usize = 64 << 10;

/// `inner`'s bytes, passed on as they are, with the list's
/// `metadata.resourceVersion` told to `heard` once, as soon as its head has
/// passed and before its items are read: the check reads the workloads at
/// that version while the pods stream (issue 30's cost). Nothing is told
/// for a list whose head has no version, or that puts its items first.
pub struct Heard<R, F> {
    inner: R,
    start: Vec<u8>,
    heard: Option<F>,
}

impl<R: Read, F: FnMut(&str)> Heard<R, F> {
    /// `inner`, its version told to `heard`.
    pub fn new(inner: R, heard: F) -> Self {
        Self {
            inner,
            start: Vec::new(),
            heard: Some(heard),
        }
    }

    /// Look for the head in the bytes read so far (all of them at the end).
    fn listen(&mut self, read: &[u8]) {
        let Some(heard) = self.heard.as_mut() else {
            return;
        };
        let room = HEAD_MAX - self.start.len();
        self.start.extend_from_slice(&read[..read.len().min(room)]);
        let ended = read.is_empty() || self.start.len() == HEAD_MAX;
        if !ended && memchr::memmem::find(&self.start, b"\"items\"").is_none() {
            return;
        }
        match head(&self.start) {
            Ok(head) if !head.resource_version.is_empty() => heard(&head.resource_version),
            Err(_) if !ended => return,
            _ => {}
        }
        self.heard = None;
        self.start = Vec::new();
    }
}

impl<R: Read, F: FnMut(&str)> Read for Heard<R, F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.listen(&buf[..n]);
        Ok(n)
    }
}

/// The value at the start of `data` by `plan` and the bytes it took, read
/// as the snapshot reader reads it (`NaN` too: the fast parser), the words
/// of an error serde_json's (on the copy that reads the fast parser's
/// non-finite words as zeros, as the snapshot reader words errors).
fn one(data: &[u8], plan: &Plan) -> Result<(Val, usize), String> {
    // A top-level key's value: jq's parser stack holds the object and the key.
    match parse_fast(data, plan, &mut Workspace::default(), 2) {
        Ok(read) => return Ok(read),
        Err(Stop::Refuse { why, .. }) => return Err(why.to_owned()),
        Err(Stop::End | Stop::Doubt) => {}
    }
    let patched = non_finite_as_zeros(data);
    let data = patched.as_deref().unwrap_or(data);
    let mut values = serde_json::Deserializer::from_slice(data).into_iter::<IgnoredAny>();
    Err(match values.next() {
        Some(Err(e)) => e.to_string(),
        Some(Ok(_)) | None => "EOF while parsing a value".to_owned(),
    })
}

fn blank(data: &[u8], from: usize) -> usize {
    from + data[from.min(data.len())..]
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\n' | b'\t' | b'\r'))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_is_read_before_the_items() {
        let page = br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1001","continue":"eyJ2Ijo+/=","remainingItemCount":3},"items":[{"broken"#;
        let head = head(page).unwrap();
        assert_eq!(head.resource_version, "1001");
        assert_eq!(head.next(), Some("eyJ2Ijo+/="));
    }

    #[test]
    fn the_last_page_has_no_token() {
        let last = br#"{"metadata":{"resourceVersion":"7","continue":""},"items":[]}"#;
        assert_eq!(head(last).unwrap().next(), None);
        let list = b"{\n  \"apiVersion\": \"v1\",\n  \"items\": [],\n  \"kind\": \"List\"\n}\n";
        assert_eq!(head(list).unwrap(), PageHead::default());
    }

    #[test]
    fn a_bom_before_the_page_is_read_past_as_jq_does() {
        let page = b"\xef\xbb\xbf{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}";
        assert_eq!(head(page).unwrap().resource_version, "7");
        // Past a blank, a BOM is no object's start: no head (the reader
        // then refuses the BOM).
        assert_eq!(
            head(b" \xef\xbb\xbf{\"items\":[]}"),
            Ok(PageHead::default())
        );
    }

    /// What `Heard` tells of `list` read `step` bytes at a time.
    fn heard(list: &[u8], step: usize) -> (Vec<String>, Vec<u8>) {
        let mut told = Vec::new();
        let mut passed = Vec::new();
        let mut reader = Heard::new(list, |v: &str| told.push(v.to_owned()));
        let mut buf = vec![0; step];
        loop {
            let n = reader.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            passed.extend_from_slice(&buf[..n]);
        }
        drop(reader);
        (told, passed)
    }

    #[test]
    fn the_version_is_heard_once_as_soon_as_the_head_has_passed() {
        let list = br#"{"kind":"PodList","metadata":{"resourceVersion":"48213"},"items":[{"metadata":{"resourceVersion":"1"}}]}"#;
        for step in [1, 7, 64, 4096] {
            let (told, passed) = heard(list, step);
            assert_eq!(told, ["48213"], "step {step}");
            assert_eq!(passed, list, "step {step}");
        }
        // Told before the items are read: the bytes up to `"items":` do.
        let mut told = Vec::new();
        let end = memchr::memmem::find(list, b"\"items\":").unwrap() + 8;
        let mut reader = Heard::new(&list[..], |v: &str| told.push(v.to_owned()));
        reader.read_exact(&mut vec![0; end]).unwrap();
        drop(reader);
        assert_eq!(told, ["48213"]);
    }

    #[test]
    fn nothing_is_heard_without_a_version_in_the_head() {
        let no_version = br#"{"metadata":{},"items":[]}"#;
        let not_a_list = br#"[{"metadata":{"resourceVersion":"5"},"items":[]}]"#;
        for list in [
            &no_version[..],
            not_a_list,
            b"",
            b"{\"metadata\":{\"resourceVer",
        ] {
            assert_eq!(heard(list, 3), (vec![], list.to_vec()));
        }
        // Items first: the version is heard at the end, when it is read.
        let items_first = br#"{"items":[],"metadata":{"resourceVersion":"5"}}"#;
        assert_eq!(heard(items_first, 3).0, ["5"]);
        let mut long = br#"{"items":["#.to_vec();
        long.extend(b"1,".repeat(HEAD_MAX));
        long.extend(br#"1],"metadata":{"resourceVersion":"5"}}"#);
        assert_eq!(heard(&long, 4096), (vec![], long.clone()));
    }

    #[test]
    fn a_page_that_is_not_a_list_is_refused() {
        // No object, no head, as page-head.jq reads it: the reader refuses
        // what is no JSON, the programs' list_items what is no list.
        for no_object in [&b""[..], b"null", b"[]", b" [{\"items\":[]}]", b"error: x"] {
            assert_eq!(head(no_object), Ok(PageHead::default()));
        }
        assert!(head(br#"{"metadata":{"resourceVersion":7},"items":[]}"#).is_err());
        assert!(head(br#"{"metadata":{"resourceVer"#).is_err());
        // A version that is no string: the words page-head.jq gives.
        let numbered = br#"{"metadata":{"resourceVersion":7},"items":[]}"#;
        assert_eq!(head(numbered), Err(words::HEAD_NOT_STRINGS.text.to_owned()));
        let nan = br#"{"metadata":{"continue":NaN},"items":[]}"#;
        assert_eq!(head(nan), Err(words::HEAD_NOT_STRINGS.text.to_owned()));
    }

    /// NaN and the infinities are numbers to the page's head, as to jq and
    /// the snapshot reader: before the head, in it, and unset is "".
    #[test]
    fn non_finite_numbers_are_read_as_numbers() {
        let page = br#"{"items":[{"a":NaN,"b":[-Infinity]}],"metadata":{"resourceVersion":"9","remainingItemCount":Infinity,"continue":null}}"#;
        let head = head(page).unwrap();
        assert_eq!(head.resource_version, "9");
        assert_eq!(head.next(), None);
        let null_version = br#"{"metadata":{"resourceVersion":null},"items":[]}"#;
        assert_eq!(super::head(null_version).unwrap(), PageHead::default());
        // Any other spelling is no number.
        for odd in ["nan", "+1", "-Inf", "NaNx"] {
            let page = format!(r#"{{"items":[{odd}],"metadata":{{}}}}"#);
            assert!(super::head(page.as_bytes()).is_err(), "{odd}");
        }
    }
}
