//! The canonical jq programs, included at build time from `checker/programs/`.
//!
//! This module is the only door to them: the checker compiles them, scriptgen
//! embeds their text in the bash function, and the tests read them from here.

/// How a driver hands a `$variable` to a program, in jq's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// `--arg NAME TEXT`: the value is a string.
    Arg,
    /// `--argjson NAME JSON`: the value is JSON (here, a number).
    ArgJson,
    /// `--slurpfile NAME FILE`: every JSON document of a file, in an array
    /// (`[]` for an empty file).
    SlurpFile,
}

impl Pass {
    /// jq's option for it.
    pub fn flag(self) -> &'static str {
        match self {
            Pass::Arg => "--arg",
            Pass::ArgJson => "--argjson",
            Pass::SlurpFile => "--slurpfile",
        }
    }
}

/// One `$variable` of a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Var {
    /// As the program and jaq spell it: `$excluded_namespaces`.
    pub jaq_name: &'static str,
    /// How the drivers pass it.
    pub pass: Pass,
}

impl Var {
    /// As jq's command line names it: `excluded_namespaces`.
    pub fn name(&self) -> &'static str {
        self.jaq_name.trim_start_matches('$')
    }
}

/// What a program prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Exactly one value, as compact JSON (`jq -c`).
    Value,
    /// Strings, one raw line each (`jq -r`).
    Lines,
}

impl Output {
    /// jq's option for it.
    pub fn flag(self) -> &'static str {
        match self {
            Output::Value => "-c",
            Output::Lines => "-r",
        }
    }
}

/// One canonical program and its descriptor: what it takes (its input, its
/// variables and how they are passed) and what it gives. The engine, the
/// generated bash (one runner function per program), the parity tests and
/// `verify-pods programs` all read this; nothing restates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Program {
    /// Short name, as used by `verify-pods programs NAME`.
    pub name: &'static str,
    /// File name inside `checker/programs/`.
    pub file: &'static str,
    /// The program as jq and jaq run it: for the programs that use lib.jq,
    /// lib.jq and then the file; for the others, the file alone.
    pub text: &'static str,
    /// The file, byte for byte, without lib.jq.
    pub body: &'static str,
    /// Whether [`Programs::LIB`] is put in front of the body.
    pub with_lib: bool,
    /// What the program reads on its standard input.
    pub input: &'static str,
    /// Whether it reads every JSON document of its input as one array
    /// (`jq --slurp`; the checker hands it the documents' array): a
    /// snapshot is one List or the pages of a paged list.
    pub slurp: bool,
    /// The `$variables` the program expects, in the order the drivers pass them.
    pub vars: &'static [Var],
    /// What it prints.
    pub output: Output,
}

impl Program {
    /// jq's command line for it, without the program text: the output
    /// option, `--slurp` when it reads its input's documents as one array,
    /// then each variable as `--arg NAME VALUE`, where VALUE is
    /// `value(i, var)` for the i-th variable.
    pub fn jq_options(&self, mut value: impl FnMut(usize, &Var) -> String) -> Vec<String> {
        let mut options = vec![self.output.flag().to_owned()];
        if self.slurp {
            options.push(SLURP.to_owned());
        }
        for (i, var) in self.vars.iter().enumerate() {
            options.extend([
                var.pass.flag().to_owned(),
                var.name().to_owned(),
                value(i, var),
            ]);
        }
        options
    }
}

/// jq's option that reads every document of the input into one array.
pub const SLURP: &str = "--slurp";

/// `Var` in a table: `var!(Arg "$excluded_namespaces")`.
macro_rules! var {
    ($pass:ident $name:literal) => {
        Var {
            jaq_name: $name,
            pass: Pass::$pass,
        }
    };
}

/// The text of `checker/programs/NAME.jq`. Macros, here and below, because
/// `include_str!` and `concat!` only take literals.
macro_rules! source {
    ($name:expr) => {
        include_str!(concat!("../programs/", $name, ".jq"))
    };
}

/// The name of lib.jq, the definitions the programs share.
macro_rules! lib_name {
    () => {
        "lib"
    };
}

