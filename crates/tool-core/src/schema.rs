//! JSON Schema normalisation for model APIs, in one place.
//!
//! Model APIs want a self-contained draft 2020-12 object schema. Schemas arrive from
//! `schemars` (typed tools) and from MCP servers (any draft, `$ref`s, `definitions`). Both go
//! through [`normalize_schema`]:
//!
//! - `$ref`s into `$defs`/`definitions` are inlined (a recursive reference becomes `{}`, "any
//!   value", after one expansion), and the definition tables removed;
//! - draft-07 spellings become draft 2020-12 (`items: [..]` -> `prefixItems`,
//!   boolean `exclusiveMinimum`/`exclusiveMaximum`, `dependencies`);
//! - `$schema`, `$id` and the root `title` are dropped, as are `format` values that are not
//!   JSON Schema formats (schemars' `uint`, `int64`, `double`, ...);
//! - the top level is `type: object` with a `properties` map.

use std::collections::HashSet;

use serde_json::{Map, Value};

const MAX_DEPTH: usize = 64;

/// Most schema nodes one normalisation produces. Inlining `$ref`s can multiply a schema (a
/// definition that uses the next one twice, thirty levels deep, is 2^30 nodes); past this,
/// references are no longer inlined but become `{}` ("any value"), so a hostile MCP server
/// cannot hang the client or exhaust its memory. Real schemas stay far below it.
const MAX_NODES: usize = 100_000;

const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Normalises `schema` for a model API. See the [module docs](self).
pub fn normalize_schema(schema: Value) -> Value {
    let mut root = match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let defs = collect_defs(&root);
    for key in ["$defs", "definitions", "$schema", "$id", "title"] {
        root.remove(key);
    }
    let mut walk = Walk {
        defs: &defs,
        expanding: HashSet::new(),
        budget: MAX_NODES,
    };
    let mut value = walk.rewrite(Value::Object(root), 0);
    if let Value::Object(map) = &mut value {
        map.insert("type".into(), Value::String("object".into()));
        map.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    value
}

fn collect_defs(root: &Map<String, Value>) -> Map<String, Value> {
    let mut defs = Map::new();
    for (prefix, key) in [("#/$defs/", "$defs"), ("#/definitions/", "definitions")] {
        if let Some(Value::Object(table)) = root.get(key) {
            for (name, def) in table {
                defs.insert(format!("{prefix}{name}"), def.clone());
            }
        }
    }
    defs
}

/// One normalisation: the definitions, the references being expanded, and the nodes left.
struct Walk<'a> {
    defs: &'a Map<String, Value>,
    expanding: HashSet<String>,
    budget: usize,
}

impl Walk<'_> {
    fn rewrite(&mut self, value: Value, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return Value::Object(Map::new());
        }
        self.budget = self.budget.saturating_sub(1);
        match value {
            Value::Object(mut map) => {
                if let Some(Value::String(reference)) = map.remove("$ref") {
                    let resolved = match self.defs.get(&reference) {
                        Some(def) if !self.expanding.contains(&reference) && self.budget > 0 => {
                            self.expanding.insert(reference.clone());
                            let out = self.rewrite(def.clone(), depth + 1);
                            self.expanding.remove(&reference);
                            out
                        }
                        // Recursive or dangling reference, or no budget left: any value.
                        _ => Value::Object(Map::new()),
                    };
                    // Sibling keywords of `$ref` (a description, say) are kept on top.
                    let mut merged = match resolved {
                        Value::Object(m) => m,
                        _ => Map::new(),
                    };
                    for (k, v) in map {
                        let v = self.rewrite(v, depth + 1);
                        merged.insert(k, v);
                    }
                    return Value::Object(merged);
                }
                upgrade_draft07(&mut map);
                if let Some(Value::String(format)) = map.get("format")
                    && !STANDARD_FORMATS.contains(&format.as_str())
                {
                    map.remove("format");
                }
                let map = map
                    .into_iter()
                    .map(|(k, v)| {
                        let v = match k.as_str() {
                            // Maps whose values are schemas, and schema-valued keywords.
                            "properties" | "patternProperties" | "dependentSchemas" => match v {
                                Value::Object(props) => Value::Object(
                                    props
                                        .into_iter()
                                        .map(|(pk, pv)| (pk, self.rewrite(pv, depth + 1)))
                                        .collect(),
                                ),
                                other => other,
                            },
                            "enum" | "const" | "default" | "examples" | "required"
                            | "dependentRequired" => v,
                            _ => self.rewrite(v, depth + 1),
                        };
                        (k, v)
                    })
                    .collect();
                Value::Object(map)
            }
            Value::Array(items) => Value::Array(
                items
                    .into_iter()
                    .map(|v| self.rewrite(v, depth + 1))
                    .collect(),
            ),
            other => other,
        }
    }
}

