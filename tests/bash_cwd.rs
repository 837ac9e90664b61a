//! Bash's working directory through the streaming executor: a `cd` in a read-only command
//! still carries to the next call (the executor keeps context modifiers only from calls that
//! run alone, so such a call must not count as concurrency-safe), back up to the project
//! root too, and a directory removed under the session does not break Bash.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use tool_core::{RuleSource, SourcedRule, ToolPermissionContext, ToolUseContext};
use tool_exec::{DenyAsks, ExecutorConfig, NoHooks, Pipeline, ToolUse, run_tools};
use tool_perms::{PathRoots, PermissionEngine};

/// A session in `root` with Bash allowed: its pipeline and context.
fn session(root: &Path) -> (Arc<Pipeline>, ToolUseContext) {
    session_allowing(root, &["Bash"])
}

/// A session in `root` whose allow rules are `allow` (nobody can answer an ask).
fn session_allowing(root: &Path, allow: &[&str]) -> (Arc<Pipeline>, ToolUseContext) {
    let permission = ToolPermissionContext {
        allow: allow
            .iter()
            .map(|rule| SourcedRule {
                source: RuleSource::ProjectSettings,
                rule: (*rule).into(),
            })
            .collect(),
        avoid_prompts: true,
        ..Default::default()
    };
    let (engine, problems) = PermissionEngine::new_lenient(&permission, PathRoots::for_cwd(root));
    assert!(problems.is_empty(), "{problems:?}");
    let ctx = ToolUseContext::new(root)
        .with_tools(tool_registry::all_base_tools())
        .with_permission(permission);
    let pipeline = Arc::new(Pipeline::new(
        Arc::new(engine),
        Arc::new(DenyAsks),
        Arc::new(NoHooks),
    ));
    (pipeline, ctx)
}

/// Runs the Bash `commands` (id, command) as one turn; returns each result's text and the
/// context after the turn.
async fn turn(
    pipeline: &Arc<Pipeline>,
    ctx: ToolUseContext,
    commands: &[(&str, &str)],
) -> (Vec<String>, ToolUseContext) {
    let calls = commands
        .iter()
        .map(|(id, command)| ToolUse::new(*id, "Bash", json!({"command": command})))
        .collect();
    let (results, after) =
        run_tools(Arc::clone(pipeline), ctx, calls, ExecutorConfig::default()).await;
    let texts = results
        .iter()
        .map(|r| r.outcome.result.content.joined_text())
        .collect();
    (texts, after)
}

/// [`turn`] in a new [`session`] in `root`.
async fn run(root: &Path, commands: &[(&str, &str)]) -> (Vec<String>, ToolUseContext) {
    let (pipeline, ctx) = session(root);
    turn(&pipeline, ctx, commands).await
}

fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    (dir, root)
}

#[tokio::test]
async fn a_read_only_cd_carries_to_the_next_call() {
    let (_dir, root) = project();
    let (texts, after) = run(
        &root,
        &[("ls", "ls"), ("cd", "cd sub && ls"), ("pwd", "pwd")],
    )
    .await;
    assert!(texts[0].contains("sub"), "{texts:?}");
    assert_eq!(texts[2].trim(), root.join("sub").display().to_string());
    assert_eq!(after.cwd(), root.join("sub"));
}

#[tokio::test]
async fn a_cd_back_up_to_the_project_root_carries_too() {
    let (_dir, root) = project();
    let (texts, after) = run(&root, &[("cd", "cd sub"), ("up", "cd .."), ("pwd", "pwd")]).await;
    assert_eq!(texts[2].trim(), root.display().to_string(), "{texts:?}");
    assert_eq!(after.cwd(), root);
}

/// The directory the session is in is removed: the next command runs in the project
/// directory, says so, and the session stays there.
#[tokio::test]
async fn a_removed_working_directory_falls_back_to_the_project() {
    let (_dir, root) = project();
    let (pipeline, ctx) = session(&root);
    let (_, ctx) = turn(&pipeline, ctx, &[("cd", "mkdir build && cd build")]).await;
    assert_eq!(ctx.cwd(), root.join("build"));
    std::fs::remove_dir(root.join("build")).unwrap();
    let root_text = root.display().to_string();
    let note = format!("Shell cwd was reset to {root_text} ({root_text}/build no longer exists)");
    // Read-only commands run (in the project) and say so; as concurrency-safe calls they
    // cannot move the session (the executor drops their modifiers), and do not claim to.
    let ran_in =
        format!("Shell cwd {root_text}/build no longer exists; this command ran in {root_text}");
    let (texts, ctx) = turn(&pipeline, ctx, &[("pwd", "pwd"), ("ls", "ls")]).await;
    assert_eq!(texts[0], format!("{root_text}\n{ran_in}"), "{texts:?}");
    assert!(
        texts[1].starts_with("sub\n") && texts[1].contains(&ran_in),
        "{texts:?}"
    );
    // Another command moves it.
    let (texts, ctx) = turn(&pipeline, ctx, &[("touch", "touch made && pwd")]).await;
    assert_eq!(texts[0], format!("{root_text}\n{note}"), "{texts:?}");
    assert_eq!(ctx.cwd(), root);
    let (texts, _) = turn(&pipeline, ctx, &[("pwd", "pwd")]).await;
    assert_eq!(texts[0], root_text);
}

