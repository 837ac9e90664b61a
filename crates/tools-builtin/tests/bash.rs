//! Bash against real processes: exit codes, timeouts and cancellation that leave nothing
//! running (checked in /proc), bounded output capture, cwd persistence and reset.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::{ProgressSender, Tool, ToolError, ToolResult, ToolUseContext};
use tools_builtin::Bash;

async fn run(ctx: &ToolUseContext, input: Value) -> Result<ToolResult, ToolError> {
    let tool: Arc<dyn Tool> = Arc::new(Bash::default());
    let input = tool
        .parse_input(input)
        .map_err(|e| ToolError::msg(e.to_model_text()))?;
    tool.call(input, ctx.clone(), ProgressSender::none()).await
}

fn text(result: &ToolResult) -> String {
    result.data.content.joined_text()
}

/// Whether a process is alive (a zombie counts as gone).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            stat.rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next())
                != Some("Z")
        }
        Err(_) => false,
    }
}

fn read_pids(path: &Path) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

#[tokio::test]
async fn success_output_and_structured_response() {
    let dir = tempfile::tempdir().unwrap();
    // A results directory that does not exist yet must not disturb anything.
    let ctx = ToolUseContext::new(dir.path()).with_results_dir(dir.path().join("not/yet"));
    let result = run(&ctx, json!({"command": "echo hello; echo warn >&2"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "hello\nwarn");
    assert_eq!(result.data.structured["stdout"], "hello\n");
    assert_eq!(result.data.structured["stderr"], "warn\n");
    assert_eq!(result.data.structured["interrupted"], false);
    assert!(result.context_modifier.is_none());
}

/// A command ending in a line continuation, or in a here-document without its end line,
/// does not run into what follows it (the exit status and the directory the shell ended
/// in): the command ends where its text ends, as `bash -c` and Claude Code's `eval` read it.
#[tokio::test]
async fn a_command_left_open_does_not_swallow_the_epilogue() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path());
    let result = run(&ctx, json!({"command": "echo hello \\"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "hello \\");
    // The here-document holds the command's own lines only, and the `cd` before it counts.
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let result = run(
        &ctx,
        json!({"command": "cd sub && cat <<EOF\nfirst line\nlast line"}),
    )
    .await
    .unwrap();
    assert_eq!(result.data.structured["stdout"], "first line\nlast line\n");
    let moved = result
        .context_modifier
        .expect("the directory changed")
        .apply(ctx.clone());
    assert_eq!(moved.cwd(), std::fs::canonicalize(&sub).unwrap());
    // The command's status is the result's, not the epilogue's.
    let err = run(&ctx, json!({"command": "(exit 4) <<EOF\nbody"}))
        .await
        .unwrap_err();
    assert!(
        err.to_model_text().starts_with("Exit code 4"),
        "{}",
        err.to_model_text()
    );
}

#[tokio::test]
async fn failures_use_the_exit_code_format() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path());
    let err = run(&ctx, json!({"command": "echo out; echo bad >&2; exit 3"}))
        .await
        .unwrap_err();
    assert_eq!(err.to_model_text(), "Exit code 3\nbad\nout");
    assert_eq!(err.class(), "ShellError");
}

#[tokio::test]
async fn exit_one_of_search_commands_is_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "abc\n").unwrap();
    let ctx = ToolUseContext::new(dir.path());
    let result = run(&ctx, json!({"command": "grep zzz f"})).await.unwrap();
    assert_eq!(text(&result), "No matches found");
    assert!(run(&ctx, json!({"command": "false"})).await.is_err());
    let diff = run(&ctx, json!({"command": "echo x > g; diff f g"}))
        .await
        .unwrap();
    assert!(text(&diff).contains("Files differ"));
}

