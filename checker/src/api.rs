//! The Kubernetes API as the checker asks it: the lists it reads (their
//! paths and fixed queries) and the URLs of their pages. No I/O: the live
//! path ([`crate::live`]) hands these to kubectl.

/// A list the checker reads: the API path and its fixed query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct List {
    /// `/api/v1/pods`.
    pub path: &'static str,
    /// Query parameters every page carries (already URL-encoded), or "".
    pub query: &'static str,
    /// The resource, as messages name the list: `pods`.
    pub what: &'static str,
}

/// Where the lists of one namespace are: `/api/v1/namespaces/NS/pods`.
pub const NAMESPACES_PATH: &str = "/api/v1/namespaces/";

/// Every pod of every namespace.
pub const PODS: List = List {
    path: "/api/v1/pods",
    query: "",
    what: "pods",
};

/// The FailedScheduling events of every namespace (events.jq filters them).
pub const EVENTS: List = List {
    path: "/api/v1/events",
    query: "fieldSelector=reason%3DFailedScheduling",
    what: "events",
};

impl List {
    /// The URL of a page: `limit` when `chunk_size` is not 0, `continue`
    /// after the first page (the token is base64: `+`, `/`, `=` encoded).
    pub fn url(&self, chunk_size: usize, token: Option<&str>) -> String {
        let mut params: Vec<String> = Vec::new();
        if !self.query.is_empty() {
            params.push(self.query.to_owned());
        }
        if chunk_size > 0 {
            params.push(format!("limit={chunk_size}"));
        }
        if let Some(token) = token {
            params.push(format!("continue={}", url_encode(token)));
        }
        if params.is_empty() {
            self.path.to_owned()
        } else {
            format!("{}?{}", self.path, params.join("&"))
        }
    }

    /// This list within a selection (`-n`, `-l`): with one namespace, that
    /// namespace's list (`/api/v1/namespaces/NS/pods`: a namespace-scoped
    /// role can read it); with `selector`, `labelSelector=…` on every
    /// request. The strings are leaked: a check makes its lists once.
    pub fn within(self, namespaces: &[String], selector: &str) -> List {
        let path = match namespaces {
            [one] => Box::leak(format!("{NAMESPACES_PATH}{one}/{}", self.what).into_boxed_str()),
            _ => self.path,
        };
        let query = if selector.is_empty() {
            self.query
        } else {
            let label = format!("labelSelector={}", url_encode(selector));
            let query = if self.query.is_empty() {
                label
            } else {
                format!("{}&{label}", self.query)
            };
            Box::leak(query.into_boxed_str())
        };
        List {
            path,
            query,
            what: self.what,
        }
    }

    /// kubectl's arguments for a page.
    pub fn args(&self, chunk_size: usize, token: Option<&str>) -> [String; 3] {
        [
            "get".to_owned(),
            "--raw".to_owned(),
            self.url(chunk_size, token),
        ]
    }
}

/// Percent-encoding of everything but RFC 3986's unreserved characters.
pub fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_asked_for_with_limit_and_an_encoded_token() {
        assert_eq!(PODS.url(500, None), "/api/v1/pods?limit=500");
        assert_eq!(PODS.url(0, None), "/api/v1/pods");
        assert_eq!(
            PODS.url(2, Some("eyJ2+Ijo/=")),
            "/api/v1/pods?limit=2&continue=eyJ2%2BIjo%2F%3D"
        );
        assert_eq!(
            EVENTS.url(500, Some("t")),
            "/api/v1/events?fieldSelector=reason%3DFailedScheduling&limit=500&continue=t"
        );
        assert_eq!(
            EVENTS.url(0, None),
            "/api/v1/events?fieldSelector=reason%3DFailedScheduling"
        );
    }

    #[test]
    fn a_selection_scopes_the_lists() {
        let one = ["ml".to_owned()];
        assert_eq!(
            PODS.within(&one, "").url(0, None),
            "/api/v1/namespaces/ml/pods"
        );
        assert_eq!(
            EVENTS.within(&one, "").url(500, None),
            "/api/v1/namespaces/ml/events?fieldSelector=reason%3DFailedScheduling&limit=500"
        );
        let two = ["ml".to_owned(), "web".to_owned()];
        assert_eq!(
            PODS.within(&two, "tier!=db").url(0, None),
            "/api/v1/pods?labelSelector=tier%21%3Ddb"
        );
    }
}
