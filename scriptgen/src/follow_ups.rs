//! What a splice leaves for the host's maintainers to decide: the calls
//! and comments a verdict or exit-code feature changes the meaning of.

use crate::bash_lines::{classify, Kind, Line};
use crate::splice_error::{SpliceError, NAME};

/// What the splice leaves for the host's maintainers to decide: a line of
/// the (spliced) script and what to look at there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowUp {
    /// 1-based.
    pub line: usize,
    pub text: String,
}

/// What changed for the host, so that the splice says it: the function's
/// verdict and exit-code features.
#[derive(Debug, Clone, Copy)]
pub struct Changes<'a> {
    /// The function returns 2 when it could not observe (feature exit-2).
    pub exit_2: bool,
    /// Only the kinds this variable lists excuse a pod (feature
    /// exact-owner-kinds); None: upstream's substring rule.
    pub owner_kinds_env: Option<&'a str>,
}

/// The follow-ups of a spliced `script` (the splice never edits its logic),
/// only for what `changes` changed: with exit 2, each bare `verify_pods`
/// call under `set -e` (its exit 2 now ends the script) and the comment
/// lines about verify_pods' exit codes (a comment block that names it and
/// says "exit code"); with exact owner kinds, when the script sets no
/// such variable, the call.
pub fn follow_ups(script: &str, changes: Changes) -> Result<Vec<FollowUp>, SpliceError> {
    let lines = classify(script)?;
    let errexit = lines.iter().any(|l| {
        let code = l.text.trim();
        l.kind == Kind::Code
            && code.starts_with("set ")
            && (code
                .split_whitespace()
                .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('e'))
                || code.contains("-o errexit"))
    });
    let mut found = Vec::new();
    let calls: Vec<&Line> = lines
        .iter()
        .filter(|l| l.kind == Kind::Code && l.text.split_whitespace().next() == Some(NAME))
        .collect();
    for call in &calls {
        let bare = !call.text.contains("||") && !call.text.contains("&&");
        if changes.exit_2 && errexit && bare {
            found.push(FollowUp {
                line: call.number,
                text: format!(
                    "a bare `{NAME}` under set -e: its exit 2 (could not observe: kubectl \
                     failing, no coherent list, bad settings) now ends the script with 2; \
                     `{NAME} || status=$?` lets the script decide"
                ),
            });
        }
    }
    for line in exit_code_comments(&lines) {
        if changes.exit_2 {
            found.push(FollowUp {
                line: line.number,
                text: format!(
                    "the exit codes documented here: {NAME} returns 0 pass or empty, \
                     1 validation failed, 2 could not observe"
                ),
            });
        }
    }
    let unset = changes.owner_kinds_env.filter(|env| !script.contains(env));
    if let Some(owner_kinds_env) = unset {
        if let Some(call) = calls.first() {
            found.push(FollowUp {
                line: call.number,
                text: format!(
                    "{owner_kinds_env} is set nowhere: only pods owned by a Job are excused, \
                     where upstream excused every kind containing \"Job\" (PyTorchJob, \
                     MPIJob, ...); to keep its verdicts, export the kinds before this call \
                     (verify-pods' docs/migrating.md: The Job rule)"
                ),
            });
        }
    }
    found.sort_by_key(|f| f.line);
    Ok(found)
}

/// The comment lines that say "exit code" in a comment block (consecutive
/// comment lines) that names verify_pods: those about its exit codes, not
/// another function's or the script's own.
fn exit_code_comments<'a>(lines: &'a [Line<'a>]) -> Vec<&'a Line<'a>> {
    let is_comment = |l: &Line| l.kind == Kind::Code && l.text.trim_start().starts_with('#');
    let mut found = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let block: Vec<&Line> = lines[at..].iter().take_while(|l| is_comment(l)).collect();
        if block.is_empty() {
            at += 1;
            continue;
        }
        at += block.len();
        if block.iter().any(|l| l.text.contains(NAME)) {
            let about_exit = |l: &&Line| l.text.to_ascii_lowercase().contains("exit code");
            found.extend(block.into_iter().filter(about_exit));
        }
    }
    found
}
