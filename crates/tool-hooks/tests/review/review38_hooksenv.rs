//! Review 38: every SessionStart hook was given one shared `CLAUDE_ENV_FILE`, so a hook that
//! wrote it with `>` erased what the others exported. `run_event_with_env_files` gives each
//! command hook a file of its own, named by its place among the event's matching hooks, as
//! Claude Code's `getHookEnvFilePath(hookEvent, hookIndex)` does.

use std::time::{Duration, Instant};

use crate::common::{Env, cmd, runner};
use serde_json::{Map, json};

/// Each matching hook, an `async` one too, writes its own file with `>`; a hook whose
/// matcher does not match takes no index, and no file is made for a hook that writes none.
#[tokio::test]
async fn each_hook_gets_its_own_env_file_by_its_matching_index() {
    let env = Env::new();
    let dir = env.path("session-env");
    std::fs::create_dir(&dir).unwrap();
    let write = |value: &str| cmd(&format!("echo 'export V={value}' > \"$CLAUDE_ENV_FILE\""));
    let mut background = write("async");
    background["async"] = json!(true);
    let r = runner(json!({"SessionStart": [
        {"matcher": "resume", "hooks": [write("resume")]},
        {"matcher": "startup", "hooks": [write("first")]},
        {"hooks": [cmd("true"), background]},
    ]}));
    let out = r
        .run_event_with_env_files(
            "SessionStart",
            Map::new(),
            Some("startup"),
            &dir,
            &env.ctx(),
        )
        .await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    let background_file = dir.join("sessionstart-hook-2.sh");
    let limit = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&background_file).is_ok_and(|t| t.ends_with('\n'))
        && Instant::now() < limit
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let files: Vec<(String, String)> = tool_core::hook_env_files(&dir)
        .iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(p).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        files,
        [
            (
                "sessionstart-hook-0.sh".to_owned(),
                "export V=first\n".to_owned()
            ),
            (
                "sessionstart-hook-2.sh".to_owned(),
                "export V=async\n".to_owned()
            ),
        ]
    );
}
