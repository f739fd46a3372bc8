//! Rendering: the canonical programs and the checker's constants, through the
//! askama templates of `scriptgen/templates/`, into bash.
//!
//! Rust only gathers data here; every byte of bash lives in the templates.

use askama::Template;
use checker::api;
use checker::contract;
use checker::programs::Program;
use checker::Programs;

use crate::embed::with_job_rule;
pub use crate::embed::{
    and_decision, embedded_jq, heredoc_delimiter, Embedded, RenderError, DECIDED_BY_RUNNER,
    JOB_RULE, JOB_RULE_END,
};
use crate::feature::{features_lines, left_out_words, setting_default};
pub use crate::feature::{recorded_features, Feature, FEATURES};
use crate::fit::{packed, wrapped};
pub use crate::library::{
    library_file, without_written_by, written_by, Library, GENERATOR, WRITTEN_BY,
};
use crate::messages::{contract_message, message_words};

/// The programs the bash function runs (the template refers to each by its
/// variable, e.g. `$report_program`). summary.jq runs only when
/// GITHUB_STEP_SUMMARY names a file, ctrf.jq and junit.jq only for the
/// CI results (both features); github.jq formats the checker's
/// `--format github`, the function prints text only.
pub const USED: [Program; 10] = [
    Programs::REPORT,
    Programs::DECISION,
    Programs::WORKLOADS,
    Programs::EVENTS,
    Programs::RESULT,
    Programs::RENDER,
    Programs::PROGRESS,
    Programs::SUMMARY,
    Programs::CTRF,
    Programs::JUNIT,
];

