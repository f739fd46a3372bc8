//! One check: take a snapshot per attempt, settle while pods are only
//! unscheduled, collect the matching events, build the result.

use crate::api;
use crate::artifacts::{Artifact, ArtifactError, Saver, Tee};
use crate::contract::{self, messages, words};
use crate::engine::Engine;
use crate::engine::{EvalError, Excluded, Report};
use crate::live::kubectl::{self, Kubectl, KubectlError};
use crate::live::list::{self, Failure, ListError};
use crate::live::watch;
use crate::programs::Programs;
use crate::reader::snapshot::{self, SnapshotError};
use crate::reader::Projection;
use jaq_json::Val;
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

/// Why a check could not decide (exit code 2).
#[derive(Debug)]
pub enum CheckError {
    /// A document was unreadable.
    Snapshot(SnapshotError),
    /// kubectl could not be run or failed.
    Kubectl(KubectlError),
    /// kubectl failed (or timed out) on the first page of a pods list: the
    /// cluster could not be reached; `config` says with which kubeconfig
    /// and context ([`Kubectl::config_used`]), a line of its own.
    Unreached { error: KubectlError, config: String },
    /// A canonical program rejected its input (e.g. no `items` array).
    Eval { source: String, error: EvalError },
    /// kubectl's output was unreadable: not one JSON document, or one that
    /// report.jq refuses (no `items` array).
    Unreadable { command: String, why: String },
    /// The artifact directory could not be created.
    ArtifactDir { dir: PathBuf, error: io::Error },
    /// Writing the artifacts failed.
    SaveDir { path: PathBuf, error: io::Error },
    /// A file could not be opened.
    Open { path: PathBuf, error: io::Error },
    /// Every list of the pods broke after its first page, or a list read
    /// with them (`what`: its name in the API's URL) broke, until the
    /// deadline passed: no snapshot.
    Incoherent {
        what: &'static str,
        page: usize,
        why: String,
        lists: usize,
    },
    /// A list (`what`) did not end by the deadline plus the kubectl
    /// timeout: `pages` of it were read.
    Unfinished {
        what: &'static str,
        pages: usize,
        seconds: u64,
    },
    /// The deadline epoch passed before the observation ended (`waited`
    /// whole seconds after the check started).
    EpochPassed { epoch: u64, waited: u64 },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            CheckError::Snapshot(e) => e.fmt(f),
            CheckError::Kubectl(e) | CheckError::Unreached { error: e, .. } => e.fmt(f),
            CheckError::Eval { source, error } => write!(f, "{source}: {}", error.message),
            CheckError::Unreadable { command, why } => f.write_str(
                &messages::UNREADABLE_OUTPUT.format(&[("command", command), ("why", why)]),
            ),
            CheckError::ArtifactDir { dir, error } => f.write_str(
                &messages::ARTIFACT_DIR_CREATE
                    .format(&[("dir", &dir.display()), ("why", &contract::io_words(error))]),
            ),
            CheckError::SaveDir { path, error } => {
                f.write_str(&messages::ARTIFACTS_NOT_SAVED.format(&[
                    ("path", &path.display()),
                    ("why", &contract::io_words(error)),
                ]))
            }
            CheckError::Open { path, error } => {
                write!(f, "{}: cannot open: {error}", path.display())
            }
            CheckError::Incoherent {
                what,
                page,
                why,
                lists,
            } => {
                let broken = words::LIST_BROKEN.format(&[("page", page), ("why", why)]);
                f.write_str(&messages::LIST_INCOHERENT.format(&[
                    ("what", what),
                    ("lists", lists),
                    ("broken", &broken),
                ]))
            }
            CheckError::Unfinished {
                what,
                pages,
                seconds,
            } => {
                let why = words::LIST_OVERRAN.format(&[("seconds", seconds), ("pages", pages)]);
                f.write_str(&messages::LIST_UNFINISHED.format(&[("what", what), ("why", &why)]))
            }
            CheckError::EpochPassed { epoch, waited } => f.write_str(
                &messages::DEADLINE_EPOCH_PASSED.format(&[("epoch", epoch), ("waited", waited)]),
            ),
        }
    }
}

impl std::error::Error for CheckError {}

impl CheckError {
    /// The line printed after the error's own, when it has one.
    pub fn next_line(&self) -> Option<&str> {
        match self {
            CheckError::Unreached { config, .. } => Some(config),
            _ => None,
        }
    }

    /// The contract's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CheckError::Kubectl(_) => messages::KUBECTL_FAILED.exit_code(),
            CheckError::Unreached { .. } => messages::KUBECTL_CONFIG.exit_code(),
            CheckError::Unreadable { .. } => messages::UNREADABLE_OUTPUT.exit_code(),
            CheckError::Incoherent { .. } => messages::LIST_INCOHERENT.exit_code(),
            CheckError::Unfinished { .. } => messages::LIST_UNFINISHED.exit_code(),
            CheckError::EpochPassed { .. } => messages::DEADLINE_EPOCH_PASSED.exit_code(),
            CheckError::ArtifactDir { .. } => messages::ARTIFACT_DIR_CREATE.exit_code(),
            CheckError::SaveDir { .. } => messages::ARTIFACTS_NOT_SAVED.exit_code(),
            CheckError::Snapshot(_) | CheckError::Eval { .. } | CheckError::Open { .. } => {
                crate::exit::CANNOT_OBSERVE
            }
        }
    }
}

impl From<Failure> for CheckError {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Kubectl(e) => CheckError::Kubectl(e),
            Failure::Unreadable { command, why } => CheckError::Unreadable { command, why },
        }
    }
}

