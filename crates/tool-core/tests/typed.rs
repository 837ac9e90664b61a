//! The typed adapter from the outside: schema snapshots, every parse error's model-facing
//! text, JSON-string tolerance, unknown-field rejection, safety-flag defaults, modifiers.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs, dead_code)]

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_core::{
    InterruptBehavior, MaxResultSize, PermissionResult, ProgressSender, SearchOrRead, Tool,
    ToolError, ToolResult, ToolResultContent, ToolUseContext, TypedTool, async_trait,
};

/// Edits a file.
#[derive(Debug, Deserialize, JsonSchema)]
struct EditInput {
    /// The absolute path to the file to modify
    file_path: String,
    /// The text to replace
    old_string: String,
    /// The text to replace it with
    new_string: String,
    /// Replace all occurrences (default false)
    #[serde(default)]
    replace_all: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Content,
    FilesWithMatches,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Todo {
    content: String,
    /// Position.
    priority: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct NestedInput {
    todos: Vec<Todo>,
    mode: Option<Mode>,
    #[serde(rename = "-i")]
    case_insensitive: Option<bool>,
}

#[derive(Serialize, Deserialize)]
struct EditOutput {
    replaced: usize,
}

struct EditTool;

#[async_trait]
impl TypedTool for EditTool {
    type Input = EditInput;
    type Output = EditOutput;
    const NAME: &'static str = "Edit";

    fn description(&self) -> Cow<'_, str> {
        "Edits a file".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    async fn call(
        &self,
        input: EditInput,
        _ctx: ToolUseContext,
        _p: ProgressSender,
    ) -> Result<ToolResult<EditOutput>, ToolError> {
        let path = input.file_path.clone();
        Ok(ToolResult::new(EditOutput { replaced: 1 })
            .with_context_modifier(move |ctx| ctx.with_cwd(Path::new(&path).parent().unwrap())))
    }
}

struct NestedTool;

#[async_trait]
impl TypedTool for NestedTool {
    type Input = NestedInput;
    type Output = String;
    const NAME: &'static str = "TodoWrite";
    const ALIASES: &'static [&'static str] = &["Todos"];

    fn description(&self) -> Cow<'_, str> {
        "Writes todos".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn is_concurrency_safe(&self, input: &NestedInput) -> bool {
        input.todos.is_empty()
    }
    async fn call(
        &self,
        input: NestedInput,
        _ctx: ToolUseContext,
        _p: ProgressSender,
    ) -> Result<ToolResult<String>, ToolError> {
        Ok(ToolResult::new(format!("{} todos", input.todos.len())))
    }
}

fn dyn_tool<T: Tool>(t: T) -> Arc<dyn Tool> {
    Arc::new(t)
}

#[test]
fn schema_snapshot_flat() {
    assert_eq!(
        dyn_tool(EditTool).input_schema(),
        json!({
            "type": "object",
            // The input type's doc comment ("Edits a file.") is for Rust readers: the tool's
            // prompt describes it to the model.
            "properties": {
                "file_path": {"type": "string", "description": "The absolute path to the file to modify"},
                "old_string": {"type": "string", "description": "The text to replace"},
                "new_string": {"type": "string", "description": "The text to replace it with"},
                "replace_all": {"type": "boolean", "description": "Replace all occurrences (default false)"}
            },
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": false
        })
    );
}

#[test]
fn schema_snapshot_nested_has_no_refs() {
    let schema = dyn_tool(NestedTool).input_schema();
    let text = schema.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$defs") && !text.contains("$schema"),
        "{text}"
    );
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["properties"]["todos"],
        json!({
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string"},
                    "priority": {"type": "integer", "description": "Position.", "minimum": 0}
                },
                "required": ["content", "priority"]
            }
        })
    );
    assert_eq!(
        schema["properties"]["mode"],
        json!({"type": "string", "enum": ["content", "files_with_matches"]})
    );
    assert_eq!(schema["properties"]["-i"], json!({"type": "boolean"}));
}