macro_rules! program {
    // A program that reads the documents of its input as one array.
    (slurp $($rest:tt)*) => {
        Program {
            slurp: true,
            ..program!($($rest)*)
        }
    };
    ($name:literal, $input:literal, $vars:expr, $output:ident) => {
        Program {
            name: $name,
            file: concat!($name, ".jq"),
            text: source!($name),
            body: source!($name),
            with_lib: false,
            input: $input,
            slurp: false,
            vars: $vars,
            output: Output::$output,
        }
    };
    // A program that uses lib.jq (shared messages, escaping, number
    // canonicalisation): lib.jq is put in front of it, so jq and jaq see
    // one self-contained program.
    (with_lib $name:literal, $input:literal, $vars:expr, $output:ident) => {
        Program {
            name: $name,
            file: concat!($name, ".jq"),
            text: concat!(source!(lib_name!()), source!($name)),
            body: source!($name),
            with_lib: true,
            input: $input,
            slurp: false,
            vars: $vars,
            output: Output::$output,
        }
    };
}

/// Access to the canonical programs and their data files.
pub struct Programs;

impl Programs {
    /// snapshot → report (counts, lists, distribution, verdict).
    pub const REPORT: Program = program!(
        slurp with_lib "report",
        "the snapshot: one `kubectl get pods -A -o json` List, or the raw pages of a paged list",
        &[
            var!(Arg "$excluded_namespaces"),
            var!(Arg "$excluded_owner_kinds"),
            var!(Arg "$namespaces"),
            var!(Arg "$selector"),
            var!(Arg "$workloads")
        ],
        Value
    );
    /// workloads lists + slurped report → the report with the pods the
    /// workloads want that do not exist yet (issue 30).
    pub const WORKLOADS: Program = program!(
        slurp with_lib "workloads",
        "the documents of the workloads lists, read at the report's resourceVersion",
        &[
            var!(Arg "$excluded_namespaces"),
            var!(Arg "$excluded_owner_kinds"),
            var!(Arg "$namespaces"),
            var!(SlurpFile "$report")
        ],
        Value
    );
    /// events list + slurped report → matching FailedScheduling events.
    pub const EVENTS: Program = program!(
        slurp with_lib "events",
        "the events: one `kubectl get events -A -o json` List, or the raw pages of a paged list",
        &[var!(SlurpFile "$report")],
        Value
    );
    /// report + how it was observed → the `--format json` result.
    pub const RESULT: Program = program!(
        "result",
        "the report of report.jq",
        &[
            var!(ArgJson "$attempts"),
            var!(ArgJson "$waited_seconds"),
            var!(SlurpFile "$events")
        ],
        Value
    );
    /// result → `LEVEL<TAB>TEXT` lines.
    pub const RENDER: Program = program!(
        with_lib "render",
        "the result of result.jq",
        &[
            var!(ArgJson "$list_limit"),
            var!(Arg "$namespaces"),
            var!(Arg "$selector")
        ],
        Lines
    );
    /// report → the line printed before another attempt; null with
    /// `$attempts` 0 → the start line, printed before the first.
    pub const PROGRESS: Program = program!(
        with_lib "progress",
        "the report of report.jq (null before the first attempt)",
        &[
            var!(ArgJson "$attempts"),
            var!(ArgJson "$waited_seconds"),
            // Digits (--arg): a deadline of up to 18 digits is past what
            // jq 1.6's numbers hold exactly.
            var!(Arg "$deadline_seconds")
        ],
        Lines
    );
    /// result → GitHub Actions workflow commands (`::error title=…::…`).
    pub const GITHUB: Program = program!(
        with_lib "github",
        "the result of result.jq",
        &[var!(ArgJson "$list_limit")],
        Lines
    );
    /// report → "VERDICT UNSCHEDULED NEXT": settle or stop, fetch events or not.
    pub const DECISION: Program = program!("decision", "the report of report.jq", &[], Lines);
    /// result → the Markdown step summary (`$GITHUB_STEP_SUMMARY`).
    pub const SUMMARY: Program = program!(
        with_lib "summary",
        "the result of result.jq",
        &[var!(ArgJson "$list_limit")],
        Lines
    );
    /// result (or null: could not observe) → the CTRF report (`--ctrf`).
    pub const CTRF: Program = program!(
        with_lib "ctrf",
        "the result of result.jq, or null when the check could not observe",
        &[
            var!(ArgJson "$list_limit"),
            var!(Arg "$why"),
            var!(Arg "$version"),
            var!(Arg "$timestamp"),
            var!(ArgJson "$start_ms"),
            var!(ArgJson "$stop_ms")
        ],
        Value
    );
    /// CTRF report → JUnit XML lines (`--junit`).
    pub const JUNIT: Program = program!(with_lib "junit", "the CTRF report of ctrf.jq", &[], Lines);