impl From<ArtifactError> for CheckError {
    fn from(error: ArtifactError) -> Self {
        match error {
            ArtifactError::Dir { dir, error } => CheckError::ArtifactDir { dir, error },
            ArtifactError::NotSaved { path, error } => CheckError::SaveDir { path, error },
        }
    }
}

/// The copy being written could not be: the artifact names itself.
fn not_saved(copy: &Option<Artifact>, error: io::Error) -> CheckError {
    let path = copy.as_ref().map_or_else(PathBuf::new, |c| c.path.clone());
    CheckError::SaveDir { path, error }
}

/// Where the pods (and events) come from.
#[derive(Clone)]
pub enum Source {
    /// A saved snapshot (`-` = stdin), optional saved events: one attempt.
    Offline {
        snapshot: PathBuf,
        events: Option<PathBuf>,
    },
    /// The cluster, through kubectl, with the settle loop.
    Live {
        kubectl: Kubectl,
        deadline: Duration,
        interval: Duration,
        /// Raw pages of this many objects (0: one request), see [`list`].
        chunk_size: usize,
        /// Settle on one list plus a watch ([`crate::live::watch`]); false: list
        /// again every interval.
        watch: bool,
        /// A unix time by which the whole check ends (0: none), see
        /// `Bounds`.
        deadline_epoch: u64,
        /// The pods list and the events list, within the selection
        /// ([`api::List::within`]).
        pods: api::List,
        events: api::List,
    },
}

/// Whether the pods the workloads want are checked (issue 30), and from
/// where: live, the four apps/v1 lists at the pods list's resourceVersion;
/// offline, a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workloads {
    /// Not checked (`--workloads false`): upstream's verdicts.
    Off,
    /// Live: read at each deciding state. Offline: nothing to read, so not
    /// checked (and nothing says it was).
    On,
    /// Offline: `kubectl get rs,sts,ds,deploy -A -o json`, or the raw
    /// pages `--save-dir` saved (`workloads.json`).
    File(PathBuf),
}

/// What a check needs besides its source.
pub struct Settings {
    /// Whether the workloads are read, and from where.
    pub workloads: Workloads,
    /// The namespaces whose pods, and the owner kinds whose pending pods,
    /// are left out.
    pub excluded: crate::engine::Excluded,
    /// Where to save pods.json, events.json and report.json on failure.
    pub save_dir: Option<PathBuf>,
}

impl Settings {
    /// Whether the workloads are read: on, live or from a file, and no
    /// label selector (`-l`): a workload's labels do not say which pods it
    /// will create, so with one nothing checks them (and nothing says so).
    fn reads_workloads(&self, source: &Source) -> bool {
        let on = match (&self.workloads, source) {
            (Workloads::Off, _) | (Workloads::On, Source::Offline { .. }) => false,
            (Workloads::On, Source::Live { .. }) | (Workloads::File(_), _) => true,
        };
        on && self.excluded.selector.is_empty()
    }
}

/// The outcome of a check.
pub struct Outcome {
    /// What decision.jq made of it.
    pub decision: crate::engine::Decision,
    /// The result of result.jq (`--format json`).
    pub result: Val,
    /// Diagnostics for stderr that do not change the verdict (e.g. why
    /// events could not be collected; the text then says "not collected").
    pub warnings: Vec<String>,
}