/// What the templates may use: the program texts and the checker's constants.
pub struct Fields {
    /// lib.jq (embedded once, for the programs that print words), then the
    /// programs of [`USED`] in that order.
    pub programs: Vec<Embedded>,
    /// The variables that hold the programs (`lib_program report_program
    /// …`, page-head.jq's last), in lines for one `local` each.
    pub program_variable_lines: Vec<String>,
    /// `report.jq, events.jq, …, lib.jq`, for the headers.
    pub program_files: String,
    /// The default excluded namespaces, comma-joined (report.jq's variable).
    pub excluded_namespaces: String,
    /// The default excluded owner kinds, comma-joined.
    pub excluded_owner_kinds: String,
    /// Their setting (the environment variable the function reads).
    pub exclude_owner_kinds: contract::Setting,
    /// The pods list (`/api/v1/pods`), read raw in pages.
    pub pods_list: String,
    /// The events list, with its field selector.
    pub events_list: String,
    /// The workloads lists (issue 30), space-joined, each by the word that
    /// names it (`replicasets`), which ends its path under
    /// [`Self::workloads_group`]; each read at the pods list's version with
    /// [`Self::exact`].
    pub workloads_lists: String,
    /// The API group's path the workloads lists share: `/apis/apps/v1`.
    pub workloads_group: &'static str,
    /// `resourceVersionMatch=Exact`.
    pub exact: &'static str,
    /// Whether the workloads are read.
    pub workloads: contract::Setting,
    /// page-head.jq: a page's resourceVersion and continue token.
    pub page_head: String,
    /// jq's options for page-head.jq.
    pub page_head_options: String,
    /// [`PAGE_HEAD_FORM`], in pieces, each for a double-quoted bash string.
    pub page_head_lines: Vec<String>,
    /// [`Self::excluded_namespaces`] in pieces of at most 64 columns, the
    /// first without a comma, the others each starting with one.
    pub excluded_namespaces_lines: Vec<String>,
    /// [`Self::left_out`] in lines of at most 86 columns (a loop's list).
    pub left_out_lines: Vec<String>,
    /// progress.jq's start line as bash words (`info$'\t''Verifying…'`):
    /// the function prints it without starting jq (see [`start_line`]).
    pub start_line: String,
    /// The knob the wrapper's header shows as an example.
    pub deadline_env: &'static str,
    /// The numbers of seconds, validated from the contract's table.
    pub knobs: Vec<&'static contract::Knob>,
    /// The artifact directory's setting.
    pub artifact_dir: contract::Setting,
    /// Every file it receives (checker::artifacts::ARTIFACTS), space-joined.
    pub artifacts: String,
    /// GitHub's step summary file's setting.
    pub step_summary: contract::Setting,
    /// The selection's settings (`--exclude-ns`, `-n`, `-l`).
    pub exclude_namespaces: contract::Setting,
    pub namespaces: contract::Setting,
    pub selector: contract::Setting,
    /// The CI results' settings (`--ctrf`, `--junit`).
    pub ctrf: contract::Setting,
    pub junit: contract::Setting,
    /// The checker's watch setting (the function polls; its comment says so).
    pub watch: contract::Setting,
    /// How the function's lines on stderr begin.
    pub prefix: contract::Prefix,
    /// The command users run to put the function into a script.
    pub splice_command: &'static str,
    /// The version of verify-pods whose programs these are.
    pub version: &'static str,
    /// The settings and their defaults (`ENV=DEFAULT`), wrapped for a
    /// header comment.
    pub settings_lines: Vec<String>,
    /// [`Self::program_files`] wrapped for a header comment, after the
    /// words that say what they are (the written-by line says whose).
    pub program_lines: Vec<String>,
    /// Whether the function appends GitHub's step summary.
    pub summary: bool,
    /// Whether it writes the CI results (`--ctrf`, `--junit`).
    pub results: bool,
    /// Whether it reads the selection (`-n`, `-l`, `--exclude-ns`).
    pub selection: bool,
    /// Whether it saves the inputs of a failed verdict (`--save-dir`).
    pub save: bool,
    /// Whether it reads the deadline epoch.
    pub epoch: bool,
    /// Whether it says more when kubectl is slow or fails.
    pub diagnostics: bool,
    /// Whether it reads a list in pages (KWOK_VERIFY_PODS_CHUNK_SIZE); else
    /// one request a list.
    pub paging: bool,
    /// Whether it reads a page's head (its resourceVersion and continue
    /// token): for the pages, and for the workloads, read at the pods
    /// list's resourceVersion.
    pub reads_page_head: bool,
    /// Whether a list whose failure may pass is asked again (vp_retries).
    pub retries: bool,
    /// Whether a pods list is ever listed again: one that broke (paging,
    /// a workloads list at an expired version) or failed in a way that may
    /// pass (retries).
    pub lists_again: bool,
    /// Whether only the listed owner kinds excuse a pod; else upstream's
    /// substring rule ([`JOB_RULE`] in front of report.jq).
    pub exact_owner_kinds: bool,
    /// Whether a pass also needs the pods the workloads want.
    pub workloads_check: bool,
    /// Whether "could not observe" returns 2; else 1, as upstream's.
    pub exit_2: bool,
    /// The settings of the features left out, each `FEATURE:ENV`: one
    /// that is set is said to be ignored.
    pub left_out: Vec<String>,
    /// The features it was rendered with, as `--with` names them (empty:
    /// none), and those left out, for the header.
    pub with: Vec<&'static str>,
    /// The features left out, each `NAME (what it does),`, wrapped for a
    /// header comment (empty: none).
    pub without: Vec<String>,
    /// The features it was rendered with (`none`), comma-separated,
    /// wrapped for the header's [`FEATURES`] line and those under it.
    pub features_lines: Vec<String>,
}

/// How wide a header comment's indented lines are, after their `#   `:
/// every line of a generated file fits in 100 columns.
const HEADER_WIDTH: usize = 96;

/// What users run to splice the function into a script (the `verify-pods`
/// binary's `bash splice`), named in the generated headers.
pub const SPLICE_COMMAND: &str = "verify-pods bash splice";

