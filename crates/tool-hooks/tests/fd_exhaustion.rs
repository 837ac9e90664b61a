//! Hooks that cannot start because the process is out of file descriptors (`EMFILE`: a
//! soft `RLIMIT_NOFILE` of 256, macOS's default, and parallel calls with several hooks
//! each). Such a start is retried until descriptors are free; a PreToolUse or
//! PermissionRequest hook that still cannot start refuses the call instead of letting it
//! through (it counted as a non-blocking error, so a guard that always blocks let calls
//! run).
//!
//! Each test runs in a process of its own, this test binary started again under `ulimit
//! -Sn 256`, where it uses up its descriptors: nothing it does reaches another test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs::File;
use std::time::{Duration, Instant};

use common::{Env, cmd, one, runner};
use serde_json::json;
use tool_hooks::{PermissionDecision, PermissionRequestVerdict, ToolCallInfo};

/// Set (to the test's name) in the process a test starts to run its body.
const CHILD_VAR: &str = "TOOL_HOOKS_FD_EXHAUSTION_CHILD";

/// The soft descriptor limit the child runs under.
const LIMIT: usize = 256;

/// Runs `body` in a copy of this test binary started under `ulimit -Sn 256`, running the
/// test `name` alone; this process only checks that it passed.
fn in_own_process(name: &str, body: impl FnOnce()) {
    in_own_process_with(name, &[], body);
}

/// [`in_own_process`], with `env` set in the process that runs `body`.
fn in_own_process_with(name: &str, env: &[(&str, &std::path::Path)], body: impl FnOnce()) {
    if std::env::var(CHILD_VAR).as_deref() == Ok(name) {
        body();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("ulimit -Sn {LIMIT} && exec \"$0\" \"$@\""))
        .arg(&exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_VAR, name)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "the test failed in its own process:\n{text}"
    );
    assert!(text.contains("1 passed"), "the test did not run:\n{text}");
}

/// Opens `/dev/null` until the descriptor limit is reached (`EMFILE`, or `ENFILE` should
/// the whole system run out first: 24 and 23 on Linux and macOS alike); the files hold every
/// descriptor left.
fn use_up_descriptors() -> Vec<File> {
    let mut files = Vec::new();
    loop {
        match File::open("/dev/null") {
            Ok(f) => files.push(f),
            Err(e) if matches!(e.raw_os_error(), Some(23 | 24)) => return files,
            Err(e) => panic!("opening /dev/null: {e}"),
        }
        assert!(files.len() <= LIMIT, "the descriptor limit was not lowered");
    }
}

/// [`use_up_descriptors`], and frees them `after` that long: the task that does.
fn use_up_descriptors_for(after: Duration) -> tokio::task::JoinHandle<()> {
    let files = use_up_descriptors();
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        drop(files);
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn read_call(id: &str) -> ToolCallInfo {
    ToolCallInfo::new("Read", json!({"file_path": "/etc/hostname"}), id)
}

/// Hooks that cannot start for lack of descriptors are started once descriptors are free
/// again (here 300 ms later): the guard's exit 2 denies the call and the allowing hook is
/// heard. Before the fix both failed at once as non-blocking errors and nothing decided.
#[test]
fn a_hook_short_of_descriptors_starts_once_they_are_free() {
    in_own_process(
        "a_hook_short_of_descriptors_starts_once_they_are_free",
        || {
            runtime().block_on(async {
                let env = Env::new();
                let allow = r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'"#;
                let r = runner(one(
                    "PreToolUse",
                    "Read",
                    vec![cmd(allow), cmd("echo GUARD >&2; exit 2")],
                ));
                let ctx = env.ctx();
                // Hooks started once with descriptors to spare (the runtime's child
                // handling is set up).
                let warm = r.run_pre_tool_use(&read_call("t0"), &ctx).await;
                assert_eq!(
                    warm.decision.map(|d| d.behavior),
                    Some(PermissionDecision::Deny)
                );

                let files = use_up_descriptors();
                let freed = tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    drop(files);
                });
                let start = Instant::now();
                let out = r.run_pre_tool_use(&read_call("t1"), &ctx).await;
                freed.await.unwrap();
                assert!(start.elapsed() >= Duration::from_millis(250), "{out:?}");
                assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
                let decision = out.decision.expect("the guard decided");
                assert_eq!(decision.behavior, PermissionDecision::Deny);
                assert!(decision.message.contains("GUARD"), "{}", decision.message);
                assert_eq!(out.common.runs.len(), 2);
                assert!(
                    out.common.runs.iter().all(|run| run.exit_code.is_some()),
                    "{:?}",
                    out.common.runs
                );
            });
        },
    );
}

