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
//! - keyword values of the wrong JSON type are repaired at every depth (a model API refuses
//!   the whole request over one tool whose schema is not valid draft 2020-12): a `required`
//!   that is not an array (`"required": true` on a property, OpenAPI style) is dropped, an
//!   unknown `type` (`"any"`, `"file"`) is dropped (no type constraint), `properties` entries
//!   that are not schemas become `{}`, and so on ([`schema_problem`] says what is still
//!   wrong, if anything);
//! - a top-level `allOf`/`anyOf`/`oneOf` is merged into the root (the API refuses one
//!   there): its branches' properties united, `required` as every branch would have it;
//! - the top level is `type: object` with a `properties` map.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

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
        flatten_root_combinators(map);
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
                        let v = self.rewrite_keyword(&k, v, depth);
                        merged.insert(k, v);
                    }
                    repair_keywords(&mut merged);
                    return Value::Object(merged);
                }
                upgrade_draft07(&mut map);
                if let Some(Value::String(format)) = map.get("format")
                    && !STANDARD_FORMATS.contains(&format.as_str())
                {
                    map.remove("format");
                }
                let mut map = map
                    .into_iter()
                    .map(|(k, v)| {
                        let v = self.rewrite_keyword(&k, v, depth);
                        (k, v)
                    })
                    .collect();
                repair_keywords(&mut map);
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

    /// The value of keyword `k` of a schema at `depth`, rewritten where it holds schemas.
    fn rewrite_keyword(&mut self, k: &str, v: Value, depth: usize) -> Value {
        match k {
            // Maps whose values are schemas (their keys are names, not keywords).
            "properties" | "patternProperties" | "dependentSchemas" | "$defs" | "definitions" => {
                match v {
                    Value::Object(props) => Value::Object(
                        props
                            .into_iter()
                            .map(|(pk, pv)| (pk, self.rewrite(pv, depth + 1)))
                            .collect(),
                    ),
                    other => other,
                }
            }
            // Values, not schemas (`example` is OpenAPI's).
            "enum" | "const" | "default" | "examples" | "example" | "required"
            | "dependentRequired" => v,
            // Keywords that hold schemas.
            _ if matches!(
                keyword_kind(k),
                Some(Kind::Schema | Kind::SchemaArray | Kind::SchemaTuple)
            ) =>
            {
                self.rewrite(v, depth + 1)
            }
            // Anything else (`x-extra`, a `discriminator`) is a value of its own: whatever
            // keys it has are not keywords.
            _ => v,
        }
    }
}

/// The names `type` may hold.
const TYPE_NAMES: &[&str] = &[
    "array", "boolean", "integer", "null", "number", "object", "string",
];

/// What the value of a keyword must be in draft 2020-12 (its meta-schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A schema: an object or a boolean.
    Schema,
    /// An object whose values are schemas.
    SchemaMap,
    /// A non-empty array of schemas, where each one's position counts (`prefixItems`).
    SchemaTuple,
    /// A non-empty array of schemas.
    SchemaArray,
    /// A string.
    Str,
    /// A number.
    Number,
    /// A number above zero.
    Positive,
    /// A non-negative integer.
    Count,
    /// A boolean.
    Bool,
    /// An array of anything.
    Array,
    /// An array of distinct strings.
    Names,
    /// An object whose values are arrays of distinct strings.
    NamesMap,
    /// A type name, or a non-empty array of distinct ones.
    Type,
}

impl Kind {
    fn expected(self) -> &'static str {
        match self {
            Self::Schema => "a schema (an object or a boolean)",
            Self::SchemaMap => "an object whose values are schemas",
            Self::SchemaTuple | Self::SchemaArray => "a non-empty array of schemas",
            Self::Str => "a string",
            Self::Number => "a number",
            Self::Positive => "a number above zero",
            Self::Count => "a non-negative integer",
            Self::Bool => "a boolean",
            Self::Array => "an array",
            Self::Names => "an array of distinct strings",
            Self::NamesMap => "an object whose values are arrays of distinct strings",
            Self::Type => {
                "a type name (array, boolean, integer, null, number, object, string) or an array of distinct ones"
            }
        }
    }
}

