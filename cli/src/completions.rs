//! `verify-pods completions` and `verify-pods man`: clap_complete's scripts (the bash one fixed) and clap_mangen's pages.

use crate::flags::Cli;
use crate::written;
use checker::exit;
use std::io::{self, Write};

pub(crate) fn print_completions(shell: clap_complete::Shell) -> u8 {
    let mut command = <Cli as clap::CommandFactory>::command();
    // Into a buffer first: clap_complete panics when its writer fails (e.g.
    // `| head`); a closed pipe is not our error to report.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, BIN_NAME, &mut script);
    let mut script = String::from_utf8_lossy(&script).into_owned();
    if shell == clap_complete::Shell::Bash {
        script = fix_hyphenated_bash_states(&script);
    }
    written(io::stdout().lock().write_all(script.as_bytes()), exit::PASS)
}

const BIN_NAME: &str = "verify-pods";

/// clap_complete's bash script names the subcommand states of a hyphenated
/// binary two ways: the loop that reads the words arrives at
/// `verify__pods__subcmd__check`, the case arms say
/// `verify__subcmd__pods__subcmd__check`, so no option of any subcommand
/// ever completes (clap-rs/clap#6421, open). Spell the arms like the loop;
/// a no-op once clap_complete is fixed.
fn fix_hyphenated_bash_states(script: &str) -> String {
    let state = BIN_NAME.replace('-', "__");
    let misspelled = BIN_NAME.replace('-', "__subcmd__");
    script.replace(&misspelled, &state)
}

/// `verify-pods man DIR`: clap_mangen's pages, one per visible command
/// (verify-pods.1, verify-pods-check.1, …), generated from the same clap
/// definitions as `--help`, each saying the version it documents; the
/// release archives ship them (hack/dist.py).
pub(crate) fn write_man_pages(dir: &std::path::Path) -> u8 {
    let mut command = <Cli as clap::CommandFactory>::command().disable_help_subcommand(true);
    command.build();
    let source = format!("{BIN_NAME} {}", env!("CARGO_PKG_VERSION"));
    let mut commands = vec![command];
    while let Some(command) = commands.pop() {
        commands.extend(
            command
                .get_subcommands()
                .filter(|c| !c.is_hide_set())
                .cloned(),
        );
        let page = clap_mangen::Man::new(command).source(source.as_str());
        if let Err(e) = page.generate_to(dir) {
            return crate::fail(format!(
                "cannot write the manual pages into {}: {}",
                dir.display(),
                checker::contract::io_words(&e)
            ));
        }
    }
    exit::PASS
}
