//! The jq programs as the bash embeds them: each in a quoted
//! here-document, with its runner's options, and upstream's Job rule.

use crate::fit::wrapped;
use checker::programs::Program;
use checker::Programs;
use std::borrow::Cow;
use std::fmt;

/// One program, ready to sit in a quoted here-document.
pub struct Embedded {
    /// `report`.
    pub name: &'static str,
    /// `report.jq`.
    pub file: &'static str,
    /// The bash variable that holds it: `report_program`.
    pub variable: String,
    /// The here-document delimiter: `VERIFY_PODS_REPORT_JQ`.
    pub delimiter: String,
    /// The file, byte for byte, plus a final newline if it had none (the
    /// delimiter must start a line of its own).
    pub text: Cow<'static, str>,
    /// The jq options of its runner function, from the program's descriptor,
    /// each with its value, a variable's a positional parameter (`-c`,
    /// `--arg excluded_namespaces "$1"`): [`Self::runner_lines`] wraps them
    /// with the program. None for lib.jq (and upstream's Job rule), which
    /// run in front of others only.
    pub options: Option<Vec<String>>,
    /// The program its runner hands jq, as a bash word's inside:
    /// `$lib_program$report_program` (lib.jq in front of a program that
    /// uses it; see also [`DECIDED_BY_RUNNER`]).
    pub argument: String,
}

/// How wide a runner's lines are, for its ` \` to end within 100 columns
/// at a host's deeper indentation too.
const RUNNER_WIDTH: usize = 88;

/// jq's options, each with its value or variable's name.
fn option_units(options: &[String]) -> Vec<String> {
    let mut units: Vec<String> = Vec::new();
    for option in options {
        match units.last_mut() {
            // A value, or a variable's name, goes with the option before it.
            Some(last) if !option.starts_with('-') => {
                last.push(' ');
                last.push_str(option);
            }
            _ => units.push(option.clone()),
        }
    }
    units
}

/// The program whose runner also decides (issue 30's cost): jq prints its
/// report, then decision.jq's line on that report (`-r`), so that the
/// verdict takes one jq start less.
pub const DECIDED_BY_RUNNER: &str = "workloads";

/// The text jq runs for a runner that also decides: `program`, then
/// `decision` on each of its outputs, both printed.
pub fn and_decision(program: &str, decision: &str) -> String {
    format!("{program}|.,({decision})")
}

impl Embedded {
    /// Embed `program`'s body (lib.jq is embedded once, see [`Self::lib`]).
    pub fn new(program: Program) -> Result<Self, RenderError> {
        let mut embedded = Self::file(program.name, program.file, program.body)?;
        let mut options = program.jq_options(|i, _| format!("\"${}\"", i + 1));
        let lib = if program.with_lib { "$lib_program" } else { "" };
        embedded.argument = format!("{lib}${}", embedded.variable);
        if program.name == DECIDED_BY_RUNNER {
            let decision = format!("${}_program", Programs::DECISION.name);
            embedded.argument = and_decision(&embedded.argument, &decision);
            options.insert(0, "-r".to_owned());
        }
        embedded.options = Some(option_units(&options));
        Ok(embedded)
    }

    /// Its runner's jq options and program, wrapped: None for lib.jq (and
    /// upstream's Job rule), which run in front of others only.
    pub fn runner_lines(&self) -> Option<Vec<String>> {
        let mut words = vec![format!("vp_run_{}() {{ vp_jq", self.name)];
        words.extend(self.options.clone()?);
        words.push(format!("\"{}\"; }}", self.argument));
        Some(wrapped(&words, RUNNER_WIDTH))
    }

    /// Embed lib.jq, as `$lib_program`.
    pub fn lib() -> Result<Self, RenderError> {
        Self::file(Programs::LIB_NAME, Programs::LIB_FILE, Programs::LIB)
    }

    /// Embed one file of `checker/programs/`, refusing a text that contains
    /// its delimiter anywhere (stricter than bash, which only stops at a line
    /// equal to it).
    fn file(
        name: &'static str,
        file: &'static str,
        text: &'static str,
    ) -> Result<Self, RenderError> {
        let delimiter = heredoc_delimiter(name);
        if text.contains(&delimiter) {
            return Err(RenderError::DelimiterInProgram { file, delimiter });
        }
        let text = embedded_jq(text).map_err(|why| RenderError::Unembeddable { file, why })?;
        let text = Cow::Owned(text);
        Ok(Self {
            name,
            file,
            variable: format!("{name}_program"),
            delimiter,
            text,
            options: None,
            argument: String::new(),
        })
    }
}

