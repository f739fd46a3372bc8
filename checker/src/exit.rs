//! Exit codes shared by the checker and the generated bash function.

/// Every pod is scheduled, or there are no pods to check.
pub const PASS: u8 = 0;
/// Pods are unscheduled or failed.
pub const VALIDATION_FAILED: u8 = 1;
/// The cluster could not be observed, or the input or usage was bad.
pub const CANNOT_OBSERVE: u8 = 2;