#[test]
fn every_parse_error_text() {
    let tool = dyn_tool(EditTool);
    let cases = [
        (
            json!({"old_string": "a", "new_string": "b"}),
            "<tool_use_error>InputValidationError: Edit failed due to the following issue:\nThe required parameter `file_path` is missing</tool_use_error>",
        ),
        (
            json!({"file_path": "/a", "old_string": "a", "new_string": "b", "replace": true}),
            "<tool_use_error>InputValidationError: Edit failed due to the following issue:\nAn unexpected parameter `replace` was provided</tool_use_error>",
        ),
        (
            json!({"file_path": 7, "old_string": "a", "new_string": "b"}),
            "<tool_use_error>InputValidationError: Edit failed due to the following issue:\nThe parameter `file_path` type is expected as `string` but provided as `number`</tool_use_error>",
        ),
        (
            json!({"file_path": "/a", "new_string": "b", "extra": 1, "replace_all": "yes"}),
            "<tool_use_error>InputValidationError: Edit failed due to the following issues:\nThe required parameter `old_string` is missing\nAn unexpected parameter `extra` was provided\nThe parameter `replace_all` type is expected as `boolean` but provided as `string`</tool_use_error>",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(
            tool.parse_input(input).unwrap_err().to_model_text(),
            expected
        );
    }
    // A value an enum does not list is named with its path and the values it allows.
    let nested = dyn_tool(NestedTool);
    let err = nested
        .parse_input(json!({"todos": [], "mode": "everything"}))
        .unwrap_err();
    assert_eq!(
        err.to_model_text(),
        "<tool_use_error>InputValidationError: TodoWrite failed due to the following issue:\n\
         The parameter `mode` must be one of \"content\", \"files_with_matches\", but is \"everything\"</tool_use_error>",
    );
    // Errors the classes do not cover keep the deserializer's message.
    let err = nested
        .parse_input(json!({"todos": [{"content": "x", "priority": 5_000_000_000_u64}]}))
        .unwrap_err();
    assert!(
        err.to_model_text().starts_with(
            "<tool_use_error>InputValidationError: invalid value: integer `5000000000`"
        ),
        "{err}"
    );
    let err = nested
        .parse_input(json!({"todos": [{"content": "x", "priority": -1}]}))
        .unwrap_err();
    assert!(
        err.to_model_text()
            .contains("The parameter `todos[0].priority` must be at least 0, but is -1"),
        "{err}"
    );
}

#[test]
fn json_encoded_strings_are_accepted() {
    let tool = dyn_tool(NestedTool);
    let input = tool
        .parse_input(json!({"todos": "[{\"content\": \"a\", \"priority\": 1}]"}))
        .unwrap();
    assert_eq!(input["todos"][0]["content"], "a");
    // A plain string field is never decoded.
    let edit = dyn_tool(EditTool);
    let input = edit
        .parse_input(json!({"file_path": "[1]", "old_string": "{}", "new_string": "b"}))
        .unwrap();
    assert_eq!(input["file_path"], "[1]");
}

#[tokio::test]
async fn call_renders_output_and_carries_the_modifier() {
    let tool = dyn_tool(EditTool);
    let input = tool
        .parse_input(json!({"file_path": "/p/q/f.rs", "old_string": "a", "new_string": "b"}))
        .unwrap();
    let result = tool
        .call(input, ToolUseContext::new("/"), ProgressSender::none())
        .await
        .unwrap();
    assert_eq!(
        result.data.content,
        ToolResultContent::Text("{\"replaced\":1}".into())
    );
    assert_eq!(result.data.structured, json!({"replaced": 1}));
    let modifier = result.context_modifier.expect("modifier");
    let ctx = modifier.apply(ToolUseContext::new("/"));
    assert_eq!(ctx.cwd(), Path::new("/p/q"));
}

#[tokio::test]
async fn defaults_are_fail_closed() {
    let tool = dyn_tool(EditTool);
    let input = json!({"file_path": "/a", "old_string": "a", "new_string": "b"});
    assert!(!tool.is_concurrency_safe(&input));
    assert!(!tool.is_read_only(&input));
    assert!(!tool.is_destructive(&input));
    assert_eq!(tool.interrupt_behavior(), InterruptBehavior::Block);
    assert_eq!(tool.is_search_or_read(&input), SearchOrRead::default());
    assert!(
        tool.is_enabled()
            && !tool.should_defer()
            && !tool.always_load()
            && !tool.requires_user_interaction()
    );
    assert!(!tool.is_mcp());
    let ctx = ToolUseContext::new("/");
    assert_eq!(
        tool.check_permissions(&input, &ctx).await,
        PermissionResult::passthrough()
    );
    // Flags answer the safe way when the input does not parse.
    let nested = dyn_tool(NestedTool);
    assert!(nested.is_concurrency_safe(&json!({"todos": []})));
    assert!(!nested.is_concurrency_safe(&json!({"todos": 3})));
    assert!(nested.is_destructive(&json!({"todos": 3})));
}

#[test]
fn lookup_by_alias() {
    let tools = vec![dyn_tool(EditTool), dyn_tool(NestedTool)];
    assert_eq!(
        tool_core::find_tool(&tools, "Todos").map(|t| t.name().to_owned()),
        Some("TodoWrite".into())
    );
    assert!(tool_core::find_tool(&tools, "Nope").is_none());
}

#[test]
fn non_object_input_is_refused() {
    let err = dyn_tool(EditTool)
        .parse_input(Value::String("hi".into()))
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Edit expects a JSON object as input, but received string"
    );
}

#[derive(Debug, Deserialize, JsonSchema)]
struct ShellInput {
    command: String,
    timeout: Option<f64>,
}

/// A shell-like tool whose permission subject is its command.
struct ShellTool;

#[async_trait]
impl TypedTool for ShellTool {
    type Input = ShellInput;
    type Output = String;
    const NAME: &'static str = "Shell";

