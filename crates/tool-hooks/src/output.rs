//! The JSON a hook prints on stdout (Claude Code's `SyncHookJSONOutput`), as typed structs.
//! In-process hooks return the same types.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tool_core::PermissionUpdate;

/// A hook's JSON output. Every field is optional; unknown top-level fields are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookOutput {
    /// `continue: false` stops the agent after this step (overrides decisions).
    #[serde(rename = "continue", default, skip_serializing_if = "Option::is_none")]
    pub continue_: Option<bool>,
    /// Shown to the user when `continue` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Accepted, no effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suppress_output: Option<bool>,
    /// A warning shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    /// Legacy/top-level decision: `block` (or `approve`, legacy allow on PreToolUse).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<TopLevelDecision>,
    /// The reason for `decision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Event-specific output; must name the event in `hookEventName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_specific_output: Option<HookSpecificOutput>,
    /// Terminal sequence to emit (accepted, not used by the tool layer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_sequence: Option<String>,
}

/// Top-level `decision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TopLevelDecision {
    /// Block (deny the call on PreToolUse; feedback on PostToolUse; keep going on Stop).
    Block,
    /// Legacy allow (PreToolUse).
    Approve,
}

/// A PreToolUse `permissionDecision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PermissionDecision {
    /// Skip the prompt (deny and ask rules still apply).
    Allow,
    /// Block the call.
    Deny,
    /// Force a prompt.
    Ask,
    /// Defer (`-p` mode, single call): the host decides what it means.
    Defer,
}

impl PermissionDecision {
    /// Precedence when several hooks decide: deny > defer > ask > allow.
    pub fn precedence(self) -> u8 {
        match self {
            Self::Deny => 4,
            Self::Defer => 3,
            Self::Ask => 2,
            Self::Allow => 1,
        }
    }

    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::Ask => "ask",
            Self::Defer => "defer",
        }
    }
}

/// A PermissionRequest hook's `decision` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "behavior", rename_all = "lowercase")]
pub enum PermissionRequestDecision {
    /// Approve the request.
    Allow {
        /// Input to run with instead.
        #[serde(
            rename = "updatedInput",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        updated_input: Option<Map<String, Value>>,
        /// Permission changes to apply (as if the user chose "always allow").
        #[serde(
            rename = "updatedPermissions",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        updated_permissions: Option<Vec<PermissionUpdate>>,
    },
    /// Refuse the request.
    Deny {
        /// The message for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// Also interrupt the agent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interrupt: Option<bool>,
    },
}

/// `hookSpecificOutput`: the union of the tool events' fields; fields for other events are
/// kept in `extra`. A hook's stdout is read for the event it ran for: a typed field that
/// belongs to another event (`decision` outside PermissionRequest, `permissionDecision`
/// outside PreToolUse, ...) lands in `extra` unread, whatever its value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecificOutput {
    /// Must equal the event the hook ran for.
    pub hook_event_name: String,
    /// PreToolUse decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_decision: Option<PermissionDecision>,
    /// PreToolUse reason (allow/ask: user; deny: model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_decision_reason: Option<String>,
    /// PreToolUse: replaces the whole tool input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Map<String, Value>>,
    /// Context for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
    /// PostToolUse: replaces the tool's output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_tool_output: Option<Value>,
    /// PostToolUse (MCP tools): replaces the tool's output.
    #[serde(
        rename = "updatedMCPToolOutput",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub updated_mcp_tool_output: Option<Value>,
    /// PermissionRequest decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<PermissionRequestDecision>,
    /// PermissionDenied: the model may retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<bool>,
    /// Fields of other events (`sessionTitle`, `initialUserMessage`, ...), unchanged.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl HookSpecificOutput {
    /// An empty output for `event`.
    pub fn for_event(event: &str) -> Self {
        Self {
            hook_event_name: event.to_owned(),
            ..Self::default()
        }
    }
}

/// The typed `hookSpecificOutput` fields of [`HookSpecificOutput`] and the events they
/// belong to (`None`: every event). On a hook of another event such a field is not read
/// as its type, so a value of another event's shape cannot invalidate the output.
const EVENT_FIELDS: &[(&str, Option<&[&str]>)] = &[
    ("permissionDecision", Some(&["PreToolUse"])),
    ("permissionDecisionReason", Some(&["PreToolUse"])),
    ("updatedInput", Some(&["PreToolUse"])),
    ("additionalContext", None),
    ("updatedToolOutput", Some(&["PostToolUse"])),
    ("updatedMCPToolOutput", Some(&["PostToolUse"])),
    ("decision", Some(&["PermissionRequest"])),
    ("retry", Some(&["PermissionDenied"])),
];

