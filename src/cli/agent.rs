//! `toolwright agent "<prompt>"`: runs the agent loop on the Anthropic Messages API in the
//! current directory, with the directory's settings (hooks, permission rules).

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use crate::agent::{self, ModelConfig};
use crate::session::{Session, SessionArgs};

/// Arguments of `toolwright agent`.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// What to ask the model.
    pub prompt: String,
    #[command(flatten)]
    pub session: SessionArgs,
    /// The model.
    #[arg(long, default_value = "claude-sonnet-4-5")]
    pub model: String,
    /// At most this many model requests.
    #[arg(long, default_value_t = 20)]
    pub max_turns: usize,
    /// Stop when the estimated spend reaches this many US dollars.
    #[arg(long)]
    pub max_budget_usd: Option<f64>,
    /// Print the whole conversation as JSON at the end.
    #[arg(long)]
    pub json: bool,
}

/// Asks whether to trust the folder when stdin and stderr are a terminal and the folder is not
/// trusted yet; a yes is recorded. `None` when nobody can be asked or nothing needs asking.
fn ask_trust_if_interactive(cwd: &std::path::Path) -> Option<bool> {
    use std::io::IsTerminal as _;
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return None;
    }
    let dir = std::fs::canonicalize(cwd).ok()?;
    if crate::trust::is_trusted(&dir) {
        return None;
    }
    eprint!(
        "Do you trust the files in {}?\nIts own settings can allow commands, run hooks and start MCP servers. \
         Trust it [y/N]? ",
        dir.display()
    );
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).ok()?;
    let yes = matches!(line.trim(), "y" | "Y" | "yes" | "Yes");
    if yes && let Err(e) = crate::trust::set_trusted(&dir, true) {
        eprintln!("toolwright agent: {e}");
    }
    Some(yes)
}

/// Runs `toolwright agent`.
pub async fn run(args: &AgentArgs) -> ExitCode {
    let Some(api_key) = std::env::var("ANTHROPIC_API_KEY")
        .ok()
        .filter(|k| !k.trim().is_empty())
    else {
        eprintln!(
            "toolwright agent: ANTHROPIC_API_KEY is not set (try `toolwright demo` for a run without a model)"
        );
        return ExitCode::from(2);
    };
    let config = ModelConfig {
        base_url: std::env::var("ANTHROPIC_BASE_URL")
            .unwrap_or_else(|_| "https://api.anthropic.com".to_owned()),
        api_key,
        model: args.model.clone(),
        max_tokens: 8192,
        max_turns: args.max_turns,
        max_budget_usd: args.max_budget_usd,
        attempts: 4,
        backoff: Duration::from_millis(500),
    };
    let mut options = args.session.options(false);
    // In a terminal, an untrusted folder is asked about once, before the first turn.
    if let Some(answer) = ask_trust_if_interactive(&options.cwd) {
        options.trusted = Some(answer);
    }
    let session = match Session::open(&options).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("toolwright agent: {e}");
            return ExitCode::from(2);
        }
    };
    for notice in &session.notices {
        eprintln!("toolwright: {notice}");
    }
    let json = args.json;
    let result = agent::run(
        &session,
        &config,
        &args.prompt,
        |text| {
            if !json {
                print!("{text}");
                let _ = std::io::stdout().flush();
            }
        },
        |tool_use, outcome| {
            if !json {
                let mark = if outcome.result.is_error {
                    "✗"
                } else {
                    "✓"
                };
                println!("\n{mark} {}", tool_use.describe());
            }
        },
    )
    .await;
    match result {
        Ok(outcome) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"messages": outcome.messages, "stop": outcome.stop, "turns": outcome.turns})
                );
            } else {
                println!(
                    "\n[{}; {} request(s), {} input / {} output tokens]",
                    outcome.stop, outcome.turns, outcome.usage.0, outcome.usage.1
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("\ntoolwright agent: {e}");
            ExitCode::from(1)
        }
    }
}
