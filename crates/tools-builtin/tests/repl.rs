//! REPL with real python3 and node processes: state persists between calls, exceptions are
//! error results with tracebacks, timeouts and cancellation stop the interpreter (and the next
//! call says so), dropping the session leaves no process of its groups, output is bounded.
#![cfg(feature = "repl")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{gone_within, live_in_group};
use serde_json::{Value, json};
use tool_core::{ProgressSender, Tool, ToolUseContext};
use tools_builtin::Repl;
use tools_builtin::repl::{Language, repl_sessions};

async fn call(tool: &dyn Tool, ctx: &ToolUseContext, input: Value) -> Result<String, String> {
    let input = tool.parse_input(input).map_err(|e| e.to_model_text())?;
    tool.validate_input(&input, ctx)
        .await
        .map_err(|e| e.message)?;
    tool.call(input, ctx.clone(), ProgressSender::none())
        .await
        .map(|r| r.data.content.joined_text())
        .map_err(|e| e.to_model_text())
}

async fn py(ctx: &ToolUseContext, code: &str) -> Result<String, String> {
    call(
        &Repl::default(),
        ctx,
        json!({"code": code, "language": "python"}),
    )
    .await
}

async fn node(ctx: &ToolUseContext, code: &str) -> Result<String, String> {
    call(
        &Repl::default(),
        ctx,
        json!({"code": code, "language": "node"}),
    )
    .await
}

fn ctx() -> (tempfile::TempDir, ToolUseContext) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(std::fs::canonicalize(dir.path()).unwrap());
    (dir, ctx)
}

#[tokio::test]
async fn python_state_persists_and_each_call_gets_its_own_output() {
    let (dir, ctx) = ctx();
    assert_eq!(
        py(&ctx, "x = 41\ndef inc(v):\n    return v + 1\nprint('one')")
            .await
            .unwrap(),
        "one"
    );
    // The final expression's value is shown; only this call's output is returned.
    assert_eq!(py(&ctx, "inc(x)").await.unwrap(), "42");
    assert_eq!(
        py(
            &ctx,
            "import sys\nprint('out')\nprint('err', file=sys.stderr)"
        )
        .await
        .unwrap(),
        "out\nerr"
    );
    assert_eq!(py(&ctx, "y = 1").await.unwrap(), "");
    // It runs in the session's cwd, and the code cannot read the driver's requests.
    assert_eq!(
        py(&ctx, "import os\nos.getcwd()").await.unwrap(),
        format!("{:?}", std::fs::canonicalize(dir.path()).unwrap()).replace('"', "'")
    );
    let err = py(&ctx, "input()").await.unwrap_err();
    assert!(err.contains("EOFError"), "{err}");
    // Nor can a child that inherits stdin.
    assert_eq!(
        py(
            &ctx,
            "import subprocess\nsubprocess.run(['cat']).returncode"
        )
        .await
        .unwrap(),
        "0"
    );
    assert_eq!(py(&ctx, "x").await.unwrap(), "41");
    // One interpreter for all those calls.
    assert!(repl_sessions(&ctx).pgid(Language::Python).await.is_some());
}

/// A child that inherits the interpreter's stdin (`stdio: 'inherit'`) reads an empty one:
/// it cannot eat the next request and hang the REPL until its timeout.
#[tokio::test]
async fn node_children_cannot_read_the_requests() {
    let (_dir, ctx) = ctx();
    let repl = Repl::with_timeout(Duration::from_secs(20));
    let run = |code: &str| call(&repl, &ctx, json!({"code": code, "language": "node"}));
    assert_eq!(
        run("require('child_process').spawnSync('cat', { stdio: 'inherit' }).status")
            .await
            .unwrap(),
        "0"
    );
    assert_eq!(run("1 + 1").await.unwrap(), "2");
}

#[tokio::test]
async fn node_state_persists() {
    let (_dir, ctx) = ctx();
    assert_eq!(
        node(
            &ctx,
            "let x = 41; var y = 1; function f() { return x + y; }; console.log('hi')"
        )
        .await
        .unwrap(),
        "hi"
    );
    assert_eq!(node(&ctx, "f()").await.unwrap(), "42");
    assert_eq!(
        node(&ctx, "const path = require('path'); path.join('a', 'b')")
            .await
            .unwrap(),
        "'a/b'"
    );
    assert_eq!(
        node(&ctx, "console.error('to stderr'); undefined")
            .await
            .unwrap(),
        "to stderr"
    );
    // A returned promise is awaited.
    assert_eq!(
        node(
            &ctx,
            "(async () => { await new Promise(r => setTimeout(r, 1)); return x * 2; })()"
        )
        .await
        .unwrap(),
        "82"
    );
}

