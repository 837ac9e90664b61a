//! WordCount against real files and against `wc` itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use tool_core::{ProgressSender, Tool, ToolUseContext};
use tools_word_count::{Counts, WordCount};

async fn run(input: serde_json::Value, cwd: &std::path::Path) -> Result<String, String> {
    let ctx = ToolUseContext::new(cwd);
    let tool: &dyn Tool = &WordCount;
    let parsed = tool.parse_input(input).map_err(|e| e.to_model_text())?;
    tool.validate_input(&parsed, &ctx)
        .await
        .map_err(|e| e.message)?;
    let out = tool
        .call(parsed, ctx, ProgressSender::none())
        .await
        .map_err(|e| e.to_string())?;
    Ok(out.data.content.joined_text())
}

#[tokio::test]
async fn counts_like_wc() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("poem.txt");
    let text = "The quick  brown\tfox\njumps over\n\nthe lazy dog";
    std::fs::write(&file, text).unwrap();
    let out = run(json!({"file_path": file}), dir.path()).await.unwrap();
    assert_eq!(
        out,
        format!(
            "3 lines, 9 words, {} bytes in {}",
            text.len(),
            file.display()
        )
    );
    // The same figures as the system's `wc`, when it is there.
    if let Ok(wc) = std::process::Command::new("wc").arg(&file).output() {
        let wc = String::from_utf8_lossy(&wc.stdout);
        let fields: Vec<&str> = wc.split_whitespace().collect();
        assert_eq!(fields[..3], ["3", "9", &text.len().to_string()]);
    }
}

#[test]
fn counting_streams_across_chunk_boundaries() {
    // A word split across two 64 KiB chunks is still one word.
    let mut data = vec![b'a'; 64 * 1024 + 10];
    data.push(b'\n');
    let c = Counts::of(&data[..]).unwrap();
    assert_eq!((c.lines, c.words, c.bytes), (1, 1, data.len() as u64));
}

#[tokio::test]
async fn bad_paths_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let relative = run(json!({"file_path": "poem.txt"}), dir.path()).await;
    assert!(relative.unwrap_err().contains("must be an absolute path"));
    let missing = dir.path().join("missing.txt");
    let err = run(json!({"file_path": missing}), dir.path())
        .await
        .unwrap_err();
    assert!(
        err.contains("Cannot read") && err.contains("missing.txt"),
        "{err}"
    );
    let err = run(json!({"file_path": dir.path()}), dir.path())
        .await
        .unwrap_err();
    assert!(err.contains("is a directory"), "{err}");
    let err = run(json!({"path": "/x"}), dir.path()).await.unwrap_err();
    assert!(err.contains("file_path"), "{err}");
}

/// What the model hears of a call before it runs, in the executor's order: the input check,
/// then the permission step (a denial or an ask; `allowed` when the call would run). The
/// file name is replaced, so that answers about different files compare.
async fn before_the_call(
    file: &std::path::Path,
    ctx: &ToolUseContext,
    engine: &tool_perms::PermissionEngine,
) -> String {
    let tool: &dyn Tool = &WordCount;
    let input = tool.parse_input(json!({"file_path": file})).unwrap();
    let name = file.file_name().unwrap().to_str().unwrap();
    let answer = match tool.validate_input(&input, ctx).await {
        Err(e) => format!("invalid: {}", e.message),
        Ok(()) => match engine.decide(tool, &input, ctx).await {
            tool_core::PermissionResult::Deny { message, .. } => format!("deny: {message}"),
            tool_core::PermissionResult::Ask { message, .. } => format!("ask: {message}"),
            other => other.behavior().to_owned(),
        },
    };
    answer.replace(name, "<name>")
}

/// Review 38, finding 1: a path a `Read` deny rule covers, or one outside the working
/// directories, gets the same answer whether it is a file, a directory or nothing: the input
/// check says nothing of the file system before the permission step has ruled.
#[tokio::test]
async fn nothing_is_said_of_a_path_before_the_permission_step() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let proj = base.join("proj");
    let outside = base.join("outside");
    for place in [proj.join("secrets"), outside.clone()] {
        std::fs::create_dir_all(place.join("sub")).unwrap();
        std::fs::write(place.join("key.pem"), "k\n").unwrap();
    }
    let perm = tool_core::ToolPermissionContext {
        deny: vec![tool_core::SourcedRule {
            source: tool_core::RuleSource::FlagSettings,
            rule: "Read(./secrets/**)".to_owned(),
        }],
        ..tool_core::ToolPermissionContext::default()
    };
    let engine =
        tool_perms::PermissionEngine::new(&perm, tool_perms::PathRoots::for_cwd(&proj)).unwrap();
    let ctx = ToolUseContext::new(&proj).with_permission(perm);
    for (place, expected) in [(proj.join("secrets"), "deny"), (outside, "ask")] {
        let answers = [
            before_the_call(&place.join("key.pem"), &ctx, &engine).await,
            before_the_call(&place.join("other.pem"), &ctx, &engine).await,
            before_the_call(&place.join("sub"), &ctx, &engine).await,
        ];
        assert!(answers[0].starts_with(expected), "{answers:?}");
        assert!(
            answers.iter().all(|a| a == &answers[0]),
            "{place:?}: {answers:?}"
        );
    }
    // Inside the working directories, past the permission step, the call says what it
    // found.
    let missing = proj.join("missing.txt");
    assert_eq!(before_the_call(&missing, &ctx, &engine).await, "allow");
    let err = run(json!({"file_path": missing}), &proj).await.unwrap_err();
    assert!(err.contains("missing.txt"), "{err}");
}

/// Review 38, finding 2: a FIFO put where the file was after the input check is refused at
/// once, not opened for a read that waits for a writer. (Should the call block, a writer
/// opens and closes the FIFO to let it go on, so that the test fails instead of hanging.)
#[tokio::test]
async fn a_fifo_swapped_in_after_the_check_is_not_waited_on() {
    use std::os::unix::fs::OpenOptionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.txt");
    std::fs::write(&file, "hi\n").unwrap();
    let ctx = ToolUseContext::new(dir.path());
    let tool: &dyn Tool = &WordCount;
    let input = tool.parse_input(json!({"file_path": file})).unwrap();
    tool.validate_input(&input, &ctx).await.unwrap();
    std::fs::remove_file(&file).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&file)
        .status()
        .unwrap();
    assert!(made.success());
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let releaser = {
        let (done, file) = (done.clone(), file.clone());
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                // Opening to write without blocking succeeds only while a reader has it
                // open; closing it then gives that reader its end of file.
                let _ = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(nix::libc::O_NONBLOCK)
                    .open(&file);
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        })
    };
    let result = tool.call(input, ctx, ProgressSender::none()).await;
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    releaser.join().unwrap();
    let err = result.map(|r| r.data.content.joined_text()).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
}
