//! Compiles the canonical programs once with jaq and runs them.
//!
//! The engine knows nothing of files or processes: values in, values out.

use crate::programs::{Program, Programs};
use jaq_core::load::{Arena, File, Loader};
use jaq_core::{data, Compiler, Ctx, Native, Vars};
use jaq_json::Val;
use std::fmt;
use std::sync::{Arc, OnceLock};

type Data = data::JustLut<Val>;
type Filter = jaq_core::compile::Filter<Native<Data>>;

/// A canonical program failed to compile or to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalError {
    /// The program's file name.
    pub program: &'static str,
    /// What went wrong, in words.
    pub message: String,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}: {}", self.program, self.message)
    }
}

impl std::error::Error for EvalError {}

/// The verdict of report.jq.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every pod is scheduled and nothing failed.
    Pass,
    /// No pod outside the excluded namespaces.
    Empty,
    /// Pods are unscheduled or failed.
    Fail,
}

/// The report object of report.jq, with typed access to what the drivers
/// need to decide (verdict, counts). Everything else stays a jq value.
#[derive(Debug, Clone)]
pub struct Report(pub Val);

/// What report.jq leaves out: the pods of these namespaces, and the pending
/// pods owned by these kinds (both exact match); and the selection
/// (`-n`, `-l`): when set, only the pods of these namespaces and those the
/// label selector selects count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excluded {
    pub namespaces: Vec<String>,
    pub owner_kinds: Vec<String>,
    /// `-n`: the only namespaces whose pods count; empty = every one.
    pub only_namespaces: Vec<String>,
    /// `-l`: a label selector; empty = every pod.
    pub selector: String,
    /// Whether workloads.jq reads the report (issue 30): only then does
    /// report.jq compute the pods' owners (`active_owners`).
    pub workloads: bool,
}

impl Default for Excluded {
    /// The default lists (checker/programs/excluded-namespaces and
    /// excluded-owner-kinds).
    fn default() -> Self {
        Excluded {
            namespaces: Programs::default_excluded_namespaces(),
            owner_kinds: Programs::default_excluded_owner_kinds(),
            only_namespaces: Vec::new(),
            selector: String::new(),
            workloads: true,
        }
    }
}

impl Report {
    /// A top-level number of the report (0 when absent).
    pub fn count(&self, key: &str) -> usize {
        match field(&self.0, key) {
            Some(Val::Num(n)) => n
                .as_isize()
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(0),
            _ => 0,
        }
    }

    /// Compact JSON, byte-identical to `jq -c`.
    pub fn to_json(&self) -> String {
        to_json(&self.0)
    }
}

/// An object's value at `key`; `None` for a missing key or a non-object.
pub(crate) fn field<'a>(v: &'a Val, key: &str) -> Option<&'a Val> {
    match v {
        Val::Obj(map) => map.get(&Val::from(key.to_owned())),
        _ => None,
    }
}

/// Compact JSON of a value, as `jq -c` prints it.
pub fn to_json(v: &Val) -> String {
    let mut out = Vec::new();
    write_compact(&mut out, v);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `v` as jaq's writer prints it compact (`jaq_json::write::write` with
/// the default `Pp`), byte for byte (a test compares them), into a `Vec`
/// directly: jaq's writer formats every value and punctuation through
/// `write!` and `dyn io::Write`, 65 instructions a byte of a result at 50k
/// pods, about three times this.
fn write_compact(out: &mut Vec<u8>, v: &Val) {
    match v {
        Val::Null => out.extend_from_slice(b"null"),
        Val::Bool(true) => out.extend_from_slice(b"true"),
        Val::Bool(false) => out.extend_from_slice(b"false"),
        // Numbers as jaq prints them: its own Display.
        Val::Num(n) => {
            use std::io::Write;
            write!(out, "{n}").expect("writing to a Vec cannot fail");
        }
        Val::TStr(text) => write_string(out, text),
        // Byte strings (no program makes one) as jaq writes them.
        Val::BStr(_) => jaq_json::write::write(out, &jaq_json::write::Pp::default(), 0, v)
            .expect("writing to a Vec cannot fail"),
        Val::Arr(values) => {
            out.push(b'[');
            for (i, value) in values.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_compact(out, value);
            }
            out.push(b']');
        }
        Val::Obj(map) => {
            out.push(b'{');
            for (i, (key, value)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_compact(out, key);
                out.push(b':');
                write_compact(out, value);
            }
            out.push(b'}');
        }
    }
}

