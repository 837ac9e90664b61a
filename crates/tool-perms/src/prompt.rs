//! The host-supplied [`Prompter`] that answers an `ask`, and how its answer changes the
//! engine's rules.

use serde_json::Value;
use tool_core::{
    DecisionReason, PermissionResult, PermissionUpdate, RuleBehavior, RuleSource, RuleValue, Tool,
    ToolUseContext,
};

use crate::engine::{PermissionEngine, RuleDiagnostic};

/// What the model sees when the user rejects a call.
pub const REJECT_MESSAGE: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

/// The start of the rejection text when the user said how to proceed.
pub const REJECT_WITH_FEEDBACK_PREFIX: &str = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n";

/// What the prompter is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptRequest {
    /// The tool's name.
    pub tool_name: String,
    /// The input the call would run with.
    pub input: Value,
    /// Why a person is asked.
    pub message: String,
    /// Why, as data.
    pub reason: Option<DecisionReason>,
    /// Updates the user might choose instead (from the decision).
    pub suggestions: Vec<PermissionUpdate>,
    /// The session rules "don't ask again" would add (for a compound shell command: one
    /// `program subcommand:*` prefix per subcommand that asked, at most 5).
    pub dont_ask_again: Vec<RuleValue>,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptAnswer {
    /// Run this once.
    AllowOnce {
        /// The input to run with instead, if the user changed it.
        updated_input: Option<Value>,
    },
    /// Run, and don't ask again: `updates` are applied to the engine; when empty, the
    /// request's `dont_ask_again` rules are added as session allow rules.
    AllowAlways {
        /// The input to run with instead, if changed.
        updated_input: Option<Value>,
        /// Rule updates chosen by the user.
        updates: Vec<PermissionUpdate>,
    },
    /// Don't run: the user said no.
    Deny {
        /// What the user said about how to proceed, if anything.
        feedback: Option<String>,
    },
    /// Don't run, and no person said so: the prompter refused without putting the question
    /// to anyone (there is no one to ask, what it would ask about cannot be shown whole, the
    /// question could not be sent, an answer cannot be taken), or before the answer came (a
    /// client answers in a later request). The refusal is the configuration's, not a
    /// user's rejection: a host reports it as such (Toolwright's pipeline: decision source
    /// `config`) and does not stop the turn as a user's "no" does.
    Unanswered {
        /// What the model is told; `None` for a plain "no one answered" (a host that
        /// rewrites the refusal gives none).
        message: Option<String>,
    },
}

impl PromptAnswer {
    /// What the model is told when this answer refuses the call to `tool_name` (`None` when
    /// it allows it): Claude Code's rejection text, with what the user said when they said
    /// something; for a refusal no one answered, the prompter's message or a plain "no one
    /// answered".
    #[must_use]
    pub fn refusal_message(&self, tool_name: &str) -> Option<String> {
        match self {
            Self::AllowOnce { .. } | Self::AllowAlways { .. } => None,
            Self::Deny { feedback } => Some(
                match feedback.as_deref().filter(|f| !f.trim().is_empty()) {
                    Some(f) => format!("{REJECT_WITH_FEEDBACK_PREFIX}{f}"),
                    None => REJECT_MESSAGE.to_owned(),
                },
            ),
            Self::Unanswered { message } => Some(message.clone().unwrap_or_else(|| {
                format!(
                    "Permission to use {tool_name} requires approval, and no one answered the question. Do not retry this call."
                )
            })),
        }
    }
}

/// Asks a person (a terminal dialog, an IDE, a remote approver). Supplied by the host.
#[async_trait::async_trait]
pub trait Prompter: Send + Sync {
    /// Shows the request and waits for the answer.
    async fn prompt(&self, request: &PromptRequest) -> PromptAnswer;
}

impl PermissionEngine {
    /// Resolves an `Ask` through `prompter`: allow (once or always, adding session rules),
    /// or deny with Claude Code's rejection text. Results other than `Ask` are returned
    /// unchanged.
    pub async fn resolve_ask(
        &self,
        prompter: &dyn Prompter,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
        decision: PermissionResult,
    ) -> (PermissionResult, Vec<RuleDiagnostic>) {
        let PermissionResult::Ask {
            message,
            updated_input,
            suggestions,
            reason,
        } = decision
        else {
            return (decision, Vec::new());
        };
        let run_input = updated_input.clone().unwrap_or_else(|| input.clone());
        let request = PromptRequest {
            tool_name: tool.name().to_owned(),
            input: run_input,
            message,
            reason,
            suggestions,
            // Nothing to offer when no rule may be added.
            dont_ask_again: if self.managed_rules_only {
                Vec::new()
            } else {
                self.suggest_rules(tool, input, ctx)
            },
        };
        let mut diags = Vec::new();
        match prompter.prompt(&request).await {
            PromptAnswer::AllowOnce {
                updated_input: changed,
            } => {
                ctx.update_denials(|d| d.record_allow());
                (
                    PermissionResult::Allow {
                        updated_input: changed.or(updated_input),
                        reason: Some(DecisionReason::User { permanent: false }),
                    },
                    diags,
                )
            }
            PromptAnswer::AllowAlways {
                updated_input: changed,
                updates,
            } => {
                if updates.is_empty() {
                    diags.extend(self.add_rules(
                        RuleBehavior::Allow,
                        RuleSource::Session,
                        &request.dont_ask_again,
                    ));
                } else {
                    for u in &updates {
                        diags.extend(self.apply_update(u));
                    }
                }
                ctx.update_denials(|d| d.record_allow());
                (
                    PermissionResult::Allow {
                        updated_input: changed.or(updated_input),
                        reason: Some(DecisionReason::User {
                            permanent: !self.managed_rules_only,
                        }),
                    },
                    diags,
                )
            }
            refusal @ (PromptAnswer::Deny { .. } | PromptAnswer::Unanswered { .. }) => {
                let reason = if matches!(refusal, PromptAnswer::Deny { .. }) {
                    "the user decided"
                } else {
                    "no one answered the permission question"
                };
                (
                    PermissionResult::Deny {
                        message: refusal.refusal_message(tool.name()).unwrap_or_default(),
                        reason: DecisionReason::Other {
                            reason: reason.into(),
                        },
                    },
                    diags,
                )
            }
        }
    }

    /// [`decide`](Self::decide), then [`resolve_ask`](Self::resolve_ask) when a person must
    /// be asked.
    pub async fn decide_and_prompt(
        &self,
        prompter: &dyn Prompter,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> PermissionResult {
        let decision = self.decide(tool, input, ctx).await;
        self.resolve_ask(prompter, tool, input, ctx, decision)
            .await
            .0
    }
}