/// Run one check. `progress` receives the (level, text) line printed before
/// each extra attempt.
/// `notice` receives a diagnostic for stderr (a broken list listed again).
pub fn run(
    engine: &Engine,
    source: &Source,
    settings: &Settings,
    progress: &mut dyn FnMut(&str, &str),
    notice: &mut dyn FnMut(&str),
) -> Result<Outcome, CheckError> {
    let projection = Projection::for_run(
        &settings.excluded.owner_kinds,
        !settings.excluded.selector.is_empty(),
    );
    // report.jq computes the pods' owners only for workloads.jq.
    let excluded = &crate::engine::Excluded {
        workloads: settings.reads_workloads(source),
        ..settings.excluded.clone()
    };
    let saver = Saver::new(settings.save_dir.as_deref(), &inputs(source));
    let started = Instant::now();
    let mut bounds = Bounds::new(source, started)?;
    // The workloads lists (and the events) go through one kubectl proxy
    // (issue 30's cost, live/proxy.rs), started now: every pods list
    // reads the workloads beside it, and the proxy's start (about 0.04 s
    // of CPU) then overlaps the pods list, which leaves a core idle more
    // than report.jq does (a green lane at 8.8k pods: 15-22 ms less).
    if let Source::Live { kubectl, .. } = &mut bounds.source {
        if excluded.workloads {
            *kubectl = kubectl.with_proxy();
            if let Some(proxy) = &kubectl.proxy {
                proxy.start();
            }
        }
    }
    let source = &bounds.source;
    let mut attempts = 0;
    let eval_error = |source: String| move |error| CheckError::Eval { source, error };
    let mut watching = matches!(source, Source::Live { watch: true, .. });
    let mut warned = Vec::new();
    let checking = settings.reads_workloads(source);
    // Live, a state settles while decision.jq says wait before the deadline
    // (`elapsed`: since the check started, read once per state, so that a
    // state whose workloads were dropped as settling does settle).
    let settles = |decision: &crate::engine::Decision, elapsed: Duration| match source {
        Source::Live { deadline, .. } => decision.may_settle && elapsed < *deadline,
        Source::Offline { .. } => false,
    };
    let (report, decision, waited_seconds) = loop {
        attempts += 1;
        // waited_seconds is the time spent before the snapshot the verdict
        // comes from: 0 whenever the first attempt decides, in both drivers.
        let attempt_started = started.elapsed().as_secs();
        let list_started = Instant::now();
        let mut lists = 0;
        let (listed, report, decision, waited) = loop {
            let bounded = (started, &bounds, &mut lists);
            let copying = settings.save_dir.is_some();
            // The workloads at the list's version are read as soon as its
            // head tells the version, while the pods stream and then while
            // report.jq runs, on every list (issue 30's cost): the server's
            // answers and their parsing overlap the check's own work, where
            // reading them after a deciding report added 0.3 s at 10k pods.
            // A state that settles drops them: four more lists an interval
            // while polling (BENCHMARKS.md), as the bash does.
            let bounds_ref = &bounds;
            // workloads.jq's work on the workloads alone is done as soon as
            // they are in, while the pods still stream.
            let read_workloads = move |at| {
                let fetched = fetch(source, settings, bounds_ref, at, copying);
                fetched.map(|f| f.prepare(engine, &settings.excluded))
            };
            let read = thread::scope(|scope| {
                let mut fetching = Vec::new();
                let mut heard = |version: &str| {
                    if checking {
                        let at = Some(version.to_owned());
                        fetching
                            .push((version.to_owned(), scope.spawn(move || read_workloads(at))));
                    }
                };
                let docs = read_pods(source, &projection, &saver, bounded, notice, &mut heard)?;
                // Rc clones: the watch starts from these pods.
                let listed = watching.then(|| docs.clone());
                let at = read_at(&docs);
                // A list that broke after its head leaves its reads behind:
                // they end on their own, by the scope's end.
                let fetching = match fetching.into_iter().rfind(|(v, _)| Some(v) == at.as_ref()) {
                    Some((_, fetching)) => fetching,
                    None => scope.spawn(move || read_workloads(at)),
                };
                // workloads.jq on the owners' part, as soon as it and the
                // lists are in, beside the rest of report.jq: at 10k pods
                // and 2,000 workloads it ends with report.jq, not after it.
                let (report, fetched) = engine.report_with(docs, excluded, |owners| {
                    let fetched = fetching.join().expect("the workloads thread");
                    match owners {
                        Some(owners) => {
                            fetched.map(|f| f.ahead(engine, owners, &settings.excluded))
                        }
                        None => fetched,
                    }
                });
                Ok::<_, CheckError>((listed, report, fetched))
            });
            let (listed, report, fetched) = read?;
            let report = report.map_err(|error| pods_eval_error(source, error))?;
            let decision = engine
                .decide(&report)
                .map_err(eval_error("report".into()))?;
            let decided_at = started.elapsed();
            if !checking || settles(&decision, decided_at) {
                break (listed, report, decision, decided_at);
            }
            // A state that would decide is decided only with its
            // workloads, read at its resourceVersion (issue 30); when they
            // cannot be, the pods list is as good as broken: list again.
            let context = (engine, source, &bounds, settings, &saver, started);
            match confirm(context, (None, fetched), report, &mut warned, notice)? {
                Confirmed::Report(report, decision) => {
                    break (listed, report, decision, started.elapsed())
                }
                Confirmed::Again { what, page, why } => {
                    list_again(source, started, (what, page, &why, lists), notice)?;
                }
            }
        };
        match source {
            Source::Live {
                deadline,
                interval,
                kubectl,
                pods,
                ..
            } if decision.may_settle && waited < *deadline => {
                let (level, text) = engine
                    .progress(&report, attempts, waited.as_secs(), deadline.as_secs())
                    .map_err(eval_error("report".into()))?;
                progress(&level, &text);
                let Some(listed) = listed else {
                    // One attempt an interval, its own time counted (a line
                    // every interval), never past the deadline: the next
                    // attempt is then its last.
                    let rest = interval.saturating_sub(list_started.elapsed());
                    thread::sleep(rest.min(deadline.saturating_sub(started.elapsed())));
                    continue;
                };
                let settle = watch::Settle {
                    engine,
                    kubectl,
                    pods: *pods,
                    excluded,
                    started,
                    deadline: *deadline,
                    interval: *interval,
                };
                let mut listed = listed;
                let mut first = watch::Evaluated {
                    report,
                    decision,
                    pods: Vec::new(),
                };
                // When the last progress line was printed (the list's, just now).
                let printed_at = std::cell::Cell::new(Instant::now());
                let mut line = |report: &Report, attempts, waited: Duration| {
                    let secs = (waited.as_secs(), deadline.as_secs());
                    let (level, text) = engine.progress(report, attempts, secs.0, secs.1)?;
                    progress(&level, &text);
                    printed_at.set(Instant::now());
                    Ok(())
                };
                let ended = loop {
                    let ended = settle
                        .run(&listed, first, &mut attempts, &mut line, notice)
                        .map_err(eval_error("report".into()))?;
                    if !checking {
                        break ended;
                    }
                    let watch::Ended::Decided {
                        report,
                        waited,
                        pods,
                        ..
                    } = ended
                    else {
                        break ended;
                    };
                    // The state the watch would decide on, with its
                    // workloads: missing pods keep it watching, from there.
                    let context = (engine, source, &bounds, settings, &saver, started);
                    match confirm(context, (pods.first(), None), report, &mut warned, notice)? {
                        Confirmed::Again { page, why, .. } => {
                            let broken =
                                words::LIST_BROKEN.format(&[("page", &page), ("why", &why)]);
                            break watch::Ended::ListAgain(broken);
                        }
                        Confirmed::Report(report, decision)
                            if settles(&decision, started.elapsed()) =>
                        {
                            // The watch evaluates the pods alone: a state
                            // that waits only for pods not yet created
                            // says so here, once an interval, as every
                            // waiting state does.
                            if printed_at.get().elapsed() >= *interval {
                                line(&report, attempts, waited)
                                    .map_err(eval_error("report".into()))?;
                            }
                            listed = pods.clone();
                            first = watch::Evaluated {
                                report,
                                decision,
                                pods,
                            };
                        }
                        Confirmed::Report(report, decision) => {
                            break watch::Ended::Decided {
                                report,
                                decision,
                                waited,
                                pods,
                            }
                        }
                    }
                };
                match ended {
                    watch::Ended::Decided {
                        report,
                        decision,
                        waited,
                        ..
                    } => break (report, decision, waited.as_secs()),
                    watch::Ended::ListAgain(why) => {
                        notice(&messages::WATCH_AGAIN.format(&[("why", &why)]));
                        // Never more than a list per interval, whatever breaks.
                        let rest = interval.saturating_sub(list_started.elapsed());
                        thread::sleep(rest.min(deadline.saturating_sub(started.elapsed())));
                    }
                    watch::Ended::Refused(why) => {
                        notice(&messages::WATCH_REFUSED.format(&[("why", &why)]));
                        watching = false;
                        let rest = interval.saturating_sub(list_started.elapsed());
                        thread::sleep(rest.min(deadline.saturating_sub(started.elapsed())));
                    }
                }
            }
            _ => break (report, decision, attempt_started),
        }
    };
    // Still settling when the deadline epoch, not the deadline, ended it.
    if decision.may_settle && bounds.settle_by_epoch {
        return Err(bounds.passed(started));
    }
    let mut warnings = Vec::new();
    let events = read_events(
        engine,
        (source, &bounds),
        &projection,
        &report,
        decision.unscheduled.then_some(&saver),
        &mut warnings,
    )?;
    let result = engine
        .result(&report, attempts, waited_seconds, events)
        .map_err(|error| CheckError::Eval {
            source: "report".into(),
            error,
        })?;
    // A report that cannot be written is a warning (issue 29).
    if let Some(error) = saver.finish(decision.verdict == crate::engine::Verdict::Fail, &result) {
        warnings.push(CheckError::from(error).to_string());
    }
    Ok(Outcome {
        decision,
        result,
        warnings,
    })
}

