//! The `otlp` feature end to end: `toolwright run` and `toolwright serve` with
//! `CLAUDE_CODE_ENABLE_TELEMETRY=1` and an OTLP endpoint pointing at a stand-in collector on
//! loopback export the calls' span trees, the tool-duration histogram and (with
//! `OTEL_LOGS_EXPORTER=otlp`) Claude Code's `tool_decision` and `tool_result` log records over
//! OTLP/HTTP (protobuf); a collector that is not there, hangs or fails costs a plain notice,
//! never the results; what the settings get wrong is said.
//!
//! Runs only in builds with the feature: `cargo test -p toolwright --features otlp --test otlp`
//! (`cargo xtask ci` does).
#![cfg(feature = "otlp")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/binary.rs"]
mod binary;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request the collector received.
#[derive(Debug, Clone)]
struct Request {
    path: String,
    content_type: String,
    content_encoding: String,
    /// Every header, its name in lower case.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

type Received = Arc<Mutex<Vec<Request>>>;

/// How the stand-in collector answers.
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// 200, at once.
    Ok,
    /// Reads the request and never answers.
    Hang,
    /// This status, at once.
    Status(u16),
}

/// A stand-in OTLP/HTTP collector: answers every POST with 200 and keeps what it got.
fn collector() -> (String, Received) {
    collector_answering(Mode::Ok)
}

fn collector_answering(mode: Mode) -> (String, Received) {
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
                    let (mut length, mut content_type, mut content_encoding) =
                        (0usize, String::new(), String::new());
                    let mut headers = Vec::new();
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let line = line.trim_end();
                        if line.is_empty() {
                            break;
                        }
                        let (name, value) = line.split_once(':').unwrap_or((line, ""));
                        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
                        match name.to_ascii_lowercase().as_str() {
                            "content-length" => length = value.trim().parse().unwrap(),
                            "content-type" => value.trim().clone_into(&mut content_type),
                            "content-encoding" => value.trim().clone_into(&mut content_encoding),
                            _ => {}
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    keep.lock().unwrap().push(Request {
                        path,
                        content_type,
                        content_encoding,
                        headers,
                        body,
                    });
                    let answer = match mode {
                        Mode::Ok => "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n".to_owned(),
                        Mode::Status(code) => {
                            format!("HTTP/1.1 {code} Failed\r\ncontent-length: 0\r\n\r\n")
                        }
                        Mode::Hang => {
                            std::thread::sleep(Duration::from_secs(600));
                            return;
                        }
                    };
                    if reader.get_mut().write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, received)
}

/// A loopback port nobody listens on.
fn dead_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The bodies the collector received on `path`.
fn bodies(received: &Received, path: &str) -> Vec<Vec<u8>> {
    received
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.path == path)
        .map(|r| r.body.clone())
        .collect()
}

fn paths(received: &Received) -> Vec<String> {
    received
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.path.clone())
        .collect()
}

/// A `toolwright` command with the test's own `OTEL_*` variables and telemetry switch
/// removed, telemetry switched on (unless `vars` say otherwise) and the test's service name
/// (unless `vars` name the service some other way), then `vars`.
fn toolwright(dir: &Path, vars: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolwright"));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        if name.starts_with("OTEL_") || name == "CLAUDE_CODE_ENABLE_TELEMETRY" {
            command.env_remove(name);
        }
    }
    let names = |var: &str| vars.iter().any(|(k, _)| *k == var);
    if !names("OTEL_SERVICE_NAME") && !names("OTEL_RESOURCE_ATTRIBUTES") {
        command.env("OTEL_SERVICE_NAME", "toolwright-test");
    }
    if !names("CLAUDE_CODE_ENABLE_TELEMETRY") {
        command.env("CLAUDE_CODE_ENABLE_TELEMETRY", "1");
    }
    command
        .current_dir(dir)
        .env("CLAUDE_CONFIG_DIR", dir.join(".no-user-config"))
        .envs(vars.iter().copied());
    command
}

/// `toolwright run --json -` of the JSONL `turn` in `dir`, with `args` and `vars`.
fn run_turn(dir: &Path, turn: &str, args: &[&str], vars: &[(&str, &str)]) -> Output {
    binary::output_with_input(
        toolwright(dir, vars)
            .args(["run", "--json"])
            .args(args)
            .arg("-"),
        turn.as_bytes(),
    )
}

fn run_one_read(endpoint: &str) -> Output {
    run_one_read_with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)])
}

/// `toolwright run` of one Read with the `OTEL_*` variables `vars`.
fn run_one_read_with(vars: &[(&str, &str)]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hello.txt");
    std::fs::write(&file, "hello\n").unwrap();
    let turn = serde_json::json!({
        "type": "tool_use", "id": "toolu_1", "name": "Read",
        "input": {"file_path": file},
    })
    .to_string();
    run_turn(dir.path(), &turn, &[], vars)
}

/// `toolwright serve` over stdio in `dir` with `args` and `vars`: initializes, makes the
/// `tools/call`s `calls` (name, arguments) one after the other, then closes its input and
/// waits for it to exit. Its answers (one JSON value a line) and the process's output.
fn serve_calls(
    dir: &Path,
    args: &[&str],
    vars: &[(&str, &str)],
    calls: &[(&str, serde_json::Value)],
) -> (Vec<serde_json::Value>, Output) {
    let mut child = toolwright(dir, vars)
        .args(["serve", "--cwd", dir.to_str().unwrap()])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: serde_json::Value| {
        stdin.write_all(format!("{message}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    let mut answers = Vec::new();
    // The next answer (a line with an id; notifications are skipped).
    let mut answer = |stdout: &mut BufReader<_>| loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "serve ended early"
        );
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        if value.get("id").is_some() {
            answers.push(value);
            break;
        }
    };
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "otlp-test", "version": "1"}}}),
    );
    answer(&mut stdout);
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for (n, (name, arguments)) in calls.iter().enumerate() {
        send(
            serde_json::json!({"jsonrpc": "2.0", "id": n + 2, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}),
        );
        answer(&mut stdout);
    }
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    (answers, out)
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

// A protobuf reader just big enough for OTLP's messages (field numbers from
// opentelemetry-proto's .proto files).

/// One field's value, by wire type.
#[derive(Debug, Clone, Copy)]
enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32,
}

fn varint(buf: &mut &[u8]) -> u64 {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = buf[0];
        *buf = &buf[1..];
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            break;
        }
    }
    value
}