/// The kind of value `keyword` takes; `None` for a keyword draft 2020-12 does not define
/// (any value is valid there).
fn keyword_kind(keyword: &str) -> Option<Kind> {
    Some(match keyword {
        "items"
        | "additionalProperties"
        | "contains"
        | "propertyNames"
        | "not"
        | "if"
        | "then"
        | "else"
        | "unevaluatedItems"
        | "unevaluatedProperties"
        | "contentSchema" => Kind::Schema,
        "properties" | "patternProperties" | "dependentSchemas" | "$defs" => Kind::SchemaMap,
        "prefixItems" => Kind::SchemaTuple,
        "allOf" | "anyOf" | "oneOf" => Kind::SchemaArray,
        "title" | "description" | "$comment" | "pattern" | "format" | "contentMediaType"
        | "contentEncoding" | "$ref" | "$id" | "$schema" | "$anchor" | "$dynamicRef"
        | "$dynamicAnchor" => Kind::Str,
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => Kind::Number,
        "multipleOf" => Kind::Positive,
        "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties"
        | "minContains" | "maxContains" => Kind::Count,
        "uniqueItems" | "readOnly" | "writeOnly" | "deprecated" => Kind::Bool,
        "enum" | "examples" => Kind::Array,
        "required" => Kind::Names,
        "dependentRequired" => Kind::NamesMap,
        "type" => Kind::Type,
        _ => return None,
    })
}

fn is_schema(v: &Value) -> bool {
    v.is_object() || v.is_boolean()
}

fn is_count(v: &Value) -> bool {
    v.is_u64() || v.as_f64().is_some_and(|n| n >= 0.0 && n.fract() == 0.0)
}

fn distinct_strings(items: &[Value]) -> bool {
    let mut seen = HashSet::new();
    items
        .iter()
        .all(|v| v.as_str().is_some_and(|s| seen.insert(s)))
}

/// Keeps the distinct strings of `items` that `keep` accepts, in order.
fn retain_distinct_strings(items: &mut Vec<Value>, keep: impl Fn(&str) -> bool) {
    let mut seen = HashSet::new();
    items.retain(|v| {
        v.as_str()
            .is_some_and(|s| keep(s) && seen.insert(s.to_owned()))
    });
}

/// Whether `v` is what a keyword of `kind` takes (one level deep: the schemas it holds are
/// checked on their own).
fn value_ok(kind: Kind, v: &Value) -> bool {
    match kind {
        Kind::Schema => is_schema(v),
        Kind::SchemaMap => v.as_object().is_some_and(|m| m.values().all(is_schema)),
        Kind::SchemaTuple | Kind::SchemaArray => v
            .as_array()
            .is_some_and(|a| !a.is_empty() && a.iter().all(is_schema)),
        Kind::Str => v.is_string(),
        Kind::Number => v.is_number(),
        Kind::Positive => v.as_f64().is_some_and(|n| n > 0.0),
        Kind::Count => is_count(v),
        Kind::Bool => v.is_boolean(),
        Kind::Array => v.is_array(),
        Kind::Names => v.as_array().is_some_and(|a| distinct_strings(a)),
        Kind::NamesMap => v.as_object().is_some_and(|m| {
            m.values()
                .all(|n| n.as_array().is_some_and(|a| distinct_strings(a)))
        }),
        Kind::Type => match v {
            Value::String(t) => TYPE_NAMES.contains(&t.as_str()),
            Value::Array(a) => {
                !a.is_empty()
                    && distinct_strings(a)
                    && a.iter()
                        .all(|t| t.as_str().is_some_and(|t| TYPE_NAMES.contains(&t)))
            }
            _ => false,
        },
    }
}