impl Fields {
    /// A setting's environment variable without [`contract::ENV_PREFIX`],
    /// which the bash puts back (`named=KWOK_VERIFY_PODS_$named`): the
    /// library's bytes are counted (issue 31).
    pub fn short(env: &str) -> &str {
        env.strip_prefix(contract::ENV_PREFIX)
            .unwrap_or_else(|| panic!("{env} does not start with {}", contract::ENV_PREFIX))
    }

    /// The `--with` flag that renders these features again (` --with
    /// summary,exit-2`), empty for none: the header's commands end so.
    pub fn with_flag(&self) -> String {
        if self.with.is_empty() {
            String::new()
        } else {
            format!(" --with {}", self.with.join(","))
        }
    }

    /// A knob's row of the settings loop, its words in the order the loop
    /// reads them: `deadline KWOK_VERIFY_PODS_DEADLINE 60 0 18 seconds`.
    pub fn knob_row(&self, knob: &contract::Knob) -> String {
        let (name, env, default, minimum) = (knob.name, knob.env, knob.default, knob.minimum);
        format!(
            "{name} {env} {default} {minimum} {} {}",
            knob.max_digits, knob.unit
        )
    }

    /// How the header's line of the features begins, for the template.
    pub fn features_prefix(&self) -> &'static str {
        FEATURES
    }

    /// [`contract::ENV_PREFIX`], for the template.
    pub fn env_prefix(&self) -> &'static str {
        contract::ENV_PREFIX
    }

    /// The bash that prints message `id` of the contract, its placeholders
    /// from the shell variables of the same names: an error returns its
    /// exit code (`vp_error 2 "cannot run $program: $why" || return`), a
    /// warning goes on. A long message is passed in pieces, which both
    /// join.
    pub fn say(&self, id: &str) -> String {
        let message = contract_message(id);
        let words = message_words(message).join(" ");
        match (message.level, message.exit) {
            (Some(contract::Level::Error), Some(exit)) => {
                format!("vp_error {exit} {words} || return")
            }
            (Some(contract::Level::Warning), _) => format!("vp_warn {words}"),
            _ => panic!("contract.json: {id} is no line to print"),
        }
    }

    /// The bash that puts message (or words) `id`, formatted, into the
    /// shell variable `variable`.
    pub fn format_into(&self, id: &str, variable: &str) -> String {
        match message_words(contract_message(id)).as_slice() {
            [word] => format!("{variable}={word}"),
            pieces => format!("printf -v {variable} %s {}", pieces.join(" ")),
        }
    }

    /// Error `id`, which has no placeholders, with the prefix, as one shell
    /// word (for the one error before the helpers exist).
    pub fn line(&self, id: &str) -> String {
        let message = contract_message(id);
        assert!(message.placeholders().is_empty(), "{id} has placeholders");
        shell_word(&format!("{}{}", self.prefix.error, message.text))
    }

    /// The exit code of error `id`.
    pub fn exit(&self, id: &str) -> u8 {
        contract_message(id).exit_code()
    }

    /// The one exit code of the errors `ids`, separated by spaces (a
    /// kubectl call's failures, each said in its own words): refused when
    /// they differ, as the function returns it once for all of them.
    pub fn one_exit(&self, ids: &str) -> u8 {
        let codes: Vec<(&str, u8)> = ids.split(' ').map(|id| (id, self.exit(id))).collect();
        let (first, code) = codes[0];
        for (id, other) in &codes {
            assert_eq!(*other, code, "{id}'s exit code is not {first}'s");
        }
        code
    }

    /// Message `id`'s text, its alternatives separated by `|` (the
    /// transient failures' words), as shell words, one for each.
    pub fn alternatives(&self, id: &str) -> String {
        let message = contract_message(id);
        assert!(message.placeholders().is_empty(), "{id} has placeholders");
        let words: Vec<String> = message.text.split('|').map(shell_word).collect();
        words.join(" ")
    }
}

/// The path every workloads list is under, its word appended: the bash
/// builds each list's path from the two.
fn workloads_group() -> &'static str {
    let path = api::WORKLOADS[0].path;
    let group = &path[..path.rfind('/').unwrap_or(0)];
    for list in api::WORKLOADS {
        assert_eq!(
            list.url(0, None),
            format!("{group}/{}", list.what),
            "a workloads list outside {group}"
        );
    }
    group
}