/// The fields of one message, in order.
fn fields(buf: &[u8]) -> Vec<(u64, Wire<'_>)> {
    let mut buf = buf;
    let mut out = Vec::new();
    while !buf.is_empty() {
        let key = varint(&mut buf);
        let value = match key & 7 {
            0 => Wire::Varint(varint(&mut buf)),
            1 => {
                let (v, rest) = buf.split_at(8);
                buf = rest;
                Wire::Fixed64(u64::from_le_bytes(v.try_into().unwrap()))
            }
            2 => {
                let len = usize::try_from(varint(&mut buf)).unwrap();
                let (v, rest) = buf.split_at(len);
                buf = rest;
                Wire::Bytes(v)
            }
            5 => {
                buf = &buf[4..];
                Wire::Fixed32
            }
            other => panic!("wire type {other}"),
        };
        out.push((key >> 3, value));
    }
    out
}

/// The length-delimited fields numbered `n` (sub-messages, strings, packed arrays).
fn messages(buf: &[u8], n: u64) -> Vec<&[u8]> {
    fields(buf)
        .into_iter()
        .filter_map(|(k, v)| match (k == n, v) {
            (true, Wire::Bytes(b)) => Some(b),
            _ => None,
        })
        .collect()
}

fn string(buf: &[u8], n: u64) -> String {
    messages(buf, n)
        .first()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default()
}

/// An `AnyValue`, as the tests compare it.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Str(String),
    Bool(bool),
    Int(i64),
    Double(f64),
    Other,
}

fn any_value(buf: &[u8]) -> Val {
    match fields(buf).first() {
        Some((1, Wire::Bytes(b))) => Val::Str(String::from_utf8_lossy(b).into_owned()),
        Some((2, Wire::Varint(v))) => Val::Bool(*v != 0),
        Some((3, Wire::Varint(v))) => Val::Int(i64::from_ne_bytes(v.to_ne_bytes())),
        Some((4, Wire::Fixed64(v))) => Val::Double(f64::from_bits(*v)),
        _ => Val::Other,
    }
}

/// The `KeyValue` list numbered `n`.
fn attributes(buf: &[u8], n: u64) -> Vec<(String, Val)> {
    messages(buf, n)
        .into_iter()
        .map(|kv| {
            let value = messages(kv, 2).first().map_or(Val::Other, |v| any_value(v));
            (string(kv, 1), value)
        })
        .collect()
}

fn attribute<'a>(attrs: &'a [(String, Val)], key: &str) -> Option<&'a Val> {
    attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

#[derive(Debug)]
struct Span {
    trace_id: Vec<u8>,
    parent: Vec<u8>,
    name: String,
    events: Vec<String>,
}

/// The spans of `ExportTraceServiceRequest` bodies.
fn spans(bodies: &[Vec<u8>]) -> Vec<Span> {
    let mut out = Vec::new();
    for body in bodies {
        for resource in messages(body, 1) {
            for scope in messages(resource, 2) {
                for span in messages(scope, 2) {
                    out.push(Span {
                        trace_id: messages(span, 1).first().map(|b| b.to_vec()).unwrap(),
                        parent: messages(span, 4)
                            .first()
                            .map(|b| b.to_vec())
                            .unwrap_or_default(),
                        name: string(span, 5),
                        events: messages(span, 11).iter().map(|e| string(e, 2)).collect(),
                    });
                }
            }
        }
    }
    out
}

#[derive(Debug)]
struct HistogramPoint {
    attributes: Vec<(String, Val)>,
    bucket_counts: Vec<u64>,
    bounds: Vec<f64>,
}

/// The unit and the points of the histogram `name` in `ExportMetricsServiceRequest` bodies.
fn histogram(bodies: &[Vec<u8>], name: &str) -> (String, Vec<HistogramPoint>) {
    let packed = |buf: &[u8], n: u64| -> Vec<u64> {
        let mut values = Vec::new();
        for (k, v) in fields(buf) {
            match (k == n, v) {
                (true, Wire::Bytes(b)) => values.extend(
                    b.chunks(8)
                        .map(|c| u64::from_le_bytes(c.try_into().unwrap())),
                ),
                (true, Wire::Fixed64(v)) => values.push(v),
                _ => {}
            }
        }
        values
    };
    let (mut unit, mut points) = (String::new(), Vec::new());
    for body in bodies {
        for resource in messages(body, 1) {
            for scope in messages(resource, 2) {
                for metric in messages(scope, 2) {
                    if string(metric, 1) != name {
                        continue;
                    }
                    unit = string(metric, 3);
                    for histogram in messages(metric, 9) {
                        for point in messages(histogram, 1) {
                            points.push(HistogramPoint {
                                attributes: attributes(point, 9),
                                bucket_counts: packed(point, 6),
                                bounds: packed(point, 7).into_iter().map(f64::from_bits).collect(),
                            });
                        }
                    }
                }
            }
        }
    }
    (unit, points)
}

#[derive(Debug)]
struct LogRecord {
    body: Val,
    event_name: String,
    attributes: Vec<(String, Val)>,
}

/// The log records of `ExportLogsServiceRequest` bodies.
fn log_records(bodies: &[Vec<u8>]) -> Vec<LogRecord> {
    let mut out = Vec::new();
    for body in bodies {
        for resource in messages(body, 1) {
            for scope in messages(resource, 2) {
                for record in messages(scope, 2) {
                    out.push(LogRecord {
                        body: messages(record, 5)
                            .first()
                            .map_or(Val::Other, |b| any_value(b)),
                        event_name: string(record, 12),
                        attributes: attributes(record, 6),
                    });
                }
            }
        }
    }
    out
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
    let traces = bodies(&received, "/v1/traces");
    let metrics = bodies(&received, "/v1/metrics");
    assert!(
        !traces.is_empty() && !metrics.is_empty(),
        "paths received: {:?}",
        paths(&received)
    );
    assert!(
        received
            .lock()
            .unwrap()
            .iter()
            .all(|t| t.content_type == "application/x-protobuf")
    );
    // Protobuf keeps strings as UTF-8 bytes: the span name, its GenAI attributes and the
    // service name are visible in the body.
    let spans: Vec<u8> = traces.concat();
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
    let metrics: Vec<u8> = metrics.concat();
    assert!(contains(&metrics, "toolwright.tool.duration"));
    assert!(contains(&metrics, "Read"));
}

#[test]
fn a_missing_collector_costs_a_notice_not_the_results() {
    let out = run_one_read(&format!("http://127.0.0.1:{}", dead_port()));
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
    let out = run_one_read(&format!("http://127.0.0.1:{}", dead_port()));
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The spans' export failure, not only the metrics' final flush, and how many spans
    // it cost (a Read's call makes its span and its hooks, permission and execution ones).
    assert!(stderr.contains("exporting spans to "), "{stderr}");
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
    let run = |vars: &[(&str, &str)]| {
        let out = run_one_read_with(vars);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    let (url, received) = collector();
    run(&[(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        &format!("{url}/v1/traces"),
    )]);
    let got = paths(&received);
    assert!(got.iter().any(|p| p == "/v1/traces"), "{got:?}");
    assert!(!got.iter().any(|p| p == "/v1/metrics"), "{got:?}");

    let (url, received) = collector();
    run(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_TRACES_EXPORTER", "none"),
    ]);
    let got = paths(&received);
    assert!(!got.iter().any(|p| p == "/v1/traces"), "{got:?}");
    assert!(got.iter().any(|p| p == "/v1/metrics"), "{got:?}");
    // Logs are exported only when asked for, as Claude Code does.
    assert!(!got.iter().any(|p| p == "/v1/logs"), "{got:?}");

    let (url, received) = collector();
    run(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_SDK_DISABLED", "true"),
    ]);
    assert!(received.lock().unwrap().is_empty());
}