/// `[ … ]` is `test`: its exit 1 is an answer, not a failure that would cancel the calls
/// beside it. A NUL byte in the command is a bad input, refused before anything runs.
#[tokio::test]
async fn brackets_answer_and_a_nul_byte_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path());
    let result = run(&ctx, json!({"command": "touch a && [ -f nope ]"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "Condition is false");
    let tool: Arc<dyn Tool> = Arc::new(Bash::default());
    let input = json!({"command": "echo before\u{0}after"});
    let refused = tool.validate_input(&input, &ctx).await.unwrap_err();
    assert!(refused.message.contains("null byte"), "{}", refused.message);
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let ctx = ToolUseContext::new(dir.path());
    let started = Instant::now();
    let command = format!(
        "sleep 100 & echo $! > {p}; echo $$ >> {p}; wait",
        p = pids.display()
    );
    let err = run(&ctx, json!({"command": command, "timeout": 1000}))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    let ToolError::Shell {
        interrupted,
        stderr,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert!(interrupted);
    assert!(
        stderr.contains("Command timed out after 1000 ms"),
        "{stderr}"
    );
    let pids = read_pids(&pids);
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(!alive(pid), "process {pid} survived the timeout");
    }
}

/// A shell killed by a signal reports 128 + its number, as bash would (`kill -9` is 137, a
/// segmentation fault 139), not an unknown code.
#[tokio::test]
async fn a_signal_shows_as_the_shells_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path());
    for (command, code) in [
        ("kill -9 $$", 137),
        ("kill -TERM $$", 143),
        ("kill -SEGV $$", 139),
    ] {
        let err = run(&ctx, json!({"command": command})).await.unwrap_err();
        assert!(
            matches!(&err, ToolError::Shell { exit_code: Some(c), .. } if *c == code),
            "{command}: {err:?}"
        );
        assert!(
            err.to_model_text()
                .starts_with(&format!("Exit code {code}")),
            "{}",
            err.to_model_text()
        );
    }
}

/// Nobody can type in an editor: `git commit` without `-m` stops at once, whatever editor
/// the environment names, instead of waiting for the timeout.
#[tokio::test]
async fn git_does_not_wait_for_an_editor() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path());
    let err = run(
        &ctx,
        json!({
            "command": "git init -q . && EDITOR='sleep 60 #' VISUAL='sleep 60 #' git -c user.name=t -c user.email=t@example.com commit -q --allow-empty",
            "timeout": 10000
        }),
    )
    .await
    .unwrap_err();
    let text = err.to_model_text();
    assert!(
        text.starts_with("Exit code 1")
            && text.contains("Aborting commit due to empty commit message"),
        "{text}"
    );
}

/// Runs `command` (`{p}` stands for a file it writes process ids to), cancels the call once
/// an id is written, and returns the ids written (the call ended as cancelled).
async fn cancel_once_started(command: &str) -> Vec<u32> {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let ctx = ToolUseContext::new(dir.path());
    let token = ctx.cancellation().clone();
    let command = command.replace("{p}", &pids.display().to_string());
    let call = tokio::spawn({
        let ctx = ctx.clone();
        async move { run(&ctx, json!({"command": command})).await }
    });
    while read_pids(&pids).is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    token.cancel();
    let err = call.await.unwrap().unwrap_err();
    assert!(err.is_cancelled());
    read_pids(&pids)
}

#[tokio::test]
async fn cancellation_kills_the_group() {
    for pid in cancel_once_started("echo $$ > {p}; sleep 100").await {
        assert!(!alive(pid), "process {pid} survived cancellation");
    }
}

/// A command that left the group (`setsid` makes a session of its own) is still ended on
/// cancellation: it is found below the shell while the shell lives.
#[tokio::test]
async fn cancellation_kills_what_left_the_group() {
    let command = "setsid sh -c 'echo $$ > {p}; sleep 100; echo never'";
    for pid in cancel_once_started(command).await {
        assert!(
            !alive(pid),
            "process {pid}, in a session of its own, survived cancellation"
        );
    }
}

#[tokio::test]
async fn dropping_the_call_kills_the_group() {
    // A call abandoned without cancellation (its future dropped, as when a server shuts
    // down) still ends everything the command started, not only the shell.
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let ctx = ToolUseContext::new(dir.path());
    let command = format!(
        "trap '' TERM; sleep 100 & echo $$ $! > {p}; wait",
        p = pids.display()
    );
    let mut call = Box::pin(run(&ctx, json!({"command": command})));
    loop {
        tokio::select! {
            _ = &mut call => panic!("the command ended by itself"),
            () = tokio::time::sleep(Duration::from_millis(20)) => {
                if read_pids(&pids).len() == 2 {
                    break;
                }
            }
        }
    }
    drop(call);
    let started = Instant::now();
    for pid in read_pids(&pids) {
        while alive(pid) && started.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!alive(pid), "process {pid} survived the dropped call");
    }
}