#[tokio::test]
async fn exceptions_are_errors_with_tracebacks_and_keep_state() {
    let (_dir, ctx) = ctx();
    py(&ctx, "kept = 'yes'").await.unwrap();
    let err = py(
        &ctx,
        "print('before')\ndef g():\n    raise ValueError('boom')\ng()",
    )
    .await
    .unwrap_err();
    assert!(err.starts_with("before\n"), "{err}");
    assert!(err.contains("Traceback (most recent call last):"), "{err}");
    assert!(err.contains("line 3, in g"), "{err}");
    assert!(err.contains("raise ValueError('boom')"), "{err}");
    assert!(err.ends_with("ValueError: boom"), "{err}");
    // The driver's own frames are not shown.
    assert!(!err.contains("_tw_main"), "{err}");
    let err = py(&ctx, "def broken(:").await.unwrap_err();
    assert!(err.contains("SyntaxError"), "{err}");
    assert_eq!(py(&ctx, "kept").await.unwrap(), "'yes'");

    node(&ctx, "var keptJs = 7").await.unwrap();
    let err = node(&ctx, "function h() { throw new Error('bang'); }\nh()")
        .await
        .unwrap_err();
    assert!(err.contains("\nError: bang\n"), "{err}");
    assert!(err.contains("at h (<repl-"), "{err}");
    assert!(!err.contains("node:vm"), "{err}");
    assert_eq!(node(&ctx, "keptJs").await.unwrap(), "7");
}

/// An exception with a huge message is cut by the interpreter's driver to its head and
/// tail before it is sent: the host never holds megabytes of traceback (a status line over
/// 1 MiB is refused as unreadable), and the error still names the exception and ends as it
/// ends.
#[tokio::test]
async fn a_huge_exception_message_is_cut_before_it_is_sent() {
    let (_dir, ctx) = ctx();
    let err = py(&ctx, "raise ValueError('start' + 'x' * 5_000_000 + 'end')")
        .await
        .unwrap_err();
    assert!(err.len() < 30_000, "{} bytes", err.len());
    assert!(
        err.contains("ValueError: start") && err.ends_with("end"),
        "{}",
        &err[..300.min(err.len())]
    );
    assert_eq!(py(&ctx, "1 + 1").await.unwrap(), "2");
    let err = node(
        &ctx,
        "throw new Error('start' + 'x'.repeat(5000000) + 'end')",
    )
    .await
    .unwrap_err();
    assert!(err.len() < 30_000, "{} bytes", err.len());
    assert!(
        err.contains("Error: start") && err.contains("xxxend"),
        "{}",
        &err[err.len().saturating_sub(300)..]
    );
    assert_eq!(node(&ctx, "1 + 1").await.unwrap(), "2");
}

#[tokio::test]
async fn a_timeout_kills_the_interpreter_and_the_next_call_starts_fresh() {
    let (_dir, ctx) = ctx();
    py(
        &ctx,
        "x = 1\nimport subprocess\nchild = subprocess.Popen(['sleep', '300'])",
    )
    .await
    .unwrap();
    let pgid = repl_sessions(&ctx).pgid(Language::Python).await.unwrap();
    assert!(
        live_in_group(pgid).len() >= 2,
        "the interpreter and its child"
    );
    let quick = Repl::with_timeout(Duration::from_millis(300));
    let err = call(
        &quick,
        &ctx,
        json!({"code": "print('spinning')\nwhile True: pass", "language": "python"}),
    )
    .await
    .unwrap_err();
    assert!(err.starts_with("spinning\n"), "{err}");
    assert!(
        err.contains("The call timed out after 300 ms; the python interpreter was stopped"),
        "{err}"
    );
    // The whole group is gone, the child too, before the call returned.
    assert_eq!(live_in_group(pgid), Vec::<i32>::new());
    assert_eq!(repl_sessions(&ctx).pgid(Language::Python).await, None);
    let err = py(&ctx, "x").await.unwrap_err();
    assert!(
        err.starts_with(
            "[Started a fresh python interpreter: the previous one timed out after 300 ms."
        ),
        "{err}"
    );
    assert!(err.contains("NameError"), "{err}");
    // The note is given once.
    assert_eq!(py(&ctx, "1 + 1").await.unwrap(), "2");
    assert_ne!(repl_sessions(&ctx).pgid(Language::Python).await, Some(pgid));
}