/// A jq program as the bash embeds it: the canonical file as it is, its
/// layout and comments kept (a reader of the host's library reads the
/// programs as they are written), with a final newline. Refuses a line
/// that ends with a backslash: jq 1.7.1 and later continue a comment
/// ending so on the next line, jq 1.6 does not.
pub fn embedded_jq(text: &str) -> Result<String, &'static str> {
    if text.lines().any(|line| line.trim_end().ends_with('\\')) {
        return Err("a line ends with a backslash");
    }
    let mut embedded = text.to_owned();
    if !embedded.ends_with('\n') {
        embedded.push('\n');
    }
    Ok(embedded)
}

/// `VERIFY_PODS_REPORT_JQ` for report.jq: upper case, which no canonical
/// program uses for identifiers (jq keywords and builtins are lower case).
pub fn heredoc_delimiter(name: &str) -> String {
    format!("VERIFY_PODS_{}_JQ", name.to_ascii_uppercase())
}

/// Upstream's Job rule, as a jq prefix of report.jq and workloads.jq: see
/// scriptgen/templates/job-rule.jq.
pub const JOB_RULE: &str = include_str!("../templates/job-rule.jq");

/// Its end, after report.jq: see scriptgen/templates/job-rule-end.jq.
pub const JOB_RULE_END: &str = include_str!("../templates/job-rule-end.jq");

/// The programs that read `$excluded_owner_kinds`: without the feature
/// exact-owner-kinds, [`JOB_RULE`] runs in front of them and sets it.
const READ_OWNER_KINDS: [&str; 2] = ["report", "workloads"];

/// `programs` with upstream's Job rule: embedded as `$job_rule_program`,
/// put in front of each program that reads the excluded owner kinds, and
/// `$job_rule_end_program` after report.jq.
pub(crate) fn with_job_rule(programs: &mut Vec<Embedded>) -> Result<(), RenderError> {
    for program in programs.iter_mut() {
        if READ_OWNER_KINDS.contains(&program.name) {
            let own = format!("${}", program.variable);
            let mut wrapped = format!("$job_rule_program{own}");
            if program.name == Programs::REPORT.name {
                wrapped.push_str("$job_rule_end_program");
            }
            program.argument = program.argument.replacen(&own, &wrapped, 1);
        }
    }
    programs.push(Embedded::file("job_rule", "job-rule.jq", JOB_RULE)?);
    programs.push(Embedded::file(
        "job_rule_end",
        "job-rule-end.jq",
        JOB_RULE_END,
    )?);
    Ok(())
}

/// Why the programs cannot be embedded.
#[derive(Debug, PartialEq, Eq)]
pub enum RenderError {
    /// A line of the program equals its here-document delimiter: bash would
    /// end the document there.
    DelimiterInProgram {
        file: &'static str,
        delimiter: String,
    },
    /// askama failed.
    Template(String),
    /// The rendered bash cannot be lexed (a template error).
    Bash(String),
    /// A program that [`embedded_jq`] cannot embed safely.
    Unembeddable {
        file: &'static str,
        why: &'static str,
    },
    /// progress.jq's start line cannot be written into the bash: it fails,
    /// or it depends on the settings.
    StartLine(String),
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            RenderError::DelimiterInProgram { file, delimiter } => write!(
                f,
                "checker/programs/{file} contains the line {delimiter:?}, its here-document delimiter"
            ),
            RenderError::Template(e) => write!(f, "template error: {e}"),
            RenderError::Bash(e) => write!(f, "rendered bash: {e}"),
            RenderError::Unembeddable { file, why } => {
                write!(f, "checker/programs/{file}: cannot embed it: {why}")
            }
            RenderError::StartLine(why) => write!(f, "checker/programs/progress.jq: {why}"),
        }
    }
}

impl std::error::Error for RenderError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_holding_its_delimiter_is_refused() {
        let evil = Program {
            name: "report",
            file: "report.jq",
            text: "# ends early\nVERIFY_PODS_REPORT_JQ\n.",
            body: "# ends early\nVERIFY_PODS_REPORT_JQ\n.",
            with_lib: false,
            slurp: false,
            input: "anything",
            vars: &[],
            output: checker::programs::Output::Value,
        };
        assert!(matches!(
            Embedded::new(evil),
            Err(RenderError::DelimiterInProgram { .. })
        ));
    }

    #[test]
    fn a_program_without_final_newline_gets_one() {
        let bare = Program {
            name: "x",
            file: "x.jq",
            text: ".",
            body: ".",
            with_lib: false,
            slurp: false,
            input: "anything",
            vars: &[],
            output: checker::programs::Output::Value,
        };
        assert_eq!(Embedded::new(bare).unwrap().text, ".\n");
    }
}
