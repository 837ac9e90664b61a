//! Skill: discovery in project and user directories and their precedence, frontmatter,
//! argument substitution, refusals, and the permission subject.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use serde_json::json;
use tool_core::{ContentBlock, Message, PermissionSubject, ProgressSender, Tool, ToolUseContext};
use tools_builtin::Skill;
use tools_builtin::skill::{SkillSource, discover_skills, load_skill};

fn write_skill(root: &Path, name: &str, text: &str) {
    let dir = root.join(".claude/skills").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
}

struct Setup {
    _tmp: tempfile::TempDir,
    ctx: ToolUseContext,
    project: std::path::PathBuf,
    home: std::path::PathBuf,
}

/// A home and a project (a git repository, `work/project`) with skills in both; the session
/// started in the project and its shell moved into `src`. `work/.claude/skills` (above the
/// repository) has one too.
fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("work/project");
    let sub = project.join("src");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    write_skill(
        &project,
        "ship",
        "---\nname: ship\ndescription: \"Make a commit\"\nallowed-tools: Bash(git add:*), Bash(git commit:*)\nmodel: haiku\n---\n\nCommit with message: $ARGUMENTS\nScripts in ${CLAUDE_SKILL_DIR}/bin\n",
    );
    write_skill(
        &project,
        "commit",
        "---\ndescription: the cloned repository's version\n---\nproject commit\n",
    );
    write_skill(
        &home,
        "commit",
        "---\ndescription: user version\n---\nthe user's own commit\n",
    );
    write_skill(
        &home,
        "pdf",
        "---\ndescription: PDF tools\nallowed-tools:\n  - Read\n  - Bash(pdftotext:*)\n---\nRead PDFs.\n",
    );
    write_skill(
        &home,
        "secret",
        "---\ndescription: manual only\ndisable-model-invocation: true\n---\nno\n",
    );
    write_skill(
        project.parent().unwrap(),
        "plain",
        "Just text, no frontmatter.\n",
    );
    let ctx = common::ctx(&project)
        .with_cwd(&sub)
        .with_home(Some(home.clone()));
    Setup {
        _tmp: tmp,
        ctx,
        project,
        home,
    }
}

async fn run(
    ctx: &ToolUseContext,
    input: serde_json::Value,
) -> Result<(String, Vec<Message>, serde_json::Value), String> {
    let input = Skill.parse_input(input).map_err(|e| e.to_model_text())?;
    Skill
        .validate_input(&input, ctx)
        .await
        .map_err(|e| e.message)?;
    let r = Skill
        .call(input, ctx.clone(), ProgressSender::none())
        .await
        .map_err(|e| e.to_model_text())?;
    Ok((
        r.data.content.joined_text(),
        r.new_messages,
        r.data.structured,
    ))
}

