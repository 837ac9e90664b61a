//! Hook events a tool raises itself: Claude Code's TaskCreated (TaskCreate) and
//! TaskCompleted (TaskUpdate marking a task completed).
//!
//! Tools sit below the hooks crate, so they reach the hooks through this small seam in the
//! call's context: [`ToolUseContext::hook_events`]. The pipeline (tool-exec) puts one in the
//! context of every call it runs, over the hooks it runs for the call itself; a context
//! without one runs no hooks ([`ToolUseContext::run_hook_event`] then answers with an empty
//! [`HookEventOutcome`]), as a tool called outside a pipeline.

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::context::ToolUseContext;
use crate::result::Message;

/// Runs the hooks of an event a tool raises (see the [module docs](self)).
#[async_trait]
pub trait HookEvents: Send + Sync {
    /// Runs the hooks configured for `event` (`TaskCreated`, `TaskCompleted`) with
    /// `fields` added to the common input fields (`session_id`, `transcript_path`, `cwd`,
    /// `hook_event_name`, `permission_mode`, ...), under `ctx`'s cancellation, and folds
    /// their answers into one outcome.
    async fn run(
        &self,
        event: &'static str,
        fields: Map<String, Value>,
        ctx: &ToolUseContext,
    ) -> HookEventOutcome;
}

/// What the hooks of one tool-raised event answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookEventOutcome {
    /// Blocking answers, each as the hook gave it: exit code 2 as `[COMMAND]: STDERR`, a
    /// JSON `decision: "block"` as its reason, `continue: false` as its `stopReason`. Any
    /// blocking answer means the tool does not do what the event announces (TaskCreated:
    /// the task is not created; TaskCompleted: it is not marked completed) and tells the
    /// model these texts.
    pub blocking: Vec<String>,
    /// What else the hooks said, for after the tool's result when it goes on:
    /// `systemMessage`s and non-blocking errors for the user, `additionalContext` for the
    /// model.
    pub messages: Vec<Message>,
    /// The hooks were cancelled (the call's token fired): they decided nothing, and their
    /// processes were killed.
    pub cancelled: bool,
}

impl HookEventOutcome {
    /// Whether a hook blocked.
    pub fn is_blocked(&self) -> bool {
        !self.blocking.is_empty()
    }
}
