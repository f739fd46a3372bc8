//! Issue 24, item 4: the generated bash runs on bash 3.2 (macOS's
//! /bin/bash). bash 3.2 cannot be installed here (Debian ships 5.2), so this
//! lint is the proof: it refuses, in the generated files' code (outside the
//! quoted here-documents that hold the jq programs, and outside comments),
//! every construct that needs a newer bash. The versions are those of
//! bash's CHANGES/NEWS. Constructs the function relies on that bash 3.2
//! has: `printf -v` (3.1), `array+=(…)` (3.1), `read -d`/`-n` (2.04),
//! `<<<` (2.05b), `${!name}` (2.0), `$'…'` (2.0), `[[ ]]`, `(( ))`,
//! `set -o errtrace` (3.0). `${EPOCHREALTIME:-…}` is allowed: on bash < 5
//! the variable is unset and the fallback runs (SECONDS; `date +%s` for
//! the deadline epoch).

use verify_pods_tests::sandbox;

/// One construct newer than bash 3.2: its name, the first bash that has it,
/// whether a line (code only) uses it, and an example line that must be
/// refused (the table's own test).
struct Construct {
    name: &'static str,
    since: &'static str,
    uses: fn(&str) -> bool,
    example: &'static str,
}

fn word(line: &str, word: &str) -> bool {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .any(|w| w == word)
}

/// `declare`/`local`/`typeset` with an option that holds `flag`.
fn declares(line: &str, flag: char) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.windows(2).any(|pair| {
        matches!(pair[0], "declare" | "local" | "typeset" | "readonly")
            && pair[1].starts_with('-')
            && pair[1].len() > 1
            && pair[1][1..].chars().all(|c| c.is_ascii_alphabetic())
            && pair[1].contains(flag)
    })
}

/// The operators of `${…}` right after a name (and an optional `[…]`).
fn expansion_ops(line: &str) -> Vec<String> {
    let mut ops = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("${") {
        rest = &rest[at + 2..];
        let body = rest.trim_start_matches(['#', '!']);
        let name_len = body
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(body.len());
        let mut after = &body[name_len..];
        if after.starts_with('[') {
            after = after.find(']').map_or("", |end| &after[end + 1..]);
        }
        ops.push(after.chars().take(3).collect());
    }
    ops
}

/// One construct a line: `NAME, SINCE, USES, EXAMPLE;` (see [`Construct`]).
macro_rules! constructs {
    ($($name:literal, $since:literal, $uses:expr, $example:literal;)*) => {
        &[$(Construct { name: $name, since: $since, uses: $uses, example: $example }),*]
    };
}

