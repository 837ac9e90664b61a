//! Review 38 (the internal profile's tools): ExitWorktree `keep` on a worktree whose
//! directory was removed, and top-level `await` in the Node REPL, whose declarations still
//! persist between calls.
#![cfg(any(feature = "worktree", feature = "repl"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use tool_core::{ProgressSender, Tool, ToolUseContext, tool_use_error};

/// Calls `tool` through schema, validation and call; on success the text and the context
/// after the result's modifier, on failure the model's error text.
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

#[cfg(feature = "worktree")]
mod worktree {
    use std::path::Path;
    use std::process::Command;

    use serde_json::json;
    use tool_core::ToolUseContext;
    use tools_builtin::{EnterWorktree, ExitWorktree};

    use super::call;

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

    /// Finding 3: `keep` after the worktree's directory was removed by hand says that it is
    /// gone and that the branch is kept, not that the worktree "is kept on disk".
    #[tokio::test]
    async fn keep_says_when_the_directory_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap().join("repo");
        std::fs::create_dir(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("a.txt"), "x\n").unwrap();
        git(&root, &["add", "a.txt"]);
        git(&root, &["commit", "-q", "-m", "init"]);

        let ctx = ToolUseContext::new(&root);
        let (_, inside) = call(&EnterWorktree, &ctx, json!({"name": "f2"}))
            .await
            .unwrap();
        let worktree = root.join(".claude/worktrees/f2");
        std::fs::remove_dir_all(&worktree).unwrap();
        let (text, back) = call(&ExitWorktree, &inside, json!({"action": "keep"}))
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
        let (_, inside) = call(&EnterWorktree, &back, json!({"name": "f3"}))
            .await
            .unwrap();
        let (text, _) = call(&ExitWorktree, &inside, json!({"action": "keep"}))
            .await
            .unwrap();
        assert!(text.contains("kept on disk"), "{text}");
    }
}

#[cfg(feature = "repl")]
mod repl {
    use serde_json::json;
    use tool_core::ToolUseContext;
    use tools_builtin::Repl;

    async fn node(ctx: &ToolUseContext, code: &str) -> Result<String, String> {
        super::call(
            &Repl::default(),
            ctx,
            json!({"code": code, "language": "node"}),
        )
        .await
        .map(|(text, _)| text)
    }

    /// Finding 4: top-level `await` works as at node's own prompt, and what such a call
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
}