/// A state's report with its workloads, or why the state must be listed
/// again.
enum Confirmed {
    /// The report with `missing` (when the workloads were read), and what
    /// decision.jq makes of it.
    Report(Report, crate::engine::Decision),
    /// The workloads at that resourceVersion cannot be read any more (410:
    /// compacted), or their list (`what`) broke at `page`: list the pods
    /// again.
    Again {
        what: &'static str,
        page: usize,
        why: String,
    },
}

/// One workloads list as read: its documents, or why not.
type Listed = Result<Vec<Val>, ListError>;

/// The four workloads lists as read at one resourceVersion: each list's
/// documents (or why not) and its bytes for workloads.json.
struct Fetched {
    at: Option<String>,
    reads: Vec<(api::List, Listed, Vec<u8>)>,
    /// workloads.jq's work on these reads alone
    /// ([`Engine::workloads_prepared`]), done as soon as they are in.
    prepared: Option<Val>,
    /// What workloads.jq adds to the report of the pods at `at`, computed
    /// from `prepared` beside report.jq ([`Engine::workloads_ahead`]).
    ahead: Option<Result<Val, EvalError>>,
}

impl Fetched {
    /// These reads with workloads.jq's work on them done, when any list
    /// was read and the program takes them (else it runs on them whole
    /// later, and says why).
    fn prepare(mut self, engine: &Engine, excluded: &Excluded) -> Self {
        let docs: Vec<Val> = self
            .reads
            .iter()
            .filter_map(|(_, read, _)| read.as_ref().ok())
            .flatten()
            .cloned()
            .collect();
        if !docs.is_empty() {
            let at = self.at.as_deref();
            self.prepared = engine.workloads_prepared(docs, at, excluded).ok();
        }
        self
    }

    /// These reads with what workloads.jq adds to a report whose
    /// [`Part::Owners`] is `owners`, when that report is of the state at
    /// their version and they were prepared.
    fn ahead(mut self, engine: &Engine, owners: &Val, excluded: &Excluded) -> Self {
        let read_at = version_of(owners);
        if let Some(prepared) = self
            .prepared
            .take()
            .filter(|_| read_at.is_some() && read_at == self.at)
        {
            self.ahead = Some(engine.workloads_ahead(owners, prepared, excluded));
        }
        self
    }
}

/// A report's `resource_version` (or its owners' part's): the version its
/// pods were listed at; None when unknown.
fn version_of(report: &Val) -> Option<String> {
    match crate::engine::field(report, "resource_version")? {
        Val::TStr(version) | Val::BStr(version) => {
            Some(String::from_utf8_lossy(version).into_owned())
        }
        _ => None,
    }
}

/// What [`confirm`] reads with: the engine, the source and its bounds,
/// the settings, the artifacts, when the check started.
type Context<'a> = (
    &'a Engine,
    &'a Source,
    &'a Bounds,
    &'a Settings,
    &'a Saver,
    Instant,
);