/// A text string in quotes, escaped as jaq escapes it: `\b \f \t \n
/// \r \\ \"` by name, the other control characters and DEL as `\u00XX`;
/// every other byte as it is (invalid UTF-8 too).
fn write_string(out: &mut Vec<u8>, text: &[u8]) {
    out.push(b'"');
    let mut plain = 0;
    for (i, &byte) in text.iter().enumerate() {
        let named: &[u8] = match byte {
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\\' => b"\\\\",
            b'"' => b"\\\"",
            0x00..=0x1f | 0x7f => b"",
            _ => continue,
        };
        out.extend_from_slice(&text[plain..i]);
        if named.is_empty() {
            out.extend_from_slice(format!("\\u{byte:04x}").as_bytes());
        } else {
            out.extend_from_slice(named);
        }
        plain = i + 1;
    }
    out.extend_from_slice(&text[plain..]);
    out.push(b'"');
}

/// A string value's text, or the value's JSON (as `jq -r` prints it).
pub fn to_raw(v: &Val) -> String {
    match v {
        Val::TStr(b) | Val::BStr(b) => String::from_utf8_lossy(b).into_owned(),
        other => to_json(other),
    }
}

/// What decision.jq decides from a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The report's verdict.
    pub verdict: Verdict,
    /// Whether pods are unscheduled (then their events are wanted).
    pub unscheduled: bool,
    /// Whether another attempt can still change the verdict.
    pub may_settle: bool,
}

/// What [`Engine::report_part`] computes of report.jq's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// All of it, the pods' owners too, in one run: the bash function's way.
    Whole,
    /// All of it but the pods' owners (`active_owners` null).
    Rest,
    /// What workloads.jq reads of it: `resource_version`, `active_owners`.
    Owners,
}

impl Part {
    /// report.jq's `$workloads` for this part.
    fn workloads(self) -> &'static str {
        match self {
            Part::Whole => "true",
            Part::Rest => "false",
            Part::Owners => "owners",
        }
    }
}

/// The canonical programs, each compiled once: all at once ([`Engine::new`]),
/// or each when first run or warmed ([`Engine::lazy`], [`Engine::warm`]).
pub struct Engine {
    /// One cell per program of [`Programs::ALL`], in that order.
    filters: Arc<[OnceLock<Result<Filter, EvalError>>]>,
}

impl Engine {
    /// Compile every canonical program.
    pub fn new() -> Result<Self, EvalError> {
        let engine = Self::lazy();
        for program in Programs::ALL {
            engine.filter(program)?;
        }
        Ok(engine)
    }

    /// Compile each program when it is first run. A live check needs
    /// report.jq (the settings) before its first kubectl and the rest only
    /// once the pods are read: compiling them all first (9 ms) delayed
    /// kubectl's start; [`Engine::warm`] compiles them while kubectl starts.
    pub fn lazy() -> Self {
        let filters = Programs::ALL.map(|_| OnceLock::new());
        Self {
            filters: Arc::new(filters),
        }
    }

    /// Compile, on a thread of its own, each of `programs` not compiled
    /// yet, in [`Programs::ALL`]'s order; a run that needs one meanwhile
    /// waits for it (or compiles it first). Only the programs a run will
    /// use: each compiles lib.jq and jaq's standard library with it, 5-10 M
    /// instructions, and the eleven took 5 % of an offline check of 10k
    /// pods, which runs five of them.
    pub fn warm(&self, programs: &[Program]) {
        let filters = Arc::clone(&self.filters);
        let wanted: Vec<(usize, Program)> = Programs::ALL
            .into_iter()
            .enumerate()
            .filter(|(_, program)| programs.contains(program))
            .collect();
        std::thread::spawn(move || {
            for (index, program) in wanted {
                filters[index].get_or_init(|| compile(program));
            }
        });
    }