#[tokio::test]
async fn cancellation_kills_the_interpreter() {
    let (dir, ctx) = ctx();
    node(&ctx, "var state = 1").await.unwrap();
    let pgid = repl_sessions(&ctx).pgid(Language::Node).await.unwrap();
    let flag = dir.path().join("started");
    let child = ctx.child();
    let token = child.cancellation().clone();
    let tool: Arc<dyn Tool> = Arc::new(Repl::default());
    let code = format!(
        "require('fs').writeFileSync({:?}, 'go'); while (true) {{}}",
        flag.display().to_string()
    );
    let input = tool
        .parse_input(json!({"code": code, "language": "node"}))
        .unwrap();
    let running = tokio::spawn({
        let tool = Arc::clone(&tool);
        async move { tool.call(input, child, ProgressSender::none()).await }
    });
    // Cancel once the code is really running.
    while !flag.exists() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    token.cancel();
    let err = running.await.unwrap().unwrap_err();
    assert!(err.is_cancelled(), "{err}");
    assert_eq!(live_in_group(pgid), Vec::<i32>::new());
    let err = node(&ctx, "state").await.unwrap_err();
    assert!(
        err.starts_with(
            "[Started a fresh node interpreter: the previous one was stopped when a call was \
             interrupted."
        ),
        "{err}"
    );
    assert!(
        err.contains("ReferenceError: state is not defined"),
        "{err}"
    );
}

#[tokio::test]
async fn an_abandoned_call_is_replaced_by_a_fresh_interpreter() {
    let (dir, ctx) = ctx();
    py(&ctx, "state = 1").await.unwrap();
    let pgid = repl_sessions(&ctx).pgid(Language::Python).await.unwrap();
    let flag = dir.path().join("started");
    let code = format!(
        "open({:?}, 'w').write('go')\nimport time\ntime.sleep(300)",
        flag.display().to_string()
    );
    let running = tokio::spawn({
        let ctx = ctx.clone();
        async move { py(&ctx, &code).await }
    });
    while !flag.exists() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The executor drops the call's future without cancelling its token.
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());
    assert!(
        !live_in_group(pgid).is_empty(),
        "still running until the next call"
    );
    let err = py(&ctx, "state").await.unwrap_err();
    assert!(
        err.starts_with(
            "[Started a fresh python interpreter: the previous one was stopped: an earlier call \
             was abandoned."
        ),
        "{err}"
    );
    assert_eq!(live_in_group(pgid), Vec::<i32>::new());
}

#[tokio::test]
async fn dropping_the_session_kills_the_interpreters() {
    let (_dir, ctx) = ctx();
    py(
        &ctx,
        "import subprocess\nchild = subprocess.Popen(['sleep', '300'])",
    )
    .await
    .unwrap();
    node(&ctx, "1").await.unwrap();
    let sessions = repl_sessions(&ctx);
    let py_group = sessions.pgid(Language::Python).await.unwrap();
    let node_group = sessions.pgid(Language::Node).await.unwrap();
    drop(sessions);
    assert!(live_in_group(py_group).len() >= 2);
    assert!(!live_in_group(node_group).is_empty());
    drop(ctx);
    assert!(gone_within(py_group, Duration::from_secs(5)).await);
    assert!(gone_within(node_group, Duration::from_secs(5)).await);
}

#[tokio::test]
async fn an_exiting_interpreter_is_reported_and_replaced() {
    let (_dir, ctx) = ctx();
    py(&ctx, "v = 1").await.unwrap();
    let err = py(&ctx, "import os\nprint('bye', flush=True)\nos._exit(3)")
        .await
        .unwrap_err();
    assert!(err.starts_with("bye\n"), "{err}");
    assert!(
        err.contains("The python interpreter exited (exit status: 3)"),
        "{err}"
    );
    let out = py(&ctx, "print('back')").await.unwrap();
    assert_eq!(
        out,
        "[Started a fresh python interpreter: the previous one exited (exit status: 3). \
         Variables, imports and definitions from earlier calls are gone.]\nback"
    );
    // What the interpreter wrote to both streams just before exiting is all kept, whichever
    // stream ends first.
    for _ in 0..10 {
        let err = py(
            &ctx,
            "import os, sys\nprint('out', flush=True)\nsys.stderr.write('err-bye\\n')\nsys.stderr.flush()\nos._exit(4)",
        )
        .await
        .unwrap_err();
        assert!(err.contains("out") && err.contains("err-bye"), "{err}");
    }
}