/// What a command leaves running in its group (a `&` job, `nohup`, with or without its
/// output redirected) ends with it, and the result says so (the model learns to use
/// `run_in_background`); a command that leaves nothing gets no such line.
#[tokio::test]
async fn leftovers_in_the_group_are_ended_when_the_command_exits() {
    const NOTE: &str = "Stopped the processes this command left running (`&`, `nohup`): a command's processes end with it. Use run_in_background for servers and watchers.";
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let ctx = ToolUseContext::new(dir.path());
    for left in [
        "(sleep 100 >/dev/null 2>&1 & echo $! > {p})",
        "nohup sleep 100 >/dev/null 2>&1 & echo $! > {p}",
        "sleep 100 & echo $! > {p}",
    ] {
        let command = format!(
            "{}; echo started",
            left.replace("{p}", &pids.display().to_string())
        );
        let result = run(&ctx, json!({"command": command})).await.unwrap();
        assert_eq!(text(&result), format!("started\n{NOTE}"), "{command}");
        let pids = read_pids(&pids);
        assert_eq!(pids.len(), 1);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!alive(pids[0]), "{command}");
    }
    // Nothing left: no line.
    let result = run(&ctx, json!({"command": "sleep 0.1 & wait; echo started"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "started");
}

#[tokio::test]
async fn huge_output_spills_to_a_file_with_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    // The results directory is created when the output spills.
    let ctx = ToolUseContext::new(dir.path()).with_results_dir(dir.path().join("results"));
    // 200 MB of output, then a last line.
    let command = "head -c 200000000 /dev/zero | tr '\\0' 'a'; echo; echo THE-END";
    let result = run(&ctx, json!({"command": command})).await.unwrap();
    let out = text(&result);
    assert!(
        out.len() < 200_000,
        "the result holds only head and tail: {} bytes",
        out.len()
    );
    assert!(out.contains("bytes of output omitted; the first 64 MiB are saved in"));
    assert!(out.trim_end().ends_with("THE-END"));
    let path = result.data.structured["rawOutputPath"].as_str().unwrap();
    assert_eq!(std::fs::metadata(path).unwrap().len(), 64 * 1024 * 1024);
    // The first line, which the executor's cut keeps, does not call the file the full output.
    assert_eq!(
        out.lines().next().unwrap(),
        format!("[The first 64 MiB of the output are saved in {path}]")
    );
}

/// When both streams spilled, the result names both files first (the error output's note
/// was in the middle of the text, which a persisted preview does not show).
#[tokio::test]
async fn both_spilled_streams_are_named_first() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path()).with_results_dir(dir.path().join("results"));
    let command =
        "head -c 3000000 /dev/zero | tr '\\0' x; head -c 2000000 /dev/zero | tr '\\0' y >&2";
    let result = run(&ctx, json!({"command": command})).await.unwrap();
    let out = text(&result);
    let mut lines = out.lines();
    let path_of = |line: Option<&str>, what: &str| {
        let line = line.unwrap_or_default();
        line.strip_prefix(&format!("[The full {what} is saved in "))
            .and_then(|rest| rest.strip_suffix(']'))
            .unwrap_or_else(|| panic!("{what}: {}", line.chars().take(200).collect::<String>()))
            .to_owned()
    };
    let stdout = path_of(lines.next(), "output");
    let stderr = path_of(lines.next(), "error output");
    assert_eq!(std::fs::metadata(stdout).unwrap().len(), 3_000_000);
    assert_eq!(std::fs::metadata(stderr).unwrap().len(), 2_000_000);
}

/// A successful command whose output spilled says first where all of it is (past 30,000
/// characters the executor shows only the result's head: a note in the middle would be
/// lost), and its head and tail, cut at byte counts, never show half a character as �.
#[tokio::test]
async fn a_spilled_output_names_its_file_first_and_cuts_between_characters() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path()).with_results_dir(dir.path().join("results"));
    // "a", then 1,500,000 "é" (two bytes each), then "b": every cut at an even byte count
    // from the start or the end falls inside an "é".
    let command = "printf a; yes 'é' | tr -d '\\n' | head -c 3000000; printf b";
    let result = run(&ctx, json!({"command": command})).await.unwrap();
    let out = text(&result);
    let first = out.lines().next().unwrap();
    let path = first
        .strip_prefix("[The full output is saved in ")
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{first}"));
    assert_eq!(std::fs::metadata(path).unwrap().len(), 3_000_002);
    assert!(!out.contains('\u{fffd}'), "a character was cut in half");
    assert!(out.contains("\naé") && out.trim_end().ends_with("éb"));
}

