//! Where each knob's value came from (its flag or its environment variable),
//! so that an error names it as the bash function does, and the source of
//! the pods they make up.

use super::CheckArgs;
use checker::api;
use checker::artifacts::ARTIFACTS;
use checker::check::{Source, Workloads};
use checker::contract::{self, Knob};
use checker::reader::Shape;
use checker::{Engine, Excluded};
use clap::parser::ValueSource;
use clap::ArgMatches;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A knob's seconds, its error naming where the bad text came from: the
/// flag, or the environment variable (worded as the bash function words it).
pub(crate) fn knob(knob: &Knob, text: &str, matches: &ArgMatches) -> Result<u64, contract::Said> {
    let id = knob.flag.trim_start_matches("--").replace('-', "_");
    let named = match matches.value_source(&id) {
        // Set but empty means the default, as upstream reads its knobs
        // (`${VAR:-60}`), and as the bash function does.
        Some(ValueSource::EnvVariable) if text.is_empty() => return Ok(knob.default),
        Some(ValueSource::EnvVariable) => knob.env,
        _ => knob.flag,
    };
    contract::parse_knob(knob, named, text)
}

/// Where the pods come from. Every knob is validated in every mode, even
/// those an offline check does not use: a typo never passes silently.
pub(crate) fn source(args: &CheckArgs, matches: &ArgMatches) -> Result<Source, contract::Said> {
    let deadline = knob(&contract::DEADLINE, &args.deadline, matches)?;
    let interval = knob(&contract::INTERVAL, &args.interval, matches)?;
    let timeout = knob(&contract::KUBECTL_TIMEOUT, &args.kubectl_timeout, matches)?;
    let chunk_size = knob(&contract::CHUNK_SIZE, &args.chunk_size, matches)?;
    let deadline_epoch = knob(&contract::DEADLINE_EPOCH, &args.deadline_epoch, matches)?;
    // At most 9 digits (the contract): it fits.
    let chunk_size = usize::try_from(chunk_size).unwrap_or(usize::MAX);
    let watch = watch_setting(&args.watch, matches)?;
    if let Some(dir) = saved_dir(matches) {
        // A --save-dir replayed whole: its pods, and its events when it
        // has them (saved only when collected whole); --events still wins.
        let [pods, events, ..] = ARTIFACTS;
        let events = dir.join(events);
        return Ok(Source::Offline {
            snapshot: dir.join(pods),
            events: args
                .events
                .clone()
                .or_else(|| events.is_file().then_some(events)),
        });
    }
    if let Some(snapshot) = &args.snapshot {
        return Ok(Source::Offline {
            snapshot: snapshot.clone(),
            events: args.events.clone(),
        });
    }
    let kubectl = checker::live::kubectl::Kubectl {
        program: args.kubectl.clone(),
        context: args.context.clone(),
        kubeconfig: args.kubeconfig.clone(),
        timeout: Duration::from_secs(timeout),
        bound: None,
        interval: Duration::from_secs(interval),
        proxy: None,
    };
    let only = only_namespaces(args);
    Ok(Source::Live {
        kubectl,
        deadline: Duration::from_secs(deadline),
        interval: Duration::from_secs(interval),
        chunk_size,
        watch,
        deadline_epoch,
        // The events of the unscheduled pods: in their namespace, whatever
        // their labels (an event has its own).
        pods: api::PODS.within(&only, &args.selector),
        events: api::EVENTS.within(&only, ""),
    })
}

/// `-n`: the namespaces named, without empty ones (an empty
/// KWOK_VERIFY_PODS_NAMESPACES is every namespace).
pub(crate) fn only_namespaces(args: &CheckArgs) -> Vec<String> {
    args.namespace
        .iter()
        .filter(|name| !name.is_empty())
        .cloned()
        .collect()
}

/// `--exclude-ns` / KWOK_VERIFY_PODS_EXCLUDE_NS: the names, `+NS,NS` after
/// the default list; set but empty, the default (as the bash reads it).
/// report.jq checks the names ([`selection`]).
pub(crate) fn excluded_namespaces(args: &CheckArgs, matches: &ArgMatches) -> Vec<String> {
    match matches.value_source("exclude_ns") {
        Some(ValueSource::EnvVariable) if args.exclude_ns.is_empty() => {
            checker::Programs::default_excluded_namespaces()
        }
        _ => contract::excluded_namespaces(&args.exclude_ns),
    }
}