#[tokio::test]
async fn output_is_capped_and_the_stream_stays_in_step() {
    let (_dir, ctx) = ctx();
    let out = py(&ctx, "print('a' * 3_000_000 + 'END')").await.unwrap();
    assert!(out.len() < 100_000, "{}", out.len());
    assert!(out.starts_with("aaaa"));
    assert!(out.ends_with("aaaEND"));
    assert!(out.contains("bytes of output omitted"), "no omission note");
    assert_eq!(py(&ctx, "print('after')").await.unwrap(), "after");
    assert_eq!(
        Tool::max_result_size(&Repl::default()),
        tool_core::MaxResultSize::Chars(30_000)
    );
}

#[test]
fn flags_schema_and_marker() {
    let tool: &dyn Tool = &Repl::default();
    let input = json!({"code": "1", "language": "python"});
    assert!(!tool.is_concurrency_safe(&input));
    assert!(!tool.is_read_only(&input));
    assert!(tool.is_destructive(&input));
    assert!(tool.prompt().contains("toolwright-gated-tool:repl"));
    assert_eq!(tool.user_facing_name(&input), "REPL(python)");
    let schema = tool.input_schema();
    assert_eq!(schema["required"], json!(["code", "language"]));
    let err = tool
        .parse_input(json!({"code": "1", "language": "ruby"}))
        .unwrap_err();
    assert!(
        err.to_model_text().contains(
            "The parameter `language` must be one of \"python\", \"node\", but is \"ruby\""
        ),
        "{err}"
    );
}

