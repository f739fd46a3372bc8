//! Where each knob's value came from (its flag or its environment variable),
//! so that an error names it as the bash function does, and the source of
//! the pods they make up.

use super::{CheckArgs, FetchArg};
use checker::check::{self, Source};
use checker::options::{self, Knob};
use clap::parser::ValueSource;
use clap::ArgMatches;
use std::time::Duration;

/// A knob's seconds, its error naming where the bad text came from: the
/// flag, or the environment variable (worded as the bash function words it).
pub(crate) fn knob(knob: &Knob, text: &str, matches: &ArgMatches) -> Result<u64, options::Said> {
    let id = knob.flag.trim_start_matches("--").replace('-', "_");
    let named = match matches.value_source(&id) {
        Some(ValueSource::EnvVariable) => knob.env,
        _ => knob.flag,
    };
    options::parse_knob(knob, named, text)
}

/// Where the pods come from. Every knob is validated in every mode, even
/// those an offline check does not use: a typo never passes silently.
pub(crate) fn source(args: &CheckArgs, matches: &ArgMatches) -> Result<Source, options::Said> {
    let deadline = knob(&options::DEADLINE, &args.deadline, matches)?;
    let interval = knob(&options::INTERVAL, &args.interval, matches)?;
    let timeout = knob(&options::KUBECTL_TIMEOUT, &args.kubectl_timeout, matches)?;
    let chunk_size = knob(&options::CHUNK_SIZE, &args.chunk_size, matches)?;
    // At most 9 digits (the contract): it fits.
    let chunk_size = usize::try_from(chunk_size).unwrap_or(usize::MAX);
    let watch = watch_setting(&args.watch, matches)?;
    if let Some(snapshot) = &args.snapshot {
        return Ok(Source::Offline {
            snapshot: snapshot.clone(),
            events: args.events.clone(),
        });
    }
    let kubectl = checker::kubectl::Kubectl {
        program: args.kubectl.clone(),
        context: args.context.clone(),
        kubeconfig: args.kubeconfig.clone(),
        timeout: Duration::from_secs(timeout),
    };
    Ok(Source::Live {
        kubectl,
        deadline: Duration::from_secs(deadline),
        interval: Duration::from_secs(interval),
        fetch: match args.fetch {
            FetchArg::Pages => check::Fetch::Pages { chunk_size },
            FetchArg::ListJson => check::Fetch::ListJson,
        },
        watch,
    })
}

/// `--exclude-owner-kinds` / KWOK_VERIFY_PODS_EXCLUDE_OWNER_KINDS, its error
/// naming where the bad text came from (as the bash function words it).
pub(crate) fn owner_kinds(text: &str, matches: &ArgMatches) -> Result<Vec<String>, options::Said> {
    let setting = options::EXCLUDE_OWNER_KINDS;
    let named = match matches.value_source("exclude_owner_kinds") {
        Some(ValueSource::EnvVariable) => setting.env,
        _ => setting.flag.unwrap_or(setting.env),
    };
    options::parse_owner_kinds(named, text)
}

/// `--watch` / KWOK_VERIFY_PODS_WATCH: true or false (empty = unset, the
/// default, as for the other settings).
fn watch_setting(text: &str, matches: &ArgMatches) -> Result<bool, options::Said> {
    match text {
        "true" | "" => Ok(true),
        "false" => Ok(false),
        _ => {
            let named = match matches.value_source("watch") {
                Some(ValueSource::EnvVariable) => options::WATCH.env,
                _ => options::WATCH.flag.unwrap_or("--watch"),
            };
            let value = text.escape_debug().to_string();
            Err(options::messages::SETTING_NOT_A_BOOLEAN
                .say(&[("named", &named), ("value", &value)]))
        }
    }
}
