//! The function reads a page's head itself when the page begins in the API
//! server's own form (`scriptgen::render::PAGE_HEAD_FORM`), and with
//! page-head.jq otherwise. On every head the form takes, real bash must
//! capture what real jq reads with page-head.jq; every other head must be
//! left to jq. The form and the alphabet it is built from are read from
//! the generated wrapper, as it ships (it reads pages: the feature paging).

use std::io::Write;
use std::process::{Command, Stdio};
use verify_pods_tests::sandbox;

/// Heads, each a whole small page, and whether the form takes it.
const HEADS: &[(&str, bool)] = &[
    // The API server's (and the replay server's) pages.
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1000"},"items":[{"metadata":{"name":"a"}}]}"#, true),
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1000","continue":"replay.0.500.2","remainingItemCount":8318},"items":[]}"#, true),
    (r#"{"kind":"ReplicaSetList","apiVersion":"apps/v1","metadata":{"resourceVersion":"88123","continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6ODgxMjN9"},"items":[]}"#, true),
    (r#"{"kind":"EventList","apiVersion":"events.k8s.io/v1","metadata":{"resourceVersion":"7","continue":"a+b/c=_-."},"items":[]}"#, true),
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":""},"items":[]}"#, true),
    // Left to jq: spaces, escapes, other keys, another order, other types.
    ("{\n  \"kind\": \"PodList\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\"resourceVersion\": \"1\"},\n  \"items\": []\n}", false),
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1","continue":"a\u002fb"},"items":[]}"#, false),
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"\u0031"},"items":[]}"#, false),
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":1000},"items":[]}"#, false),
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1","continue":7},"items":[]}"#, false),
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1","resourceVersion":"2"},"items":[]}"#, false),
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{"selfLink":"/api/v1/pods","resourceVersion":"1"},"items":[]}"#, false),
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"x","resourceVersion":"1"},"items":[]}"#, false),
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}"#, false),
    (r#"{"items":[],"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"}}"#, false),
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"é"},"items":[]}"#, false),
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1","remainingItemCount":-1},"items":[]}"#, false),
    (r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":{}}"#, false),
];

/// The generated wrapper's line that starts with `prefix` (trimmed).
fn function_line(prefix: &str) -> String {
    let text = std::fs::read_to_string(sandbox::wrapper()).unwrap();
    text.lines()
        .map(str::trim_start)
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line {prefix:?} in the wrapper"))
        .to_owned()
}

fn run(mut cmd: Command, page: &str) -> (bool, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// What bash captures with the function's own lines: Some("VERSION\nTOKEN\n")
/// when the form takes the head.
fn bash_reading(page: &str, locale: &str) -> Option<String> {
    // `local alnum=…`: the alphabet, as the wrapper spells it.
    let alnum = function_line("local alnum=");
    let alnum = alnum.trim_start_matches("local ");
    // The form, in the lines that build it.
    let text = std::fs::read_to_string(sandbox::wrapper()).unwrap();
    let form: Vec<&str> = text
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("local page_head=") || l.starts_with("page_head+="))
        .collect();
    let form = form.join("\n");
    // The wrapper's own line that takes the two fields from the match.
    let captures = function_line("version=${BASH_REMATCH");
    let script = format!(
        "{alnum}\n{form}\nIFS= read -r -d '' -n 4096 first\n\
         if [[ $first =~ $page_head ]]; then {captures}; printf '%s\\n%s\\n' \"$version\" \"$token\"; else exit 3; fi",
        form = form.trim_start_matches("local "),
    );
    let mut cmd = Command::new("bash");
    cmd.args(["-c", &script]).env("LC_ALL", locale);
    let (ok, out) = run(cmd, page);
    ok.then_some(out)
}

/// What page-head.jq reads: Some("VERSION\nTOKEN\n"), None when it fails.
fn jq_reading(page: &str) -> Option<String> {
    let mut cmd = Command::new("jq");
    cmd.args(checker::Programs::PAGE_HEAD_OPTIONS)
        .arg(checker::Programs::PAGE_HEAD);
    let (ok, out) = run(cmd, page);
    ok.then_some(out)
}

#[test]
fn the_form_takes_the_api_servers_heads_and_reads_them_as_page_head_jq_does() {
    for locale in ["C", "C.UTF-8"] {
        for (page, takes) in HEADS {
            let bash = bash_reading(page, locale);
            assert_eq!(bash.is_some(), *takes, "{locale}: the form on {page}");
            if let Some(read) = bash {
                assert_eq!(Some(read), jq_reading(page), "{locale}: {page}");
            }
        }
    }
}

#[test]
fn a_head_past_the_first_4096_characters_is_left_to_jq() {
    let token = "a".repeat(4096);
    let page = format!(
        r#"{{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"1","continue":"{token}"}},"items":[]}}"#
    );
    assert_eq!(bash_reading(&page, "C"), None);
    assert!(jq_reading(&page).is_some());
}
