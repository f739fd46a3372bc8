//! Test support for verify-pods.
