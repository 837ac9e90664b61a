//! Session 38's review of `toolwright agent` against the Messages API (the local stand-in,
//! `support/model_api.rs`): piped standard input joined to the prompt as Claude Code's `-p`
//! joins it, a retry said on stderr only when it is made, `CLAUDE_CODE_MAX_OUTPUT_TOKENS`,
//! and a 200 whose stream ends or stays silent before its first event.

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::binary::output_with_input;
use crate::model_api::*;

/// `toolwright agent` with `args` (the prompt, if any, among them) against `url`, in `dir`.
fn agent_with(url: &str, dir: &std::path::Path, args: &[&str]) -> Command {
    let mut command = agent_command(url, dir, &[], "");
    // `agent_command` ends with a prompt argument: this one is built again with `args` only.
    let mut own = Command::new(command.get_program());
    own.arg("agent").args(args).current_dir(dir);
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => own.env(key, value),
            None => own.env_remove(key),
        };
    }
    command = own;
    command
}

/// Waits for `child` at most a minute (killing it past that, which fails the test): the
/// run must not hang on a standard input nobody writes to.
fn finish_within_a_minute(mut child: Child) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!(
                "the run still waits after a minute: {:?}",
                child.wait_with_output()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// A server answering every request "ok".
fn ok_server() -> (String, Seen) {
    serve(|_, _| full(turn(Some("ok"), &[])))
}

/// Found by review: `git diff | toolwright agent -p "review this diff"` sent "review this
/// diff" alone, dropping the diff with exit 0. What a pipe carries is joined to the prompt
/// (the prompt, a newline, the input), as Claude Code's `-p` does; with and without `-p`.
#[test]
fn piped_stdin_is_joined_to_the_prompt() {
    for print in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let (url, seen) = ok_server();
        let mut args = vec!["review this diff"];
        if print {
            args.insert(0, "-p");
        }
        let diff = "diff --git a/x b/x\n+a bug here\n";
        let out = output_with_input(agent_with(&url, dir.path(), &args), diff.as_bytes());
        assert!(out.status.success(), "{}", stderr(&out));
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].prompt(), format!("review this diff\n{diff}"));
    }
}

/// Found by review: `echo q | toolwright agent -p` failed (no prompt argument), and `-`
/// was sent as the prompt `-`. Standard input alone is the prompt then, as `run -` reads
/// standard input.
#[test]
fn stdin_alone_is_the_prompt_without_an_argument_or_with_a_dash() {
    for args in [&["-p"][..], &["-p", "-"], &["--json", "-"]] {
        let dir = tempfile::tempdir().unwrap();
        let (url, seen) = ok_server();
        let out = output_with_input(agent_with(&url, dir.path(), args), b"what is 2+2\n");
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1, "{args:?}");
        assert_eq!(seen[0].prompt(), "what is 2+2\n", "{args:?}");
    }
}

/// A prompt past the 128 KiB a single argument can hold comes through standard input
/// whole (a megabyte here).
#[test]
fn a_megabyte_prompt_comes_through_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = ok_server();
    let big = "a".repeat(1024 * 1024);
    let out = output_with_input(agent_with(&url, dir.path(), &["-p"]), big.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(seen.lock().unwrap()[0].prompt(), big);
}

/// An open pipe nobody writes to (a script's inherited stdin) does not hold the run: after
/// 3 s without a byte it goes on with the argument alone and says so, as Claude Code does.
/// Without an argument there is no prompt: exit 2, no request.
#[test]
fn a_pipe_nobody_writes_to_is_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = ok_server();
    let mut child = agent_with(&url, dir.path(), &["-p", "the argument"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Held open, never written to, until the run has ended.
    let held = child.stdin.take().unwrap();
    let out = finish_within_a_minute(child);
    drop(held);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing came on standard input within 3 s"),
        "{}",
        stderr(&out)
    );
    assert_eq!(seen.lock().unwrap()[0].prompt(), "the argument");

    for args in [&["-p"][..], &["-p", "-"]] {
        let (url, seen) = ok_server();
        let mut child = agent_with(&url, dir.path(), args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let held = child.stdin.take().unwrap();
        let out = finish_within_a_minute(child);
        drop(held);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("no prompt"), "{}", stderr(&out));
        assert!(seen.lock().unwrap().is_empty());
    }
}

/// `< /dev/null` skips standard input (the argument alone is sent); without an argument,
/// an empty or blank input is no prompt (exit 2, no request).
#[test]
fn an_empty_stdin_is_no_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = ok_server();
    let out = agent_with(&url, dir.path(), &["-p", "only this"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(seen.lock().unwrap()[0].prompt(), "only this");
    for input in [&b""[..], b" \n\n"] {
        let (url, seen) = ok_server();
        let out = output_with_input(agent_with(&url, dir.path(), &["-p"]), input);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("no prompt"), "{}", stderr(&out));
        assert!(seen.lock().unwrap().is_empty());
    }
}