fn message_text(messages: &[Message]) -> String {
    match messages {
        [Message::User(blocks)] => match blocks.as_slice() {
            [ContentBlock::Text { text }] => text.clone(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn project_skills_load_and_arguments_are_substituted() {
    let s = setup();
    let (text, messages, structured) =
        run(&s.ctx, json!({"skill": "/ship", "args": "fix the bug"}))
            .await
            .unwrap();
    assert_eq!(text, "Launching skill: ship");
    let dir = s.project.join(".claude/skills/ship");
    // Its `model` is not applied, which the user is told (a system message: not the
    // model's).
    assert_eq!(
        messages.get(1),
        Some(&Message::System(
            "skill ship asks for the model `haiku`, which is not applied: the conversation goes on with the session's model".to_owned()
        ))
    );
    assert_eq!(
        message_text(&messages[..1]),
        format!(
            "Base directory for this skill: {d}\n\nCommit with message: fix the bug\nScripts in {d}/bin",
            d = dir.display()
        )
    );
    assert_eq!(
        structured,
        json!({"success": true, "commandName": "ship",
               "allowedTools": ["Bash(git add:*)", "Bash(git commit:*)"], "model": "haiku"})
    );

    // A user skill, list-form allowed-tools, arguments appended without a placeholder.
    let (_, messages, structured) = run(&s.ctx, json!({"skill": "pdf", "args": "a.pdf"}))
        .await
        .unwrap();
    assert!(message_text(&messages).ends_with("Read PDFs.\n\nARGUMENTS: a.pdf"));
    assert_eq!(
        structured["allowedTools"],
        json!(["Read", "Bash(pdftotext:*)"])
    );

    let ship = discover_skills(&s.ctx)
        .into_iter()
        .find(|k| k.name == "ship")
        .unwrap();
    assert_eq!(ship.description.as_deref(), Some("Make a commit"));
    assert_eq!(ship.source, SkillSource::Project);
}

/// Claude Code's order is managed > personal > project: a repository's `commit` skill does
/// not replace the user's own.
#[tokio::test]
async fn a_personal_skill_shadows_a_project_skill_of_the_same_name() {
    let s = setup();
    let (_, messages, _) = run(&s.ctx, json!({"skill": "commit"})).await.unwrap();
    assert_eq!(
        message_text(&messages),
        format!(
            "Base directory for this skill: {}\n\nthe user's own commit",
            s.home.join(".claude/skills/commit").display()
        )
    );
    let found: Vec<(String, SkillSource)> = discover_skills(&s.ctx)
        .into_iter()
        .map(|k| (k.name, k.source))
        .collect();
    assert_eq!(
        found,
        [
            ("commit".to_owned(), SkillSource::User),
            ("pdf".to_owned(), SkillSource::User),
            ("secret".to_owned(), SkillSource::User),
            ("ship".to_owned(), SkillSource::Project),
        ]
    );
}

/// Inside a git repository, skills come from the repository and the user only: a
/// `.claude/skills` above the repository's root (a shared `/tmp`, say) is not the project's.
#[tokio::test]
async fn skills_above_the_repository_root_are_not_the_projects() {
    let s = setup();
    let names: Vec<String> = discover_skills(&s.ctx)
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(names, ["commit", "pdf", "secret", "ship"]);
    assert_eq!(
        run(&s.ctx, json!({"skill": "plain"})).await.unwrap_err(),
        "Unknown skill: plain",
        "a skill above the repository was loaded"
    );
    // A repository nested in the project (a vendored clone the shell moved into): the
    // project's skills stay in view.
    let nested = s.project.join("src/vendor/lib");
    std::fs::create_dir_all(nested.join(".git")).unwrap();
    let inside = common::ctx(&s.project)
        .with_cwd(&nested)
        .with_home(Some(s.home.clone()));
    let found: Vec<(String, SkillSource)> = discover_skills(&inside)
        .into_iter()
        .map(|k| (k.name, k.source))
        .collect();
    assert!(found.contains(&("ship".to_owned(), SkillSource::Project)));
}

/// Outside any git repository the walk up stops at the project directory (the session's
/// start), or at the working directory itself when the shell left the project: a
/// `.claude/skills` in a parent (`/tmp`, say) is never read.
#[tokio::test]
async fn outside_a_repository_the_search_stops_at_the_project_directory() {
    let s = setup();
    std::fs::remove_dir(s.project.join(".git")).unwrap();
    let names: Vec<String> = discover_skills(&s.ctx)
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(names, ["commit", "pdf", "secret", "ship"]);
    assert_eq!(
        run(&s.ctx, json!({"skill": "plain"})).await.unwrap_err(),
        "Unknown skill: plain"
    );
    // The shell moved out of the project, into a directory whose parent has skills: only
    // the working directory's own `.claude/skills` (and the user's) count.
    let elsewhere = s.project.parent().unwrap().join("other/deep");
    std::fs::create_dir_all(&elsewhere).unwrap();
    write_skill(&elsewhere, "here", "---\ndescription: here\n---\nhere\n");
    let outside = s.ctx.with_cwd(&elsewhere);
    let names: Vec<String> = discover_skills(&outside)
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(names, ["commit", "pdf", "secret", "here"]);
}

/// YAML frontmatter as skills write it: folded and literal block scalars (with chomping
/// indicators), continuation lines, comments after values, quoted values with escapes, and
/// `allowed-tools` as a space-separated string, a comma list, a flow list or a `- item` list.
#[test]
fn frontmatter_block_scalars_lists_and_comments() {
    let tmp = tempfile::tempdir().unwrap();
    let load = |name: &str, text: &str| {
        write_skill(tmp.path(), name, text);
        load_skill(
            &tmp.path().join(".claude/skills").join(name),
            SkillSource::Project,
        )
        .unwrap()
    };
    let k = load(
        "folded",
        "---\n\
         description: >\n  Folds these\n  lines into one.\n\n  New paragraph.\n\
         when_to_use: |\n  Line one\n    indented\n  Line three\n\
         argument-hint: \"[file] # not a comment\"  # a comment\n\
         model: sonnet # the model\n\
         allowed-tools: Read Grep Bash(ls *)  # three tools\n\
         disable-model-invocation: false # no\n\
         ---\nbody\n",
    );
    assert_eq!(
        k.description.as_deref(),
        Some("Folds these lines into one.\nNew paragraph.\n")
    );
    assert_eq!(
        k.when_to_use.as_deref(),
        Some("Line one\n  indented\nLine three\n")
    );
    assert_eq!(k.argument_hint.as_deref(), Some("[file] # not a comment"));
    assert_eq!(k.model.as_deref(), Some("sonnet"));
    assert_eq!(
        k.allowed_tools,
        Some(vec!["Read".into(), "Grep".into(), "Bash(ls *)".into()])
    );
    assert!(!k.disable_model_invocation);
    assert_eq!(k.body, "body\n");
    assert!(k.warnings.is_empty(), "{:?}", k.warnings);

    // Chomping: `-` strips the final line break, `+` keeps the blank lines too.
    let k = load(
        "chomp",
        "---\ndescription: >-\n  one\n  two\nwhen_to_use: |+\n  kept\n\n---\nx",
    );
    assert_eq!(k.description.as_deref(), Some("one two"));
    assert_eq!(k.when_to_use.as_deref(), Some("kept\n\n"));

    // A plain value continued on indented lines folds; quoted values unescape; lists in
    // every form.
    let k = load(
        "plain",
        "---\r\ndescription: A long\r\n  description here\r\nwhen_to_use: 'it''s \"fine\"'\r\nargument-hint: \"tab\\there \\\"q\\\"\"\r\nallowed-tools: [Read, \"Bash(git diff:*)\", Grep]\r\n---\r\nx",
    );
    assert_eq!(k.description.as_deref(), Some("A long description here"));
    assert_eq!(k.when_to_use.as_deref(), Some("it's \"fine\""));
    assert_eq!(k.argument_hint.as_deref(), Some("tab\there \"q\""));
    assert_eq!(
        k.allowed_tools,
        Some(vec![
            "Read".into(),
            "Bash(git diff:*)".into(),
            "Grep".into()
        ])
    );
    let k = load(
        "items",
        "---\nallowed-tools:\n- Read  # reads\n- \"Bash(ls *)\"\n- Edit, Write\n---\nx",
    );
    assert_eq!(
        k.allowed_tools,
        Some(vec![
            "Read".into(),
            "Bash(ls *)".into(),
            "Edit, Write".into()
        ])
    );
    let k = load(
        "commas",
        "---\nallowed-tools: Read,Grep, Bash(git add:*) Bash(git commit -m:*)\n---\nx",
    );
    assert_eq!(
        k.allowed_tools,
        Some(vec![
            "Read".into(),
            "Grep".into(),
            "Bash(git add:*)".into(),
            "Bash(git commit -m:*)".into()
        ])
    );
}

/// Frontmatter the parser cannot read never panics or hides the skill: what it skipped is
/// in `warnings`, with the line and the reason, and the rest is used.
#[test]
fn bad_frontmatter_is_reported_line_by_line() {
    let tmp = tempfile::tempdir().unwrap();
    let load = |name: &str, text: &str| {
        write_skill(tmp.path(), name, text);
        load_skill(
            &tmp.path().join(".claude/skills").join(name),
            SkillSource::Project,
        )
        .unwrap()
    };
    let k = load(
        "bad",
        "---\ndescription: \"never closed\nnot a key line\nmodel: opus\ndescription: again\nwhen_to_use: >x\n  text\n---\nbody",
    );
    assert_eq!(k.model.as_deref(), Some("opus"));
    assert_eq!(k.description.as_deref(), Some("\"never closed"));
    assert_eq!(k.body, "body");
    assert_eq!(
        k.warnings,
        [
            "line 2: the value of `description` opens a \" quote that is not closed on its line; the value is taken as written",
            "line 3: not a `key: value` line; skipped",
            "line 5: `description` is given again; the first value is used",
            "line 6: `when_to_use` has an invalid block scalar header \">x\"; the value is taken as written",
        ]
    );
    // No closing `---`: no frontmatter, the whole file is the body, and that is said.
    let k = load("open", "---\ndescription: x\nbody");
    assert_eq!(k.description, None);
    assert_eq!(k.body, "---\ndescription: x\nbody");
    assert_eq!(
        k.warnings,
        [
            "the frontmatter opened on line 1 is not closed by a `---` line; the whole file is the body"
        ]
    );
    // Odd bytes and shapes do not panic.
    for text in [
        "---\n---\n",
        "---\n: no key\n---\n",
        "---\nk: >\n---\n",
        "---\nk: |-\n\n\n---\n",
        "---\n- orphan\n  indented orphan\n---\n",
        "---\nk: \"é\\\n---\n",
        "---\nk: 'é\n---\n",
        "---\nk: [a, (b, c\n---\n",
        "\u{feff}---\nk: v\n---\n",
    ] {
        load("odd", text);
    }
}

/// A `SKILL.md` that is not UTF-8 is loaded with its odd bytes replaced, and says so (it
/// was left out without a word: "Unknown skill"); one of megabytes is loaded up to
/// `MAX_SKILL_BYTES`, its body ending with where the rest is (every later request carries
/// the body: a huge one would make them all too large).
/// A `SKILL.md` that is a FIFO (or a link to a terminal) is not a skill, and opening it
/// does not wait for a writer: it hung discovery, and with it the session.
#[test]
fn a_skill_file_that_is_a_fifo_is_skipped_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".claude/skills/fifo");
    std::fs::create_dir_all(&dir).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(dir.join("SKILL.md"))
        .status()
        .unwrap();
    assert!(status.success());
    let null = tmp.path().join(".claude/skills/null");
    std::fs::create_dir_all(&null).unwrap();
    std::os::unix::fs::symlink("/dev/zero", null.join("SKILL.md")).unwrap();
    write_skill(tmp.path(), "fine", "---\ndescription: ok\n---\nbody\n");
    let (tx, rx) = std::sync::mpsc::channel();
    let root = tmp.path().to_path_buf();
    std::thread::spawn(move || {
        let found = [
            root.join(".claude/skills/fifo"),
            root.join(".claude/skills/null"),
        ]
        .map(|d| load_skill(&d, SkillSource::Project).is_none());
        let _ = tx.send(found);
    });
    let skipped = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("loading a FIFO skill blocked");
    assert_eq!(skipped, [true, true]);
    assert!(
        load_skill(
            &tmp.path().join(".claude/skills/fine"),
            SkillSource::Project
        )
        .is_some()
    );
}

#[test]
fn odd_and_huge_skill_files_load_and_say_so() {
    use tools_builtin::skill::MAX_SKILL_BYTES;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".claude/skills/latin");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        b"---\ndescription: caf\xe9\n---\nna\xefve body",
    )
    .unwrap();
    let k = load_skill(&dir, SkillSource::Project).expect("loaded");
    assert_eq!(k.description.as_deref(), Some("caf\u{fffd}"));
    assert_eq!(k.body, "na\u{fffd}ve body");
    assert_eq!(
        k.warnings,
        ["the file is not UTF-8: bytes that are not were replaced with U+FFFD"]
    );
    let dir = tmp.path().join(".claude/skills/huge");
    std::fs::create_dir_all(&dir).unwrap();
    let limit = usize::try_from(MAX_SKILL_BYTES).unwrap();
    // 25 bytes of frontmatter and `xx` before: the limit falls inside an `é`.
    let body = format!("xx{}", "é".repeat(limit));
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\ndescription: big\n---\n{body}"),
    )
    .unwrap();
    let k = load_skill(&dir, SkillSource::Project).expect("loaded");
    assert_eq!(k.description.as_deref(), Some("big"));
    let note = format!(
        "\n\n[SKILL.md goes on past its first {MAX_SKILL_BYTES} bytes: Read {} for the rest.]",
        dir.join("SKILL.md").display()
    );
    let kept = k
        .body
        .strip_suffix(&note)
        .unwrap_or_else(|| panic!("{}", &k.body[k.body.len() - 200..]));
    assert!(kept.starts_with("xxé") && !kept.contains('\u{fffd}'));
    assert!(
        kept.len() <= limit && kept.len() > limit - 32,
        "{}",
        kept.len()
    );
    assert_eq!(
        k.warnings,
        [format!(
            "the file is over {MAX_SKILL_BYTES} bytes: only its first {MAX_SKILL_BYTES} are loaded"
        )]
    );
}