/// A PreToolUse or PermissionRequest hook that still cannot start when its retries run out
/// (at half its timeout, here 1 s) refuses the call, saying why; a PostToolUse hook's
/// failure stays a non-blocking error. Before the fix the allowing PreToolUse hook's
/// failure let the call go on to the permission flow.
#[test]
fn a_guard_that_cannot_start_refuses_the_call() {
    in_own_process("a_guard_that_cannot_start_refuses_the_call", || {
        runtime().block_on(async {
            let env = Env::new();
            let hook = |c: &str| json!({"type": "command", "command": c, "timeout": 1});
            let allow = r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'"#;
            let r = runner(json!({
                "PreToolUse": [{"matcher": "Read", "hooks": [hook(allow)]}],
                "PermissionRequest": [{"matcher": "Read", "hooks": [hook("true")]}],
                "PostToolUse": [{"matcher": "Read", "hooks": [hook("true")]}],
            }));
            let ctx = env.ctx();
            let warm = r.run_pre_tool_use(&read_call("t0"), &ctx).await;
            assert_eq!(
                warm.decision.map(|d| d.behavior),
                Some(PermissionDecision::Allow)
            );

            let files = use_up_descriptors();
            let start = Instant::now();
            let pre = r.run_pre_tool_use(&read_call("t1"), &ctx).await;
            let asked = r.run_permission_request(&read_call("t1"), &[], &ctx).await;
            let post = r
                .run_post_tool_use(&read_call("t1"), &json!({}), &ctx)
                .await;
            let took = start.elapsed();
            drop(files);

            let decision = pre.decision.expect("a decision");
            assert_eq!(decision.behavior, PermissionDecision::Deny, "{decision:?}");
            for needed in ["PreToolUse:Read hook error", "Too many open files", "EMFILE", "could not be started"] {
                assert!(decision.message.contains(needed), "{needed}: {}", decision.message);
            }
            match asked.verdict {
                Some(PermissionRequestVerdict::Deny { message, interrupt, .. }) => {
                    assert!(!interrupt);
                    for needed in ["Permission to use Read denied", "Too many open files"] {
                        assert!(message.contains(needed), "{needed}: {message}");
                    }
                }
                other => panic!("{other:?}"),
            }
            assert!(post.common.blocking_errors.is_empty());
            assert_eq!(post.common.errors.len(), 1, "{:?}", post.common.errors);
            assert!(
                post.common.errors[0].text.contains("Too many open files"),
                "{:?}",
                post.common.errors
            );
            // Three hooks, each retried for half its 1 s timeout: the other half is left
            // for the hook to run in.
            assert!(took >= Duration::from_millis(1400), "{took:?}");
            assert!(took < Duration::from_millis(2500), "{took:?}");
        });
    });
}

/// The review's case: a few descriptors to spare, 10 parallel Reads each with 7 slow hooks
/// and a guard that always blocks. Every call is denied by the guard (2–3 of them went
/// ahead: their guard could not start and counted as a non-blocking error).
#[test]
fn parallel_calls_short_of_descriptors_are_all_stopped_by_their_guard() {
    in_own_process(
        "parallel_calls_short_of_descriptors_are_all_stopped_by_their_guard",
        || {
            runtime().block_on(async {
                let env = Env::new();
                let mut hooks: Vec<_> = (0..7)
                    .map(|i| cmd(&format!("sleep 0.5; true #{i}")))
                    .collect();
                hooks.push(cmd("echo GUARD >&2; exit 2"));
                let r = runner(one("PreToolUse", "", hooks));
                let ctx = env.ctx();
                let warm = r.run_pre_tool_use(&read_call("t0"), &ctx).await;
                assert!(warm.decision.is_some());

                let mut files = use_up_descriptors();
                // Room for a few hooks at a time (each holds three pipes while it runs).
                files.truncate(files.len().saturating_sub(40));
                let calls: Vec<_> = (1..=10).map(|i| read_call(&format!("t{i}"))).collect();
                let outs =
                    futures::future::join_all(calls.iter().map(|c| r.run_pre_tool_use(c, &ctx)))
                        .await;
                drop(files);
                for (i, out) in outs.iter().enumerate() {
                    let d = out.decision.as_ref().unwrap_or_else(|| {
                        panic!("call {i} was not stopped: {:?}", out.common.errors)
                    });
                    assert_eq!(d.behavior, PermissionDecision::Deny, "call {i}: {d:?}");
                    assert!(d.message.contains("GUARD"), "call {i}: {}", d.message);
                }
            });
        },
    );
}