/// With `BASH_MAX_OUTPUT_LENGTH` above the pipeline's own limit (50,000 characters, the
/// smaller of the two applies), a spilled output's head and tail still fit under that limit:
/// the result is not saved a second time, to a file its preview would call the full output
/// (it held head and tail only). An output between the two limits, which the model sees as a
/// preview, does not count as a Read of the file it showed. Run in a child process with the
/// variable set (the environment is the whole test binary's).
#[tokio::test]
async fn a_large_bash_max_output_length_keeps_a_spilled_output_under_the_pipeline_limit() {
    const NAME: &str =
        "a_large_bash_max_output_length_keeps_a_spilled_output_under_the_pipeline_limit";
    const CHILD: &str = "TOOLWRIGHT_TEST_BASH_MAX_OUTPUT_CHILD";
    /// Longer results are persisted by the pipeline.
    const PIPELINE_LIMIT: usize = tool_core::DEFAULT_MAX_RESULT_CHARS;
    if std::env::var_os(CHILD).is_some() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let ctx = ToolUseContext::new(&root).with_results_dir(root.join("results"));
        let result = run(&ctx, json!({"command": "seq 1 500000"})).await.unwrap();
        let out = text(&result);
        assert!(
            out.chars().count() <= PIPELINE_LIMIT,
            "{} characters: the pipeline would save the head and tail again",
            out.chars().count()
        );
        let path = result.data.structured["rawOutputPath"].as_str().unwrap();
        assert_eq!(
            out.lines().next().unwrap(),
            format!("[The full output is saved in {path}]")
        );
        assert!(out.contains("\n1\n2\n3\n"), "no head");
        assert!(out.trim_end().ends_with("\n499999\n500000"), "no tail");
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            (1..=500_000).map(|n| format!("{n}\n")).collect::<String>()
        );
        // Both streams spilled: each head and tail gets half, so that together they fit
        // too (found by review: about 50,600 characters).
        let command = "seq 1 300000; seq 1 300000 >&2";
        let result = run(&ctx, json!({"command": command})).await.unwrap();
        let both = text(&result);
        assert!(
            both.chars().count() <= PIPELINE_LIMIT,
            "{} characters with both streams spilled",
            both.chars().count()
        );
        assert!(
            both.contains("[The full error output is saved in "),
            "{both}"
        );
        // 60,000 characters: under BASH_MAX_OUTPUT_LENGTH, over the pipeline's limit.
        let file = root.join("big.txt");
        std::fs::write(&file, "x".repeat(59_999) + "\n").unwrap();
        let result = run(&ctx, json!({"command": "cat big.txt"})).await.unwrap();
        assert_eq!(text(&result).chars().count(), 59_999);
        assert!(
            ctx.file_state().get(&file).is_none(),
            "a cat the model saw only as a preview counted as a Read"
        );
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", NAME, "--nocapture"])
        .env(CHILD, "1")
        .env("BASH_MAX_OUTPUT_LENGTH", "100000")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Found by review: one stream spilled beside a moderate other stream came to more than the
/// inline limit, and the pipeline saved the result (a preview of a preview) a second time.
/// The spilled stream's head and tail share the limit with what the other shows whole.
#[tokio::test]
async fn a_spilled_stream_shares_the_inline_limit_with_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path()).with_results_dir(dir.path().join("results"));
    let command =
        "head -c 2000000 /dev/zero | tr '\\0' o; head -c 16000 /dev/zero | tr '\\0' e >&2";
    let result = run(&ctx, json!({"command": command})).await.unwrap();
    let shown = text(&result);
    assert!(
        shown.chars().count() <= tools_builtin::bash::max_result_chars(),
        "{} characters",
        shown.chars().count()
    );
    assert!(
        shown.contains(&"e".repeat(16_000)),
        "the other stream is shown whole"
    );
}