    /// `program`, compiled now unless it was.
    fn filter(&self, program: Program) -> Result<&Filter, EvalError> {
        self.filters[index_of(program)]
            .get_or_init(|| compile(program))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Run `program` on `input` with its variables (in `program.vars` order);
    /// every output value, or the first error.
    pub fn run(&self, program: Program, input: Val, vars: Vec<Val>) -> Result<Vec<Val>, EvalError> {
        let filter = self.filter(program)?;
        assert_eq!(
            vars.len(),
            program.vars.len(),
            "{}: wrong number of variables",
            program.file
        );
        let ctx = Ctx::<Data>::new(&filter.lut, Vars::new(vars));
        filter
            .id
            .run((ctx, input))
            .map(|r| jaq_core::unwrap_valr(r).map_err(|e| runtime_error(program, e)))
            .collect()
    }

    /// Run a program that yields exactly one value.
    pub fn run_one(&self, program: Program, input: Val, vars: Vec<Val>) -> Result<Val, EvalError> {
        let mut out = self.run(program, input, vars)?;
        match out.len() {
            1 => Ok(out.pop().expect("one value")),
            n => Err(EvalError {
                program: program.file,
                message: format!("expected one output value, got {n}"),
            }),
        }
    }

    /// report.jq on a snapshot: its documents (one List, or the pages of
    /// a paged list), which the program reads as one array (`jq -s`).
    ///
    /// With the workloads read, the pods' owners (`active_owners`, about
    /// half of the work at 8.8k pods) are computed on a second thread by
    /// the same program ([`Part::Owners`]) beside the rest ([`Part::Rest`]): the two
    /// added ([`Engine::add`]) are the report.
    pub fn report(&self, snapshot: Vec<Val>, excluded: &Excluded) -> Result<Report, EvalError> {
        self.report_with(snapshot, excluded, |_| ()).0
    }

    /// [`Engine::report`], and `beside` run on the second thread with the
    /// owners' part as soon as it is computed (None without the workloads
    /// or when it failed: then after the report, on this thread).
    pub fn report_with<T: Send>(
        &self,
        snapshot: Vec<Val>,
        excluded: &Excluded,
        beside: impl FnOnce(Option<&Val>) -> T + Send,
    ) -> (Result<Report, EvalError>, T) {
        let pods = Val::from_iter(snapshot);
        if !excluded.workloads {
            let report = self.report_part(pods, excluded, Part::Rest).map(Report);
            return (report, beside(None));
        }
        let (rest, (owners, besides)) = std::thread::scope(|scope| {
            let owners = scope.spawn(|| {
                let owners = self.report_part(pods.clone(), excluded, Part::Owners);
                let besides = beside(owners.as_ref().ok());
                (owners, besides)
            });
            let rest = self.report_part(pods.clone(), excluded, Part::Rest);
            (
                rest,
                owners.join().expect("the owners thread does not panic"),
            )
        });
        let report = rest.and_then(|rest| Ok(Engine::add(Report(rest), owners?)));
        (report, besides)
    }

    /// One part of report.jq's report on the pods (`jq -s` of a snapshot's
    /// documents).
    pub fn report_part(
        &self,
        pods: Val,
        excluded: &Excluded,
        part: Part,
    ) -> Result<Val, EvalError> {
        let vars = vec![
            Val::from(excluded.namespaces.join(",")),
            Val::from(excluded.owner_kinds.join(",")),
            Val::from(excluded.only_namespaces.join(",")),
            Val::from(excluded.selector.clone()),
            Val::from(part.workloads().to_owned()),
        ];
        self.run_one(Programs::REPORT, pods, vars)
    }

    /// `report` + `part`, as jq adds objects (a key of `part` takes the
    /// value and keeps the place it has in `report`): how report.jq's
    /// parts, and workloads.jq's word on [`Part::Owners`], make one report.
    pub fn add(report: Report, part: Val) -> Report {
        match report.0 + part {
            Ok(sum) => Report(sum),
            Err(e) => unreachable!("report.jq's parts are objects: {e}"),
        }
    }

    /// workloads.jq: the report plus the pods its workloads want and that
    /// do not exist yet; `workloads` are the documents of the workloads
    /// lists, read at the report's version. The pods are not read again:
    /// the report's `active_owners` is what the rules need of them.
    pub fn workloads(
        &self,
        report: &Report,
        workloads: Vec<Val>,
        excluded: &Excluded,
    ) -> Result<Report, EvalError> {
        let report = Val::from_iter([report.0.clone()]);
        self.workloads_on(report, Val::from_iter(workloads), excluded)
            .map(Report)
    }

    /// workloads.jq's work on the workloads alone, before the pods are
    /// read (a report of only their version, `at`): the documents of the
    /// lists prepared, which [`Engine::workloads_ahead`] takes instead of
    /// them. The checker does it while the pods still stream, off the path
    /// to the verdict.
    pub fn workloads_prepared(
        &self,
        workloads: Vec<Val>,
        at: Option<&str>,
        excluded: &Excluded,
    ) -> Result<Val, EvalError> {
        let at = at.map_or(Val::Null, |at| Val::from(at.to_owned()));
        let version = Val::obj(
            [(Val::from("resource_version".to_owned()), at)]
                .into_iter()
                .collect(),
        );
        self.workloads_on(
            Val::from_iter([version]),
            Val::from_iter(workloads),
            excluded,
        )
    }

    /// [`Engine::workloads`] on [`Part::Owners`] of a report, all that
    /// workloads.jq reads of one, and `prepared`
    /// ([`Engine::workloads_prepared`]): what it adds to the report,
    /// computed beside the rest of report.jq ([`Engine::add`] them).
    pub fn workloads_ahead(
        &self,
        owners: &Val,
        prepared: Val,
        excluded: &Excluded,
    ) -> Result<Val, EvalError> {
        self.workloads_on(Val::from_iter([owners.clone()]), prepared, excluded)
    }

    /// workloads.jq on `input` with `report` (slurped: [report], or none).
    fn workloads_on(&self, report: Val, input: Val, excluded: &Excluded) -> Result<Val, EvalError> {
        let vars = vec![
            Val::from(excluded.namespaces.join(",")),
            Val::from(excluded.owner_kinds.join(",")),
            Val::from(excluded.only_namespaces.join(",")),
            report,
        ];
        self.run_one(Programs::WORKLOADS, input, vars)
    }

    /// events.jq: the FailedScheduling events of the report's unscheduled
    /// pods, from the documents of the events list (as for [`Self::report`]).
    pub fn events(&self, events: Vec<Val>, report: &Report) -> Result<Val, EvalError> {
        let slurped = Val::from_iter([report.0.clone()]);
        self.run_one(Programs::EVENTS, Val::from_iter(events), vec![slurped])
    }

    /// result.jq: the report plus attempts, waited seconds and events.
    pub fn result(
        &self,
        report: &Report,
        attempts: usize,
        waited_seconds: u64,
        events: Option<Val>,
    ) -> Result<Val, EvalError> {
        let slurped: Val = events.into_iter().collect();
        let vars = vec![Val::from(attempts), number(waited_seconds), slurped];
        self.run_one(Programs::RESULT, report.0.clone(), vars)
    }

    /// render.jq: the text lines of a result, as (level, text), listing at
    /// most `list_limit` groups, pods per group and nodes (0: all), of a
    /// check without a selection (`-n`, `-l`).
    pub fn render(
        &self,
        result: &Val,
        list_limit: u64,
    ) -> Result<Vec<(String, String)>, EvalError> {
        self.render_within(result, list_limit, &Excluded::default())
    }

    /// [`Self::render`] of a check within `excluded`'s selection (`-n`,
    /// `-l`), which the text names when it selected no pod.
    pub fn render_within(
        &self,
        result: &Val,
        list_limit: u64,
        excluded: &Excluded,
    ) -> Result<Vec<(String, String)>, EvalError> {
        let vars = vec![
            number(list_limit),
            Val::from(excluded.only_namespaces.join(",")),
            Val::from(excluded.selector.clone()),
        ];
        let lines = self.run(Programs::RENDER, result.clone(), vars)?;
        Ok(lines.iter().map(|l| split_level(&to_raw(l))).collect())
    }

    /// decision.jq: settle or stop, fetch events or not.
    pub fn decide(&self, report: &Report) -> Result<Decision, EvalError> {
        let line = to_raw(&self.run_one(Programs::DECISION, report.0.clone(), vec![])?);
        let bad = || EvalError {
            program: Programs::DECISION.file,
            message: format!("unexpected decision {line:?}"),
        };
        let mut words = line.split(' ');
        let (Some(verdict), Some(unscheduled), Some(next), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return Err(bad());
        };
        let verdict = match verdict {
            "pass" => Verdict::Pass,
            "empty" => Verdict::Empty,
            "fail" => Verdict::Fail,
            _ => return Err(bad()),
        };
        let unscheduled = unscheduled != "0";
        match next {
            "wait" | "stop" => Ok(Decision {
                verdict,
                unscheduled,
                may_settle: next == "wait",
            }),
            _ => Err(bad()),
        }
    }

    /// progress.jq: the line printed before another attempt.
    pub fn progress(
        &self,
        report: &Report,
        attempts: usize,
        waited_seconds: u64,
        deadline_seconds: u64,
    ) -> Result<(String, String), EvalError> {
        let vars = vec![
            Val::from(attempts),
            number(waited_seconds),
            Val::from(deadline_seconds.to_string()),
        ];
        let line = self.run_one(Programs::PROGRESS, report.0.clone(), vars)?;
        Ok(split_level(&to_raw(&line)))
    }

    /// progress.jq before the first attempt (null, `$attempts` 0): the
    /// start line, as (level, text).
    pub fn start_line(&self, deadline_seconds: u64) -> Result<(String, String), EvalError> {
        let deadline = Val::from(deadline_seconds.to_string());
        let vars = vec![Val::from(0usize), number(0), deadline];
        let line = self.run_one(Programs::PROGRESS, Val::Null, vars)?;
        Ok(split_level(&to_raw(&line)))
    }
}

/// Where `program` stands in [`Programs::ALL`] (and [`Engine`]'s cells).
fn index_of(program: Program) -> usize {
    Programs::ALL
        .iter()
        .position(|p| *p == program)
        .expect("a canonical program")
}

/// A number as the programs get it (`--argjson NAME N`).
pub fn number(n: u64) -> Val {
    Val::from(usize::try_from(n).unwrap_or(usize::MAX))
}

fn split_level(line: &str) -> (String, String) {
    match line.split_once('\t') {
        Some((level, text)) => (level.to_owned(), text.to_owned()),
        None => ("info".to_owned(), line.to_owned()),
    }
}

fn runtime_error(program: Program, e: jaq_core::Error<Val>) -> EvalError {
    // `error("text")` carries a string: show it without JSON quotes.
    let message = match e.into_val() {
        Val::TStr(b) => String::from_utf8_lossy(&b).into_owned(),
        other => to_json(&other),
    };
    EvalError {
        program: program.file,
        message,
    }
}

fn compile(program: Program) -> Result<Filter, EvalError> {
    let fail = |message: String| EvalError {
        program: program.file,
        message,
    };
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    let arena = Arena::default();
    let file = File {
        code: program.text,
        path: (),
    };
    let modules = Loader::new(defs)
        .load(&arena, file)
        .map_err(|errs| fail(format!("cannot parse: {errs:?}")))?;
    Compiler::default()
        .with_funs(funs)
        .with_global_vars(program.vars.iter().map(|var| var.jaq_name))
        .compile(modules)
        .map_err(|errs| fail(format!("cannot compile: {errs:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jaq_core::ValT;

    /// jaq's own compact writer, which [`to_json`] must match.
    fn jaqs(v: &Val) -> Vec<u8> {
        let mut out = Vec::new();
        jaq_json::write::write(&mut out, &jaq_json::write::Pp::default(), 0, v).unwrap();
        out
    }

    fn ours(v: &Val) -> Vec<u8> {
        let mut out = Vec::new();
        write_compact(&mut out, v);
        out
    }

    #[test]
    fn compact_json_is_jaqs_byte_for_byte() {
        let text = |bytes: &[u8]| Val::utf8_str(bytes.to_vec());
        let number = |n: &str| Val::from_num(n).unwrap();
        // Every byte alone, amid text and at either end; invalid UTF-8.
        let mut values: Vec<Val> = (0..=255u8)
            .flat_map(|b| [text(&[b]), text(&[b'a', b, b'z']), text(&[b, b, b'x', b])])
            .collect();
        values.extend([
            text(b""),
            text("é ✓ 😀 \u{2028}".as_bytes()),
            text(&[0xff, 0xc3, b'"', 0xa9]),
            Val::byte_str(vec![0u8, b'a', 0x80, b'"']),
            Val::Null,
            Val::Bool(true),
            Val::Bool(false),
        ]);
        let numbers = [
            "0",
            "-0",
            "1",
            "-17",
            "1.5",
            "1e300",
            "-2.5e-7",
            "100000000000000000000000",
            "1.000",
            "9007199254740993",
            "0.1",
        ];
        values.extend(numbers.map(number));
        values.extend([
            Val::from(f64::NAN),
            Val::from(f64::INFINITY),
            Val::from(-1.0 / 3.0),
        ]);
        let array: Val = values.iter().cloned().collect();
        let object = Val::obj(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| (if i % 2 == 0 { v.clone() } else { Val::from(i) }, v.clone()))
                .collect(),
        );
        let empty: Val = Vec::<Val>::new().into_iter().collect();
        let nested: Val = [
            object.clone(),
            array.clone(),
            empty,
            Val::obj(Default::default()),
        ]
        .into_iter()
        .collect();
        values.extend([array, object, nested]);
        for value in &values {
            assert_eq!(ours(value), jaqs(value), "{value:?}");
        }
        assert_eq!(
            to_json(&text(&[0xff])),
            String::from_utf8_lossy(&jaqs(&text(&[0xff])))
        );
    }
}
