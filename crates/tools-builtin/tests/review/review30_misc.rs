//! Review 30, the smaller tools: TaskOutput's wait is cancelled by a user interrupt (as
//! Sleep's is), the skill listing says when to use a skill and falls back to the first line
//! of its body, and WebFetch reports an empty `Location` as a missing one. Real background
//! processes, real skill files in temporary directories, a real HTTP server on 127.0.0.1.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tool_core::{
    CancellationToken, InterruptBehavior, ProgressSender, Tool, ToolError, ToolUseContext,
};
use tools_builtin::skill::skills_listing;
use tools_builtin::tasks::task_registry;
use tools_builtin::{Bash, Skill, TaskOutput, WebFetch};

// ----- TaskOutput -----

/// A blocking TaskOutput only waits: a user interrupt cancels it (interrupt behaviour
/// `cancel`, as Sleep's), and the cancelled wait ends at once, long before its timeout,
/// leaving the background command running. With `block`, a first Ctrl-C used to wait for
/// the read's timeout (up to 10 minutes).
#[tokio::test]
async fn a_blocking_task_output_is_cancelled_by_a_user_interrupt() {
    assert_eq!(TaskOutput.interrupt_behavior(), InterruptBehavior::Cancel);

    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path()).with_results_dir(dir.path().join("results"));
    let bash = Bash::default();
    let start = bash
        .parse_input(json!({"command": "sleep 60", "run_in_background": true}))
        .unwrap();
    let started = bash
        .call(start, ctx.clone(), ProgressSender::none())
        .await
        .unwrap();
    let id = started.data.structured["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    // The call's own token, as the executor gives each call one.
    let token = CancellationToken::new();
    let call_ctx = ctx.clone().with_cancellation(token.clone());
    let input = TaskOutput
        .parse_input(json!({"task_id": id, "block": true, "timeout": 600_000}))
        .unwrap();
    let wait = tokio::spawn(async move {
        TaskOutput
            .call(input, call_ctx, ProgressSender::none())
            .await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!wait.is_finished(), "the read did not wait for the task");
    let interrupted = Instant::now();
    token.cancel();
    let result = tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .expect("the cancelled wait went on")
        .unwrap();
    assert!(
        matches!(result, Err(ToolError::Cancelled(_))),
        "{:?}",
        result.map(|r| r.data.structured)
    );
    assert!(interrupted.elapsed() < Duration::from_secs(5));
    let registry = task_registry(&ctx);
    assert_eq!(
        registry.get(&id).unwrap().status,
        tools_builtin::tasks::TaskStatus::Running,
        "the interrupt stops the read, not the command"
    );
    registry.kill_all();
}

// ----- Skill listing -----

fn write_skill(project: &Path, name: &str, text: &str) {
    let dir = project.join(".claude/skills").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
}

/// A project with the Skill tool, no user skills (an empty home).
fn skill_ctx(root: &Path) -> ToolUseContext {
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    common::ctx(&project)
        .with_home(Some(root.join("home")))
        .with_tools(vec![Arc::new(Skill) as Arc<dyn Tool>])
}

/// The listing line of `name` (`- name...`), failing with the listing when there is none.
fn listed_line(listing: &str, name: &str) -> String {
    listing
        .lines()
        .find(|l| *l == format!("- {name}") || l.starts_with(&format!("- {name}: ")))
        .unwrap_or_else(|| panic!("{name} is not listed:\n{listing}"))
        .to_owned()
}

/// As Claude Code's `getCommandDescription`: a skill's line says `description - when_to_use`;
/// a skill without a description gets the first line of its body (heading marks taken off,
/// cut at 100 characters), so one with only `when_to_use` says what it is and when to use
/// it; one with neither and an empty body is listed by name. The listing used to drop
/// `when_to_use` and give a skill without a description its bare name.
#[test]
fn the_skill_listing_says_when_to_use_and_falls_back_to_the_body() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = skill_ctx(dir.path());
    let project = dir.path().join("project");
    write_skill(
        &project,
        "both",
        "---\ndescription: Deploy the app\nwhen_to_use: when the user says ship it\n---\nSteps.\n",
    );
    write_skill(
        &project,
        "when-only",
        "---\nwhen_to_use: |\n  after a release\n  is tagged\n---\n\n## Write the changelog\n\nMore.\n",
    );
    write_skill(
        &project,
        "body-only",
        "\n\n   Format the SQL files   \nrest\n",
    );
    let long = "x".repeat(150);
    write_skill(&project, "long-line", &format!("# {long}\n"));
    write_skill(&project, "empty", "---\nmodel: haiku\n---\n");
    write_skill(
        &project,
        "empty-when",
        "---\nwhen_to_use: on Fridays\n---\n   \n",
    );

    let listing = skills_listing(&ctx).expect("a listing");
    assert_eq!(
        listed_line(&listing, "both"),
        "- both: Deploy the app - when the user says ship it"
    );
    assert_eq!(
        listed_line(&listing, "when-only"),
        "- when-only: Write the changelog - after a release is tagged"
    );
    assert_eq!(
        listed_line(&listing, "body-only"),
        "- body-only: Format the SQL files"
    );
    assert_eq!(
        listed_line(&listing, "long-line"),
        format!("- long-line: {}...", "x".repeat(97))
    );
    assert_eq!(listed_line(&listing, "empty"), "- empty");
    assert_eq!(
        listed_line(&listing, "empty-when"),
        "- empty-when: on Fridays"
    );
}

