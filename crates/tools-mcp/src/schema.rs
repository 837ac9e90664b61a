//! Input schemas of MCP tools: normalised by tool-core (keyword values of the wrong type
//! repaired at every depth), then root `anyOf`/`oneOf`/`allOf` flattened into one object
//! schema (model APIs want `type: object` at the root), the root's structure repaired, and
//! top-level property names the model API refuses renamed. A model API rejects the whole
//! request over one bad tool schema, so a schema that still is not sane after all that
//! leaves its tool out ([`prepare_mcp_input_schema`]).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

/// The longest property name the Anthropic API takes.
pub const MAX_PROPERTY_NAME_LEN: usize = 64;

/// An MCP tool's input schema as the model sees it, with the top-level properties that had
/// to be renamed for the model API.
#[derive(Debug, Clone, PartialEq)]
pub struct McpInputSchema {
    /// The schema shown to the model.
    pub schema: Value,
    /// `(name the model uses, name on the server)` of each renamed top-level property:
    /// arguments are sent to the server under its own names.
    pub renamed: Vec<(String, String)>,
}

/// The schema the model sees for an MCP tool's `inputSchema`: `$ref`s inlined, drafts
/// unified and keyword values of the wrong JSON type repaired at every depth by
/// [`tool_core::normalize_schema`], which also merges a root-level `anyOf`/`oneOf`/`allOf`
/// of object schemas into the root (properties united; `required` the union for `allOf`,
/// the intersection for `anyOf`/`oneOf`).
///
/// An invalid root is repaired rather than passed on: `properties` that is not an object
/// becomes `{}`, a property schema that is neither an object nor a boolean becomes `{}` (any
/// value), `required` keeps only its strings, and an `additionalProperties` that is not a
/// schema is dropped. Top-level property names the Anthropic API refuses (it wants
/// `^[a-zA-Z0-9_.-]{1,64}$`: OpenAPI-generated servers send `$filter`, `StartTime<`,
/// `settings[include_credits]`) are renamed: each other character becomes `_`, the name is
/// cut to 64 characters, and `_2`, `_3`, ... is added where it would take another
/// property's name; `required`, `dependentRequired` and `dependentSchemas` follow.
/// [`prepare_mcp_input_schema`] also says which names were changed.
pub fn mcp_input_schema(raw: &Value) -> Value {
    prepare(raw).schema
}

/// [`mcp_input_schema`] with the renamed properties, checked: `Err` says what is still
/// wrong when the schema could not be made sane for the model API (its tool is then left
/// out: one bad schema fails every request of the conversation).
pub fn prepare_mcp_input_schema(raw: &Value) -> Result<McpInputSchema, String> {
    let prepared = prepare(raw);
    match input_schema_problem(&prepared.schema) {
        Some(problem) => Err(problem),
        None => Ok(prepared),
    }
}

/// What keeps `schema` from being an input schema the model API takes, if anything: the
/// root must be an object schema (`type: object`, a `properties` object) whose property
/// names match `^[a-zA-Z0-9_.-]{1,64}$`, and its keywords must have values of their type
/// ([`tool_core::schema::schema_problem`]).
pub fn input_schema_problem(schema: &Value) -> Option<String> {
    let Some(root) = schema.as_object() else {
        return Some("the schema is not an object".into());
    };
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Some("the root is not `type: object`".into());
    }
    let Some(properties) = root.get("properties").and_then(Value::as_object) else {
        return Some("the root has no `properties` object".into());
    };
    if let Some(bad) = properties.keys().find(|k| !is_api_property_name(k)) {
        return Some(format!(
            "the property name {bad:?} does not match ^[a-zA-Z0-9_.-]{{1,64}}$"
        ));
    }
    tool_core::schema::schema_problem(schema)
}

fn prepare(raw: &Value) -> McpInputSchema {
    let mut schema = tool_core::normalize_schema(raw.clone());
    let mut renamed = Vec::new();
    if let Value::Object(root) = &mut schema {
        repair_root(root);
        renamed = rename_properties(root);
    }
    McpInputSchema { schema, renamed }
}

/// Whether the Anthropic API takes `name` as a property name: `^[a-zA-Z0-9_.-]{1,64}$`.
fn is_api_property_name(name: &str) -> bool {
    (1..=MAX_PROPERTY_NAME_LEN).contains(&name.len()) && name.chars().all(is_api_name_char)
}

fn is_api_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// `name` with each character the API refuses replaced by `_`, at most 64 characters.
fn api_property_name(name: &str) -> String {
    let out: String = name
        .chars()
        .map(|c| if is_api_name_char(c) { c } else { '_' })
        .take(MAX_PROPERTY_NAME_LEN)
        .collect();
    if out.is_empty() { "_".into() } else { out }
}

