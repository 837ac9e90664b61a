//! Session 36 on read-only commands and what the rest of a line makes of the files an
//! earlier command of it creates: a glob that may match a name the line creates before it
//! expands, a path under the destination of a copy that may bring symbolic links, the tree
//! walkers that follow links (`find -L`, `ls -LR`, `du -L`), and the reason given for a `<>`
//! redirection.

use crate::common::{Fixture, case, real_bash, run};
use tool_core::PermissionResult;

/// The message of an ask, or a panic naming what came instead.
fn ask_message(got: &PermissionResult) -> String {
    match got {
        PermissionResult::Ask { message, .. } => message.clone(),
        other => panic!("expected ask, got {other:?}"),
    }
}

// --- 5. `<>` is a redirection that writes, not a syntax error -------------------------------

/// Found by review: `cat a.txt <> /dev/null` (valid bash: it opens `/dev/null` for reading
/// and writing on standard input) asked with "the command has a syntax error". It still
/// asks (tree-sitter-bash does not read `<>`, and `<>` creates its file), now saying that
/// the redirection opens its file for reading and writing.
#[tokio::test]
async fn a_read_write_redirection_is_said_to_write() {
    let fx = Fixture::new();
    std::fs::write(fx.proj.join("a.txt"), "a\n").unwrap();
    assert!(real_bash("cat a.txt <> /dev/null", &fx.proj, &fx.home));
    assert!(real_bash("cat a.txt 3<>x", &fx.proj, &fx.home));
    assert!(fx.proj.join("x").exists(), "`3<>x` creates x");
    for (command, target) in [
        ("cat a.txt <> /dev/null", "/dev/null"),
        ("cat <> x", "x"),
        ("cat a.txt 3<>x", "x"),
    ] {
        let got = run(&fx, &case("ask", "Bash", command)).await;
        let message = ask_message(&got);
        assert!(
            !message.contains("syntax error")
                && message.contains("for reading and writing")
                && message.contains(&format!("a write of {target}")),
            "{command}: {message}"
        );
    }
    // A real syntax error beside one is still one.
    let got = run(&fx, &case("ask", "Bash", "cat a.txt <> x; )")).await;
    assert!(ask_message(&got).contains("syntax error"), "{got:?}");
}