/// A command that removes the directory it is in moves the session back to the project
/// itself, and says so once: a read-only command after it, which cannot move the session,
/// finds it where it is.
#[tokio::test]
async fn a_command_removing_its_own_directory_moves_the_session_back() {
    let (_dir, root) = project();
    let (pipeline, ctx) = session(&root);
    let (_, ctx) = turn(&pipeline, ctx, &[("cd", "mkdir build && cd build")]).await;
    let (texts, ctx) = turn(&pipeline, ctx, &[("rm", "rmdir \"$PWD\" && echo removed")]).await;
    let root_text = root.display().to_string();
    assert_eq!(
        texts[0],
        format!("removed\nShell cwd was reset to {root_text} ({root_text}/build no longer exists)"),
        "{texts:?}"
    );
    assert_eq!(ctx.cwd(), root);
    let (texts, _) = turn(&pipeline, ctx, &[("pwd", "pwd")]).await;
    assert_eq!(texts[0], root_text, "{texts:?}");
}

/// Found by review: with the project itself removed, the fallback a command runs in is an
/// ancestor, outside the working directories; moving the session there made it one (the
/// cwd is always a working directory), and a file beside the project became readable and
/// writable without a question. The session stays where it was, and so do the grants.
#[tokio::test]
async fn a_removed_project_does_not_make_its_parent_a_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("proj");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(base.join("outside.txt"), "secret\n").unwrap();
    std::fs::create_dir(base.join("elsewhere")).unwrap();
    let (pipeline, ctx) = session(&root);
    // (`rm -rf "$PWD"` would ask: it removes what an expansion names.)
    let remove = "python3 -c 'import os, shutil; shutil.rmtree(os.getcwd())' && echo gone";
    let (texts, ctx) = turn(&pipeline, ctx, &[("rm", remove)]).await;
    assert!(texts[0].starts_with("gone"), "{texts:?}");
    assert!(!texts[0].contains("was reset"), "{texts:?}");
    // Also a `cd` made from the fallback does not carry the session out.
    let (texts, ctx) = turn(&pipeline, ctx, &[("cd", "cd elsewhere && pwd")]).await;
    assert!(
        texts[0].starts_with(&base.join("elsewhere").display().to_string()),
        "{texts:?}"
    );
    assert!(
        texts[0].contains(&format!(
            "Shell cwd stays {}: {} is outside the working directories",
            root.display(),
            base.join("elsewhere").display()
        )),
        "{texts:?}"
    );
    assert_eq!(ctx.cwd(), root);
    let input = json!({"file_path": base.join("outside.txt")});
    let (results, _) = run_tools(
        Arc::clone(&pipeline),
        ctx,
        vec![ToolUse::new("r", "Read", input)],
        ExecutorConfig::default(),
    )
    .await;
    let text = results[0].outcome.result.content.joined_text();
    assert!(!text.contains("secret"), "{text}");
}

/// As in a shell, a `cd` holds although the command then failed (`cd build && make`).
#[tokio::test]
async fn a_cd_before_a_failure_holds() {
    let (_dir, root) = project();
    let (pipeline, ctx) = session(&root);
    // (A failing Bash cancels the calls beside it: the next command is in a later turn.)
    let (texts, ctx) = turn(&pipeline, ctx, &[("cd", "cd sub && false")]).await;
    assert_eq!(texts[0], "Exit code 1", "{texts:?}");
    assert_eq!(ctx.cwd(), root.join("sub"));
    let (texts, _) = turn(&pipeline, ctx, &[("pwd", "pwd")]).await;
    assert_eq!(
        texts[0],
        root.join("sub").display().to_string(),
        "{texts:?}"
    );
}

/// When the session's directory was removed, a command's relative paths are checked where
/// it runs (the fallback directory), not where the session was: `cat ../secret.txt` from a
/// removed `proj/a/b` looks like `proj/a/secret.txt`, but runs in `proj` and reads outside.
#[tokio::test]
async fn paths_are_checked_where_the_command_runs_after_its_directory_went() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("proj");
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::write(base.join("secret.txt"), "TOP SECRET\n").unwrap();
    // No allow rule: read-only commands run inside the project, the rest is asked (and
    // nobody can answer here).
    let (pipeline, ctx) = session_allowing(&root, &[]);
    let (_, ctx) = turn(&pipeline, ctx, &[("cd", "cd a/b")]).await;
    assert_eq!(ctx.cwd(), root.join("a/b"));
    std::fs::remove_dir_all(root.join("a/b")).unwrap();
    let (texts, _) = turn(&pipeline, ctx, &[("cat", "cat ../secret.txt")]).await;
    assert!(!texts[0].contains("TOP SECRET"), "{texts:?}");
}

/// Found by review: an additional working directory given through a link, which the session
/// falls back to once the project is removed, was taken for a place outside the working
/// directories (its link was compared with their real paths), and the session never moved.
#[tokio::test]
async fn a_linked_additional_directory_is_a_fallback_inside() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("proj");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(base.join("extra")).unwrap();
    std::os::unix::fs::symlink(base.join("extra"), base.join("link")).unwrap();
    let (pipeline, ctx) = session(&root);
    let ctx = ctx.with_working_directories(vec![base.join("link")]);
    let remove = "python3 -c 'import os, shutil; shutil.rmtree(os.getcwd())' && echo gone";
    let (texts, ctx) = turn(&pipeline, ctx, &[("rm", remove)]).await;
    assert!(
        texts[0].contains(&format!(
            "Shell cwd was reset to {}",
            base.join("link").display()
        )),
        "{texts:?}"
    );
    assert_eq!(ctx.cwd(), base.join("link"));
}