/// As in Claude Code, nothing is exported unless `CLAUDE_CODE_ENABLE_TELEMETRY` is on, whatever
/// endpoint the environment has (one set for other programs), and nothing is said about it.
#[test]
fn nothing_is_exported_unless_telemetry_is_enabled() {
    for switch in ["0", "false", "", "no"] {
        let (url, received) = collector();
        let out = run_one_read_with(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
            ("OTEL_LOGS_EXPORTER", "otlp"),
            ("CLAUDE_CODE_ENABLE_TELEMETRY", switch),
        ]);
        assert!(out.status.success());
        assert!(
            received.lock().unwrap().is_empty(),
            "{switch:?}: {:?}",
            paths(&received)
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("telemetry"), "{switch:?}: {stderr}");
    }
    // Truly unset (not only a false value).
    let (url, received) = collector();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hello.txt");
    std::fs::write(&file, "hello\n").unwrap();
    let turn = serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Read",
        "input": {"file_path": file}})
    .to_string();
    let out = binary::output_with_input(
        toolwright(dir.path(), &[("OTEL_EXPORTER_OTLP_ENDPOINT", &url)])
            .env_remove("CLAUDE_CODE_ENABLE_TELEMETRY")
            .args(["run", "--json", "-"]),
        turn.as_bytes(),
    );
    assert!(out.status.success());
    assert!(
        received.lock().unwrap().is_empty(),
        "{:?}",
        paths(&received)
    );
    // The values Claude Code reads as on.
    for on in ["1", "true", "YES", "on"] {
        let (url, received) = collector();
        run_one_read_with(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
            ("CLAUDE_CODE_ENABLE_TELEMETRY", on),
        ]);
        assert!(
            paths(&received).iter().any(|p| p == "/v1/traces"),
            "{on}: {:?}",
            paths(&received)
        );
    }
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
    let spans = bodies(&received, "/v1/traces").concat();
    assert!(contains(&spans, "from-attributes"));
    assert!(contains(&spans, "team"));
}

/// The duration histogram is in seconds with second-scale buckets: a call of a millisecond
/// and one of most of a second land in different buckets; its points carry only the
/// documented attributes, and the event that feeds it is no span event.
#[test]
fn the_duration_histogram_has_second_buckets() {
    let (url, received) = collector();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hello.txt");
    std::fs::write(&file, "hello\n").unwrap();
    let turn = [
        serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Read",
            "input": {"file_path": file}}),
        serde_json::json!({"type": "tool_use", "id": "toolu_2", "name": "Bash",
            "input": {"command": "sleep 0.7", "description": "wait"}}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let out = run_turn(
        dir.path(),
        &turn,
        &["--mode", "bypassPermissions"],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &url)],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (unit, points) = histogram(
        &bodies(&received, "/v1/metrics"),
        "toolwright.tool.duration",
    );
    assert_eq!(unit, "s");
    let bucket = |tool: &str| {
        let point = points
            .iter()
            .find(|p| attribute(&p.attributes, "gen_ai.tool.name") == Some(&Val::Str(tool.into())))
            .unwrap_or_else(|| panic!("no point for {tool}: {points:?}"));
        for (key, _) in &point.attributes {
            assert!(
                key == "gen_ai.tool.name" || key == "success",
                "attribute {key} on {point:?}"
            );
        }
        assert_eq!(point.bounds.first(), Some(&0.005), "{point:?}");
        point.bucket_counts.iter().position(|&c| c > 0).unwrap()
    };
    let (fast, slow) = (bucket("Read"), bucket("Bash"));
    assert!(fast < slow, "Read in bucket {fast}, Bash in {slow}");
    let spans = spans(&bodies(&received, "/v1/traces"));
    assert!(!spans.is_empty());
    for span in &spans {
        assert!(
            !span.events.iter().any(|e| e == "tool_duration"),
            "{span:?}"
        );
    }
}

