//! What scriptgen renders: the canonical programs verbatim, the checker's
//! settings, and what `scriptgen render` prints.

use assert_cmd::Command;
use checker::contract;
use checker::Programs;
use scriptgen::render::{self, embedded_jq, heredoc_delimiter, Fields, USED};

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
fn every_used_program_appears_compacted_in_every_output() {
    let outputs = [
        scriptgen(&["render", "--with", "summary,results,workloads"]),
        scriptgen(&[
            "render",
            "--definition",
            "--with",
            "summary,results,workloads",
        ]),
        scriptgen(&["render", "--wrapper"]),
    ];
    for program in USED {
        let compacted = embedded_jq(program.body).unwrap();
        for output in &outputs {
            assert!(
                output.contains(&compacted),
                "{} is not embedded (compacted)",
                program.file
            );
        }
    }
    // lib.jq once, however many programs it is put in front of (host.rs
    // proves jq receives lib.jq and the body as one text).
    assert!(USED.iter().filter(|p| p.with_lib).count() > 1);
    let lib = embedded_jq(Programs::LIB).unwrap();
    for output in &outputs {
        assert_eq!(output.matches(&lib).count(), 1, "lib.jq");
    }
}

/// The embedded jq is the canonical program as written: its layout and
/// comments are what a host's maintainer reads.
#[test]
fn embedding_keeps_each_program_as_written() {
    let program = "# about\ndef f: \"a # not a comment\";  # why\n\n  .x\n   | f";
    assert_eq!(embedded_jq(program).unwrap(), format!("{program}\n"));
    assert!(
        embedded_jq("# a comment \\\n.").is_err(),
        "a comment continued"
    );
    for program in USED {
        let embedded = embedded_jq(program.text).unwrap();
        assert_eq!(
            embedded.trim_end(),
            program.text.trim_end(),
            "{}",
            program.file
        );
    }
}

/// The part of a generated file outside the jq programs' here-documents.
fn outside_heredocs(output: &str) -> String {
    let mut out = String::new();
    let mut delimiter: Option<String> = None;
    for line in output.lines() {
        match &delimiter {
            Some(end) if line == end => delimiter = None,
            Some(_) => {}
            None => {
                out.push_str(line);
                out.push('\n');
                if let Some(at) = line.find("<<'VERIFY_PODS_") {
                    let rest = &line[at + 3..];
                    delimiter = Some(rest[..rest.find('\'').unwrap()].to_owned());
                }
            }
        }
    }
    out
}

/// The generated bash names nothing of verify-pods' insides: no Rust path
/// or item, no make target, no README section (outside the jq, whose
/// comments are the programs' own). Its comments: one line above each
/// helper saying why it exists, and shellcheck's directives, each with its
/// reason.
#[test]
fn nothing_foreign_in_the_generated_bash() {
    for output in [
        scriptgen(&["render"]),
        scriptgen(&["render", "--definition"]),
        scriptgen(&["render", "--wrapper"]),
    ] {
        let output = outside_heredocs(&output);
        for foreign in [
            "checker/",
            "checker::",
            "scriptgen",
            ".rs",
            "make ",
            "cargo",
            "README",
            "Cargo",
        ] {
            assert!(!output.contains(foreign), "{foreign:?} in\n{output}");
        }
        let definition = &output[output.find("verify_pods() {").unwrap()..];
        // What the function says at run time names no flag of verify-pods.
        assert!(!definition.contains("--with"), "{definition}");
        let lines: Vec<&str> = definition.lines().collect();
        let defines = |line: &str| line.contains("() {");
        for (at, line) in lines.iter().enumerate() {
            let code = line.trim_start();
            if code.starts_with("# shellcheck ") {
                assert!(
                    code.contains(" # "),
                    "a directive without its reason: {line}"
                );
            } else if code.starts_with('#') {
                assert!(defines(lines[at + 1]), "a comment on no helper: {line}");
            } else if defines(line) && at > 0 && !code.starts_with("verify_pods()") {
                let above = lines[at - 1].trim_start();
                // A runner after another runner (its last line `...; }`,
                // continued from the line that names it).
                let named = lines[..at]
                    .iter()
                    .rev()
                    .skip(1)
                    .take_while(|l| l.ends_with('\\'))
                    .last()
                    .map_or(above, |first| first.trim_start());
                let after_runner = named.starts_with("vp_run_") && above.ends_with("; }");
                let runner = code.starts_with("vp_run_") && (above == "}" || after_runner);
                let fallback = code.starts_with("declare -F log_") && defines(above);
                assert!(
                    above.starts_with("# ") || runner || fallback,
                    "a helper without a comment: {line}"
                );
            }
        }
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
    let with = "summary,results,workloads";
    let definition = scriptgen(&["render", "--definition", "--with", with]);
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
    // The list, in lines that each add to it.
    let listed: String = definition
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            l.strip_prefix("local excluded_namespaces=")
                .or_else(|| l.strip_prefix("excluded_namespaces+="))
        })
        .collect();
    assert_eq!(listed, excluded);
    for (env, default) in [
        (contract::DEADLINE_ENV, contract::DEFAULT_DEADLINE),
        (contract::INTERVAL_ENV, contract::DEFAULT_INTERVAL),
        (
            contract::KUBECTL_TIMEOUT_ENV,
            contract::DEFAULT_KUBECTL_TIMEOUT,
        ),
    ] {
        assert!(definition.contains(&format!(" {env} {default} ")), "{env}");
    }
    // A feature left out (artifacts): its setting said ignored when set.
    let artifacts = format!("artifacts:{}", Fields::short(contract::ARTIFACT_DIR_ENV));
    assert!(definition.contains(&artifacts), "{artifacts}");
    for list in [checker::api::PODS, checker::api::EVENTS] {
        let base = scriptgen::render::shell_word(&list.url(0, None));
        assert!(definition.contains(&format!("_list={base}")), "{base}");
    }
}