/// `base` (ASCII, at most 64 characters), or `base` cut short with `_2`, `_3`, ... added,
/// whichever `used` does not hold first.
fn unused_name(base: &str, used: &HashSet<String>) -> String {
    if !used.contains(base) {
        return base.to_owned();
    }
    (2_usize..)
        .map(|n| {
            let suffix = format!("_{n}");
            let stem = &base[..base.len().min(MAX_PROPERTY_NAME_LEN - suffix.len())];
            format!("{stem}{suffix}")
        })
        .find(|candidate| !used.contains(candidate))
        .unwrap_or_else(|| base.to_owned())
}

/// Renames the top-level properties whose names the model API refuses, and the places that
/// name them (`required`, `dependentRequired`, `dependentSchemas`). Returns `(new name,
/// server's name)` pairs.
fn rename_properties(root: &mut Map<String, Value>) -> Vec<(String, String)> {
    // Every name the schema gives outside `properties` too (`required` may name a property
    // that only `additionalProperties` describes): a new name must not be taken for one.
    let mut named_elsewhere: HashSet<String> = HashSet::new();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(required) = root.get("required") {
        named_elsewhere.extend(strings(required));
    }
    for keyword in ["dependentRequired", "dependentSchemas"] {
        if let Some(Value::Object(map)) = root.get(keyword) {
            named_elsewhere.extend(map.keys().cloned());
            if keyword == "dependentRequired" {
                named_elsewhere.extend(map.values().flat_map(strings));
            }
        }
    }
    let Some(Value::Object(properties)) = root.get_mut("properties") else {
        return Vec::new();
    };
    if properties.keys().all(|k| is_api_property_name(k)) {
        return Vec::new();
    }
    let mut used: HashSet<String> = properties
        .keys()
        .filter(|k| is_api_property_name(k))
        .cloned()
        .chain(named_elsewhere)
        .collect();
    let mut renamed = Vec::new();
    for (name, schema) in std::mem::take(properties) {
        if is_api_property_name(&name) {
            properties.insert(name, schema);
            continue;
        }
        let new = unused_name(&api_property_name(&name), &used);
        used.insert(new.clone());
        properties.insert(new.clone(), schema);
        renamed.push((new, name));
    }
    let new_name: HashMap<&str, &str> = renamed
        .iter()
        .map(|(new, old)| (old.as_str(), new.as_str()))
        .collect();
    let rename = |name: &mut Value| {
        if let Some(new) = name.as_str().and_then(|n| new_name.get(n)) {
            *name = Value::String((*new).to_owned());
        }
    };
    if let Some(Value::Array(required)) = root.get_mut("required") {
        for name in required {
            rename(name);
        }
    }
    if let Some(Value::Object(deps)) = root.get_mut("dependentRequired") {
        for names in deps.values_mut().filter_map(Value::as_array_mut) {
            for name in names {
                rename(name);
            }
        }
    }
    for keyword in ["dependentRequired", "dependentSchemas"] {
        if let Some(Value::Object(map)) = root.get_mut(keyword) {
            *map = std::mem::take(map)
                .into_iter()
                .map(|(k, v)| match new_name.get(k.as_str()) {
                    Some(new) => ((*new).to_owned(), v),
                    None => (k, v),
                })
                .collect();
        }
    }
    renamed
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

    /// Whether `key` is a property name the Anthropic API takes: `^[a-zA-Z0-9_.-]{1,64}$`.
    fn api_key(key: &str) -> bool {
        (1..=64).contains(&key.len())
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    }

    /// Every `required` anywhere in `v` is an array.
    fn required_are_arrays(v: &Value) -> bool {
        match v {
            Value::Object(m) => m
                .iter()
                .all(|(k, v)| (k != "required" || v.is_array()) && required_are_arrays(v)),
            Value::Array(a) => a.iter().all(required_are_arrays),
            _ => true,
        }
    }

    #[test]
    fn property_names_the_api_refuses_are_renamed_and_nested_required_dropped() {
        let s = mcp_input_schema(&json!({"type": "object", "properties": {
            "$filter": {"type": "string"},
            "user name": {},
            "x": {"type": "string", "required": true}
        }}));
        let props = s["properties"].as_object().unwrap();
        assert!(props.keys().all(|k| api_key(k)), "{s}");
        assert!(required_are_arrays(&s), "{s}");
        assert_eq!(props.len(), 3, "{s}");
        assert_eq!(props["x"], json!({"type": "string"}));
    }

    /// A new name never takes one the schema gives elsewhere (`required` may name a property
    /// only `additionalProperties` describes): `required` would repeat it, and the argument
    /// of that name would be mapped to the renamed one.
    #[test]
    fn a_new_name_does_not_take_one_named_outside_properties() {
        let raw = json!({"type": "object", "properties": {"a b": {}},
            "required": ["a b", "a_b"], "dependentRequired": {"c_d": ["e_f"]}});
        let prepared = prepare_mcp_input_schema(&raw).unwrap();
        let new = &prepared.renamed[0].0;
        assert!(!["a_b", "c_d", "e_f"].contains(&new.as_str()), "{new}");
        assert_eq!(prepared.schema["required"], json!([new, "a_b"]));
        assert_eq!(input_schema_problem(&prepared.schema), None);
    }

    #[test]
    fn renamed_names_are_unique_short_and_followed_everywhere() {
        let long = format!("{}!", "a".repeat(70));
        let raw = json!({"type": "object", "properties": {
            "a b": {"type": "string"}, "a_b": {"type": "integer"}, "a-b": {}, "a\u{e9}b": {},
            long.clone(): {}, "": {}, "ok.name": {}
        }, "required": ["a b", "a_b", "nowhere$"],
           "dependentRequired": {"a b": ["a\u{e9}b"]},
           "dependentSchemas": {"a\u{e9}b": {"required": ["x"]}}});
        let prepared = prepare_mcp_input_schema(&raw).unwrap();
        let s = &prepared.schema;
        let props = s["properties"].as_object().unwrap();
        assert_eq!(props.len(), 7, "{s}");
        assert!(props.keys().all(|k| api_key(k)), "{s}");
        // Valid names are kept; the others never take them.
        for kept in ["a_b", "a-b", "ok.name"] {
            assert!(props.contains_key(kept), "{s}");
            assert!(!prepared.renamed.iter().any(|(_, old)| old == kept));
        }
        assert_eq!(props["a_b"], json!({"type": "integer"}));
        let new = |old: &str| {
            prepared
                .renamed
                .iter()
                .find(|(_, o)| o == old)
                .map(|(n, _)| n.clone())
                .unwrap_or_else(|| panic!("{old} not renamed: {:?}", prepared.renamed))
        };
        assert_eq!(props[&new("a b")], json!({"type": "string"}));
        assert!(new("a b").starts_with("a_b_"), "{}", new("a b"));
        assert_ne!(new("a b"), new("a\u{e9}b"));
        assert_eq!(new(&long).len(), 64);
        assert_eq!(new(""), "_");
        assert_eq!(
            s["required"],
            json!([new("a b"), "a_b", "nowhere$"]),
            "names that are no property stay"
        );
        assert_eq!(
            s["dependentRequired"],
            json!({new("a b"): [new("a\u{e9}b")]})
        );
        assert!(s["dependentSchemas"].get(new("a\u{e9}b")).is_some(), "{s}");
        // A schema without such names is not touched.
        let plain = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        assert_eq!(
            prepare_mcp_input_schema(&plain).unwrap(),
            McpInputSchema {
                schema: plain.clone(),
                renamed: Vec::new()
            }
        );
        assert_eq!(
            unused_name(&"x".repeat(64), &HashSet::from(["x".repeat(64)])),
            format!("{}_2", "x".repeat(62))
        );
    }

    #[test]
    fn what_is_not_sane_is_named() {
        assert_eq!(
            input_schema_problem(&json!({"type": "object", "properties": {"$x": {}}})).as_deref(),
            Some("the property name \"$x\" does not match ^[a-zA-Z0-9_.-]{1,64}$")
        );
        assert!(
            input_schema_problem(
                &json!({"type": "object", "properties": {"x": {"required": true}}})
            )
            .unwrap()
            .contains("/properties/x/required")
        );
        assert!(input_schema_problem(&json!({"type": "array", "properties": {}})).is_some());
        assert!(input_schema_problem(&json!({"type": "object"})).is_some());
    }

    /// Keywords and names that matter, and any others.
    fn schema_like() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        const KEYS: &[&str] = &[
            "type",
            "properties",
            "required",
            "items",
            "anyOf",
            "oneOf",
            "allOf",
            "$ref",
            "$defs",
            "definitions",
            "additionalProperties",
            "enum",
            "const",
            "minimum",
            "minLength",
            "multipleOf",
            "prefixItems",
            "not",
            "dependentRequired",
            "dependencies",
            "format",
            "description",
            "$filter",
            "a b",
            "x",
        ];
        const STRINGS: &[&str] = &[
            "object",
            "string",
            "any",
            "file",
            "#/$defs/x",
            "#/definitions/x",
            "x",
            "$filter",
            "int64",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-10.0..10.0_f64).prop_map(Value::from),
            proptest::sample::select(STRINGS).prop_map(|s| Value::String(s.to_owned())),
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(
                    prop_oneof![
                        3 => proptest::sample::select(KEYS).prop_map(str::to_owned),
                        1 => any::<String>()
                    ],
                    inner,
                    0..5
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Whatever a server sends, the schema comes out sane: no tool is left out in
        /// practice, and none breaks the model API's requests.
        #[test]
        fn any_schema_comes_out_sane(raw in schema_like()) {
            let prepared = prepare_mcp_input_schema(&raw);
            proptest::prop_assert!(prepared.is_ok(), "{raw} -> {prepared:?}");
            let prepared = prepared.unwrap();
            for (new, old) in &prepared.renamed {
                proptest::prop_assert!(api_key(new));
                proptest::prop_assert!(!api_key(old));
            }
        }
    }
}
