//! Options of the connection manager: timeouts, limits and host hooks.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

/// Default server startup timeout (`MCP_TIMEOUT`): 30 s.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Default per-call timeout (`MCP_TOOL_TIMEOUT`): 100,000,000 ms (about 28 hours), as in
/// Claude Code.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_millis(100_000_000);
/// Default idle limit of a call to a stdio server (`CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT`):
/// 1,800,000 ms, as in Claude Code.
pub const DEFAULT_STDIO_IDLE_TIMEOUT: Duration = Duration::from_millis(1_800_000);
/// Default idle limit of a call to a network server: 300,000 ms, as in Claude Code.
pub const DEFAULT_NETWORK_IDLE_TIMEOUT: Duration = Duration::from_millis(300_000);
/// Default of [`McpOptions::http_silence_limit`]: 60 s, Claude Code's limit on one HTTP
/// request to an MCP server.
pub const DEFAULT_HTTP_SILENCE_LIMIT: Duration = Duration::from_secs(60);
/// Default output limit of one MCP result, in estimated tokens (`MAX_MCP_OUTPUT_TOKENS`).
pub const DEFAULT_MAX_OUTPUT_TOKENS: usize = 25_000;
/// Default of [`McpOptions::last_words_wait`]: only a pipe some other process keeps open
/// (a daemon the server started) makes an error wait this long.
pub const DEFAULT_LAST_WORDS_WAIT: Duration = Duration::from_millis(500);

/// Default size of the captured stderr of a stdio server (the newest bytes are kept).
pub const DEFAULT_STDERR_CAPACITY: usize = 64 * 1024;

/// Answers `elicitation/create` requests from servers. Without one, every elicitation is
/// declined (`{"action": "decline"}`) and the capability is not advertised.
#[async_trait]
pub trait ElicitationHandler: Send + Sync {
    /// `request` is the request's params as JSON (`message`, `requestedSchema` or `url`,
    /// ...). Returns the result as JSON: `{"action": "accept" | "decline" | "cancel",
    /// "content": {...}}`.
    async fn elicit(&self, server: &str, request: Value) -> Value;
}

/// Answers `sampling/createMessage` requests from servers. Without one, sampling requests
/// fail with a "not supported" error and the capability is not advertised.
#[async_trait]
pub trait SamplingHandler: Send + Sync {
    /// `request` is the request's params as JSON. Returns the `CreateMessageResult` JSON, or
    /// a message explaining why the request is refused.
    async fn create_message(&self, server: &str, request: Value) -> Result<Value, String>;
}

/// Called with a server's name after its tool list changed (a
/// `notifications/tools/list_changed` was handled, or the server reconnected). The host
/// fetches the new list with [`McpManager::tools`](crate::McpManager::tools) or the
/// [`RefreshTools`](tool_core::RefreshTools) hook.
pub type ToolsChangedHook = Arc<dyn Fn(&str) + Send + Sync>;

