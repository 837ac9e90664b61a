//! AskUserQuestion: multiple-choice questions for the user (Claude Code's
//! `AskUserQuestionTool`).
//!
//! The model only asks; the answers arrive in the input's `answers` field (question text ->
//! chosen label, several labels joined with `, `), filled in by the host after showing the
//! questions, as Claude Code does through a PreToolUse hook's `updatedInput`. The tool
//! `requires_user_interaction` and its permission check asks, so a host always shows it.
//! Limits: 1-4 questions, 2-4 options each, headers of at most 12 characters, question texts
//! unique, option labels unique within a question.
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    MaxResultSize, PermissionResult, ProgressSender, ToolError, ToolResult, ToolResultContent,
    ToolUseContext, TypedTool, ValidationError, async_trait,
};

/// Most questions per call.
pub const MAX_QUESTIONS: usize = 4;
/// Fewest and most options per question.
pub const OPTIONS_RANGE: (usize, usize) = (2, 4);
/// Longest header, in characters.
pub const MAX_HEADER_CHARS: usize = 12;

/// One option of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionOption {
    /// The display text for this option (1-5 words)
    pub label: String,
    /// What this option means or what happens if chosen
    pub description: String,
    /// Optional preview content shown when the option is focused (code, a mock-up)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
}

/// One question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// The complete question to ask the user, ending with a question mark
    pub question: String,
    /// Very short label displayed as a chip/tag (max 12 chars)
    #[schemars(length(max = 12))]
    pub header: String,
    /// The available choices (2-4); an "Other" choice is added automatically
    #[schemars(length(min = 2, max = 4))]
    pub options: Vec<QuestionOption>,
    /// Allow the user to select multiple options
    #[serde(rename = "multiSelect", default)]
    pub multi_select: bool,
}

/// What the user added to an answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Annotation {
    /// The preview of the chosen option
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// Free-text notes from the user
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// Where the questions came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QuestionMetadata {
    /// Identifier of the source of the questions, for analytics
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// Input of the AskUserQuestion tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskUserQuestionInput {
    /// Questions to ask the user (1-4 questions)
    #[schemars(length(min = 1, max = 4))]
    pub questions: Vec<Question>,
    /// User answers collected by the permission component (question text -> label)
    pub answers: Option<HashMap<String, String>>,
    /// Optional per-question annotations from the user (question text -> preview, notes)
    pub annotations: Option<HashMap<String, Annotation>>,
    /// Optional metadata for tracking and analytics purposes. Not displayed to user.
    pub metadata: Option<QuestionMetadata>,
}

/// Output of the AskUserQuestion tool (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskUserQuestionOutput {
    /// The questions asked.
    pub questions: Vec<Question>,
    /// The answers, question text -> label(s).
    pub answers: HashMap<String, String>,
    /// The user's annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<HashMap<String, Annotation>>,
}

/// The AskUserQuestion tool. Requires the user's interaction.
#[derive(Debug, Clone, Copy, Default)]
pub struct AskUserQuestion;

/// Checks Claude Code's limits; the message says what to fix.
pub fn check_questions(questions: &[Question]) -> Result<(), String> {
    if questions.is_empty() || questions.len() > MAX_QUESTIONS {
        return Err(format!(
            "questions must contain 1 to {MAX_QUESTIONS} questions (got {})",
            questions.len()
        ));
    }
    let mut texts = HashSet::new();
    for q in questions {
        if !texts.insert(q.question.as_str()) {
            return Err(format!(
                "Question texts must be unique: \"{}\" appears more than once",
                q.question
            ));
        }
        let header_chars = q.header.chars().count();
        if header_chars > MAX_HEADER_CHARS {
            return Err(format!(
                "The header \"{}\" is {header_chars} characters long; the limit is {MAX_HEADER_CHARS}",
                q.header
            ));
        }
        let (min, max) = OPTIONS_RANGE;
        if q.options.len() < min || q.options.len() > max {
            return Err(format!(
                "The question \"{}\" has {} options; each question needs {min} to {max}",
                q.question,
                q.options.len()
            ));
        }
        let mut labels = HashSet::new();
        for o in &q.options {
            if !labels.insert(o.label.as_str()) {
                return Err(format!(
                    "Option labels must be unique within a question: \"{}\" appears more than once in \"{}\"",
                    o.label, q.question
                ));
            }
        }
    }
    Ok(())
}