/// The resourceVersion a list's documents were read at, as lib.jq's
/// `list_read_at` says it (the report's `resource_version`): the first
/// document's, when a non-empty string.
fn read_at(docs: &[Val]) -> Option<String> {
    let metadata = crate::engine::field(docs.first()?, "metadata")?;
    match crate::engine::field(metadata, "resourceVersion")? {
        Val::TStr(v) | Val::BStr(v) if !v.is_empty() => {
            Some(String::from_utf8_lossy(v).into_owned())
        }
        _ => None,
    }
}

/// The four workloads lists at resourceVersion `at` (the latest when
/// None), at once (one kubectl each), each copied into its own buffer when
/// `copying`; None when the check reads none live. No I/O but kubectl:
/// it runs beside report.jq ([`run`]) and [`confirm`] takes it in order,
/// as the bash reads them.
fn fetch(
    source: &Source,
    settings: &Settings,
    bounds: &Bounds,
    at: Option<String>,
    copying: bool,
) -> Option<Fetched> {
    let Source::Live {
        kubectl,
        chunk_size,
        ..
    } = source
    else {
        return None;
    };
    if !matches!(settings.workloads, Workloads::On) || !settings.reads_workloads(source) {
        return None;
    }
    let shape = Projection::canonical().workloads;
    // With one `-n` namespace, that namespace's lists (a role scoped to it
    // is enough), as for the pods.
    let lists = api::WORKLOADS.map(|list| list.within(&settings.excluded.only_namespaces, ""));
    let reads = thread::scope(|scope| {
        let handles: Vec<_> = lists
            .map(|list| {
                let (at, shape) = (at.as_deref(), &shape);
                scope.spawn(move || {
                    let mut copy = Vec::new();
                    let read = list::read_at(
                        kubectl,
                        (list, at),
                        *chunk_size,
                        bounds.until,
                        shape,
                        copying.then_some(&mut copy as &mut dyn Write),
                    );
                    (list, read, copy)
                })
            })
            .into_iter()
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a workloads list thread"))
            .collect()
    });
    Some(Fetched {
        at,
        reads,
        prepared: None,
        ahead: None,
    })
}

/// The workloads of the state `report` was made from, read at its
/// resourceVersion, through workloads.jq with the report (issue 30; the
/// pods are not read again). `fetched`: the lists already read beside
/// report.jq, used when read at the report's version. A kind the server
/// refuses to list (403, 404) is left out with one warning, said once
/// (`warned`); every other failure is the check's, worded as a pods
/// list's.
/// `save`: a watch's state (one page), saved as pods.json beside the
/// workloads read for it, so that the two replay the verdict.
fn confirm(
    (engine, source, bounds, settings, saver, started): Context,
    (save, fetched): (Option<&Val>, Option<Fetched>),
    report: Report,
    warned: &mut Vec<String>,
    notice: &mut dyn FnMut(&str),
) -> Result<Confirmed, CheckError> {
    let shape = Projection::canonical().workloads;
    if !settings.reads_workloads(source) {
        return decided(engine, report);
    }
    // workloads.jq's word, when computed beside report.jq (the same docs).
    let mut ahead = None;
    let workloads = match (source, &settings.workloads) {
        (Source::Offline { .. }, Workloads::File(path)) => {
            read_file(path, &shape, saver.tee("workloads.json"))?
        }
        (Source::Live { kubectl, .. }, Workloads::On) => {
            // The pods list's version; without one (no server lists so,
            // only a stand-in's kubectl List), the latest.
            let at = version_of(&report.0);
            // A watch's state is saved as pods.json beside its workloads
            // (the list saved before it is another state): they replay.
            if let Some(state) = save {
                if let Some(mut file) = saver.tee("pods.json") {
                    let _ = writeln!(file, "{}", crate::engine::to_json(state));
                }
            }
            let mut tee = saver.tee("workloads.json");
            let fetched = match fetched.filter(|f| f.at == at && at.is_some()) {
                Some(fetched) => fetched,
                None => match fetch(source, settings, bounds, at, tee.is_some()) {
                    Some(fetched) => fetched,
                    None => return decided(engine, report),
                },
            };
            ahead = fetched.ahead;
            let mut docs = Vec::new();
            // The lists the server refused (403, 404): one warning for all.
            let mut refused: Vec<(&str, String)> = Vec::new();
            for (list, read, copied) in fetched.reads {
                if let (Some(file), Ok(_)) = (tee.as_mut(), &read) {
                    // An artifact records its own write errors.
                    let _ = file.write_all(&copied);
                }
                let what = list.what;
                let again = |page: usize, why: String| Ok(Confirmed::Again { what, page, why });
                match read {
                    Ok(read) => docs.extend(read),
                    Err(ListError::Failed(Failure::Kubectl(
                        error @ (KubectlError::Failed { .. } | KubectlError::TimedOut { .. }),
                    ))) => {
                        let stderr = match &error {
                            KubectlError::Failed { stderr, .. } => stderr.as_str(),
                            _ => "",
                        };
                        let said = |reason: &str| stderr.contains(&format!("({reason})"));
                        // Its version compacted, or a transient failure
                        // before the deadline: list the pods again.
                        if said("Expired")
                            || said("Gone")
                            || (error.transient() && retries(source, started))
                        {
                            return again(1, error.to_string());
                        }
                        if !(said("Forbidden") || said("NotFound")) {
                            let config = kubectl.config_used();
                            return Err(CheckError::Unreached { error, config });
                        }
                        refused.push((list.what, error.to_string()));
                    }
                    Err(ListError::Failed(e)) => return Err(e.into()),
                    Err(ListError::NotSaved(error)) => return Err(not_saved(&tee, error)),
                    Err(ListError::Unfinished { .. }) if bounds.until_by_epoch => {
                        return Err(bounds.passed(started));
                    }
                    Err(ListError::Unfinished { pages }) => {
                        let seconds = bounds.until.seconds;
                        let what = list.what;
                        return Err(CheckError::Unfinished {
                            what,
                            pages,
                            seconds,
                        });
                    }
                    Err(ListError::Broken { page, why }) => return again(page, why),
                }
            }
            if let Some(warning) = not_listed(&refused) {
                if !warned.contains(&warning) {
                    notice(&warning);
                    warned.push(warning);
                }
            }
            if docs.is_empty() {
                // Every kind refused: nothing was checked.
                saver.discard(tee);
                return decided(engine, report);
            }
            docs
        }
        _ => return decided(engine, report),
    };
    if let Some(Ok(ahead)) = ahead {
        return decided(engine, Engine::add(report, ahead));
    }
    let report = engine
        .workloads(&report, workloads, &settings.excluded)
        .map_err(|error| match &settings.workloads {
            Workloads::File(path) => CheckError::Eval {
                source: display_path(path),
                error,
            },
            _ => CheckError::Eval {
                source: Programs::WORKLOADS.file.into(),
                error,
            },
        })?;
    decided(engine, report)
}

