//! Session tools, review 28: a Skill call's arguments with a `#` in them, Claude Code's
//! command files (`.claude/commands/*.md`) loaded as skills, and TaskOutput taking its old
//! BashOutput input (`bash_id`, `filter`).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::{ContentBlock, Message, ProgressSender, Tool, ToolUseContext};
use tools_builtin::skill::discover_skills;
use tools_builtin::tasks::task_registry;
use tools_builtin::{Bash, Skill, TaskOutput, TaskStop};

/// A home and a project (a git repository); the session starts in the project.
struct Setup {
    _tmp: tempfile::TempDir,
    ctx: ToolUseContext,
    project: PathBuf,
    home: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let project = root.join("work/project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let ctx = common::ctx(&project)
        .with_home(Some(home.clone()))
        .with_results_dir(root.join("results"));
    Setup {
        _tmp: tmp,
        ctx,
        project,
        home,
    }
}

/// Writes `<root>/.claude/skills/<name>/SKILL.md`.
fn write_skill(root: &Path, name: &str, text: &str) {
    let dir = root.join(".claude/skills").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
}

/// Writes `<root>/.claude/commands/<relative>` (a command file).
fn write_command(root: &Path, relative: &str, text: &str) -> PathBuf {
    let file = root.join(".claude/commands").join(relative);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    file
}

/// Runs Skill as the pipeline does (schema, validation, call): the tool_result's text and
/// the text of the message it adds, or the refusal.
async fn skill(ctx: &ToolUseContext, input: Value) -> Result<(String, String), String> {
    let input = Skill.parse_input(input).map_err(|e| e.to_model_text())?;
    Skill
        .validate_input(&input, ctx)
        .await
        .map_err(|e| e.message)?;
    let result = Skill
        .call(input, ctx.clone(), ProgressSender::none())
        .await
        .map_err(|e| e.to_model_text())?;
    let added = match result.new_messages.as_slice() {
        [Message::User(blocks)] => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.clone()),
                _ => None,
            })
            .collect::<String>(),
        other => panic!("{other:?}"),
    };
    Ok((result.data.content.joined_text(), added))
}

/// The body a skill renders to with `args`, without the base-directory line.
async fn rendered(ctx: &ToolUseContext, name: &str, args: &str) -> String {
    let (_, added) = skill(ctx, json!({"skill": name, "args": args}))
        .await
        .unwrap();
    match added.split_once("\n\n") {
        Some((first, body)) if first.starts_with("Base directory for this skill: ") => {
            body.to_owned()
        }
        _ => added,
    }
}