/// Parses the stdout JSON of a hook that ran for `event`, with an error that says what is
/// wrong. In `hookSpecificOutput`, a typed field that belongs to another event (a
/// PermissionRequest `decision` in a PreToolUse hook's output, say) is kept, as given, in
/// [`HookSpecificOutput::extra`] instead of being read as its type: it cannot make the
/// output invalid and throw away the hook's own decision. The hook's own fields are
/// checked as before (a wrongly typed one is a schema error).
pub(crate) fn parse_output(text: &str, event: &str) -> Result<HookOutput, OutputError> {
    // As `JSON.parse` reads it: half a surrogate pair (`"\ud83d"`, which Node's
    // `JSON.stringify` writes for a string cut in the middle of an emoji) is U+FFFD, not a
    // reason to read a deny as plain text.
    let mut value: Value = tool_core::parse_config_json(text).map_err(|e| {
        // JSON that `JSON.parse` reads (Claude Code's hook runner) and serde_json does not
        // (more than 128 levels deep): not plain text, a decision that cannot be read.
        if e.is_syntax() && e.to_string().starts_with("recursion limit exceeded") {
            OutputError::TooDeep(format!(
                "stdout JSON is nested deeper than 128 levels (arrays and objects), which this \
                 layer does not read ({e})"
            ))
        } else {
            OutputError::NotJson(format!("stdout is not valid JSON: {e}"))
        }
    })?;
    let Some(top) = value.as_object_mut() else {
        return Err(OutputError::Schema("stdout JSON is not an object".into()));
    };
    let mut foreign = Map::new();
    if let Some(Value::Object(hso)) = top.get_mut("hookSpecificOutput") {
        for (field, events) in EVENT_FIELDS {
            if events.is_some_and(|events| !events.contains(&event))
                && let Some(v) = hso.remove(*field)
            {
                foreign.insert((*field).to_owned(), v);
            }
        }
    }
    let mut out: HookOutput = serde_json::from_value(value).map_err(|e| {
        OutputError::Schema(format!(
            "stdout JSON does not match the hook output schema: {e}"
        ))
    })?;
    if let Some(hso) = &mut out.hook_specific_output {
        hso.extra.extend(foreign);
    }
    Ok(out)
}

/// Why stdout is not a hook output.
#[derive(Debug)]
pub(crate) enum OutputError {
    /// Not JSON at all: plain text, by Claude Code's rule.
    NotJson(String),
    /// JSON, but not the hook output schema: an error.
    Schema(String),
    /// JSON nested deeper than serde_json reads, which `JSON.parse` reads: a decision it
    /// holds cannot be read. A guard's refuses the call; elsewhere it is read as plain text.
    TooDeep(String),
}

impl OutputError {
    #[cfg(test)]
    fn message(&self) -> &str {
        match self {
            Self::NotJson(m) | Self::Schema(m) | Self::TooDeep(m) => m,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let out = parse_output(
            r#"{"continue": true, "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no", "sessionTitle": "x"}}"#,
            "PreToolUse",
        )
        .unwrap();
        let hso = out.hook_specific_output.unwrap();
        assert_eq!(hso.permission_decision, Some(PermissionDecision::Deny));
        assert_eq!(
            hso.extra.get("sessionTitle"),
            Some(&Value::String("x".into()))
        );
        assert!(
            parse_output(r#"{"continue": "no"}"#, "PreToolUse")
                .unwrap_err()
                .message()
                .contains("boolean")
        );
        assert!(
            parse_output(r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "maybe"}}"#, "PreToolUse")
                .unwrap_err()
                .message()
                .contains("maybe")
        );
        assert!(matches!(
            parse_output("{not json", "PreToolUse"),
            Err(OutputError::NotJson(_))
        ));
        let pr = parse_output(
            r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow", "updatedPermissions": [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]}}}"#,
            "PermissionRequest",
        )
        .unwrap();
        assert!(matches!(
            pr.hook_specific_output.unwrap().decision,
            Some(PermissionRequestDecision::Allow { updated_permissions: Some(ref p), .. }) if p.len() == 1
        ));
    }

    /// A field of another event, in a shape our one struct cannot take for it (a
    /// `decision: "block"`, which the struct reads as PermissionRequest's object), does not
    /// make the output invalid: the hook's own deny holds (it was a schema error, and the
    /// deny was lost: the hook failed open). A wrongly typed field of the hook's own event
    /// is still an error.
    #[test]
    fn other_events_fields_do_not_invalidate_the_output() {
        let out = parse_output(
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no","decision":"block","retry":"soon"}}"#,
            "PreToolUse",
        )
        .unwrap();
        let hso = out.hook_specific_output.unwrap();
        assert_eq!(hso.permission_decision, Some(PermissionDecision::Deny));
        assert_eq!(hso.permission_decision_reason.as_deref(), Some("no"));
        assert_eq!(hso.decision, None);
        assert_eq!(hso.extra.get("decision"), Some(&Value::from("block")));
        assert_eq!(hso.extra.get("retry"), Some(&Value::from("soon")));
        // PostToolUse: PreToolUse's fields, whatever their type, are not read.
        let post = parse_output(
            r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"c","permissionDecision":"maybe","updatedInput":"x"}}"#,
            "PostToolUse",
        )
        .unwrap()
        .hook_specific_output
        .unwrap();
        assert_eq!(post.additional_context.as_deref(), Some("c"));
        assert_eq!(post.permission_decision, None);
        assert_eq!(
            post.extra.get("permissionDecision"),
            Some(&Value::from("maybe"))
        );
        // The event's own fields are still checked.
        let own = parse_output(
            r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":"block"}}"#,
            "PermissionRequest",
        );
        assert!(matches!(own, Err(OutputError::Schema(_))), "{own:?}");
        let own = parse_output(
            r#"{"hookSpecificOutput":{"hookEventName":"PermissionDenied","retry":"soon"}}"#,
            "PermissionDenied",
        );
        assert!(matches!(own, Err(OutputError::Schema(_))), "{own:?}");
        // additionalContext belongs to every event.
        let any = parse_output(
            r#"{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":5}}"#,
            "Stop",
        );
        assert!(matches!(any, Err(OutputError::Schema(_))), "{any:?}");
    }
}
