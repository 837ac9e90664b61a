//! The `otlp` feature end to end: `toolwright run` with `OTEL_EXPORTER_OTLP_ENDPOINT` pointing
//! at a stand-in collector on loopback exports the call's span tree and the tool-duration
//! histogram over OTLP/HTTP (protobuf), and a collector that is not there costs a notice,
//! never the results.
//!
//! Runs only in builds with the feature: `cargo test -p toolwright --features otlp --test otlp`
//! (`cargo xtask ci` does).
#![cfg(feature = "otlp")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

/// One request the collector received: path, content type, body.
type Received = Arc<Mutex<Vec<(String, String, Vec<u8>)>>>;

/// A stand-in OTLP/HTTP collector: answers every POST with 200 and keeps what it got.
fn collector() -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let received: Received = Arc::default();
    let keep = Arc::clone(&received);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let keep = Arc::clone(&keep);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                loop {
                    let mut request_line = String::new();
                    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = request_line
                        .split_whitespace()
                        .nth(1)
                        .unwrap_or("")
                        .to_owned();
                    let (mut length, mut content_type) = (0usize, String::new());
                    loop {
                        let mut line = String::new();
                        reader.read_line(&mut line).unwrap();
                        let line = line.trim_end();
                        if line.is_empty() {
                            break;
                        }
                        let (name, value) = line.split_once(':').unwrap_or((line, ""));
                        match name.to_ascii_lowercase().as_str() {
                            "content-length" => length = value.trim().parse().unwrap(),
                            "content-type" => value.trim().clone_into(&mut content_type),
                            _ => {}
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    keep.lock().unwrap().push((path, content_type, body));
                    let stream = reader.get_mut();
                    stream
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                        .unwrap();
                }
            });
        }
    });
    (url, received)
}

fn run_one_read(endpoint: &str) -> Output {
    run_one_read_with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)])
}

/// `toolwright run` of one Read with the `OTEL_*` variables `vars` (and the test's service
/// name unless `vars` name the service some other way).
fn run_one_read_with(vars: &[(&str, &str)]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hello.txt");
    std::fs::write(&file, "hello\n").unwrap();
    let turn = serde_json::json!({
        "type": "tool_use", "id": "toolu_1", "name": "Read",
        "input": {"file_path": file},
    })
    .to_string();
    let names_service = vars
        .iter()
        .any(|(k, _)| *k == "OTEL_SERVICE_NAME" || *k == "OTEL_RESOURCE_ATTRIBUTES");
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolwright"));
    // What the test's own environment has is not the test's.
    for var in [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
    ] {
        command.env_remove(var);
    }
    if !names_service {
        command.env("OTEL_SERVICE_NAME", "toolwright-test");
    }
    let mut child = command
        .args(["run", "--json", "-"])
        .current_dir(dir.path())
        .env("CLAUDE_CONFIG_DIR", dir.path().join(".no-user-config"))
        .envs(vars.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(turn.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn spans_and_the_duration_histogram_reach_the_collector() {
    let (url, received) = collector();
    let out = run_one_read(&url);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("hello"), "{stdout}");
    let received = received.lock().unwrap();
    let traces: Vec<_> = received.iter().filter(|r| r.0 == "/v1/traces").collect();
    let metrics: Vec<_> = received.iter().filter(|r| r.0 == "/v1/metrics").collect();
    assert!(
        !traces.is_empty() && !metrics.is_empty(),
        "paths received: {:?}",
        received.iter().map(|r| &r.0).collect::<Vec<_>>()
    );
    assert!(traces.iter().all(|t| t.1 == "application/x-protobuf"));
    // Protobuf keeps strings as UTF-8 bytes: the span name, its GenAI attributes and the
    // service name are visible in the body.
    let spans: Vec<u8> = traces.iter().flat_map(|t| t.2.clone()).collect();
    for needle in [
        "execute_tool Read",
        "gen_ai.tool.name",
        "gen_ai.tool.call.id",
        "toolu_1",
        "permission",
        "execution",
        "toolwright-test",
    ] {
        assert!(
            contains(&spans, needle),
            "`{needle}` not in the exported spans"
        );
    }
    let metrics: Vec<u8> = metrics.iter().flat_map(|t| t.2.clone()).collect();
    assert!(contains(&metrics, "toolwright.tool.duration"));
    assert!(contains(&metrics, "Read"));
}

#[test]
fn a_missing_collector_costs_a_notice_not_the_results() {
    // A port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = run_one_read(&format!("http://127.0.0.1:{port}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let json: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(json["content"][0]["tool_use_id"], "toolu_1");
    assert_ne!(json["content"][0]["is_error"], true, "{stdout}");
    assert!(
        json["content"][0]["content"].to_string().contains("hello"),
        "{stdout}"
    );
}

/// A collector that is not there is named at exit, once: the spans it lost are not lost
/// unnoticed.
#[test]
fn a_missing_collector_is_reported_at_exit() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = run_one_read(&format!("http://127.0.0.1:{port}"));
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The spans' export failure, not only the metrics' final flush, and how many spans
    // it cost (a Read's call makes its span and its hooks, permission and execution ones).
    assert!(stderr.contains("exporting spans failed"), "{stderr}");
    assert!(
        stderr.contains(" spans did not reach the telemetry collector"),
        "{stderr}"
    );
    // With the collector there, none is said lost.
    let (url, _received) = collector();
    let out = run_one_read(&url);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("did not reach"), "{stderr}");
}

/// The standard variables choose what is exported: a signal's own endpoint exports that
/// signal only, `OTEL_TRACES_EXPORTER=none` and `OTEL_SDK_DISABLED=true` turn export off.
#[test]
fn the_standard_variables_choose_the_signals() {
    let paths = |vars: &[(&str, &str)]| {
        let out = run_one_read_with(vars);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    let (url, received) = collector();
    paths(&[(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        &format!("{url}/v1/traces"),
    )]);
    let got: Vec<String> = received
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.0.clone())
        .collect();
    assert!(got.iter().any(|p| p == "/v1/traces"), "{got:?}");
    assert!(!got.iter().any(|p| p == "/v1/metrics"), "{got:?}");

    let (url, received) = collector();
    paths(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_TRACES_EXPORTER", "none"),
    ]);
    let got: Vec<String> = received
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.0.clone())
        .collect();
    assert!(!got.iter().any(|p| p == "/v1/traces"), "{got:?}");
    assert!(got.iter().any(|p| p == "/v1/metrics"), "{got:?}");

    let (url, received) = collector();
    paths(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_SDK_DISABLED", "true"),
    ]);
    assert!(received.lock().unwrap().is_empty());
}

/// A protocol this build does not have is said, not silently replaced.
#[test]
fn a_grpc_protocol_is_said_on_stderr() {
    let (url, _received) = collector();
    let out = run_one_read_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported"),
        "{stderr}"
    );
}

/// `service.name` from `OTEL_RESOURCE_ATTRIBUTES` is kept (the default `toolwright` only
/// applies when nothing names the service).
#[test]
fn the_service_name_from_resource_attributes_is_kept() {
    let (url, received) = collector();
    let out = run_one_read_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "service.name=from-attributes,team=tools",
        ),
    ]);
    assert!(out.status.success());
    let spans: Vec<u8> = received
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.0 == "/v1/traces")
        .flat_map(|r| r.2.clone())
        .collect();
    assert!(contains(&spans, "from-attributes"));
    assert!(contains(&spans, "team"));
}