#[tokio::test]
async fn unknown_and_manual_only_skills_are_refused() {
    let s = setup();
    let err = run(&s.ctx, json!({"skill": "nope"})).await.unwrap_err();
    assert_eq!(err, "Unknown skill: nope");
    let err = run(&s.ctx, json!({"skill": "../commit"}))
        .await
        .unwrap_err();
    assert_eq!(err, "Unknown skill: ../commit");
    let err = run(&s.ctx, json!({"skill": " "})).await.unwrap_err();
    assert_eq!(err, "Invalid skill format:  ");
    let err = run(&s.ctx, json!({"skill": "secret"})).await.unwrap_err();
    assert_eq!(
        err,
        "Skill secret cannot be used with Skill tool due to disable-model-invocation"
    );
    // YAML's other spellings of true.
    write_skill(
        &s.home,
        "shouting",
        "---\ndescription: manual only\ndisable-model-invocation: TRUE\n---\nno\n",
    );
    let err = run(&s.ctx, json!({"skill": "shouting"})).await.unwrap_err();
    assert!(err.contains("due to disable-model-invocation"), "{err}");
}

/// A skill whose SKILL.md is a file a Read deny rule covers (a symlink to it) is not read
/// into the conversation: the deny holds as it does for Read.
#[tokio::test]
async fn a_skill_file_a_read_deny_rule_covers_is_not_loaded() {
    let s = setup();
    // A file of the project: a project skill's link out of it is refused in any case.
    let secret = s.project.join("creds");
    std::fs::write(&secret, "AWS_SECRET=abc123\n").unwrap();
    let dir = s.project.join(".claude/skills/leak");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("SKILL.md")).unwrap();
    // Without a rule it loads (a symlinked skill is a skill).
    let (text, messages, _) = run(&s.ctx, json!({"skill": "leak"})).await.unwrap();
    assert_eq!(text, "Launching skill: leak");
    assert!(message_text(&messages).contains("AWS_SECRET"));
    let mut perm = s.ctx.permission().clone();
    perm.deny.push(tool_core::SourcedRule {
        source: tool_core::RuleSource::UserSettings,
        rule: format!("Read(/{})", secret.display()),
    });
    let ctx = s.ctx.clone().with_permission(perm);
    let err = run(&ctx, json!({"skill": "leak"})).await.unwrap_err();
    assert!(
        err.starts_with("Skill leak cannot be loaded: its file ")
            && err.contains("covered by the deny rule Read(/"),
        "{err}"
    );
    assert!(!err.contains("AWS_SECRET"), "{err}");
    // Nor is it listed to the model.
    let listed = tools_builtin::skill::discover_skills(&ctx);
    assert!(!listed.iter().any(|s| s.name == "leak"));
    assert!(listed.iter().any(|s| s.name == "ship"));
}