fn upgrade_draft07(map: &mut Map<String, Value>) {
    if matches!(map.get("items"), Some(Value::Array(_))) {
        if let Some(items) = map.remove("items") {
            map.insert("prefixItems".into(), items);
        }
        if let Some(additional) = map.remove("additionalItems") {
            map.insert("items".into(), additional);
        }
    }
    for (exclusive, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(Value::Bool(flag)) = map.get(exclusive).cloned() {
            map.remove(exclusive);
            if flag && let Some(limit) = map.remove(bound) {
                map.insert(exclusive.into(), limit);
            }
        }
    }
    if let Some(Value::Object(deps)) = map.remove("dependencies") {
        let mut required = Map::new();
        let mut schemas = Map::new();
        for (k, v) in deps {
            if v.is_array() {
                required.insert(k, v);
            } else {
                schemas.insert(k, v);
            }
        }
        if !required.is_empty() {
            map.insert("dependentRequired".into(), Value::Object(required));
        }
        if !schemas.is_empty() {
            map.insert("dependentSchemas".into(), Value::Object(schemas));
        }
    }
}

/// Extra tidying for schemas generated from Rust input types: optional properties lose their
/// `null` alternative and a `null` default (an absent field says the same, and Claude Code's
/// schemas have none),
/// and, when `deny_unknown_fields`, the top level gets `additionalProperties: false`.
pub(crate) fn tidy_typed_schema(schema: &mut Value, deny_unknown_fields: bool) {
    let Value::Object(root) = schema else { return };
    let required: HashSet<String> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Object(props)) = root.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if !required.contains(name) {
                drop_null_alternative(prop);
            }
        }
    }
    if deny_unknown_fields {
        root.insert("additionalProperties".into(), Value::Bool(false));
    }
}

fn drop_null_alternative(prop: &mut Value) {
    let Value::Object(map) = prop else { return };
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".into(), only);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = map.get_mut(key) {
            alts.retain(|a| a.get("type").and_then(Value::as_str) != Some("null"));
            if alts.len() == 1 {
                let only = alts.remove(0);
                map.remove(key);
                if let Value::Object(inner) = only {
                    for (k, v) in inner {
                        map.entry(k).or_insert(v);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Counts the nodes of a JSON value.
    fn nodes(v: &Value) -> usize {
        1 + match v {
            Value::Object(m) => m.values().map(nodes).sum(),
            Value::Array(a) => a.iter().map(nodes).sum(),
            _ => 0,
        }
    }

    #[test]
    fn a_schema_that_doubles_at_every_reference_stays_bounded() {
        // D0 uses D1 twice, D1 uses D2 twice, ... 40 levels: 2^40 nodes if inlined whole.
        let mut defs = serde_json::Map::new();
        for i in 0..40 {
            let next = format!("#/$defs/D{}", i + 1);
            defs.insert(
                format!("D{i}"),
                json!({"type": "object", "properties": {"a": {"$ref": next}, "b": {"$ref": next}}}),
            );
        }
        defs.insert("D40".into(), json!({"type": "string"}));
        let schema = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/D0"}}, "$defs": defs});
        let out = normalize_schema(schema);
        assert!(nodes(&out) <= 2 * MAX_NODES, "{} nodes", nodes(&out));
        assert_eq!(out["type"], "object");
        assert_eq!(out["properties"]["root"]["type"], "object");
    }

    #[test]
    fn inlines_refs_and_drops_definitions() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "title": "Input",
            "type": "object",
            "properties": {"point": {"$ref": "#/definitions/Point", "description": "where"}},
            "definitions": {"Point": {"type": "object", "properties": {"x": {"type": "integer", "format": "int64"}}}}
        });
        assert_eq!(
            normalize_schema(schema),
            json!({
                "type": "object",
                "properties": {"point": {"type": "object", "description": "where", "properties": {"x": {"type": "integer"}}}}
            })
        );
    }

    #[test]
    fn recursive_refs_terminate() {
        let schema = json!({
            "type": "object",
            "properties": {"node": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}
        });
        let out = normalize_schema(schema);
        assert_eq!(out["properties"]["node"]["properties"]["next"], json!({}));
        assert!(!out.to_string().contains("$ref"));
    }

    #[test]
    fn upgrades_draft07_keywords_and_forces_object() {
        let schema = json!({
            "properties": {
                "t": {"type": "array", "items": [{"type": "string"}], "additionalItems": false},
                "n": {"type": "number", "minimum": 0, "exclusiveMinimum": true},
                "m": {"type": "number", "maximum": 9, "exclusiveMaximum": false}
            },
            "dependencies": {"a": ["b"], "c": {"required": ["d"]}}
        });
        let out = normalize_schema(schema);
        assert_eq!(out["type"], "object");
        assert_eq!(
            out["properties"]["t"],
            json!({"type": "array", "prefixItems": [{"type": "string"}], "items": false})
        );
        assert_eq!(
            out["properties"]["n"],
            json!({"type": "number", "exclusiveMinimum": 0})
        );
        assert_eq!(
            out["properties"]["m"],
            json!({"type": "number", "maximum": 9})
        );
        assert_eq!(out["dependentRequired"], json!({"a": ["b"]}));
        assert_eq!(out["dependentSchemas"], json!({"c": {"required": ["d"]}}));
        assert_eq!(
            normalize_schema(json!("junk")),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn enum_values_are_not_rewritten() {
        let schema = json!({"type": "object", "properties": {"e": {"enum": [{"$ref": "x"}]}}});
        assert_eq!(
            normalize_schema(schema.clone())["properties"]["e"],
            schema["properties"]["e"]
        );
    }
}
