//! What scriptgen renders: the canonical programs verbatim, the checker's
//! settings, and what `scriptgen render` prints.

use assert_cmd::Command;
use checker::contract;
use checker::Programs;
use scriptgen::render::{self, heredoc_delimiter, Fields, USED};

fn scriptgen(args: &[&str]) -> String {
    let output = Command::cargo_bin("scriptgen")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "scriptgen {args:?} failed");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn every_used_program_appears_verbatim_in_every_output() {
    let outputs = [
        scriptgen(&["render"]),
        scriptgen(&["render", "--definition"]),
        scriptgen(&["render", "--wrapper"]),
    ];
    for program in USED {
        for output in &outputs {
            assert!(
                output.contains(program.body),
                "{} is not embedded byte for byte",
                program.file
            );
        }
    }
    // lib.jq once, however many programs it is put in front of (host.rs
    // proves jq receives lib.jq and the body as one text).
    assert!(USED.iter().filter(|p| p.with_lib).count() > 1);
    for output in &outputs {
        assert_eq!(output.matches(Programs::LIB).count(), 1, "lib.jq");
    }
}

#[test]
fn no_program_contains_a_heredoc_delimiter() {
    // Every canonical program, used or not, so a new one cannot break this.
    let names = || {
        Programs::ALL
            .iter()
            .map(|p| p.name)
            .chain([Programs::LIB_NAME])
    };
    for program in Programs::ALL {
        for name in names() {
            let delimiter = heredoc_delimiter(name);
            assert!(
                !program.text.contains(&delimiter),
                "{} contains {delimiter}",
                program.file
            );
        }
    }
    // Each delimiter opens and closes exactly one here-document.
    let definition = scriptgen(&["render", "--definition"]);
    for name in USED.iter().map(|p| p.name).chain([Programs::LIB_NAME]) {
        let delimiter = heredoc_delimiter(name);
        let opening = format!("<<'{delimiter}'");
        assert_eq!(definition.matches(&opening).count(), 1, "{delimiter}");
        assert_eq!(
            definition.lines().filter(|l| *l == delimiter).count(),
            1,
            "{delimiter} closes once"
        );
    }
}

#[test]
fn settings_come_from_the_checker() {
    let definition = scriptgen(&["render", "--definition"]);
    let excluded = Programs::default_excluded_namespaces().join(",");
    assert!(definition.contains(&format!("excluded_namespaces={excluded}\n")));
    for (env, default) in [
        (contract::DEADLINE_ENV, contract::DEFAULT_DEADLINE),
        (contract::INTERVAL_ENV, contract::DEFAULT_INTERVAL),
        (
            contract::KUBECTL_TIMEOUT_ENV,
            contract::DEFAULT_KUBECTL_TIMEOUT,
        ),
    ] {
        assert!(definition.contains(&format!("{env} {default} ")), "{env}");
    }
    assert!(definition.contains(contract::ARTIFACT_DIR_ENV));
    for list in [checker::api::PODS, checker::api::EVENTS] {
        let base = scriptgen::render::shell_word(&list.url(0, None));
        assert!(definition.contains(&format!("_list={base}")), "{base}");
    }
}

#[test]
fn the_definition_is_what_splice_inserts_and_the_files_include() {
    let fields = Fields::from_checker().unwrap();
    let definition = render::definition(&fields).unwrap();
    assert!(definition.starts_with("verify_pods() {\n"));
    assert!(definition.ends_with("\n}\n"));
    assert!(render::function_file(&fields)
        .unwrap()
        .contains(&definition));
    assert!(render::wrapper(&fields).unwrap().contains(&definition));
    assert_eq!(scriptgen(&["render", "--definition"]), definition);
}

#[test]
fn headers_say_generated_from_what_and_how() {
    for output in [scriptgen(&["render"]), scriptgen(&["render", "--wrapper"])] {
        let header: String = output.lines().take(20).collect::<Vec<_>>().join("\n");
        assert!(header.contains("GENERATED FILE, DO NOT EDIT"), "{header}");
        assert!(header.contains("make generate"));
        assert!(header.contains("cargo run -p scriptgen -- write"));
        for program in USED {
            assert!(header.contains(program.file), "{}", program.file);
        }
    }
    assert!(scriptgen(&["render", "--wrapper"]).starts_with("#!/usr/bin/env bash\n"));
}

/// Issue 13: users splice with the verify-pods binary (scriptgen's splice
/// is the developers'); the headers of what they splice say so.
#[test]
fn headers_name_the_users_splice_command() {
    assert_eq!(render::SPLICE_COMMAND, "verify-pods bash splice");
    for output in [
        scriptgen(&["render"]),
        scriptgen(&["render", "--definition"]),
    ] {
        assert!(!output.contains("scriptgen splice"), "{output}");
        assert!(output.contains(&format!(
            "`{} SCRIPT [--lib PATH] --write`",
            render::SPLICE_COMMAND
        )));
        assert!(output.contains("contract.json"), "the table is named");
    }
}

#[test]
fn help_has_examples() {
    let help = scriptgen(&["--help"]);
    for word in ["render", "write", "check", "splice", "Examples:"] {
        assert!(help.contains(word), "{word}");
    }
}
