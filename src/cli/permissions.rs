//! `toolwright permissions check`: prints the permission decision for one call and why
//! (which rule from which file, which subcommand), as text or JSON. Nothing is run and no
//! prompt is shown: the decision is reported, not acted on.
//!
//! Exit code 0 for any decision; 2 for bad input (unreadable or invalid settings given on
//! the command line; an unknown key, a key written twice or a key read from managed
//! settings only in `--rules` or an inline `--settings` value; invalid JSON; unknown mode;
//! an input a session refuses for a NUL byte in it, or a WebFetch URL it refuses), with a
//! message on stderr.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use tool_core::{
    DecisionReason, PermissionMode, PermissionResult, RuleSource, Tool, ToolUseContext, expand_path,
};
use tool_perms::probe::ProbeTool;
use tool_perms::settings::{SettingsSources, load_permissions, parse_mode, source_name};
use tool_perms::{Explanation, block_on};

/// Arguments of `toolwright permissions check`.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// A settings file (or inline JSON object) to load as `--settings` does; repeatable.
    #[arg(long = "settings", value_name = "FILE", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub settings: Vec<String>,
    /// Rules as JSON, `{"allow":[..],"ask":[..],"deny":[..]}`; they count as project settings
    /// of `--cwd`.
    #[arg(long, value_name = "JSON")]
    pub rules: Option<String>,
    /// The permission mode: default (or manual), acceptEdits, plan, dontAsk, bypassPermissions
    /// or auto (as default) (default: the settings' `defaultMode`).
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// The working directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// An additional working directory; repeatable.
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// The tool name (`Bash`, `Read`, `Edit`, `WebFetch`, `mcp__server__tool`, ...).
    #[arg(value_name = "TOOL")]
    pub tool: String,
    /// The tool input as a JSON object, e.g. `{"command":"git status"}`.
    #[arg(value_name = "INPUT-JSON")]
    pub input: String,
}

/// A directory given on the command line: `~` expanded, relative to `base`; a name that is
/// not UTF-8 is used as it is (a lossy copy would name another directory).
fn flag_path(given: &Path, base: &Path, home: Option<&Path>) -> PathBuf {
    match given.to_str() {
        Some(text) => expand_path(text, base, home),
        None => base.join(given),
    }
}

/// What `check` found, ready to print.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    /// `allow`, `ask` or `deny`.
    pub decision: &'static str,
    /// The decision with its explanation.
    pub explanation: Explanation,
    /// Problems in the settings files that were read and in the input (not fatal), each as
    /// printed: with its severity (`FILE: error: …`, `warning: …`).
    pub warnings: Vec<String>,
    /// The mode the call was decided in.
    pub mode: PermissionMode,
}