/// With `OTEL_LOGS_EXPORTER=otlp`, Claude Code's two log events leave as OTLP log records
/// named as Claude Code names them, to the logs endpoint; nothing else does.
#[test]
fn tool_events_reach_an_otel_logs_pipeline() {
    let (url, received) = collector();
    let out = run_one_read_with(&[
        ("OTEL_LOGS_EXPORTER", "otlp"),
        (
            "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
            &format!("{url}/v1/logs"),
        ),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = paths(&received);
    assert!(got.iter().all(|p| p == "/v1/logs"), "{got:?}");
    let records = log_records(&bodies(&received, "/v1/logs"));
    assert_eq!(records.len(), 2, "{records:?}");
    let decision = records
        .iter()
        .find(|r| r.body == Val::Str("claude_code.tool_decision".into()))
        .unwrap_or_else(|| panic!("{records:?}"));
    assert_eq!(decision.event_name, "claude_code.tool_decision");
    for (key, value) in [
        ("event.name", "tool_decision"),
        ("decision", "accept"),
        ("source", "config"),
        ("tool_name", "Read"),
    ] {
        assert_eq!(
            attribute(&decision.attributes, key),
            Some(&Val::Str(value.into())),
            "{key}: {decision:?}"
        );
    }
    let result = records
        .iter()
        .find(|r| r.body == Val::Str("claude_code.tool_result".into()))
        .unwrap_or_else(|| panic!("{records:?}"));
    for (key, value) in [
        ("event.name", "tool_result"),
        ("tool_name", "Read"),
        ("success", "true"),
        ("decision_type", "accept"),
        ("decision_source", "config"),
    ] {
        assert_eq!(
            attribute(&result.attributes, key),
            Some(&Val::Str(value.into())),
            "{key}: {result:?}"
        );
    }
    for key in ["duration_ms", "tool_result_size_bytes", "event.timestamp"] {
        assert!(
            matches!(attribute(&result.attributes, key), Some(Val::Str(_))),
            "{key}: {result:?}"
        );
    }
    assert!(attribute(&result.attributes, "message").is_none());

    // The generic endpoint takes `/v1/logs`; an exporter this build lacks is said.
    let (url, received) = collector();
    let out = run_one_read_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_LOGS_EXPORTER", "console,otlp"),
    ]);
    assert!(paths(&received).iter().any(|p| p == "/v1/logs"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("OTEL_LOGS_EXPORTER=console is not supported"),
        "{stderr}"
    );
}

/// Failures are said plainly, with their cause, and an endpoint's password never shows.
#[test]
fn export_failures_are_said_plainly() {
    // Nobody listens.
    let out = run_one_read(&format!("http://127.0.0.1:{}", dead_port()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("connection refused"), "{stderr}");
    for debug in ["InternalFailure", "Operation failed", "network error"] {
        assert!(!stderr.contains(debug), "{stderr}");
    }
    // A collector that never answers.
    let (url, _received) = collector_answering(Mode::Hang);
    let out = run_one_read_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "500"),
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("timed out after 0.5 s"), "{stderr}");
    assert!(!stderr.contains("network error"), "{stderr}");
    // One that never answers within the final flush's 2 s (the default 3 s export timeout).
    let (url, _received) = collector_answering(Mode::Hang);
    let out = run_one_read_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_LOGS_EXPORTER", "otlp"),
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "the collector did not take the last spans, metrics and log records within 2 s"
        ),
        "{stderr}"
    );
    for debug in ["Timeout(", "Shutdown errors", "Operation failed"] {
        assert!(!stderr.contains(debug), "{stderr}");
    }
    // A collector that fails.
    let (url, _received) = collector_answering(Mode::Status(500));
    let out = run_one_read(&url);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("HTTP status 500"), "{stderr}");
    assert!(!stderr.contains("Operation failed"), "{stderr}");
    // An endpoint with a password in it, not a valid URL.
    let out = run_one_read(&format!(
        "http://user:PWSECRET@127.0.0.1:{}/a b",
        dead_port()
    ));
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{stderr}");
    assert_eq!(stderr.matches("is not a valid URL").count(), 1, "{stderr}");
    assert!(!stderr.contains("PWSECRET"), "{stderr}");
    assert!(stderr.contains("redacted@127.0.0.1"), "{stderr}");
    // A valid one with a password, unreachable: named in the failure, masked.
    let out = run_one_read(&format!("http://user:PWSECRET@127.0.0.1:{}", dead_port()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("PWSECRET"), "{stderr}");
    assert!(stderr.contains("connection refused"), "{stderr}");
    // A password holding `/` (no valid URL), and a key in the query: neither is shown.
    let out = run_one_read(&format!(
        "http://user:k3y/Zz+PWSECRET@127.0.0.1:{}",
        dead_port()
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("PWSECRET"), "{stderr}");
    let out = run_one_read(&format!(
        "http://127.0.0.1:{}/v1?api_key=QUERYSECRET",
        dead_port()
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("QUERYSECRET"), "{stderr}");
}

/// Settings this build cannot follow are said once each on stderr, naming the variable and
/// what is done instead; header values (tokens) are never printed.
#[test]
fn malformed_settings_are_said() {
    let (url, received) = collector();
    let out = run_one_read_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "Authorization: Bearer TOKENVALUE,garbage,my key=TOKEN2,x-ok=fine",
        ),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "abc"),
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for said in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "`Authorization`",
        "OTEL_EXPORTER_OTLP_COMPRESSION=zstd",
        "OTEL_EXPORTER_OTLP_TIMEOUT=abc",
    ] {
        assert!(stderr.contains(said), "`{said}` not in {stderr}");
    }
    for secret in ["TOKENVALUE", "TOKEN2", "Bearer"] {
        assert!(!stderr.contains(secret), "{stderr}");
    }
    // Said once, not once per signal.
    assert_eq!(
        stderr
            .matches("OTEL_EXPORTER_OTLP_COMPRESSION=zstd")
            .count(),
        1,
        "{stderr}"
    );
    assert!(!bodies(&received, "/v1/traces").is_empty());
    // gzip is built in and applied.
    let (url, received) = collector();
    let out = run_one_read_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("COMPRESSION"), "{stderr}");
    let received = received.lock().unwrap();
    assert!(!received.is_empty());
    assert!(
        received.iter().all(|r| r.content_encoding == "gzip"),
        "{:?}",
        received
            .iter()
            .map(|r| &r.content_encoding)
            .collect::<Vec<_>>()
    );
}

/// A collector that is down costs a short `run` little time at exit: a refused connection
/// is not retried at the final flush.
#[test]
fn a_missing_collector_adds_little_to_a_run() {
    let timed = |vars: &[(&str, &str)]| {
        let started = Instant::now();
        let out = run_one_read_with(vars);
        assert!(out.status.success());
        started.elapsed()
    };
    let without = timed(&[("CLAUDE_CODE_ENABLE_TELEMETRY", "0")]);
    let endpoint = format!("http://127.0.0.1:{}", dead_port());
    let with = timed(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
        ("OTEL_LOGS_EXPORTER", "otlp"),
    ]);
    assert!(
        with.saturating_sub(without) < Duration::from_secs(1),
        "{without:?} without telemetry, {with:?} with a collector that is down"
    );
}

/// What `serve` prints for the person running it (hooks' system messages, a failing hook's
/// error with its input) stays on the machine: on stderr, never exported.
#[test]
fn serve_keeps_hook_notices_on_the_machine() {
    let (url, received) = collector();
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let settings = serde_json::json!({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command",
         "command": "printf '%s' '{\"systemMessage\":\"hook saw SECRET-HOOK-42\"}'"},
        {"type": "command", "command": "cat >&2; exit 1"},
    ]}]}})
    .to_string();
    let (answers, out) = serve_calls(
        &root,
        &["--mode", "bypassPermissions", "--settings", &settings],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
            ("OTEL_LOGS_EXPORTER", "otlp"),
        ],
        &[(
            "Bash",
            serde_json::json!({"command": "echo hi # SECRET-INPUT-7", "description": "x"}),
        )],
    );
    assert!(
        answers[1]["result"].to_string().contains("hi"),
        "{answers:?}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    // What the person running the server sees is unchanged.
    assert!(stderr.contains("hook: hook saw SECRET-HOOK-42"), "{stderr}");
    assert!(stderr.contains("SECRET-INPUT-7"), "{stderr}");
    let got = paths(&received);
    assert!(got.iter().any(|p| p == "/v1/traces"), "{got:?}");
    for request in received.lock().unwrap().iter() {
        for secret in ["SECRET-HOOK-42", "SECRET-INPUT-7", "hook notice"] {
            assert!(
                !contains(&request.body, secret),
                "`{secret}` exported to {}",
                request.path
            );
        }
    }
}