/// A timed-out call sends SIGTERM to the interpreter's whole group and gives it the grace
/// period: a child that cleans up on SIGTERM finishes, although the interpreter itself dies
/// at once. It was SIGKILLed as soon as the interpreter was reaped.
#[tokio::test]
async fn a_timeout_gives_a_child_s_term_trap_its_grace() {
    let (dir, ctx) = ctx();
    let ready = dir.path().join("ready");
    let cleaned = dir.path().join("cleaned");
    let script = format!(
        "trap \"sleep 0.5; touch {c}\" TERM; touch {r}; sleep 100 & wait",
        c = cleaned.display(),
        r = ready.display()
    );
    let code = format!(
        "import os, subprocess, time\n\
         child = subprocess.Popen(['bash', '-c', {script:?}])\n\
         while not os.path.exists({ready:?}): time.sleep(0.01)",
        ready = ready.display().to_string()
    );
    py(&ctx, &code).await.unwrap();
    let pgid = repl_sessions(&ctx).pgid(Language::Python).await.unwrap();
    let quick = Repl::with_timeout(Duration::from_millis(300));
    let err = call(
        &quick,
        &ctx,
        json!({"code": "while True: pass", "language": "python"}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("The call timed out after 300 ms"), "{err}");
    assert!(cleaned.exists(), "the TERM trap did not finish");
    assert_eq!(live_in_group(pgid), Vec::<i32>::new());
}

/// Output cut to its head and tail is cut between characters: no U+FFFD where a cut fell
/// inside one (two-byte characters in Python, three-byte ones in Node, both cuts off their
/// boundaries).
#[tokio::test]
async fn a_cut_output_never_splits_a_character() {
    let (_dir, ctx) = ctx();
    let out = py(&ctx, "print('x' + 'é' * 1_000_000)").await.unwrap();
    assert!(out.contains("bytes of output omitted"), "no omission note");
    assert!(!out.contains('\u{fffd}'), "a character was split");
    assert!(out.starts_with("xéé") && out.ends_with("éé"));
    let out = node(&ctx, "console.log('€'.repeat(700000))").await.unwrap();
    assert!(out.contains("bytes of output omitted"), "no omission note");
    assert!(!out.contains('\u{fffd}'), "a character was split");
    assert!(out.starts_with("€€") && out.ends_with("€€"));
}

/// When the session's cwd changes (EnterWorktree, ExitWorktree), the interpreters follow it
/// before the next call, their state kept: relative paths mean what the other tools mean,
/// and an interpreter left in a removed worktree does not fail every call.
#[tokio::test]
async fn interpreters_follow_the_sessions_cwd_and_keep_their_state() {
    let (dir, ctx) = ctx();
    let root = ctx.cwd().to_path_buf();
    let inner = root.join("work 'tree\" \\ é");
    std::fs::create_dir(&inner).unwrap();
    py(&ctx, "x = 41").await.unwrap();
    node(&ctx, "globalThis.y = 7").await.unwrap();
    let moved = ctx.clone().with_cwd(&inner);
    assert_eq!(
        py(&moved, "import os\nprint(os.getcwd())\nprint(x + 1)")
            .await
            .unwrap(),
        format!("{}\n42", inner.display())
    );
    py(&moved, "open('made.txt', 'w').write('hi')")
        .await
        .unwrap();
    assert!(inner.join("made.txt").is_file());
    assert_eq!(
        node(&moved, "console.log(process.cwd()); console.log(y)")
            .await
            .unwrap(),
        format!("{}\n7", inner.display())
    );
    // Back, after the directory is gone: the interpreter moves back too.
    std::fs::remove_dir_all(&inner).unwrap();
    assert_eq!(
        py(&ctx, "import os\nprint(os.getcwd())").await.unwrap(),
        root.display().to_string()
    );
    // A chdir of the code's own holds while the session stays where it is.
    py(&ctx, "os.chdir('/')").await.unwrap();
    assert_eq!(py(&ctx, "print(os.getcwd())").await.unwrap(), "/");
    // Names the code shadowed do not stop the move (the driver's own are used).
    py(&ctx, "__import__ = None\nos = None").await.unwrap();
    node(&ctx, "var process = 0").await.unwrap();
    let again = root.join("again");
    std::fs::create_dir(&again).unwrap();
    let moved = ctx.clone().with_cwd(&again);
    assert_eq!(
        py(&moved, "import os as o\nprint(o.getcwd())")
            .await
            .unwrap(),
        again.display().to_string()
    );
    assert_eq!(
        node(&moved, "console.log(require('process').cwd())")
            .await
            .unwrap(),
        again.display().to_string()
    );
    // A directory that is gone is said once; the next call runs where the interpreter is.
    let gone = ctx.clone().with_cwd(root.join("never"));
    let err = py(&gone, "print(1)").await.unwrap_err();
    assert!(
        err.contains("could not move to the session's directory"),
        "{err}"
    );
    assert_eq!(py(&gone, "print(2)").await.unwrap(), "2");
    drop(dir);
}

/// Top-level `await` works as at node's own prompt (found by review 38), and what such a call
/// declares (`const`, `let`, `var`, functions, classes) persists for the next calls, as
/// what a call without `await` declares does.
#[tokio::test]
async fn top_level_await_works_and_declarations_persist() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(std::fs::canonicalize(dir.path()).unwrap());
    assert_eq!(
        node(&ctx, "const r = await Promise.resolve(7); r")
            .await
            .unwrap(),
        "7"
    );
    assert_eq!(
        node(
            &ctx,
            "let a = await Promise.resolve(2);\nvar v = 3;\nfunction dbl(x) { return x * 2; }\n\
             class Box { constructor(x) { this.x = x; } }\nconsole.log('declared');"
        )
        .await
        .unwrap(),
        "declared"
    );
    assert_eq!(node(&ctx, "dbl(a) + v + new Box(r).x").await.unwrap(), "14");
    // A call without `await` declares as before, and a later `await` call sees it.
    assert_eq!(node(&ctx, "const c = 10; let d = 1").await.unwrap(), "");
    assert_eq!(
        node(
            &ctx,
            "const e = await new Promise((ok) => setTimeout(() => ok(c + d), 1)); e"
        )
        .await
        .unwrap(),
        "11"
    );
    assert_eq!(node(&ctx, "e * 2").await.unwrap(), "22");
    // No final expression: nothing printed; a rejection is the call's error.
    assert_eq!(node(&ctx, "await null;\nlet z = 2").await.unwrap(), "");
    let err = node(&ctx, "await Promise.reject(new Error('nope'))")
        .await
        .unwrap_err();
    assert!(err.contains("nope"), "{err}");
    // `await` inside a plain function is still the syntax error it is at the prompt.
    let err = node(&ctx, "function g() { await 1 }").await.unwrap_err();
    assert!(err.contains("SyntaxError"), "{err}");
    // Code whose last line ends in a `//` comment (found by code review 38: the
    // rewriter's wrapper closed on that line, commented out), and a syntax error after
    // an `await`, which names the error, not `await` (the rewriter's SyntaxError).
    assert_eq!(
        node(&ctx, "const f = await Promise.resolve(5);\nf // five")
            .await
            .unwrap(),
        "5"
    );
    let err = node(&ctx, "const q = await Promise.resolve(1); if (q {")
        .await
        .unwrap_err();
    assert!(
        err.contains("SyntaxError") && !err.contains("only valid in async"),
        "{err}"
    );
    // The interpreter lived through all of it: state is still there.
    assert_eq!(node(&ctx, "r + e + z").await.unwrap(), "20");
}