/// Runs the command: prints the report; returns 0 for any decision, 2 for bad input.
/// `builtins` are the built-in tools a session here has (see [`check`]).
pub fn run(args: &CheckArgs, builtins: &[Arc<dyn Tool>]) -> ExitCode {
    match check(args, builtins) {
        Ok(report) => {
            for w in &report.warnings {
                eoutln!("{w}");
            }
            if args.json {
                outln!("{}", render_json(&report));
            } else {
                out!("{}", render_text(&report));
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eoutln!("toolwright permissions check: {message}");
            ExitCode::from(2)
        }
    }
}

/// Decides the call described by `args`, without printing. A tool of `builtins` (by name or
/// alias) decides with its own permission check, as in a session; any other (an MCP tool,
/// the Agent tool) is described by a [`ProbeTool`].
pub fn check(args: &CheckArgs, builtins: &[Arc<dyn Tool>]) -> Result<CheckReport, String> {
    // Where the configuration lives as a session reads it: before the settings' `env`,
    // applied to this process, could move it.
    let home = crate::session::var_before_settings("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let here =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let cwd = match &args.cwd {
        Some(c) => flag_path(c, &here, home.as_deref()),
        None => here.clone(),
    };
    // As a session opens it: trust and settings are looked up by the real path, of a
    // directory.
    let real = std::fs::canonicalize(&cwd)
        .map_err(|e| format!("cannot use {} as the project directory: {e}", cwd.display()))?;
    if !real.is_dir() {
        return Err(format!(
            "cannot use {} as the project directory: it is not a directory",
            cwd.display()
        ));
    }
    let cwd = real;
    let input: Value = serde_json::from_str(&args.input)
        .map_err(|e| format!("INPUT-JSON is not valid JSON: {e}"))?;
    if !input.is_object() {
        return Err("INPUT-JSON must be a JSON object, e.g. '{\"command\":\"ls\"}'".into());
    }
    let mode = args.mode.as_deref().map(parse_mode).transpose()?;

    let mut sources = SettingsSources::standard_with_env(&cwd, crate::session::var_before_settings);
    // What a session in this folder would apply: its own grants only when it is trusted.
    sources.project_trusted = crate::trust::is_trusted(&cwd);
    sources.flag_settings = tool_perms::settings::resolve_flag_settings(&args.settings, &cwd);
    if let Some(rules) = &args.rules {
        // As the settings files are read (a byte order mark, a number out of range); a key
        // written twice or one `--rules` does not read is bad input, as an unknown key is.
        let permissions = tool_perms::settings::parse_rules_flag(rules)
            .map_err(|errors| format!("bad settings:\n  {}", errors.join("\n  ")))?;
        sources
            .inline
            .push((RuleSource::ProjectSettings, permissions));
    }
    let mut loaded = load_permissions(&sources);
    // The inline value without a name of its own is `--rules`: said by the flag's name.
    for d in &mut loaded.diagnostics {
        if d.file.is_none() && d.origin.is_none() && d.source == RuleSource::ProjectSettings {
            d.origin = Some("--rules".into());
        }
    }
    // Problems in what was given on the command line are bad input (an unknown key in
    // `--rules` or an inline `--settings` value too: the rule meant would be missing);
    // problems in the ambient settings files are reported as warnings.
    let fatal = loaded.command_line_errors();
    if !fatal.is_empty() {
        return Err(format!("bad settings:\n  {}", fatal.join("\n  ")));
    }
    // Under `--mode`, as a session started with it says them (the settings' own mode is
    // not the one used); each says its own severity (`FILE: error: …`).
    let mut warnings: Vec<String> = loaded
        .diagnostics_under_mode(mode)
        .map(ToString::to_string)
        .collect();
    // As a session says it: a rule that did nothing here may be one an untrusted folder's
    // settings were not allowed to grant.
    if !loaded.untrusted_ignored_keys.is_empty() {
        let ignored = format!(
            "its {}",
            crate::trust::and_list(&loaded.untrusted_ignored_keys)
        );
        let notice = crate::trust::untrusted_notice(&cwd, &[ignored]);
        warnings.push(format!("warning: {notice}"));
    }

    let mut perm = loaded.context.clone();
    loaded.apply_mode_flag(&mut perm, mode)?;
    // Relative to where the command runs, as `--cwd` and `--settings` are.
    for d in &args.add_dir {
        let p = flag_path(d, &here, home.as_deref());
        if !p.is_dir() {
            warnings.push(format!(
                "warning: --add-dir {} is no directory{}: it adds nothing a session could use",
                tool_core::escape_controls(&p.display().to_string()),
                if p.exists() {
                    ""
                } else {
                    " (it does not exist)"
                }
            ));
        }
        if !perm.additional_working_directories.contains(&p) {
            perm.additional_working_directories.push(p);
        }
    }
    let engine = loaded.engine();
    // A session's `~` in a tool's input is this process's `HOME` as the session runs with it,
    // the settings' `env` applied (the commands it runs see that `HOME`): only where the
    // configuration is read from stays as it was before.
    let session_home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let ctx = ToolUseContext::new(&cwd)
        .with_home(session_home.clone())
        .with_permission(perm.clone());
    // The built-in tool itself where there is one (its own permission check, the subject it
    // derives from the input: a Glob pattern that climbs out of the cwd, say), as the
    // session's pipeline asks it; a stand-in for the others (MCP tools, the Agent tool).
    let probe;
    let (tool, input): (&dyn Tool, Value) = match tool_core::find_tool(builtins, &args.tool) {
        Some(tool) => {
            // As the pipeline decides: on the input as its schema reads it, with what the
            // tool derives from it (a relative path made absolute against the cwd).
            let mut input = tool.parse_input(input.clone()).unwrap_or(input);
            // A session refuses an input with a NUL byte before any permission is decided,
            // and the input of a tool whose validation reads nothing but the input (a
            // WebFetch URL that is not http or https, or is too long).
            let refusal = match block_on(refusal_for_nul_byte(tool.as_ref(), &input, &ctx)) {
                Some(refusal) => Some(refusal),
                None => block_on(refusal_for_input_alone(tool.as_ref(), &input, &ctx)),
            };
            if let Some(refusal) = refusal {
                return Err(format!(
                    "a session would refuse this call before any permission is decided: {refusal}"
                ));
            }
            // A file tool refuses a relative path before any permission is asked; the
            // question is surely about the file it names in the cwd, so that is judged
            // (and the refusal said).
            for key in ["file_path", "notebook_path"] {
                let Some(given) = input.get(key).and_then(Value::as_str) else {
                    continue;
                };
                // As the tool reads it: trimmed, and `~` only alone or before a `/`.
                let given = given.trim();
                if given.is_empty()
                    || Path::new(given).is_absolute()
                    || given == "~"
                    || given.starts_with("~/")
                {
                    continue;
                }
                let absolute = cwd.join(given);
                warnings.push(format!(
                    "warning: `{key}` {given} is relative: a session refuses it (the path must be absolute); decided for {}",
                    absolute.display()
                ));
                input[key] = Value::String(absolute.display().to_string());
            }
            let input = tool.observable_input(&input, &ctx).unwrap_or(input);
            (tool.as_ref(), input)
        }
        None => {
            probe = ProbeTool::new(args.tool.clone(), &cwd, session_home);
            (&probe, input)
        }
    };
    let explanation = block_on(engine.explain(tool, &input, &ctx));
    let decision = match &explanation.result {
        PermissionResult::Allow { .. } => "allow",
        PermissionResult::Deny { .. } => "deny",
        PermissionResult::Ask { .. } | PermissionResult::Passthrough { .. } => "ask",
    };
    Ok(CheckReport {
        decision,
        explanation,
        warnings,
        mode: perm.mode,
    })
}

/// The refusal a session gives `input` because of a NUL byte in one of its strings, found
/// with the tool's own input validation (which a session runs before any permission is
/// decided): the refusal of the input as given when the same input without its NUL bytes is
/// not refused so. Refusals that do not come from a NUL byte (a file not read yet, one that
/// does not exist) depend on the session's state, not on the call: the check decides those
/// calls as the session would once they pass.
async fn refusal_for_nul_byte(
    tool: &dyn Tool,
    input: &Value,
    ctx: &ToolUseContext,
) -> Option<String> {
    /// `value` with the NUL bytes of its strings (and keys) taken out; `None` if it has none.
    fn without_nul(value: &Value) -> Option<Value> {
        match value {
            Value::String(s) if s.contains('\0') => Some(Value::String(s.replace('\0', ""))),
            Value::Array(items) => {
                let changed: Vec<Option<Value>> = items.iter().map(without_nul).collect();
                changed.iter().any(Option::is_some).then(|| {
                    Value::Array(
                        changed
                            .into_iter()
                            .zip(items)
                            .map(|(new, old)| new.unwrap_or_else(|| old.clone()))
                            .collect(),
                    )
                })
            }
            Value::Object(fields) => {
                let mut any = false;
                let cleaned = fields
                    .iter()
                    .map(|(k, v)| {
                        let key = k.replace('\0', "");
                        any |= key.len() != k.len();
                        let v = without_nul(v)
                            .inspect(|_| any = true)
                            .unwrap_or_else(|| v.clone());
                        (key, v)
                    })
                    .collect();
                any.then_some(Value::Object(cleaned))
            }
            _ => None,
        }
    }
    let clean = without_nul(input)?;
    let refused = tool.validate_input(input, ctx).await.err()?.message;
    match tool.validate_input(&clean, ctx).await {
        Err(other) if other.message == refused => None,
        _ => Some(refused),
    }
}

/// Built-in tools whose input validation reads the call's input alone, never the session's
/// state (the files read, what exists): WebFetch checks its URL (`http` or `https`, no user
/// name or password, a public host name, at most 2,000 characters).
const VALIDATED_BY_INPUT_ALONE: [&str; 1] = ["WebFetch"];

/// The refusal a session gives `input` in the validation of a tool of
/// [`VALIDATED_BY_INPUT_ALONE`]: a refusal of the call itself, whatever the session.
async fn refusal_for_input_alone(
    tool: &dyn Tool,
    input: &Value,
    ctx: &ToolUseContext,
) -> Option<String> {
    if !VALIDATED_BY_INPUT_ALONE.contains(&tool.name()) {
        return None;
    }
    tool.validate_input(input, ctx)
        .await
        .err()
        .map(|e| e.message)
}

/// The one-line reason for the decision.
pub fn reason_text(e: &Explanation) -> String {
    let from_reason = |r: &Option<DecisionReason>| match r {
        Some(DecisionReason::Rule { rule, source }) => {
            format!("matched rule {rule} from {}", source_name(*source))
        }
        Some(DecisionReason::Mode { mode }) => format!("{} mode", mode.as_str()),
        Some(DecisionReason::WorkingDir { reason })
        | Some(DecisionReason::SafetyCheck { reason })
        | Some(DecisionReason::Other { reason }) => reason.clone(),
        Some(DecisionReason::Hook { hook, .. }) => format!("hook {hook}"),
        Some(_) | None => String::new(),
    };
    match &e.result {
        PermissionResult::Deny { message, .. } | PermissionResult::Ask { message, .. } => {
            message.clone()
        }
        PermissionResult::Passthrough { message, .. } => message.clone().unwrap_or_default(),
        PermissionResult::Allow { reason, .. } => {
            let r = from_reason(reason);
            if r.is_empty() {
                "allowed".into()
            } else {
                format!("allowed: {r}")
            }
        }
    }
}

/// The report as JSON: `{"decision","reason","rule","source","subcommand",...}`.
pub fn render_json(r: &CheckReport) -> Value {
    let e = &r.explanation;
    let suggestions = match &e.result {
        PermissionResult::Ask { suggestions, .. }
        | PermissionResult::Passthrough { suggestions, .. } => {
            serde_json::to_value(suggestions).unwrap_or(Value::Null)
        }
        _ => json!([]),
    };
    json!({
        "decision": r.decision,
        "reason": reason_text(e),
        "rule": e.rule.as_ref().map(|x| x.rule.clone()),
        "source": e.rule.as_ref().map(|x| source_name(x.source)),
        "subcommand": e.subcommand,
        "mode": r.mode.as_str(),
        "bypassImmune": e.bypass_immune,
        "details": e.details,
        "suggestions": suggestions,
        "warnings": r.warnings,
    })
}

/// The report as text for people.
pub fn render_text(r: &CheckReport) -> String {
    let e = &r.explanation;
    let mut out = format!(
        "decision: {}\nreason: {}\nmode: {}\n",
        r.decision,
        reason_text(e),
        r.mode.as_str()
    );
    if let Some(rule) = &e.rule {
        out.push_str(&format!(
            "rule: {} (from {})\n",
            rule.rule,
            source_name(rule.source)
        ));
    }
    if let Some(sub) = &e.subcommand {
        out.push_str(&format!("subcommand: {sub}\n"));
    }
    if e.bypass_immune {
        out.push_str("note: this ask cannot be skipped, even in bypassPermissions mode\n");
    }
    if !e.details.is_empty() {
        out.push_str("checks:\n");
        for d in &e.details {
            out.push_str(&format!("  {d}\n"));
        }
    }
    // A path with a carriage return or an escape sequence in it must not rewrite the line
    // a terminal shows.
    tool_core::escape_controls(&out)
}