/// A failing command's error keeps only its head and tail: where its full output is saved
/// comes first, so the model can still read it.
#[tokio::test]
async fn a_failing_command_says_where_its_full_output_is() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path()).with_results_dir(dir.path().join("results"));
    let command = "head -c 3000000 /dev/zero | tr '\\0' 'a'; echo; echo THE-ERROR >&2; exit 3";
    let err = run(&ctx, json!({"command": command})).await.unwrap_err();
    let text = err.to_model_text();
    let first_lines: Vec<&str> = text.lines().take(2).collect();
    assert_eq!(first_lines[0], "Exit code 3", "{first_lines:?}");
    let path = first_lines[1]
        .strip_prefix("[The full output is saved in ")
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{first_lines:?}"));
    assert_eq!(std::fs::metadata(path).unwrap().len(), 3_000_001);
}

/// A failing command whose output stayed in memory (under the spill size) but is longer
/// than the error shows is saved too: its middle is in the file named first.
#[tokio::test]
async fn a_failing_command_keeps_its_middle_in_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path()).with_results_dir(dir.path().join("results"));
    let command = "seq 1 2000 >&2; seq 1 10000; echo THE-MIDDLE; seq 1 10000; exit 1";
    let err = run(&ctx, json!({"command": command})).await.unwrap_err();
    let text = err.to_model_text();
    assert!(
        !text.contains("THE-MIDDLE"),
        "the error shows only head and tail"
    );
    let second = text.lines().nth(1).unwrap();
    let path = second
        .strip_prefix("[The full output is saved in ")
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{second}"));
    assert!(path.starts_with(&*dir.path().join("results").to_string_lossy()));
    let saved = std::fs::read_to_string(path).unwrap();
    let seq = |n: u32| (1..=n).map(|i| format!("{i}\n")).collect::<String>();
    // As the error shows it: stderr, then stdout.
    assert_eq!(
        saved,
        format!("{}{}THE-MIDDLE\n{}", seq(2000), seq(10000), seq(10000))
    );
    // A short failure names no file.
    let err = run(&ctx, json!({"command": "echo short; exit 1"}))
        .await
        .unwrap_err();
    assert!(
        !err.to_model_text().contains("saved in"),
        "{}",
        err.to_model_text()
    );
    // Output just under the limit, but over it with the exit code line: cut, so saved.
    let err = run(
        &ctx,
        json!({"command": "printf 'a%.0s' $(seq 1 4996); echo MIDDLE; printf 'b%.0s' $(seq 1 4996); exit 1"}),
    )
    .await
    .unwrap_err();
    let text = err.to_model_text();
    let path = text
        .lines()
        .nth(1)
        .and_then(|l| l.strip_prefix("[The full output is saved in "))
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        std::fs::read_to_string(path).unwrap(),
        format!("{}MIDDLE\n{}", "a".repeat(4996), "b".repeat(4996))
    );
}

/// Without a results directory the shell's scratch files go to this user's private
/// directory in the temp directory (owner-only), under names made exclusively: even a link
/// under such a name is never written through.
#[tokio::test]
async fn a_link_planted_under_a_scratch_name_is_not_written_through() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    let tmp = std::env::temp_dir().join(format!("toolwright-{}", nix::unistd::geteuid()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o700)).unwrap();
    let planted: Vec<std::path::PathBuf> = (0..400)
        .map(|n| tmp.join(format!("toolwright-bash-{}-{n}-cwd", std::process::id())))
        .filter(|p| std::os::unix::fs::symlink(&victim, p).is_ok())
        .collect();
    let ctx = ToolUseContext::new(dir.path());
    let result = run(&ctx, json!({"command": "echo ran"})).await;
    for p in &planted {
        let _ = std::fs::remove_file(p);
    }
    assert_eq!(text(&result.unwrap()), "ran");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let mode = std::fs::metadata(&tmp).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
}

/// A directory whose name ends in a space is where a `cd` leaves the session, not the
/// directory named without it.
#[tokio::test]
async fn cd_into_a_name_ending_in_a_space_persists_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(root.join("foo ")).unwrap();
    std::fs::create_dir(root.join("foo")).unwrap();
    let ctx = ToolUseContext::new(&root);
    let result = run(&ctx, json!({"command": "cd 'foo '"})).await.unwrap();
    let next = result
        .context_modifier
        .expect("cd inside persists")
        .apply(ctx.clone());
    assert_eq!(next.cwd(), root.join("foo "));
}