/// The one warning for the workloads lists the server refused (403, 404),
/// naming them and every kind they leave unchecked ([`api::unchecked`]: the
/// Deployments with the ReplicaSets); the first refusal's words say why.
fn not_listed(refused: &[(&str, String)]) -> Option<String> {
    let (_, why) = refused.first()?;
    let what: Vec<&str> = refused.iter().map(|(what, _)| *what).collect();
    let unchecked = api::unchecked(&what).join(", ");
    Some(messages::WORKLOADS_NOT_LISTED.format(&[
        ("what", &what.join(", ")),
        ("why", why),
        ("unchecked", &unchecked),
    ]))
}

/// The report as it stands, and decision.jq's word on it.
fn decided(engine: &Engine, report: Report) -> Result<Confirmed, CheckError> {
    let decision = engine.decide(&report).map_err(|error| CheckError::Eval {
        source: "report".into(),
        error,
    })?;
    Ok(Confirmed::Report(report, decision))
}

/// report.jq refused the document: a file's error names the file, kubectl's
/// is unreadable output (as in the bash function).
fn pods_eval_error(source: &Source, error: EvalError) -> CheckError {
    match source {
        Source::Offline { snapshot, .. } => CheckError::Eval {
            source: display_path(snapshot),
            error,
        },
        Source::Live {
            kubectl,
            chunk_size,
            pods,
            ..
        } => CheckError::Unreadable {
            command: list_command(kubectl, *chunk_size, *pods),
            why: error.message,
        },
    }
}

/// The command line that lists `list` (its first page), as messages show it.
fn list_command(kubectl: &Kubectl, chunk_size: usize, list: api::List) -> String {
    let args = list.args(chunk_size, None);
    kubectl.command_line(&args.each_ref().map(String::as_str))
}

fn display_path(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}

/// The documents of one snapshot. Live, a list that breaks after its first
/// page is no snapshot: it is listed again from the start while the
/// deadline allows (each time said through `notice`), else exit 2.
fn read_pods(
    source: &Source,
    projection: &Projection,
    saver: &Saver,
    (started, bounds, lists): (Instant, &Bounds, &mut usize),
    notice: &mut dyn FnMut(&str),
    heard: list::Heard,
) -> Result<Vec<Val>, CheckError> {
    let (kubectl, chunk_size, pods) = match source {
        Source::Offline { snapshot, .. } => {
            return read_file(snapshot, &projection.pods, saver.tee("pods.json"))
        }
        Source::Live {
            kubectl,
            chunk_size,
            pods,
            ..
        } => (kubectl, *chunk_size, *pods),
    };
    let until = bounds.until;
    loop {
        *lists += 1;
        let mut tee = saver.tee("pods.json");
        let copy = tee.as_mut().map(|file| file as &mut dyn Write);
        let pages = (chunk_size, until);
        match list::read_heard(kubectl, pods, pages, &projection.pods, copy, &mut *heard) {
            Ok(docs) => return Ok(docs),
            // The cluster's answer to the first page: kubectl ran and
            // failed, so say which kubeconfig and context it used.
            // A transient failure (a 5xx, a 429, a cut answer) is asked
            // again while the deadline allows, as a broken list is.
            Err(ListError::Failed(Failure::Kubectl(error)))
                if error.transient() && retries(source, started) =>
            {
                let why = error.to_string();
                list_again(source, started, (pods.what, 1, &why, *lists), notice)?;
            }
            Err(ListError::Failed(Failure::Unreadable { command, why }))
                if kubectl::transient(&why) && retries(source, started) =>
            {
                let why = CheckError::Unreadable { command, why }.to_string();
                list_again(source, started, (pods.what, 1, &why, *lists), notice)?;
            }
            Err(ListError::Failed(Failure::Kubectl(
                error @ (KubectlError::Failed { .. } | KubectlError::TimedOut { .. }),
            ))) => {
                let config = kubectl.config_used();
                return Err(CheckError::Unreached { error, config });
            }
            Err(ListError::Failed(e)) => return Err(e.into()),
            Err(ListError::NotSaved(error)) => return Err(not_saved(&tee, error)),
            Err(ListError::Unfinished { .. }) if bounds.until_by_epoch => {
                return Err(bounds.passed(started));
            }
            Err(ListError::Unfinished { pages }) => {
                let seconds = until.seconds;
                return Err(CheckError::Unfinished {
                    what: pods.what,
                    pages,
                    seconds,
                });
            }
            Err(ListError::Broken { page, why }) => {
                list_again(source, started, (pods.what, page, &why, *lists), notice)?;
            }
        }
    }
}

