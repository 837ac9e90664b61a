//! Crash consistency: Write, Edit and NotebookEdit of files of a few MB, and the persistence
//! of large results, run in a child process (this test binary again, in the role selected by
//! `TW_CRASH_ROLE`) that is killed with SIGKILL at a random moment (seeded: set
//! `TOOLWRIGHT_CRASH_SEED` to replay a run): half of the kills at any moment of its loop,
//! half aimed at a write (once its temporary file exists, plus up to 3 ms). After each kill:
//!
//! - the file is byte-identical to one of the states the writes go through, never torn;
//! - the only other files are the killed writer's own `.NAME.tw-tmp.PID.N` temporaries
//!   (the writer died between creating and renaming one: by design), and the next write in
//!   that directory removes them, so none stays.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tool_core::{ProgressSender, Tool, ToolResultContent, ToolUseContext};
use tools_builtin::{Edit, NotebookEdit, Read, Write};

/// Kills per role: bounded, so the whole test runs in seconds.
const KILLS: usize = 6;

const ROLES: [&str; 4] = ["write", "edit", "notebook", "persist"];

fn file_name(role: &str) -> &'static str {
    match role {
        "notebook" => "big.ipynb",
        _ => "big.txt",
    }
}

/// A line-structured text of about `mb` megabytes made of `c`.
fn big_text(c: char, mb: usize) -> String {
    let line: String = std::iter::repeat_n(c, 99).chain(['\n']).collect();
    line.repeat(mb * 10_486)
}

