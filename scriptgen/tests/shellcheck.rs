//! shellcheck (default severity) and bash -n on the generated files.

use verify_pods_tests::sandbox;

use std::process::Command;

#[test]
fn shellcheck_reports_nothing_on_generated_files() {
    let output = verify_pods_tests::run(
        Command::new("shellcheck")
            .arg("-x")
            .arg(sandbox::function_file())
            .arg(sandbox::wrapper()),
    );
    assert!(
        output.status.success() && output.stdout.is_empty(),
        "shellcheck:\n{}{}",
        verify_pods_tests::text(&output.stdout),
        verify_pods_tests::text(&output.stderr)
    );
}

#[test]
fn bash_parses_the_generated_files() {
    for file in [sandbox::function_file(), sandbox::wrapper()] {
        let output = verify_pods_tests::run(Command::new("bash").arg("-n").arg(&file));
        assert!(
            output.status.success(),
            "{}: {}",
            file.display(),
            verify_pods_tests::text(&output.stderr)
        );
    }
}
