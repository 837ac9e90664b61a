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
    assert!(err.contains("is not a regular file"), "{err}");
    let err = run(json!({"path": "/x"}), dir.path()).await.unwrap_err();
    assert!(err.contains("file_path"), "{err}");
}
