//! Session 34 on the results directories: a session read the saved results (tool results,
//! background tasks' output) of any earlier session of the same user without asking,
//! whatever that session's project. Claude Code's exemption covers only the tool results
//! under the current project's directory. An earlier session's results are read without
//! asking now only when its directory records (in its `project` file) the project of the
//! session that reads; without a record, or with another project's, the read is asked about
//! as any path outside the working directories. The session's own results directory is
//! read as before. Real directories and files in a temporary directory.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::common::{Fixture, behavior, case, context, probe};

/// The name of the file in a session's directory that records its project.
const PROJECT_FILE: &str = "project";

/// A session directory `name` in `base`, private (0700) as a session's is, with a saved
/// result `tool-results/big.txt` and a background task's output `tool-results/tasks/t.output`;
/// its project record holds `project` when given. Returns the results directory.
fn session_dir(base: &Path, name: &str, project: Option<&[u8]>) -> PathBuf {
    let dir = base.join(name);
    std::fs::create_dir_all(dir.join("tool-results/tasks")).unwrap();
    std::fs::write(dir.join("tool-results/big.txt"), "SECRET=hunter2\n").unwrap();
    std::fs::write(dir.join("tool-results/tasks/t.output"), "SECRET=hunter2\n").unwrap();
    if let Some(project) = project {
        std::fs::write(dir.join(PROJECT_FILE), project).unwrap();
        std::fs::set_permissions(
            dir.join(PROJECT_FILE),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    dir.join("tool-results")
}

/// The decision on `tool` with `input` (`$O`, `$P` substituted) in default mode, for a
/// session of `fx.proj` (or of `project_dir` when given) whose results directory is
/// `current`.
async fn decide(
    fx: &Fixture,
    current: &Path,
    project_dir: Option<&Path>,
    tool: &'static str,
    input: &str,
) -> (&'static str, String) {
    let c = case("", tool, input);
    let (engine, ctx) = context(fx, &c);
    let mut ctx = ctx.with_results_dir(current);
    if let Some(dir) = project_dir {
        ctx = tool_core::ToolUseContext::new(dir)
            .with_home(Some(fx.home.clone()))
            .with_permission(ctx.permission().clone())
            .with_results_dir(current);
    }
    let got = engine
        .decide(&probe(fx, tool), &fx.input(tool, &c.input), &ctx)
        .await;
    (behavior(&got), format!("{c:?} -> {got:?}"))
}

/// The review's repro: a session of project A saved a result holding secrets; a session of
/// project B read it (Read, Grep, `cat`) without asking. Asked now, as any outside path,
/// while a session of the same project still reads it, and the session's own results too.
#[tokio::test]
async fn another_projects_saved_results_are_asked_about() {
    let fx = Fixture::new();
    let base = fx.out.join("tmp");
    let project_a = fx.proj.parent().unwrap().join("projA");
    std::fs::create_dir(&project_a).unwrap();
    let current = session_dir(
        &base,
        "toolwright-cur-aaaa",
        Some(fx.proj.as_os_str().as_encoded_bytes()),
    );
    let other = session_dir(
        &base,
        "toolwright-a1-bbbb",
        Some(project_a.as_os_str().as_encoded_bytes()),
    );
    let same = session_dir(
        &base,
        "toolwright-b1-cccc",
        Some(fx.proj.as_os_str().as_encoded_bytes()),
    );
    let mut failures = Vec::new();
    let mut expect = |want: &str, got: (&str, String)| {
        if got.0 != want {
            failures.push(format!("expected {want}, got {}", got.1));
        }
    };
    for (want, dir) in [("ask", &other), ("allow", &same), ("allow", &current)] {
        let file = dir.join("big.txt").display().to_string();
        let task = dir.join("tasks/t.output").display().to_string();
        expect(want, decide(&fx, &current, None, "Read", &file).await);
        expect(want, decide(&fx, &current, None, "Read", &task).await);
        expect(
            want,
            decide(&fx, &current, None, "Grep", &dir.display().to_string()).await,
        );
        expect(
            want,
            decide(&fx, &current, None, "Bash", &format!("cat {file}")).await,
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Only a record that names this session's project, itself a regular file of this user,
/// lets an earlier session's results be read: none (a session from before the record),
/// an empty one, another project's (a parent or a child of this one's too), a link to a
/// record naming this project, and a directory are not. The project is compared as the
/// session was opened with it, its links followed.
#[tokio::test]
async fn only_a_record_of_this_project_counts() {
    let fx = Fixture::new();
    let base = fx.out.join("tmp");
    let proj = fx.proj.as_os_str().as_encoded_bytes().to_vec();
    let current = session_dir(&base, "toolwright-cur-aaaa", Some(&proj));
    let none = session_dir(&base, "toolwright-n1-0001", None);
    let empty = session_dir(&base, "toolwright-e1-0002", Some(b""));
    let parent = session_dir(
        &base,
        "toolwright-p1-0003",
        Some(fx.proj.parent().unwrap().as_os_str().as_encoded_bytes()),
    );
    let child = session_dir(
        &base,
        "toolwright-c1-0004",
        Some(fx.proj.join("src").as_os_str().as_encoded_bytes()),
    );
    let mut with_newline = proj.clone();
    with_newline.push(b'\n');
    let trailing = session_dir(&base, "toolwright-t1-0005", Some(&with_newline));
    // A link to a record that names this project.
    let linked = session_dir(&base, "toolwright-l1-0006", None);
    let elsewhere = fx.out.join("record");
    std::fs::write(&elsewhere, &proj).unwrap();
    std::os::unix::fs::symlink(&elsewhere, linked.parent().unwrap().join(PROJECT_FILE)).unwrap();
    // A directory where the record should be.
    let directory = session_dir(&base, "toolwright-d1-0007", None);
    std::fs::create_dir(directory.parent().unwrap().join(PROJECT_FILE)).unwrap();
    let same = session_dir(&base, "toolwright-s1-0008", Some(&proj));

    let mut failures = Vec::new();
    for (want, dir, label) in [
        ("ask", &none, "no record"),
        ("ask", &empty, "an empty record"),
        ("ask", &parent, "the parent directory's"),
        ("ask", &child, "a subdirectory's"),
        ("ask", &trailing, "the project with a newline after it"),
        ("ask", &linked, "a link to a record"),
        ("ask", &directory, "a directory"),
        ("allow", &same, "this project's"),
    ] {
        let file = dir.join("big.txt").display().to_string();
        let (got, shown) = decide(&fx, &current, None, "Read", &file).await;
        if got != want {
            failures.push(format!("{label}: expected {want}, got {shown}"));
        }
    }
    // The session opened through a link to the project: the same project.
    let link = fx.out.join("proj-link");
    std::os::unix::fs::symlink(&fx.proj, &link).unwrap();
    let file = same.join("big.txt").display().to_string();
    let (got, shown) = decide(&fx, &current, Some(&link), "Read", &file).await;
    if got != "allow" {
        failures.push(format!("through a link: expected allow, got {shown}"));
    }
    // Another project's session reads none of them.
    let other = fx.proj.parent().unwrap().join("projB");
    std::fs::create_dir(&other).unwrap();
    let (got, shown) = decide(&fx, &current, Some(&other), "Read", &file).await;
    if got != "ask" {
        failures.push(format!("from another project: expected ask, got {shown}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
