//! Skill: discovery in project and user directories, frontmatter, argument substitution,
//! refusals, and the permission subject.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use serde_json::json;
use tool_core::{ContentBlock, Message, PermissionSubject, ProgressSender, Tool, ToolUseContext};
use tools_builtin::Skill;
use tools_builtin::skill::{SkillSource, discover_skills};

fn write_skill(root: &Path, name: &str, text: &str) {
    let dir = root.join(".claude/skills").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
}

struct Setup {
    _tmp: tempfile::TempDir,
    ctx: ToolUseContext,
    project: std::path::PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("work/project");
    let sub = project.join("src");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    write_skill(
        &project,
        "commit",
        "---\nname: commit\ndescription: \"Make a commit\"\nallowed-tools: Bash(git add:*), Bash(git commit:*)\nmodel: haiku\n---\n\nCommit with message: $ARGUMENTS\nScripts in ${CLAUDE_SKILL_DIR}/bin\n",
    );
    write_skill(
        &home,
        "commit",
        "---\ndescription: user version\n---\nshadowed\n",
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
    let ctx = common::ctx(&sub).with_home(Some(home));
    Setup {
        _tmp: tmp,
        ctx,
        project,
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
async fn project_skills_win_and_arguments_are_substituted() {
    let s = setup();
    let (text, messages, structured) =
        run(&s.ctx, json!({"skill": "/commit", "args": "fix the bug"}))
            .await
            .unwrap();
    assert_eq!(text, "Launching skill: commit");
    let dir = s.project.join(".claude/skills/commit");
    assert_eq!(
        message_text(&messages),
        format!(
            "Base directory for this skill: {d}\n\nCommit with message: fix the bug\nScripts in {d}/bin",
            d = dir.display()
        )
    );
    assert_eq!(
        structured,
        json!({"success": true, "commandName": "commit",
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

    // A skill in an ancestor directory, no frontmatter.
    let (_, messages, _) = run(&s.ctx, json!({"skill": "plain"})).await.unwrap();
    assert!(message_text(&messages).ends_with("\n\nJust text, no frontmatter."));

    let names: Vec<(String, SkillSource)> = discover_skills(&s.ctx)
        .into_iter()
        .map(|k| (k.name, k.source))
        .collect();
    assert_eq!(
        names,
        [
            ("commit".to_owned(), SkillSource::Project),
            ("plain".to_owned(), SkillSource::Project),
            ("pdf".to_owned(), SkillSource::User),
            ("secret".to_owned(), SkillSource::User),
        ]
    );
    let commit = &discover_skills(&s.ctx)[0];
    assert_eq!(commit.description.as_deref(), Some("Make a commit"));
}

/// Inside a git repository, skills come from the repository and the user only: a
/// `.claude/skills` above the repository's root (a shared `/tmp`, say) is not the project's.
#[tokio::test]
async fn skills_above_the_repository_root_are_not_the_projects() {
    let s = setup();
    assert!(discover_skills(&s.ctx).iter().any(|k| k.name == "plain"));
    std::fs::create_dir(s.project.join(".git")).unwrap();
    let names: Vec<String> = discover_skills(&s.ctx)
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(names, ["commit", "pdf", "secret"]);
    assert!(
        run(&s.ctx, json!({"skill": "plain"})).await.is_err(),
        "a skill above the repository was loaded"
    );
    // A repository nested in the project (a vendored clone the shell moved into): the
    // project's skills stay in view.
    let nested = s.project.join("src/vendor/lib");
    std::fs::create_dir_all(nested.join(".git")).unwrap();
    let inside = common::ctx(&s.project)
        .with_cwd(&nested)
        .with_home(s.ctx.home().map(Path::to_path_buf));
    let found: Vec<(String, SkillSource)> = discover_skills(&inside)
        .into_iter()
        .map(|k| (k.name, k.source))
        .collect();
    assert_eq!(found[0], ("commit".to_owned(), SkillSource::Project));
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
}

#[test]
fn the_permission_subject_is_the_skill_name() {
    let tool: &dyn Tool = &Skill;
    assert_eq!(
        tool.permission_subject(&json!({"skill": "/review-pr", "args": "12"})),
        Some(PermissionSubject::Name("review-pr".into()))
    );
}