/// A page's head as the API server writes it, `{"kind":…,"apiVersion":…,
/// "metadata":{"resourceVersion":…[,"continue":…][,"remainingItemCount":N]},
/// "items":[`, as a bash extended regular expression (in the function,
/// `alnum` holds the ASCII letters and digits): group 1 is the
/// resourceVersion, group 3 the continue token. Its classes hold only
/// characters a JSON string holds as they are, never escaped, so what it
/// captures is what page-head.jq reads; any other head (spaces, other keys,
/// another order, an escape) is left to page-head.jq. On this form the
/// function reads a page's head without a jq start (about 15 ms of CPU each;
/// five a check when it reads the workloads: BENCHMARKS.md).
pub const PAGE_HEAD_FORM: &str = r#"^\{"kind":"[$alnum]*","apiVersion":"[$alnum./]*","metadata":\{"resourceVersion":"([$alnum]*)"(,"continue":"([$alnum+/=_.-]*)")?(,"remainingItemCount":[0123456789]+)?},"items":\["#;

/// progress.jq's line before the first attempt, as bash words: the function
/// prints it as it is, without starting jq for a line no setting changes.
/// Refused when it depends on the settings (two deadlines, two lines).
fn start_line() -> Result<String, RenderError> {
    let failed = |e: checker::engine::EvalError| RenderError::StartLine(e.to_string());
    let engine = checker::engine::Engine::new().map_err(failed)?;
    let line = |deadline| engine.start_line(deadline).map_err(failed);
    let (level, text) = line(0)?;
    if line(3600)? != (level.clone(), text.clone()) {
        return Err(RenderError::StartLine(
            "its start line depends on the deadline: the bash cannot print it as written".into(),
        ));
    }
    Ok(format!("{}$'\\t'{}", shell_word(&level), shell_word(&text)))
}

/// `text` in pieces of about `width` characters, each new one starting at
/// a `,` or a `(` once the last is that long: never after a backslash (a
/// piece is a double-quoted bash word, its closing quote must stay one)
/// nor inside a `$name`.
fn in_pieces(text: &str, width: usize) -> Vec<String> {
    let mut pieces = vec![String::new()];
    for c in text.chars() {
        let last = pieces.last_mut().expect("one piece at least");
        if last.len() >= width && (c == ',' || c == '(') && !last.ends_with('\\') {
            pieces.push(c.to_string());
        } else {
            last.push(c);
        }
    }
    pieces
}

impl Fields {
    /// Every feature: the wrapper, generated/verify-pods.sh.
    pub fn from_checker() -> Result<Self, RenderError> {
        Self::with(&Feature::ALL)
    }