#[test]
fn the_definition_is_what_splice_inserts_and_the_files_include() {
    // A host's function (no --with) is what splice inserts and
    // generated/verify_pods.sh holds; the wrapper holds every feature.
    let host = Fields::with(&[]).unwrap();
    let definition = render::definition(&host).unwrap();
    assert!(definition.starts_with("verify_pods() {\n"));
    assert!(definition.ends_with("\n}\n"));
    assert!(render::function_file(&host).unwrap().contains(&definition));
    assert_eq!(scriptgen(&["render", "--definition"]), definition);
    let all = Fields::from_checker().unwrap();
    let full = render::definition(&all).unwrap();
    assert!(render::wrapper(&all).unwrap().contains(&full));
    assert_ne!(full, definition, "the features add nothing");
    let every: Vec<&str> = render::Feature::ALL.iter().map(|f| f.name()).collect();
    assert_eq!(
        scriptgen(&["render", "--definition", "--with", &every.join(",")]),
        full
    );
}

#[test]
fn headers_say_the_version_and_how_to_regenerate_and_check() {
    for (args, command) in [
        (&["render"][..], "verify-pods bash render"),
        (
            &["render", "--wrapper"][..],
            "verify-pods bash render --wrapper",
        ),
    ] {
        let output = scriptgen(args);
        let end = output.find("do not edit").unwrap();
        let header = &output[..end + output[end..].find('\n').unwrap()];
        assert!(header.contains("do not edit"), "{header}");
        assert!(
            header.contains(&format!("Regenerate: {command} > ")),
            "{header}"
        );
        assert!(
            header.contains(&format!("Check:      {command} | diff - ")),
            "{header}"
        );
        assert!(header.contains(concat!("verify-pods ", env!("CARGO_PKG_VERSION"))));
        // No address: the header names the generator and the command.
        assert!(!header.contains("https://"), "{header}");
        // It names each program it embeds; a host's function says what
        // it left out and how to add it.
        for program in USED {
            let embedded = output.contains(&embedded_jq(program.body).unwrap());
            assert_eq!(header.contains(program.file), embedded, "{}", program.file);
        }
        let wrapper = args.contains(&"--wrapper");
        assert_eq!(
            header.contains("Left out (regenerate with --with NAME"),
            !wrapper
        );
        assert!(header.contains(contract::DEADLINE_ENV), "the settings");
    }
    assert!(scriptgen(&["render", "--wrapper"]).starts_with("#!/usr/bin/env bash\n"));
}

#[test]
fn help_has_examples() {
    let help = scriptgen(&["--help"]);
    for word in ["render", "write", "check", "splice", "Examples:"] {
        assert!(help.contains(word), "{word}");
    }
}

/// The library `scriptgen splice --lib` writes for the host fixture
/// (tests/fixtures/validate-scheduling.sh), with the features `with` names.
fn host_library(with: Option<&str>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("validate-scheduling.sh");
    let fixture = verify_pods_tests::sandbox::scriptgen_fixture("validate-scheduling.sh");
    std::fs::copy(fixture, &host).unwrap();
    let mut command = Command::cargo_bin("scriptgen").unwrap();
    command
        .arg("splice")
        .arg(&host)
        .args(["--lib", "lib/verify-pods.sh", "--write"]);
    if let Some(with) = with {
        command.args(["--with", with]);
    }
    assert!(
        command.output().unwrap().status.success(),
        "splice {with:?}"
    );
    std::fs::read_to_string(dir.path().join("lib/verify-pods.sh")).unwrap()
}

/// The longest line a generated file or a template may hold.
const MOST_COLUMNS: usize = 100;

/// Every generated file (the committed ones, a spliced library with every
/// feature) and every template, jq included: no line is over 100
/// characters.
#[test]
fn no_line_is_over_100_characters() {
    let mut texts: Vec<(String, String)> = scriptgen::generated::files()
        .unwrap()
        .into_iter()
        .map(|file| (file.path, file.contents))
        .collect();
    let every = Fields::with(&render::Feature::ALL).unwrap();
    let regenerate = "verify-pods bash splice kwok/scripts/validate-scheduling.sh \
                      --lib lib/verify-pods.sh";
    let library = render::Library {
        lib: "lib/verify-pods.sh",
        host: "validate-scheduling.sh",
        from: "the repository root",
        regenerate,
        license: "",
    };
    let definition = render::definition(&every).unwrap();
    let spliced = render::library_file(&every, &library, &definition).unwrap();
    texts.push(("a library with every feature".into(), spliced));
    // On the host's shape: the splice gives the function the host's
    // indentation (4 spaces a level in the fixture, twice the templates').
    let every_name = render::Feature::ALL.map(|f| f.name()).join(",");
    for with in [None, Some(every_name.as_str())] {
        let name = format!("the host fixture's library, --with {with:?}");
        texts.push((name, host_library(with)));
    }
    // The templates, and the parts of the function's in templates/function/.
    let templates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    let mut folders = vec![templates];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            texts.push((path.display().to_string(), text));
        }
    }
    let mut long = Vec::new();
    for (name, text) in &texts {
        for (at, line) in text.lines().enumerate() {
            let columns = line.chars().count();
            if columns > MOST_COLUMNS {
                long.push(format!("{name}:{}: {columns} columns", at + 1));
            }
        }
    }
    assert!(
        long.is_empty(),
        "lines over {MOST_COLUMNS} columns:\n{}",
        long.join("\n")
    );
}