    /// Every canonical program.
    pub const ALL: [Program; 11] = [
        Self::REPORT,
        Self::WORKLOADS,
        Self::EVENTS,
        Self::RESULT,
        Self::RENDER,
        Self::PROGRESS,
        Self::DECISION,
        Self::GITHUB,
        Self::SUMMARY,
        Self::CTRF,
        Self::JUNIT,
    ];

    /// `checker/programs/lib.jq`: the definitions the programs share
    /// (already part of their [`Program::text`]).
    pub const LIB: &'static str = source!(lib_name!());
    /// Its name (`lib`), as a program's name: scriptgen names its bash
    /// variable and here-document after it.
    pub const LIB_NAME: &'static str = lib_name!();
    /// Its file name inside `checker/programs/`.
    pub const LIB_FILE: &'static str = concat!(lib_name!(), ".jq");

    /// `checker/programs/excluded-namespaces`, as written.
    pub const EXCLUDED_NAMESPACES_FILE: &'static str =
        include_str!("../programs/excluded-namespaces");

    /// `checker/programs/excluded-owner-kinds`, as written.
    pub const EXCLUDED_OWNER_KINDS_FILE: &'static str =
        include_str!("../programs/excluded-owner-kinds");

    /// `checker/programs/page-head.jq`: the bash function's reader of a raw
    /// list page's resourceVersion and continue token (`jq -n -r --stream`;
    /// the checker reads them in `reader/page.rs`). Not a canonical program:
    /// it reads jq's stream form, which jaq has not.
    pub const PAGE_HEAD: &'static str = include_str!("../programs/page-head.jq");
    /// jq's options for it.
    pub const PAGE_HEAD_OPTIONS: [&'static str; 3] = ["-n", "-r", "--stream"];

    /// `checker/programs/projection.json`, as written.
    pub const PROJECTION_FILE: &'static str = include_str!("../programs/projection.json");

    /// A program by its name (`report`) or file name (`report.jq`).
    pub fn by_name(name: &str) -> Option<Program> {
        Self::ALL
            .into_iter()
            .find(|p| p.name == name || p.file == name)
    }

    /// The default excluded namespaces: the lines of the data file without
    /// comments and blanks.
    pub fn default_excluded_namespaces() -> Vec<String> {
        data_lines(Self::EXCLUDED_NAMESPACES_FILE)
    }

    /// The default excluded owner kinds (exact match), from their data file.
    pub fn default_excluded_owner_kinds() -> Vec<String> {
        data_lines(Self::EXCLUDED_OWNER_KINDS_FILE)
    }
}

/// The entries of a data file: its lines without comments and blanks.
fn data_lines(file: &str) -> Vec<String> {
    file.lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_list_has_the_documented_namespaces() {
        let names = Programs::default_excluded_namespaces();
        assert!(names.contains(&"kube-system".to_owned()));
        assert!(names.contains(&"aicr-registry".to_owned()));
        assert!(names.iter().all(|n| !n.contains(',') && !n.contains('#')));
    }

    #[test]
    fn default_owner_kinds_are_exactly_job() {
        assert_eq!(Programs::default_excluded_owner_kinds(), ["Job"]);
    }

    #[test]
    fn programs_are_found_by_name_and_file() {
        assert_eq!(Programs::by_name("report"), Some(Programs::REPORT));
        assert_eq!(Programs::by_name("events.jq"), Some(Programs::EVENTS));
        assert_eq!(Programs::by_name("nope"), None);
    }

    #[test]
    fn text_is_lib_then_body_exactly_when_with_lib() {
        for program in Programs::ALL {
            let prefix = if program.with_lib { Programs::LIB } else { "" };
            assert_eq!(program.text, format!("{prefix}{}", program.body));
        }
        assert!(Programs::ALL.iter().any(|p| p.with_lib));
        assert!(
            Programs::LIB.ends_with('\n'),
            "lib.jq must end its last line"
        );
    }
}
