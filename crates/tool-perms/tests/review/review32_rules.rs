//! Claude Code's `Tool(param:value)` deny and ask rules on MCP tools, as the 32nd review
//! found them: `mcp__github__create_issue(repo:secret-*)` in a deny list did nothing (a
//! warning said MCP tools were matched by name only), so the call it was meant to stop ran.
//! Checked through the engine's public API (`decide`, `check_rule_based`, the settings
//! loader) with a tool shaped as tools-mcp's `McpTool` is: an `mcp__<server>__<tool>` name,
//! its MCP information, no permission subject and no check of its own.

use std::borrow::Cow;

use crate::common::{Fixture, behavior, case, context, messages, sources, write};
use serde_json::{Value, json};
use tool_core::{
    MaxResultSize, McpToolInfo, PermissionResult, ProgressSender, Tool, ToolError, ToolResult,
    ToolUseContext,
};
use tool_perms::settings::load_permissions;

/// A tool as tools-mcp builds one for a server's tool: named `name`, from server `server`
/// whose own name for it is `remote`. It never runs.
#[derive(Debug)]
struct McpLike {
    name: String,
    server: String,
    remote: String,
}

impl McpLike {
    fn new(server: &str, remote: &str) -> Self {
        Self {
            name: format!("mcp__{server}__{remote}"),
            server: server.to_owned(),
            remote: remote.to_owned(),
        }
    }
}

#[async_trait::async_trait]
impl Tool for McpLike {
    fn name(&self) -> &str {
        &self.name
    }

    fn mcp_info(&self) -> Option<McpToolInfo> {
        Some(McpToolInfo {
            server_name: self.server.clone(),
            tool_name: self.remote.clone(),
            source: Some("project".into()),
        })
    }

    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn description(&self) -> Cow<'_, str> {
        "an MCP tool stand-in".into()
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100)
    }

    async fn call(
        &self,
        _input: Value,
        _ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        Err(ToolError::Message("not run in these tests".into()))
    }
}

/// What an engine with `deny`, `ask` and `allow` decides in `mode` for `tool` called with
/// `input`, and the engine's diagnostics about the rules.
async fn decide(
    tool: &McpLike,
    input: Value,
    mode: &'static str,
    deny: &[&str],
    ask: &[&str],
    allow: &[&str],
) -> (PermissionResult, Vec<String>) {
    let fx = Fixture::new();
    let c = case("", "mcp", "")
        .mode(mode)
        .deny(deny)
        .ask(ask)
        .allow(allow);
    let (engine, ctx) = context(&fx, &c);
    let said = engine
        .diagnostics()
        .iter()
        .map(ToString::to_string)
        .collect();
    (engine.decide(tool, &input, &ctx).await, said)
}

fn message(r: &PermissionResult) -> String {
    match r {
        PermissionResult::Deny { message, .. } | PermissionResult::Ask { message, .. } => {
            message.clone()
        }
        other => format!("{other:?}"),
    }
}

/// Found by review: a deny rule `mcp__srv__tool(repo:secret-*)` did nothing (the engine
/// warned that MCP tools are matched by name only), so a call with `repo: "secret-x"` was
/// asked about, and allowed in bypass mode or under an allow rule. It now denies the calls
/// whose top-level `repo` matches, in every mode, and only those: another value, or no
/// `repo`, goes on as before. No warning says the rule does nothing.
#[tokio::test]
async fn a_field_deny_rule_denies_the_mcp_calls_it_names() {
    let tool = McpLike::new("srv", "tool");
    let deny = ["mcp__srv__tool(repo:secret-*)"];
    for mode in ["default", "acceptEdits", "bypassPermissions", "dontAsk"] {
        for allow in [&[][..], &["mcp__srv__tool"][..], &["mcp__srv"][..]] {
            let (got, said) =
                decide(&tool, json!({"repo": "secret-x"}), mode, &deny, &[], allow).await;
            assert_eq!(behavior(&got), "deny", "{mode} {allow:?}: {got:?}");
            assert!(
                message(&got).contains("repo: secret-x"),
                "{mode}: {}",
                message(&got)
            );
            assert!(said.is_empty(), "{said:?}");
        }
    }
    // Other values and a call without the field are not this rule's.
    for input in [
        json!({"repo": "public"}),
        json!({}),
        json!({"title": "secret-x"}),
        json!({"repo": ["secret-x"]}),
        json!({"nested": {"repo": "secret-x"}}),
    ] {
        let (got, _) = decide(&tool, input.clone(), "default", &deny, &[], &[]).await;
        assert_eq!(behavior(&got), "ask", "{input}: {got:?}");
        let (got, _) = decide(&tool, input.clone(), "bypassPermissions", &deny, &[], &[]).await;
        assert_eq!(behavior(&got), "allow", "{input}: {got:?}");
        let (got, _) = decide(
            &tool,
            input.clone(),
            "default",
            &deny,
            &[],
            &["mcp__srv__tool"],
        )
        .await;
        assert_eq!(behavior(&got), "allow", "{input}: {got:?}");
    }
    // Another tool of the server is not named by the rule.
    let (got, _) = decide(
        &McpLike::new("srv", "other"),
        json!({"repo": "secret-x"}),
        "bypassPermissions",
        &deny,
        &[],
        &[],
    )
    .await;
    assert_eq!(behavior(&got), "allow", "{got:?}");
}

