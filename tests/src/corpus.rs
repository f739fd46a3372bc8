//! The recorded corpus: `tests/corpus/<case>/` holds a snapshot
//! (`pods.json`, a `kubectl get pods -A -o json` document), its events
//! (`events.json`, always present), a one-line `README`, and the goldens
//! (`expected.txt`, `expected.json`, `expected.exit`) of
//! `verify-pods check --snapshot pods.json --events events.json`.
//! `tests/corpus/bad/` holds inputs that must be refused (exit 2).

use std::fs;
use std::path::{Path, PathBuf};

/// The folder of the corpus.
pub fn corpus_dir() -> PathBuf {
    crate::workspace_root().join("tests/corpus")
}

/// The folder of the bad inputs.
pub fn bad_dir() -> PathBuf {
    corpus_dir().join("bad")
}

/// One recorded case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// The folder name, e.g. `seed-one-unscheduled`.
    pub name: String,
    /// `tests/corpus/<name>/`.
    pub dir: PathBuf,
}

/// Golden file names, as the bless mode writes them.
pub const EXPECTED_TXT: &str = "expected.txt";
/// `--format json` golden.
pub const EXPECTED_JSON: &str = "expected.json";
/// The list limit of a case that is not checked with the default.
pub const LIST_LIMIT_FILE: &str = "list-limit";
/// The excluded owner kinds of a case that is not checked with the default.
pub const OWNER_KINDS_FILE: &str = "exclude-owner-kinds";
/// Exit-code golden (the number and a newline).
pub const EXPECTED_EXIT: &str = "expected.exit";

impl Case {
    /// `pods.json` of the case.
    pub fn pods(&self) -> PathBuf {
        self.dir.join("pods.json")
    }

    /// `events.json` of the case (an empty List when the case has no events).
    pub fn events(&self) -> PathBuf {
        self.dir.join("events.json")
    }

    /// `workloads.json` of the case, when it has one (issue 30): checked
    /// with `--workloads` offline, served live.
    pub fn workloads(&self) -> Option<PathBuf> {
        Some(self.dir.join("workloads.json")).filter(|path| path.is_file())
    }

    /// A file of the case folder.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The bytes of a file of the case folder; panics with the path if missing.
    pub fn read(&self, name: &str) -> Vec<u8> {
        read(&self.file(name))
    }

    /// The golden exit code.
    pub fn expected_exit(&self) -> i32 {
        self.number_file(EXPECTED_EXIT, "an exit code")
            .unwrap_or_else(|| panic!("{}: no {EXPECTED_EXIT}", self.name))
    }

    /// The number the case's file `name` holds (`what` says what it is,
    /// for a file that holds none); None for a case without the file.
    fn number_file<T: std::str::FromStr>(&self, name: &str, what: &str) -> Option<T> {
        let path = self.file(name);
        if !path.is_file() {
            return None;
        }
        let text = String::from_utf8(read(&path))
            .unwrap_or_else(|_| panic!("{}: {name} is not text", self.name));
        let number = text.trim().parse().ok();
        Some(number.unwrap_or_else(|| panic!("{}: not {what}: {text:?}", self.name)))
    }

    /// The list limit the case is checked with: its `list-limit` file (a
    /// number), else the contract's default. Every driver and golden of the
    /// case uses it (make_corpus.py reads the same file).
    pub fn list_limit(&self) -> u64 {
        self.number_file(LIST_LIMIT_FILE, "a list limit")
            .unwrap_or(checker::contract::LIST_LIMIT.default)
    }

    /// The excluded owner kinds the case is checked with, as the drivers
    /// read the setting: its `exclude-owner-kinds` file (empty: the
    /// default list; `none`: no kind), else the default list. Every driver
    /// and golden of the case uses it (make_corpus.py reads the same file).
    pub fn owner_kinds_setting(&self) -> String {
        let path = self.file(OWNER_KINDS_FILE);
        if !path.is_file() {
            return checker::Programs::default_excluded_owner_kinds().join(",");
        }
        let text = String::from_utf8(read(&path)).expect("exclude-owner-kinds is text");
        text.trim().to_owned()
    }

