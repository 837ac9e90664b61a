//! Tool names the model sees: `mcp__<server>__<tool>`, Claude Code's normalisation, and a
//! deterministic rule for names over the API's 64-character limit.

/// The Anthropic API's limit on tool-name length.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Length of the hash suffix of a shortened name (`_` + 8 hex digits).
const HASH_SUFFIX_LEN: usize = 9;

pub use tool_core::normalize_mcp_name as normalize_name_for_mcp;

/// The full model-facing name of `tool` on `server`: `mcp__<norm(server)>__<norm(tool)>`,
/// shortened when longer than [`MAX_TOOL_NAME_LEN`].
///
/// Shortening keeps the `mcp__<server>__` prefix (so server-level permission rules still
/// match) and as much of the tool name as fits, then appends `_` and 8 hex digits of a
/// hash of the full name, so the result is stable across runs and distinct names stay
/// distinct. A server name so long that the prefix leaves no room is cut to 23 characters.
/// The original names are kept in [`McpToolInfo`](tool_core::McpToolInfo) for the call.
pub fn mcp_tool_name(server: &str, tool: &str) -> String {
    let server = normalize_name_for_mcp(server);
    let tool = normalize_name_for_mcp(tool);
    let full = format!("mcp__{server}__{tool}");
    if full.len() <= MAX_TOOL_NAME_LEN {
        return full;
    }
    let hash = format!("{:08x}", fnv1a64(full.as_bytes()) as u32);
    // All characters are ASCII after normalisation, so byte slicing is safe.
    let mut prefix = format!("mcp__{server}__");
    if prefix.len() + 1 + HASH_SUFFIX_LEN > MAX_TOOL_NAME_LEN {
        prefix = format!("mcp__{}__", &server[..23]);
    }
    let room = MAX_TOOL_NAME_LEN - HASH_SUFFIX_LEN - prefix.len();
    let keep = &tool[..room.min(tool.len())];
    format!("{prefix}{keep}_{hash}")
}

/// The server-level prefix of every tool of `server`: `mcp__<norm(server)>__`.
pub fn mcp_prefix(server: &str) -> String {
    format!("mcp__{}__", normalize_name_for_mcp(server))
}

/// Splits a model-facing name into (server, tool) the way Claude Code does: on `__`, part 0
/// must be `mcp`, part 1 is the server, the rest (re-joined with `__`) is the tool. Returns
/// `None` for other names. The parts are the *normalised* names.
pub fn parse_mcp_tool_name(name: &str) -> Option<(String, Option<String>)> {
    let mut parts = name.split("__");
    if parts.next()? != "mcp" {
        return None;
    }
    let server = parts.next()?.to_owned();
    if server.is_empty() {
        return None;
    }
    let rest: Vec<&str> = parts.collect();
    let tool = if rest.is_empty() {
        None
    } else {
        Some(rest.join("__"))
    };
    Some((server, tool))
}

/// 64-bit FNV-1a: tiny, deterministic across platforms and releases.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_like_claude_code() {
        assert_eq!(normalize_name_for_mcp("my server.v2"), "my_server_v2");
        assert_eq!(normalize_name_for_mcp("get-sum"), "get-sum");
        // One `_` per UTF-16 unit, as JavaScript's replace does: é is one, 🔍 two.
        assert_eq!(normalize_name_for_mcp("café"), "caf_");
        assert_eq!(normalize_name_for_mcp("🔍search"), "__search");
        assert_eq!(
            normalize_name_for_mcp("claude.ai  Gmail!"),
            "claude_ai_Gmail"
        );
        assert_eq!(
            mcp_tool_name("everything", "get-sum"),
            "mcp__everything__get-sum"
        );
    }

    #[test]
    fn long_names_are_shortened_deterministically() {
        let long = "t".repeat(200);
        let a = mcp_tool_name("srv", &long);
        assert_eq!(a.len(), MAX_TOOL_NAME_LEN);
        assert!(a.starts_with("mcp__srv__ttt"));
        assert_eq!(a, mcp_tool_name("srv", &long));
        let other = format!("{long}x");
        assert_ne!(a, mcp_tool_name("srv", &other));
        let huge_server = mcp_tool_name(&"s".repeat(100), "tool");
        assert_eq!(huge_server.len(), 5 + 23 + 2 + 4 + 9);
        assert!(huge_server.starts_with(&format!("mcp__{}__tool_", "s".repeat(23))));
        assert_eq!(parse_mcp_tool_name(&a).map(|p| p.0), Some("srv".into()));
    }

    #[test]
    fn parses_names() {
        assert_eq!(
            parse_mcp_tool_name("mcp__github__create__issue"),
            Some(("github".into(), Some("create__issue".into())))
        );
        assert_eq!(
            parse_mcp_tool_name("mcp__github"),
            Some(("github".into(), None))
        );
        assert_eq!(parse_mcp_tool_name("Read"), None);
    }
}