/// Repairs the keywords of one schema object whose values have the wrong JSON type: what can
/// be kept is (the strings of a `required`, the distinct names of a `type` array, the
/// schemas of an `anyOf`, with `{}` for an entry that is none), the rest is dropped. A dropped keyword only ever loosens the schema
/// (`"type": "any"` means no type constraint).
fn repair_keywords(map: &mut Map<String, Value>) {
    map.retain(|k, v| match keyword_kind(k) {
        None => true,
        Some(kind) if value_ok(kind, v) => true,
        Some(kind) => repair_value(kind, v),
    });
}

/// Repairs `v`, a value of a keyword of `kind`; `false` when the keyword is to be dropped.
fn repair_value(kind: Kind, v: &mut Value) -> bool {
    match (kind, v) {
        (Kind::SchemaMap, Value::Object(m)) => {
            for s in m.values_mut() {
                if !is_schema(s) {
                    *s = Value::Object(Map::new());
                }
            }
            true
        }
        // A position that is not a schema accepts anything.
        (Kind::SchemaTuple, Value::Array(a)) if !a.is_empty() => {
            for s in a.iter_mut() {
                if !is_schema(s) {
                    *s = Value::Object(Map::new());
                }
            }
            true
        }
        // An entry that is not a schema accepts anything: `{}` in its place loosens an
        // `anyOf` rather than narrowing it to the other entries.
        (Kind::SchemaArray, Value::Array(a)) if !a.is_empty() => {
            for s in a.iter_mut() {
                if !is_schema(s) {
                    *s = Value::Object(Map::new());
                }
            }
            true
        }
        (Kind::Names, Value::Array(a)) => {
            retain_distinct_strings(a, |_| true);
            true
        }
        (Kind::NamesMap, Value::Object(m)) => {
            m.retain(|_, names| match names {
                Value::Array(a) => {
                    retain_distinct_strings(a, |_| true);
                    true
                }
                _ => false,
            });
            true
        }
        // Repeated names are dropped; a name that is no type (`any`) drops the keyword: no
        // type constraint, never a narrower one (`["any", "null"]` is not "only null").
        (Kind::Type, Value::Array(a)) => {
            if !a
                .iter()
                .all(|t| t.as_str().is_some_and(|t| TYPE_NAMES.contains(&t)))
            {
                return false;
            }
            retain_distinct_strings(a, |_| true);
            !a.is_empty()
        }
        _ => false,
    }
}

/// What keeps `schema` from being a valid draft 2020-12 schema in the keywords
/// [`normalize_schema`] repairs, with where it is (`/properties/a/required: ...`); `None`
/// when nothing does. Keywords draft 2020-12 does not define are not looked at.
pub fn schema_problem(schema: &Value) -> Option<String> {
    check_schema(schema, "", 0)
}