/// The session's environment files (a SessionStart hook's) are sourced in the command's
/// shell; a `shift` or `set --` in one cannot change (or empty) the command that runs.
#[tokio::test]
async fn the_session_env_file_cannot_change_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    for (name, exports) in [
        ("shift.env", "export FOO=1\nshift\n"),
        ("set.env", "export FOO=2\nset -- false\n"),
    ] {
        let env_dir = root.join(name);
        std::fs::create_dir(&env_dir).unwrap();
        std::fs::write(env_dir.join("sessionstart-hook-0.sh"), exports).unwrap();
        let ctx = ToolUseContext::new(&root);
        let mut options = ctx.options().clone();
        options.session_env_dir = Some(env_dir);
        let ctx = ctx.with_options(options);
        let out = run(&ctx, json!({"command": "echo \"ran with $FOO\""}))
            .await
            .unwrap();
        assert!(
            text(&out).starts_with("ran with "),
            "{name}: {}",
            text(&out)
        );
    }
}

#[tokio::test]
async fn cwd_persists_inside_and_resets_outside() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let ctx = ToolUseContext::new(&root);
    let result = run(&ctx, json!({"command": "cd sub && pwd"}))
        .await
        .unwrap();
    let next = result
        .context_modifier
        .expect("cd inside persists")
        .apply(ctx.clone());
    assert_eq!(next.cwd(), root.join("sub"));
    let again = run(&next, json!({"command": "pwd"})).await.unwrap();
    assert_eq!(text(&again), root.join("sub").display().to_string());

    let out = run(&ctx, json!({"command": "cd / && echo moved"}))
        .await
        .unwrap();
    assert!(out.context_modifier.is_none());
    assert_eq!(
        text(&out),
        format!("moved\nShell cwd was reset to {}", root.display())
    );
}

/// The directory a command ends in is judged where it really is: a `pwd` the command
/// redefined (or a `..` in what it prints) does not make a directory outside the project
/// look inside it.
#[tokio::test]
async fn cwd_outside_is_reset_whatever_pwd_prints() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("proj");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir(base.join("victim")).unwrap();
    let ctx = ToolUseContext::new(&root);
    let escape = format!("{}/../victim", root.display());
    for command in [
        format!("pwd() {{ echo '{escape}'; }}; echo moved"),
        format!("cd ../victim; pwd() {{ echo '{escape}'; }}; echo moved"),
    ] {
        let mut out = run(&ctx, json!({"command": command})).await.unwrap();
        let next = out
            .context_modifier
            .take()
            .map(|m| m.apply(ctx.clone()).cwd().to_path_buf());
        assert!(
            next.is_none() || next.as_deref() == Some(root.as_path()),
            "{command}: the session moved to {next:?}"
        );
        assert_eq!(
            text(&out),
            format!("moved\nShell cwd was reset to {}", root.display()),
            "{command}"
        );
    }
    // A `..` that stays inside is followed to where it leads.
    let inside = format!("{}/sub/../sub", root.display());
    let out = run(
        &ctx,
        json!({"command": format!("cd sub; pwd() {{ echo '{inside}'; }}")}),
    )
    .await
    .unwrap();
    let next = out
        .context_modifier
        .expect("inside persists")
        .apply(ctx.clone());
    assert_eq!(next.cwd(), root.join("sub"));
    // A file inside is no directory to stay in: the session stays where it was (every later
    // command would fail to start in it).
    std::fs::write(root.join("notes.txt"), "x").unwrap();
    let file = format!("{}/notes.txt", root.display());
    let out = run(
        &ctx,
        json!({"command": format!("pwd() {{ echo '{file}'; }}; echo ran")}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "ran");
    assert!(
        out.context_modifier.is_none(),
        "the session moved to {:?}",
        out.context_modifier
            .map(|m| m.apply(ctx.clone()).cwd().to_path_buf())
    );
}

/// bash's error lines count from the command's own first line (`bash: line 1: ...`, as
/// under Claude Code), with or without a session environment file sourced before it.
#[tokio::test]
async fn error_line_numbers_are_the_commands_own() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let env_dir = root.join("session-env");
    std::fs::create_dir(&env_dir).unwrap();
    std::fs::write(env_dir.join("sessionstart-hook-0.sh"), "export FOO=1\n").unwrap();
    let plain = ToolUseContext::new(&root);
    let mut options = plain.options().clone();
    options.session_env_dir = Some(env_dir);
    let with_env = plain.clone().with_options(options);
    for ctx in [&plain, &with_env] {
        for (command, want) in [
            (
                "nosuchcmd_tw1",
                "bash: line 1: nosuchcmd_tw1: command not found",
            ),
            (
                "true\ntrue\nnosuchcmd_tw3\necho $FOO",
                "bash: line 3: nosuchcmd_tw3: command not found",
            ),
        ] {
            let said = match run(ctx, json!({"command": command})).await {
                Ok(out) => text(&out),
                Err(e) => e.to_string(),
            };
            assert!(said.contains(want), "{command:?}: {said}");
        }
    }
}

