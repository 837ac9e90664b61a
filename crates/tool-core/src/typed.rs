//! The typed layer: write an input struct, get a dyn [`Tool`].
//!
//! A tool author implements [`TypedTool`] with `Input: Deserialize + JsonSchema` (doc comments
//! become field descriptions) and `Output: Serialize + Deserialize` (deserialising is how a
//! hook's replacement output is checked against the tool's shape). The blanket implementation
//! `impl<T: TypedTool> Tool for T` generates and normalises the schema (once per type),
//! checks the model's input with [`check_input`] (the zod step), and
//! renders the output as tool_result content.

use std::any::TypeId;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use async_trait::async_trait;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::content::ToolResultContent;
use crate::context::ToolUseContext;
use crate::error::{ToolError, ValidationError};
use crate::input::{InputError, check_input};
use crate::permission::PermissionResult;
use crate::result::{ToolOutput, ToolResult};
use crate::schema::{normalize_schema, tidy_typed_schema};
use crate::tool::{
    InterruptBehavior, MaxResultSize, PermissionSubject, ProgressSender, SearchOrRead, Tool,
};

/// A tool with a Rust input type. See the [module docs](self) and the crate example.
///
/// Every method has the same meaning and fail-closed default as its [`Tool`] counterpart;
/// the input-taking ones receive the parsed `Input`.
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    /// The input; its JSON Schema is what the model sees.
    type Input: DeserializeOwned + JsonSchema + Send + Sync + 'static;
    /// The output; serialised, it is the structured `tool_response` hooks see. A PostToolUse
    /// hook's `updatedToolOutput` that deserialises to it replaces it (rendered with
    /// [`to_content`](Self::to_content)); one that does not is ignored.
    type Output: Serialize + DeserializeOwned + Send + 'static;

    /// The tool's name.
    const NAME: &'static str;
    /// Legacy names.
    const ALIASES: &'static [&'static str] = &[];
    /// Reject input keys the schema does not list (true for built-in tools, as Claude Code's
    /// strict objects).
    const DENY_UNKNOWN_FIELDS: bool = true;

    /// See [`Tool::description`].
    fn description(&self) -> Cow<'_, str>;
    /// See [`Tool::prompt`].
    fn prompt(&self) -> Cow<'_, str> {
        self.description()
    }
    /// See [`Tool::max_result_size`].
    fn max_result_size(&self) -> MaxResultSize;
    /// See [`Tool::search_hint`].
    fn search_hint(&self) -> Option<&str> {
        None
    }
    /// See [`Tool::is_enabled`].
    fn is_enabled(&self) -> bool {
        true
    }
    /// See [`Tool::should_defer`].
    fn should_defer(&self) -> bool {
        false
    }
    /// See [`Tool::always_load`].
    fn always_load(&self) -> bool {
        false
    }
    /// See [`Tool::interrupt_behavior`].
    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Block
    }
    /// See [`Tool::requires_user_interaction`].
    fn requires_user_interaction(&self) -> bool {
        false
    }
    /// See [`Tool::user_supplied_fields`].
    fn user_supplied_fields(&self) -> &'static [&'static str] {
        &[]
    }
    /// See [`Tool::user_facing_name`].
    fn user_facing_name(&self, _input: &Self::Input) -> String {
        Self::NAME.to_owned()
    }
    /// See [`Tool::is_concurrency_safe`].
    fn is_concurrency_safe(&self, _input: &Self::Input) -> bool {
        false
    }
    /// See [`Tool::is_read_only`].
    fn is_read_only(&self, _input: &Self::Input) -> bool {
        false
    }
    /// See [`Tool::is_destructive`].
    fn is_destructive(&self, _input: &Self::Input) -> bool {
        false
    }
    /// See [`Tool::is_open_world`].
    fn is_open_world(&self, _input: &Self::Input) -> bool {
        false
    }
    /// See [`Tool::is_search_or_read`].
    fn is_search_or_read(&self, _input: &Self::Input) -> SearchOrRead {
        SearchOrRead::default()
    }
    /// See [`Tool::permission_subject`].
    fn permission_subject(&self, _input: &Self::Input) -> Option<PermissionSubject> {
        None
    }
    /// See [`Tool::observable_input`] (on the raw input: only parsed input reaches it).
    fn observable_input(&self, _input: &Value, _ctx: &ToolUseContext) -> Option<Value> {
        None
    }
    /// See [`Tool::validate_input`].
    async fn validate_input(
        &self,
        _input: &Self::Input,
        _ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        Ok(())
    }
    /// See [`Tool::check_permissions`].
    async fn check_permissions(
        &self,
        _input: &Self::Input,
        _ctx: &ToolUseContext,
    ) -> PermissionResult {
        PermissionResult::passthrough()
    }
    /// Runs the call with a parsed input.
    async fn call(
        &self,
        input: Self::Input,
        ctx: ToolUseContext,
        progress: ProgressSender,
    ) -> Result<ToolResult<Self::Output>, ToolError>;

    /// Renders the output for the model. Default: a string output as text, anything else as
    /// compact JSON.
    fn to_content(&self, output: &Self::Output) -> ToolResultContent {
        match serde_json::to_value(output) {
            Ok(value) => ToolResultContent::from_json(&value),
            Err(e) => ToolResultContent::Text(format!("(output could not be rendered: {e})")),
        }
    }
}

/// The normalised input schema of `T`, generated once per type and cached.
pub fn schema_for<T: JsonSchema + 'static>(deny_unknown_fields: bool) -> Value {
    Value::clone(&cached_schema::<T>(deny_unknown_fields))
}

/// Normalised schemas by input type and strictness.
type SchemaCache = Mutex<HashMap<(TypeId, bool), Arc<Value>>>;

