//! `toolwright tools`: the tools of this build.

use std::process::ExitCode;

use serde_json::{Value, json};
use tool_core::{MaxResultSize, Tool};

/// Arguments of `toolwright tools`.
#[derive(Debug, clap::Args)]
pub struct ToolsArgs {
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Include each tool's JSON Schema exactly as sent to a model API.
    #[arg(long)]
    pub schemas: bool,
    /// A settings file (or inline JSON), as Claude Code's `--settings`; repeatable. Its
    /// `env` (with the user's, the managed and, in a trusted folder, the project's) turns
    /// on the tools an environment variable gates, as it does for `run` and `agent`.
    #[arg(long = "settings", value_name = "FILE|JSON", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub settings: Vec<String>,
    /// The project directory whose settings apply (default: the current directory).
    #[arg(long)]
    pub cwd: Option<std::path::PathBuf>,
    /// Also connect the session's MCP servers (the user's, the project's `.mcp.json` when
    /// the folder is trusted, `--mcp-config`) and list their tools, as a session has them.
    #[arg(long)]
    pub mcp: bool,
    /// MCP servers from a file (or inline JSON), as for `run`; repeatable. Implies `--mcp`.
    #[arg(long = "mcp-config", value_name = "FILE|JSON", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub mcp_config: Vec<String>,
    /// Only the servers of `--mcp-config`.
    #[arg(long, requires = "mcp_config")]
    pub strict_mcp_config: bool,
}

impl ToolsArgs {
    /// The session options whose settings' `env` decides the environment gates.
    pub fn options(&self) -> crate::session::SessionOptions {
        let mut options = crate::session::SessionArgs {
            settings: self.settings.clone(),
            mode: None,
            cwd: self.cwd.clone(),
            mcp_config: self.mcp_config.clone(),
            strict_mcp_config: self.strict_mcp_config,
        }
        .options(false);
        options.offer_tool_search = !toolwright::agent::tool_search::off_in_env();
        options
    }
}

/// A tool's entry. Its flags are per input, so they are read on the smallest input its
/// schema accepts (as `serve` reads its annotations): a tool whose flags hold whatever the
/// input (Read) gives its own answer, one whose flags depend on the input (Bash) the
/// cautious answer for an unknown input. `not_offered`: why `agent`, `run` and `serve` leave
/// the tool out ([`crate::session::not_offered_because`]), for a tool listed all the same.
fn describe(tool: &dyn Tool, schemas: bool, searching: bool, not_offered: Option<&str>) -> Value {
    let probe = tool_core::schema::probe_input(&tool.input_schema());
    let mut v = json!({
        "name": tool.name(),
        "aliases": tool.aliases(),
        "description": tool.description(),
        "read_only": tool.is_read_only(&probe),
        "concurrency_safe": tool.is_concurrency_safe(&probe),
        // Deferred only where a model gets it so: with tool search on (ToolSearch offered).
        "deferred": searching && tool.should_defer(),
        "interrupt": format!("{:?}", tool.interrupt_behavior()).to_lowercase(),
        "max_result_chars": match tool.max_result_size() { MaxResultSize::Chars(n) => json!(n), MaxResultSize::Unbounded => Value::Null },
        "gate": tool_registry::gate_of(tool.name()),
        "offered": not_offered.is_none(),
    });
    if let Some(why) = not_offered {
        v["not_offered"] = why.into();
    }
    if let Some(mcp) = tool.mcp_info() {
        v["mcp_server"] = mcp.server_name.into();
    }
    if schemas {
        v["input_schema"] = tool.input_schema();
    }
    v
}

/// Whether `tool`'s flag `key` (`read_only`, `concurrency_safe`) is true for some input
/// though not for its smallest one: read again with each string field of that input set to
/// `ls` (a command, a path, a pattern), which tells Bash (`ls` is read-only) from Write (no
/// input makes it read-only).
fn depends_on_input(tool: &dyn Tool, key: &str) -> bool {
    let mut sample = tool_core::schema::probe_input(&tool.input_schema());
    if let Value::Object(fields) = &mut sample {
        for value in fields.values_mut().filter(|v| v.is_string()) {
            *value = Value::from("ls");
        }
    }
    match key {
        "read_only" => tool.is_read_only(&sample),
        "concurrency_safe" => tool.is_concurrency_safe(&sample),
        _ => false,
    }
}