#[tokio::test]
async fn binary_and_unicode_output() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path());
    let result = run(
        &ctx,
        json!({"command": "printf 'h\\xc3\\xa9 \\xff\\xfe end'"}),
    )
    .await
    .unwrap();
    assert_eq!(text(&result), "hé \u{fffd}\u{fffd} end");
}

#[tokio::test]
async fn schema_and_input_rules() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path());
    // An over-ceiling timeout is reduced, not rejected.
    run(&ctx, json!({"command": "true", "timeout": 99_999_999}))
        .await
        .unwrap();
    let err = run(&ctx, json!({"cmd": "ls"})).await.unwrap_err();
    assert!(
        err.to_model_text()
            .contains("The required parameter `command` is missing")
    );
    assert!(
        err.to_model_text()
            .contains("An unexpected parameter `cmd` was provided")
    );
    let tool: Arc<dyn Tool> = Arc::new(Bash::default());
    let schema = tool.input_schema();
    let mut fields: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "command",
            "dangerouslyDisableSandbox",
            "description",
            "run_in_background",
            "timeout"
        ]
    );
    assert_eq!(schema["required"], json!(["command"]));
    // Read-only commands (by tool-perms' analysis) may run in parallel; anything else not.
    for (command, read_only) in [
        ("ls -la", true),
        ("git status && grep -rn foo src | head", true),
        ("cat x > /dev/null", true),
        ("echo hi > out.txt", false),
        ("rm -rf build", false),
        ("ls $(rm -rf x)", false),
        ("r''m -rf x", false),
        ("ls; npm install", false),
    ] {
        assert_eq!(
            tool.is_concurrency_safe(&json!({"command": command})),
            read_only,
            "{command}"
        );
        assert_eq!(
            tool.is_read_only(&json!({"command": command})),
            read_only,
            "{command}"
        );
    }
}

/// `CDPATH` is not in effect for commands, even when the session's environment file exports
/// it: `cd name` goes to `./name`, where the permission check looked, not `$CDPATH/name`.
#[tokio::test]
async fn cdpath_does_not_move_cd() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let elsewhere = root.join("elsewhere");
    std::fs::create_dir_all(elsewhere.join("target")).unwrap();
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let env_dir = root.join("session-env");
    std::fs::create_dir(&env_dir).unwrap();
    std::fs::write(
        env_dir.join("sessionstart-hook-0.sh"),
        format!("export CDPATH={}\n", elsewhere.display()),
    )
    .unwrap();
    let ctx = ToolUseContext::new(&project);
    let mut options = ctx.options().clone();
    options.session_env_dir = Some(env_dir);
    let ctx = ctx.with_options(options);
    let err = run(&ctx, json!({"command": "cd target && pwd"}))
        .await
        .unwrap_err();
    assert!(
        err.to_model_text()
            .contains("target: No such file or directory"),
        "{}",
        err.to_model_text()
    );
    let out = run(&ctx, json!({"command": "echo \"[$CDPATH]\""}))
        .await
        .unwrap();
    assert_eq!(text(&out), "[]");
}

/// Cancellation sends SIGTERM to the whole group and gives it the grace period: a process of
/// the group that cleans up on SIGTERM (here a grandchild, the inner shell's trap) finishes,
/// although the shell that leads the group dies at once. It was SIGKILLed as soon as the
/// leader was reaped.
#[tokio::test]
async fn cancellation_gives_a_grandchild_s_term_trap_its_grace() {
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let cleaned = dir.path().join("cleaned");
    let ctx = ToolUseContext::new(dir.path());
    let token = ctx.cancellation().clone();
    let command = format!(
        "bash -c 'trap \"sleep 0.5; touch {c}\" TERM; touch {r}; sleep 100 & wait'; true",
        c = cleaned.display(),
        r = ready.display()
    );
    let call = tokio::spawn({
        let ctx = ctx.clone();
        async move { run(&ctx, json!({"command": command})).await }
    });
    while !ready.exists() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let started = Instant::now();
    token.cancel();
    let err = call.await.unwrap().unwrap_err();
    assert!(err.is_cancelled(), "{err:?}");
    assert!(cleaned.exists(), "the TERM trap did not finish");
    // Cancellation ended it, not the 100 s sleep: a bound well under the sleep, not a speed
    // check (the grace period alone is 2 s).
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
}

