//! Skill: loads a skill, `.claude/skills/<name>/SKILL.md`, into the conversation (Claude
//! Code's `SkillTool`).
//!
//! Skills are found in the project (`.claude/skills` of the working directory and of each
//! of its parents up to the project's git root, nearest first: see
//! [`tool_core::project_dirs`]) and then for the user (`~/.claude/skills`); the first
//! skill of a name wins. `SKILL.md` may start with a `---` frontmatter block of `key: value`
//! lines (`name`, `description`, `allowed-tools` as a comma list or a `- item` list,
//! `model`, `argument-hint`, `when_to_use`, `disable-model-invocation`). The body, with
//! `$ARGUMENTS` replaced by `args` (or the arguments appended when it has no placeholder) and
//! `${CLAUDE_SKILL_DIR}` by the skill's directory, is added to the conversation as a user
//! message after the tool result, as Claude Code does; the result itself says
//! `Launching skill: <name>`. Permission rules match the skill's name (`Skill(name)`).
use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    ContentBlock, MaxResultSize, Message, PermissionSubject, ProgressSender, ToolError, ToolResult,
    ToolResultContent, ToolUseContext, TypedTool, ValidationError, async_trait,
};

/// Input of the Skill tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SkillInput {
    /// The skill name. E.g., "commit", "review-pr", or "pdf"
    pub skill: String,
    /// Optional arguments for the skill
    pub args: Option<String>,
}

/// Output of the Skill tool (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillOutput {
    /// Always true for a loaded skill.
    pub success: bool,
    /// The skill's name.
    pub command_name: String,
    /// The tools the skill's frontmatter allows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// The model the skill asks for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Where a skill was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillSource {
    /// A project's `.claude/skills`.
    Project,
    /// The user's `~/.claude/skills`.
    User,
}

/// A discovered skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillInfo {
    /// The name: the skill directory's name.
    pub name: String,
    /// The directory holding `SKILL.md`.
    pub dir: PathBuf,
    /// Project or user.
    pub source: SkillSource,
    /// The frontmatter's `description`.
    pub description: Option<String>,
    /// The frontmatter's `allowed-tools`.
    pub allowed_tools: Option<Vec<String>>,
    /// The frontmatter's `model`.
    pub model: Option<String>,
    /// The frontmatter's `argument-hint`.
    pub argument_hint: Option<String>,
    /// The frontmatter's `when_to_use`.
    pub when_to_use: Option<String>,
    /// The frontmatter's `disable-model-invocation`.
    pub disable_model_invocation: bool,
    /// The text after the frontmatter.
    pub body: String,
}

/// A parsed frontmatter: `key: value` pairs, lists gathered from `- item` lines.
#[derive(Debug, Default)]
struct Frontmatter {
    scalars: Vec<(String, String)>,
    lists: Vec<(String, Vec<String>)>,
}

impl Frontmatter {
    fn get(&self, key: &str) -> Option<String> {
        self.scalars
            .iter()
            .find(|(k, v)| k == key && !v.is_empty())
            .map(|(_, v)| v.clone())
    }

    fn list(&self, key: &str) -> Option<Vec<String>> {
        if let Some((_, items)) = self.lists.iter().find(|(k, _)| k == key) {
            return Some(items.clone());
        }
        self.get(key).map(|v| {
            v.trim_start_matches('[')
                .trim_end_matches(']')
                .split(',')
                .map(|s| unquote(s.trim()))
                .filter(|s| !s.is_empty())
                .collect()
        })
    }
}

fn unquote(value: &str) -> String {
    let v = value.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v[1..v.len() - 1].to_owned();
        }
    }
    v.to_owned()
}

/// Splits `text` into its frontmatter and body.
fn split_frontmatter(text: &str) -> (Frontmatter, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (Frontmatter::default(), text);
    };
    let mut fm = Frontmatter::default();
    let mut offset = 0;
    let mut current_list: Option<String> = None;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        let trimmed = line.trim_end();
        if trimmed == "---" {
            return (fm, &rest[offset..]);
        }
        if let Some(item) = trimmed.trim_start().strip_prefix("- ")
            && let Some(key) = &current_list
        {
            if let Some((_, items)) = fm.lists.iter_mut().find(|(k, _)| k == key) {
                items.push(unquote(item));
            }
            continue;
        }
        if let Some((key, value)) = trimmed.split_once(':')
            && !key.starts_with(' ')
        {
            let key = key.trim().to_owned();
            let value = value.trim();
            if value.is_empty() {
                fm.lists.push((key.clone(), Vec::new()));
                current_list = Some(key);
            } else {
                current_list = None;
                fm.scalars.push((key, unquote(value)));
            }
        }
    }
    // No closing line: not a frontmatter.
    (Frontmatter::default(), text)
}