/// Whether a live list that failed transiently is asked again: before the
/// deadline (a failure that lasts to it is the check's).
fn retries(source: &Source, started: Instant) -> bool {
    matches!(source, Source::Live { deadline, .. } if started.elapsed() < *deadline)
}

/// A live list (`what`, the pods or one read with them) that broke at
/// `page` (the `lists`th of the attempt): said, and a pause of an interval
/// (never past the deadline) before the pods are read again; past the
/// deadline, no coherent list of `what` (exit 2).
fn list_again(
    source: &Source,
    started: Instant,
    (what, page, why, lists): (&'static str, usize, &str, usize),
    notice: &mut dyn FnMut(&str),
) -> Result<(), CheckError> {
    let Source::Live {
        deadline, interval, ..
    } = source
    else {
        return Ok(());
    };
    if started.elapsed() >= *deadline {
        let why = why.to_owned();
        return Err(CheckError::Incoherent {
            what,
            page,
            why,
            lists,
        });
    }
    let broken = words::LIST_BROKEN.format(&[("page", &page), ("why", &why)]);
    notice(&messages::LIST_AGAIN.format(&[("broken", &broken), ("list", &(lists + 1))]));
    thread::sleep((*interval).min(deadline.saturating_sub(started.elapsed())));
    Ok(())
}

/// A live check's ends, computed once when it starts: the one place the
/// deadline epoch meets the relative deadline. Everything after reads
/// these: the settle loop and the watch its `source`'s deadline, every list
/// (pages, retries) [`Self::until`], the events a budget within it.
pub(crate) struct Bounds {
    /// The source, its settle deadline capped by the time left before the
    /// deadline epoch.
    source: Source,
    /// When every pods list must have ended: the deadline plus one kubectl
    /// timeout after the check started (a list begun at the deadline still
    /// gets its kubectl timeout; no server keeps it paging), or the
    /// deadline epoch when sooner.
    until: list::Until,
    /// The epoch, not the deadline, ends the settling / the lists.
    settle_by_epoch: bool,
    until_by_epoch: bool,
    epoch: u64,
}

impl Bounds {
    fn new(source: &Source, started: Instant) -> Result<Self, CheckError> {
        let mut bounded = source.clone();
        let Source::Live {
            kubectl,
            deadline,
            deadline_epoch,
            ..
        } = &mut bounded
        else {
            return Ok(Self {
                source: bounded,
                until: list::Until::after(Duration::ZERO),
                settle_by_epoch: false,
                until_by_epoch: false,
                epoch: 0,
            });
        };
        let budget = deadline.saturating_add(kubectl.timeout);
        // The time left before the epoch, by the wall clock, now.
        let left = (*deadline_epoch > 0).then(|| {
            let at = std::time::UNIX_EPOCH + Duration::from_secs(*deadline_epoch);
            let now = std::time::SystemTime::now();
            at.duration_since(now).unwrap_or_default()
        });
        let epoch = *deadline_epoch;
        let settle_by_epoch = left.is_some_and(|left| left < *deadline);
        let until_by_epoch = left.is_some_and(|left| left < budget);
        if let Some(left) = left {
            *deadline = left.min(*deadline);
        }
        let bounds = Self {
            source: bounded,
            until: list::Until {
                at: started + left.map_or(budget, |left| left.min(budget)),
                seconds: budget.as_secs(),
            },
            settle_by_epoch,
            until_by_epoch,
            epoch,
        };
        if left == Some(Duration::ZERO) {
            return Err(bounds.passed(started));
        }
        Ok(bounds)
    }

    /// The error of an observation the deadline epoch cut short.
    fn passed(&self, started: Instant) -> CheckError {
        CheckError::EpochPassed {
            epoch: self.epoch,
            waited: started.elapsed().as_secs(),
        }
    }
}

/// The most time the events get once the verdict is known: they only
/// explain it, so they never hold it longer (the bash's bound too). Past
/// it, one warning says the events list did not finish in time.
pub const EVENTS_BOUND: Duration = Duration::from_secs(10);

/// The events list's own budget: [`EVENTS_BOUND`] (or one kubectl timeout,
/// when shorter) from now, and never past the pods lists' end
/// ([`Bounds::until`], the deadline epoch's too).
fn events_until(check: list::Until, kubectl: &Kubectl) -> list::Until {
    let own = list::Until::after(kubectl.timeout.min(EVENTS_BOUND));
    if own.at <= check.at {
        own
    } else {
        list::Until::after(check.left())
    }
}

/// The events of the unscheduled pods, when some are (`saver` is given
/// then): null otherwise. A file the user named must be good whatever the
/// verdict (exit 2 otherwise), so it is always read and run through
/// events.jq; events from kubectl are diagnostics: when they cannot be
/// listed or read, the pods verdict stands and the text says "not collected"
/// (the bash function does the same).
fn read_events(
    engine: &Engine,
    (source, bounds): (&Source, &Bounds),
    projection: &Projection,
    report: &Report,
    unscheduled: Option<&Saver>,
    warnings: &mut Vec<String>,
) -> Result<Option<Val>, CheckError> {
    match (source, unscheduled) {
        (Source::Offline { events: None, .. }, _) => Ok(None),
        (
            Source::Offline {
                events: Some(path), ..
            },
            _,
        ) => {
            let tee = match unscheduled {
                Some(saver) => saver.tee("events.json"),
                None => None,
            };
            let doc = read_file(path, &projection.events, tee)?;
            let events = engine
                .events(doc, report)
                .map_err(|error| CheckError::Eval {
                    source: display_path(path),
                    error,
                })?;
            Ok(unscheduled.map(|_| events))
        }
        (Source::Live { .. }, None) => Ok(None),
        (
            Source::Live {
                kubectl,
                chunk_size,
                events: events_list,
                ..
            },
            Some(saver),
        ) => {
            let mut tee = saver.tee("events.json");
            let copy = tee.as_mut().map(|file| file as &mut dyn Write);
            let until = events_until(bounds.until, kubectl);
            let read = list::read(
                kubectl,
                *events_list,
                *chunk_size,
                until,
                &projection.events,
                copy,
            );
            let docs =
                match read {
                    Ok(docs) => Ok(docs),
                    Err(ListError::NotSaved(error)) => return Err(not_saved(&tee, error)),
                    Err(ListError::Failed(e)) => Err(CheckError::from(e).to_string()),
                    Err(ListError::Unfinished { pages }) => Err(words::EVENTS_OVERRAN
                        .format(&[("seconds", &until.seconds), ("pages", &pages)])),
                    Err(ListError::Broken { page, why }) => {
                        Err(words::LIST_BROKEN.format(&[("page", &page), ("why", &why)]))
                    }
                };
            // Events are diagnostics: a list that breaks is not listed again.
            let matched = docs.and_then(|docs| {
                engine.events(docs, report).map_err(|e| {
                    let command = list_command(kubectl, *chunk_size, *events_list);
                    messages::UNREADABLE_OUTPUT
                        .format(&[("command", &command), ("why", &e.message)])
                })
            });
            match matched {
                Ok(events) => Ok(Some(events)),
                Err(why) => {
                    // Only what was observed whole is saved: no events.json.
                    saver.discard(tee);
                    warnings.push(messages::EVENTS_NOT_COLLECTED.format(&[("why", &why)]));
                    Ok(None)
                }
            }
        }
    }
}

/// Every document of a saved list: one List, or the pages `--save-dir`
/// saved one after the other.
fn read_file(
    path: &Path,
    shape: &crate::reader::Shape,
    mut copy: Option<Artifact>,
) -> Result<Vec<Val>, CheckError> {
    let name = display_path(path);
    let input: Box<dyn io::Read> = if path == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        Box::new(fs::File::open(path).map_err(|error| CheckError::Open {
            path: path.to_owned(),
            error,
        })?)
    };
    let mut tee = Tee::new(input, copy.as_mut());
    let read = snapshot::read_documents(&mut tee, &name, shape);
    if let Some(error) = tee.write_error() {
        return Err(not_saved(&copy, error));
    }
    read.map_err(CheckError::Snapshot)
}