/// Numbers and booleans are matched by their JSON text, as on the built-in tools; `*`
/// stands for any characters and without it the match is exact.
#[tokio::test]
async fn scalar_fields_are_matched_by_their_text() {
    let tool = McpLike::new("db", "query");
    let deny = [
        "mcp__db__query(limit:1000)",
        "mcp__db__query(force:true)",
        "mcp__db__query(table:*)",
    ];
    for (input, expect) in [
        (json!({"limit": 1000}), "deny"),
        (json!({"limit": "1000"}), "deny"),
        (json!({"limit": 100}), "allow"),
        (json!({"force": true}), "deny"),
        (json!({"force": false}), "allow"),
        (json!({"table": ""}), "deny"),
        (json!({"table": "users"}), "deny"),
        (json!({"table": null}), "allow"),
        (json!({"sql": "select 1"}), "allow"),
    ] {
        let (got, said) = decide(&tool, input.clone(), "bypassPermissions", &deny, &[], &[]).await;
        assert_eq!(behavior(&got), expect, "{input}: {got:?}");
        assert!(said.is_empty(), "{said:?}");
    }
}

/// An ask rule of that form asks about the calls it names, even under an allow rule and
/// in bypass mode (as an ask rule does), and lets the others through.
#[tokio::test]
async fn a_field_ask_rule_asks_about_the_mcp_calls_it_names() {
    let tool = McpLike::new("srv", "tool");
    let ask = ["mcp__srv__tool(repo:secret-*)"];
    for (mode, allow) in [
        ("default", &["mcp__srv__tool"][..]),
        ("bypassPermissions", &[][..]),
    ] {
        let (got, said) = decide(&tool, json!({"repo": "secret-x"}), mode, &[], &ask, allow).await;
        assert_eq!(behavior(&got), "ask", "{mode}: {got:?}");
        assert!(said.is_empty(), "{said:?}");
        let (got, _) = decide(&tool, json!({"repo": "public"}), mode, &[], &ask, allow).await;
        assert_eq!(behavior(&got), "allow", "{mode}: {got:?}");
        let (got, _) = decide(&tool, json!({}), mode, &[], &ask, allow).await;
        assert_eq!(behavior(&got), "allow", "{mode}: {got:?}");
    }
    // In dontAsk mode an ask is a refusal.
    let (got, _) = decide(
        &tool,
        json!({"repo": "secret-x"}),
        "dontAsk",
        &[],
        &ask,
        &["mcp__srv__tool"],
    )
    .await;
    assert_eq!(behavior(&got), "deny", "{got:?}");
}

/// After a hook's allow the pipeline asks `check_rule_based`, which must still apply the
/// field deny and ask rules of an MCP tool.
#[tokio::test]
async fn a_hooks_allow_does_not_pass_a_field_rule() {
    let fx = Fixture::new();
    let tool = McpLike::new("srv", "tool");
    let c = case("", "mcp", "")
        .deny(&["mcp__srv__tool(repo:secret-*)"])
        .ask(&["mcp__srv__tool(title:*)"]);
    let (engine, ctx) = context(&fx, &c);
    let got = engine
        .check_rule_based(&tool, &json!({"repo": "secret-1"}), &ctx)
        .await;
    assert_eq!(got.as_ref().map(behavior), Some("deny"), "{got:?}");
    // The same deny without waiting (what a listing built on the spot uses).
    assert_eq!(
        engine.rule_denial(&tool, &json!({"repo": "secret-1"}), &ctx),
        got
    );
    let got = engine
        .check_rule_based(&tool, &json!({"title": "t"}), &ctx)
        .await;
    assert_eq!(got.as_ref().map(behavior), Some("ask"), "{got:?}");
    assert_eq!(
        engine.rule_denial(&tool, &json!({"title": "t"}), &ctx),
        None
    );
    let got = engine
        .check_rule_based(&tool, &json!({"repo": "public"}), &ctx)
        .await;
    assert!(got.is_none(), "{got:?}");
}