#[async_trait]
impl TypedTool for AskUserQuestion {
    type Input = AskUserQuestionInput;
    type Output = AskUserQuestionOutput;
    const NAME: &'static str = "AskUserQuestion";

    fn description(&self) -> Cow<'_, str> {
        "Asks the user multiple choice questions to gather information, clarify ambiguity, understand preferences, make decisions or offer them choices.".into()
    }

    fn prompt(&self) -> Cow<'_, str> {
        "Use this tool when you need to ask the user questions during execution. This allows you to:\n\
1. Gather user preferences or requirements\n\
2. Clarify ambiguous instructions\n\
3. Get decisions on implementation choices as you work\n\
4. Offer choices to the user about what direction to take.\n\n\
Usage notes:\n\
- Users will always be able to select \"Other\" to provide custom text input\n\
- Use multiSelect: true to allow multiple answers to be selected for a question\n\
- If you recommend a specific option, make that the first option in the list and add \"(Recommended)\" at the end of the label"
            .into()
    }

    fn search_hint(&self) -> Option<&str> {
        Some("prompt the user with a multiple-choice question")
    }

    fn should_defer(&self) -> bool {
        true
    }

    fn requires_user_interaction(&self) -> bool {
        true
    }

    /// The answers and the notes on them are the user's: a model's `answers` and
    /// `annotations` are dropped before the call is looked at, so that neither a hook's bare
    /// approval nor a prompt that adds only the answers passes them off as the user's.
    fn user_supplied_fields(&self) -> &'static [&'static str] {
        &["answers", "annotations"]
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    fn is_concurrency_safe(&self, _input: &AskUserQuestionInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &AskUserQuestionInput) -> bool {
        true
    }

    async fn validate_input(
        &self,
        input: &AskUserQuestionInput,
        _ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        check_questions(&input.questions).map_err(ValidationError::new)
    }

    async fn check_permissions(
        &self,
        _input: &AskUserQuestionInput,
        _ctx: &ToolUseContext,
    ) -> PermissionResult {
        PermissionResult::ask("Answer questions?")
    }

    async fn call(
        &self,
        input: AskUserQuestionInput,
        _ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<AskUserQuestionOutput>, ToolError> {
        let Some(answers) = input.answers.filter(|a| !a.is_empty()) else {
            return Err(ToolError::msg(
                "The user did not answer: no answers were provided (the host collects them from the user and passes them in `answers`)",
            ));
        };
        Ok(ToolResult::new(AskUserQuestionOutput {
            questions: input.questions,
            answers,
            annotations: input.annotations,
        }))
    }

    fn to_content(&self, output: &AskUserQuestionOutput) -> ToolResultContent {
        // Questions in the order asked, then any other answered key in name order.
        let mut keys: Vec<&str> = output
            .questions
            .iter()
            .map(|q| q.question.as_str())
            .filter(|q| output.answers.contains_key(*q))
            .collect();
        let mut extra: Vec<&str> = output
            .answers
            .keys()
            .map(String::as_str)
            .filter(|k| !keys.contains(k))
            .collect();
        extra.sort_unstable();
        keys.extend(extra);
        let parts: Vec<String> = keys
            .iter()
            .map(|q| {
                let mut part = format!("\"{q}\"=\"{}\"", output.answers[*q]);
                if let Some(a) = output.annotations.as_ref().and_then(|a| a.get(*q)) {
                    if let Some(preview) = &a.preview {
                        part.push_str(&format!(" selected preview:\n{preview}"));
                    }
                    if let Some(notes) = &a.notes {
                        part.push_str(&format!(" user notes: {notes}"));
                    }
                }
                part
            })
            .collect();
        ToolResultContent::Text(format!(
            "User has answered your questions: {}. You can now continue with the user's answers in mind.",
            parts.join(", ")
        ))
    }
}
