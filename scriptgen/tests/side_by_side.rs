//! Issue 31, side by side: the host fixture's own verify_pods() (shaped
//! like upstream's today) and the one `verify-pods bash splice --lib` puts
//! in its place, each run by the host itself (its strict mode, its colour
//! log_* helpers, its lib/ sources), on the same cluster states, through
//! the real kubectl against the replay server. The lines logs are grepped
//! for must be identical, in the same stream and through the same log
//! function; every other line one of them prints must be a difference the
//! the migration table (docs/migrating.md) names.

use serde_json::Value;
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use verify_pods_tests::replay::fixtures::{failed_scheduling_event, Phase, Pod};
use verify_pods_tests::replay::{in_parallel, Fault, FaultRule, KubeEnv, Server, State, Target};
use verify_pods_tests::{code, text};

/// The host fixture in `dir` with its lib/, and `run.sh`: the host with
/// its `main "$@"` replaced by a checked call of verify_pods.
fn host_in(dir: &Path, splice: bool) -> PathBuf {
    host_with(dir, splice, None)
}

/// [`host_in`], the library spliced `--with` the features `with` names
/// when it is given.
fn host_with(dir: &Path, splice: bool, with: Option<&str>) -> PathBuf {
    let fixture = verify_pods_tests::sandbox::scriptgen_fixture("validate-scheduling.sh");
    let script = dir.join("validate-scheduling.sh");
    fs::copy(&fixture, &script).unwrap();
    fs::create_dir(dir.join("lib")).unwrap();
    for entry in fs::read_dir(verify_pods_tests::sandbox::scriptgen_fixture("lib")).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), dir.join("lib").join(entry.file_name())).unwrap();
    }
    if splice {
        // scriptgen writes the same library as `verify-pods bash splice`
        // (splice.rs checks it), and cargo builds it for this test.
        let output = Command::new(env!("CARGO_BIN_EXE_scriptgen"))
            .arg("splice")
            .arg(&script)
            .args(["--lib", "lib/verify-pods.sh", "--write"])
            .args(with.iter().flat_map(|features| ["--with", features]))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
    }
    let host = fs::read_to_string(&script).unwrap();
    let run = host.replace(
        "\nmain \"$@\"\n",
        "\nstatus=0\nverify_pods || status=$?\nexit \"$status\"\n",
    );
    assert_ne!(run, host, "the fixture ends with main \"$@\"");
    let path = dir.join("run.sh");
    fs::write(&path, run).unwrap();
    path
}

struct Case {
    name: &'static str,
    states: Vec<State>,
    fault: Option<FaultRule>,
    /// No server: kubectl meets a closed port.
    closed: bool,
    env: &'static [(&'static str, &'static str)],
    /// The migration table's rows that allow the grepped lines or the exit code to
    /// differ (a verdict or an exit code the table names).
    differs: &'static [&'static str],
}

fn pods(pods: &[Pod]) -> Vec<Value> {
    pods.iter().map(Pod::to_json).collect()
}

fn owned(mut pod: Pod, kind: &str) -> Pod {
    pod.owner_kind = Some(kind.into());
    pod
}

fn failed(namespace: &str, name: &str, reason: &str) -> Pod {
    Pod {
        phase: Phase::Failed,
        reason: Some(reason.into()),
        ..Pod::running(namespace, name, "kwok-node-1")
    }
}