    fn description(&self) -> Cow<'_, str> {
        "Runs a command".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100)
    }
    fn permission_subject(&self, input: &ShellInput) -> Option<tool_core::PermissionSubject> {
        Some(tool_core::PermissionSubject::Command(input.command.clone()))
    }
    async fn call(
        &self,
        input: ShellInput,
        _ctx: ToolUseContext,
        _p: ProgressSender,
    ) -> Result<ToolResult<String>, ToolError> {
        Ok(ToolResult::new(format!(
            "{} {:?}",
            input.command, input.timeout
        )))
    }
}

/// An input the schema step repairs (a number sent as a string) still has its permission
/// subject: the call runs with the repaired input, and its check must see that command.
#[test]
fn an_input_the_schema_repairs_keeps_its_permission_subject() {
    let input = json!({"command": "rm -rf build", "timeout": "60000"});
    assert_eq!(
        Tool::permission_subject(&ShellTool, &input),
        Some(tool_core::PermissionSubject::Command("rm -rf build".into()))
    );
    assert_eq!(
        Tool::parse_input(&ShellTool, input).unwrap()["timeout"],
        json!(60000)
    );
    // What no repair reads has none.
    assert_eq!(
        Tool::permission_subject(&ShellTool, &json!({"command": 5})),
        None
    );
}

/// A key-value store's operations, one variant each: schemars describes it with a root
/// `oneOf`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
enum KvInput {
    /// Reads a key.
    Get { key: String },
    /// Writes a key.
    Set { key: String, value: String },
}

/// The same operations flattened into an input with a field of its own.
#[derive(Debug, Deserialize, JsonSchema)]
struct FlatKvInput {
    store: String,
    #[serde(flatten)]
    op: KvInput,
}

struct KvTool;

#[async_trait]
impl TypedTool for KvTool {
    type Input = KvInput;
    type Output = String;
    const NAME: &'static str = "Kv";

    fn description(&self) -> Cow<'_, str> {
        "A key-value store".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(1_000)
    }
    async fn call(
        &self,
        input: KvInput,
        _ctx: ToolUseContext,
        _p: ProgressSender,
    ) -> Result<ToolResult<String>, ToolError> {
        Ok(ToolResult::new(format!("{input:?}")))
    }
}

struct FlatKvTool;

#[async_trait]
impl TypedTool for FlatKvTool {
    type Input = FlatKvInput;
    type Output = String;
    const NAME: &'static str = "FlatKv";

    fn description(&self) -> Cow<'_, str> {
        "A key-value store of stores".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(1_000)
    }
    async fn call(
        &self,
        input: FlatKvInput,
        _ctx: ToolUseContext,
        _p: ProgressSender,
    ) -> Result<ToolResult<String>, ToolError> {
        Ok(ToolResult::new(format!("{input:?}")))
    }
}

/// An input that is an enum (or holds a flattened one) gets a schema the API takes (no
/// `oneOf`/`anyOf`/`allOf` at the top level: it refuses the whole request over one) that
/// lists every variant's fields, and its calls parse: each variant's fields are known, the
/// tag's values are listed, a field no variant has is still refused.
#[test]
fn an_enum_input_gets_an_object_schema_and_its_calls_parse() {
    let schema = KvTool.input_schema();
    for combinator in ["oneOf", "anyOf", "allOf"] {
        assert!(schema.get(combinator).is_none(), "{schema:#}");
    }
    assert_eq!(schema["type"], "object", "{schema:#}");
    let props = schema["properties"].as_object().unwrap();
    let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["key", "op", "value"], "{schema:#}");
    assert_eq!(schema["required"], json!(["op", "key"]), "{schema:#}");
    assert!(
        schema["properties"]["op"].to_string().contains("\"get\"")
            && schema["properties"]["op"].to_string().contains("\"set\""),
        "{schema:#}"
    );
    assert_eq!(tool_core::schema::schema_problem(&schema), None);

    let get = KvTool
        .parse_input(json!({"op": "get", "key": "a"}))
        .unwrap();
    assert_eq!(get, json!({"op": "get", "key": "a"}));
    KvTool
        .parse_input(json!({"op": "set", "key": "a", "value": "b"}))
        .unwrap();
    let unknown = KvTool
        .parse_input(json!({"op": "get", "key": "a", "colour": "red"}))
        .unwrap_err()
        .to_model_text();
    assert!(unknown.contains("colour"), "{unknown}");
    let missing = KvTool
        .parse_input(json!({"op": "set", "key": "a"}))
        .unwrap_err()
        .to_model_text();
    assert!(missing.contains("value"), "{missing}");

    let schema = FlatKvTool.input_schema();
    assert!(schema.get("oneOf").is_none(), "{schema:#}");
    assert!(schema["properties"].get("store").is_some(), "{schema:#}");
    assert!(schema["properties"].get("value").is_some(), "{schema:#}");
    FlatKvTool
        .parse_input(json!({"store": "s", "op": "get", "key": "a"}))
        .unwrap();
}
