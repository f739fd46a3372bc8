//! Faults the server injects: error Statuses, broken connections, broken
//! bodies, slow answers; each aimed at some requests, a number of times.

use std::time::Duration;

/// What goes wrong with one response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// An error `Status` with this code and reason (and `Retry-After`).
    Status {
        /// HTTP status code.
        code: u16,
        /// The Status `reason` (`InternalError`, `Expired`, …).
        reason: String,
        /// The Status `message`.
        message: String,
        /// Seconds for the `Retry-After` header, if any.
        retry_after: Option<u32>,
    },
    /// Close the connection after reading the request, before any header.
    CloseBeforeHeaders,
    /// Announce the full Content-Length, send half the body, close.
    CloseMidBody,
    /// Announce the full Content-Length, send half the body, then send
    /// nothing for this long before closing: kubectl hangs mid-list until
    /// its caller's timeout kills it.
    StallMidBody(Duration),
    /// Send the first half of the JSON body with a correct Content-Length.
    TruncatedBody,
    /// Serve a continue page from another resourceVersion than the first
    /// page's, as a server that lost the list's snapshot would: from the
    /// timeline's current state when the list's state is no longer current,
    /// else the same items under a version no state has.
    OtherVersion,
    /// Answer normally after this delay.
    Delay(Duration),
    /// A list page that always carries a continue token, a new one each
    /// time (past the last item: empty pages), as a server that never ends
    /// a list would.
    Endless,
    /// A watch: send this many events, then drop the connection without
    /// ending the chunked body (an apiserver restarting, a proxy's idle cut).
    CutWatch(usize),
    /// A watch: after this many events, an `ERROR` event carrying this
    /// `Status` (`code`, `reason`, `message`), then the stream ends, as the
    /// apiserver ends a watch it cannot continue.
    ErrorEvent {
        /// Events sent before the error.
        after: usize,
        /// The Status `code`.
        code: u16,
        /// The Status `reason`.
        reason: String,
        /// The Status `message`.
        message: String,
    },
}

impl Fault {
    /// The apiserver's 410 for a continue token whose snapshot is gone.
    pub fn expired() -> Self {
        Self::Status {
            code: 410,
            reason: "Expired".into(),
            message: "The provided continue parameter is too old to display a consistent list \
                      result. You can start a new list without the continue parameter, or use \
                      the continue token in this response to retrieve the remainder of the \
                      results. Continuing with the provided token results in an inconsistent \
                      list - objects that were created, modified, or deleted between the time \
                      the first chunk was returned and now may show up in the list."
                .into(),
            retry_after: None,
        }
    }

    /// A 500 InternalError.
    pub fn internal_error() -> Self {
        Self::Status {
            code: 500,
            reason: "InternalError".into(),
            message: "Internal error occurred: replay: injected failure".into(),
            retry_after: None,
        }
    }

    /// A 503 ServiceUnavailable with `Retry-After`.
    pub fn unavailable(retry_after: u32) -> Self {
        Self::Status {
            code: 503,
            reason: "ServiceUnavailable".into(),
            message: "replay: try again later".into(),
            retry_after: Some(retry_after),
        }
    }

    /// A 429 TooManyRequests with `Retry-After`.
    pub fn too_many_requests(retry_after: u32) -> Self {
        Self::Status {
            code: 429,
            reason: "TooManyRequests".into(),
            message: "replay: too many requests, please try again later".into(),
            retry_after: Some(retry_after),
        }
    }

    /// The apiserver's answer to a verb a resource does not serve: what a
    /// server that cannot watch sends to `?watch=1`.
    pub fn method_not_allowed() -> Self {
        Self::Status {
            code: 405,
            reason: "MethodNotAllowed".into(),
            message: "the server does not allow this method on the requested resource".into(),
            retry_after: None,
        }
    }

    /// A watch's `ERROR` event after `after` events: 410 Expired (the watch
    /// window moved past the client's version while it watched) or 500.
    pub fn error_event(after: usize, code: u16) -> Self {
        let (reason, message) = match code {
            410 => ("Expired", "too old resource version: replay: window moved"),
            _ => (
                "InternalError",
                "Internal error occurred: replay: injected watch error",
            ),
        };
        Self::ErrorEvent {
            after,
            code,
            reason: reason.into(),
            message: message.into(),
        }
    }

    /// Whether the request still counts as served (a slow answer does, and
    /// so does a page from another version: it arrives whole).
    pub fn is_failure(&self) -> bool {
        !matches!(self, Self::Delay(_) | Self::OtherVersion | Self::Endless)
    }

