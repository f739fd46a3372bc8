//! The programs a live test runs against the replay server: the two drivers
//! of the product, and the old function the race tests hold them against.

use crate::replay::{generated_wrapper, KubeEnv};
use crate::workspace_root;
use checker::Programs;
use std::process::Command;

/// Which program prints the status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// `verify-pods check`.
    Checker,
    /// `bash generated/verify-pods.sh`.
    Wrapper,
    /// The old `verify_pods` (tests/scripts/legacy-verify-pods.sh), whose
    /// sampling race the product fixes.
    Legacy,
}

/// The drivers of the product, each case runs through both.
pub const DRIVERS: [Driver; 2] = [Driver::Checker, Driver::Wrapper];

impl Driver {
    /// The driver's command against `env`, with none of the user's
    /// KWOK_VERIFY_PODS_* settings.
    pub fn command(self, env: &KubeEnv) -> Command {
        match self {
            Driver::Checker => env.checker(),
            Driver::Wrapper => {
                assert!(
                    generated_wrapper().is_file(),
                    "generated/verify-pods.sh is missing"
                );
                env.wrapper()
            }
            Driver::Legacy => {
                let mut cmd = Command::new("bash");
                env.apply(&mut cmd)
                    .arg(workspace_root().join("tests/scripts/legacy-verify-pods.sh"))
                    .env(
                        "EXCLUDED",
                        Programs::default_excluded_namespaces().join(","),
                    );
                cmd
            }
        }
    }
}

/// One test per driver of the product for each check: `$checker` runs
/// `$check` with the checker, `$wrapper` with the generated wrapper (first
/// failing plainly if it is missing). `$check` takes the [`Driver`].
#[macro_export]
macro_rules! test_both_drivers {
    ($($check:path => $checker:ident, $wrapper:ident;)+) => {$(
        #[test]
        fn $checker() {
            $check($crate::driver::Driver::Checker);
        }

        #[test]
        fn $wrapper() {
            assert!(
                $crate::replay::generated_wrapper().is_file(),
                "generated/verify-pods.sh is missing"
            );
            $check($crate::driver::Driver::Wrapper);
        }
    )+};
}
