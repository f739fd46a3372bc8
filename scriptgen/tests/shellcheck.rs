//! shellcheck (default severity) and bash -n on the generated files.

mod common;

use std::process::Command;

#[test]
fn shellcheck_reports_nothing_on_generated_files() {
    let output = common::run(
        Command::new("shellcheck")
            .arg("-x")
            .arg(common::function_file())
            .arg(common::wrapper()),
    );
    assert!(
        output.status.success() && output.stdout.is_empty(),
        "shellcheck:\n{}{}",
        common::text(&output.stdout),
        common::text(&output.stderr)
    );
}

#[test]
fn bash_parses_the_generated_files() {
    for file in [common::function_file(), common::wrapper()] {
        let output = common::run(Command::new("bash").arg("-n").arg(&file));
        assert!(
            output.status.success(),
            "{}: {}",
            file.display(),
            common::text(&output.stderr)
        );
    }
}
