//! A live check's ends: the deadline, the deadline epoch and the lists'
//! budget, computed once when the check starts ([`Bounds`]).

use super::error::CheckError;
use super::settings::Source;
use crate::live::list;
use std::time::{Duration, Instant};

/// A live check's ends, computed once when it starts: the one place the
/// deadline epoch meets the relative deadline. Everything after reads
/// these: the settle loop and the watch its `source`'s deadline, every list
/// (pages, retries) [`Self::until`], the events a budget within it.
pub(crate) struct Bounds {
    /// The source, its settle deadline capped by the time left before the
    /// deadline epoch.
    pub(super) source: Source,
    /// When every pods list must have ended: the deadline plus one kubectl
    /// timeout after the check started (a list begun at the deadline still
    /// gets its kubectl timeout; no server keeps it paging), or the
    /// deadline epoch when sooner.
    pub(super) until: list::Until,
    /// The epoch, not the deadline, ends the settling / the lists.
    pub(super) settle_by_epoch: bool,
    pub(super) until_by_epoch: bool,
    pub(super) epoch: u64,
}

impl Bounds {
    pub(super) fn new(source: &Source, started: Instant) -> Result<Self, CheckError> {
        let mut bounded = source.clone();
        let Source::Live {
            kubectl,
            deadline,
            deadline_epoch,
            ..
        } = &mut bounded
        else {
            return Ok(Self {
                source: bounded,
                until: list::Until::after(Duration::ZERO),
                settle_by_epoch: false,
                until_by_epoch: false,
                epoch: 0,
            });
        };
        let budget = deadline.saturating_add(kubectl.timeout);
        // The time left before the epoch, by the wall clock, now.
        let left = (*deadline_epoch > 0).then(|| {
            let at = std::time::UNIX_EPOCH + Duration::from_secs(*deadline_epoch);
            let now = std::time::SystemTime::now();
            at.duration_since(now).unwrap_or_default()
        });
        let epoch = *deadline_epoch;
        let settle_by_epoch = left.is_some_and(|left| left < *deadline);
        let until_by_epoch = left.is_some_and(|left| left < budget);
        if let Some(left) = left {
            *deadline = left.min(*deadline);
        }
        let bounds = Self {
            source: bounded,
            until: list::Until {
                at: started + left.map_or(budget, |left| left.min(budget)),
                seconds: budget.as_secs(),
            },
            settle_by_epoch,
            until_by_epoch,
            epoch,
        };
        if left == Some(Duration::ZERO) {
            return Err(bounds.passed(started));
        }
        Ok(bounds)
    }

    /// The error of an observation the deadline epoch cut short.
    pub(super) fn passed(&self, started: Instant) -> CheckError {
        CheckError::EpochPassed {
            epoch: self.epoch,
            waited: started.elapsed().as_secs(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api;
    use crate::contract::messages;
    use crate::live::kubectl::Kubectl;

    fn live(deadline: u64, deadline_epoch: u64) -> Source {
        Source::Live {
            kubectl: Kubectl {
                program: "kubectl".into(),
                context: None,
                kubeconfig: None,
                timeout: Duration::from_secs(120),
                bound: None,
                interval: Duration::from_secs(5),
                proxy: None,
            },
            deadline: Duration::from_secs(deadline),
            interval: Duration::from_secs(5),
            chunk_size: 0,
            watch: true,
            deadline_epoch,
            pods: api::PODS,
            events: api::EVENTS,
        }
    }

    fn in_seconds(seconds: u64) -> u64 {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        now.expect("after 1970").as_secs() + seconds
    }

    /// The settle deadline and the lists' budget in seconds; whether the
    /// epoch set each.
    fn ends(source: &Source) -> (u64, u64, bool, bool) {
        let started = Instant::now();
        let bounds = Bounds::new(source, started).expect("not passed");
        let Source::Live { deadline, .. } = bounds.source else {
            unreachable!()
        };
        let until = bounds.until.at.duration_since(started);
        // Rounded: the epoch is whole seconds, now is not.
        let round = |d: Duration| (d.as_millis() as u64 + 500) / 1000;
        (
            round(deadline),
            round(until),
            bounds.settle_by_epoch,
            bounds.until_by_epoch,
        )
    }

    #[test]
    fn the_deadline_epoch_caps_the_deadline_and_every_list_once() {
        assert_eq!(ends(&live(60, 0)), (60, 180, false, false));
        assert_eq!(ends(&live(60, in_seconds(1000))), (60, 180, false, false));
        let (deadline, until, settle, list) = ends(&live(60, in_seconds(100)));
        assert_eq!((deadline, settle, list), (60, false, true));
        assert!((99..=100).contains(&until), "{until}");
        let (deadline, until, settle, list) = ends(&live(60, in_seconds(30)));
        assert!((29..=30).contains(&deadline) && (29..=30).contains(&until));
        assert!(settle && list);
    }

    #[test]
    fn a_deadline_epoch_already_past_ends_the_check_at_once() {
        let error = Bounds::new(&live(60, 1), Instant::now())
            .err()
            .expect("passed");
        assert_eq!(error.exit_code(), crate::exit::CANNOT_OBSERVE);
        assert_eq!(
            error.to_string(),
            messages::DEADLINE_EPOCH_PASSED.format(&[("epoch", &1), ("waited", &0)])
        );
    }
}