/// A `#` in a Skill call's arguments is an argument's text, not a shell comment: `fix #12
/// main` gives the named arguments `fix` and `#12` (the review saw `Fix fix on ;`), and a
/// first word `#prod` fills `$0` (the review saw `$0` and `$1` left as written). Quotes and
/// backslashes still group words as a shell's do, and a quote never closed still splits on
/// whitespace.
#[tokio::test]
async fn a_hash_in_the_arguments_is_an_argument_not_a_comment() {
    let s = setup();
    write_skill(
        &s.project,
        "fix",
        "---\ndescription: fix\narguments: [issue, branch]\n---\nFix $issue on $branch; all=$ARGUMENTS\n",
    );
    write_skill(
        &s.project,
        "pos",
        "---\ndescription: pos\n---\nFirst: $0, second: $1\n",
    );
    write_skill(
        &s.project,
        "three",
        "---\ndescription: three\n---\n[$0] [$1] [$2] [$ARGUMENTS[3]]\n",
    );
    assert_eq!(
        rendered(&s.ctx, "fix", "fix #12 main").await,
        "Fix fix on #12; all=fix #12 main"
    );
    assert_eq!(
        rendered(&s.ctx, "pos", "#prod staging").await,
        "First: #prod, second: staging"
    );
    assert_eq!(
        rendered(&s.ctx, "pos", "a#b # c").await,
        "First: a#b, second: #"
    );
    // Quotes and backslashes as in a shell.
    assert_eq!(
        rendered(&s.ctx, "three", r#"'a #b' "c \"d\" \$x" e\ f #g"#).await,
        r#"[a #b] [c "d" $x] [e f] [#g]"#
    );
    assert_eq!(rendered(&s.ctx, "three", "'' x").await, "[] [x] [] []");
    // A quote never closed: words split on whitespace, as written.
    assert_eq!(
        rendered(&s.ctx, "three", "\"a b #c").await,
        "[\"a] [b] [#c] []"
    );
}

/// Claude Code's command files are skills: `.claude/commands/review.md` is the skill
/// `review` (its frontmatter read as a skill's, its body the prompt, with `$ARGUMENTS` and
/// the other placeholders), a file in a subdirectory is `dir:name`, the user's
/// `~/.claude/commands` are found as the user's skills are, and all are listed. On a name
/// clash a skill wins over a command of the same place, and the user's command over the
/// project's skill (the user's wins, as for skills). A name cannot climb out of the
/// commands directory.
#[tokio::test]
async fn command_files_are_skills() {
    let s = setup();
    write_command(
        &s.project,
        "review.md",
        "---\ndescription: Review a change\nallowed-tools: Read Grep\n---\nReview $ARGUMENTS carefully; first $0.\n",
    );
    write_command(
        &s.project,
        "frontend/component.md",
        "Make the component $0 in ${CLAUDE_SKILL_DIR}.\n",
    );
    write_command(&s.project, "plain.md", "Just do it.\n");
    write_command(
        &s.project,
        "manual.md",
        "---\ndescription: only by hand\ndisable-model-invocation: true\n---\nno\n",
    );
    write_command(
        &s.home,
        "mine.md",
        "---\ndescription: my own\n---\nMine: $ARGUMENTS\n",
    );
    // A skill and a command of one name in the project: the skill wins.
    write_skill(
        &s.project,
        "both",
        "---\ndescription: the skill\n---\nskill body\n",
    );
    write_command(&s.project, "both.md", "command body\n");
    // The user's command wins over the project's skill.
    write_skill(&s.project, "ucmd", "project skill body\n");
    write_command(&s.home, "ucmd.md", "user command body\n");
    // Outside the commands directory.
    std::fs::write(s.project.join(".claude/secret.md"), "SECRET\n").unwrap();

    let (text, added) = skill(&s.ctx, json!({"skill": "review", "args": "PR 12"}))
        .await
        .unwrap();
    assert_eq!(text, "Launching skill: review");
    assert_eq!(added, "Review PR 12 carefully; first PR.");
    let (_, added) = skill(
        &s.ctx,
        json!({"skill": "/frontend:component", "args": "Button"}),
    )
    .await
    .unwrap();
    assert_eq!(
        added,
        format!(
            "Make the component Button in {}.",
            s.project.join(".claude/commands/frontend").display()
        )
    );
    let (_, added) = skill(&s.ctx, json!({"skill": "plain", "args": "now"}))
        .await
        .unwrap();
    assert_eq!(added, "Just do it.\n\nARGUMENTS: now");
    let (_, added) = skill(&s.ctx, json!({"skill": "mine", "args": "x"}))
        .await
        .unwrap();
    assert_eq!(added, "Mine: x");
    let (_, added) = skill(&s.ctx, json!({"skill": "both"})).await.unwrap();
    assert!(added.ends_with("skill body"), "{added}");
    let (_, added) = skill(&s.ctx, json!({"skill": "ucmd"})).await.unwrap();
    assert_eq!(added, "user command body");

    let err = skill(&s.ctx, json!({"skill": "manual"})).await.unwrap_err();
    assert!(err.contains("disable-model-invocation"), "{err}");
    for name in [
        "..:secret",
        "frontend:..:review",
        "frontend:",
        ":review",
        "frontend/component",
    ] {
        let err = skill(&s.ctx, json!({"skill": name})).await.unwrap_err();
        assert_eq!(err, format!("Unknown skill: {name}"));
    }

    let listed: Vec<(String, Option<String>)> = discover_skills(&s.ctx)
        .into_iter()
        .map(|k| (k.name, k.description))
        .collect();
    for (name, description) in [
        ("review", Some("Review a change")),
        ("frontend:component", None),
        ("mine", Some("my own")),
        ("both", Some("the skill")),
    ] {
        assert!(
            listed.contains(&(name.to_owned(), description.map(str::to_owned))),
            "{name}: {listed:?}"
        );
    }
    assert_eq!(listed.iter().filter(|(n, _)| n == "both").count(), 1);
}

/// A project's command file is read without a Read permission, as a project's SKILL.md is:
/// one that links out of the project is refused (and not listed), one a Read deny rule
/// covers is refused, and the user's own command may link anywhere.
#[tokio::test]
async fn a_project_command_linked_out_of_the_project_is_refused() {
    let s = setup();
    std::fs::create_dir_all(s.home.join(".aws")).unwrap();
    let creds = s.home.join(".aws/credentials");
    std::fs::write(&creds, "aws_secret_access_key=abc123\n").unwrap();
    let commands = s.project.join(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::os::unix::fs::symlink(&creds, commands.join("leak.md")).unwrap();
    std::fs::write(s.project.join("notes.md"), "project notes\n").unwrap();
    std::os::unix::fs::symlink("../../notes.md", commands.join("notes.md")).unwrap();
    let user_commands = s.home.join(".claude/commands");
    std::fs::create_dir_all(&user_commands).unwrap();
    std::os::unix::fs::symlink(s.project.join("notes.md"), user_commands.join("mynotes.md"))
        .unwrap();

    let err = skill(&s.ctx, json!({"skill": "leak"})).await.unwrap_err();
    assert!(
        err.starts_with("Skill leak cannot be loaded")
            && err.contains(&commands.join("leak.md").display().to_string())
            && err.contains(&creds.display().to_string()),
        "{err}"
    );
    assert!(!err.contains("abc123"), "{err}");
    let (_, added) = skill(&s.ctx, json!({"skill": "notes"})).await.unwrap();
    assert_eq!(added, "project notes");
    let (_, added) = skill(&s.ctx, json!({"skill": "mynotes"})).await.unwrap();
    assert_eq!(added, "project notes");
    let names: Vec<String> = discover_skills(&s.ctx)
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert!(!names.contains(&"leak".to_owned()), "{names:?}");
    assert!(names.contains(&"notes".to_owned()), "{names:?}");

    let mut permission = s.ctx.permission().clone();
    permission.deny.push(tool_core::SourcedRule {
        source: tool_core::RuleSource::UserSettings,
        rule: "Read(./notes.md)".into(),
    });
    let ctx = s.ctx.clone().with_permission(permission);
    let err = skill(&ctx, json!({"skill": "notes"})).await.unwrap_err();
    assert!(
        err.contains("covered by the deny rule Read(./notes.md)"),
        "{err}"
    );
}

/// A commands directory's links to directories are not followed: with five links to `.` in
/// it, two links that point at each other and a link to one of its subdirectories, each
/// command is listed and loaded under its one name, once, not again under every path the
/// links make (`l0:review`, `l0:l1:sub:deep`, ...: the review saw 6.4 s per Skill call, and
/// a cloned repository controls the directory). A command file that is itself a link is
/// still read, as before.
#[tokio::test]
async fn links_to_directories_in_commands_are_not_followed() {
    use std::os::unix::fs::symlink;
    let s = setup();
    write_command(&s.project, "review.md", "Review $ARGUMENTS.\n");
    write_command(&s.project, "sub/deep.md", "Deep $0.\n");
    let commands = s.project.join(".claude/commands");
    for i in 0..5 {
        symlink(".", commands.join(format!("l{i}"))).unwrap();
    }
    symlink("loop-b", commands.join("loop-a")).unwrap();
    symlink("loop-a", commands.join("loop-b")).unwrap();
    symlink("sub", commands.join("alias")).unwrap();
    // A link to a directory with a command file's name is not read as one either.
    symlink("sub", commands.join("dir.md")).unwrap();
    // A command file that is a link (inside the project) is still a command.
    symlink("../review.md", commands.join("sub/again.md")).unwrap();

    let ctx = s.ctx.clone();
    let listed = tokio::time::timeout(
        HANG_GUARD,
        tokio::task::spawn_blocking(move || discover_skills(&ctx)),
    )
    .await
    .expect("listing the skills hung")
    .unwrap();
    let mut names: Vec<String> = listed
        .into_iter()
        .filter(|k| k.source == tools_builtin::skill::SkillSource::Project)
        .map(|k| k.name)
        .collect();
    names.sort();
    assert_eq!(names, ["review", "sub:again", "sub:deep"]);

    let (_, added) = tokio::time::timeout(
        HANG_GUARD,
        skill(&s.ctx, json!({"skill": "review", "args": "PR 7"})),
    )
    .await
    .expect("the Skill call hung")
    .unwrap();
    assert_eq!(added, "Review PR 7.");
    let (_, added) = skill(&s.ctx, json!({"skill": "sub:deep", "args": "x"}))
        .await
        .unwrap();
    assert_eq!(added, "Deep x.");
    let (_, added) = skill(&s.ctx, json!({"skill": "sub:again", "args": "y"}))
        .await
        .unwrap();
    assert_eq!(added, "Review y.");
    for name in [
        "l0:review",
        "l1:l2:sub:deep",
        "alias:deep",
        "loop-a:review",
        "dir",
    ] {
        let err = skill(&s.ctx, json!({"skill": name})).await.unwrap_err();
        assert_eq!(err, format!("Unknown skill: {name}"));
    }
}

/// How long a step may take before the test calls it a hang: a guard, not a timing
/// assertion.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// Runs `tool` as the pipeline does: the structured output, or the refusal's text.
async fn call(tool: &dyn Tool, ctx: &ToolUseContext, input: Value) -> Result<Value, String> {
    common::run(tool, ctx, input)
        .await
        .map(|out| out.structured)
        .map_err(|f| f.text)
}

/// BashOutput's own input is taken, as TaskStop takes KillShell's `shell_id`: `bash_id`
/// names the task and, as BashOutput did, the read does not wait; `filter` keeps only the
/// lines matching its regular expression. The schema step puts them in TaskOutput's words
/// (`task_id`, `block: false`), so hooks and rules see one shape. Both ids at once, and a
/// filter that is no regular expression, are refused saying so.
#[tokio::test]
async fn bash_output_input_reads_the_task() {
    let s = setup();
    let go = s.project.join("go");
    let out = call(
        &Bash::default(),
        &s.ctx,
        json!({
            "command": format!(
                "printf 'ok 1\\nskip\\nok 2\\n'; while [ ! -e '{}' ]; do sleep 0.02; done; echo ok 3",
                go.display()
            ),
            "run_in_background": true,
        }),
    )
    .await
    .unwrap();
    let id = out["backgroundTaskId"].as_str().unwrap().to_owned();
    let file = task_registry(&s.ctx).get(&id).unwrap().output_file;
    let deadline = Instant::now() + HANG_GUARD;
    while std::fs::read_to_string(&file).unwrap_or_default() != "ok 1\nskip\nok 2\n" {
        assert!(Instant::now() < deadline, "no output");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let parsed = TaskOutput
        .parse_input(json!({"bash_id": id, "filter": "^ok"}))
        .unwrap();
    assert_eq!(parsed["task_id"], id.as_str(), "{parsed}");
    assert_eq!(parsed["block"], false, "{parsed}");
    assert!(parsed.get("bash_id").is_none(), "{parsed}");

    // Not waiting: the task still runs (it waits for `go`).
    let started = Instant::now();
    let out = call(&TaskOutput, &s.ctx, json!({"bash_id": id, "filter": "^ok"}))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(20), "it waited");
    assert_eq!(out["retrieval_status"], "not_ready", "{out}");
    assert_eq!(out["task"]["output"], "ok 1\nok 2\n", "{out}");

    std::fs::write(&go, "").unwrap();
    let out = call(
        &TaskOutput,
        &s.ctx,
        json!({"bash_id": id, "block": true, "timeout": 60000}),
    )
    .await
    .unwrap();
    assert_eq!(out["task"]["status"], "completed", "{out}");
    assert_eq!(out["task"]["output"], "ok 3\n", "{out}");

    let err = call(&TaskOutput, &s.ctx, json!({"task_id": id, "bash_id": id}))
        .await
        .unwrap_err();
    assert!(err.contains("task_id") && err.contains("bash_id"), "{err}");
    let err = call(&TaskOutput, &s.ctx, json!({"bash_id": id, "filter": "(ok"}))
        .await
        .unwrap_err();
    assert!(
        err.contains("filter") && err.contains("not a valid regular expression"),
        "{err}"
    );
    let err = call(&TaskOutput, &s.ctx, json!({"bash_id": "bnope"}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        "<tool_use_error>No task found with ID: bnope</tool_use_error>"
    );
    // TaskStop still refuses an id that no longer runs: nothing was left running.
    assert!(
        call(&TaskStop, &s.ctx, json!({"task_id": id}))
            .await
            .unwrap_err()
            .contains("is not running")
    );
}

/// Starts `command` as a background Bash task: its id and output file.
async fn background(ctx: &ToolUseContext, command: &str) -> (String, PathBuf) {
    let out = call(
        &Bash::default(),
        ctx,
        json!({"command": command, "run_in_background": true}),
    )
    .await
    .unwrap();
    let id = out["backgroundTaskId"].as_str().unwrap().to_owned();
    let file = task_registry(ctx).get(&id).unwrap().output_file;
    (id, file)
}

/// Waits until `file` holds exactly `text`.
async fn wait_for_output(file: &Path, text: &str) {
    let deadline = Instant::now() + HANG_GUARD;
    while std::fs::read_to_string(file).unwrap_or_default() != text {
        assert!(
            Instant::now() < deadline,
            "the output never became {text:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// With a `filter`, a line the task has only half written is left unread until it ends: a
/// line written in two parts (`MAT`, later `CH-split`) is shown whole once its second part
/// came (the review saw it never shown, each read consuming the half it saw), and a last
/// line that never ends is shown once the task has ended.
#[tokio::test]
async fn a_filtered_read_leaves_an_unfinished_line_for_later() {
    let s = setup();
    let (go, go2) = (s.project.join("go"), s.project.join("go2"));
    let (id, file) = background(
        &s.ctx,
        &format!(
            "printf 'MAT'; while [ ! -e '{}' ]; do sleep 0.02; done; printf 'CH-split\\nnoise\\nMAT'; \
             while [ ! -e '{}' ]; do sleep 0.02; done; printf 'CH-end'",
            go.display(),
            go2.display()
        ),
    )
    .await;
    let read = |block: bool| {
        let ctx = s.ctx.clone();
        let id = id.clone();
        async move {
            call(
                &TaskOutput,
                &ctx,
                json!({"bash_id": id, "filter": "MATCH", "block": block, "timeout": 60000}),
            )
            .await
            .unwrap()
        }
    };

    wait_for_output(&file, "MAT").await;
    let out = read(false).await;
    assert_eq!(out["task"]["status"], "running", "{out}");
    assert_eq!(out["task"]["output"], "", "{out}");

    std::fs::write(&go, "").unwrap();
    wait_for_output(&file, "MATCH-split\nnoise\nMAT").await;
    let out = read(false).await;
    assert_eq!(out["task"]["output"], "MATCH-split\n", "{out}");

    // The last line never ends: shown once the task has.
    std::fs::write(&go2, "").unwrap();
    let out = read(true).await;
    assert_eq!(out["task"]["status"], "completed", "{out}");
    assert_eq!(out["task"]["output"], "MATCH-end", "{out}");
    // All of it was read.
    let out = call(&TaskOutput, &s.ctx, json!({"bash_id": id}))
        .await
        .unwrap();
    assert_eq!(out["task"]["output"], "", "{out}");
}

/// A `filter` looks at all the new output, not only its last 30,000 bytes: a match before
/// 3000 lines of noise is shown (the review saw only the last match, after `[earlier output
/// skipped…]`). What matches is cut to the limit afterwards, its end kept, in whole lines,
/// and the read says so.
#[tokio::test]
async fn a_filter_reads_all_the_new_output_then_cuts_what_matches() {
    let s = setup();
    let (id, _) = background(
        &s.ctx,
        "echo MATCH-first; for i in $(seq 3000); do echo \"noise line $i\"; done; echo MATCH-last",
    )
    .await;
    let out = call(
        &TaskOutput,
        &s.ctx,
        json!({"bash_id": id, "filter": "MATCH", "block": true, "timeout": 60000}),
    )
    .await
    .unwrap();
    assert_eq!(out["task"]["status"], "completed", "{out}");
    assert_eq!(out["task"]["output"], "MATCH-first\nMATCH-last\n", "{out}");

    // 6000 matching lines, about 60 KB of them: the last ones are kept, whole.
    let (id, file) = background(
        &s.ctx,
        "for i in $(seq 6000); do echo \"MATCH $i\"; echo noise; done",
    )
    .await;
    let out = call(
        &TaskOutput,
        &s.ctx,
        json!({"bash_id": id, "filter": "^MATCH", "block": true, "timeout": 60000}),
    )
    .await
    .unwrap();
    assert_eq!(out["task"]["status"], "completed", "{out}");
    let output = out["task"]["output"].as_str().unwrap();
    let (note, kept) = output.split_once('\n').unwrap();
    assert_eq!(
        note,
        format!(
            "[earlier matching lines skipped; the full output is in {}]",
            file.display()
        )
    );
    assert!(
        kept.len() <= 30_000 && kept.len() > 29_000,
        "{}",
        kept.len()
    );
    let numbers: Vec<u32> = kept
        .lines()
        .map(|l| l.strip_prefix("MATCH ").unwrap().parse().unwrap())
        .collect();
    assert_eq!(*numbers.last().unwrap(), 6000);
    assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1), "{kept}");
}

/// A line a running task never ends is not held back for ever by a `filter`: past
/// [`LINE_PIECE_BYTES`](tools_builtin::tasks::LINE_PIECE_BYTES) it is read in pieces, each
/// matched as a line, and only the last, shorter piece waits for the line's end.
#[tokio::test]
async fn a_filtered_read_takes_a_line_that_never_ends_in_pieces() {
    use tools_builtin::tasks::LINE_PIECE_BYTES;
    let s = setup();
    let (id, file) = background(&s.ctx, "sleep 100").await;
    // Three pieces and a bit, without a line break, as a progress bar writes.
    let long = format!("{}tail", "MATCH-".repeat(LINE_PIECE_BYTES / 2));
    std::fs::write(&file, &long).unwrap();
    let out = call(
        &TaskOutput,
        &s.ctx,
        json!({"bash_id": id, "filter": "MATCH"}),
    )
    .await
    .unwrap();
    let output = out["task"]["output"].as_str().unwrap();
    let (note, kept) = output.split_once('\n').unwrap();
    assert!(
        note.starts_with("[earlier matching lines skipped"),
        "{note}"
    );
    assert_eq!(kept.len(), 30_000);
    let held = long.len() % LINE_PIECE_BYTES;
    assert_eq!(held, 4);
    assert!(long[..long.len() - held].ends_with(kept));
    // The rest waits for the line's end.
    let out = call(&TaskOutput, &s.ctx, json!({"bash_id": id}))
        .await
        .unwrap();
    assert_eq!(out["task"]["output"], &long[long.len() - held..]);
    task_registry(&s.ctx).kill_all();
}

/// A project command reached through a linked directory (`.claude/commands` itself a link
/// out of the project) is refused with advice that keeps it inside: replace the link, not
/// "copy the file into" the linked directory, which would write through the link.
#[tokio::test]
async fn a_command_behind_a_linked_directory_is_refused_with_advice_that_stays_inside() {
    let s = setup();
    let outside = s.home.join("shared-commands");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("ext.md"), "outside prompt\n").unwrap();
    std::fs::create_dir_all(s.project.join(".claude")).unwrap();
    let commands = s.project.join(".claude/commands");
    std::os::unix::fs::symlink(&outside, &commands).unwrap();
    let err = skill(&s.ctx, json!({"skill": "ext"})).await.unwrap_err();
    assert!(
        err.contains(&format!("Replace the link {}", commands.display()))
            && !err.contains("Copy the file into"),
        "{err}"
    );
    assert!(!err.contains("outside prompt"), "{err}");
}