/// The whole `description - when_to_use` text is what the listing's 250-character cut
/// applies to: a long `when_to_use` is cut, on one line, and ends with `…`.
#[test]
fn a_long_when_to_use_is_cut_with_the_description() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = skill_ctx(dir.path());
    let when = "word ".repeat(80);
    write_skill(
        &dir.path().join("project"),
        "wordy",
        &format!("---\ndescription: Short\nwhen_to_use: {when}\n---\nx\n"),
    );
    let listing = skills_listing(&ctx).expect("a listing");
    let line = listed_line(&listing, "wordy");
    let text = line.strip_prefix("- wordy: ").unwrap();
    assert!(text.starts_with("Short - word word"), "{line}");
    assert_eq!(text.chars().count(), 250, "{line}");
    assert!(text.ends_with('…'), "{line}");
}

// ----- WebFetch -----

/// Answers every request with `302 Found` and the `Location` header line `location` (as
/// sent, value and all), counting the requests. Its base URL and the count.
async fn redirecting_server(location: &'static str) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let count = Arc::clone(&count);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                count.fetch_add(1, Ordering::SeqCst);
                let head = format!(
                    "HTTP/1.1 302 Found\r\n{location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (format!("http://127.0.0.1:{port}"), seen)
}

/// A 302 whose `Location` is empty (`Location: ` with nothing, or only white space) is
/// reported as a missing one, after its one request: it used to resolve to the same URL and
/// loop to "Too many redirects (more than 10)" after 11 requests. (Claude Code throws
/// "Redirect missing Location header" for a missing or empty Location.)
#[tokio::test]
async fn an_empty_location_is_reported_as_missing() {
    for location in ["Location: ", "Location:", "Location: \t  "] {
        let (base, seen) = redirecting_server(location).await;
        let url = format!("{base}/start");
        let failure = common::fail(
            &WebFetch,
            &common::ctx(Path::new("/")),
            json!({"url": url, "prompt": "read"}),
        )
        .await;
        let text = failure.text;
        assert!(
            text.contains(&format!(
                "{url} answered 302 Found without a Location header"
            )),
            "{location:?}: {text}"
        );
        assert_eq!(seen.load(Ordering::SeqCst), 1, "{location:?}: {text}");
    }
}

/// A `Location` that is present still redirects (the check above takes only an empty one):
/// a same-site redirect to a path that answers is followed.
#[tokio::test]
async fn a_location_with_a_value_is_still_followed() {
    let (base, seen) = redirecting_server("Location: /next").await;
    let failure = common::fail(
        &WebFetch,
        &common::ctx(Path::new("/")),
        json!({"url": format!("{base}/start"), "prompt": "read"}),
    )
    .await;
    // Every answer redirects: followed to the limit.
    assert!(
        failure.text.contains("Too many redirects"),
        "{}",
        failure.text
    );
    assert!(seen.load(Ordering::SeqCst) > 1);
}
