//! Where each knob's value came from (its flag or its environment variable),
//! so that an error names it as the bash function does, and the source of
//! the pods they make up.

use super::CheckArgs;
use checker::api;
use checker::check::{Source, Workloads};
use checker::contract::{self, Knob};
use checker::reader::Shape;
use checker::{Engine, Excluded};
use clap::parser::ValueSource;
use clap::ArgMatches;
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
/// does the same).
pub(crate) fn selection(engine: &Engine, excluded: &Excluded) -> Result<(), contract::Said> {
    let none = checker::snapshot::read(&br#"{"items":[]}"#[..], "no pods", &Shape::Keep)
        .expect("an empty list reads");
    match engine.report(vec![none], excluded) {
        Ok(_) => Ok(()),
        Err(e) => Err(contract::messages::SELECTION_INVALID.say(&[("jq_error", &e.message)])),
    }
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

/// `--workloads` / KWOK_VERIFY_PODS_WORKLOADS: true (empty = unset, the
/// default), false, or, offline only, a file of workloads.
pub(crate) fn workloads(
    text: &str,
    source: &Source,
    matches: &ArgMatches,
) -> Result<Workloads, contract::Said> {
    match (text, source) {
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