/// `serve` exports only Toolwright's own spans and events (not the MCP library's), and each
/// served call is a trace of its own, exported when it ends.
#[test]
fn served_calls_are_root_spans_of_their_own() {
    let (url, received) = collector();
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let file = root.join("f.txt");
    std::fs::write(&file, "served\n").unwrap();
    let read = serde_json::json!({"file_path": file});
    let (answers, out) = serve_calls(
        &root,
        &[],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &url)],
        &[("Read", read.clone()), ("Read", read)],
    );
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spans = spans(&bodies(&received, "/v1/traces"));
    let calls: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == "execute_tool Read")
        .collect();
    assert_eq!(calls.len(), 2, "{spans:?}");
    for call in &calls {
        assert!(call.parent.is_empty(), "a call with a parent: {spans:?}");
    }
    assert_ne!(calls[0].trace_id, calls[1].trace_id);
    for span in &spans {
        assert!(
            ["execute_tool Read", "hooks", "permission", "execution"].contains(&span.name.as_str()),
            "{span:?}"
        );
    }
    let all = received
        .lock()
        .unwrap()
        .iter()
        .flat_map(|r| r.body.clone())
        .collect::<Vec<u8>>();
    for foreign in [
        "serve_inner",
        "Service initialized",
        "received notification",
        "InitializeRequestParam",
        "otlp-test",
    ] {
        assert!(!contains(&all, foreign), "`{foreign}` exported");
    }
}

// Review 37 (telemetry).

/// The resource attributes of `Export*ServiceRequest` bodies (each body's first resource:
/// Toolwright exports one).
fn resource_attributes(bodies: &[Vec<u8>]) -> Vec<Vec<(String, Val)>> {
    bodies
        .iter()
        .flat_map(|body| messages(body, 1))
        .filter_map(|resource_signal| messages(resource_signal, 1).first().copied())
        .map(|resource| attributes(resource, 1))
        .collect()
}

/// `OTEL_RESOURCE_ATTRIBUTES` is read as the OpenTelemetry specification has it, on every
/// signal: values are %-decoded (Claude Code's monitoring docs write
/// `org.name=John%27s%20Organization`), `OTEL_SERVICE_NAME` wins over a `service.name` in
/// it, and an entry without `=` is said once, by its place, never by its text.
#[test]
fn resource_attributes_are_decoded_and_the_service_name_wins() {
    let (url, received) = collector();
    let out = run_one_read_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_LOGS_EXPORTER", "otlp"),
        ("OTEL_SERVICE_NAME", "my-agent"),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "org.name=John%27s%20Organization,privateword,service.name=from-attributes, \
             department = eng%2Cops ",
        ),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for path in ["/v1/traces", "/v1/metrics", "/v1/logs"] {
        let resources = resource_attributes(&bodies(&received, path));
        assert!(!resources.is_empty(), "nothing on {path}");
        for attrs in &resources {
            for (key, value) in [
                ("org.name", "John's Organization"),
                ("department", "eng,ops"),
                ("service.name", "my-agent"),
            ] {
                assert_eq!(
                    attribute(attrs, key),
                    Some(&Val::Str(value.into())),
                    "{key} on {path}: {attrs:?}"
                );
            }
            assert!(
                attrs.iter().all(|(k, _)| !k.contains("privateword")),
                "{attrs:?}"
            );
        }
    }
    let said = "OTEL_RESOURCE_ATTRIBUTES: entry 2 of 4 has no `=`";
    assert_eq!(stderr.matches(said).count(), 1, "{stderr}");
    assert!(!stderr.contains("privateword"), "{stderr}");

    // Without OTEL_SERVICE_NAME, the attributes' service name stands (decoded too).
    let (url, received) = collector();
    let out = run_one_read_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_RESOURCE_ATTRIBUTES", "service.name=my%20service"),
    ]);
    assert!(out.status.success());
    for attrs in resource_attributes(&bodies(&received, "/v1/traces")) {
        assert_eq!(
            attribute(&attrs, "service.name"),
            Some(&Val::Str("my service".into())),
            "{attrs:?}"
        );
    }
}

/// The `tool_decision` and `tool_result` log records of a run with `vars` of the JSONL
/// `turn` in a fresh directory, with `args`: (decision records, result records).
fn logged(turn: &str, args: &[&str], vars: &[(&str, &str)]) -> (Vec<LogRecord>, Vec<LogRecord>) {
    let (url, received) = collector();
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", url.as_str()),
        ("OTEL_LOGS_EXPORTER", "otlp"),
    ];
    all.extend_from_slice(vars);
    let out = run_turn(dir.path(), turn, args, &all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (decisions, results) = log_records(&bodies(&received, "/v1/logs"))
        .into_iter()
        .partition(|r| r.body == Val::Str("claude_code.tool_decision".into()));
    (decisions, results)
}

/// A call refused because nobody can approve it (`run`: permission prompts are
/// unavailable) was made by the configuration, as under `dontAsk`, not by a user: its
/// source is `config`, never `user_reject`.
#[test]
fn a_refusal_with_nobody_to_ask_is_no_users_rejection() {
    let turn = serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
        "input": {"command": "touch f"}})
    .to_string();
    for args in [&[][..], &["--mode", "dontAsk"][..]] {
        let (decisions, results) = logged(&turn, args, &[]);
        assert_eq!(decisions.len(), 1, "{decisions:?}");
        assert_eq!(results.len(), 1, "{results:?}");
        for (record, decision, source) in [
            (&decisions[0], "decision", "source"),
            (&results[0], "decision_type", "decision_source"),
        ] {
            assert_eq!(
                attribute(&record.attributes, decision),
                Some(&Val::Str("reject".into())),
                "{args:?}: {record:?}"
            );
            assert_eq!(
                attribute(&record.attributes, source),
                Some(&Val::Str("config".into())),
                "{args:?}: {record:?}"
            );
        }
    }
}