    /// The function for a host (generated/verify_pods.sh, `splice`):
    /// only the features asked for.
    pub fn with(features: &[Feature]) -> Result<Self, RenderError> {
        let has = |feature| features.contains(&feature);
        let summary = has(Feature::Summary);
        let results = has(Feature::Results);
        let epoch = has(Feature::Epoch);
        let paging = has(Feature::Paging);
        let reads_page_head = paging || has(Feature::Workloads);
        // Each knob but those of the features left out (the deadline
        // epoch's, the chunk size).
        let left_out_has = |env: &str| {
            Feature::ALL
                .into_iter()
                .any(|f| !has(f) && f.settings().contains(&env))
        };
        let knobs: Vec<&'static contract::Knob> = contract::KNOBS
            .iter()
            .filter(|k| !left_out_has(k.env))
            .collect();
        let workloads = has(Feature::Workloads);
        let used = USED.into_iter().filter(|p| {
            (summary || p.name != Programs::SUMMARY.name)
                && (results || (p.name != Programs::CTRF.name && p.name != Programs::JUNIT.name))
                && (workloads || p.name != Programs::WORKLOADS.name)
        });
        let mut programs = std::iter::once(Embedded::lib())
            .chain(used.clone().map(Embedded::new))
            .collect::<Result<Vec<_>, _>>()?;
        let exact_owner_kinds = has(Feature::ExactOwnerKinds);
        if !exact_owner_kinds {
            with_job_rule(&mut programs)?;
        }
        let mut settings: Vec<String> = knobs
            .iter()
            .map(|k| format!("{}={}", k.env, k.default))
            .collect();
        if summary {
            settings.push(format!("{}=", contract::STEP_SUMMARY.env));
        }
        // A feature's settings; a knob among them (the deadline epoch) is
        // listed with the knobs, its default shown.
        let is_knob = |env: &&str| contract::KNOBS.iter().any(|k| k.env == *env);
        for feature in Feature::ALL.into_iter().filter(|f| has(*f)) {
            let envs = feature.settings().into_iter().filter(|env| !is_knob(env));
            settings.extend(envs.map(|env| format!("{env}={}", setting_default(env))));
        }
        let left_out: Vec<String> = Feature::ALL
            .into_iter()
            .filter(|f| !has(*f))
            .flat_map(|f| {
                f.settings()
                    .into_iter()
                    .map(move |env| format!("{}:{}", f.name(), Fields::short(env)))
            })
            .collect();
        let mut program_files: Vec<&str> = used.map(|p| p.file).collect();
        program_files.push(Programs::LIB_FILE);
        let mut variables: Vec<String> = programs.iter().map(|p| p.variable.clone()).collect();
        if reads_page_head {
            program_files.push("page-head.jq");
            variables.push("page_head_program".to_owned());
        }
        Ok(Self {
            program_variable_lines: wrapped(&variables, 90),
            programs,
            program_files: program_files.join(", "),
            excluded_namespaces: Programs::default_excluded_namespaces().join(","),
            excluded_owner_kinds: Programs::default_excluded_owner_kinds().join(","),
            exclude_owner_kinds: contract::EXCLUDE_OWNER_KINDS,
            pods_list: api::PODS.url(0, None),
            events_list: api::EVENTS.url(0, None),
            workloads_lists: api::WORKLOADS.map(|list| list.what).join(" "),
            workloads_group: workloads_group(),
            exact: api::EXACT,
            workloads: contract::WORKLOADS,
            page_head: embedded_jq(Programs::PAGE_HEAD).map_err(|why| {
                RenderError::Unembeddable {
                    file: "page-head.jq",
                    why,
                }
            })?,
            page_head_options: Programs::PAGE_HEAD_OPTIONS.join(" "),
            page_head_lines: in_pieces(PAGE_HEAD_FORM, 36)
                .iter()
                .map(|piece| piece.replace('"', "\\\""))
                .collect(),
            excluded_namespaces_lines: packed(
                &Programs::default_excluded_namespaces(),
                64,
                ',',
                ",",
            ),
            start_line: start_line()?,
            deadline_env: contract::DEADLINE_ENV,
            knobs,
            artifact_dir: contract::ARTIFACT_DIR,
            artifacts: checker::artifacts::ARTIFACTS.join(" "),
            step_summary: contract::STEP_SUMMARY,
            exclude_namespaces: contract::EXCLUDE_NAMESPACES,
            namespaces: contract::NAMESPACES,
            selector: contract::SELECTOR,
            ctrf: contract::CTRF,
            junit: contract::JUNIT,
            watch: contract::WATCH,
            prefix: contract::BASH_PREFIX,
            splice_command: SPLICE_COMMAND,
            version: env!("CARGO_PKG_VERSION"),
            settings_lines: wrapped(&settings, HEADER_WIDTH),
            summary,
            results,
            selection: has(Feature::Selection),
            save: has(Feature::Artifacts),
            epoch,
            diagnostics: has(Feature::Diagnostics),
            paging,
            reads_page_head,
            retries: has(Feature::Retries),
            lists_again: paging || has(Feature::Workloads) || has(Feature::Retries),
            exact_owner_kinds,
            workloads_check: has(Feature::Workloads),
            exit_2: has(Feature::Exit2),
            left_out_lines: wrapped(&left_out, 86),
            left_out,
            with: Feature::ALL
                .into_iter()
                .filter(|f| has(*f))
                .map(Feature::name)
                .collect(),
            without: wrapped(&left_out_words(features), HEADER_WIDTH),
            features_lines: features_lines(features),
            program_lines: wrapped(
                &std::iter::once("Its jq programs:".to_owned())
                    .chain(program_files.iter().map(|f| f.to_string()))
                    .collect::<Vec<_>>(),
                HEADER_WIDTH,
            ),
        })
    }
}

