//! The features: the parts of the function a host may leave out, and
//! what a header says of them.

use crate::fit::wrapped;
use checker::contract;
use checker::Programs;

/// A part of the function a host may leave out: the wrapper
/// (generated/verify-pods.sh) has every one; generated/verify_pods.sh and a
/// spliced library only those asked for with `--with` (issue 31: the bash
/// keeps only what the host needs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Feature {
    /// GitHub's step summary (summary.jq) into the file GITHUB_STEP_SUMMARY
    /// names; upstream's function never wrote one.
    Summary,
    /// CI results (ctrf.jq, junit.jq) into the files KWOK_VERIFY_PODS_CTRF
    /// and KWOK_VERIFY_PODS_JUNIT name.
    Results,
    /// kubectl's selection: only some namespaces (`-n`), a label selector
    /// (`-l`), other excluded namespaces (`--exclude-ns`). Without it every
    /// pod outside the default excluded namespaces counts: a superset, so
    /// never a false pass.
    Selection,
    /// The inputs of a failed verdict saved (`--save-dir`).
    Artifacts,
    /// A deadline as a unix time, for a job with its own timeout.
    Epoch,
    /// More than upstream says when kubectl is slow or fails: a warning
    /// every interval while a list runs, and the kubeconfig and context a
    /// failed kubectl used.
    Diagnostics,
    /// The pods and events lists read in pages of
    /// KWOK_VERIFY_PODS_CHUNK_SIZE, all at the first page's
    /// resourceVersion. Without it one request a list, as upstream's one
    /// `kubectl get` (the default chunk size, 0, asks the same).
    Paging,
    /// A verdict change: a list whose failure may pass (a 5xx, a 429, a
    /// connection cut) is asked again until the deadline, as the checker
    /// does. Without it, upstream's: the first failure ends the check.
    Retries,
    /// A verdict change: only pods owned by one of the listed kinds
    /// (KWOK_VERIFY_PODS_EXCLUDE_OWNER_KINDS, default Job) are excused.
    /// Without it, upstream's rule: every kind whose name contains `Job`
    /// (PyTorchJob, MPIJob, ...) excuses its pending pods.
    ExactOwnerKinds,
    /// A verdict change: a pass also needs every pod the ReplicaSets,
    /// StatefulSets, DaemonSets and Deployments want (four more lists an
    /// attempt). Without it, upstream's verdicts: the pods that exist.
    Workloads,
    /// An exit-code change: 2 when the function could not observe
    /// (kubectl failing, no coherent list, a bad setting). Without it,
    /// upstream's exit 1, which a bare call under `set -e` expects.
    #[value(name = "exit-2")]
    Exit2,
}

impl Feature {
    /// Every feature, in the order headers list them.
    pub const ALL: [Feature; 11] = [
        Feature::Summary,
        Feature::Results,
        Feature::Selection,
        Feature::Artifacts,
        Feature::Epoch,
        Feature::Diagnostics,
        Feature::Paging,
        Feature::Retries,
        Feature::ExactOwnerKinds,
        Feature::Workloads,
        Feature::Exit2,
    ];