/// With `OTEL_LOG_TOOL_DETAILS`, `tool_input` and `tool_parameters` are JSON of at most
/// 4 KiB whatever the input: strings are cut shorter until the whole fits, and what cannot
/// fit that way is a JSON string saying it was cut. Every call that starts has them.
#[test]
fn tool_details_stay_json_within_their_limit() {
    let long = |c: char| c.to_string().repeat(500);
    let mut big = serde_json::json!({"pattern": "x", "output_mode": "content", "-n": true});
    for (n, c) in ('a'..='l').enumerate() {
        big[format!("field{n}")] = long(c).into();
    }
    let numbers: Vec<u32> = (0..3000).collect();
    let turn = [
        serde_json::json!({"type": "tool_use", "id": "toolu_big", "name": "Grep", "input": big}),
        serde_json::json!({"type": "tool_use", "id": "toolu_bash", "name": "Bash",
            "input": {"command": format!("true {}", "c".repeat(3000)),
                "description": "d".repeat(3000)}}),
        serde_json::json!({"type": "tool_use", "id": "toolu_many", "name": "Glob",
            "input": {"pattern": "*", "numbers": numbers}}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let (_, results) = logged(&turn, &[], &[("OTEL_LOG_TOOL_DETAILS", "1")]);
    assert_eq!(results.len(), 3, "{results:?}");
    // A success's record names its tool, not its id (`use_id` is a failure's).
    let field = |id: &str, key: &str| -> serde_json::Value {
        let tool = match id {
            "toolu_big" => "Grep",
            "toolu_bash" => "Bash",
            _ => "Glob",
        };
        let record = results
            .iter()
            .find(|r| attribute(&r.attributes, "tool_name") == Some(&Val::Str(tool.into())))
            .unwrap_or_else(|| panic!("no record of {id}: {results:?}"));
        let Some(Val::Str(text)) = attribute(&record.attributes, key) else {
            panic!("no {key} on {record:?}");
        };
        assert!(text.len() <= 4096, "{key} of {id}: {} bytes", text.len());
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{key} of {id}: {e}: {text}"))
    };
    // Cut strings, the fields all there.
    let input = field("toolu_big", "tool_input");
    assert_eq!(input["pattern"], "x");
    assert_eq!(input["-n"], true);
    for n in 0..12 {
        let value = input[format!("field{n}")].as_str().unwrap();
        assert!(value.ends_with('…') && value.len() < 500, "{value}");
    }
    let parameters = field("toolu_bash", "tool_parameters");
    assert_eq!(parameters["bash_command"], "true");
    assert!(
        parameters["full_command"]
            .as_str()
            .unwrap()
            .starts_with("true ccc")
    );
    field("toolu_bash", "tool_input");
    // Too many values to fit: a JSON string that says so.
    let cut = field("toolu_many", "tool_input");
    assert!(cut.as_str().is_some_and(|s| s.contains("cut")), "{cut}");
}

/// `tool_result` carries Claude Code's fields and the documented ones only: no `ending`
/// (an internal enum's debug text), on the log record or the span event.
#[test]
fn tool_results_carry_no_debug_text() {
    let (url, received) = collector();
    let dir = tempfile::tempdir().unwrap();
    let turn = [
        serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
            "input": {"command": "false"}}),
        serde_json::json!({"type": "tool_use", "id": "toolu_2", "name": "Bash",
            "input": {"command": "true"}}),
        serde_json::json!({"type": "tool_use", "id": "toolu_3", "name": "Glob",
            "input": {"wrong": 1}}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let out = run_turn(
        dir.path(),
        &turn,
        &["--mode", "bypassPermissions"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
            ("OTEL_LOGS_EXPORTER", "otlp"),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<LogRecord> = log_records(&bodies(&received, "/v1/logs"))
        .into_iter()
        .filter(|r| r.body == Val::Str("claude_code.tool_result".into()))
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    for record in &results {
        assert!(
            attribute(&record.attributes, "ending").is_none(),
            "{record:?}"
        );
    }
    let errors: Vec<_> = results
        .iter()
        .filter_map(|r| attribute(&r.attributes, "error").cloned())
        .collect();
    assert_eq!(errors.len(), 2, "{results:?}");
    // The span events, as exported: Span.events (11), Event.attributes (3).
    let mut events = 0;
    for body in bodies(&received, "/v1/traces") {
        for resource in messages(&body, 1) {
            for scope in messages(resource, 2) {
                for span in messages(scope, 2) {
                    for event in messages(span, 11) {
                        if string(event, 2) == "tool_result" {
                            events += 1;
                            let attrs = attributes(event, 3);
                            assert!(attribute(&attrs, "ending").is_none(), "{attrs:?}");
                        }
                    }
                }
            }
        }
    }
    assert_eq!(events, 3);
}

/// The proxy variables a trusted project's settings `env` sets do not carry the export
/// (with the user's headers) to a proxy of the project's choosing: the exporter uses the
/// proxy of the environment Toolwright started with, or none. Tools still get them.
#[test]
fn a_projects_proxy_does_not_carry_the_export() {
    let (url, received) = collector();
    let (proxy, proxied) = collector();
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(root.join(".claude")).unwrap();
    let project_env = |env: serde_json::Value| {
        std::fs::write(
            root.join(".claude/settings.json"),
            serde_json::json!({ "env": env }).to_string(),
        )
        .unwrap();
    };
    project_env(serde_json::json!({
        "HTTP_PROXY": proxy, "http_proxy": proxy, "ALL_PROXY": proxy, "all_proxy": proxy,
        "HTTPS_PROXY": proxy,
    }));
    let unproxied = |command: &mut Command| {
        for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"] {
            command
                .env_remove(name)
                .env_remove(name.to_ascii_lowercase());
        }
        command.env_remove("REQUEST_METHOD");
    };
    let mut trust = toolwright(&root, &[]);
    unproxied(&mut trust);
    let trusted = trust.arg("trust").arg(&root).output().unwrap();
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    let turn = serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
        "input": {"command": "echo \"proxy=$HTTP_PROXY\""}})
    .to_string();
    let run = |vars: &[(&str, &str)]| {
        let mut command = toolwright(&root, vars);
        unproxied(&mut command);
        binary::output_with_input(
            command.envs(vars.iter().copied()).args([
                "run",
                "--json",
                "--mode",
                "bypassPermissions",
                "-",
            ]),
            turn.as_bytes(),
        )
    };
    let out = run(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "Authorization=Bearer%20user-token",
        ),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The tool still has the project's proxy.
    assert!(stdout.contains(&format!("proxy={proxy}")), "{stdout}");
    assert!(!bodies(&received, "/v1/traces").is_empty());
    assert!(
        proxied.lock().unwrap().is_empty(),
        "the project's proxy got {:?}",
        paths(&proxied)
    );

    // A proxy of the user's own environment is used (the project's NO_PROXY does not lift
    // it).
    project_env(serde_json::json!({"NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}));
    let (url, received) = collector();
    let (own_proxy, own_proxied) = collector();
    let out = run(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("http_proxy", &own_proxy),
    ]);
    assert!(out.status.success());
    assert!(bodies(&received, "/v1/traces").is_empty());
    let via = paths(&own_proxied);
    assert!(
        via.iter().any(|p| *p == format!("{url}/v1/traces")),
        "{via:?}"
    );
    assert!(proxied.lock().unwrap().is_empty());

    // A proxy the user's own settings (here `--settings`) name is used for the export too,
    // over the shell's and whatever the project's settings say.
    project_env(serde_json::json!({"HTTP_PROXY": proxy, "http_proxy": proxy}));
    let (url, received) = collector();
    let (user_proxy, user_proxied) = collector();
    let (shell_proxy, shell_proxied) = collector();
    let mut command = toolwright(&root, &[]);
    unproxied(&mut command);
    let user_settings = serde_json::json!({"env": {"http_proxy": user_proxy}}).to_string();
    let out = binary::output_with_input(
        command
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &url)
            // The shell's in the other case: the settings' value wins whatever the case of
            // either (found by review 38: `HTTP_PROXY` was looked up in both before
            // `http_proxy`).
            .env("HTTP_PROXY", &shell_proxy)
            .args(["run", "--json", "--mode", "bypassPermissions", "--settings"])
            .arg(&user_settings)
            .arg("-"),
        turn.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(bodies(&received, "/v1/traces").is_empty());
    let via = paths(&user_proxied);
    assert!(
        via.iter().any(|p| *p == format!("{url}/v1/traces")),
        "{via:?}"
    );
    assert!(shell_proxied.lock().unwrap().is_empty());
    assert!(proxied.lock().unwrap().is_empty());

    // Under CGI only the shell's `HTTP_PROXY` (either case) is passed over, as reqwest does
    // (it may be a request's `Proxy:` header); `ALL_PROXY` still carries the export (found
    // by review 38: every proxy was dropped).
    project_env(serde_json::json!({}));
    let (url, received) = collector();
    let (header_proxy, header_proxied) = collector();
    let (all_proxy, all_proxied) = collector();
    let out = run(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("REQUEST_METHOD", "GET"),
        ("HTTP_PROXY", &header_proxy),
        ("ALL_PROXY", &all_proxy),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(bodies(&received, "/v1/traces").is_empty());
    let via = paths(&all_proxied);
    assert!(
        via.iter().any(|p| *p == format!("{url}/v1/traces")),
        "{via:?}"
    );
    assert!(header_proxied.lock().unwrap().is_empty());
}

/// `tool_result` carries `use_id` on a failure only, as Claude Code's does ("failure adds
/// use_id and error") and docs/architecture.md says (found by review 40: every success
/// carried it too).
#[test]
fn only_a_failed_calls_result_names_its_use_id() {
    let turn = [
        serde_json::json!({"type": "tool_use", "id": "toolu_ok", "name": "Glob",
            "input": {"pattern": "*"}}),
        serde_json::json!({"type": "tool_use", "id": "toolu_bad", "name": "Read",
            "input": {"file_path": "/nonexistent/review40/missing.txt"}}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let (_, results) = logged(&turn, &[], &[]);
    assert_eq!(results.len(), 2, "{results:?}");
    let of = |success: &str| {
        results
            .iter()
            .find(|r| attribute(&r.attributes, "success") == Some(&Val::Str(success.into())))
            .unwrap_or_else(|| panic!("no result with success={success}: {results:?}"))
    };
    let ok = of("true");
    assert_eq!(attribute(&ok.attributes, "use_id"), None, "{ok:?}");
    assert_eq!(attribute(&ok.attributes, "error"), None, "{ok:?}");
    let failed = of("false");
    assert_eq!(
        attribute(&failed.attributes, "use_id"),
        Some(&Val::Str("toolu_bad".into())),
        "{failed:?}"
    );
    assert!(
        attribute(&failed.attributes, "error").is_some(),
        "{failed:?}"
    );
}

/// A signal's own headers variable adds to `OTEL_EXPORTER_OTLP_HEADERS`, its value winning
/// per key, as Claude Code's exporter merges them (found by review 40: the logs' own
/// variable replaced the generic one, and the log export lost its `Authorization`).
#[test]
fn a_signals_own_headers_add_to_the_generic_ones() {
    let (url, received) = collector();
    let out = run_one_read_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_LOGS_EXPORTER", "otlp"),
        ("OTEL_METRICS_EXPORTER", "none"),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "Authorization=Bearer%20s3cret,X-Team=generic",
        ),
        (
            "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
            "X-Scope-OrgID=tenant1,x-team=logs",
        ),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let headers = |path: &str| {
        let received = received.lock().unwrap();
        let request = received
            .iter()
            .find(|r| r.path == path)
            .unwrap_or_else(|| panic!("nothing on {path}"));
        let header = |name: &str| {
            let values: Vec<&str> = request
                .headers
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
                .collect();
            values.join(", ")
        };
        (
            header("authorization"),
            header("x-scope-orgid"),
            header("x-team"),
        )
    };
    assert_eq!(
        headers("/v1/logs"),
        ("Bearer s3cret".into(), "tenant1".into(), "logs".into())
    );
    assert_eq!(
        headers("/v1/traces"),
        ("Bearer s3cret".into(), String::new(), "generic".into())
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("telemetry"), "{stderr}");
}

/// `OTEL_LOGS_EXPORT_INTERVAL` and `OTEL_TRACES_EXPORT_INTERVAL` (Claude Code's, in ms) set
/// how often log records and spans are exported, over the SDK's own variables: with a minute,
/// a `serve` session that pauses after its first call (well past the SDK's 1 s for logs and
/// the `OTEL_BSP_SCHEDULE_DELAY` given) has exported nothing while it runs, and everything in
/// one request of each at exit (found by review 40: logs went out every second whatever the
/// variable said).
#[test]
fn the_export_intervals_are_claude_codes_variables() {
    let (url, received) = collector();
    let dir = tempfile::tempdir().unwrap();
    let mut child = toolwright(
        dir.path(),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
            ("OTEL_LOGS_EXPORTER", "otlp"),
            ("OTEL_METRICS_EXPORTER", "none"),
            ("OTEL_LOGS_EXPORT_INTERVAL", "60000"),
            ("OTEL_TRACES_EXPORT_INTERVAL", "60000"),
            ("OTEL_BSP_SCHEDULE_DELAY", "200"),
        ],
    )
    .args(["serve", "--cwd", dir.path().to_str().unwrap()])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let send = |stdin: &mut std::process::ChildStdin, message: serde_json::Value| {
        stdin.write_all(format!("{message}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    // Reads up to the answer with `id`.
    let answered = |stdout: &mut BufReader<_>, id: u64| loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "serve ended early"
        );
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        if value["id"] == id {
            return value;
        }
    };
    send(
        &mut stdin,
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "otlp-test", "version": "1"}}}),
    );
    answered(&mut stdout, 1);
    send(
        &mut stdin,
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    let call = |id: u64| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "Glob", "arguments": {"pattern": "*"}}})
    };
    send(&mut stdin, call(2));
    answered(&mut stdout, 2);
    // Held past both the SDK's schedules: nothing is due for a minute.
    std::thread::sleep(Duration::from_millis(2500));
    let early = paths(&received);
    send(&mut stdin, call(3));
    answered(&mut stdout, 3);
    drop(stdin);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(early.is_empty(), "exported while running: {early:?}");
    let logs = bodies(&received, "/v1/logs");
    assert_eq!(logs.len(), 1, "{:?}", paths(&received));
    assert_eq!(log_records(&logs).len(), 4);
    let traces = bodies(&received, "/v1/traces");
    assert_eq!(traces.len(), 1, "{:?}", paths(&received));
    assert!(!stderr.contains("telemetry"), "{stderr}");

    // A value that is no number of milliseconds is said, and the default used.
    let out = run_one_read_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_LOGS_EXPORTER", "otlp"),
        ("OTEL_LOGS_EXPORT_INTERVAL", "5s"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "OTEL_LOGS_EXPORT_INTERVAL=5s is not a number of milliseconds above 0; log records \
             are exported every 5 s"
        ),
        "{stderr}"
    );
}