#[rustfmt::skip]
const CONSTRUCTS: &[Construct] = constructs! {
    "mapfile", "4.0", |l| word(l, "mapfile"), "mapfile -t lines <file";
    "readarray", "4.0", |l| word(l, "readarray"), "readarray -t lines <file";
    "associative array (declare -A)", "4.0", |l| declares(l, 'A'), "local -A seen=()";
    "case attribute (declare -l / -u)", "4.0", |l| declares(l, 'l') || declares(l, 'u'), "declare -l lower";
    "case modification ${x,,} ${x^^}", "4.0", |l| expansion_op(l, |op| op.starts_with(',') || op.starts_with('^')), "kind=${kind,,}";
    "&>> append both", "4.0", |l| l.contains("&>>"), "kubectl get pods &>>log";
    "|& pipe both", "4.0", |l| l.contains("|&"), "kubectl get pods |& tail -1";
    "coproc", "4.0", |l| word(l, "coproc"), "coproc kubectl get pods";
    "$BASHPID", "4.0", |l| l.contains("$BASHPID") || l.contains("${BASHPID"), "kill \"$BASHPID\"";
    ";& / ;;& case fall-through", "4.0", |l| l.contains(";&"), "a) x ;&";
    "globstar **", "4.0", |l| word(l, "globstar"), "shopt -s globstar";
    "read -i / -N", "4.0 / 4.1", |l| word(l, "read") && (word(l, "-i") || word(l, "-N")), "read -N 4 x";
    "{var}> fd allocation", "4.1", |l| l.contains("}>") || l.contains("}<"), "exec {fd}>file";
    "declare -g", "4.2", |l| declares(l, 'g'), "declare -g x=1";
    "test -v / [[ -v", "4.2", |l| test_v(l), "[[ -v name ]]";
    "negative subscript ${a[-1]}", "4.2", |l| l.contains("[-"), "last=${lines[-1]}";
    "negative length ${x:0:-1}", "4.2", negative_length, "x=${x:0:-1}";
    "printf %(…)T", "4.2", |l| l.contains("%("), "printf '%(%s)T' -1";
    "shopt lastpipe / inherit_errexit", "4.2 / 4.4", |l| word(l, "lastpipe") || word(l, "inherit_errexit"), "shopt -s lastpipe";
    "nameref (declare -n)", "4.3", |l| declares(l, 'n'), "local -n out=$1";
    "wait -n / -f / -p", "4.3 / 5.0 / 5.1", |l| word(l, "wait") && (word(l, "-n") || word(l, "-f") || word(l, "-p")), "wait -n";
    "${x@Q} transformations", "4.4", |l| expansion_op(l, |op| op.starts_with('@') && op.len() > 1), "printf '%s' \"${x@Q}\"";
    "local -", "4.4", local_dash, "local -";
    "$EPOCHSECONDS / $EPOCHREALTIME without a fallback", "5.0", epoch_unguarded, "now=$EPOCHSECONDS";
    "$SRANDOM / BASH_ARGV0", "5.1 / 5.0", |l| l.contains("SRANDOM") || l.contains("BASH_ARGV0"), "r=$SRANDOM";
    "unguarded \"${a[@]}\" (unbound under set -u before 4.4 when empty)", "4.4", array_unguarded, "cp \"${files[@]}\" dir";
};

/// Whether an operator of `${…}` in `line` ([`expansion_ops`]) is one `is`.
fn expansion_op(line: &str, is: fn(&str) -> bool) -> bool {
    expansion_ops(line).iter().any(|op| is(op))
}

/// `local -` (a local copy of the shell options).
fn local_dash(line: &str) -> bool {
    line.split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .any(|p| p == ["local", "-"])
}

/// `${name:offset:-length}`.
fn negative_length(line: &str) -> bool {
    line.match_indices("${").any(|(at, _)| {
        let body = &line[at + 2..];
        let body = &body[..body.find('}').unwrap_or(body.len())];
        body.split_once(':')
            .and_then(|(_, rest)| rest.split_once(':'))
            .is_some_and(|(offset, length)| !offset.starts_with('-') && length.starts_with('-'))
    })
}

/// `EPOCH…` other than as `${EPOCHREALTIME:-` / `${EPOCHSECONDS:-` (unset
/// on bash < 5: the fallback runs).
fn epoch_unguarded(line: &str) -> bool {
    ["EPOCHREALTIME", "EPOCHSECONDS"].iter().any(|name| {
        line.match_indices(name).any(|(at, _)| {
            !(line[..at].ends_with("${") && line[at + name.len()..].starts_with(":-"))
        })
    })
}

/// `"${name[@]}"` / `"${name[*]}"` not inside the `${name[@]+…}` guard.
/// `${#name[@]}` (a count) is fine on 3.2 under set -u.
fn array_unguarded(line: &str) -> bool {
    line.match_indices("${").any(|(at, _)| {
        let body = &line[at + 2..];
        if body.starts_with('#') || body.starts_with('!') {
            return false;
        }
        let Some(open) = body.find('[') else {
            return false;
        };
        let name = &body[..open];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return false;
        }
        let rest = &body[open..];
        if !(rest.starts_with("[@]") || rest.starts_with("[*]")) {
            return false;
        }
        // The guard: ${name[@]+"${name[@]}"}, the outer one ends with '+'.
        let outer = rest[3..].starts_with('+');
        let inner = line[..at].ends_with(&format!("${{{name}[@]+\""));
        !(outer || inner)
    })
}

