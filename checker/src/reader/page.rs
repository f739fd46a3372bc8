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

use super::BOM;
use serde::de::IgnoredAny;
use serde::Deserialize;

/// What the driver needs of a page before its items.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct PageHead {
    /// The list's `metadata.resourceVersion`: every page of one list
    /// carries the first page's. "" when absent, as the bash's
    /// page-head.jq reads it, so both drivers judge a page alike.
    #[serde(rename = "resourceVersion", default)]
    pub resource_version: String,
    /// `metadata.continue`: the token of the next page (none or empty on
    /// the last one).
    #[serde(rename = "continue", default)]
    pub continue_token: Option<String>,
}

impl PageHead {
    /// The token of the next page, if there is one.
    pub fn next(&self) -> Option<&str> {
        self.continue_token.as_deref().filter(|t| !t.is_empty())
    }
}

/// The head of `page`, or why it is not a list page.
pub fn head(page: &[u8]) -> Result<PageHead, String> {
    // A UTF-8 BOM before the first byte is read past, as jq and the
    // snapshot reader read past it (a BOM anywhere else is refused).
    let start = if page.starts_with(BOM) { BOM.len() } else { 0 };
    let mut at = blank(page, start);
    if page.get(at) != Some(&b'{') {
        return Err("not a JSON object".to_owned());
    }
    at += 1;
    let mut found = None;
    loop {
        at = blank(page, at);
        if page.get(at) == Some(&b'}') {
            break;
        }
        let (key, used) = one::<String>(&page[at..])?;
        at = blank(page, at + used);
        if page.get(at) != Some(&b':') {
            return Err("expected `:` after a key".to_owned());
        }
        at += 1;
        match key.as_str() {
            "metadata" => {
                let (head, used) = one::<PageHead>(&page[at..])?;
                found = Some(head);
                at += used;
            }
            "items" if found.is_some() => break,
            _ => at += one::<IgnoredAny>(&page[at..])?.1,
        }
        at = blank(page, at);
        match page.get(at) {
            Some(b',') => at += 1,
            Some(b'}') => break,
            _ => return Err("expected `,` or `}`".to_owned()),
        }
    }
    Ok(found.unwrap_or_default())
}

/// The value at the start of `data` and the bytes it took.
fn one<'de, T: Deserialize<'de>>(data: &'de [u8]) -> Result<(T, usize), String> {
    let mut values = serde_json::Deserializer::from_slice(data).into_iter::<T>();
    match values.next() {
        Some(Ok(value)) => Ok((value, values.byte_offset())),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("EOF while parsing a value".to_owned()),
    }
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
        assert!(head(b" \xef\xbb\xbf{\"items\":[]}").is_err());
    }

    #[test]
    fn a_page_that_is_not_a_list_is_refused() {
        assert!(head(b"").is_err());
        assert!(head(b"[]").is_err());
        assert!(head(br#"{"metadata":{"resourceVersion":7},"items":[]}"#).is_err());
        assert!(head(br#"{"metadata":{"resourceVer"#).is_err());
    }
}
