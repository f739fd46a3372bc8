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

/// The workloads whose pods must all exist (issue 30), apps/v1, in the
/// order both drivers read them; each read at the pods list's
/// resourceVersion ([`List::url_at`]).
pub const WORKLOADS: [List; 4] = [
    List {
        path: "/apis/apps/v1/replicasets",
        query: "",
        what: "replicasets",
    },
    List {
        path: "/apis/apps/v1/statefulsets",
        query: "",
        what: "statefulsets",
    },
    List {
        path: "/apis/apps/v1/daemonsets",
        query: "",
        what: "daemonsets",
    },
    List {
        path: "/apis/apps/v1/deployments",
        query: "",
        what: "deployments",
    },
];

/// The workloads lists whose kind is checked only with another's read, as
/// (list, the list it needs): a Deployment's pods are counted through its
/// ReplicaSets (workloads.jq: `kinds_checked`), so when the ReplicaSets
/// cannot be listed the Deployments are not checked either, and the one
/// warning names both.
pub const CHECKED_WITH: [(&str, &str); 1] = [("deployments", "replicasets")];

/// The workloads lists left unchecked when `refused` could not be listed:
/// those, and those that need one of them ([`CHECKED_WITH`]), in the order
/// of [`WORKLOADS`].
pub fn unchecked(refused: &[&str]) -> Vec<&'static str> {
    let needs_refused = |what: &str| {
        CHECKED_WITH
            .iter()
            .any(|(list, needed)| *list == what && refused.contains(needed))
    };
    WORKLOADS
        .iter()
        .map(|list| list.what)
        .filter(|what| refused.contains(what) || needs_refused(what))
        .collect()
}

/// The query that reads a list at exactly one resourceVersion: the state
/// of the pods list, as etcd's revision (410 once it is compacted).
pub const EXACT: &str = "resourceVersionMatch=Exact";

impl List {
    /// The URL of a page: `limit` when `chunk_size` is not 0, `continue`
    /// after the first page (the token is base64: `+`, `/`, `=` encoded).
    pub fn url(&self, chunk_size: usize, token: Option<&str>) -> String {
        self.url_at(chunk_size, token, None)
    }

    /// [`Self::url`], the first page at exactly resourceVersion `at` when
    /// given (`resourceVersion=RV&resourceVersionMatch=Exact`); a continue
    /// token is pinned to it, and the API server refuses both together.
    pub fn url_at(&self, chunk_size: usize, token: Option<&str>, at: Option<&str>) -> String {
        let mut params: Vec<String> = Vec::new();
        if !self.query.is_empty() {
            params.push(self.query.to_owned());
        }
        if let (Some(at), None) = (at, token) {
            params.push(format!("resourceVersion={}&{EXACT}", url_encode(at)));
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
            // `/api/v1/pods` → `/api/v1/namespaces/NS/pods`, and
            // `/apis/apps/v1/replicasets` likewise.
            [one] => {
                let group = &self.path[..self.path.rfind('/').map_or(0, |at| at + 1)];
                let path = format!("{group}namespaces/{one}/{}", self.what);
                Box::leak(path.into_boxed_str())
            }
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
        self.args_at(chunk_size, token, None)
    }

    /// kubectl's arguments for a page of [`Self::url_at`].
    pub fn args_at(&self, chunk_size: usize, token: Option<&str>, at: Option<&str>) -> [String; 3] {
        [
            "get".to_owned(),
            "--raw".to_owned(),
            self.url_at(chunk_size, token, at),
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
        assert_eq!(
            WORKLOADS[1].url_at(500, None, Some("48213")),
            "/apis/apps/v1/statefulsets?resourceVersion=48213&resourceVersionMatch=Exact&limit=500"
        );
        assert_eq!(
            WORKLOADS[1].url_at(500, Some("t"), Some("48213")),
            "/apis/apps/v1/statefulsets?limit=500&continue=t"
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

    #[test]
    fn unreadable_replicasets_leave_the_deployments_unchecked() {
        assert_eq!(unchecked(&["replicasets"]), ["replicasets", "deployments"]);
        assert_eq!(unchecked(&["deployments"]), ["deployments"]);
        assert_eq!(
            unchecked(&["statefulsets", "replicasets"]),
            ["replicasets", "statefulsets", "deployments"]
        );
        let all = WORKLOADS.map(|list| list.what);
        assert_eq!(unchecked(&all), all);
        assert!(unchecked(&[]).is_empty());
    }
}