/// Runs `toolwright tools`. The settings' `env` is already in this process's environment
/// (see `main`), so the environment gates answer as they would in a session. What a session
/// would say of the settings (their problems, an untrusted folder's notice) goes to standard
/// error, as `run` says it. The tools of this build that the commands leave out (the Cron
/// tools, whose jobs none of them fires) are listed last, with why they are not offered.
pub async fn run(args: &ToolsArgs) -> ExitCode {
    let options = args.options();
    // The session's tools with those the commands leave out, to list them too (marked).
    let mut listing = options.clone();
    listing.fires_scheduled_jobs = true;
    // Settings that cannot be used would leave the environment gates unanswered: the list
    // would be another session's.
    let listed = if args.mcp || !args.mcp_config.is_empty() {
        // The whole session, its MCP servers connected: their tools as a model gets them.
        match crate::session::Session::open(&listing).await {
            Ok(session) => {
                for notice in &session.notices {
                    eoutln!("toolwright: {notice}");
                }
                Ok(session.ctx.tools().to_vec())
            }
            Err(error) => Err(error),
        }
    } else {
        // The settings as a session reads them, without starting anything: their problems
        // are said as `run` says them.
        crate::session::session_builtin_tools(&listing).map(|(tools, notices)| {
            for notice in &notices {
                eoutln!("toolwright: {notice}");
            }
            tools
        })
    };
    let tools = match listed {
        Ok(tools) => tools,
        Err(error) => {
            eoutln!("toolwright: {error}");
            return ExitCode::from(2);
        }
    };
    let not_offered = |tool: &dyn Tool| {
        // An MCP tool is never one of the built-in tools left out.
        tool.mcp_info()
            .is_none()
            .then(|| crate::session::not_offered_because(tool.name(), &options))
            .flatten()
    };
    let (offered, left_out): (Vec<_>, Vec<_>) = tools
        .into_iter()
        .partition(|t| not_offered(t.as_ref()).is_none());
    // In `auto` mode tool search is on only past its threshold (counted on what a session
    // offers): below it, as off.
    let mut tools = toolwright::agent::tool_search::offered_in_env(offered);
    let searching = tools.iter().any(|t| t.name() == "ToolSearch");
    let left_out_names: Vec<&str> = left_out.iter().map(|t| t.name()).collect();
    let left_out_note = left_out
        .first()
        .and_then(|t| not_offered(t.as_ref()))
        .map(|why| {
            format!(
                "{} {} listed but not offered by `agent`, `run` or `serve`: {why}.",
                left_out_names.join(", "),
                if left_out_names.len() == 1 {
                    "is"
                } else {
                    "are"
                }
            )
        });
    tools.extend(left_out.iter().cloned());
    if args.json {
        let list: Vec<Value> = tools
            .iter()
            .map(|t| describe(t.as_ref(), args.schemas, searching, not_offered(t.as_ref())))
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&list).unwrap_or_default()
        );
        return ExitCode::SUCCESS;
    }
    // The columns as wide as their longest entry: the table stays a table whatever the
    // names and gates (`AskUserQuestion`, `env:!TOOLWRIGHT_ENABLE_TASKS`).
    let rows: Vec<(String, &str, &str, String, String)> = tools
        .iter()
        .map(|tool| {
            let v = describe(tool.as_ref(), false, searching, not_offered(tool.as_ref()));
            // A flag that holds for the smallest input may still depend on the input
            // (Bash's `ls` is read-only, `rm` is not): `by input` only for a tool that can
            // answer both ways, `no` for one that never says yes.
            let flag = |key: &str| {
                if v[key] == true {
                    "yes"
                } else if depends_on_input(tool.as_ref(), key) {
                    "by input"
                } else {
                    "no"
                }
            };
            (
                tool.name().to_owned(),
                flag("read_only"),
                flag("concurrency_safe"),
                match v["mcp_server"].as_str() {
                    Some(server) => format!("mcp:{server}"),
                    None => v["gate"].as_str().unwrap_or("always").to_owned(),
                },
                // The first line: the table stays a table.
                format!(
                    "{}{}",
                    if v["offered"] == false {
                        "(not offered) "
                    } else {
                        ""
                    },
                    tool.description()
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .trim_start_matches(['-', ' '])
                ),
            )
        })
        .collect();
    let name_w = rows.iter().map(|r| r.0.len()).chain([4]).max().unwrap_or(4);
    let gate_w = rows.iter().map(|r| r.3.len()).chain([4]).max().unwrap_or(4);
    outln!(
        "{:<name_w$}  {:<9}  {:<9}  {:<gate_w$}  description",
        "tool",
        "read-only",
        "parallel",
        "gate"
    );
    for (tool, (name, read_only, parallel, gate, description)) in tools.iter().zip(&rows) {
        outln!("{name:<name_w$}  {read_only:<9}  {parallel:<9}  {gate:<gate_w$}  {description}");
        if args.schemas {
            outln!(
                "{}",
                serde_json::to_string_pretty(&tool.input_schema()).unwrap_or_default()
            );
        }
    }
    // Said beside the table, as the notices are: the table's lines stay rows.
    if let Some(note) = left_out_note {
        eoutln!("toolwright: {note}");
    }
    ExitCode::SUCCESS
}