fn notebook(source: &str) -> String {
    json!({
        "cells": [
            {"cell_type": "code", "id": "c1", "metadata": {}, "source": source, "outputs": [], "execution_count": null},
            {"cell_type": "markdown", "id": "c2", "metadata": {}, "source": "notes"}
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5
    })
    .to_string()
}

/// The file a role starts from.
fn initial(role: &str) -> String {
    match role {
        "write" => format!("{}v0\n", big_text('a', 2)),
        "edit" => format!("{}STATE-0\n{}", big_text('e', 1), big_text('f', 1)),
        "notebook" => notebook(&big_text('n', 1)),
        _ => String::new(),
    }
}

/// Step `k` of a role's endless loop (each one a call of the tool).
fn step(role: &str, path: &Path, k: usize) -> (&'static dyn Tool, Value) {
    let even = k.is_multiple_of(2);
    match role {
        // Whole-file rewrites that differ near the end, so that computing the patch is
        // cheap and the loop spends its time writing.
        "write" => (
            &Write,
            json!({"file_path": path, "content": if even {
                format!("{}v1\n{}", big_text('a', 2), big_text('b', 1))
            } else {
                format!("{}v0\n", big_text('a', 2))
            }}),
        ),
        "edit" => {
            let (from, to) = if even {
                (
                    "STATE-0\n".to_owned(),
                    format!("STATE-1\n{}", big_text('g', 1)),
                )
            } else {
                (
                    format!("STATE-1\n{}", big_text('g', 1)),
                    "STATE-0\n".to_owned(),
                )
            };
            (
                &Edit,
                json!({"file_path": path, "old_string": from, "new_string": to}),
            )
        }
        _ => (
            &NotebookEdit,
            json!({"notebook_path": path, "cell_id": "c1", "new_source": big_text(if even { 'm' } else { 'n' }, if even { 2 } else { 1 })}),
        ),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

async fn read_first(ctx: &ToolUseContext, path: &Path) {
    let input = Read
        // Every line: Write replaces the whole file only after the whole file was seen.
        .parse_input(json!({"file_path": path, "limit": 1_000_000, "allow_large": true}))
        .unwrap();
    Read.call(input, ctx.clone(), ProgressSender::none())
        .await
        .unwrap();
}

async fn call(ctx: &ToolUseContext, tool: &dyn Tool, input: Value) {
    let input = tool.parse_input(input).unwrap();
    tool.validate_input(&input, ctx).await.unwrap();
    tool.call(input, ctx.clone(), ProgressSender::none())
        .await
        .unwrap();
}

fn persist_one(dir: &Path, id: &str) {
    let out = tool_exec::persist_if_large(
        ToolResultContent::Text(persisted_text()),
        id,
        1000,
        Some(dir),
    );
    assert!(out.error.is_none(), "{:?}", out.error);
}

fn persisted_text() -> String {
    big_text('p', 8)
}

/// The child role: announces `ready`, then writes for ever until it is killed.
#[test]
#[ignore = "the child process of the crash tests, started by them"]
fn crash_child() {
    let role = std::env::var("TW_CRASH_ROLE").unwrap();
    let dir = PathBuf::from(std::env::var("TW_CRASH_DIR").unwrap());
    if role == "persist" {
        println!("TW-CRASH-READY");
        for i in 0.. {
            persist_one(&dir, &format!("r{}-{i}", std::process::id()));
        }
        return;
    }
    let path = dir.join(file_name(&role));
    runtime().block_on(async {
        let ctx = ToolUseContext::new(&dir);
        read_first(&ctx, &path).await;
        println!("TW-CRASH-READY");
        for k in 0.. {
            let (tool, input) = step(&role, &path, k);
            call(&ctx, tool, input).await;
        }
    });
}

/// The states a role's file goes through: the start, after an even step, after an odd one
/// (which may be the start again).
fn states(role: &str) -> Vec<Vec<u8>> {
    let scratch = tempfile::tempdir().unwrap();
    let path = scratch.path().join(file_name(role));
    std::fs::write(&path, initial(role)).unwrap();
    let mut states = vec![std::fs::read(&path).unwrap()];
    runtime().block_on(async {
        let ctx = ToolUseContext::new(scratch.path());
        read_first(&ctx, &path).await;
        for k in 0..3 {
            let (tool, input) = step(role, &path, k);
            call(&ctx, tool, input).await;
            let now = std::fs::read(&path).unwrap();
            if !states.contains(&now) {
                states.push(now);
            }
        }
    });
    assert!(states.len() >= 2, "{role}: the loop should change the file");
    states
}

/// A small seeded generator (xorshift64*), so a failing run can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Starts the child for `role` in `dir` and waits until it is writing.
fn start_child(role: &str, dir: &Path) -> std::process::Child {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "crash_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("TW_CRASH_ROLE", role)
        .env("TW_CRASH_DIR", dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let ready = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains("TW-CRASH-READY"));
    assert!(ready, "the {role} child never got ready");
    child
}

#[test]
fn sigkill_mid_write_leaves_old_or_new_and_no_stray_temp_file() {
    let seed = std::env::var("TOOLWRIGHT_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_2024_u64);
    let mut rng = Rng(seed | 1);
    let mut mid_write = 0;
    for role in ROLES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(file_name(role));
        let states = if role == "persist" {
            Vec::new()
        } else {
            std::fs::write(&path, initial(role)).unwrap();
            states(role)
        };
        for kill in 0..KILLS {
            let mut child = start_child(role, dir.path());
            let pid = child.id();
            if kill.is_multiple_of(2) {
                // Any moment of the loop.
                std::thread::sleep(Duration::from_micros(rng.next() % 600_000));
            } else {
                // Aimed at a write: as soon as a temporary file of the child exists.
                let marker = format!(".tw-tmp.{pid}.");
                while !entries(dir.path()).iter().any(|n| n.contains(&marker)) {
                    if let Some(status) = child.try_wait().unwrap() {
                        panic!("the {role} child stopped on its own: {status}");
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
                std::thread::sleep(Duration::from_micros(rng.next() % 3_000));
            }
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            let context = format!("{role}, kill {kill}, seed {seed}");

            // Only the dead writer's temporaries may be there besides the files.
            let temps: Vec<String> = entries(dir.path())
                .into_iter()
                .filter(|n| n.contains(".tw-tmp."))
                .collect();
            for t in &temps {
                assert!(
                    t.contains(&format!(".tw-tmp.{pid}.")),
                    "{context}: a temporary file not of the killed writer: {t}"
                );
            }
            if !temps.is_empty() {
                mid_write += 1;
            }

            if role == "persist" {
                // Every result file is whole.
                let whole = persisted_text();
                for name in entries(dir.path()).iter().filter(|n| !n.starts_with('.')) {
                    let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
                    assert!(
                        text == whole,
                        "{context}: {name} is torn ({} bytes)",
                        text.len()
                    );
                }
                // The next persistence in the directory removes the dead writer's leftovers.
                persist_one(dir.path(), &format!("parent-{kill}"));
            } else {
                let bytes = std::fs::read(&path).unwrap();
                assert!(
                    states.contains(&bytes),
                    "{context}: the file is torn ({} bytes, matches no state)",
                    bytes.len()
                );
                // The next write in the directory removes them.
                let other = dir.path().join("other.txt");
                runtime().block_on(call(
                    &ToolUseContext::new(dir.path()),
                    &Write,
                    json!({"file_path": other, "content": format!("after kill {kill}\n")}),
                ));
                std::fs::remove_file(&other).unwrap();
                assert_eq!(entries(dir.path()), [file_name(role)], "{context}");
                // The next round starts from the start again.
                std::fs::write(&path, initial(role)).unwrap();
            }
            let stray: Vec<String> = entries(dir.path())
                .into_iter()
                .filter(|n| n.contains(".tw-tmp."))
                .collect();
            assert!(
                stray.is_empty(),
                "{context}: stray temporary files {stray:?}"
            );
        }
    }
    // The kills did land in the middle of writes (the case this test is about).
    eprintln!(
        "{mid_write} of {} kills interrupted a write",
        KILLS * ROLES.len()
    );
    assert!(mid_write > 0, "no kill landed mid-write (seed {seed})");
}
