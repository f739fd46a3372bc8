//! Server-side `meta.k8s.io` Tables: kubectl asks for them for every human
//! output (default, `-o wide`, `--no-headers`) and only lays the cells out.
//! The printers are ports of the apiserver's `printPod` and `printEvent`;
//! ages are measured from a fixed `now` so tables are deterministic.

use serde_json::{json, Value};

/// What each row's `object` carries (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeObject {
    /// `PartialObjectMetadata` (the default).
    Metadata,
    /// The full object with `kind`/`apiVersion` (kubectl asks for it with `--sort-by`).
    Object,
    /// No object.
    None,
}

impl IncludeObject {
    /// Parse the query value; unknown values are a 400 on the real server.
    pub fn parse(text: Option<&str>) -> Result<Self, String> {
        match text {
            None | Some("") | Some("Metadata") => Ok(Self::Metadata),
            Some("Object") => Ok(Self::Object),
            Some("None") => Ok(Self::None),
            Some(other) => Err(format!("unsupported includeObject value {other:?}")),
        }
    }
}

/// The printer of a resource: its columns and one row of cells per object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Printer {
    /// Pods.
    Pods,
    /// Events.
    Events,
    /// Nodes and namespaces: name and age.
    NameAge,
}

/// A Table of `objects` (`kind` = the object kind for `includeObject=Object`).
pub fn table(
    printer: Printer,
    kind: &str,
    objects: &[&Value],
    include: IncludeObject,
    version: &str,
    now: i64,
    list_metadata: Value,
) -> Value {
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| row(printer, kind, o, include, now))
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": list_metadata,
        "columnDefinitions": columns(printer),
        "rows": rows,
    })
}

fn columns(printer: Printer) -> Value {
    // (name, priority): every column is a string but the count.
    let defs: &[(&str, u8)] = match printer {
        Printer::Pods => &[
            ("Name", 0),
            ("Ready", 0),
            ("Status", 0),
            ("Restarts", 0),
            ("Age", 0),
            ("IP", 1),
            ("Node", 1),
            ("Nominated Node", 1),
            ("Readiness Gates", 1),
        ],
        Printer::Events => &[
            ("Last Seen", 0),
            ("Type", 0),
            ("Reason", 0),
            ("Object", 0),
            ("Subobject", 1),
            ("Source", 1),
            ("Message", 0),
            ("First Seen", 1),
            ("Count", 1),
            ("Name", 1),
        ],
        Printer::NameAge => &[("Name", 0), ("Age", 0)],
    };
    defs.iter()
        .map(|(name, priority)| {
            let kind = if *name == "Count" { "integer" } else { "string" };
            let format = if *name == "Name" { "name" } else { "" };
            json!({"name": name, "type": kind, "format": format, "description": name, "priority": priority})
        })
        .collect()
}

fn row(printer: Printer, kind: &str, object: &Value, include: IncludeObject, now: i64) -> Value {
    let cells = match printer {
        Printer::Pods => pod_cells(object, now),
        Printer::Events => event_cells(object, now),
        Printer::NameAge => vec![
            text(object, "/metadata/name").into(),
            since(text(object, "/metadata/creationTimestamp"), now).into(),
        ],
    };
    let mut row = json!({"cells": cells});
    let embedded = match include {
        IncludeObject::None => return row,
        IncludeObject::Metadata => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": object.get("metadata").cloned().unwrap_or(json!({})),
        }),
        IncludeObject::Object => {
            let mut full = object.clone();
            if let Some(obj) = full.as_object_mut() {
                obj.insert("kind".into(), kind.into());
                obj.insert("apiVersion".into(), "v1".into());
            }
            full
        }
    };
    row["object"] = embedded;
    row
}

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn number(object: &Value, pointer: &str) -> i64 {
    object.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

fn array<'a>(object: &'a Value, pointer: &str) -> &'a [Value] {
    object
        .pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn or_none(s: &str) -> String {
    if s.is_empty() {
        "<none>".to_owned()
    } else {
        s.to_owned()
    }
}

/// Port of the apiserver's `printPod` (wide cells included).
fn pod_cells(pod: &Value, now: i64) -> Vec<Value> {
    let status = pod_status(pod);
    let restarts = if status.restarts != 0 && status.last_restart > 0 {
        format!(
            "{} ({} ago)",
            status.restarts,
            human_duration(now - status.last_restart)
        )
    } else {
        status.restarts.to_string()
    };
    let ip = array(pod, "/status/podIPs")
        .first()
        .map_or("", |ip| text(ip, "/ip"));
    vec![
        text(pod, "/metadata/name").into(),
        format!("{}/{}", status.ready, status.total).into(),
        status.reason.into(),
        restarts.into(),
        since(text(pod, "/metadata/creationTimestamp"), now).into(),
        or_none(ip).into(),
        or_none(text(pod, "/spec/nodeName")).into(),
        or_none(text(pod, "/status/nominatedNodeName")).into(),
        readiness_gates(pod).into(),
    ]
}