/// The files of the check's inputs (`-` is stdin, which may be a file).
fn inputs(source: &Source) -> Vec<PathBuf> {
    let Source::Offline { snapshot, events } = source else {
        return Vec::new();
    };
    std::iter::once(snapshot)
        .chain(events)
        .map(|path| {
            if path == Path::new("-") {
                PathBuf::from("/dev/stdin")
            } else {
                path.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(deadline: u64, deadline_epoch: u64) -> Source {
        Source::Live {
            kubectl: Kubectl {
                program: "kubectl".into(),
                context: None,
                kubeconfig: None,
                timeout: Duration::from_secs(120),
                proxy: None,
            },
            deadline: Duration::from_secs(deadline),
            interval: Duration::from_secs(5),
            chunk_size: 0,
            watch: true,
            deadline_epoch,
            pods: api::PODS,
            events: api::EVENTS,
        }
    }

    fn in_seconds(seconds: u64) -> u64 {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        now.expect("after 1970").as_secs() + seconds
    }

    /// The settle deadline and the lists' budget in seconds; whether the
    /// epoch set each.
    fn ends(source: &Source) -> (u64, u64, bool, bool) {
        let started = Instant::now();
        let bounds = Bounds::new(source, started).expect("not passed");
        let Source::Live { deadline, .. } = bounds.source else {
            unreachable!()
        };
        let until = bounds.until.at.duration_since(started);
        // Rounded: the epoch is whole seconds, now is not.
        let round = |d: Duration| (d.as_millis() as u64 + 500) / 1000;
        (
            round(deadline),
            round(until),
            bounds.settle_by_epoch,
            bounds.until_by_epoch,
        )
    }

    #[test]
    fn the_deadline_epoch_caps_the_deadline_and_every_list_once() {
        assert_eq!(ends(&live(60, 0)), (60, 180, false, false));
        assert_eq!(ends(&live(60, in_seconds(1000))), (60, 180, false, false));
        let (deadline, until, settle, list) = ends(&live(60, in_seconds(100)));
        assert_eq!((deadline, settle, list), (60, false, true));
        assert!((99..=100).contains(&until), "{until}");
        let (deadline, until, settle, list) = ends(&live(60, in_seconds(30)));
        assert!((29..=30).contains(&deadline) && (29..=30).contains(&until));
        assert!(settle && list);
    }

    #[test]
    fn a_deadline_epoch_already_past_ends_the_check_at_once() {
        let error = Bounds::new(&live(60, 1), Instant::now())
            .err()
            .expect("passed");
        assert_eq!(error.exit_code(), crate::exit::CANNOT_OBSERVE);
        assert_eq!(
            error.to_string(),
            messages::DEADLINE_EPOCH_PASSED.format(&[("epoch", &1), ("waited", &0)])
        );
    }
}