/// Whether `program` runs here (`program version`-style probe with `arg`).
fn runs(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Makes, with `openssl`, in `dir`: a private CA (`ca.pem`), a server certificate for
/// 127.0.0.1 it signed (`server.pem`, `server.key`) and a client certificate it signed
/// (`client.pem`, `client.key`).
fn make_certificates(dir: &Path) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let key = ["-newkey", "rsa:2048", "-nodes", "-keyout"];
    openssl(
        &[
            &["req", "-x509", "-days", "2", "-subj", "/CN=test CA"][..],
            &key[..],
            &["ca.key", "-out", "ca.pem"],
        ]
        .concat(),
    );
    for (name, usage, alt) in [
        ("server", "serverAuth", "subjectAltName=IP:127.0.0.1\n"),
        ("client", "clientAuth", ""),
    ] {
        let (csr, ext) = (format!("{name}.csr"), format!("{name}.ext"));
        std::fs::write(
            dir.join(&ext),
            format!("{alt}basicConstraints=CA:FALSE\nextendedKeyUsage={usage}\n"),
        )
        .unwrap();
        openssl(
            &[
                &["req", "-subj", &format!("/CN={name}")][..],
                &key[..],
                &[&format!("{name}.key"), "-out", &csr],
            ]
            .concat(),
        );
        openssl(&[
            "x509",
            "-req",
            "-days",
            "2",
            "-in",
            &csr,
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-extfile",
            &ext,
            "-out",
            &format!("{name}.pem"),
        ]);
    }
}