/// Options of [`McpManager::connect`](crate::McpManager::connect).
#[derive(Clone)]
pub struct McpOptions {
    /// The project root: `CLAUDE_PROJECT_DIR` in stdio servers' environment, their working
    /// directory, and the first root answered to `roots/list`.
    pub project_dir: PathBuf,
    /// The session's other working directories (`--add-dir`, the settings'
    /// `additionalDirectories`): answered to `roots/list` after the project root, as Claude
    /// Code does.
    pub additional_directories: Vec<PathBuf>,
    /// How long a server may take to start and answer `initialize` (`MCP_TIMEOUT`).
    pub startup_timeout: Duration,
    /// How long one `tools/call` may take (`MCP_TOOL_TIMEOUT`). A server's own `timeout`
    /// overrides it.
    pub tool_timeout: Duration,
    /// How long a call may go without a word from its server (a progress notification, or
    /// the answer) before it is cancelled (`CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT`); `None`: the
    /// defaults, [`DEFAULT_STDIO_IDLE_TIMEOUT`] and [`DEFAULT_NETWORK_IDLE_TIMEOUT`].
    pub tool_idle_timeout: Option<Duration>,
    /// How long an HTTP server may leave the pings sent during a call unanswered (counted from
    /// the sending of the first ping left without an answer) before the call fails and the
    /// connection counts as dead ([`DEFAULT_HTTP_SILENCE_LIMIT`]). A
    /// longer server `timeout`, or a longer [`tool_timeout`](Self::tool_timeout) other than
    /// [`DEFAULT_TOOL_TIMEOUT`] (an `MCP_TOOL_TIMEOUT` over 60 s), raises it, as either
    /// lifts Claude Code's 60 s limit on HTTP requests.
    pub http_silence_limit: Duration,
    /// Output limit of one result in estimated tokens (`MAX_MCP_OUTPUT_TOKENS`).
    pub max_output_tokens: usize,
    /// How many bytes of each stdio server's stderr are kept.
    pub stderr_capacity: usize,
    /// How long an error about a stdio server that failed waits for the rest of what it
    /// wrote to stderr as it died (its stdout can end first), for the error to show it.
    pub last_words_wait: Duration,
    /// Where ReadMcpResourceTool writes binary resources (default: the system temp dir).
    pub blob_dir: Option<PathBuf>,
    /// Host handler for elicitation requests.
    pub elicitation: Option<Arc<dyn ElicitationHandler>>,
    /// Host handler for sampling requests.
    pub sampling: Option<Arc<dyn SamplingHandler>>,
    /// Called when a server's tool list changed.
    pub on_tools_changed: Option<ToolsChangedHook>,
    /// How deep this process sits in a chain of MCP servers
    /// ([`MCP_DEPTH_VAR`](crate::MCP_DEPTH_VAR), read by [`from_env`](Self::from_env); 0 for
    /// [`new`](Self::new)). Every stdio server started gets one more in that variable, which
    /// its own `env` cannot change, so that a server that is itself a client of this crate
    /// (`toolwright serve`) loads no configured servers that would start it again
    /// ([`ConfigLoader::mcp_depth`](crate::ConfigLoader::mcp_depth)).
    pub mcp_depth: u32,
    /// What [`from_env`](Self::from_env) could not use, one sentence each (the variable, its
    /// value and the default used instead). [`McpManager::connect`](crate::McpManager::connect)
    /// returns them as warnings.
    pub env_warnings: Vec<String>,
}

impl fmt::Debug for McpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpOptions")
            .field("project_dir", &self.project_dir)
            .field("additional_directories", &self.additional_directories)
            .field("startup_timeout", &self.startup_timeout)
            .field("tool_timeout", &self.tool_timeout)
            .field("tool_idle_timeout", &self.tool_idle_timeout)
            .field("http_silence_limit", &self.http_silence_limit)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("stderr_capacity", &self.stderr_capacity)
            .field("last_words_wait", &self.last_words_wait)
            .field("blob_dir", &self.blob_dir)
            .field("elicitation", &self.elicitation.is_some())
            .field("sampling", &self.sampling.is_some())
            .field("on_tools_changed", &self.on_tools_changed.is_some())
            .field("mcp_depth", &self.mcp_depth)
            .field("env_warnings", &self.env_warnings)
            .finish()
    }
}

impl McpOptions {
    /// Defaults for a project at `project_dir`, ignoring the environment.
    pub fn new(project_dir: impl Into<PathBuf>) -> Self {
        Self {
            project_dir: project_dir.into(),
            additional_directories: Vec::new(),
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            tool_idle_timeout: None,
            http_silence_limit: DEFAULT_HTTP_SILENCE_LIMIT,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            stderr_capacity: DEFAULT_STDERR_CAPACITY,
            last_words_wait: DEFAULT_LAST_WORDS_WAIT,
            blob_dir: None,
            elicitation: None,
            sampling: None,
            on_tools_changed: None,
            mcp_depth: 0,
            env_warnings: Vec::new(),
        }
    }