    /// Parse `expired`, `500`, `503[:SECS]`, `429[:SECS]`, `close`,
    /// `close-mid-body`, `stall-mid-body:MILLIS`, `truncate`,
    /// `other-version`, `endless`, `delay:MILLIS`, `405`, and for watches
    /// `cut-after:N`, `error-event:N[:410|500]`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (name, arg) = text.split_once(':').unwrap_or((text, ""));
        let secs = || -> Result<u32, String> {
            if arg.is_empty() {
                return Ok(1);
            }
            arg.parse().map_err(|_| format!("bad seconds in {text:?}"))
        };
        let number = || {
            arg.parse::<usize>()
                .map_err(|_| format!("bad number in {text:?}"))
        };
        let millis = || {
            arg.parse()
                .map(Duration::from_millis)
                .map_err(|_| format!("bad milliseconds in {text:?}"))
        };
        match name {
            "expired" | "410" => Ok(Self::expired()),
            "405" => Ok(Self::method_not_allowed()),
            "cut-after" => number().map(Self::CutWatch),
            "error-event" => {
                let (after, code) = arg.split_once(':').unwrap_or((arg, "410"));
                match (after.parse(), code.parse()) {
                    (Ok(after), Ok(code @ (410 | 500))) => Ok(Self::error_event(after, code)),
                    _ => Err(format!("expected error-event:N[:410|500], got {text:?}")),
                }
            }
            "500" => Ok(Self::internal_error()),
            "503" => Ok(Self::unavailable(secs()?)),
            "429" => Ok(Self::too_many_requests(secs()?)),
            "close" => Ok(Self::CloseBeforeHeaders),
            "close-mid-body" => Ok(Self::CloseMidBody),
            "truncate" => Ok(Self::TruncatedBody),
            "other-version" => Ok(Self::OtherVersion),
            "endless" => Ok(Self::Endless),
            "delay" => millis().map(Self::Delay),
            "stall-mid-body" => millis().map(Self::StallMidBody),
            _ => Err(format!("unknown fault {text:?}")),
        }
    }
}

/// Which requests a fault is aimed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Page N (1 = the first request, 2 = the first continue) of a pods list.
    PodsPage(usize),
    /// Every page of every pods list.
    PodsList,
    /// Every page of every events list.
    EventsList,
    /// The N-th request the server receives (1-based, all paths counted).
    Request(usize),
    /// Every pods watch (`?watch=1`; a watch is not a list page).
    PodsWatch,
    /// Every request of an apps/v1 list, by its plural (`statefulsets`).
    Workloads(&'static str),
}

/// How many times a rule fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Times {
    /// Every matching request.
    Always,
    /// The first N matching requests.
    First(usize),
}

/// A fault, the requests it hits, and how often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRule {
    /// Which requests.
    pub target: Target,
    /// What goes wrong.
    pub fault: Fault,
    /// How often.
    pub times: Times,
}

impl FaultRule {
    /// `fault` on every request `target` matches.
    pub fn always(target: Target, fault: Fault) -> Self {
        Self {
            target,
            fault,
            times: Times::Always,
        }
    }

    /// `fault` on the first request `target` matches only.
    pub fn once(target: Target, fault: Fault) -> Self {
        Self {
            target,
            fault,
            times: Times::First(1),
        }
    }

    /// Parse `TARGET=FAULT[@once|@N]` with TARGET `pods`, `pods-page-N`,
    /// `events`, `pods-watch` or `request-N` (for the replay-server command line).
    pub fn parse(text: &str) -> Result<Self, String> {
        let (target, rest) = text
            .split_once('=')
            .ok_or_else(|| format!("expected TARGET=FAULT, got {text:?}"))?;
        let (fault, times) = rest.split_once('@').unwrap_or((rest, "always"));
        let number = |s: &str| {
            s.parse::<usize>()
                .map_err(|_| format!("bad number in {text:?}"))
        };
        let target = match target {
            "pods" => Target::PodsList,
            "events" => Target::EventsList,
            "pods-watch" => Target::PodsWatch,
            t if t.starts_with("pods-page-") => Target::PodsPage(number(&t[10..])?),
            t if t.starts_with("request-") => Target::Request(number(&t[8..])?),
            _ => return Err(format!("unknown target {target:?}")),
        };
        let times = match times {
            "always" => Times::Always,
            "once" => Times::First(1),
            n => Times::First(number(n)?),
        };
        Ok(Self {
            target,
            fault: Fault::parse(fault)?,
            times,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse() {
        assert_eq!(
            FaultRule::parse("pods-page-2=expired").unwrap(),
            FaultRule::always(Target::PodsPage(2), Fault::expired())
        );
        assert_eq!(
            FaultRule::parse("pods=503:2@once").unwrap(),
            FaultRule::once(Target::PodsList, Fault::unavailable(2))
        );
        assert_eq!(
            FaultRule::parse("request-3=delay:1500@2").unwrap().fault,
            Fault::Delay(Duration::from_millis(1500))
        );
        assert_eq!(
            FaultRule::parse("pods-page-2=stall-mid-body:30000@once").unwrap(),
            FaultRule::once(
                Target::PodsPage(2),
                Fault::StallMidBody(Duration::from_secs(30))
            )
        );
        assert_eq!(
            FaultRule::parse("pods-page-2=other-version").unwrap().fault,
            Fault::OtherVersion
        );
        assert_eq!(
            FaultRule::parse("events=endless").unwrap(),
            FaultRule::always(Target::EventsList, Fault::Endless)
        );
        assert_eq!(
            FaultRule::parse("pods-watch=cut-after:3@once").unwrap(),
            FaultRule::once(Target::PodsWatch, Fault::CutWatch(3))
        );
        assert_eq!(
            FaultRule::parse("pods-watch=error-event:2").unwrap().fault,
            Fault::error_event(2, 410)
        );
        assert_eq!(
            FaultRule::parse("pods-watch=405").unwrap().fault,
            Fault::method_not_allowed()
        );
        assert!(FaultRule::parse("pods-watch=error-event:2:404").is_err());
        assert!(FaultRule::parse("pods-watch=cut-after").is_err());
        assert!(FaultRule::parse("pods=boom").is_err());
        assert!(FaultRule::parse("pods=stall-mid-body").is_err());
        assert!(FaultRule::parse("nodes=500").is_err());
    }
}
