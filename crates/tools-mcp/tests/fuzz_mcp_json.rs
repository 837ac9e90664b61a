//! Fuzzing `.mcp.json` parsing (on stable, with proptest): arbitrary file text, and server
//! entries built from the real fields with values of every type, `${VAR}` expansions and
//! unknown keys. Properties: no panic; every problem is a diagnostic with a message; every
//! server that loads has a non-empty, unreserved name, and a warning when the name holds
//! other characters than letters, digits, `-` and `_`; loading is deterministic.
//!
//! `TOOLWRIGHT_FUZZ_SECS=60 cargo test -p tools-mcp --test fuzz_mcp_json` (or `cargo xtask
//! fuzz mcp-json`) runs for a minute instead of the quick pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tools_mcp::{ConfigLoader, ConfigScope, parse_mcp_json};

const KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "url",
    "headers",
    "timeout",
    "alwaysLoad",
    "cwd",
    "headersHelper",
    "oauth",
    "unknown",
];

const STRINGS: &[&str] = &[
    "stdio",
    "http",
    "sse",
    "ws",
    "streamable-http",
    "node",
    "npx",
    "${HOME}",
    "${MISSING}",
    "${MISSING:-fallback}",
    "${}",
    "${A:-${B}}",
    "$HOME",
    "https://example.com/mcp",
    "http://127.0.0.1:1/mcp",
    "",
    " ",
    "é",
    "\u{0}",
    "-y",
    "${PORT:-8080}",
];

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        proptest::sample::select(STRINGS).prop_map(|s| Value::String(s.to_owned())),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    proptest::sample::select(KEYS).prop_map(str::to_owned),
                    "[A-Z_]{1,6}"
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn server_entry() -> impl Strategy<Value = Value> {
    proptest::collection::vec((proptest::sample::select(KEYS), value()), 0..7).prop_map(|kv| {
        let mut m = Map::new();
        for (k, v) in kv {
            m.insert(k.to_owned(), v);
        }
        Value::Object(m)
    })
}

fn document() -> impl Strategy<Value = Value> {
    let name = prop_oneof!["[a-z_-]{1,10}", any::<String>(), Just(String::new())];
    let servers =
        proptest::collection::vec((name, prop_oneof![4 => server_entry(), 1 => value()]), 0..5)
            .prop_map(|v| Value::Object(v.into_iter().collect()));
    prop_oneof![
        4 => servers.prop_map(|s| json!({"mcpServers": s})),
        1 => value(),
        1 => value().prop_map(|v| json!({"mcpServers": v})),
    ]
}

#[path = "../../../tests/support/fuzz.rs"]
mod fuzz_support;
use fuzz_support::fuzz;

fn env() -> tools_mcp::EnvLookup {
    Arc::new(|name: &str| match name {
        "HOME" => Some("/home/u".to_owned()),
        "PORT" => Some("9".to_owned()),
        "A" => Some("a".to_owned()),
        _ => None,
    })
}

#[test]
fn fuzz_mcp_json_documents() {
    let dir = tempfile::tempdir().unwrap();
    fuzz(file!(), 1500, document(), |doc| {
        let (servers, diags) = parse_mcp_json(&doc, ConfigScope::Project, dir.path());
        for d in &diags {
            prop_assert!(!d.message.trim().is_empty(), "{:?}", d);
            prop_assert!(!d.to_string().trim().is_empty());
        }
        for s in &servers {
            prop_assert!(loadable(&s.name), "loaded a server named {:?}", s.name);
            prop_assert!(
                is_valid_server_name(&s.name)
                    || diags
                        .iter()
                        .any(|d| d.server.as_deref() == Some(s.name.as_str())
                            && d.message.contains("should use only letters")),
                "no warning for the server named {:?}",
                s.name
            );
        }
        let again = parse_mcp_json(&doc, ConfigScope::Project, dir.path());
        prop_assert_eq!(
            format!("{servers:?}{diags:?}"),
            format!("{:?}{:?}", again.0, again.1)
        );
        Ok(())
    });
}

#[test]
fn fuzz_mcp_json_files() {
    let dir = tempfile::tempdir().unwrap();
    let text = prop_oneof![
        document().prop_map(|d| d.to_string()),
        document().prop_map(|d| serde_json::to_string_pretty(&d).unwrap()),
        (document(), any::<prop::sample::Index>()).prop_map(|(d, i)| {
            // Cut short, as a half-saved file would be.
            let t = d.to_string();
            t.chars().take(i.index(t.chars().count() + 1)).collect()
        }),
        any::<String>(),
        document().prop_map(|d| format!("\u{feff}{d}")),
        proptest::collection::vec(any::<u8>(), 0..64)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ];
    fuzz(file!(), 600, text, |text| {
        std::fs::write(dir.path().join(".mcp.json"), &text).unwrap();
        let mut loader = ConfigLoader::new(dir.path()).with_env(env());
        loader.claude_json = None;
        let (servers, diags) = loader.load();
        for d in &diags {
            prop_assert!(!d.message.trim().is_empty(), "{:?}", d);
        }
        for s in &servers {
            prop_assert!(loadable(&s.name), "loaded a server named {:?}", s.name);
        }
        // Text that is not JSON at all is reported, not ignored (a byte order mark before
        // JSON is not a problem, and blank text is a file with no servers, as a blank
        // settings file is `{}`).
        let json = text.strip_prefix('\u{feff}').unwrap_or(&text);
        if !json.trim().is_empty() && serde_json::from_str::<Value>(json).is_err() {
            prop_assert!(
                !diags.is_empty(),
                "broken .mcp.json without a diagnostic: {:?}",
                text
            );
        }
        Ok(())
    });
}

/// A server name that may load: not empty, not one Claude Code reserves.
fn loadable(name: &str) -> bool {
    !name.is_empty() && !tools_mcp::RESERVED_SERVER_NAMES.contains(&name)
}

/// A well-formed server name: ASCII letters, digits, `-` and `_`.
fn is_valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}
