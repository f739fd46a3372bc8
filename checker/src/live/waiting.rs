//! Never silent while waiting (issue 29): a list call (the pods, the
//! events, the four apps/v1 lists; never a watch, which runs on purpose)
//! that has run one whole interval says so, and again at every further
//! interval while it runs, through kubectl or through the proxy alike. The
//! bash function's waiting notes keep the same clock.

use crate::api;
use crate::contract::{messages, CHECKER_PREFIX};
use std::time::Duration;

/// The notes of one list call: which list, the check's interval, the
/// kubectl timeout the words name, and the call's bound (the timeout, or
/// the time left that caps it): no note is due at or past the bound, when
/// the call ends anyway.
#[derive(Debug, Clone)]
pub struct Waiting {
    what: &'static str,
    interval: u64,
    timeout: u64,
    bound: u64,
    /// The notes said so far.
    said: u64,
}

impl Waiting {
    /// The notes of `kubectl get --raw URL` (`args`), a list call of one of
    /// the checker's lists in any namespace; None for anything else (a
    /// watch, `config current-context`) or when no note is due before the
    /// call's bound. Whole seconds, as the bash counts them.
    pub fn of(
        args: &[&str],
        interval: Duration,
        timeout: Duration,
        bound: Duration,
    ) -> Option<Self> {
        let ["get", "--raw", url] = args else {
            return None;
        };
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        if query.split('&').any(|param| param.starts_with("watch=")) {
            return None;
        }
        // The resource, whatever the namespace (`-n`): the path's last part.
        let resource = path.rsplit('/').next()?;
        let list = [api::PODS, api::EVENTS]
            .into_iter()
            .chain(api::WORKLOADS)
            .find(|list| list.what == resource)?;
        let waiting = Waiting {
            what: list.what,
            interval: interval.as_secs(),
            timeout: timeout.as_secs(),
            bound: bound.as_secs(),
            said: 0,
        };
        waiting.next_due().map(|_| waiting)
    }

    /// When the next note is due, since the call started; None when it
    /// would come at or past the bound.
    pub fn next_due(&self) -> Option<Duration> {
        let seconds = self.interval.checked_mul(self.said + 1)?;
        (self.interval > 0 && seconds < self.bound).then(|| Duration::from_secs(seconds))
    }

    /// Say on stderr every note due by `elapsed` (since the call started).
    pub fn say_due(&mut self, elapsed: Duration) {
        while let Some(due) = self.next_due().filter(|due| *due <= elapsed) {
            self.said += 1;
            let line = messages::KUBECTL_WAITING.format(&[
                ("what", &self.what),
                ("seconds", &due.as_secs()),
                ("timeout", &self.timeout),
            ]);
            eprintln!("{}{line}", CHECKER_PREFIX.warning);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notes(url: &str, interval: u64, bound: u64) -> Option<Waiting> {
        let secs = Duration::from_secs;
        Waiting::of(
            &["get", "--raw", url],
            secs(interval),
            secs(120),
            secs(bound),
        )
    }

    #[test]
    fn every_list_of_the_check_is_noted_but_a_watch() {
        for url in [
            "/api/v1/pods?limit=500",
            "/api/v1/namespaces/team-a/pods",
            "/api/v1/events?fieldSelector=reason%3DFailedScheduling",
            "/apis/apps/v1/deployments?resourceVersion=7&resourceVersionMatch=Exact",
            "/apis/apps/v1/namespaces/team-a/statefulsets",
        ] {
            assert!(notes(url, 5, 120).is_some(), "{url}");
        }
        assert!(notes("/api/v1/pods?watch=1&resourceVersion=7", 5, 120).is_none());
        assert!(notes("/api/v1/nodes", 5, 120).is_none());
    }

    #[test]
    fn a_note_is_due_every_interval_before_the_bound() {
        let mut waiting = notes("/api/v1/pods", 5, 12).expect("due");
        assert_eq!(waiting.next_due(), Some(Duration::from_secs(5)));
        waiting.said = 1;
        assert_eq!(waiting.next_due(), Some(Duration::from_secs(10)));
        waiting.said = 2;
        assert_eq!(waiting.next_due(), None, "15 s is past the bound");
        // A call bound at its first interval or sooner says nothing.
        assert!(notes("/api/v1/events", 10, 10).is_none());
    }
}