/// A tool whose full name is too long for the API goes by a shortened one; a field rule
/// naming it in full (as Claude Code's rules do) still holds, as a rule on the whole tool
/// does. So does one on a tool of a server whose configured name is normalised.
#[tokio::test]
async fn a_field_rule_names_the_tool_as_its_server_does() {
    let long = "x".repeat(70);
    let tool = McpLike {
        name: "mcp__srv__xxxxxxxx_1a2b3c".into(),
        server: "srv".into(),
        remote: long.clone(),
    };
    let rule = format!("mcp__srv__{long}(repo:secret-*)");
    let (got, _) = decide(
        &tool,
        json!({"repo": "secret-x"}),
        "bypassPermissions",
        &[rule.as_str()],
        &[],
        &[],
    )
    .await;
    assert_eq!(behavior(&got), "deny", "{got:?}");
    let tool = McpLike {
        name: "mcp__my_srv__tool".into(),
        server: "my srv".into(),
        remote: "tool".into(),
    };
    let (got, _) = decide(
        &tool,
        json!({"repo": "secret-x"}),
        "bypassPermissions",
        &["mcp__my_srv__tool(repo:secret-*)"],
        &[],
        &[],
    )
    .await;
    assert_eq!(behavior(&got), "deny", "{got:?}");
}

/// An allow rule of that form stays ignored with a warning (Claude Code reads such rules
/// in deny and ask lists only): it allows nothing. Content that names no field
/// (`mcp__srv__tool(secret)`) is still said to do nothing.
#[tokio::test]
async fn allow_field_rules_and_contents_without_a_field_still_warn() {
    let tool = McpLike::new("srv", "tool");
    let (got, said) = decide(
        &tool,
        json!({"repo": "public"}),
        "default",
        &[],
        &[],
        &["mcp__srv__tool(repo:public)"],
    )
    .await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    assert!(
        said.len() == 1
            && said[0].contains("mcp__srv__tool(repo:public)")
            && said[0].contains("deny and ask rules only"),
        "{said:?}"
    );
    let (got, said) = decide(
        &tool,
        json!({"repo": "secret"}),
        "bypassPermissions",
        &["mcp__srv__tool(secret)"],
        &[],
        &[],
    )
    .await;
    assert_eq!(behavior(&got), "allow", "{got:?}");
    assert!(
        said.len() == 1 && said[0].contains("does nothing"),
        "{said:?}"
    );
}

/// From a settings file, and from an inline `--settings` value (where a deny rule that
/// does nothing is an error), the rule is taken without a word and denies.
#[tokio::test]
async fn a_field_deny_rule_from_settings_is_taken_and_holds() {
    let fx = Fixture::new();
    let settings = json!({"permissions": {
        "deny": ["mcp__github__create_issue(repo:secret-*)"],
        "allow": ["mcp__github"],
    }});
    write(&fx.proj.join(".claude/settings.json"), settings.to_string());
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    let ctx = ToolUseContext::new(&fx.proj)
        .with_home(Some(fx.home.clone()))
        .with_permission(loaded.context.clone());
    let tool = McpLike::new("github", "create_issue");
    let engine = loaded.engine();
    let got = engine
        .decide(&tool, &json!({"repo": "secret-plans", "title": "t"}), &ctx)
        .await;
    assert_eq!(behavior(&got), "deny", "{got:?}");
    let got = engine
        .decide(&tool, &json!({"repo": "docs", "title": "t"}), &ctx)
        .await;
    assert_eq!(behavior(&got), "allow", "{got:?}");

    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![
        json!({"permissions": {"deny": ["mcp__github__create_issue(repo:secret-*)"]}}).to_string(),
    ];
    let errors = load_permissions(&s).command_line_errors();
    assert!(errors.is_empty(), "{errors:?}");
}

