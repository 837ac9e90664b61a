//! The input schema of every shipped tool matches Claude Code's declared input fields one
//! for one: names, required or not, coarse type and enum values
//! (`fixtures/claude-code-tool-inputs.json`, a copy of `ref/claude-code-tool-inputs.json`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use serde_json::Value;

/// The coarse type of a property schema, spelled as the snapshot spells it.
fn coarse_type(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
        return format!("enum:{}", names.join(","));
    }
    if let Some(alts) = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)
    {
        // An enum written as one constant per variant.
        let names: Vec<&str> = alts
            .iter()
            .filter_map(|a| a.get("const").and_then(Value::as_str))
            .collect();
        if names.len() == alts.len() && !names.is_empty() {
            return format!("enum:{}", names.join(","));
        }
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("")
            .to_owned(),
        _ => String::new(),
    };
    if ty == "integer" {
        "number".to_owned()
    } else {
        ty
    }
}

fn sorted_enum(t: &str) -> String {
    match t.strip_prefix("enum:") {
        Some(list) => {
            let mut v: Vec<&str> = list.split(',').collect();
            v.sort_unstable();
            format!("enum:{}", v.join(","))
        }
        None => t.to_owned(),
    }
}

/// Every `description` string in `schema`, however deep.
fn all_descriptions<'a>(schema: &'a Value, out: &mut Vec<&'a str>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("description", Value::String(d)) => out.push(d),
                    _ => all_descriptions(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| all_descriptions(v, out)),
        _ => {}
    }
}

#[test]
fn every_tool_matches_claude_code_input_fields() {
    let expected: Value =
        serde_json::from_str(include_str!("fixtures/claude-code-tool-inputs.json")).unwrap();
    #[allow(unused_mut)]
    let mut session_tools: Vec<std::sync::Arc<dyn tool_core::Tool>> = vec![
        std::sync::Arc::new(tools_builtin::TaskCreate),
        std::sync::Arc::new(tools_builtin::TaskGet),
        std::sync::Arc::new(tools_builtin::TaskUpdate),
        std::sync::Arc::new(tools_builtin::TaskList),
        std::sync::Arc::new(tools_builtin::TodoWrite),
        std::sync::Arc::new(tools_builtin::EnterPlanMode),
        std::sync::Arc::new(tools_builtin::ExitPlanMode),
        std::sync::Arc::new(tools_builtin::ToolSearch),
        std::sync::Arc::new(tools_builtin::TaskOutput),
        std::sync::Arc::new(tools_builtin::TaskStop),
        std::sync::Arc::new(tools_builtin::AskUserQuestion),
        std::sync::Arc::new(tools_builtin::Skill),
        std::sync::Arc::new(tools_builtin::WebFetch),
        std::sync::Arc::new(tools_builtin::WebSearch),
    ];
    // The gated families, in builds that have them.
    #[cfg(feature = "agent-triggers")]
    session_tools.extend([
        std::sync::Arc::new(tools_builtin::CronCreate) as std::sync::Arc<dyn tool_core::Tool>,
        std::sync::Arc::new(tools_builtin::CronList),
        std::sync::Arc::new(tools_builtin::CronDelete),
    ]);
    #[cfg(feature = "worktree")]
    session_tools.extend([
        std::sync::Arc::new(tools_builtin::EnterWorktree) as std::sync::Arc<dyn tool_core::Tool>,
        std::sync::Arc::new(tools_builtin::ExitWorktree),
    ]);
    for tool in tools_builtin::file_tools().into_iter().chain(session_tools) {
        let name = tool.name();
        let want = &expected[name];
        assert!(want.is_object(), "{name} is not in the snapshot");
        let schema = tool.input_schema();
        assert_eq!(schema["type"], "object", "{name}");
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let ours: BTreeMap<String, (bool, String)> = schema["properties"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    (required.contains(&k.as_str()), sorted_enum(&coarse_type(v))),
                )
            })
            .collect();
        let theirs: BTreeMap<String, (bool, String)> = want["fields"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    (
                        v["required"].as_bool().unwrap(),
                        sorted_enum(v["type"].as_str().unwrap()),
                    ),
                )
            })
            .collect();
        assert_eq!(
            ours, theirs,
            "{name}: input fields differ from Claude Code's"
        );
        if want["additional_properties"] == true {
            // A passthrough object (ExitPlanMode): unknown keys are kept.
            let parsed = tool
                .parse_input(serde_json::json!({"__unknown__": 1}))
                .unwrap();
            assert_eq!(parsed["__unknown__"], 1, "{name}");
        } else {
            // Unknown keys are refused, as Claude Code's strict objects do.
            let err = tool
                .parse_input(serde_json::json!({"__unknown__": 1}))
                .unwrap_err();
            assert!(
                err.to_model_text()
                    .contains("An unexpected parameter `__unknown__` was provided"),
                "{name}"
            );
        }
        // Descriptions are for the model: none at the top (the type's doc comment), no
        // rustdoc links or notes on Claude Code anywhere.
        assert!(schema.get("description").is_none(), "{name}: {schema}");
        let mut descriptions = Vec::new();
        all_descriptions(&schema, &mut descriptions);
        for d in descriptions {
            assert!(
                !d.contains("[`") && !d.contains("Claude Code"),
                "{name}: a Rust doc in the schema: {d}"
            );
        }
        // Every field has a description for the model.
        for (field, prop) in schema["properties"].as_object().unwrap() {
            assert!(
                prop.get("description")
                    .and_then(Value::as_str)
                    .is_some_and(|d| !d.is_empty()),
                "{name}.{field}"
            );
        }
    }
}