    /// The name `--with` takes.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Summary => "summary",
            Feature::Results => "results",
            Feature::Selection => "selection",
            Feature::Artifacts => "artifacts",
            Feature::Epoch => "epoch",
            Feature::Diagnostics => "diagnostics",
            Feature::Paging => "paging",
            Feature::Retries => "retries",
            Feature::ExactOwnerKinds => "exact-owner-kinds",
            Feature::Workloads => "workloads",
            Feature::Exit2 => "exit-2",
        }
    }

    /// What it adds, in a few words, for the header.
    pub fn about(self) -> &'static str {
        match self {
            Feature::Summary => "GitHub's step summary",
            Feature::Results => "CTRF and JUnit files",
            Feature::Selection => "namespaces and a label selector",
            Feature::Artifacts => "a failed verdict's inputs saved",
            Feature::Epoch => "a deadline as a unix time",
            Feature::Diagnostics => "slow and failed kubectl said more of",
            Feature::Paging => "lists read in pages",
            Feature::Retries => "failures that may pass asked again",
            Feature::ExactOwnerKinds => "only the listed owner kinds excuse a pod",
            Feature::Workloads => "pods not yet created fail",
            Feature::Exit2 => "exit 2 when it could not observe",
        }
    }

    /// The settings only it reads. GITHUB_STEP_SUMMARY is none of the
    /// summary's: every Actions job sets it, so a function without the
    /// summary must not warn about it.
    pub fn settings(self) -> Vec<&'static str> {
        match self {
            Feature::Summary | Feature::Diagnostics | Feature::Retries | Feature::Exit2 => vec![],
            Feature::ExactOwnerKinds => vec![contract::EXCLUDE_OWNER_KINDS.env],
            Feature::Workloads => vec![contract::WORKLOADS.env],
            Feature::Results => vec![contract::CTRF.env, contract::JUNIT.env],
            Feature::Selection => vec![
                contract::NAMESPACES.env,
                contract::SELECTOR.env,
                contract::EXCLUDE_NAMESPACES.env,
            ],
            Feature::Artifacts => vec![contract::ARTIFACT_DIR.env],
            Feature::Epoch => vec![contract::DEADLINE_EPOCH.env],
            Feature::Paging => vec![contract::CHUNK_SIZE.env],
        }
    }
}

/// The features not in `features`, each `NAME (what it does),`, the last
/// ending with a full stop.
pub(crate) fn left_out_words(features: &[Feature]) -> Vec<String> {
    let mut words: Vec<String> = Feature::ALL
        .into_iter()
        .filter(|f| !features.contains(f))
        .map(|f| format!("{} ({}),", f.name(), f.about()))
        .collect();
    if let Some(last) = words.last_mut() {
        last.pop();
        last.push('.');
    }
    words
}

/// The header's lines of `features`: `none`, or their names separated by
/// commas, wrapped to fit after [`FEATURES`].
pub(crate) fn features_lines(features: &[Feature]) -> Vec<String> {
    let mut names: Vec<String> = Feature::ALL
        .into_iter()
        .filter(|f| features.contains(f))
        .map(|f| format!("{},", f.name()))
        .collect();
    match names.last_mut() {
        Some(last) => {
            last.pop();
        }
        None => names.push("none".to_owned()),
    }
    wrapped(&names, 64)
}

/// What a feature's setting is when unset, for the header.
pub(crate) fn setting_default(env: &str) -> String {
    if env == contract::EXCLUDE_OWNER_KINDS.env {
        Programs::default_excluded_owner_kinds().join(",")
    } else if env == contract::WORKLOADS.env {
        "true".to_owned()
    } else {
        String::new()
    }
}

/// How the header's line of the features it was rendered with begins:
/// `# Features: none` or `# Features: exit-2, workloads`. `splice` without
/// `--with` renders a library with the features it records.
pub const FEATURES: &str = "# Features: ";

/// The features a library file records ([`FEATURES`]): None when it has no
/// such line or names a feature this version does not know.
pub fn recorded_features(text: &str) -> Option<Vec<Feature>> {
    use clap::ValueEnum;
    let mut lines = text.lines().skip_while(|line| !line.starts_with(FEATURES));
    let mut names = lines.next()?.strip_prefix(FEATURES)?.to_owned();
    // Wrapped: the lines under it that go on with a comma's list.
    while names.ends_with(',') {
        match lines.next().and_then(|line| line.strip_prefix("#   ")) {
            Some(more) => names = format!("{names} {more}"),
            None => break,
        }
    }
    if names == "none" {
        return Some(Vec::new());
    }
    names
        .split(',')
        .map(|name| Feature::from_str(name.trim(), false).ok())
        .collect()
}