/// The definition alone, `verify_pods() {` … `}` (what splice inserts).
#[derive(Template)]
#[template(path = "function.sh.j2", escape = "none")]
struct Definition<'a> {
    f: &'a Fields,
}

/// `generated/verify_pods.sh`: a header and the definition.
#[derive(Template)]
#[template(path = "verify_pods.sh.j2", escape = "none")]
struct FunctionFile<'a> {
    f: &'a Fields,
    definition: &'a str,
}

/// `generated/verify-pods.sh`: log functions, the definition, the call.
#[derive(Template)]
#[template(path = "verify-pods.sh.j2", escape = "none")]
struct Wrapper<'a> {
    f: &'a Fields,
    definition: &'a str,
}

/// askama drops the final newline of a template file; a text file has one.
pub(crate) fn with_newline(rendered: askama::Result<String>) -> Result<String, RenderError> {
    let mut text = rendered.map_err(|e| RenderError::Template(e.to_string()))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// The definition of `verify_pods()`, ending with its `}` line and a newline.
pub fn definition(fields: &Fields) -> Result<String, RenderError> {
    let text = with_newline(Definition { f: fields }.render())?;
    let bash = |e: crate::splice::SpliceError| RenderError::Bash(e.to_string());
    crate::fit::fitted(&crate::splice::without_comments(&text).map_err(bash)?).map_err(bash)
}

/// The contents of `generated/verify_pods.sh`.
pub fn function_file(fields: &Fields) -> Result<String, RenderError> {
    let definition = definition(fields)?;
    let definition = definition.trim_end_matches('\n');
    with_newline(
        FunctionFile {
            f: fields,
            definition,
        }
        .render(),
    )
}

/// The contents of `generated/verify-pods.sh`.
pub fn wrapper(fields: &Fields) -> Result<String, RenderError> {
    let definition = definition(fields)?;
    let definition = definition.trim_end_matches('\n');
    with_newline(
        Wrapper {
            f: fields,
            definition,
        }
        .render(),
    )
}

/// One shell word that bash reads back as `word`: bare when it only holds
/// characters bash never treats specially, single-quoted otherwise.
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-.,/=:@%+".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

mod filters {
    use askama::Values;

    /// `@{ value|shell_word }@`: see [`super::shell_word`].
    #[askama::filter_fn]
    pub fn shell_word(value: impl ToString, _: &dyn Values) -> askama::Result<String> {
        Ok(super::shell_word(&value.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_bare_only_when_safe() {
        assert_eq!(
            shell_word("reason=FailedScheduling"),
            "reason=FailedScheduling"
        );
        assert_eq!(shell_word("kube-system,argocd"), "kube-system,argocd");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("$(x)"), "'$(x)'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }

    #[test]
    fn errors_return_their_exit_code_warnings_go_on() {
        let fields = Fields::from_checker().unwrap();
        let said = fields.say("kubectl_timed_out");
        assert_eq!(
            said,
            r#"vp_error 2 "\`$command\` did not finish within ${seconds}s and was killed" || return"#
        );
        let warned = fields.say("events_not_collected");
        assert!(warned.starts_with("vp_warn \""), "{warned}");
        assert_eq!(
            fields.format_into("no_error_message", "why"),
            r#"why="no error message""#
        );
    }
}