/// An http PreToolUse hook that cannot build its client or open its connection for want of
/// descriptors refuses the call too, after trying again within its timeout (its failure was
/// a non-blocking error, and a client that failed to build was kept: every later http hook
/// of the session failed).
#[test]
fn an_http_guard_without_descriptors_refuses_the_call() {
    in_own_process("an_http_guard_without_descriptors_refuses_the_call", || {
        runtime().block_on(async {
            let env = Env::new();
            // Nothing listens there: with descriptors to spare the request is refused.
            let r = runner(json!({"PreToolUse": [{"matcher": "Read", "hooks": [
                {"type": "http", "url": "http://127.0.0.1:9/hook", "timeout": 1}
            ]}]}));
            let ctx = env.ctx();
            let refused = |what: &str, out: tool_hooks::PreToolUseOutcome, took: Duration| {
                let decision = out
                    .decision
                    .unwrap_or_else(|| panic!("{what}: {:?}", out.common.errors));
                assert_eq!(decision.behavior, PermissionDecision::Deny, "{what}");
                // The shortage named by its errno (it said "out of file descriptors"
                // whatever the shortage was).
                for needed in ["could not be started", "EMFILE", what] {
                    assert!(
                        decision.message.contains(needed),
                        "{needed}: {}",
                        decision.message
                    );
                }
                // Retried for half its timeout (the last try was at the timeout itself,
                // where the hook's own timeout could win and let the call go on).
                assert!(took >= Duration::from_millis(450), "{what}: {took:?}");
                assert!(took < Duration::from_millis(900), "{what}: {took:?}");
            };
            // The client is built at the first http hook: it cannot read the system's
            // certificates.
            let files = use_up_descriptors();
            let start = Instant::now();
            let out = r.run_pre_tool_use(&read_call("t1"), &ctx).await;
            let took = start.elapsed();
            drop(files);
            refused("cannot build the HTTP client", out, took);

            // With descriptors, the client is built and the connection refused: a
            // non-blocking error, as before.
            let out = r.run_pre_tool_use(&read_call("t2"), &ctx).await;
            assert!(out.decision.is_none(), "{:?}", out.decision);
            assert_eq!(out.common.errors.len(), 1, "{:?}", out.common.errors);
            assert!(
                out.common.errors[0].text.contains("request to"),
                "{:?}",
                out.common.errors
            );

            // The built client cannot open a socket.
            let files = use_up_descriptors();
            let start = Instant::now();
            let out = r.run_pre_tool_use(&read_call("t3"), &ctx).await;
            let took = start.elapsed();
            drop(files);
            refused("Too many open files", out, took);
        });
    });
}

/// A guard whose start a shortage delayed and that then reaches its timeout refuses the
/// call: it may have refused it, and it had less than its timeout to run (here 1 s; it
/// started about 150 ms late). Before the fix its timeout was a non-blocking error and the
/// call went on. A PostToolUse hook's timeout stays a non-blocking error.
#[test]
fn a_guard_started_late_by_a_shortage_that_times_out_refuses_the_call() {
    in_own_process(
        "a_guard_started_late_by_a_shortage_that_times_out_refuses_the_call",
        || {
            runtime().block_on(async {
                let env = Env::new();
                let hook = json!({"type": "command", "command": "sleep 5", "timeout": 1});
                let r = runner(json!({
                    "PreToolUse": [{"matcher": "Read", "hooks": [hook.clone()]}],
                    "PostToolUse": [{"matcher": "Read", "hooks": [hook]}],
                }));
                let ctx = env.ctx();
                // Warm up: the runtime's child handling is set up with descriptors to spare.
                let warm = r
                    .run_post_tool_use(&read_call("t0"), &json!({}), &ctx)
                    .await;
                assert_eq!(warm.common.errors.len(), 1, "{:?}", warm.common.errors);

                let freed = use_up_descriptors_for(Duration::from_millis(150));
                let pre = r.run_pre_tool_use(&read_call("t1"), &ctx).await;
                freed.await.unwrap();
                // It did start (and was killed at its timeout).
                assert!(
                    pre.common.runs.iter().all(|run| run.timed_out),
                    "{:?}",
                    pre.common.runs
                );
                let decision = pre
                    .decision
                    .unwrap_or_else(|| panic!("the call went on: {:?}", pre.common.errors));
                assert_eq!(decision.behavior, PermissionDecision::Deny, "{decision:?}");
                for needed in [
                    "PreToolUse:Read hook error",
                    "timed out",
                    "delayed",
                    "EMFILE",
                ] {
                    assert!(
                        decision.message.contains(needed),
                        "{needed}: {}",
                        decision.message
                    );
                }

                let freed = use_up_descriptors_for(Duration::from_millis(150));
                let post = r
                    .run_post_tool_use(&read_call("t2"), &json!({}), &ctx)
                    .await;
                freed.await.unwrap();
                assert!(post.common.blocking_errors.is_empty());
                assert_eq!(post.common.errors.len(), 1, "{:?}", post.common.errors);
                assert!(
                    post.common.errors[0].text.contains("timed out"),
                    "{:?}",
                    post.common.errors
                );
            });
        },
    );
}