fn cases() -> Vec<Case> {
    let running = || {
        vec![
            Pod::running("ml", "web-0", "kwok-node-0"),
            Pod::running("ml", "web-1", "kwok-node-1"),
            Pod::running("kube-system", "coredns-0", "kwok-node-0"),
        ]
    };
    // One state: the running pods alone.
    let all_running = || vec![State::new(pods(&running()), vec![])];
    let stuck = Pod::unschedulable("training", "worker-3");
    let with = |extra: Pod| {
        let mut all = running();
        all.push(extra);
        all
    };
    let case = |name, states, differs| Case {
        name,
        states,
        fault: None,
        closed: false,
        env: &[],
        differs,
    };
    vec![
        case("pass", all_running(), &[]),
        case(
            "empty bundle",
            vec![State::new(pods(&running()[2..]), vec![])],
            &[],
        ),
        case(
            "unscheduled with events",
            vec![State::new(
                pods(&with(stuck.clone())),
                vec![failed_scheduling_event(&stuck, 30, 4)],
            )],
            &[],
        ),
        case(
            "failed",
            vec![State::new(
                pods(&with(failed("batch", "etl-1", "OOMKilled"))),
                vec![],
            )],
            &[],
        ),
        case(
            "Job owner",
            vec![State::new(pods(&with(owned(stuck.clone(), "Job"))), vec![])],
            &[],
        ),
        case(
            "PyTorchJob owner",
            vec![State::new(
                pods(&with(owned(stuck.clone(), "PyTorchJob"))),
                vec![],
            )],
            &[],
        ),
        case(
            "late scheduling",
            vec![
                State::new(pods(&with(stuck.clone())), vec![]),
                State::new(
                    pods(&with(Pod::running("training", "worker-3", "kwok-node-1"))),
                    vec![],
                ),
            ],
            &[],
        ),
        Case {
            fault: Some(FaultRule::always(Target::PodsList, Fault::internal_error())),
            ..case("a 500", all_running(), &[])
        },
        Case {
            closed: true,
            ..case("a closed port", vec![], &[])
        },
        Case {
            env: &[("KWOK_VERIFY_PODS_DEADLINE", "abc")],
            ..case("a bad setting", all_running(), &[])
        },
        case(
            "2,000 stuck pods",
            vec![State::new(
                pods(
                    &(0..2000)
                        .map(|i| Pod::unschedulable("training", &format!("worker-{i}")))
                        .collect::<Vec<_>>(),
                ),
                vec![],
            )],
            &[],
        ),
        Case {
            env: &[("KWOK_VERIFY_PODS_DEADLINE", "")],
            ..case("an empty knob", all_running(), &[])
        },
    ]
}