    /// The excluded owner kinds report.jq gets for the case (comma-separated,
    /// "" for none): [`Self::owner_kinds_setting`] as the drivers parse it.
    pub fn owner_kinds(&self) -> String {
        checker::contract::parse_owner_kinds(&self.name, &self.owner_kinds_setting())
            .unwrap_or_else(|e| panic!("{}: {e}", self.name))
            .join(",")
    }

    /// The namespaces the case is checked within (`-n`, comma-separated):
    /// its `namespaces` file, else "" (every namespace).
    pub fn namespaces(&self) -> String {
        self.setting_file("namespaces")
    }

    /// The label selector the case is checked with (`-l`): its `selector`
    /// file, else "" (every pod).
    pub fn selector(&self) -> String {
        self.setting_file("selector")
    }

    /// The excluded namespaces the case is checked with (`--exclude-ns`,
    /// `+NS` adds to the default list): its `exclude-ns` file, else ""
    /// (the default list).
    pub fn exclude_ns(&self) -> String {
        self.setting_file("exclude-ns")
    }

    /// The excluded namespaces report.jq gets for the case: the default
    /// list, or what its `exclude-ns` file makes of it.
    pub fn excluded_namespaces(&self) -> Vec<String> {
        match self.exclude_ns().as_str() {
            "" => checker::Programs::default_excluded_namespaces(),
            text => checker::contract::excluded_namespaces(text),
        }
    }