/// The code lines of a bash file: no quoted here-document bodies (the jq
/// programs), no comment lines, no trailing ` # comment`s.
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut heredoc: Option<String> = None;
    for (index, line) in text.lines().enumerate() {
        if let Some(delimiter) = &heredoc {
            if line == delimiter {
                heredoc = None;
            }
            continue;
        }
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') {
            continue;
        }
        if let Some(at) = line.find("<<'") {
            let rest = &line[at + 3..];
            if let Some(end) = rest.find('\'') {
                heredoc = Some(rest[..end].to_owned());
            }
        }
        let code = match line.find(" # ") {
            Some(at) => &line[..at],
            None => line,
        };
        lines.push((index + 1, code.to_owned()));
    }
    lines
}

/// Every use of a construct newer than bash 3.2: "line N: NAME (bash
/// SINCE): CODE".
fn findings(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (number, line) in code_lines(text) {
        for construct in CONSTRUCTS {
            if (construct.uses)(&line) {
                found.push(format!(
                    "line {number}: {} (bash {}): {}",
                    construct.name,
                    construct.since,
                    line.trim()
                ));
            }
        }
    }
    found
}

fn generated() -> Vec<(std::path::PathBuf, String)> {
    [sandbox::function_file(), sandbox::wrapper()]
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("generated file");
            (path, text)
        })
        .collect()
}

/// `-v` inside a test (`[[ -v x ]]`, `[ -v x ]`, `test -v x`), not
/// `printf -v` after one on the same line.
fn test_v(line: &str) -> bool {
    line.split([';', '&', '|']).any(|command| {
        let command = command.trim_start().trim_start_matches("if ").trim_start();
        let test =
            command.starts_with("[[") || command.starts_with("[ ") || command.starts_with("test ");
        test && word(command, "-v")
    })
}

#[test]
fn the_generated_bash_uses_nothing_newer_than_bash_3_2() {
    for (path, text) in generated() {
        let found = findings(&text);
        assert!(
            found.is_empty(),
            "{}:\n{}",
            path.display(),
            found.join("\n")
        );
    }
}

/// Honest: a `mapfile` planted in the generated function is refused, with
/// its line and version; the same word inside a jq here-document is not.
#[test]
fn a_planted_mapfile_is_refused() {
    let (_, text) = &generated()[0];
    let opening = text.find("verify_pods() {\n").expect("the function") + 16;
    let planted = format!(
        "{}  mapfile -t lines <\"$file\"\n{}",
        &text[..opening],
        &text[opening..]
    );
    let found = findings(&planted);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].contains("mapfile (bash 4.0)"), "{found:#?}");
    let quoted = text.replacen(
        "<<'VERIFY_PODS_LIB_JQ' || true\n",
        "<<'VERIFY_PODS_LIB_JQ' || true\nmapfile declare -A ${x,,} |& wait -n\n",
        1,
    );
    assert!(&quoted != text, "the lib.jq here-document is there");
    assert_eq!(findings(&quoted), Vec::<String>::new());
}

/// Each row refuses its own example, and the 3.2 spellings the function
/// uses pass.
#[test]
fn every_construct_is_refused_and_the_3_2_spellings_pass() {
    for construct in CONSTRUCTS {
        assert!((construct.uses)(construct.example), "{}", construct.name);
        assert_eq!(
            findings(construct.example).len(),
            1,
            "{}",
            construct.example
        );
    }
    for fine in [
        "now_us=${EPOCHREALTIME:-$SECONDS.000000}",
        "if [[ -n ${EPOCHREALTIME:-} ]]; then",
        "cp ${files[@]+\"${files[@]}\"} dir",
        "for ((index = 0; index < ${#artifacts[@]}; index += 2)); do",
        "printf -v said \"$format\" \"$@\"",
        "stderr_lines+=(\"$line\")",
        "IFS= read -r -d '' -n 4096 first <\"$page_file\"",
        "local -a doc_lines=()",
        "text=${!named-$default}",
        "value=${text//[[:cntrl:]]/?}",
        "c=${token:i:1}",
        "kill -s TERM -- \"-$kubectl_pid\" 2>/dev/null",
    ] {
        assert_eq!(findings(fine), Vec::<String>::new(), "{fine}");
    }
}