/// A guard that cannot start stops being retried at half its timeout (here 2 s), so that a
/// start that succeeds at last still leaves it time to run: the call is refused at about
/// 1 s. Before the fix it was retried up to its timeout: started at 1.6 s, this allowing
/// guard let the call through, and one started later still was killed at its timeout, a
/// non-blocking error that let the call go on.
#[test]
fn a_guard_is_retried_for_half_its_timeout_only() {
    in_own_process("a_guard_is_retried_for_half_its_timeout_only", || {
        runtime().block_on(async {
            let env = Env::new();
            let allow = r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'"#;
            let r = runner(json!({"PreToolUse": [{"matcher": "Read", "hooks": [
                {"type": "command", "command": allow, "timeout": 2}
            ]}]}));
            let ctx = env.ctx();
            let warm = r.run_pre_tool_use(&read_call("t0"), &ctx).await;
            assert_eq!(
                warm.decision.map(|d| d.behavior),
                Some(PermissionDecision::Allow)
            );

            let freed = use_up_descriptors_for(Duration::from_millis(1600));
            let start = Instant::now();
            let out = r.run_pre_tool_use(&read_call("t1"), &ctx).await;
            let took = start.elapsed();
            freed.await.unwrap();
            let decision = out.decision.expect("a decision");
            assert_eq!(decision.behavior, PermissionDecision::Deny, "{decision:?}");
            assert!(
                decision.message.contains("could not be started"),
                "{}",
                decision.message
            );
            assert!(took >= Duration::from_millis(950), "{took:?}");
            assert!(took < Duration::from_millis(1500), "{took:?}");
        });
    });
}

/// An http guard whose connection a shortage delayed and that then gets no answer within
/// its timeout refuses the call (the hook never answered; it may have refused it). With
/// descriptors to spare, the same server's silence is a timeout that lets the call go on,
/// as in Claude Code. Before the fix the delayed one let the call go on too.
#[test]
fn an_http_guard_whose_connection_a_shortage_delayed_refuses_the_call_at_its_timeout() {
    in_own_process(
        "an_http_guard_whose_connection_a_shortage_delayed_refuses_the_call_at_its_timeout",
        || {
            runtime().block_on(async {
                let env = Env::new();
                // Connections are taken by the kernel and never answered.
                let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                let url = format!("http://{}/hook", silent.local_addr().unwrap());
                let r = runner(json!({"PreToolUse": [{"matcher": "Read", "hooks": [
                    {"type": "http", "url": url, "timeout": 1}
                ]}]}));
                let ctx = env.ctx();
                // With descriptors: a timeout, a non-blocking error (and the client is built).
                let out = r.run_pre_tool_use(&read_call("t0"), &ctx).await;
                assert!(out.decision.is_none(), "{:?}", out.decision);
                assert_eq!(out.common.errors.len(), 1, "{:?}", out.common.errors);
                assert!(
                    out.common.errors[0].text.contains("timed out"),
                    "{:?}",
                    out.common.errors
                );

                let freed = use_up_descriptors_for(Duration::from_millis(150));
                let out = r.run_pre_tool_use(&read_call("t1"), &ctx).await;
                freed.await.unwrap();
                let decision = out
                    .decision
                    .unwrap_or_else(|| panic!("the call went on: {:?}", out.common.errors));
                assert_eq!(decision.behavior, PermissionDecision::Deny, "{decision:?}");
                for needed in ["timed out", "delayed", "EMFILE"] {
                    assert!(
                        decision.message.contains(needed),
                        "{needed}: {}",
                        decision.message
                    );
                }
                drop(silent);
            });
        },
    );
}