/// A command that removes the session's directory moves the session itself, through its own
/// context change (it is not concurrency-safe, so the executor takes it): the read-only
/// commands after it, whose context changes the executor drops, run where the session is,
/// with no note. A read-only command that finds the directory gone says where it ran, not
/// that the session was reset (it was not).
#[tokio::test]
async fn a_command_that_removes_the_session_s_directory_moves_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let sub = root.join("sub3");
    std::fs::create_dir(&sub).unwrap();
    let ctx = ToolUseContext::new(&root);
    let into = run(&ctx, json!({"command": "cd sub3"})).await.unwrap();
    let in_sub = into.context_modifier.unwrap().apply(ctx.clone());
    assert_eq!(in_sub.cwd(), sub);

    let bash = Bash::default();
    let removal = json!({"command": "rmdir \"$PWD\""});
    assert!(!Tool::is_concurrency_safe(&bash, &removal));
    let out = run(&in_sub, removal).await.unwrap();
    assert_eq!(
        text(&out),
        format!(
            "Shell cwd was reset to {} ({} no longer exists)",
            root.display(),
            sub.display()
        )
    );
    let next = out
        .context_modifier
        .expect("the session leaves the removed directory")
        .apply(in_sub.clone());
    assert_eq!(next.cwd(), root);
    std::fs::write(root.join("a.txt"), "").unwrap();
    let ls = json!({"command": "ls"});
    assert!(Tool::is_concurrency_safe(&bash, &ls));
    let listed = run(&next, ls.clone()).await.unwrap();
    assert_eq!(text(&listed), "a.txt");
    assert!(listed.context_modifier.is_none());

    // A failing command that removed it moves the session too.
    std::fs::create_dir(&sub).unwrap();
    let err = run(&in_sub, json!({"command": "rmdir \"$PWD\"; exit 2"}))
        .await
        .unwrap_err();
    let (err, change) = err.take_context_change();
    let ToolError::Shell { stderr, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(stderr.ends_with("no longer exists)"), "{stderr}");
    assert_eq!(change.unwrap().apply(in_sub.clone()).cwd(), root);

    // Removed by something else: a read-only command runs in the project directory and says
    // so, without claiming a reset its dropped context change would not make.
    let listed = run(&in_sub, ls).await.unwrap();
    assert_eq!(
        text(&listed),
        format!(
            "a.txt\nShell cwd {} no longer exists; this command ran in {}",
            sub.display(),
            root.display()
        )
    );
}

/// A `cd` out of the working directories sends the session back to the project directory
/// (Claude Code's original cwd), not to where the previous command left it, and says so;
/// a failing command that left them is reset the same way.
#[tokio::test]
async fn cd_out_of_the_working_directories_resets_to_the_project_dir() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let ctx = ToolUseContext::new(&root);
    let into_sub = run(&ctx, json!({"command": "cd sub"})).await.unwrap();
    let in_sub = into_sub.context_modifier.unwrap().apply(ctx.clone());
    assert_eq!(in_sub.cwd(), root.join("sub"));

    let out = run(&in_sub, json!({"command": "cd /tmp && echo moved"}))
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        format!("moved\nShell cwd was reset to {}", root.display())
    );
    let back = out
        .context_modifier
        .expect("the session goes back to the project directory")
        .apply(in_sub.clone());
    assert_eq!(back.cwd(), root);

    let err = run(&in_sub, json!({"command": "cd /tmp && false"}))
        .await
        .unwrap_err();
    let (err, change) = err.take_context_change();
    let ToolError::Shell { stderr, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        stderr.ends_with(&format!("Shell cwd was reset to {}", root.display())),
        "{stderr}"
    );
    let back = change
        .expect("the session goes back to the project directory")
        .apply(in_sub);
    assert_eq!(back.cwd(), root);
}