#[test]
fn the_permission_subject_is_the_skill_name() {
    let tool: &dyn Tool = &Skill;
    assert_eq!(
        tool.permission_subject(&json!({"skill": "/review-pr", "args": "12"})),
        Some(PermissionSubject::Name("review-pr".into()))
    );
}

/// The frontmatter's `arguments` (a list, or names separated by spaces) name the words the
/// Skill call passes, as in Claude Code; the session's id is `${CLAUDE_SESSION_ID}`.
#[tokio::test]
async fn named_arguments_and_the_session_id_are_substituted() {
    let s = setup();
    write_skill(
        &s.project,
        "fix",
        "---\ndescription: fix\narguments: [issue, branch]\n---\nFix issue $issue on $branch in ${CLAUDE_SESSION_ID}.\n",
    );
    write_skill(
        &s.project,
        "spaced",
        "---\ndescription: spaced\narguments: issue 2 branch\n---\n$issue/$branch\n",
    );
    let spaced = load_skill(
        &s.project.join(".claude/skills/spaced"),
        SkillSource::Project,
    )
    .expect("loaded");
    assert_eq!(spaced.argument_names, ["issue", "branch"]);
    let (_, messages, _) = run(&s.ctx, json!({"skill": "fix", "args": "42 hotfix"}))
        .await
        .unwrap();
    let text = message_text(&messages);
    assert!(
        text.ends_with(&format!(
            "Fix issue 42 on hotfix in {}.",
            s.ctx.session_id()
        )),
        "{text}"
    );
}