    /// The case's settings as the engine takes them: its excluded
    /// namespaces and owner kinds, its selection (`-n`, `-l`), and whether
    /// it reads workloads.
    pub fn selection(&self) -> checker::engine::Excluded {
        checker::engine::Excluded {
            namespaces: self.excluded_namespaces(),
            owner_kinds: checker::contract::parse_owner_kinds(
                &self.name,
                &self.owner_kinds_setting(),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", self.name)),
            only_namespaces: self
                .namespaces()
                .split(',')
                .filter(|ns| !ns.is_empty())
                .map(str::to_owned)
                .collect(),
            selector: self.selector(),
            workloads: self.workloads().is_some(),
        }
    }

    fn setting_file(&self, name: &str) -> String {
        let path = self.file(name);
        if !path.is_file() {
            return String::new();
        }
        let text = String::from_utf8(read(&path)).expect("a setting file is text");
        text.trim().to_owned()
    }

    /// The case's settings as both drivers read them from the environment:
    /// its list limit, excluded owner kinds, whether it reads workloads,
    /// and its selection.
    pub fn env(&self) -> [(&'static str, String); 6] {
        [
            (
                checker::contract::LIST_LIMIT.env,
                self.list_limit().to_string(),
            ),
            (
                checker::contract::EXCLUDE_OWNER_KINDS.env,
                self.owner_kinds_setting(),
            ),
            // Live, the workloads are read only for a case that has them
            // (the others' goldens say none were: `missing` null).
            (
                checker::contract::WORKLOADS.env,
                self.workloads().is_some().to_string(),
            ),
            (checker::contract::NAMESPACES.env, self.namespaces()),
            (checker::contract::SELECTOR.env, self.selector()),
            (checker::contract::EXCLUDE_NAMESPACES.env, self.exclude_ns()),
        ]
    }

    /// `cmd` (a checker command) set to check this case offline as its
    /// goldens were made: from the case folder (messages carry the same
    /// relative names everywhere), with its settings ([`Case::env`]), on
    /// `check --snapshot pods.json --events events.json`.
    pub fn offline_check(&self, mut cmd: std::process::Command) -> std::process::Command {
        cmd.current_dir(&self.dir).envs(self.env()).args([
            "check",
            "--snapshot",
            "pods.json",
            "--events",
            "events.json",
        ]);
        cmd
    }

    /// The one-line description.
    pub fn readme(&self) -> String {
        String::from_utf8(self.read("README")).expect("README is UTF-8")
    }
}

/// Every case of the corpus, sorted by name (folders with a `pods.json`).
pub fn cases() -> Vec<Case> {
    let mut cases: Vec<Case> = fs::read_dir(corpus_dir())
        .expect("tests/corpus exists")
        .map(|entry| entry.expect("readable corpus entry").path())
        .filter(|dir| dir.join("pods.json").is_file())
        .map(|dir| Case {
            name: dir.file_name().unwrap().to_string_lossy().into_owned(),
            dir,
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

/// The cases an API server could serve: every case but those whose
/// snapshot holds numbers JSON has not (`NaN`, `Infinity`). A server
/// writes JSON, and the replay server reads its states as JSON; such a
/// snapshot is an input for the drivers read offline and through a stub
/// kubectl (the parity tests), not a cluster's answer.
pub fn served_cases() -> Vec<Case> {
    cases()
        .into_iter()
        .filter(|case| {
            let pods = case.read("pods.json");
            non_finite_as_zeros(&pods) == pods
        })
        .collect()
}

/// A case by name; panics when it does not exist.
pub fn case(name: &str) -> Case {
    cases()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no corpus case {name:?}"))
}

/// The files of `tests/corpus/bad/`, sorted.
pub fn bad_inputs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(bad_dir())
        .expect("tests/corpus/bad exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

/// The bytes of a file; panics with the path when it cannot be read.
pub fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// A pods file as the stub kubectl serves it to a driver that lists in
/// pages: the file itself when it holds one document; else each of its
/// documents (the raw pages of one list, each with the whitespace after it)
/// in a file of its own under `dir`. Returns the stub's `STUB_PODS` (the
/// files joined by ':', one per call; later pages are counted in
/// `STUB_LOG`, which the caller sets) and the number of pages.
pub fn stub_pages(pods: &Path, dir: &Path) -> (PathBuf, usize) {
    let pages = split_pages(&read(pods));
    if pages.len() == 1 {
        return (pods.to_owned(), 1);
    }
    let files: Vec<PathBuf> = (1..=pages.len())
        .zip(&pages)
        .map(|(number, page)| {
            let file = dir.join(format!("pods-page-{number}.json"));
            fs::write(&file, page).expect("write a page");
            file
        })
        .collect();
    let joined = std::env::join_paths(&files).expect("page files join with ':'");
    (joined.into(), pages.len())
}

/// `bytes` with every `NaN`, `-NaN`, `Infinity` and `-Infinity` written as
/// a zero of the same length: serde_json finds the same documents at the
/// same offsets (the reader reads those words as numbers, serde_json has
/// none; in a string the zeros are as good a text).
fn non_finite_as_zeros(bytes: &[u8]) -> Vec<u8> {
    let mut zeroed = bytes.to_vec();
    for word in [&b"-Infinity"[..], b"Infinity", b"-NaN", b"NaN"] {
        let mut at = 0;
        while let Some(found) = zeroed[at..].windows(word.len()).position(|w| w == word) {
            let start = at + found;
            let zero = if word[0] == b'-' {
                &b"-0.00000000"[..]
            } else {
                b"0.000000000"
            };
            zeroed[start..start + word.len()].copy_from_slice(&zero[..word.len()]);
            at = start + word.len();
        }
    }
    zeroed
}

/// The documents of a file, each with the whitespace after it (the
/// newline a server ends a page with): together, the file's bytes.
pub fn split_pages(bytes: &[u8]) -> Vec<Vec<u8>> {
    let zeroed = non_finite_as_zeros(bytes);
    let mut docs =
        serde_json::Deserializer::from_slice(&zeroed).into_iter::<serde::de::IgnoredAny>();
    let mut ends = Vec::new();
    while let Some(doc) = docs.next() {
        doc.expect("a recorded file is JSON");
        let end = docs.byte_offset();
        let blank = bytes[end..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        ends.push(end + blank);
    }
    let starts = std::iter::once(0).chain(ends.iter().copied());
    starts
        .zip(&ends)
        .map(|(start, &end)| bytes[start..end].to_vec())
        .collect()
}