fn check_schema(schema: &Value, path: &str, depth: usize) -> Option<String> {
    let at = |path: &str| {
        if path.is_empty() {
            "the root".to_owned()
        } else {
            path.to_owned()
        }
    };
    if depth > 2 * MAX_DEPTH {
        return Some(format!("{}: nested too deeply", at(path)));
    }
    let map = match schema {
        Value::Bool(_) => return None,
        Value::Object(map) => map,
        other => {
            return Some(format!(
                "{}: a schema must be an object or a boolean, not {}",
                at(path),
                crate::json_type(other)
            ));
        }
    };
    for (k, v) in map {
        let Some(kind) = keyword_kind(k) else {
            continue;
        };
        let here = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
        if !value_ok(kind, v) {
            return Some(format!("{here}: must be {}", kind.expected()));
        }
        let problem = match (kind, v) {
            (Kind::Schema, _) => check_schema(v, &here, depth + 1),
            (Kind::SchemaMap, Value::Object(m)) => m.iter().find_map(|(name, s)| {
                let name = name.replace('~', "~0").replace('/', "~1");
                check_schema(s, &format!("{here}/{name}"), depth + 1)
            }),
            (Kind::SchemaTuple | Kind::SchemaArray, Value::Array(a)) => a
                .iter()
                .enumerate()
                .find_map(|(i, s)| check_schema(s, &format!("{here}/{i}"), depth + 1)),
            _ => None,
        };
        if problem.is_some() {
            return problem;
        }
    }
    None
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
    // The input type's doc comment is written for Rust readers (`Input of the Bash tool`,
    // links to constants); the tool's prompt describes the tool to the model, and Claude
    // Code's input schemas have no description at the top.
    root.remove("description");
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

/// The smallest object `schema` accepts, near enough: every required property with a
/// placeholder of its type (the first `enum` value, the `const`, `"x"`, `1`, `false`, `[]`,
/// `{}`). A tool's safety flags are per input: read on this probe, a tool whose flags hold
/// whatever the input (Read is read-only) gives its own answer, and one whose flags depend
/// on the input (Bash) the answer for an unknown input, the cautious one.
pub fn probe_input(schema: &Value) -> Value {
    let mut input = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let property = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        input.insert(name.to_owned(), placeholder(property));
    }
    Value::Object(input)
}

fn placeholder(property: &Value) -> Value {
    if let Some(value) = property.get("const") {
        return value.clone();
    }
    if let Some(first) = property
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let kind = match property.get("type") {
        Some(Value::String(t)) => t.as_str(),
        // `["string", "null"]` and the like: the first non-null type.
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ => "",
    };
    match kind {
        "string" => json!("x"),
        "integer" | "number" => {
            let min = property
                .get("minimum")
                .and_then(Value::as_f64)
                .unwrap_or(1.0);
            if kind == "integer" {
                json!(min.max(1.0).ceil() as i64)
            } else {
                json!(min.max(1.0))
            }
        }
        "boolean" => json!(false),
        "array" => json!([]),
        "object" => probe_input(property),
        "null" => Value::Null,
        _ => json!("x"),
    }
}

