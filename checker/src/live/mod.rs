//! The live path: the cluster through kubectl. [`kubectl`] runs one kubectl
//! process (its own process group, a watchdog), or asks the check's
//! [`proxy`] for a list read beside the pods; [`stop`] ends either from
//! another thread; [`list`] reads one list in coherent pages, [`watch`]
//! settles on one list plus a watch stream; [`waiting`] says, every
//! interval, that a list call still runs. Each has its own error;
//! the check (`check/`) turns them into a [`crate::check::CheckError`].

pub mod kubectl;
pub mod list;
pub mod proxy;
pub mod stop;
pub mod waiting;
pub mod watch;