struct PodStatus {
    reason: String,
    ready: usize,
    total: usize,
    restarts: i64,
    last_restart: i64,
}

fn is_sidecar(pod: &Value, name: &str) -> bool {
    array(pod, "/spec/initContainers")
        .iter()
        .any(|c| text(c, "/name") == name && text(c, "/restartPolicy") == "Always")
}

fn finished_at(container: &Value) -> i64 {
    parse_time(text(container, "/lastState/terminated/finishedAt")).unwrap_or(0)
}

fn pod_status(pod: &Value) -> PodStatus {
    let phase = text(pod, "/status/phase");
    let mut reason = match text(pod, "/status/reason") {
        "" => phase.to_owned(),
        r => r.to_owned(),
    };
    let conditions = array(pod, "/status/conditions");
    if conditions
        .iter()
        .any(|c| text(c, "/type") == "PodScheduled" && text(c, "/reason") == "SchedulingGated")
    {
        reason = "SchedulingGated".into();
    }
    let init_specs = array(pod, "/spec/initContainers");
    let mut s = PodStatus {
        reason,
        ready: 0,
        total: array(pod, "/spec/containers").len()
            + init_specs
                .iter()
                .filter(|c| text(c, "/restartPolicy") == "Always")
                .count(),
        restarts: 0,
        last_restart: 0,
    };
    let (mut sidecar_restarts, mut sidecar_last) = (0, 0);
    let mut initializing = false;
    for (i, c) in array(pod, "/status/initContainerStatuses")
        .iter()
        .enumerate()
    {
        let sidecar = is_sidecar(pod, text(c, "/name"));
        s.restarts += number(c, "/restartCount");
        s.last_restart = s.last_restart.max(finished_at(c));
        if sidecar {
            sidecar_restarts += number(c, "/restartCount");
            sidecar_last = sidecar_last.max(finished_at(c));
        }
        let terminated = c.pointer("/state/terminated");
        let waiting_reason = text(c, "/state/waiting/reason");
        if terminated.is_some() && number(c, "/state/terminated/exitCode") == 0 {
            continue;
        }
        if sidecar && c.get("started").and_then(Value::as_bool) == Some(true) {
            s.ready += usize::from(c.get("ready").and_then(Value::as_bool) == Some(true));
            continue;
        }
        s.reason = if let Some(t) = terminated {
            match text(t, "/reason") {
                "" if number(t, "/signal") != 0 => format!("Init:Signal:{}", number(t, "/signal")),
                "" => format!("Init:ExitCode:{}", number(t, "/exitCode")),
                r => format!("Init:{r}"),
            }
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            format!("Init:{waiting_reason}")
        } else {
            format!("Init:{i}/{}", init_specs.len())
        };
        initializing = true;
        break;
    }
    let initialized = conditions
        .iter()
        .any(|c| text(c, "/type") == "Initialized" && text(c, "/status") == "True");
    if !initializing || initialized {
        s.restarts = sidecar_restarts;
        s.last_restart = sidecar_last;
        let mut has_running = false;
        for c in array(pod, "/status/containerStatuses").iter().rev() {
            s.restarts += number(c, "/restartCount");
            s.last_restart = s.last_restart.max(finished_at(c));
            let waiting = text(c, "/state/waiting/reason");
            let terminated = c.pointer("/state/terminated");
            if !waiting.is_empty() {
                s.reason = waiting.to_owned();
            } else if let Some(t) = terminated {
                s.reason = match text(t, "/reason") {
                    "" if number(t, "/signal") != 0 => format!("Signal:{}", number(t, "/signal")),
                    "" => format!("ExitCode:{}", number(t, "/exitCode")),
                    r => r.to_owned(),
                };
            } else if c.get("ready").and_then(Value::as_bool) == Some(true)
                && c.pointer("/state/running").is_some()
            {
                has_running = true;
                s.ready += 1;
            }
        }
        if s.reason == "Completed" && has_running {
            let ready = conditions
                .iter()
                .any(|c| text(c, "/type") == "Ready" && text(c, "/status") == "True");
            s.reason = if ready { "Running" } else { "NotReady" }.into();
        }
    }
    let deleting = pod.pointer("/metadata/deletionTimestamp").is_some();
    if deleting && text(pod, "/status/reason") == "NodeLost" {
        s.reason = "Unknown".into();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        s.reason = "Terminating".into();
    }
    s
}

fn readiness_gates(pod: &Value) -> String {
    let gates = array(pod, "/spec/readinessGates");
    if gates.is_empty() {
        return "<none>".into();
    }
    let conditions = array(pod, "/status/conditions");
    let met = gates
        .iter()
        .filter(|g| {
            conditions
                .iter()
                .find(|c| text(c, "/type") == text(g, "/conditionType"))
                .is_some_and(|c| text(c, "/status") == "True")
        })
        .count();
    format!("{met}/{}", gates.len())
}