    /// Defaults overridden by `MCP_TIMEOUT`, `MCP_TOOL_TIMEOUT`,
    /// `CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT` (milliseconds) and `MAX_MCP_OUTPUT_TOKENS` from the
    /// process environment, and [`mcp_depth`](Self::mcp_depth) from `TOOLWRIGHT_MCP_DEPTH`
    /// ([`crate::config::mcp_depth`]: 0 when unset or unreadable, without a warning). A value that is not a positive whole number (`abc`, `-1`, `0`,
    /// `1.5e3`) is not used: the default stays, and a sentence saying so goes to
    /// [`env_warnings`](Self::env_warnings). A whole number too large to hold (over
    /// `u64::MAX`) is taken as the largest, with a sentence saying so. An empty value counts
    /// as unset.
    pub fn from_env(project_dir: impl Into<PathBuf>) -> Self {
        Self::from_lookup(project_dir, &|name| std::env::var(name).ok())
    }

    /// As [`from_env`](Self::from_env), reading variables through `env`.
    pub fn from_lookup(
        project_dir: impl Into<PathBuf>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let mut opts = Self::new(project_dir);
        let mut warnings = Vec::new();
        // `unit` names what the number counts, `default` what is used instead.
        let mut num = |name: &str, unit: &str, default: &str| {
            let raw = env(name)?;
            let value = raw.trim();
            if value.is_empty() {
                return None;
            }
            match value.parse::<u64>() {
                Ok(n) if n > 0 => Some(n),
                // A whole number too large to hold asks for no limit in practice: the
                // largest is used, and said to be (it is no mistake of form).
                Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
                    warnings.push(format!(
                        "{name}={raw:?} is too large: the largest is {} {unit}, which is used",
                        u64::MAX
                    ));
                    Some(u64::MAX)
                }
                _ => {
                    warnings.push(format!(
                        "{name}={raw:?} is not a positive whole number of {unit}; {default}"
                    ));
                    None
                }
            }
        };
        let ms = |d: Duration| format!("the default, {} ms, is used", d.as_millis());
        if let Some(ms) = num("MCP_TIMEOUT", "milliseconds", &ms(DEFAULT_STARTUP_TIMEOUT)) {
            opts.startup_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = num(
            "MCP_TOOL_TIMEOUT",
            "milliseconds",
            &ms(DEFAULT_TOOL_TIMEOUT),
        ) {
            opts.tool_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = num(
            "CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT",
            "milliseconds",
            &format!(
                "the defaults, {} ms (stdio) and {} ms (HTTP), are used",
                DEFAULT_STDIO_IDLE_TIMEOUT.as_millis(),
                DEFAULT_NETWORK_IDLE_TIMEOUT.as_millis()
            ),
        ) {
            opts.tool_idle_timeout = Some(Duration::from_millis(ms));
        }
        if let Some(tokens) = num(
            "MAX_MCP_OUTPUT_TOKENS",
            "tokens",
            &format!("the default, {DEFAULT_MAX_OUTPUT_TOKENS}, is used"),
        ) {
            opts.max_output_tokens = usize::try_from(tokens).unwrap_or(usize::MAX);
        }
        opts.mcp_depth = crate::config::mcp_depth(env);
        opts.env_warnings = warnings;
        opts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_overrides_and_bad_values() {
        let env = |name: &str| {
            match name {
                "MCP_TIMEOUT" => Some("1500"),
                "MCP_TOOL_TIMEOUT" => Some(" 2000 "),
                "MAX_MCP_OUTPUT_TOKENS" => Some("5000"),
                _ => None,
            }
            .map(str::to_owned)
        };
        let o = McpOptions::from_lookup("/p", &env);
        assert_eq!(o.startup_timeout, Duration::from_millis(1500));
        assert_eq!(o.tool_timeout, Duration::from_secs(2));
        assert_eq!(o.max_output_tokens, 5000);
        assert_eq!(o.project_dir, PathBuf::from("/p"));

        assert!(o.env_warnings.is_empty(), "{:?}", o.env_warnings);

        // Unset or empty: the defaults stay, nothing to say.
        for unset in [None, Some(""), Some("  ")] {
            let o = McpOptions::from_lookup("/p", &|_| unset.map(str::to_owned));
            assert_eq!(o.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
            assert!(o.env_warnings.is_empty(), "{:?}", o.env_warnings);
        }
        // Unparsable, negative, zero, fractional or exponent: the defaults stay, and each
        // variable is reported with its value and the default used.
        for bad in ["abc", "-1", "0", "1.5e3", "1.5", "soon"] {
            let o = McpOptions::from_lookup("/p", &|_| Some(bad.to_owned()));
            assert_eq!(o.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
            assert_eq!(o.tool_timeout, DEFAULT_TOOL_TIMEOUT);
            assert_eq!(o.tool_idle_timeout, None);
            assert_eq!(o.max_output_tokens, DEFAULT_MAX_OUTPUT_TOKENS);
            assert_eq!(o.env_warnings.len(), 4, "{bad}: {:?}", o.env_warnings);
            let quoted = format!("{bad:?}");
            for (var, default) in [
                ("MCP_TIMEOUT=", "the default, 30000 ms, is used"),
                ("MCP_TOOL_TIMEOUT=", "the default, 100000000 ms, is used"),
                (
                    "CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT=",
                    "the defaults, 1800000 ms (stdio) and 300000 ms (HTTP), are used",
                ),
                ("MAX_MCP_OUTPUT_TOKENS=", "the default, 25000, is used"),
            ] {
                let w = o
                    .env_warnings
                    .iter()
                    .find(|w| w.starts_with(var))
                    .unwrap_or_else(|| panic!("{var} not reported: {:?}", o.env_warnings));
                assert!(w.contains(&quoted) && w.ends_with(default), "{w}");
            }
        }
        assert_eq!(DEFAULT_STARTUP_TIMEOUT, Duration::from_secs(30));
        assert_eq!(DEFAULT_MAX_OUTPUT_TOKENS, 25_000);
    }

    /// A whole number too large to hold (over 18446744073709551615) is said to be too large,
    /// not "not a positive whole number", and the largest is used, as the value asked for
    /// no limit in practice; one that fits is taken as it is.
    #[test]
    fn a_number_too_large_is_said_to_be_too_large_and_the_largest_is_used() {
        let o = McpOptions::from_lookup("/p", &|_| Some("99999999999999999999999".to_owned()));
        assert_eq!(o.startup_timeout, Duration::from_millis(u64::MAX));
        assert_eq!(o.tool_timeout, Duration::from_millis(u64::MAX));
        assert_eq!(o.tool_idle_timeout, Some(Duration::from_millis(u64::MAX)));
        assert_eq!(
            o.max_output_tokens,
            usize::try_from(u64::MAX).unwrap_or(usize::MAX)
        );
        assert_eq!(o.env_warnings.len(), 4, "{:?}", o.env_warnings);
        let w = o
            .env_warnings
            .iter()
            .find(|w| w.starts_with("MCP_TOOL_TIMEOUT="))
            .unwrap();
        assert_eq!(
            w,
            "MCP_TOOL_TIMEOUT=\"99999999999999999999999\" is too large: the largest is \
             18446744073709551615 milliseconds, which is used"
        );
        let w = o
            .env_warnings
            .iter()
            .find(|w| w.starts_with("MAX_MCP_OUTPUT_TOKENS="))
            .unwrap();
        assert!(
            w.ends_with("18446744073709551615 tokens, which is used"),
            "{w}"
        );
        for w in &o.env_warnings {
            assert!(!w.contains("not a positive whole number"), "{w}");
        }
        // The largest itself is no news.
        let o = McpOptions::from_lookup("/p", &|_| Some(u64::MAX.to_string()));
        assert!(o.env_warnings.is_empty(), "{:?}", o.env_warnings);
        assert_eq!(o.tool_timeout, Duration::from_millis(u64::MAX));
    }
}