/// Not changed (a guard): a server-wide or glob tool name with a field
/// (`mcp__srv__*(repo:x)`, `mcp__srv(repo:x)`), which Claude Code's documentation does not
/// describe, stays an error that says it is ignored, never a silent no-op.
#[tokio::test]
async fn server_wide_field_rules_stay_a_loud_error() {
    for rule in ["mcp__srv__*(repo:x)", "mcp__srv(repo:x)", "mcp__*(repo:x)"] {
        let fx = Fixture::new();
        let perm = tool_core::ToolPermissionContext {
            deny: vec![tool_core::SourcedRule {
                source: tool_core::RuleSource::ProjectSettings,
                rule: rule.to_owned(),
            }],
            ..Default::default()
        };
        let (_, diags) = tool_perms::PermissionEngine::new_lenient(
            &perm,
            tool_perms::PathRoots::for_cwd(&fx.proj),
        );
        assert!(
            diags.len() == 1 && diags[0].error && diags[0].reason.contains("ignored"),
            "{rule}: {diags:?}"
        );
    }
}

/// On an MCP tool every top-level field may be named, those that are primary on the
/// built-in tools (`path`, `url`, `command`) too: the MCP tool's rules have no content of
/// their own that would stand for them, so Claude Code's reason to ignore such a rule does
/// not hold, and a deny that did nothing would let the call through.
#[tokio::test]
async fn an_mcp_tools_path_and_url_fields_can_be_named() {
    let tool = McpLike::new("fs", "read_file");
    let deny = [
        "mcp__fs__read_file(path:/etc/*)",
        "mcp__fs__read_file(url:http://*)",
    ];
    for (input, expect) in [
        (json!({"path": "/etc/passwd"}), "deny"),
        (json!({"path": "/home/u/notes"}), "allow"),
        (json!({"url": "http://x"}), "deny"),
        (json!({"url": "https://x"}), "allow"),
    ] {
        let (got, said) = decide(&tool, input.clone(), "bypassPermissions", &deny, &[], &[]).await;
        assert_eq!(behavior(&got), expect, "{input}: {got:?}");
        assert!(said.is_empty(), "{said:?}");
    }
}

/// `mcp__a__b` in a deny rule names the tool `b` of server `a` and every tool of a server
/// whose normalised name is `a__b` (as the bare rule does); with a field, both still.
#[tokio::test]
async fn a_field_rule_keeps_the_names_reading_of_a_server_with_underscores() {
    let deny = ["mcp__gh__admin(repo:secret-*)"];
    let of_server = McpLike {
        name: "mcp__gh__admin__delete".into(),
        server: "gh__admin".into(),
        remote: "delete".into(),
    };
    for tool in [McpLike::new("gh", "admin"), of_server] {
        let (got, _) = decide(
            &tool,
            json!({"repo": "secret-x"}),
            "bypassPermissions",
            &deny,
            &[],
            &[],
        )
        .await;
        assert_eq!(behavior(&got), "deny", "{}: {got:?}", tool.name);
        let (got, _) = decide(
            &tool,
            json!({"repo": "x"}),
            "bypassPermissions",
            &deny,
            &[],
            &[],
        )
        .await;
        assert_eq!(behavior(&got), "allow", "{}: {got:?}", tool.name);
    }
}

/// The value is compared as written: `repo: secret-*` (a space after the colon) matches only
/// a value that starts with a space. The rule is kept as written, and a warning says so.
#[tokio::test]
async fn spaces_around_a_field_value_are_said() {
    let tool = McpLike::new("srv", "tool");
    let rule = "mcp__srv__tool(repo: secret-*)";
    let (got, said) = decide(
        &tool,
        json!({"repo": "secret-x"}),
        "bypassPermissions",
        &[rule],
        &[],
        &[],
    )
    .await;
    assert_eq!(behavior(&got), "allow", "{got:?}");
    assert!(
        said.len() == 1
            && said[0].contains(rule)
            && said[0].contains("spaces included")
            && said[0].contains("`mcp__srv__tool(repo:secret-*)`"),
        "{said:?}"
    );
    let (got, _) = decide(
        &tool,
        json!({"repo": " secret-x"}),
        "bypassPermissions",
        &[rule],
        &[],
        &[],
    )
    .await;
    assert_eq!(behavior(&got), "deny", "{got:?}");
}
