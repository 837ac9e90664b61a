//! EnterWorktree and ExitWorktree on real git repositories in temporary directories: the
//! worktree and branch exist on disk and in `git worktree list`, the context modifier moves
//! the session's cwd, and removal refuses to lose work unless told to.
#![cfg(feature = "worktree")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tool_core::{ProgressSender, Tool, ToolUseContext, tool_use_error};
use tools_builtin::worktree::active_worktree;
use tools_builtin::{EnterWorktree, ExitWorktree};

/// Runs git in `dir` with a fixed identity and no user or system configuration; panics on
/// failure. Returns standard output.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A repository with one commit on branch `main`, canonical path.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap().join("repo");
    std::fs::create_dir(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join("README.md"), "hello\n").unwrap();
    git(&root, &["add", "README.md"]);
    git(&root, &["commit", "-q", "-m", "first"]);
    (dir, root)
}

fn branches(root: &Path) -> Vec<String> {
    git(root, &["branch", "--format=%(refname:short)"])
        .lines()
        .map(str::to_owned)
        .collect()
}

fn listed_worktrees(root: &Path) -> Vec<PathBuf> {
    git(root, &["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(PathBuf::from)
        .collect()
}

/// Calls `tool` through schema, validation and call; on success returns the text and the
/// context after the result's modifier, on failure the model's error text.
async fn call(
    tool: &dyn Tool,
    ctx: &ToolUseContext,
    input: Value,
) -> Result<(String, Value, ToolUseContext), String> {
    let input = tool.parse_input(input).map_err(|e| e.to_model_text())?;
    tool.validate_input(&input, ctx)
        .await
        .map_err(|e| tool_use_error(&e.message))?;
    let result = tool
        .call(input, ctx.clone(), ProgressSender::none())
        .await
        .map_err(|e| e.to_model_text())?;
    let next = match result.context_modifier {
        Some(m) => m.apply(ctx.clone()),
        None => ctx.clone(),
    };
    Ok((
        result.data.content.joined_text(),
        result.data.structured,
        next,
    ))
}

#[tokio::test]
async fn enter_creates_a_worktree_and_branch_and_moves_the_cwd() {
    let (_tmp, root) = repo();
    let ctx = ToolUseContext::new(&root);
    let (text, out, inside) = call(&EnterWorktree, &ctx, json!({"name": "feature-x"}))
        .await
        .unwrap();
    let wt = root.join(".claude/worktrees/feature-x");
    assert_eq!(inside.cwd(), wt);
    assert!(wt.join("README.md").is_file());
    assert!(
        text.contains(&format!("Created worktree at {}", wt.display())),
        "{text}"
    );
    assert_eq!(out["worktreePath"], wt.display().to_string());
    assert_eq!(out["worktreeBranch"], "worktree-feature-x");
    assert!(listed_worktrees(&root).contains(&wt));
    assert!(branches(&root).contains(&"worktree-feature-x".to_owned()));
    // The worktree is on the new branch, at the commit the session came from.
    assert_eq!(
        git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "worktree-feature-x"
    );
    assert_eq!(
        git(&wt, &["rev-parse", "HEAD"]),
        git(&root, &["rev-parse", "HEAD"])
    );
    let active = active_worktree(&inside).unwrap();
    assert_eq!(active.original_cwd, root);
    assert!(active.created);
    // One session at a time.
    let err = call(&EnterWorktree, &inside, json!({"name": "other"}))
        .await
        .unwrap_err();
    assert!(err.contains("Already in a worktree session"), "{err}");
    // The checkout stays out of the main one's status (and of `git add -A`), by a line in
    // `info/exclude` written once.
    assert_eq!(git(&root, &["status", "--porcelain"]), "");
    let exclude = std::fs::read_to_string(root.join(".git/info/exclude")).unwrap();
    assert_eq!(
        exclude
            .lines()
            .filter(|l| *l == "/.claude/worktrees/")
            .count(),
        1,
        "{exclude}"
    );
    let (_, _, back) = call(&ExitWorktree, &inside, json!({"action": "keep"}))
        .await
        .unwrap();
    call(&EnterWorktree, &back, json!({"name": "second"}))
        .await
        .unwrap();
    let exclude = std::fs::read_to_string(root.join(".git/info/exclude")).unwrap();
    assert_eq!(
        exclude
            .lines()
            .filter(|l| *l == "/.claude/worktrees/")
            .count(),
        1,
        "{exclude}"
    );
}

/// Plan mode refuses creating a worktree (a branch and a checkout), from the tool's own
/// check: the permission engine sees no path the call writes.
#[tokio::test]
async fn plan_mode_refuses_creating_a_worktree() {
    let (_tmp, root) = repo();
    let mut perm = tool_core::ToolPermissionContext::default();
    perm.set_mode(tool_core::PermissionMode::Plan);
    let ctx = ToolUseContext::new(&root).with_permission(perm);
    let input = EnterWorktree.parse_input(json!({"name": "p1"})).unwrap();
    match EnterWorktree.check_permissions(&input, &ctx).await {
        tool_core::PermissionResult::Deny { message, .. } => {
            assert!(
                message.starts_with("Plan mode is active: EnterWorktree would make changes"),
                "{message}"
            );
        }
        other => panic!("not refused: {other:?}"),
    }
    // Outside plan mode the tool has no opinion (the engine asks).
    let ctx = ToolUseContext::new(&root);
    assert!(matches!(
        EnterWorktree.check_permissions(&input, &ctx).await,
        tool_core::PermissionResult::Passthrough { .. }
    ));
}

/// A name with `/` is flattened in the branch as in the directory, so `team/fix` and then
/// `team` do not clash as refs (`worktree-team/fix` would need `worktree-team` to be a
/// directory of refs).
#[tokio::test]
async fn slashed_names_make_flat_branches() {
    let (_tmp, root) = repo();
    let ctx = ToolUseContext::new(&root);
    let (_, out, inside) = call(&EnterWorktree, &ctx, json!({"name": "team/fix"}))
        .await
        .unwrap();
    assert_eq!(out["worktreeBranch"], "worktree-team+fix");
    let (_, _, back) = call(&ExitWorktree, &inside, json!({"action": "keep"}))
        .await
        .unwrap();
    let (_, out, _) = call(&EnterWorktree, &back, json!({"name": "team"}))
        .await
        .unwrap();
    assert_eq!(out["worktreeBranch"], "worktree-team");
}

#[tokio::test]
async fn enter_without_input_generates_a_name() {
    let (_tmp, root) = repo();
    let ctx = ToolUseContext::new(&root);
    let (_, out, inside) = call(&EnterWorktree, &ctx, json!({})).await.unwrap();
    let path = PathBuf::from(out["worktreePath"].as_str().unwrap());
    assert_eq!(inside.cwd(), path);
    assert_eq!(path.parent().unwrap(), root.join(".claude/worktrees"));
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(branches(&root).contains(&format!("worktree-{name}")));
}

#[tokio::test]
async fn enter_with_path_switches_into_an_existing_worktree() {
    let (tmp, root) = repo();
    let other = root.parent().unwrap().join("side");
    git(
        &root,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side-branch",
            other.to_str().unwrap(),
        ],
    );
    let ctx = ToolUseContext::new(&root);
    let (text, out, inside) = call(
        &EnterWorktree,
        &ctx,
        json!({"path": other.display().to_string()}),
    )
    .await
    .unwrap();
    assert_eq!(inside.cwd(), other);
    assert!(text.contains("Entered the existing worktree"), "{text}");
    assert_eq!(out["worktreeBranch"], "side-branch");
    assert!(!active_worktree(&inside).unwrap().created);
    // A worktree entered by path is only ever kept.
    let err = call(&ExitWorktree, &inside, json!({"action": "remove"}))
        .await
        .unwrap_err();
    assert!(err.contains("will not remove it"), "{err}");
    assert!(other.is_dir());
    let (_, _, back) = call(&ExitWorktree, &inside, json!({"action": "keep"}))
        .await
        .unwrap();
    assert_eq!(back.cwd(), root);
    assert!(other.is_dir());

    // A directory that is not one of the repository's worktrees, and the main worktree.
    let plain = tmp.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let err = call(
        &EnterWorktree,
        &ctx,
        json!({"path": plain.display().to_string()}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("is not a worktree of the repository"), "{err}");
    assert!(err.contains(&other.display().to_string()), "{err}");
    let err = call(
        &EnterWorktree,
        &ctx,
        json!({"path": root.display().to_string()}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("main working tree"), "{err}");
    // Both fields at once.
    let err = call(&EnterWorktree, &ctx, json!({"name": "a", "path": "/x"}))
        .await
        .unwrap_err();
    assert!(err.contains("not both"), "{err}");
}

#[tokio::test]
async fn outside_a_repository_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    let ctx = ToolUseContext::new(&dir);
    let err = call(&EnterWorktree, &ctx, json!({"name": "x"}))
        .await
        .unwrap_err();
    assert!(err.contains("Not in a git repository"), "{err}");
    assert!(err.contains(&dir.display().to_string()), "{err}");
    assert!(active_worktree(&ctx).is_none());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[tokio::test]
async fn taken_and_invalid_names_are_refused() {
    let (_tmp, root) = repo();
    let ctx = ToolUseContext::new(&root);
    let (_, _, inside) = call(&EnterWorktree, &ctx, json!({"name": "dup"}))
        .await
        .unwrap();
    call(&ExitWorktree, &inside, json!({"action": "keep"}))
        .await
        .unwrap();
    let err = call(&EnterWorktree, &ctx, json!({"name": "dup"}))
        .await
        .unwrap_err();
    assert!(
        err.contains("A worktree named \"dup\" already exists"),
        "{err}"
    );
    // A branch of that name without the directory is refused too.
    git(&root, &["branch", "worktree-taken"]);
    let err = call(&EnterWorktree, &ctx, json!({"name": "taken"}))
        .await
        .unwrap_err();
    assert!(
        err.contains("The branch \"worktree-taken\" already exists"),
        "{err}"
    );
    for bad in ["../escape", "has space", ".hidden", ""] {
        let err = call(&EnterWorktree, &ctx, json!({"name": bad}))
            .await
            .unwrap_err();
        assert!(err.starts_with("<tool_use_error>"), "{bad}: {err}");
    }
    assert!(active_worktree(&ctx).is_none());
    assert!(!root.join(".claude/worktrees/taken").exists());
}

#[tokio::test]
async fn exit_keep_returns_and_leaves_the_worktree() {
    let (_tmp, root) = repo();
    let sub = root.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let ctx = ToolUseContext::new(&sub);
    let (_, _, inside) = call(&EnterWorktree, &ctx, json!({"name": "kept"}))
        .await
        .unwrap();
    let wt = root.join(".claude/worktrees/kept");
    std::fs::write(wt.join("work.txt"), "unsaved").unwrap();
    let (text, out, back) = call(&ExitWorktree, &inside, json!({"action": "keep"}))
        .await
        .unwrap();
    assert_eq!(back.cwd(), sub);
    assert!(text.contains("kept on disk"), "{text}");
    assert_eq!(out["originalCwd"], sub.display().to_string());
    assert!(wt.join("work.txt").is_file());
    assert!(listed_worktrees(&root).contains(&wt));
    assert!(branches(&root).contains(&"worktree-kept".to_owned()));
    assert!(active_worktree(&back).is_none());
}

#[tokio::test]
async fn exit_remove_on_a_clean_worktree_deletes_directory_and_branch() {
    let (_tmp, root) = repo();
    let ctx = ToolUseContext::new(&root);
    let (_, _, inside) = call(&EnterWorktree, &ctx, json!({"name": "clean"}))
        .await
        .unwrap();
    let wt = root.join(".claude/worktrees/clean");
    assert!(wt.is_dir());
    let tool: &dyn Tool = &ExitWorktree;
    assert!(tool.is_destructive(&json!({"action": "remove"})));
    assert!(!tool.is_destructive(&json!({"action": "keep"})));
    let (text, _, back) = call(tool, &inside, json!({"action": "remove"}))
        .await
        .unwrap();
    assert_eq!(back.cwd(), root);
    assert!(!wt.exists());
    assert!(!listed_worktrees(&root).contains(&wt));
    assert_eq!(branches(&root), vec!["main".to_owned()]);
    assert!(text.contains("deleted its branch worktree-clean"), "{text}");
    assert!(active_worktree(&back).is_none());
}

#[tokio::test]
async fn remove_with_uncommitted_changes_needs_discard_changes() {
    let (_tmp, root) = repo();
    let ctx = ToolUseContext::new(&root);
    let (_, _, inside) = call(&EnterWorktree, &ctx, json!({"name": "dirty"}))
        .await
        .unwrap();
    let wt = root.join(".claude/worktrees/dirty");
    std::fs::write(wt.join("new.txt"), "work").unwrap();
    let err = call(&ExitWorktree, &inside, json!({"action": "remove"}))
        .await
        .unwrap_err();
    assert!(err.contains("uncommitted changes (1 file)"), "{err}");
    assert!(err.contains("new.txt"), "{err}");
    assert!(err.contains("discard_changes"), "{err}");
    // Nothing changed: still in the session, the work is still there.
    assert!(wt.join("new.txt").is_file());
    assert!(active_worktree(&inside).is_some());
    let (_, _, back) = call(
        &ExitWorktree,
        &inside,
        json!({"action": "remove", "discard_changes": true}),
    )
    .await
    .unwrap();
    assert_eq!(back.cwd(), root);
    assert!(!wt.exists());
    assert_eq!(branches(&root), vec!["main".to_owned()]);
}

#[tokio::test]
async fn remove_with_commits_not_on_the_original_branch_needs_discard_changes() {
    let (_tmp, root) = repo();
    let ctx = ToolUseContext::new(&root);
    let (_, _, inside) = call(&EnterWorktree, &ctx, json!({"name": "ahead"}))
        .await
        .unwrap();
    let wt = root.join(".claude/worktrees/ahead");
    std::fs::write(wt.join("feature.txt"), "done").unwrap();
    git(&wt, &["add", "feature.txt"]);
    git(&wt, &["commit", "-q", "-m", "feature"]);
    let err = call(&ExitWorktree, &inside, json!({"action": "remove"}))
        .await
        .unwrap_err();
    assert!(
        err.contains("1 commit that is not on the original branch main"),
        "{err}"
    );
    assert!(wt.is_dir());
    // With a file not committed too, the refusal names both: a model told of the file
    // only would agree to discard a commit it never heard of.
    std::fs::write(wt.join("more.txt"), "more").unwrap();
    let err = call(&ExitWorktree, &inside, json!({"action": "remove"}))
        .await
        .unwrap_err();
    assert!(
        err.contains("1 commit that is not on the original branch main")
            && err.contains("uncommitted changes (1 file)")
            && err.contains("more.txt"),
        "{err}"
    );
    std::fs::remove_file(wt.join("more.txt")).unwrap();
    // Once main has the commit, removal goes through without discarding.
    git(&root, &["merge", "-q", "--ff-only", "worktree-ahead"]);
    let (_, _, back) = call(&ExitWorktree, &inside, json!({"action": "remove"}))
        .await
        .unwrap();
    assert_eq!(back.cwd(), root);
    assert!(!wt.exists());
}

/// Commits are found wherever they still are: on the branch after the directory was
/// deleted, or after HEAD left the branch.
#[tokio::test]
async fn remove_keeps_a_branch_with_commits_when_the_directory_is_gone_or_head_moved() {
    let (_tmp, root) = repo();
    let ctx = ToolUseContext::new(&root);
    for (name, how) in [("gone", "rm -rf"), ("detached", "switch --detach")] {
        let (_, _, inside) = call(&EnterWorktree, &ctx, json!({"name": name}))
            .await
            .unwrap();
        let wt = root.join(format!(".claude/worktrees/{name}"));
        std::fs::write(wt.join("work.txt"), "precious").unwrap();
        git(&wt, &["add", "work.txt"]);
        git(&wt, &["commit", "-q", "-m", "precious work"]);
        if how == "rm -rf" {
            std::fs::remove_dir_all(&wt).unwrap();
        } else {
            git(&wt, &["switch", "-q", "--detach", "main"]);
        }
        let err = call(&ExitWorktree, &inside, json!({"action": "remove"}))
            .await
            .unwrap_err();
        assert!(
            err.contains("1 commit that is not on the original branch main"),
            "{how}: {err}"
        );
        assert!(
            branches(&root).contains(&format!("worktree-{name}")),
            "{how}"
        );
        let _ = call(&ExitWorktree, &inside, json!({"action": "keep"})).await;
    }
}

/// Removing a session's worktree whose directory is already gone drops git's record of that
/// worktree only: another one whose directory is missing now (a drive not mounted) keeps
/// its record (`git worktree prune` dropped them all).
#[tokio::test]
async fn remove_of_a_gone_worktree_leaves_other_missing_worktrees_registered() {
    let (_tmp, root) = repo();
    let elsewhere = root.parent().unwrap().join("on-a-usb-drive");
    git(
        &root,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "usb",
            elsewhere.to_str().unwrap(),
        ],
    );
    std::fs::remove_dir_all(&elsewhere).unwrap();
    let ctx = ToolUseContext::new(&root);
    let (_, _, inside) = call(&EnterWorktree, &ctx, json!({"name": "gone"}))
        .await
        .unwrap();
    std::fs::remove_dir_all(root.join(".claude/worktrees/gone")).unwrap();
    call(&ExitWorktree, &inside, json!({"action": "remove"}))
        .await
        .unwrap();
    let list = std::process::Command::new("git")
        .args(["worktree", "list", "--porcelain"])
        .current_dir(&root)
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(list.contains("on-a-usb-drive"), "{list}");
    assert!(!list.contains(".claude/worktrees/gone"), "{list}");
}

/// A new file counts as a change whatever the user's git config hides.
#[tokio::test]
async fn remove_sees_untracked_files_that_git_config_hides() {
    let (_tmp, root) = repo();
    git(&root, &["config", "status.showUntrackedFiles", "no"]);
    let ctx = ToolUseContext::new(&root);
    let (_, _, inside) = call(&EnterWorktree, &ctx, json!({"name": "hidden"}))
        .await
        .unwrap();
    let wt = root.join(".claude/worktrees/hidden");
    std::fs::write(wt.join("notes.txt"), "unsaved thoughts").unwrap();
    let err = call(&ExitWorktree, &inside, json!({"action": "remove"}))
        .await
        .unwrap_err();
    assert!(
        err.contains("uncommitted changes (1 file)") && err.contains("notes.txt"),
        "{err}"
    );
    assert!(wt.join("notes.txt").is_file());
}

#[tokio::test]
async fn exit_without_enter_is_an_error() {
    let (_tmp, root) = repo();
    let ctx = ToolUseContext::new(&root);
    for action in ["keep", "remove"] {
        let err = call(&ExitWorktree, &ctx, json!({"action": action}))
            .await
            .unwrap_err();
        assert!(err.contains("No worktree session is active"), "{err}");
    }
    let err = call(&ExitWorktree, &ctx, json!({"action": "delete"}))
        .await
        .unwrap_err();
    assert!(
        err.contains(
            "The parameter `action` must be one of \"keep\", \"remove\", but is \"delete\""
        ),
        "{err}"
    );
}

#[test]
fn schemas_flags_and_markers_match_the_spec() {
    let enter: &dyn Tool = &EnterWorktree;
    let exit: &dyn Tool = &ExitWorktree;
    let schema = enter.input_schema();
    let mut fields: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    fields.sort();
    assert_eq!(fields, ["name", "path"]);
    assert!(schema.get("required").is_none_or(|r| r == &json!([])));
    let schema = exit.input_schema();
    assert_eq!(schema["required"], json!(["action"]));
    assert_eq!(schema["properties"]["discard_changes"]["type"], "boolean");
    for tool in [enter, exit] {
        assert!(tool.prompt().contains("toolwright-gated-tool:worktree"));
        assert!(tool.should_defer());
        assert_eq!(
            tool.max_result_size(),
            tool_core::MaxResultSize::Chars(100_000)
        );
        assert!(!tool.is_concurrency_safe(&json!({"action": "keep"})));
        assert!(!tool.is_read_only(&json!({"action": "keep"})));
    }
}

/// In a worktree session, a `cd` out of the working directories lands in the worktree, not
/// in the repository the session left (where edits would go to the wrong branch).
#[tokio::test]
async fn a_cd_out_in_a_worktree_session_resets_to_the_worktree() {
    let (_tmp, root) = repo();
    let ctx = ToolUseContext::new(&root);
    let (_, _, inside) = call(&EnterWorktree, &ctx, json!({"name": "w"}))
        .await
        .unwrap();
    let wt = root.join(".claude/worktrees/w");
    let sub = wt.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let (_, _, in_sub) = call(
        &tools_builtin::Bash::default(),
        &inside,
        json!({"command": "cd sub"}),
    )
    .await
    .unwrap();
    assert_eq!(in_sub.cwd(), sub);
    let outside = tempfile::tempdir().unwrap();
    let cd_out = format!("cd {} && pwd", outside.path().display());
    let (text, _, after) = call(
        &tools_builtin::Bash::default(),
        &in_sub,
        json!({"command": cd_out}),
    )
    .await
    .unwrap();
    assert_eq!(after.cwd(), wt, "{text}");
    assert!(
        text.contains(&format!("Shell cwd was reset to {}", wt.display())),
        "{text}"
    );
}

/// `keep` after the worktree's directory was removed by hand says that it is gone and that
/// the branch is kept (found by review 38), not that the worktree "is kept on disk".
#[tokio::test]
async fn keep_says_when_the_directory_is_gone() {
    let (_dir, root) = repo();

    let ctx = ToolUseContext::new(&root);
    let (_, _, inside) = call(&EnterWorktree, &ctx, json!({"name": "f2"}))
        .await
        .unwrap();
    let worktree = root.join(".claude/worktrees/f2");
    std::fs::remove_dir_all(&worktree).unwrap();
    let (text, _, back) = call(&ExitWorktree, &inside, json!({"action": "keep"}))
        .await
        .unwrap();
    assert!(!text.contains("kept on disk"), "{text}");
    assert!(
        text.contains("no longer exists") && text.contains("branch worktree-f2 is kept"),
        "{text}"
    );
    assert_eq!(back.cwd(), root);
    // Nothing of git's was touched: the branch is there, the entry still listed.
    assert!(git(&root, &["branch", "--list", "worktree-f2"]).contains("worktree-f2"));

    // With the directory there, the usual answer.
    let (_, _, inside) = call(&EnterWorktree, &back, json!({"name": "f3"}))
        .await
        .unwrap();
    let (text, _, _) = call(&ExitWorktree, &inside, json!({"action": "keep"}))
        .await
        .unwrap();
    assert!(text.contains("kept on disk"), "{text}");
}
