//! Input schemas of MCP tools: normalised by tool-core, then root `anyOf`/`oneOf`/`allOf`
//! flattened into one object schema (model APIs want `type: object` at the root), and the
//! root's structure repaired when a server sends an invalid one (a model API rejects the
//! whole request over one bad tool schema).

use serde_json::{Map, Value};

/// The schema the model sees for an MCP tool's `inputSchema`: `$ref`s inlined and drafts
/// unified by [`tool_core::normalize_schema`], then a root-level `anyOf`/`oneOf`/`allOf` of
/// object schemas merged into the root: properties are united; `required` is the union for
/// `allOf` and the intersection for `anyOf`/`oneOf` (a property is only required when every
/// alternative requires it).
///
/// An invalid root is repaired rather than passed on: `properties` that is not an object
/// becomes `{}`, a property schema that is neither an object nor a boolean becomes `{}` (any
/// value), `required` keeps only its strings, and an `additionalProperties` that is not a
/// schema is dropped.
pub fn mcp_input_schema(raw: &Value) -> Value {
    let mut schema = tool_core::normalize_schema(raw.clone());
    if let Value::Object(root) = &mut schema {
        flatten_root_combinators(root);
        repair_root(root);
    }
    schema
}

fn repair_root(root: &mut Map<String, Value>) {
    let properties = match root.remove("properties") {
        Some(Value::Object(props)) => props
            .into_iter()
            .map(|(k, v)| match v {
                Value::Object(_) | Value::Bool(_) => (k, v),
                _ => (k, Value::Object(Map::new())),
            })
            .collect(),
        _ => Map::new(),
    };
    root.insert("properties".into(), Value::Object(properties));
    match root.get("required") {
        None | Some(Value::Array(_)) => {}
        Some(_) => {
            root.remove("required");
        }
    }
    if let Some(Value::Array(required)) = root.get_mut("required") {
        required.retain(Value::is_string);
        if required.is_empty() {
            root.remove("required");
        }
    }
    if root
        .get("additionalProperties")
        .is_some_and(|v| !v.is_object() && !v.is_boolean())
    {
        root.remove("additionalProperties");
    }
}

fn flatten_root_combinators(root: &mut Map<String, Value>) {
    for keyword in ["allOf", "anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = root.remove(keyword) else {
            continue;
        };
        // The root's own properties (they hold together with every branch), then each
        // property's distinct schemas in the branches.
        let own = match root.remove("properties") {
            Some(Value::Object(props)) => props,
            _ => Map::new(),
        };
        let mut alternatives: Vec<(String, Vec<Value>)> =
            own.keys().map(|k| (k.clone(), Vec::new())).collect();
        let mut add = |k: &String, v: &Value| match alternatives.iter_mut().find(|(n, _)| n == k) {
            Some((_, seen)) if !seen.contains(v) => seen.push(v.clone()),
            Some(_) => {}
            None => alternatives.push((k.clone(), vec![v.clone()])),
        };
        let mut required: Vec<String> = string_array(root.get("required"));
        let mut branch_required: Option<Vec<String>> = None;
        for branch in &branches {
            let branch = match branch {
                Value::Object(branch) => branch,
                // `true` accepts anything: in an `anyOf`/`oneOf` nothing is then required.
                Value::Bool(true) if keyword != "allOf" => {
                    branch_required = Some(Vec::new());
                    continue;
                }
                _ => continue,
            };
            if let Some(Value::Object(props)) = branch.get("properties") {
                for (k, v) in props {
                    add(k, v);
                }
            }
            let req = string_array(branch.get("required"));
            if keyword == "allOf" {
                for r in req {
                    if !required.contains(&r) {
                        required.push(r);
                    }
                }
            } else {
                branch_required = Some(match branch_required {
                    None => req,
                    Some(prev) => prev.into_iter().filter(|r| req.contains(r)).collect(),
                });
            }
        }
        for r in branch_required.unwrap_or_default() {
            if !required.contains(&r) {
                required.push(r);
            }
        }
        // A property the branches describe differently keeps every description: a
        // discriminated union's `kind: {const: "file"}` and `kind: {const: "url"}` become
        // `kind: {anyOf: [...]}`, not the first branch's alone.
        let combine = if keyword == "allOf" { "allOf" } else { "anyOf" };
        let one_of = |mut schemas: Vec<Value>, keyword: &str| {
            if schemas.len() == 1 {
                schemas.remove(0)
            } else {
                let mut m = Map::new();
                m.insert(keyword.into(), Value::Array(schemas));
                Value::Object(m)
            }
        };
        let properties: Map<String, Value> = alternatives
            .into_iter()
            .map(|(k, mut schemas)| {
                schemas.retain(|s| own.get(&k) != Some(s));
                let v = match (own.get(&k), schemas.is_empty()) {
                    (Some(own), true) => own.clone(),
                    (Some(own), false) => {
                        one_of(vec![own.clone(), one_of(schemas, combine)], "allOf")
                    }
                    (None, _) => one_of(schemas, combine),
                };
                (k, v)
            })
            .collect();
        root.insert("properties".into(), Value::Object(properties));
        if required.is_empty() {
            root.remove("required");
        } else {
            root.insert(
                "required".into(),
                Value::Array(required.into_iter().map(Value::String).collect()),
            );
        }
    }
    root.insert("type".into(), Value::String("object".into()));
}