/// Standard input past 10 MiB is refused whole with a message that says the cap, and
/// bytes that are not UTF-8 are refused as in the argument: exit 2, no request.
#[test]
fn stdin_past_the_cap_or_not_utf8_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = ok_server();
    let big = vec![b'a'; 10 * 1024 * 1024 + 1];
    let out = output_with_input(agent_with(&url, dir.path(), &["-p", "summarise"]), &big);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("more than 10 MiB"),
        "{}",
        stderr(&out)
    );
    let out = output_with_input(
        agent_with(&url, dir.path(), &["-p", "summarise"]),
        b"caf\xe9 au lait",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not valid UTF-8"), "{}", stderr(&out));
    assert!(seen.lock().unwrap().is_empty());
}

/// Found by review: with the spending limit already reached by the failed attempt's
/// `message_start`, stderr said "retrying in 0.4 s (attempt 2 of 4)", waited, and then said
/// the retry was not made. The limit is checked before the retry is said: no such line.
#[test]
fn a_retry_the_budget_forbids_is_never_announced() {
    let dir = tempfile::tempdir().unwrap();
    let overloaded = sse(&[
        start(1_000_000),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let (url, seen) = serve(move |_, _| full(overloaded.clone()));
    let out = agent_command(&url, dir.path(), &["-p", "--max-budget-usd", "0.5"], "hi")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("retrying"), "{err}");
    assert!(err.contains("not retried: the spending limit"), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

/// A run of the `CLAUDE_CODE_MAX_OUTPUT_TOKENS` test: its extra arguments, the variable's
/// value, the `max_tokens` sent and the warning expected.
type Case = (
    &'static [&'static str],
    Option<&'static str>,
    u64,
    Option<&'static str>,
);

/// Found by review: `CLAUDE_CODE_MAX_OUTPUT_TOKENS` was not read (every request sent 8192).
/// It sets `max_tokens` from the environment or the settings' `env`; `--max-tokens` wins;
/// a value that is no positive whole number is warned about and the default is used.
#[test]
fn claude_code_max_output_tokens_sets_max_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [Case; 6] = [
        (&[], Some("32000"), 32000, None),
        (
            &[
                "--settings",
                r#"{"env":{"CLAUDE_CODE_MAX_OUTPUT_TOKENS":"16000"}}"#,
            ],
            None,
            16000,
            None,
        ),
        (&["--max-tokens", "100"], Some("32000"), 100, None),
        (&[], None, 8192, None),
        (
            &[],
            Some("abc"),
            8192,
            Some(
                "CLAUDE_CODE_MAX_OUTPUT_TOKENS=\"abc\" is not a positive whole number of tokens; the default, 8192, is used",
            ),
        ),
        (
            &[],
            Some("0"),
            8192,
            Some("CLAUDE_CODE_MAX_OUTPUT_TOKENS=\"0\""),
        ),
    ];
    for (extra, env, sent, warning) in cases {
        let (url, seen) = ok_server();
        let mut args = vec!["-p"];
        args.extend_from_slice(extra);
        let mut command = agent_command(&url, dir.path(), &args, "hi");
        match env {
            Some(value) => command.env("CLAUDE_CODE_MAX_OUTPUT_TOKENS", value),
            None => command.env_remove("CLAUDE_CODE_MAX_OUTPUT_TOKENS"),
        };
        let out = command.output().unwrap();
        let err = stderr(&out);
        assert!(out.status.success(), "{extra:?} {env:?}: {err}");
        assert_eq!(
            seen.lock().unwrap()[0].body["max_tokens"],
            sent,
            "{extra:?} {env:?}"
        );
        match warning {
            Some(w) => assert!(err.contains(w), "{err}"),
            None => assert!(!err.contains("CLAUDE_CODE_MAX_OUTPUT_TOKENS"), "{err}"),
        }
    }
}

/// Found by review: a 200 whose body ended before any event was not retried and was called
/// "truncated". Nothing was shown or run: it is retried as a connection that failed before
/// its first byte is, and an empty body is called empty.
#[test]
fn an_empty_200_stream_is_retried_and_called_empty() {
    let dir = tempfile::tempdir().unwrap();
    let err = assert_retried_once(dir.path(), || Reply::Stream(Vec::new()));
    assert!(err.contains("retrying"), "{err}");
    // No retries left: the error says the response was empty.
    let err = assert_failed_without_retries(dir.path(), || Reply::Stream(Vec::new()));
    assert!(err.contains("empty") && !err.contains("truncated"), "{err}");
}

/// A 200 whose body stays silent past `API_TIMEOUT_MS` before its first event is retried
/// too; one that broke after its content began is still not.
#[test]
fn a_silent_200_stream_is_retried_but_one_cut_after_content_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::default();
    let held = gate.clone();
    let (url, seen) = serve(move |i, _| {
        if i == 0 {
            Reply::Stream(vec![Part::Hold(held.clone())])
        } else {
            full(turn(Some("ok"), &[]))
        }
    });
    let out = agent_command(&url, dir.path(), &["-p"], "hi")
        .env("API_TIMEOUT_MS", "500")
        .output()
        .unwrap();
    gate.open();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 2);

    let mut events = vec![start(10)];
    events.extend(text_block(0, "partial")[..2].to_vec());
    let cut = sse(&events);
    let (url, seen) = serve(move |_, _| Reply::Stream(vec![Part::Data(cut.clone()), Part::Cut]));
    let out = agent_command(&url, dir.path(), &["-p"], "hi")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("retrying"), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 1);
}