/// A root-level `allOf`/`anyOf`/`oneOf` merged into the root (the Anthropic API refuses
/// one: "input_schema does not support oneOf, allOf, or anyOf at the top level"): the
/// branches' properties are united, a property the branches describe differently keeps
/// each description (`anyOf`, or `allOf` under `allOf`); `required` is the union for
/// `allOf` and the intersection for `anyOf`/`oneOf` (a property is required only when every
/// alternative requires it). A serde enum used as a typed tool's input (or flattened into
/// it) comes out of schemars so; so do many MCP servers' schemas.
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

    /// Counts the nodes of a JSON value.
    fn nodes(v: &Value) -> usize {
        1 + match v {
            Value::Object(m) => m.values().map(nodes).sum(),
            Value::Array(a) => a.iter().map(nodes).sum(),
            _ => 0,
        }
    }

    #[test]
    fn a_probe_fills_every_required_field_with_its_type() {
        let schema = json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "limit": {"type": "integer", "minimum": 3},
                "mode": {"type": "string", "enum": ["content", "files"]},
                "flag": {"type": ["boolean", "null"]},
                "optional": {"type": "string"}
            },
            "required": ["file_path", "limit", "mode", "flag"]
        });
        assert_eq!(
            probe_input(&schema),
            json!({"file_path": "x", "limit": 3, "mode": "content", "flag": false})
        );
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

    #[test]
    fn keywords_of_the_wrong_type_are_repaired_at_every_depth() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "required": true},
                "b": {"type": "any", "description": 5},
                "c": {"type": ["string", "file", "string", 3]},
                "d": {"type": "object", "required": ["x", 1, "x"], "properties": {
                    "x": {"type": "integer", "minimum": "0", "maxLength": -1, "multipleOf": 0}
                }, "additionalProperties": "no"},
                "e": {"type": "array", "items": 5, "uniqueItems": "yes", "minItems": 1.0},
                "f": {"anyOf": [5, {"type": "string"}], "oneOf": "x", "allOf": []},
                "g": {"prefixItems": [1, {"type": "string"}], "enum": "a", "not": null},
                "h": 7,
                "i": {"$defs": {"D": {"type": "nonsense"}}, "dependentRequired": {"a": "b", "c": ["d", "d"]}}
            },
            "required": "a"
        });
        assert!(schema_problem(&schema).is_some());
        let out = normalize_schema(schema);
        assert_eq!(schema_problem(&out), None, "{out}");
        let p = &out["properties"];
        assert_eq!(p["a"], json!({"type": "string"}));
        assert_eq!(p["b"], json!({}));
        // A name that is no type drops the whole `type`: never narrowed to the others.
        assert_eq!(p["c"], json!({}));
        assert_eq!(
            p["d"],
            json!({"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}}})
        );
        assert_eq!(p["e"], json!({"type": "array", "minItems": 1.0}));
        // An entry that is no schema accepts anything.
        assert_eq!(p["f"], json!({"anyOf": [{}, {"type": "string"}]}));
        assert_eq!(p["g"], json!({"prefixItems": [{}, {"type": "string"}]}));
        assert_eq!(p["h"], json!({}));
        assert_eq!(
            p["i"],
            json!({"$defs": {"D": {}}, "dependentRequired": {"c": ["d"]}})
        );
        assert!(out.get("required").is_none());
    }

    #[test]
    fn valid_schemas_are_left_alone_and_values_are_not_schemas() {
        let schema = json!({
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["any", "file"], "default": "any"},
                "required": {"type": ["boolean", "null"], "examples": [{"required": true}]},
                "o": {"type": "object", "example": {"type": "any", "required": 1},
                      "properties": {"items": {"const": {"items": 5}}}, "x-extra": {"required": "kept?"}},
                "r": {"$ref": "#/$defs/R", "required": ["z"], "properties": {"type": {"type": "string"}}}
            },
            "$defs": {"R": {"type": "object"}},
            "required": ["type"]
        });
        let out = normalize_schema(schema.clone());
        assert_eq!(schema_problem(&out), None, "{out}");
        for k in ["type", "required"] {
            assert_eq!(out["properties"][k], schema["properties"][k]);
        }
        assert_eq!(
            out["properties"]["o"]["example"],
            json!({"type": "any", "required": 1})
        );
        assert_eq!(
            out["properties"]["o"]["properties"]["items"],
            json!({"const": {"items": 5}})
        );
        // A keyword draft 2020-12 does not define holds a value, not a schema.
        assert_eq!(
            out["properties"]["o"]["x-extra"],
            json!({"required": "kept?"})
        );
        // `$ref` siblings are keywords like any others: `properties` holds names.
        assert_eq!(
            out["properties"]["r"],
            json!({"type": "object", "required": ["z"], "properties": {"type": {"type": "string"}}})
        );
        assert_eq!(out["required"], json!(["type"]));
    }

    #[test]
    fn schema_problem_says_where() {
        assert_eq!(
            schema_problem(&json!({"properties": {"a/b": {"required": true}}})).as_deref(),
            Some("/properties/a~1b/required: must be an array of distinct strings")
        );
        assert_eq!(
            schema_problem(&json!({"anyOf": [{"type": "any"}]})).as_deref(),
            Some(
                "/anyOf/0/type: must be a type name (array, boolean, integer, null, number, object, string) or an array of distinct ones"
            )
        );
        assert_eq!(
            schema_problem(&json!(5)).as_deref(),
            Some("the root: a schema must be an object or a boolean, not number")
        );
        assert_eq!(
            schema_problem(&json!({"x-anything": {"required": 1}})),
            None
        );
    }
}