/// An HTTPS OTLP receiver (Python's `ssl`) with the server certificate `make_certificates`
/// made in `certs`, requiring a client certificate its CA signed; answers every POST with 200
/// and prints its path. Killed on drop.
struct TlsReceiver {
    child: std::process::Child,
    stdout: BufReader<std::process::ChildStdout>,
    url: String,
}

impl TlsReceiver {
    fn start(certs: &Path) -> Self {
        const SERVER: &str = r#"
import http.server, ssl, sys
certs = sys.argv[1]
class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        print(self.path, flush=True)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(certs + "/server.pem", certs + "/server.key")
context.verify_mode = ssl.CERT_REQUIRED
context.load_verify_locations(certs + "/ca.pem")
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;
        let mut child = Command::new("python3")
            .args(["-c", SERVER])
            .arg(certs)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut port = String::new();
        stdout.read_line(&mut port).unwrap();
        let url = format!("https://127.0.0.1:{}", port.trim());
        Self { child, stdout, url }
    }

    /// Ends the receiver; the paths it received.
    fn paths(mut self) -> Vec<String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        rest.lines().map(str::to_owned).collect()
    }
}

impl Drop for TlsReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `OTEL_EXPORTER_OTLP_[SIGNAL_]CERTIFICATE` (a CA to trust) and `_CLIENT_CERTIFICATE` /
/// `_CLIENT_KEY` (mutual TLS) are followed, a signal's own over the generic one; a file
/// that cannot be read or is no such PEM is said once, by its variable and file, and what
/// it was for is not exported (found by review 40: all of them were ignored without a
/// word, and a collector behind a private CA or mTLS got nothing).
#[test]
fn tls_certificate_variables_are_followed() {
    if !runs("openssl", "version") || !runs("python3", "--version") {
        eprintln!("skipped: this test needs `openssl` and `python3`");
        return;
    }
    let certs = tempfile::tempdir().unwrap();
    let certs = certs.path();
    make_certificates(certs);
    let file = |name: &str| certs.join(name).to_str().unwrap().to_owned();
    let missing = file("missing.pem");
    let run = |receiver: &TlsReceiver, vars: &[(&str, &str)]| {
        let endpoint = format!("{}/v1/metrics", receiver.url);
        let mut all = vec![
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", endpoint.as_str()),
            ("OTEL_TRACES_EXPORTER", "none"),
        ];
        all.extend_from_slice(vars);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hello.txt");
        std::fs::write(&file, "hello\n").unwrap();
        let turn = serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Read",
            "input": {"file_path": file}})
        .to_string();
        let mut command = toolwright(dir.path(), &all);
        // Only the variables under test say whom to trust.
        command
            .env_remove("SSL_CERT_FILE")
            .env_remove("SSL_CERT_DIR");
        let out = binary::output_with_input(command.args(["run", "--json", "-"]), turn.as_bytes());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };

    // The CA and the client key of the signal's own variables win over broken generic ones;
    // the generic client certificate applies.
    let receiver = TlsReceiver::start(certs);
    let stderr = run(
        &receiver,
        &[
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", &missing),
            ("OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE", &file("ca.pem")),
            ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &file("client.pem")),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", &missing),
            ("OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY", &file("client.key")),
        ],
    );
    assert!(!stderr.contains("telemetry"), "{stderr}");
    assert_eq!(receiver.paths(), ["/v1/metrics"]);

    // A file that cannot be read: said once for the signals it costs, nothing sent.
    let receiver = TlsReceiver::start(certs);
    let endpoint = receiver.url.clone();
    let stderr = run(
        &receiver,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_TRACES_EXPORTER", "otlp"),
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", &missing),
            ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &file("client.pem")),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", &file("client.key")),
        ],
    );
    let said = format!("OTEL_EXPORTER_OTLP_CERTIFICATE={missing} cannot be read");
    assert_eq!(stderr.matches(&said).count(), 1, "{stderr}");
    assert!(
        stderr.contains("spans and metrics are not exported"),
        "{stderr}"
    );
    assert_eq!(receiver.paths(), Vec::<String>::new());

    // A key file with no key in it, and a client certificate without its key: each said,
    // never a silent export without the client certificate.
    let receiver = TlsReceiver::start(certs);
    let stderr = run(
        &receiver,
        &[
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", &file("ca.pem")),
            ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &file("client.pem")),
            ("OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY", &file("client.pem")),
        ],
    );
    assert!(
        stderr.contains(&format!(
            "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY={} holds no private key",
            file("client.pem")
        )),
        "{stderr}"
    );
    assert!(stderr.contains("metrics are not exported"), "{stderr}");
    let stderr = run(
        &receiver,
        &[
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", &file("ca.pem")),
            ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &file("client.pem")),
        ],
    );
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is set without a client key"),
        "{stderr}"
    );
    // A CA file that is no certificate.
    let stderr = run(
        &receiver,
        &[("OTEL_EXPORTER_OTLP_CERTIFICATE", &file("client.key"))],
    );
    assert!(
        stderr.contains(&format!(
            "OTEL_EXPORTER_OTLP_CERTIFICATE={} holds no PEM certificate",
            file("client.key")
        )),
        "{stderr}"
    );
    assert_eq!(receiver.paths(), Vec::<String>::new());
}
