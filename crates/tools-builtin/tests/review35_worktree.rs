//! Review 35: EnterWorktree and ExitWorktree on real repositories (planted worktree entries,
//! paths outside `.claude/worktrees/`, links at `info/exclude` and `.claude`, the
//! repository's own hooks, fsmonitor and filter drivers, a failed `git worktree add`), and
//! Sleep's limit in the schema step. Then the review of those fixes: filter drivers behind
//! conditional includes, in a worktree's own `config.worktree` and in a non-UTF-8
//! directory; a racing session's worktree left alone by a failed add; a link swapped
//! between the permission check and the call; an `info/exclude` over 1 MiB.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(feature = "worktree")]
mod worktree {
    use std::os::unix::fs::PermissionsExt as _;
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::sync::Arc;

    use serde_json::{Value, json};
    use tool_core::{
        PermissionMode, PermissionResult, ProgressSender, RuleSource, SourcedRule, Tool,
        ToolPermissionContext, ToolUseContext, tool_use_error,
    };
    use tools_builtin::worktree::active_worktree;
    use tools_builtin::{EnterWorktree, ExitWorktree};

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

    /// A temporary directory (canonical) with a repository `proj` holding one commit.
    fn repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("proj");
        std::fs::create_dir(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("a.txt"), "hello\n").unwrap();
        git(&root, &["add", "a.txt"]);
        git(&root, &["commit", "-q", "-m", "init"]);
        (dir, base, root)
    }

    fn branches(root: &Path) -> Vec<String> {
        git(root, &["branch", "--format=%(refname:short)"])
            .lines()
            .map(str::to_owned)
            .collect()
    }

    async fn call(
        tool: &dyn Tool,
        ctx: &ToolUseContext,
        input: Value,
    ) -> Result<(String, ToolUseContext), String> {
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
        Ok((result.data.content.joined_text(), next))
    }

    /// An executable shell script at `path` that touches `marker`.
    fn toucher(path: &Path, marker: &Path) {
        std::fs::write(path, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Finding 1: a `.git/worktrees/*/gitdir` entry naming a plain directory (no `.git`,
    /// git calls it prunable) is no worktree to enter.
    #[tokio::test]
    async fn a_planted_worktree_entry_is_not_entered() {
        let (_tmp, base, root) = repo();
        let private = base.join("private");
        std::fs::create_dir(&private).unwrap();
        std::fs::write(private.join("notes.txt"), "token=s3cr3t\n").unwrap();
        let entry = root.join(".git/worktrees/w");
        std::fs::create_dir_all(&entry).unwrap();
        std::fs::write(
            entry.join("gitdir"),
            format!("{}/.git\n", private.display()),
        )
        .unwrap();
        std::fs::write(entry.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(entry.join("commondir"), "../..\n").unwrap();
        let ctx = ToolUseContext::new(&root);
        let err = call(
            &EnterWorktree,
            &ctx,
            json!({"path": private.display().to_string()}),
        )
        .await
        .unwrap_err();
        assert!(err.contains("is not a live worktree"), "{err}");
        assert!(active_worktree(&ctx).is_none());
    }

    /// Finding 1: entering a genuine worktree outside `<root>/.claude/worktrees/` asks even
    /// with an allow rule for EnterWorktree; one inside it is allowed by the rule; bypass
    /// mode skips the question.
    #[tokio::test(flavor = "multi_thread")]
    async fn entering_outside_the_worktrees_dir_asks_past_an_allow_rule() {
        let (_tmp, base, root) = repo();
        let outside = base.join("side");
        git(
            &root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "side",
                outside.to_str().unwrap(),
            ],
        );
        let inside = root.join(".claude/worktrees/in");
        git(
            &root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "in",
                inside.to_str().unwrap(),
            ],
        );
        let decide = async |mode: PermissionMode, path: &Path| {
            let perm = ToolPermissionContext {
                mode,
                bypass_available: mode == PermissionMode::BypassPermissions,
                allow: vec![SourcedRule {
                    source: RuleSource::FlagSettings,
                    rule: "EnterWorktree".to_owned(),
                }],
                ..ToolPermissionContext::default()
            };
            let engine = Arc::new(
                tool_perms::PermissionEngine::new(&perm, tool_perms::PathRoots::for_cwd(&root))
                    .unwrap(),
            );
            let ctx = ToolUseContext::new(&root).with_permission(perm);
            let input = EnterWorktree
                .parse_input(json!({"path": path.display().to_string()}))
                .unwrap();
            engine.decide(&EnterWorktree, &input, &ctx).await
        };
        match decide(PermissionMode::Default, &outside).await {
            PermissionResult::Ask { message, .. } => {
                assert!(
                    message.contains(&outside.display().to_string()),
                    "{message}"
                );
            }
            other => panic!("not asked: {other:?}"),
        }
        let inside_decision = decide(PermissionMode::Default, &inside).await;
        assert!(
            matches!(inside_decision, PermissionResult::Allow { .. }),
            "{inside_decision:?}"
        );
        let bypass = decide(PermissionMode::BypassPermissions, &outside).await;
        assert!(
            matches!(bypass, PermissionResult::Allow { .. }),
            "{bypass:?}"
        );
    }

    /// Finding 2: a link at `.git/info/exclude` (or at `.git/info`) is never written through.
    #[tokio::test]
    async fn info_exclude_is_never_written_through_a_link() {
        let (_tmp, base, root) = repo();
        let settings = base.join("settings.json");
        let original = "{\"permissions\":{\"deny\":[\"Read(./secret)\"]}}";
        std::fs::write(&settings, original).unwrap();
        let exclude = root.join(".git/info/exclude");
        let _ = std::fs::remove_file(&exclude);
        std::os::unix::fs::symlink(&settings, &exclude).unwrap();
        let ctx = ToolUseContext::new(&root);
        let (_, inside) = call(&EnterWorktree, &ctx, json!({"name": "one"}))
            .await
            .unwrap();
        assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
        assert!(
            std::fs::symlink_metadata(&exclude)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let (_, back) = call(&ExitWorktree, &inside, json!({"action": "keep"}))
            .await
            .unwrap();

        // The `info` directory itself a link to a directory outside.
        let elsewhere = base.join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("exclude"), "keep me\n").unwrap();
        std::fs::remove_file(&exclude).unwrap();
        std::fs::remove_dir(root.join(".git/info")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join(".git/info")).unwrap();
        call(&EnterWorktree, &back, json!({"name": "two"}))
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("exclude")).unwrap(),
            "keep me\n"
        );
    }

    /// Finding 3: a `.claude` or `.claude/worktrees` link makes EnterWorktree refuse rather
    /// than check out wherever it points.
    #[tokio::test]
    async fn a_linked_claude_or_worktrees_dir_is_refused() {
        let (_tmp, base, root) = repo();
        let target = base.join("vim-pack-start");
        std::fs::create_dir(&target).unwrap();
        std::os::unix::fs::symlink(&target, root.join(".claude")).unwrap();
        let ctx = ToolUseContext::new(&root);
        let err = call(&EnterWorktree, &ctx, json!({"name": "x"}))
            .await
            .unwrap_err();
        assert!(err.contains("is a symbolic link"), "{err}");
        assert!(err.contains(".claude"), "{err}");
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
        assert!(!branches(&root).contains(&"worktree-x".to_owned()));

        std::fs::remove_file(root.join(".claude")).unwrap();
        std::fs::create_dir(root.join(".claude")).unwrap();
        std::os::unix::fs::symlink(&target, root.join(".claude/worktrees")).unwrap();
        let err = call(&EnterWorktree, &ctx, json!({"name": "y"}))
            .await
            .unwrap_err();
        assert!(err.contains("is a symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
    }

    /// Finding 4: the repository's post-checkout hook and `core.fsmonitor` do not run for
    /// EnterWorktree's `git worktree add` nor ExitWorktree's `git status`.
    #[tokio::test]
    async fn repository_hooks_and_fsmonitor_do_not_run() {
        let (_tmp, base, root) = repo();
        let hook_marker = base.join("hook-ran");
        let monitor_marker = base.join("fsmonitor-ran");
        let hooks = root.join(".git/hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        toucher(&hooks.join("post-checkout"), &hook_marker);
        let monitor = base.join("monitor.sh");
        toucher(&monitor, &monitor_marker);
        git(
            &root,
            &["config", "core.fsmonitor", monitor.to_str().unwrap()],
        );
        let ctx = ToolUseContext::new(&root);
        let (_, inside) = call(&EnterWorktree, &ctx, json!({"name": "h"}))
            .await
            .unwrap();
        call(&ExitWorktree, &inside, json!({"action": "remove"}))
            .await
            .unwrap();
        assert!(!hook_marker.exists(), "the post-checkout hook ran");
        assert!(!monitor_marker.exists(), "core.fsmonitor ran");
    }

    /// Finding 4: a filter driver named by the repository's own config is refused, naming
    /// the key, before anything is checked out.
    #[tokio::test]
    async fn a_filter_driver_in_the_repository_config_is_refused() {
        let (_tmp, base, root) = repo();
        let marker = base.join("filter-ran");
        std::fs::write(root.join(".gitattributes"), "* filter=x\n").unwrap();
        git(&root, &["add", ".gitattributes"]);
        git(&root, &["commit", "-q", "-m", "attrs"]);
        git(
            &root,
            &[
                "config",
                "filter.x.smudge",
                &format!("sh -c 'touch {}; cat'", marker.display()),
            ],
        );
        let ctx = ToolUseContext::new(&root);
        let err = call(&EnterWorktree, &ctx, json!({"name": "f"}))
            .await
            .unwrap_err();
        assert!(err.contains("filter.x.smudge"), "{err}");
        assert!(!marker.exists(), "the smudge filter ran");
        assert!(!root.join(".claude/worktrees/f").exists());
        assert!(!branches(&root).contains(&"worktree-f".to_owned()));
    }

    /// Finding 6: a `git worktree add` that fails after its branch was made (a blob missing
    /// from the object store) leaves neither the branch nor the checkout behind, and the
    /// exclude line was written first.
    #[tokio::test]
    async fn a_failed_add_leaves_nothing_behind() {
        let (_tmp, _base, root) = repo();
        std::fs::write(root.join("b.txt"), "a blob only this test has 35\n").unwrap();
        git(&root, &["add", "b.txt"]);
        git(&root, &["commit", "-q", "-m", "b"]);
        let blob = git(&root, &["rev-parse", "HEAD:b.txt"]);
        let blob = blob.trim();
        std::fs::remove_file(root.join(".git/objects").join(&blob[..2]).join(&blob[2..])).unwrap();
        let ctx = ToolUseContext::new(&root);
        let err = call(&EnterWorktree, &ctx, json!({"name": "broken"}))
            .await
            .unwrap_err();
        assert!(err.contains("git worktree add"), "{err}");
        // What this call made, and only that, is named as removed (git removed its own
        // half-made checkout).
        assert!(
            err.contains("Removed what this call had made: the branch worktree-broken."),
            "{err}"
        );
        assert!(!err.contains("Left behind"), "{err}");
        assert!(!branches(&root).contains(&"worktree-broken".to_owned()));
        assert!(!root.join(".claude/worktrees/broken").exists());
        let exclude = std::fs::read_to_string(root.join(".git/info/exclude")).unwrap();
        assert!(
            exclude.lines().any(|l| l == "/.claude/worktrees/"),
            "{exclude}"
        );
        assert!(active_worktree(&ctx).is_none());
    }

    // ----- Review of review 35's worktree changes -----

    /// A repository with `.gitattributes` assigning the filter `x` to every file, committed
    /// before any filter is configured; returns the marker a filter program would touch and
    /// the configuration that would set it (`filter.x.smudge` and `.clean`).
    fn filtered_repo() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf, String) {
        let (tmp, base, root) = repo();
        std::fs::write(root.join(".gitattributes"), "* filter=x\n").unwrap();
        git(&root, &["add", ".gitattributes"]);
        git(&root, &["commit", "-q", "-m", "attrs"]);
        let marker = base.join("RAN");
        let program = format!("sh -c 'touch {}; cat'", marker.display());
        // Double-quoted: a `;` outside quotes starts a comment.
        let config = format!("[filter \"x\"]\n\tsmudge = \"{program}\"\n\tclean = \"{program}\"\n");
        (tmp, base, root, marker, config)
    }

    /// Appends `text` to the repository's `.git/config`.
    fn append_config(root: &Path, text: &str) {
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(root.join(".git/config"))
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    /// Finding 1: a filter driver set in a file the repository's configuration includes
    /// under a condition that holds only for the new worktree (`gitdir:` of a linked
    /// worktree's git directory, `onbranch:` of the new branch) is refused all the same, and
    /// its program never runs; so is one behind a plain `include.path`, relative to the
    /// including file, nested.
    #[tokio::test]
    async fn a_filter_driver_behind_a_conditional_include_is_refused() {
        for condition in [
            "[includeIf \"gitdir:**/.git/worktrees/**\"]",
            "[includeIf \"onbranch:worktree-*\"]",
            "[IncludeIf \"gitdir/i:**/WORKTREES/**\"]",
            "[include]",
        ] {
            let (_tmp, base, root, marker, config) = filtered_repo();
            let evil = base.join("evil.cfg");
            std::fs::write(&evil, &config).unwrap();
            // Nested: the repository includes `outer.cfg` by a relative path, which includes
            // `evil.cfg` under the condition.
            std::fs::write(
                root.join(".git/outer.cfg"),
                format!("{condition}\n\tpath = {}\n", evil.display()),
            )
            .unwrap();
            append_config(&root, "[include]\n\tpath = outer.cfg\n");
            let ctx = ToolUseContext::new(&root);
            let err = call(&EnterWorktree, &ctx, json!({"name": "f"}))
                .await
                .unwrap_err();
            assert!(err.contains("filter.x.smudge"), "{condition}: {err}");
            assert!(err.contains("evil.cfg"), "{condition}: {err}");
            assert!(!marker.exists(), "{condition}: the smudge filter ran");
            assert!(!root.join(".claude/worktrees/f").exists(), "{condition}");
            assert!(
                !branches(&root).contains(&"worktree-f".to_owned()),
                "{condition}"
            );
        }
    }

    /// Finding 1: a repository in a directory whose name is not UTF-8 has its configuration
    /// read all the same: its filter driver is refused; without one, the worktree is made
    /// in that very directory.
    #[tokio::test]
    async fn a_filter_driver_in_a_non_utf8_directory_is_refused() {
        use std::os::unix::ffi::OsStrExt as _;
        let (_tmp, base, _root, marker, config) = filtered_repo();
        let odd = base.join(std::ffi::OsStr::from_bytes(b"pro\xffj"));
        let root = odd.join("proj");
        std::fs::create_dir(&odd).unwrap();
        std::fs::rename(base.join("proj"), &root).unwrap();
        append_config(&root, &config);
        let ctx = ToolUseContext::new(&root);
        let err = call(&EnterWorktree, &ctx, json!({"name": "f"}))
            .await
            .unwrap_err();
        assert!(err.contains("filter.x.smudge"), "{err}");
        assert!(!marker.exists(), "the smudge filter ran");
        // Without it, the worktree is made where the name says, in that directory (not in
        // one whose name lost its odd byte).
        git(&root, &["config", "--remove-section", "filter.x"]);
        call(&EnterWorktree, &ctx, json!({"name": "f"}))
            .await
            .unwrap();
        assert!(root.join(".claude/worktrees/f/a.txt").is_file());
        assert_eq!(std::fs::read_dir(&base).unwrap().count(), 1, "{base:?}");
    }

    /// Findings 1 and 4: ExitWorktree's `remove` reads the worktree's own
    /// `config.worktree` (`extensions.worktreeConfig`), and its refusal speaks of leaving:
    /// `git status` would run the program; leave with `keep` and remove the worktree with
    /// git. The worktree stays, and the session with it.
    #[tokio::test]
    async fn remove_refuses_a_filter_in_the_worktrees_own_config_and_says_how_to_leave() {
        let (_tmp, _base, root, marker, config) = filtered_repo();
        let ctx = ToolUseContext::new(&root);
        let (_, inside) = call(&EnterWorktree, &ctx, json!({"name": "w"}))
            .await
            .unwrap();
        let wt = root.join(".claude/worktrees/w");
        git(&root, &["config", "extensions.worktreeConfig", "true"]);
        let own = PathBuf::from(git(&wt, &["rev-parse", "--absolute-git-dir"]).trim())
            .join("config.worktree");
        assert!(own.starts_with(root.join(".git/worktrees")), "{own:?}");
        std::fs::write(&own, &config).unwrap();
        let err = call(&ExitWorktree, &inside, json!({"action": "remove"}))
            .await
            .unwrap_err();
        assert!(err.contains("filter.x."), "{err}");
        assert!(err.contains("config.worktree"), "{err}");
        assert!(err.contains("git status"), "{err}");
        assert!(err.contains("\"keep\""), "{err}");
        assert!(err.contains("git worktree remove"), "{err}");
        assert!(!err.contains("checkout"), "{err}");
        assert!(!err.contains("create the worktree"), "{err}");
        assert!(!marker.exists(), "the filter ran");
        assert!(wt.exists());
        assert!(active_worktree(&inside).is_some());
    }

    /// The real `git` on PATH, for the wrapper of the racing-session test.
    fn real_git() -> PathBuf {
        let path = std::env::var_os("PATH").unwrap();
        std::env::split_paths(&path)
            .map(|d| d.join("git"))
            .find(|g| g.is_file())
            .unwrap()
    }

    /// The variable that tells the rerun of the racing-session test that it is the rerun.
    const RACE_CASE: &str = "REVIEW35_WORKTREE_RACE";

    /// Finding 2: a second session creating the same worktree name at the same moment (here
    /// a `git` wrapper on PATH that makes `.claude/worktrees/fix` and `worktree-fix`, with a
    /// file of its own, just before this call's first change) makes this call fail, and
    /// the failure removes nothing of the other session's: its checkout, its file and its
    /// branch stay, and the message does not claim to have cleaned up.
    #[test]
    fn a_racing_session_keeps_its_worktree_and_branch() {
        const NAME: &str = "worktree::a_racing_session_keeps_its_worktree_and_branch";
        if std::env::var_os(RACE_CASE).is_none() {
            let dir = tempfile::tempdir().unwrap();
            let wrapper = dir.path().join("git");
            std::fs::write(
                &wrapper,
                r#"#!/bin/sh
top=$("$REAL_GIT" rev-parse --show-toplevel 2>/dev/null)
case " $* " in
  *" worktree add "*|*" branch worktree-"*|*" update-ref "*)
    if [ -n "$top" ] && [ ! -e "$top/.git/racer-ran" ]; then
      : > "$top/.git/racer-ran"
      "$REAL_GIT" -C "$top" worktree add -q -b worktree-fix "$top/.claude/worktrees/fix" HEAD >/dev/null 2>&1
      echo mine > "$top/.claude/worktrees/fix/work.txt"
    fi;;
esac
exec "$REAL_GIT" "$@"
"#,
            )
            .unwrap();
            std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
            let path = std::env::join_paths(
                std::iter::once(dir.path().to_path_buf())
                    .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
            )
            .unwrap();
            let out = Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--test-threads=1"])
                .env(RACE_CASE, "1")
                .env("REAL_GIT", real_git())
                .env("PATH", path)
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && said.contains("1 passed"),
                "{said}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            return;
        }
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                let (_tmp, _base, root) = repo();
                let ctx = ToolUseContext::new(&root);
                let err = call(&EnterWorktree, &ctx, json!({"name": "fix"}))
                    .await
                    .unwrap_err();
                let theirs = root.join(".claude/worktrees/fix");
                assert!(root.join(".git/racer-ran").exists(), "{err}");
                assert_eq!(
                    std::fs::read_to_string(theirs.join("work.txt")).unwrap_or_default(),
                    "mine\n",
                    "{err}"
                );
                assert!(theirs.join("a.txt").exists(), "{err}");
                assert!(
                    branches(&root).contains(&"worktree-fix".to_owned()),
                    "{err}"
                );
                let list = git(&root, &["worktree", "list", "--porcelain"]);
                assert!(list.contains("branch refs/heads/worktree-fix"), "{list}");
                assert!(err.contains("already exists"), "{err}");
                assert!(!err.contains("Nothing was left behind"), "{err}");
                assert!(!err.contains("removed"), "{err}");
                assert!(active_worktree(&ctx).is_none());
            });
    }

    /// Finding 5: a path inside `.claude/worktrees/` when its permission was decided (a link
    /// there naming a worktree inside) that leads outside when the call runs (the link
    /// swapped for one to a worktree outside) is not entered: the answer changed.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_link_swapped_between_permission_and_call_is_refused() {
        let (_tmp, base, root) = repo();
        let inside = root.join(".claude/worktrees/in");
        let outside = base.join("side");
        for (dir, branch) in [(&inside, "in"), (&outside, "side")] {
            git(
                &root,
                &["worktree", "add", "-q", "-b", branch, dir.to_str().unwrap()],
            );
        }
        let link = root.join(".claude/worktrees/link");
        std::os::unix::fs::symlink(&inside, &link).unwrap();
        let perm = ToolPermissionContext {
            allow: vec![SourcedRule {
                source: RuleSource::FlagSettings,
                rule: "EnterWorktree".to_owned(),
            }],
            ..ToolPermissionContext::default()
        };
        let engine =
            tool_perms::PermissionEngine::new(&perm, tool_perms::PathRoots::for_cwd(&root))
                .unwrap();
        let ctx = ToolUseContext::new(&root)
            .with_permission(perm)
            .with_tool_use_id("toolu_swap");
        let input = EnterWorktree
            .parse_input(json!({"path": link.display().to_string()}))
            .unwrap();
        let decided = engine.decide(&EnterWorktree, &input, &ctx).await;
        assert!(
            matches!(decided, PermissionResult::Allow { .. }),
            "{decided:?}"
        );
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let err = call(
            &EnterWorktree,
            &ctx,
            json!({"path": link.display().to_string()}),
        )
        .await
        .unwrap_err();
        assert!(err.contains("changed"), "{err}");
        assert!(err.contains(&outside.display().to_string()), "{err}");
        assert!(active_worktree(&ctx).is_none());
        // Unchanged, the same path is entered.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(&inside, &link).unwrap();
        let decided = engine.decide(&EnterWorktree, &input, &ctx).await;
        assert!(
            matches!(decided, PermissionResult::Allow { .. }),
            "{decided:?}"
        );
        call(
            &EnterWorktree,
            &ctx,
            json!({"path": link.display().to_string()}),
        )
        .await
        .unwrap();
        assert_eq!(active_worktree(&ctx).unwrap().worktree_path, inside);
    }

    /// Finding 6: an `info/exclude` longer than 1 MiB: a last line without its line break
    /// gets one before the new line (the byte looked at is the file's last, not the 1 MiB
    /// read's), and a line already there past the first MiB is not added again.
    #[tokio::test]
    async fn a_long_exclude_file_is_read_to_its_end() {
        let block = format!("#{}\n", "x".repeat(1022)).repeat(1024);
        assert_eq!(block.len(), 1 << 20);
        for (tail, want) in [
            (
                "tail-without-newline".to_owned(),
                format!("{block}tail-without-newline\n/.claude/worktrees/\n"),
            ),
            (
                "/.claude/worktrees/\nmore\n".to_owned(),
                format!("{block}/.claude/worktrees/\nmore\n"),
            ),
        ] {
            let (_tmp, _base, root) = repo();
            let exclude = root.join(".git/info/exclude");
            std::fs::write(&exclude, format!("{block}{tail}")).unwrap();
            let ctx = ToolUseContext::new(&root);
            call(&EnterWorktree, &ctx, json!({"name": "long"}))
                .await
                .unwrap();
            let got = std::fs::read_to_string(&exclude).unwrap();
            assert!(
                got == want,
                "{tail:?}: ends with {:?}",
                &got[got.len().saturating_sub(80)..]
            );
        }
    }
}

#[cfg(feature = "proactive")]
mod sleep {
    use serde_json::json;
    use tool_core::Tool;
    use tools_builtin::Sleep;

    /// Finding 5: a duration past u64's range is refused with the real limit.
    #[test]
    fn a_huge_duration_names_the_real_limit() {
        for value in [
            json!(1e30),
            json!(3_600_001),
            json!(18_446_744_073_709_551_615_u64),
        ] {
            let err = Sleep
                .parse_input(json!({ "duration_ms": value }))
                .unwrap_err()
                .to_model_text();
            assert!(err.contains("must be at most 3600000"), "{value}: {err}");
            assert!(
                !err.contains("at most 18446744073709551615"),
                "{value}: {err}"
            );
        }
        assert!(Sleep.parse_input(json!({"duration_ms": 3_600_000})).is_ok());
    }
}