/// Reads the skill in `dir` (`dir/SKILL.md`), or `None` when there is none.
pub fn load_skill(dir: &Path, source: SkillSource) -> Option<SkillInfo> {
    let text = std::fs::read_to_string(dir.join("SKILL.md")).ok()?;
    let (fm, body) = split_frontmatter(&text);
    let dir_name = dir.file_name()?.to_string_lossy().into_owned();
    Some(SkillInfo {
        name: dir_name,
        dir: dir.to_path_buf(),
        source,
        description: fm.get("description"),
        allowed_tools: fm.list("allowed-tools"),
        model: fm.get("model").filter(|m| m != "inherit"),
        argument_hint: fm.get("argument-hint"),
        when_to_use: fm.get("when_to_use"),
        disable_model_invocation: fm
            .get("disable-model-invocation")
            .is_some_and(|v| v == "true"),
        body: body.to_owned(),
    })
}

/// The skill directories searched, in precedence order: `.claude/skills` of the cwd and of
/// each parent up to the git repository's root (never the home directory or above it: see
/// [`tool_core::project_dirs`]), then `~/.claude/skills`.
pub fn skill_roots(ctx: &ToolUseContext) -> Vec<(PathBuf, SkillSource)> {
    let home = ctx.home();
    let mut roots: Vec<_> = tool_core::project_dirs(ctx.cwd(), ctx.project_dir(), home)
        .into_iter()
        .map(|dir| (dir.join(".claude/skills"), SkillSource::Project))
        .collect();
    if let Some(home) = home {
        roots.push((home.join(".claude/skills"), SkillSource::User));
    }
    roots
}

/// Every skill the context can see, first of each name only, in precedence order then name
/// order.
pub fn discover_skills(ctx: &ToolUseContext) -> Vec<SkillInfo> {
    let mut seen = HashSet::new();
    let mut skills = Vec::new();
    for (root, source) in skill_roots(ctx) {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        dirs.sort();
        for dir in dirs {
            if let Some(skill) = load_skill(&dir, source)
                && seen.insert(skill.name.clone())
            {
                skills.push(skill);
            }
        }
    }
    skills
}

/// The skill `name` (a leading `/` is ignored), by precedence.
pub fn find_skill(ctx: &ToolUseContext, name: &str) -> Option<SkillInfo> {
    let name = name.trim().trim_start_matches('/');
    if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
        return None;
    }
    skill_roots(ctx)
        .into_iter()
        .find_map(|(root, source)| load_skill(&root.join(name), source))
}

/// The skill's text for the conversation: arguments and directory substituted, as Claude
/// Code substitutes them: `$ARGUMENTS[N]` and `$N` are the N-th argument (0-based, split as
/// a shell splits words), `$ARGUMENTS` all of them; when the body has none of these, the
/// arguments follow it as an `ARGUMENTS:` line.
pub fn render_skill(skill: &SkillInfo, args: Option<&str>) -> String {
    let args = args.unwrap_or("").trim();
    let body = skill
        .body
        .replace("${CLAUDE_SKILL_DIR}", &skill.dir.to_string_lossy());
    let words =
        shlex::split(args).unwrap_or_else(|| args.split_whitespace().map(str::to_owned).collect());
    // Without arguments, `$1` is left as written (a skill's `awk '{print $1}'`);
    // `$ARGUMENTS[1]` is still a placeholder, and becomes empty.
    let (mut body, indexed) = substitute_indexed(&body, &words, !words.is_empty());
    if body.contains("$ARGUMENTS") {
        body = body.replace("$ARGUMENTS", args);
    } else if !indexed && !args.is_empty() {
        body = format!("{}\n\nARGUMENTS: {args}", body.trim_end());
    }
    format!(
        "Base directory for this skill: {}\n\n{}",
        skill.dir.display(),
        body.trim()
    )
}