/// Whether report.jq takes the namespaces and the selector (`--exclude-ns`,
/// `-n`, `-l`): it runs on no pods with them, so a name or selector it
/// refuses ends the check before any list, in its words (the bash function
/// does the same). Then a namespace both selected with `-n` and named by
/// `--exclude-ns` is refused: a namespace `-n` names is checked even when
/// the default list excludes it (report.jq), but which of two settings the
/// user meant is not ours to guess.
pub(crate) fn selection(
    engine: &Engine,
    excluded: &Excluded,
    args: &CheckArgs,
    matches: &ArgMatches,
) -> Result<(), contract::Said> {
    let none = checker::snapshot::read(&br#"{"items":[]}"#[..], "no pods", &Shape::Keep)
        .expect("an empty list reads");
    if let Err(e) = engine.report(vec![none], excluded) {
        return Err(contract::messages::SELECTION_INVALID.say(&[("jq_error", &e.message)]));
    }
    let named = named_excluded(args, matches);
    match excluded
        .only_namespaces
        .iter()
        .find(|namespace| named.contains(namespace))
    {
        None => Ok(()),
        Some(namespace) => {
            let selected = setting_named(&contract::NAMESPACES, "namespace", matches);
            let excluded = setting_named(&contract::EXCLUDE_NAMESPACES, "exclude_ns", matches);
            Err(contract::messages::NAMESPACE_SELECTED_AND_EXCLUDED.say(&[
                ("namespace", namespace),
                ("selected", &selected),
                ("excluded", &excluded),
            ]))
        }
    }
}

/// The namespaces `--exclude-ns` / KWOK_VERIFY_PODS_EXCLUDE_NS names itself
/// (those after the `+`, which adds them to the default list); none when
/// it is unset or empty (the default list).
fn named_excluded(args: &CheckArgs, matches: &ArgMatches) -> Vec<String> {
    match matches.value_source("exclude_ns") {
        Some(ValueSource::CommandLine | ValueSource::EnvVariable) => {
            let listed = args
                .exclude_ns
                .strip_prefix('+')
                .unwrap_or(&args.exclude_ns);
            contract::excluded_namespaces(listed)
        }
        _ => Vec::new(),
    }
}

/// How an error names a setting: its flag, or its environment variable
/// when the value came from there (as the bash function names it).
fn setting_named(setting: &contract::Setting, id: &str, matches: &ArgMatches) -> &'static str {
    match matches.value_source(id) {
        Some(ValueSource::EnvVariable) => setting.env,
        _ => setting.flag.unwrap_or(setting.env),
    }
}

/// The warning a label selector brings when the workloads would be read:
/// a workload's labels do not say which pods it will create, so the pods
/// not yet created are not checked (the bash function says the same).
pub(crate) fn selector_warning(args: &CheckArgs) -> Option<contract::Said> {
    (!args.selector.is_empty() && args.workloads != "false")
        .then(|| contract::messages::SELECTOR_NO_WORKLOADS.say(&[]))
}

/// `--exclude-owner-kinds` / KWOK_VERIFY_PODS_EXCLUDE_OWNER_KINDS, its error
/// naming where the bad text came from (as the bash function words it).
pub(crate) fn owner_kinds(text: &str, matches: &ArgMatches) -> Result<Vec<String>, contract::Said> {
    let setting = contract::EXCLUDE_OWNER_KINDS;
    let named = match matches.value_source("exclude_owner_kinds") {
        Some(ValueSource::EnvVariable) => setting.env,
        _ => setting.flag.unwrap_or(setting.env),
    };
    contract::parse_owner_kinds(named, text)
}

/// `--watch` / KWOK_VERIFY_PODS_WATCH: true or false (empty = unset, the
/// default, as for the other settings).
fn watch_setting(text: &str, matches: &ArgMatches) -> Result<bool, contract::Said> {
    match text {
        "true" | "" => Ok(true),
        "false" => Ok(false),
        _ => {
            let named = match matches.value_source("watch") {
                Some(ValueSource::EnvVariable) => contract::WATCH.env,
                _ => contract::WATCH.flag.unwrap_or("--watch"),
            };
            let value = text.escape_debug().to_string();
            Err(contract::messages::SETTING_NOT_A_BOOLEAN
                .say(&[("named", &named), ("value", &value)]))
        }
    }
}

/// `--snapshot DIR`: a directory `--save-dir` wrote, replayed whole.
fn saved_dir(matches: &ArgMatches) -> Option<&Path> {
    matches
        .get_one::<PathBuf>("snapshot")
        .map(PathBuf::as_path)
        .filter(|path| path.is_dir())
}

/// `--workloads` / KWOK_VERIFY_PODS_WORKLOADS: true (empty = unset, the
/// default), false, or, offline only, a file of workloads. True with
/// `--snapshot DIR`: the directory's workloads.json when it has one (the
/// live check read them), so that the replay decides as the live check did.
pub(crate) fn workloads(
    text: &str,
    source: &Source,
    matches: &ArgMatches,
) -> Result<Workloads, contract::Said> {
    let [_, _, saved_workloads, _] = ARTIFACTS;
    let saved = saved_dir(matches)
        .map(|dir| dir.join(saved_workloads))
        .filter(|file| file.is_file());
    match (text, source) {
        ("true" | "", Source::Offline { .. }) if saved.is_some() => {
            Ok(Workloads::File(saved.unwrap_or_default()))
        }
        ("true" | "", _) => Ok(Workloads::On),
        ("false", _) => Ok(Workloads::Off),
        (path, Source::Offline { .. }) => Ok(Workloads::File(path.into())),
        (_, Source::Live { .. }) => {
            let named = match matches.value_source("workloads") {
                Some(ValueSource::EnvVariable) => contract::WORKLOADS.env,
                _ => contract::WORKLOADS.flag.unwrap_or("--workloads"),
            };
            let value = text.escape_debug().to_string();
            // Live, a file means nothing: true or false, as the bash says.
            Err(contract::messages::SETTING_NOT_A_BOOLEAN
                .say(&[("named", &named), ("value", &value)]))
        }
    }
}