/// An http guard whose client cannot be built for a reason the error does not give is
/// taken to be short of resources (a build that fails for want of descriptors says only "No
/// CA certificates were loaded", and descriptors may be free again by the time anyone
/// looks): retried, then the call is refused. Here no certificate can be read (an empty
/// `SSL_CERT_FILE`) while descriptors are plentiful, as after such a race. A PostToolUse
/// hook's failure stays a non-blocking error. Before the fix the guard's failure was a
/// non-blocking error and the call went on.
#[test]
fn an_http_guard_whose_client_cannot_be_built_refuses_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("no-certificates.pem");
    std::fs::write(&empty, "").unwrap();
    in_own_process_with(
        "an_http_guard_whose_client_cannot_be_built_refuses_the_call",
        &[("SSL_CERT_FILE", &empty), ("SSL_CERT_DIR", dir.path())],
        || {
            runtime().block_on(async {
                let env = Env::new();
                let hook = json!({"type": "http", "url": "http://127.0.0.1:9/hook", "timeout": 1});
                let r = runner(json!({
                    "PreToolUse": [{"matcher": "Read", "hooks": [hook.clone()]}],
                    "PostToolUse": [{"matcher": "Read", "hooks": [hook]}],
                }));
                let ctx = env.ctx();
                let start = Instant::now();
                let pre = r.run_pre_tool_use(&read_call("t1"), &ctx).await;
                let took = start.elapsed();
                let decision = pre
                    .decision
                    .unwrap_or_else(|| panic!("the call went on: {:?}", pre.common.errors));
                assert_eq!(decision.behavior, PermissionDecision::Deny, "{decision:?}");
                for needed in ["could not be started", "cannot build the HTTP client"] {
                    assert!(
                        decision.message.contains(needed),
                        "{needed}: {}",
                        decision.message
                    );
                }
                assert!(took >= Duration::from_millis(450), "{took:?}");
                assert!(took < Duration::from_millis(900), "{took:?}");

                let post = r
                    .run_post_tool_use(&read_call("t1"), &json!({}), &ctx)
                    .await;
                assert!(post.common.blocking_errors.is_empty());
                assert_eq!(post.common.errors.len(), 1, "{:?}", post.common.errors);
                assert!(
                    post.common.errors[0]
                        .text
                        .contains("cannot build the HTTP client"),
                    "{:?}",
                    post.common.errors
                );
            });
        },
    );
}

/// `tool_core::process::raise_open_file_limit` (what the binary calls first in `main`)
/// raises a soft limit of 256 towards the hard limit, at most 65,536 (macOS may take less:
/// `kern.maxfilesperproc`): more than 256 files open at once, and hooks start beside them.
/// Calling it again changes nothing.
#[test]
fn the_open_file_limit_is_raised_at_startup() {
    in_own_process("the_open_file_limit_is_raised_at_startup", || {
        let hard: u64 = {
            let out = std::process::Command::new("/bin/sh")
                .args(["-c", "ulimit -Hn"])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            if text == "unlimited" {
                u64::MAX
            } else {
                text.parse().unwrap()
            }
        };
        let lowered = LIMIT as u64;
        let ceiling = hard.min(65_536);
        let raised = tool_core::process::raise_open_file_limit().unwrap();
        assert!(raised <= ceiling, "{raised} > {ceiling}");
        if ceiling > lowered {
            assert!(raised > lowered, "{raised} <= {lowered}");
        } else {
            assert_eq!(raised, lowered);
        }
        assert_eq!(tool_core::process::raise_open_file_limit().unwrap(), raised);
        // What the children inherit: the shell reports the new soft limit.
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", "ulimit -Sn"])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            raised.to_string()
        );
        // As many files open as the new limit leaves room for, well past the old one.
        let room = usize::try_from(raised)
            .unwrap_or(usize::MAX)
            .saturating_sub(64);
        let wanted = room.min(LIMIT + 100);
        let files: Vec<File> = (0..wanted)
            .map(|_| File::open("/dev/null").unwrap())
            .collect();
        assert_eq!(files.len(), wanted);
    });
}