/// Port of the apiserver's `printEvent` (wide cells included).
fn event_cells(event: &Value, now: i64) -> Vec<Value> {
    let first = match text(event, "/firstTimestamp") {
        "" => since(text(event, "/eventTime"), now),
        t => since(t, now),
    };
    let mut last = match text(event, "/lastTimestamp") {
        "" => first.clone(),
        t => since(t, now),
    };
    let mut count = number(event, "/count");
    if let Some(series) = event.get("series").filter(|s| s.is_object()) {
        last = since(text(series, "/lastObservedTime"), now);
        count = number(series, "/count");
    } else if count == 0 {
        count = 1;
    }
    let kind = text(event, "/involvedObject/kind").to_lowercase();
    let target = match text(event, "/involvedObject/name") {
        "" => kind,
        name => format!("{kind}/{name}"),
    };
    let first_non_empty = |a: &str, b: &str| if a.is_empty() { b } else { a }.to_owned();
    let component = first_non_empty(
        text(event, "/source/component"),
        text(event, "/reportingComponent"),
    );
    let instance = first_non_empty(
        text(event, "/source/host"),
        text(event, "/reportingInstance"),
    );
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    vec![
        last.into(),
        text(event, "/type").into(),
        text(event, "/reason").into(),
        target.into(),
        text(event, "/involvedObject/fieldPath").into(),
        source.into(),
        text(event, "/message").trim().into(),
        first.into(),
        count.into(),
        text(event, "/metadata/name").into(),
    ]
}

/// The age of an RFC 3339 timestamp at `now`, `<unknown>` when absent.
fn since(timestamp: &str, now: i64) -> String {
    match parse_time(timestamp) {
        Some(t) => human_duration(now - t),
        None => "<unknown>".into(),
    }
}

/// Port of apimachinery's `duration.HumanDuration`.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return in_units(minutes, "m", seconds % 60, "s");
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        return in_units(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return in_units(days, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    if hours < 24 * 365 * 8 {
        return in_units(days / 365, "y", days % 365, "d");
    }
    format!("{}y", days / 365)
}

/// `whole` of a unit, then `rest` of the next smaller one unless it is
/// 0 (`3m`, `3m20s`), as HumanDuration prints two units.
fn in_units(whole: i64, unit: &str, rest: i64, rest_unit: &str) -> String {
    match rest {
        0 => format!("{whole}{unit}"),
        rest => format!("{whole}{unit}{rest}{rest_unit}"),
    }
}

/// Seconds since the epoch of an RFC 3339 time (`2025-01-01T12:00:00Z`,
/// fractions and offsets allowed); None when it is not one.
pub fn parse_time(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &text[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        rest = frac.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (h, m) = rest[1..].split_once(':')?;
            sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60)
        }
    };
    let days = days_from_civil(year, month, day);
    Some(days * 86_400 + hour * 3600 + minute * 60 + second - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_durations() {
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_time("2025-01-01T12:00:00Z"), Some(1_735_732_800));
        assert_eq!(
            parse_time("2025-01-01T12:00:00.123456Z"),
            Some(1_735_732_800)
        );
        assert_eq!(parse_time("2025-01-01T13:00:00+01:00"), Some(1_735_732_800));
        assert_eq!(parse_time("yesterday"), None);
        let cases = [
            (5, "5s"),
            (119, "119s"),
            (125, "2m5s"),
            (600, "10m"),
            (3 * 3600 + 60, "3h1m"),
            (10 * 3600, "10h"),
            (50 * 3600, "2d2h"),
            (30 * 86400, "30d"),
            (800 * 86400, "2y70d"),
            (-5, "<invalid>"),
        ];
        for (secs, text) in cases {
            assert_eq!(human_duration(secs), text, "{secs}");
        }
    }

    #[test]
    fn pod_printer_statuses() {
        let now = parse_time("2025-01-01T12:00:00Z").unwrap();
        let pod = json!({
            "metadata": {"name": "web-0", "creationTimestamp": "2025-01-01T11:00:00Z"},
            "spec": {"nodeName": "n1", "containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}],
              "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 2, "state": {"running": {}},
                 "lastState": {"terminated": {"finishedAt": "2025-01-01T11:55:00Z"}}},
                {"name": "b", "ready": false, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}});
        let cells = pod_cells(&pod, now);
        assert_eq!(
            cells,
            json!([
                "web-0",
                "1/2",
                "CrashLoopBackOff",
                "2 (5m ago)",
                "60m",
                "10.0.0.1",
                "n1",
                "<none>",
                "<none>"
            ])
            .as_array()
            .unwrap()
            .clone()
        );
        let pending = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]},
                             "status": {"phase": "Pending"}});
        assert_eq!(pod_cells(&pending, now)[2], "Pending");
        assert_eq!(pod_cells(&pending, now)[4], "<unknown>");
        assert_eq!(pod_cells(&pending, now)[6], "<none>");
    }
}