/// The cached schema itself, shared: the schema step reads it on every call without copying.
fn cached_schema<T: JsonSchema + 'static>(deny_unknown_fields: bool) -> Arc<Value> {
    static CACHE: OnceLock<SchemaCache> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let key = (TypeId::of::<T>(), deny_unknown_fields);
    if let Some(schema) = cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        return Arc::clone(schema);
    }
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = normalize_schema(generator.into_root_schema_for::<T>().to_value());
    tidy_typed_schema(&mut schema, deny_unknown_fields);
    let schema = Arc::new(schema);
    cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, Arc::clone(&schema));
    schema
}

/// Parses an already-checked input into `T::Input`.
fn typed_input<T: TypedTool>(input: &Value) -> Result<T::Input, InputError> {
    T::Input::deserialize(input).map_err(|e| InputError::other(T::NAME, e.to_string()))
}

/// `input` read as the tool's typed input for a permission check: as it is, or else after
/// the schema step's repairs (`"60000"` for a number), since a call runs with the repaired
/// input and its check must see what runs. `None` when neither reads.
fn typed_for_check<T: TypedTool>(input: &Value) -> Option<T::Input> {
    typed_input::<T>(input).ok().or_else(|| {
        let schema = cached_schema::<T::Input>(T::DENY_UNKNOWN_FIELDS);
        let repaired = check_input(T::NAME, &schema, input.clone(), T::DENY_UNKNOWN_FIELDS).ok()?;
        typed_input::<T>(&repaired).ok()
    })
}

use serde::Deserialize as _;

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        T::NAME
    }
    fn aliases(&self) -> &[&str] {
        T::ALIASES
    }
    fn input_schema(&self) -> Value {
        schema_for::<T::Input>(T::DENY_UNKNOWN_FIELDS)
    }
    fn description(&self) -> Cow<'_, str> {
        TypedTool::description(self)
    }
    fn prompt(&self) -> Cow<'_, str> {
        TypedTool::prompt(self)
    }
    fn search_hint(&self) -> Option<&str> {
        TypedTool::search_hint(self)
    }
    fn user_facing_name(&self, input: &Value) -> String {
        typed_input::<T>(input).map_or_else(
            |_| T::NAME.to_owned(),
            |i| TypedTool::user_facing_name(self, &i),
        )
    }
    fn is_enabled(&self) -> bool {
        TypedTool::is_enabled(self)
    }
    fn should_defer(&self) -> bool {
        TypedTool::should_defer(self)
    }
    fn always_load(&self) -> bool {
        TypedTool::always_load(self)
    }
    fn max_result_size(&self) -> MaxResultSize {
        TypedTool::max_result_size(self)
    }
    fn render_output(&self, output: &Value) -> Option<ToolResultContent> {
        let typed = T::Output::deserialize(output).ok()?;
        Some(self.to_content(&typed))
    }
    fn interrupt_behavior(&self) -> InterruptBehavior {
        TypedTool::interrupt_behavior(self)
    }
    fn requires_user_interaction(&self) -> bool {
        TypedTool::requires_user_interaction(self)
    }
    fn user_supplied_fields(&self) -> &'static [&'static str] {
        TypedTool::user_supplied_fields(self)
    }
    // Flags fall back to the fail-closed answer when the input does not parse.
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        typed_input::<T>(input).is_ok_and(|i| TypedTool::is_concurrency_safe(self, &i))
    }
    fn is_read_only(&self, input: &Value) -> bool {
        typed_input::<T>(input).is_ok_and(|i| TypedTool::is_read_only(self, &i))
    }
    fn is_destructive(&self, input: &Value) -> bool {
        typed_input::<T>(input).map_or(true, |i| TypedTool::is_destructive(self, &i))
    }
    fn is_open_world(&self, input: &Value) -> bool {
        typed_input::<T>(input).map_or(true, |i| TypedTool::is_open_world(self, &i))
    }
    fn is_search_or_read(&self, input: &Value) -> SearchOrRead {
        typed_input::<T>(input)
            .map(|i| TypedTool::is_search_or_read(self, &i))
            .unwrap_or_default()
    }
    fn permission_subject(&self, input: &Value) -> Option<PermissionSubject> {
        typed_for_check::<T>(input).and_then(|i| TypedTool::permission_subject(self, &i))
    }
    fn observable_input(&self, input: &Value, ctx: &ToolUseContext) -> Option<Value> {
        TypedTool::observable_input(self, input, ctx)
    }
    fn parse_input(&self, input: Value) -> Result<Value, InputError> {
        let schema = cached_schema::<T::Input>(T::DENY_UNKNOWN_FIELDS);
        let checked = check_input(T::NAME, &schema, input, T::DENY_UNKNOWN_FIELDS)?;
        typed_input::<T>(&checked)?;
        Ok(checked)
    }
    async fn validate_input(
        &self,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        let typed = typed_input::<T>(input).map_err(|e| ValidationError::new(e.to_model_text()))?;
        TypedTool::validate_input(self, &typed, ctx).await
    }
    async fn check_permissions(&self, input: &Value, ctx: &ToolUseContext) -> PermissionResult {
        match typed_for_check::<T>(input) {
            Some(typed) => TypedTool::check_permissions(self, &typed, ctx).await,
            None => PermissionResult::passthrough(),
        }
    }
    async fn call(
        &self,
        input: Value,
        ctx: ToolUseContext,
        progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        let typed = typed_input::<T>(&input).map_err(|e| ToolError::msg(e.to_model_text()))?;
        let result = TypedTool::call(self, typed, ctx, progress).await?;
        let content = self.to_content(&result.data);
        Ok(result.map(|output| {
            let structured = serde_json::to_value(&output).unwrap_or(Value::Null);
            ToolOutput {
                content,
                structured,
            }
        }))
    }
}