/// `body` with `$ARGUMENTS[N]` (and `$N` when `bare` is set) replaced by the N-th of
/// `words` (empty when there is none), and whether any was.
fn substitute_indexed(body: &str, words: &[String], bare: bool) -> (String, bool) {
    let mut out = String::with_capacity(body.len());
    let mut replaced = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (digits, skip) = match after.strip_prefix("ARGUMENTS[") {
            Some(inner) => {
                let n = inner.chars().take_while(char::is_ascii_digit).count();
                if n > 0 && inner[n..].starts_with(']') {
                    (&inner[..n], "ARGUMENTS[".len() + n + 1)
                } else {
                    ("", 0)
                }
            }
            None if !bare => ("", 0),
            None => {
                let n = after.chars().take_while(char::is_ascii_digit).count();
                // `$1abc` is no placeholder.
                let word_follows = after[n..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_');
                if word_follows {
                    ("", 0)
                } else {
                    (&after[..n], n)
                }
            }
        };
        match digits.parse::<usize>() {
            Ok(i) if skip > 0 => {
                out.push_str(words.get(i).map_or("", String::as_str));
                replaced = true;
                rest = &after[skip..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    (out, replaced)
}

/// The Skill tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Skill;

#[async_trait]
impl TypedTool for Skill {
    type Input = SkillInput;
    type Output = SkillOutput;
    const NAME: &'static str = "Skill";

    fn description(&self) -> Cow<'_, str> {
        "Execute a skill within the main conversation".into()
    }

    fn prompt(&self) -> Cow<'_, str> {
        "Execute a skill within the main conversation.\n\n\
When users ask you to perform tasks, check if any of the available skills match. Skills provide specialized capabilities and domain knowledge.\n\n\
How to invoke:\n\
- Use this tool with the skill name and optional arguments\n\
- Examples: `skill: \"pdf\"`, `skill: \"commit\", args: \"-m 'Fix bug'\"`\n\n\
Important:\n\
- When a skill matches the user's request, invoke it before generating any other response about the task\n\
- Do not invoke a skill that is already running"
            .into()
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    fn permission_subject(&self, input: &SkillInput) -> Option<PermissionSubject> {
        Some(PermissionSubject::Name(
            input.skill.trim().trim_start_matches('/').to_owned(),
        ))
    }

    async fn validate_input(
        &self,
        input: &SkillInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        let name = input.skill.trim().trim_start_matches('/');
        if name.is_empty() {
            return Err(ValidationError::with_code(
                format!("Invalid skill format: {}", input.skill),
                1,
            ));
        }
        match find_skill(ctx, name) {
            None => Err(ValidationError::with_code(
                format!("Unknown skill: {name}"),
                2,
            )),
            Some(s) if s.disable_model_invocation => Err(ValidationError::with_code(
                format!(
                    "Skill {name} cannot be used with Skill tool due to disable-model-invocation"
                ),
                4,
            )),
            Some(_) => Ok(()),
        }
    }

    async fn call(
        &self,
        input: SkillInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<SkillOutput>, ToolError> {
        let name = input.skill.trim().trim_start_matches('/');
        let skill = find_skill(&ctx, name)
            .ok_or_else(|| ToolError::msg(format!("Unknown skill: {name}")))?;
        let text = render_skill(&skill, input.args.as_deref());
        Ok(ToolResult::new(SkillOutput {
            success: true,
            command_name: skill.name.clone(),
            allowed_tools: skill.allowed_tools.clone(),
            model: skill.model.clone(),
        })
        .with_message(Message::User(vec![ContentBlock::text(text)])))
    }

    fn to_content(&self, output: &SkillOutput) -> ToolResultContent {
        ToolResultContent::Text(format!("Launching skill: {}", output.command_name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(body: &str) -> SkillInfo {
        SkillInfo {
            name: "s".into(),
            dir: PathBuf::from("/skills/s"),
            source: SkillSource::Project,
            description: None,
            allowed_tools: None,
            model: None,
            argument_hint: None,
            when_to_use: None,
            disable_model_invocation: false,
            body: body.into(),
        }
    }

    #[test]
    fn arguments_are_substituted_by_position_and_whole() {
        let render = |body: &str, args: &str| {
            render_skill(&skill(body), Some(args))
                .trim_start_matches("Base directory for this skill: /skills/s\n\n")
                .to_owned()
        };
        // Split as a shell splits words; 0-based.
        assert_eq!(
            render("from $ARGUMENTS[0] to $1 ($2)", "'a b.txt' c.txt"),
            "from a b.txt to c.txt ()"
        );
        assert_eq!(render("all: $ARGUMENTS", "x y"), "all: x y");
        // No placeholder: the arguments follow.
        assert_eq!(render("Do it.", "x y"), "Do it.\n\nARGUMENTS: x y");
        // A `$` that is no placeholder stays; without arguments `$1` stays too.
        assert_eq!(render("costs $ and $x", ""), "costs $ and $x");
        assert_eq!(render("awk '{print $1}'", ""), "awk '{print $1}'");
        // `$ARGUMENTS[N]` without arguments is empty, not `[N]`.
        assert_eq!(render("File: $ARGUMENTS[0].", ""), "File: .");
        assert_eq!(render("$0abc $0", "v"), "$0abc v");
        // Not an index: `$ARGUMENTS` itself is replaced.
        assert_eq!(render("$ARGUMENTS[z]", "a"), "a[z]");
    }
}