/// One run of `run.sh` on a fresh server of `case`'s states.
fn run(case: &Case, script: &Path) -> Output {
    let server;
    let env = if case.closed {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        KubeEnv::new(&format!("http://127.0.0.1:{port}")).unwrap()
    } else {
        let mut builder = Server::builder().states(case.states.clone());
        if let Some(rule) = &case.fault {
            builder = builder.fault(rule.clone());
        }
        server = builder.start().unwrap();
        KubeEnv::for_server(&server).unwrap()
    };
    let path = format!(
        "{}:{}",
        env.bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("bash");
    command
        .arg(script)
        .env_clear()
        .env("PATH", path)
        .env("HOME", script.parent().unwrap())
        .env("KUBECONFIG", &env.kubeconfig)
        .env("KWOK_VERIFY_PODS_DEADLINE", "3")
        .env("KWOK_VERIFY_PODS_INTERVAL", "1")
        .env("KWOK_VERIFY_PODS_KUBECTL_TIMEOUT", "10");
    for (name, value) in case.env {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// A line without the host's colour codes and level tag.
fn words(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    for tag in ["[INFO] ", "[WARN] ", "[ERROR] "] {
        if let Some(rest) = out.strip_prefix(tag) {
            return rest.to_owned();
        }
    }
    out
}

/// The lines CI logs are grepped for.
fn grepped(line: &str) -> bool {
    let w = words(line);
    w == "Verifying pod scheduling..."
        || w == "Scheduling validation FAILED"
        || (w.len() >= 10 && w.chars().all(|c| c == '='))
        || w.ends_with(" pods could not be scheduled to nodes")
        || w.ends_with(" pods are in Failed state")
        || w.starts_with("Scheduling validation PASSED")
        || w == "No pods were created - bundle may be empty"
}

/// The migration table's row that names a line only one side prints (`new`: the
/// spliced function's), or None.
fn row(line: &str, new: bool) -> Option<&'static str> {
    let w = words(line);
    let indented = w.starts_with("  ");
    let rows: &[(&str, bool)] = if new {
        &[
            ("blank lines", w.is_empty()),
            ("status line", w.starts_with("Pod status: ")),
            ("progress line", w.starts_with("Attempt ")),
            ("distribution", w.starts_with("Pod distribution by node:")),
            (
                "distribution",
                indented
                    && w.rsplit(": ")
                        .next()
                        .is_some_and(|n| n.parse::<u64>().is_ok()),
            ),
            (
                "pod lists",
                w.starts_with("Unscheduled pods (") || w.starts_with("Failed pods ("),
            ),
            (
                "pod lists",
                indented && (w.contains(" pod: ") || w.contains(" pods: ") || w.contains("… and ")),
            ),
            ("pod lists", w.starts_with("    ")),
            (
                "events",
                w.starts_with("FailedScheduling events")
                    || w.trim_start().starts_with("20")
                    || (indented && (w.contains(" event): ") || w.contains(" events): "))),
            ),
            ("order, PASSED", w.contains(" not counted: owned by ")),
            ("closing line", w.starts_with("Pod validation failed: ")),
            (
                "pods not yet created",
                w.starts_with("Pods not yet created"),
            ),
            ("settings", w.starts_with("verify_pods: KWOK_VERIFY_PODS_")),
            ("kubectl failures", w.starts_with("verify_pods: ")),
        ]
    } else {
        &[
            ("blank lines", w.is_empty()),
            ("status line", w.starts_with("Pod status: ")),
            ("deadline", w.starts_with("Attempt ")),
            (
                "distribution",
                w == "Pod distribution:" || (indented && w.ends_with(" pods")),
            ),
            (
                "pod lists",
                w == "Unscheduled pods:" || w == "Failed pods:" || (indented && w.contains('/')),
            ),
            (
                "events",
                w.starts_with("Events for unscheduled pods")
                    || w.starts_with("NAMESPACE ")
                    || w.contains("FailedScheduling"),
            ),
            (
                "`Common causes:`",
                w == "Common causes:" || w.starts_with("  - "),
            ),
            (
                "settings",
                w.contains(" must be a non-negative integer (got: "),
            ),
            (
                "kubectl failures",
                w == "Failed to list pods"
                    || w.contains("Error from server")
                    || w.contains("connection")
                    || w.starts_with('E'),
            ),
        ]
    };
    rows.iter().find(|(_, hit)| *hit).map(|(row, _)| *row)
}

/// `a`'s lines that `b` does not hold (as many times).
fn only_in<'a>(a: &'a str, b: &str) -> Vec<&'a str> {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for line in b.lines() {
        *left.entry(line).or_default() += 1;
    }
    a.lines()
        .filter(|line| match left.get_mut(line) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

/// The first cells of the migration table (docs/migrating.md).
fn migration_rows() -> Vec<String> {
    let page =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/migrating.md"))
            .unwrap();
    let section = page
        .split("# Migrating from upstream's verify_pods()")
        .nth(1)
        .expect("the migration section");
    section
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split(" |").next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_spliced_function_prints_what_upstreams_does_or_what_the_table_says() {
    let dir = tempfile::tempdir().unwrap();
    let (original, spliced) = (dir.path().join("original"), dir.path().join("spliced"));
    fs::create_dir(&original).unwrap();
    fs::create_dir(&spliced).unwrap();
    let original = host_in(&original, false);
    let spliced = host_in(&spliced, true);
    let rows = migration_rows();
    let mut problems = Vec::new();
    // Two cases at a time: each has its own server, and the script only
    // reads its directory.
    let cases = cases();
    let runs = in_parallel(cases.iter().collect(), 2, |case| {
        (run(case, &original), run(case, &spliced))
    });
    for (case, (before, after)) in cases.into_iter().zip(runs) {
        for row in case.differs {
            assert!(
                rows.iter().any(|r| r == row),
                "docs/migrating.md has no row {row:?}"
            );
        }
        // Upstream's exit code on every scenario: a library spliced without
        // --with changes no verdict and no exit code.
        if code(&before) != code(&after) {
            problems.push(format!(
                "{}: exit {} became {}",
                case.name,
                code(&before),
                code(&after)
            ));
        }
        for (stream, b, a) in [
            ("stdout", text(&before.stdout), text(&after.stdout)),
            ("stderr", text(&before.stderr), text(&after.stderr)),
        ] {
            let grep = |t: &str| {
                t.lines()
                    .filter(|l| grepped(l))
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            };
            if grep(&b) != grep(&a) {
                problems.push(format!(
                    "{}: the grepped lines of {stream} differ:\n  {:?}\n  {:?}",
                    case.name,
                    grep(&b),
                    grep(&a)
                ));
            }
            for (lines, new) in [(only_in(&a, &b), true), (only_in(&b, &a), false)] {
                for line in lines.into_iter().filter(|l| !grepped(l)) {
                    match row(line, new) {
                        Some(row) if rows.iter().any(|r| r == row) => {}
                        Some(row) => problems.push(format!(
                            "{}: docs/migrating.md has no row {row:?}",
                            case.name
                        )),
                        None => problems.push(format!(
                            "{}: {stream} line only {} prints, no row names it: {line:?}",
                            case.name,
                            if new {
                                "the spliced function"
                            } else {
                                "upstream's"
                            }
                        )),
                    }
                }
            }
        }
        eprintln!(
            "{}: exit {} / {}\n--- upstream's\n{}{}--- spliced\n{}{}",
            case.name,
            code(&before),
            code(&after),
            text(&before.stdout),
            text(&before.stderr),
            text(&after.stdout),
            text(&after.stderr)
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// No new dependency: where coreutils' `timeout` is missing (stock macOS),
/// the spliced function still bounds every kubectl call, by kubectl's own
/// --request-timeout. A server that accepts and never answers, the real
/// kubectl, a PATH without `timeout`: the call ends after its timeout, in
/// the function's words, with upstream's exit 1.
#[test]
fn without_timeout_kubectl_is_still_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let script = host_in(dir.path(), true);
    // Accepts connections and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let env = KubeEnv::new(&format!("http://127.0.0.1:{port}")).unwrap();
    let tools = dir.path().join("tools");
    fs::create_dir(&tools).unwrap();
    let tools_used = [
        "bash", "env", "jq", "mktemp", "rm", "mkdir", "cp", "sleep", "cat", "tail", "dirname",
        "date",
    ];
    for tool in tools_used {
        std::os::unix::fs::symlink(
            verify_pods_tests::sandbox::find_on_path(tool),
            tools.join(tool),
        )
        .unwrap();
    }
    let started = std::time::Instant::now();
    let output = Command::new(tools.join("bash"))
        .arg(&script)
        .env_clear()
        .env(
            "PATH",
            format!("{}:{}", env.bin_dir.display(), tools.display()),
        )
        .env("HOME", dir.path())
        .env("KUBECONFIG", &env.kubeconfig)
        .env("KWOK_VERIFY_PODS_DEADLINE", "1")
        .env("KWOK_VERIFY_PODS_INTERVAL", "1")
        .env("KWOK_VERIFY_PODS_KUBECTL_TIMEOUT", "2")
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    drop(silent);
    let stderr = text(&output.stderr);
    assert_eq!(code(&output), 1, "{stderr}");
    assert!(!stderr.contains("timeout not found"), "{stderr}");
    assert!(stderr.contains("did not finish within"), "{stderr}");
    assert!(elapsed.as_secs() < 20, "{elapsed:?}: {stderr}");
}

/// A 500 that passes (the first pods list only): upstream's function ends
/// at once with exit 1, and so does a library spliced without `--with`,
/// in one line naming the failed call; a library `--with retries` and the
/// wrapper (every feature, as the checker) list again and pass.
#[test]
fn a_transient_500_ends_the_default_library_and_is_asked_again_with_retries() {
    let dir = tempfile::tempdir().unwrap();
    let [original, spliced, retries, wrapper] =
        ["original", "spliced", "retries", "wrapper"].map(|name| dir.path().join(name));
    for directory in [&original, &spliced, &retries, &wrapper] {
        fs::create_dir(directory).unwrap();
    }
    let original = host_in(&original, false);
    let spliced = host_in(&spliced, true);
    let retries = host_with(&retries, true, Some("retries"));
    let wrapper = wrapper.join("verify-pods.sh");
    fs::copy(verify_pods_tests::sandbox::wrapper(), &wrapper).unwrap();
    let case = Case {
        name: "a 500 once",
        states: vec![State::new(
            pods(&[Pod::running("ml", "web-0", "kwok-node-0")]),
            vec![],
        )],
        fault: Some(FaultRule::once(Target::PodsList, Fault::internal_error())),
        closed: false,
        // A deadline long enough that ending "at once" means something.
        env: &[("KWOK_VERIFY_PODS_DEADLINE", "30")],
        differs: &[],
    };
    let runs = in_parallel(vec![&original, &spliced, &retries, &wrapper], 2, |script| {
        let started = std::time::Instant::now();
        (run(&case, script), started.elapsed())
    });
    let said = |output: &Output| format!("{}{}", text(&output.stdout), text(&output.stderr));
    let [(original, _), (spliced, spliced_took), (retries, _), (wrapper, _)] =
        <[(Output, std::time::Duration); 4]>::try_from(runs).unwrap();
    assert_eq!(code(&original), 1, "upstream's:\n{}", said(&original));
    assert_eq!(code(&spliced), 1, "spliced:\n{}", said(&spliced));
    assert!(
        spliced_took.as_secs() < 10,
        "{spliced_took:?}: {}",
        said(&spliced)
    );
    let stderr = text(&spliced.stderr);
    let ours: Vec<&str> = stderr
        .lines()
        .filter(|line| words(line).starts_with("verify_pods: "))
        .collect();
    assert_eq!(ours.len(), 1, "{stderr}");
    assert!(
        ours[0].contains("`kubectl get --raw /api/v1/pods` failed"),
        "{stderr}"
    );
    assert!(ours[0].contains("(InternalError)"), "{stderr}");
    for (name, output) in [("--with retries", &retries), ("the wrapper", &wrapper)] {
        assert_eq!(code(output), 0, "{name}:\n{}", said(output));
        assert!(
            text(&output.stderr).contains("listing again from the start (list 2)"),
            "{name}:\n{}",
            said(output)
        );
    }
}