fn string_array(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flattens_any_of_with_refs() {
        let raw = json!({
            "$defs": {"Id": {"type": "string"}},
            "anyOf": [
                {"type": "object", "properties": {"id": {"$ref": "#/$defs/Id"}, "x": {"type": "number"}}, "required": ["id", "x"]},
                {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}, "required": ["id"]}
            ]
        });
        let s = mcp_input_schema(&raw);
        assert_eq!(s["type"], "object");
        assert!(s.get("anyOf").is_none());
        assert_eq!(s["properties"]["id"], json!({"type": "string"}));
        assert!(s["properties"].get("name").is_some());
        assert_eq!(s["required"], json!(["id"]));
    }

    #[test]
    fn flattens_all_of_and_keeps_plain_schemas() {
        let raw = json!({"allOf": [
            {"properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "string"}}, "required": ["b"]}
        ]});
        let s = mcp_input_schema(&raw);
        assert_eq!(s["required"], json!(["a", "b"]));
        let plain = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        assert_eq!(mcp_input_schema(&plain), plain);
        // Not an object at all: an empty object schema.
        assert_eq!(
            mcp_input_schema(&json!("nonsense")),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn a_property_the_branches_describe_differently_keeps_every_description() {
        let raw = json!({"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "file"}, "path": {"type": "string"}}, "required": ["kind", "path"]},
            {"type": "object", "properties": {"kind": {"const": "url"}, "url": {"type": "string"}}, "required": ["kind", "url"]}
        ]});
        assert_eq!(
            mcp_input_schema(&raw),
            json!({
                "type": "object",
                "properties": {
                    "kind": {"anyOf": [{"const": "file"}, {"const": "url"}]},
                    "path": {"type": "string"},
                    "url": {"type": "string"}
                },
                "required": ["kind"]
            })
        );
        // The root's own schema for a property holds with every branch's.
        let raw = json!({"properties": {"n": {"type": "integer"}},
                         "anyOf": [{"properties": {"n": {"minimum": 5}}}]});
        assert_eq!(
            mcp_input_schema(&raw)["properties"]["n"],
            json!({"allOf": [{"type": "integer"}, {"minimum": 5}]})
        );
        // A `true` branch accepts anything: nothing is required.
        let raw =
            json!({"anyOf": [true, {"properties": {"a": {"type": "string"}}, "required": ["a"]}]});
        assert_eq!(
            mcp_input_schema(&raw),
            json!({"type": "object", "properties": {"a": {"type": "string"}}})
        );
    }

    #[test]
    fn repairs_an_invalid_root() {
        let raw = json!({
            "type": "array",
            "properties": {"ok": {"type": "string"}, "bad": 5, "any": true},
            "required": ["ok", 3],
            "additionalProperties": "no"
        });
        assert_eq!(
            mcp_input_schema(&raw),
            json!({
                "type": "object",
                "properties": {"ok": {"type": "string"}, "bad": {}, "any": true},
                "required": ["ok"]
            })
        );
        let raw = json!({"properties": 5, "required": "x", "anyOf": "nope"});
        assert_eq!(
            mcp_input_schema(&raw),
            json!({"type": "object", "properties": {}})
        );
    }
}
