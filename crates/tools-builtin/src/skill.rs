//! Skill: loads a skill, `.claude/skills/<name>/SKILL.md`, into the conversation (Claude
//! Code's `SkillTool`).
//!
//! Skills are found, in Claude Code's precedence order (managed > personal > project), in
//! the managed settings directory's `.claude/skills`, then the user's `skills` (`$CLAUDE_CONFIG_DIR/skills`, else `~/.claude/skills`),
//! then the project's `.claude/skills` directories, nearest first ([`skill_roots`],
//! [`tool_core::project_dirs`]: the working directory and its parents up to the project's git
//! root, or only up to the project directory outside a repository). The first skill of a
//! name wins, so a repository cannot replace a user's own skill.
//!
//! Claude Code's command files are skills too ([`SkillKind::Command`]): `<name>.md` in a
//! `commands` directory beside each `skills` one (the managed `.claude/commands`, the user's
//! `$CLAUDE_CONFIG_DIR/commands` or `~/.claude/commands`, the project's `.claude/commands`),
//! a file in a subdirectory named `dir:name` (`frontend/component.md` is
//! `frontend:component`; links to directories are not followed, and the walk reads at most
//! 10,000 directory entries of each commands directory). They are read, listed and loaded
//! as skills are, the whole file after the frontmatter the prompt; of one place (managed,
//! user, project), its skills come before its commands, so a skill wins over a command of
//! the same name there, and the user's command still wins over a project's skill.
//!
//! `SKILL.md` may start with a `---` frontmatter block ([`crate::frontmatter`]). The keys
//! used are `description`, `allowed-tools` (a `- item` list, a flow list `[a, b]`, or one
//! line split on commas and on whitespace outside parentheses: `Read Grep Bash(ls *)`),
//! `model`, `argument-hint`, `when_to_use` and `disable-model-invocation`. `allowed-tools`
//! and `model` are only passed on in the tool's structured output: they grant nothing and
//! change no model (a skill's `model` other than `inherit` gets a notice for the user when
//! the skill loads, as a system message). A frontmatter
//! that cannot be read as written never fails the skill: what was skipped or taken as
//! written is in [`SkillInfo::warnings`] (also logged), and a frontmatter never closed
//! leaves the whole file as the body.
//!
//! The body, with `$ARGUMENTS` replaced by `args` (or the arguments appended when it has no
//! placeholder) and `${CLAUDE_SKILL_DIR}` by the skill's directory (in one pass: what is put
//! in is never read for placeholders again), is added to the conversation as a user message
//! after the tool result, as Claude Code does; the result itself says `Launching skill:
//! <name>`. Permission rules match the skill's name (`Skill(name)`), and a skill a deny rule
//! refuses is left out of the listing ([`skills_listing`]).
//!
//! A skill whose name (its directory's, or a command file's with its subdirectories) holds a
//! control character or a line separator is skipped with a warning in the log: the listing
//! gives each name on a line of its own, and a cloned repository names its skills. What the
//! listing says of a skill (its `description`, `when_to_use`, or its body's first line) is
//! put on one line, and a control character in it that is not whitespace (an escape
//! sequence's ESC, NUL, BEL, DEL, a C1 control) is shown as its escape, `\u{1b}`, never as
//! itself.
//!
//! A SKILL.md (or a command file) is read into the conversation without a Read permission,
//! so two kinds of skill are refused (and not listed): one whose file a Read deny rule covers
//! ([`denied_skill_file`]), and a project skill whose file leads, through a symbolic link,
//! out of the project directory that holds its `.claude/skills` (or `.claude/commands`)
//! ([`project_skill_link_outside`]): a cloned repository could otherwise load
//! `~/.aws/credentials` with a link. The user's and the managed skills may link anywhere.
use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::frontmatter::{self, Frontmatter, Missing};
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
    /// The model the skill asks for (not applied: the conversation keeps its model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Where a skill was found, in precedence order: of skills with the same name, the
/// managed one wins over the user's, and the user's over the project's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillSource {
    /// The managed (enterprise policy) skills: `.claude/skills` in the managed settings
    /// directory ([`tool_core::managed_settings_dir`]).
    Managed,
    /// The user's `$CLAUDE_CONFIG_DIR/skills`, else `~/.claude/skills`.
    User,
    /// A project's `.claude/skills`.
    Project,
}

/// What kind of file a skill was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillKind {
    /// A skill: `<name>/SKILL.md` in a `skills` directory.
    Skill,
    /// A command file, as Claude Code's `.claude/commands/<name>.md`: `<name>.md` in a
    /// `commands` directory, or `<dir>/<name>.md` for the skill `dir:name`. Its text is
    /// rendered without the `Base directory for this skill` line a skill's starts with.
    Command,
}

/// A discovered skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillInfo {
    /// The name: the skill directory's name; for a command, the file's name without `.md`,
    /// after its subdirectories' names, each followed by `:` (`frontend:component`).
    pub name: String,
    /// The directory holding `SKILL.md`, or holding the command's file
    /// (`${CLAUDE_SKILL_DIR}`).
    pub dir: PathBuf,
    /// The file as found (`<dir>/SKILL.md`, or the command's file), links not resolved.
    pub path: PathBuf,
    /// Where the file really was when it was read (every link resolved): the file the
    /// body came from, and the one [`project_skill_link_outside`] and [`denied_skill_file`]
    /// judge, so that a link changed after the read cannot pass a check for another file.
    pub file: PathBuf,
    /// Managed, user or project.
    pub source: SkillSource,
    /// A skill or a command file.
    pub kind: SkillKind,
    /// The frontmatter's `description`.
    pub description: Option<String>,
    /// The frontmatter's `allowed-tools`.
    pub allowed_tools: Option<Vec<String>>,
    /// The frontmatter's `model`.
    pub model: Option<String>,
    /// The frontmatter's `argument-hint`.
    pub argument_hint: Option<String>,
    /// The frontmatter's `arguments`: names for the arguments by position (`$issue` is the
    /// first word when the first name is `issue`), as Claude Code reads them (a list, or
    /// words separated by spaces; names that are only digits are left out).
    pub argument_names: Vec<String>,
    /// The frontmatter's `when_to_use`.
    pub when_to_use: Option<String>,
    /// The frontmatter's `disable-model-invocation`.
    pub disable_model_invocation: bool,
    /// The text after the frontmatter.
    pub body: String,
    /// What in the file could not be read as written (a frontmatter's `line N: ...`, bytes
    /// that are not UTF-8, a file past [`MAX_SKILL_BYTES`]), and what was done instead;
    /// empty for a clean file.
    pub warnings: Vec<String>,
}

/// The most of a `SKILL.md` that is read, in bytes. The body goes into the conversation and
/// every later request carries it: a file of megabytes would make each of them too large
/// for the API, for good. What is past this is left to a Read of the file.
pub const MAX_SKILL_BYTES: u64 = 256 * 1024;

/// `file` opened for reading, with its real path: `file` is resolved first and that real
/// path opened, so that what is read is the file the checks on that path judge, whatever a
/// link on the way says afterwards. On Linux the path is the kernel's own for the open file
/// (`/proc/self/fd`): a directory on the way swapped for a link between the two steps
/// cannot make it another one. `None` when it does not resolve or cannot be opened.
fn open_real(file: &Path) -> Option<(std::fs::File, PathBuf)> {
    let real = std::fs::canonicalize(file).ok()?;
    // Only a regular file is opened, without blocking: a `SKILL.md` that is a FIFO (or a
    // link to `/dev/tty`) would hang the open or the read, and with it the session.
    let handle = crate::fsutil::open_existing(&real).ok()??;
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd as _;
        if let Ok(opened) = std::fs::read_link(format!("/proc/self/fd/{}", handle.as_raw_fd())) {
            return Some((handle, opened));
        }
    }
    Some((handle, real))
}

/// `file`'s text: at most [`MAX_SKILL_BYTES`] of it, bytes that are not UTF-8 replaced, with
/// a warning for each, whether it was cut, and the real path it was read from
/// (the file is resolved first and that real path opened; only a regular file is opened,
/// never a FIFO or a device); `None` when it cannot be read. Also how the agent loop reads
/// its agent definitions.
pub fn read_skill_file(file: &Path) -> Option<(String, Vec<String>, bool, PathBuf)> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    let (handle, real) = open_real(file)?;
    handle
        .take(MAX_SKILL_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    let mut warnings = Vec::new();
    let cut = bytes.len() as u64 > MAX_SKILL_BYTES;
    if cut {
        bytes.truncate(usize::try_from(MAX_SKILL_BYTES).unwrap_or(usize::MAX));
        // A character the limit cut in two goes whole: that is no encoding fault.
        if let Err(e) = std::str::from_utf8(&bytes)
            && e.error_len().is_none()
        {
            bytes.truncate(e.valid_up_to());
        }
        warnings.push(format!(
            "the file is over {MAX_SKILL_BYTES} bytes: only its first {MAX_SKILL_BYTES} are loaded"
        ));
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            warnings.push(
                "the file is not UTF-8: bytes that are not were replaced with U+FFFD".to_owned(),
            );
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    Some((text, warnings, cut, real))
}

/// Reads the skill in `dir` (`dir/SKILL.md`), or `None` when there is none (or its name, the
/// directory's, holds a control character or a line separator: such a skill is skipped, with
/// a warning in the log).
pub fn load_skill(dir: &Path, source: SkillSource) -> Option<SkillInfo> {
    let name = dir.file_name()?.to_string_lossy().into_owned();
    load_file(&dir.join("SKILL.md"), name, source, SkillKind::Skill)
}

/// Reads the command file `file` as the skill `name` ([`SkillKind::Command`]), or `None`
/// when it cannot be read (or `name` holds a control character or a line separator).
pub fn load_command(file: &Path, name: &str, source: SkillSource) -> Option<SkillInfo> {
    load_file(file, name.to_owned(), source, SkillKind::Command)
}

/// Whether `c` may not be in a skill's name: a control character (a line break, a tab, an
/// escape) or a line or paragraph separator. The listing gives a skill's name on its line
/// as it is, and a cloned repository names its skills' directories: a name with a line
/// break would add lines of its own to what the model reads.
fn bad_name_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Reads `file` (a `SKILL.md` or a command file) as the skill `name`; `None` when it cannot
/// be read, or when `name` holds a character [`bad_name_char`] refuses (a warning is logged:
/// such a skill is neither listed nor loaded).
fn load_file(file: &Path, name: String, source: SkillSource, kind: SkillKind) -> Option<SkillInfo> {
    let dir = file.parent()?;
    let (text, mut warnings, cut, real) = read_skill_file(file)?;
    if let Some(c) = name.chars().find(|&c| bad_name_char(c)) {
        tracing::warn!(
            file = %file.display(),
            "skill: {name:?} is skipped: its name holds {c:?}, a control character or line \
             separator, which a skill's name may not hold (it could not be listed on one line)"
        );
        return None;
    }
    let whole = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let (fm, body) = match frontmatter::split(&text) {
        Ok((fm, body)) => {
            warnings.extend(fm.warnings().iter().cloned());
            (fm, body)
        }
        Err(Missing::NotOpened) => (Frontmatter::default(), whole),
        Err(missing @ Missing::NotClosed) => {
            warnings.push(format!("{missing}; the whole file is the body"));
            (Frontmatter::default(), whole)
        }
    };
    let mut body = body.to_owned();
    if cut {
        body.push_str(&format!(
            "\n\n[{} goes on past its first {MAX_SKILL_BYTES} bytes: Read {} for the rest.]",
            file.file_name().unwrap_or_default().to_string_lossy(),
            file.display()
        ));
    }
    for warning in &warnings {
        tracing::warn!(file = %file.display(), "skill: {warning}");
    }
    Some(SkillInfo {
        name,
        dir: dir.to_path_buf(),
        path: file.to_path_buf(),
        file: real,
        source,
        kind,
        description: fm.text("description"),
        allowed_tools: fm.list("allowed-tools"),
        model: fm.text("model").filter(|m| m != "inherit"),
        argument_hint: fm.text("argument-hint"),
        argument_names: fm
            .list("arguments")
            .unwrap_or_default()
            .iter()
            .flat_map(|item| item.split_whitespace())
            .filter(|name| is_argument_name(name))
            .map(str::to_owned)
            .collect(),
        when_to_use: fm.text("when_to_use"),
        disable_model_invocation: fm
            .text("disable-model-invocation")
            // YAML's `true`, `True` and `TRUE`.
            .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        body,
        warnings,
    })
}

/// The skill directories searched, in precedence order (Claude Code's: managed, then
/// personal, then project): `.claude/skills` in the managed settings directory,
/// the user's (`$CLAUDE_CONFIG_DIR/skills`, else `~/.claude/skills`), then the project's `.claude/skills` directories nearest first (see
/// [`tool_core::project_dirs`]). Of skills with the same name, the first found wins: a cloned
/// repository's `commit` skill does not replace the user's own.
pub fn skill_roots(ctx: &ToolUseContext) -> Vec<(PathBuf, SkillSource)> {
    roots_with_managed(ctx, &tool_core::managed_settings_dir())
}

/// The command directories searched ([`SkillKind::Command`]), in the same order as
/// [`skill_roots`]: `.claude/commands` in the managed settings directory, the user's
/// (`$CLAUDE_CONFIG_DIR/commands`, else `~/.claude/commands`), then the project's
/// `.claude/commands` directories nearest first.
pub fn command_roots(ctx: &ToolUseContext) -> Vec<(PathBuf, SkillSource)> {
    roots_in(ctx, &tool_core::managed_settings_dir(), "commands")
}

/// `sub` (`skills`, `commands`) in the user's configuration directory, as for settings and
/// agents (`CLAUDE_CONFIG_DIR`, else `~/.claude`).
fn user_dir(ctx: &ToolUseContext, sub: &str) -> Option<PathBuf> {
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| ctx.home().map(|home| home.join(".claude")))
        .map(|config| config.join(sub))
}

/// [`skill_roots`] with the managed settings directory `managed`.
fn roots_with_managed(ctx: &ToolUseContext, managed: &Path) -> Vec<(PathBuf, SkillSource)> {
    roots_in(ctx, managed, "skills")
}

/// The `sub` directories (`skills` or `commands`) searched, in precedence order, with the
/// managed settings directory `managed`.
fn roots_in(ctx: &ToolUseContext, managed: &Path, sub: &str) -> Vec<(PathBuf, SkillSource)> {
    let mut roots = vec![(managed.join(".claude").join(sub), SkillSource::Managed)];
    if let Some(dir) = user_dir(ctx, sub) {
        roots.push((dir, SkillSource::User));
    }
    roots.extend(
        tool_core::project_dirs(ctx.cwd(), ctx.project_dir(), ctx.home())
            .into_iter()
            .map(|dir| (dir.join(".claude").join(sub), SkillSource::Project)),
    );
    roots
}

/// A directory skills are searched in, and which kind of file it holds.
#[derive(Debug, Clone)]
struct Root {
    dir: PathBuf,
    source: SkillSource,
    kind: SkillKind,
}

/// Every directory skills and commands are searched in, in precedence order, with the
/// managed settings directory `managed`: the managed, then the user's, then the project's;
/// of each, the skills directories before the commands directories (a skill wins over a
/// command of the same name from the same place).
fn search_roots(ctx: &ToolUseContext, managed: &Path) -> Vec<Root> {
    let skills = roots_with_managed(ctx, managed);
    let commands = roots_in(ctx, managed, "commands");
    let mut roots = Vec::new();
    for source in [
        SkillSource::Managed,
        SkillSource::User,
        SkillSource::Project,
    ] {
        for (list, kind) in [(&skills, SkillKind::Skill), (&commands, SkillKind::Command)] {
            roots.extend(
                list.iter()
                    .filter(|(_, s)| *s == source)
                    .map(|(dir, _)| Root {
                        dir: dir.clone(),
                        source,
                        kind,
                    }),
            );
        }
    }
    roots
}

/// Most levels of subdirectories of a folder searched by [`markdown_files`].
const MAX_MARKDOWN_DEPTH: usize = 8;
/// Most markdown files [`markdown_files`] takes from one folder and its subfolders.
const MAX_MARKDOWN_FILES: usize = 1000;
/// Most directory entries [`markdown_files`] reads from one folder and its subfolders, of
/// every kind (files, directories, links, hidden ones): the walk runs on every listing and
/// every Skill call, and a cloned repository decides what is in it.
const MAX_MARKDOWN_ENTRIES: usize = 10_000;

/// The command files under the commands directory `root`, with their names
/// ([`SkillKind::Command`]), in name order ([`markdown_files`], hidden files skipped); a
/// warning is logged for what the walk's bounds left unread.
fn command_files(root: &Path) -> Vec<(String, PathBuf)> {
    let walk = markdown_files(root, false);
    for unread in walk.unread() {
        tracing::warn!(
            dir = %root.display(),
            "skill: the commands directory was not read whole: {unread}; command files there are not found"
        );
    }
    walk.found
}

/// What [`markdown_files`] found under a directory.
#[derive(Debug, Default)]
pub struct MarkdownFiles {
    /// The `.md` files, each with its name: the names of its subdirectories, each followed
    /// by `:`, then its own without `.md` (`frontend/component.md` is
    /// `frontend:component`); in the order of their paths.
    pub found: Vec<(String, PathBuf)>,
    /// Whether the walk left entries unread for want of its bound on directory entries
    /// (10,000).
    pub stopped: bool,
    /// Whether the walk stopped at its bound on files (1,000) with more `.md` files to take.
    pub too_many_files: bool,
    /// The directories not searched because they are deeper than the walk goes (8 levels
    /// of subdirectories).
    pub too_deep: Vec<PathBuf>,
    /// The links to directories met, which were not followed.
    pub linked_dirs: Vec<PathBuf>,
    /// How many more directory entries may be read (`MAX_MARKDOWN_ENTRIES`).
    entries_left: usize,
}

impl MarkdownFiles {
    /// What the walk's bounds left unread, each said in a few words (`after 10000 directory
    /// entries`, `after 1000 markdown files`, `<dir> is more than 8 folders deep`): empty
    /// when the whole tree was read (links to directories aside, [`Self::linked_dirs`]).
    pub fn unread(&self) -> Vec<String> {
        let mut unread = Vec::new();
        if self.stopped {
            unread.push(format!(
                "it stopped after {MAX_MARKDOWN_ENTRIES} directory entries"
            ));
        }
        if self.too_many_files {
            unread.push(format!(
                "it stopped after {MAX_MARKDOWN_FILES} markdown files"
            ));
        }
        unread.extend(self.too_deep.iter().map(|dir| {
            format!(
                "{} is more than {MAX_MARKDOWN_DEPTH} folders deep",
                dir.display()
            )
        }));
        unread
    }
}

/// The `<name>.md` files under `root` and its subdirectories, as a commands directory's
/// are found (the binary reads agent definitions directories the same way): at most 8
/// levels of subdirectories deep, at most 1,000 files, in the order of their
/// paths (each directory's entries in byte order of their names, a subdirectory's files
/// in its place). Hidden directories and names that are not UTF-8 are skipped; hidden
/// files too unless `hidden_files` (an agents directory's: Claude Code reads them, and
/// Toolwright did before its subfolders were read).
///
/// A link to a directory is not followed (a link to `.` would otherwise find every file
/// again under each path through it, and a few of them make the walk take seconds): only
/// real subdirectories are searched, and the links are listed in
/// [`MarkdownFiles::linked_dirs`]. A `.md` file that is a link is taken as any other (and
/// judged when read: for a command, [`project_skill_link_outside`], [`denied_skill_file`]).
///
/// At most 10,000 directory entries are read in all: the files among
/// those read are found, and a directory reached after that is not read (which of a
/// directory's entries are read first when it alone holds more is the file system's
/// order). What a bound left unread is in [`MarkdownFiles::stopped`],
/// [`MarkdownFiles::too_many_files`] and [`MarkdownFiles::too_deep`]
/// ([`MarkdownFiles::unread`] says it).
pub fn markdown_files(root: &Path, hidden_files: bool) -> MarkdownFiles {
    let mut walk = MarkdownFiles {
        entries_left: MAX_MARKDOWN_ENTRIES,
        ..MarkdownFiles::default()
    };
    walk_markdown(root, &mut Vec::new(), hidden_files, &mut walk);
    walk
}

/// [`markdown_files`] of `dir`, whose subdirectory names from the walk's root are `prefix`.
fn walk_markdown(
    dir: &Path,
    prefix: &mut Vec<String>,
    hidden_files: bool,
    walk: &mut MarkdownFiles,
) {
    if walk.entries_left == 0 {
        walk.stopped = true;
        return;
    }
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries = Vec::new();
    for entry in read {
        if walk.entries_left == 0 {
            walk.stopped = true;
            break;
        }
        walk.entries_left -= 1;
        entries.extend(entry.ok());
    }
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        if walk.too_many_files {
            return;
        }
        let file_name = entry.file_name();
        let Some(name) = file_name.to_str() else {
            continue;
        };
        let hidden = name.starts_with('.');
        let path = entry.path();
        // The entry itself, not what a link names.
        let kind = entry.file_type().ok();
        if kind.is_some_and(|k| k.is_dir()) {
            if hidden {
                continue;
            }
            if prefix.len() >= MAX_MARKDOWN_DEPTH {
                walk.too_deep.push(path);
                continue;
            }
            prefix.push(name.to_owned());
            walk_markdown(&path, prefix, hidden_files, walk);
            prefix.pop();
        } else if hidden && !hidden_files {
            continue;
        } else if kind.is_some_and(|k| k.is_symlink()) && path.is_dir() {
            // A link to a directory: not followed.
            if !hidden {
                walk.linked_dirs.push(path);
            }
        } else if let Some(stem) = name.strip_suffix(".md")
            && !stem.is_empty()
        {
            if walk.found.len() >= MAX_MARKDOWN_FILES {
                walk.too_many_files = true;
                return;
            }
            let mut command: String = prefix.iter().map(|p| format!("{p}:")).collect();
            command.push_str(stem);
            walk.found.push((command, path));
        }
    }
}

/// Longest skill description listed, in characters (Claude Code cuts them likewise).
const LISTED_SKILL_DESCRIPTION_CHARS: usize = 250;
/// Most skills listed.
const MAX_LISTED_SKILLS: usize = 100;
/// Longest description taken from the first line of a skill's body, in characters (Claude
/// Code's `extractDescriptionFromMarkdown`).
const BODY_DESCRIPTION_CHARS: usize = 100;

/// What a skill without a `description` is described by, as Claude Code describes it
/// (`extractDescriptionFromMarkdown`): the first line of its body that is not blank,
/// trimmed, a heading's `#` marks and the space after them taken off once, cut at 100
/// characters (97 and `...`); `None` for a blank body.
fn description_from_body(body: &str) -> Option<String> {
    let line = body.lines().map(str::trim).find(|l| !l.is_empty())?;
    let unmarked = line.trim_start_matches('#');
    let line = if unmarked.len() < line.len() && unmarked.starts_with(char::is_whitespace) {
        unmarked.trim_start()
    } else {
        line
    };
    if line.chars().count() <= BODY_DESCRIPTION_CHARS {
        return Some(line.to_owned());
    }
    let cut: String = line.chars().take(BODY_DESCRIPTION_CHARS - 3).collect();
    Some(format!("{cut}..."))
}

/// `text` as the listing shows it: on one line, each run of whitespace (line breaks, tabs,
/// carriage returns, the other whitespace controls) one space, and every other control
/// character (an escape, NUL, BEL, DEL, a C1 control) shown as its visible escape
/// (`\u{1b}`), never as itself: a cloned repository writes its skills' descriptions, and
/// what the listing carries reaches the model (and a terminal that prints it) as written.
/// The binary lists agent definitions' descriptions the same way.
pub fn listing_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        for c in word.chars() {
            if c.is_control() {
                out.extend(c.escape_unicode());
            } else {
                out.push(c);
            }
        }
    }
    out
}

/// A skill's text in the listing, as Claude Code's `getCommandDescription` gives it: its
/// `description` (else the first line of its body, [`description_from_body`]), then
/// ` - ` and its `when_to_use` when it has one; on one line ([`listing_text`]: control
/// characters shown as escapes), cut at 250 characters (with `…`). Empty for a skill with
/// none of them.
fn listed_description(skill: &SkillInfo) -> String {
    let one_line = listing_text;
    let description = skill
        .description
        .as_deref()
        .map(one_line)
        .filter(|d| !d.is_empty())
        .or_else(|| description_from_body(&skill.body).map(|d| one_line(&d)))
        .unwrap_or_default();
    let when = skill
        .when_to_use
        .as_deref()
        .map(one_line)
        .unwrap_or_default();
    let text = match (description.is_empty(), when.is_empty()) {
        (_, true) => description,
        (true, false) => when,
        (false, false) => format!("{description} - {when}"),
    };
    if text.chars().count() > LISTED_SKILL_DESCRIPTION_CHARS {
        let cut: String = text
            .chars()
            .take(LISTED_SKILL_DESCRIPTION_CHARS - 1)
            .collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// The skills `ctx` can load, as Claude Code lists them for its model: a line per skill
/// with its name and what its listed description says of it (`description - when_to_use`,
/// the first line of the body for a skill without a description; on one line, control
/// characters shown as escapes, cut at 250 characters), at most 100 skills; `None` when the
/// Skill tool is not among `ctx`'s tools or there is no skill. A skill only the user may
/// invoke (`disable-model-invocation`) is refused to the model, so it is not listed, nor is
/// one a deny rule refuses (`Skill(name)`, `Skill(:*)`: judged as its call would be, by the
/// session's permission engine, else by the context's deny rules); when deny rules refuse
/// every skill there is, the listing says so instead. `toolwright serve` adds this to the Skill tool's description; the agent loop
/// gives it to its model as a reminder.
pub fn skills_listing(ctx: &ToolUseContext) -> Option<String> {
    if !ctx.tools().iter().any(|t| t.name() == "Skill") {
        return None;
    }
    let mut skills: Vec<_> = discover_skills(ctx)
        .into_iter()
        .filter(|s| !s.disable_model_invocation)
        .collect();
    if skills.is_empty() {
        return None;
    }
    if let Some(engine) = tool_perms::PermissionEngine::for_walking(ctx) {
        skills.retain(|s| !refused_by_deny_rule(&engine, ctx, &s.name));
        if skills.is_empty() {
            return Some(
                "No skills are available for use with the Skill tool: deny rules refuse every \
                 skill there is."
                    .to_owned(),
            );
        }
    }
    let mut text =
        String::from("The following skills are available for use with the Skill tool:\n\n");
    for skill in skills.iter().take(MAX_LISTED_SKILLS) {
        let description = listed_description(skill);
        if description.is_empty() {
            text.push_str(&format!("- {}\n", skill.name));
        } else {
            text.push_str(&format!("- {}: {description}\n", skill.name));
        }
    }
    if skills.len() > MAX_LISTED_SKILLS {
        text.push_str(&format!(
            "({} more not listed)\n",
            skills.len() - MAX_LISTED_SKILLS
        ));
    }
    Some(text.trim_end().to_owned())
}

/// Whether a deny rule refuses the Skill call of `name`, as `engine` judges the call: its
/// tool-wide, field and `Skill(name)` deny rules
/// ([`tool_perms::PermissionEngine::rule_denial`]). An ask rule does not refuse: the skill
/// stays listed, and its call is asked.
fn refused_by_deny_rule(
    engine: &tool_perms::PermissionEngine,
    ctx: &ToolUseContext,
    name: &str,
) -> bool {
    let input = serde_json::json!({ "skill": name });
    engine.rule_denial(&Skill, &input, ctx).is_some()
}

/// Every skill the context can see, command files included, first of each name only, in
/// precedence order then name order; not those whose file a Read deny rule covers (see
/// [`denied_skill_file`]), nor project skills whose file leads out of the project (see
/// [`project_skill_link_outside`]).
pub fn discover_skills(ctx: &ToolUseContext) -> Vec<SkillInfo> {
    let mut skills = discover_in(search_roots(ctx, &tool_core::managed_settings_dir()));
    skills
        .retain(|s| denied_skill_file(ctx, s).is_none() && project_skill_link_outside(s).is_none());
    skills
}

/// A project skill's file (SKILL.md or a command file) that leads, through a symbolic
/// link, out of the project directory it came with ([`project_skill_link_outside`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkOutside {
    /// The directory holding the `.claude/skills` (or `.claude/commands`) the skill was
    /// found in (as found, links not resolved).
    pub project: PathBuf,
    /// The first symbolic link from there to the file: the file itself, a directory on the
    /// way, `skills` (`commands`) or `.claude`.
    pub link: PathBuf,
    /// Where the file really was when it was read (every link resolved:
    /// [`SkillInfo::file`]).
    pub target: PathBuf,
}

/// Whether `skill`, a project skill ([`SkillSource::Project`]), was read from a file (its
/// SKILL.md, or its command file) whose real path ([`SkillInfo::file`], resolved when it
/// was read, not again now: a link changed since cannot pass the file read) is outside the
/// directory holding its `.claude/skills` or `.claude/commands` (the repository it came
/// with): then `Some` with the link that leads out and where to. A project directory that
/// no longer resolves counts as outside. `None` for the user's and the managed skills,
/// which may link anywhere: the user put them there.
pub fn project_skill_link_outside(skill: &SkillInfo) -> Option<LinkOutside> {
    if skill.source != SkillSource::Project {
        return None;
    }
    let file = skill.path.clone();
    // The skill was found as `<project>/.claude/skills/<name>`, or the command as
    // `<project>/.claude/commands/[<dir>/...]<name>.md`; a file found another way (a host
    // calling `load_skill`) is held to its own directory.
    let found_in = match skill.kind {
        SkillKind::Skill => skill.dir.parent().filter(|d| d.ends_with(".claude/skills")),
        SkillKind::Command => file
            .ancestors()
            .skip(1)
            .find(|d| d.ends_with(".claude/commands")),
    };
    let project = found_in
        .and_then(Path::parent)
        .and_then(Path::parent)
        .unwrap_or(&skill.dir);
    file_link_outside(project, &file, &skill.file)
}

/// Whether a project's file found at `file` (below `project`, links not resolved) and read
/// from `real` (every link resolved, when it was read) leads out of `project` through a
/// symbolic link: then `Some` with the first link on the way and where it leads. A
/// `project` that no longer resolves counts as outside. The check of
/// [`project_skill_link_outside`], for other files a project gives that are read without a
/// Read permission (the agent loop's agent definitions).
pub fn file_link_outside(project: &Path, file: &Path, real: &Path) -> Option<LinkOutside> {
    if let Ok(root) = std::fs::canonicalize(project)
        && real.starts_with(&root)
    {
        return None;
    }
    // The first link on the way, from the project down to the file.
    let below = file.strip_prefix(project).unwrap_or(file);
    let mut at = project.to_path_buf();
    let link = below
        .components()
        .find_map(|part| {
            at.push(part);
            std::fs::symlink_metadata(&at)
                .is_ok_and(|m| m.file_type().is_symlink())
                .then(|| at.clone())
        })
        .unwrap_or_else(|| file.to_path_buf());
    Some(LinkOutside {
        project: project.to_path_buf(),
        link,
        target: real.to_path_buf(),
    })
}

/// Why `skill` may not be read into the conversation, in the words the model sees: its file
/// is covered by a Read deny rule, or it is a project skill whose file leads out of the
/// project. `None` when it may.
fn refusal(ctx: &ToolUseContext, name: &str, skill: &SkillInfo) -> Option<ValidationError> {
    let file = &skill.path;
    if let Some(rule) = denied_skill_file(ctx, skill) {
        return Some(ValidationError::with_code(
            format!(
                "Skill {name} cannot be loaded: its file {} is covered by the deny rule {}",
                file.display(),
                rule.rule
            ),
            5,
        ));
    }
    let outside = project_skill_link_outside(skill)?;
    let (what, sub) = match skill.kind {
        SkillKind::Skill => ("skill", "skills"),
        SkillKind::Command => ("command", "commands"),
    };
    let user_dir =
        user_dir(ctx, sub).map_or_else(|| format!("~/.claude/{sub}"), |d| d.display().to_string());
    // The file itself is the link: a copy goes where it is. A directory on the way is: a
    // copy in its place (a copy "into" it would go through it, out of the project).
    let instead = if outside.link == *file {
        format!(
            "Copy the file into {} instead of linking to it",
            file.parent().unwrap_or(&skill.dir).display()
        )
    } else {
        format!(
            "Replace the link {} with a directory of copies of what it leads to",
            outside.link.display()
        )
    };
    Some(ValidationError::with_code(
        format!(
            "Skill {name} cannot be loaded: it is a project {what}, and its file {} leads out of the project {}: the symbolic link {} takes it to {}. A project's {what} is read without a Read permission, so it may only use files inside the project. {instead}, or move the {what} to your own {sub} directory ({user_dir}).",
            file.display(),
            outside.project.display(),
            outside.link.display(),
            outside.target.display(),
        ),
        6,
    ))
}

/// The Read deny rule that covers `skill`'s file, its SKILL.md or command file (on its path
/// or the real path it was read from, [`SkillInfo::file`]), if one does: such a file is not
/// read into the conversation, as Read would not read it.
pub fn denied_skill_file(
    ctx: &ToolUseContext,
    skill: &SkillInfo,
) -> Option<tool_core::SourcedRule> {
    denied_file(ctx, &skill.path, &skill.file)
}

/// The Read deny rule of `ctx` that covers a file read without a Read permission, found at
/// `file` and read from `real`, if one does (on either path). The check of
/// [`denied_skill_file`], for other such files (the agent loop's agent definitions).
pub fn denied_file(
    ctx: &ToolUseContext,
    file: &Path,
    real: &Path,
) -> Option<tool_core::SourcedRule> {
    let engine = tool_perms::PermissionEngine::for_walking(ctx)?;
    engine
        .denied_by(file, tool_core::FileAccess::Read)
        .or_else(|| engine.denied_by(real, tool_core::FileAccess::Read))
}

/// Every skill in `roots`, first of each name only.
fn discover_in(roots: Vec<Root>) -> Vec<SkillInfo> {
    let mut seen = HashSet::new();
    let mut skills = Vec::new();
    for root in roots {
        let found: Vec<SkillInfo> = match root.kind {
            SkillKind::Skill => {
                let Ok(entries) = std::fs::read_dir(&root.dir) else {
                    continue;
                };
                let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
                dirs.sort();
                dirs.iter()
                    .filter_map(|dir| load_skill(dir, root.source))
                    .collect()
            }
            SkillKind::Command => command_files(&root.dir)
                .iter()
                .filter_map(|(name, file)| load_command(file, name, root.source))
                .collect(),
        };
        for skill in found {
            if seen.insert(skill.name.clone()) {
                skills.push(skill);
            }
        }
    }
    skills
}

/// The skill `name` (a leading `/` is ignored), by precedence: a skill, or a command file
/// (see [`SkillKind::Command`]).
pub fn find_skill(ctx: &ToolUseContext, name: &str) -> Option<SkillInfo> {
    find_in(search_roots(ctx, &tool_core::managed_settings_dir()), name)
}

/// The skill `name` in the first of `roots` that has it.
fn find_in(roots: Vec<Root>, name: &str) -> Option<SkillInfo> {
    let name = name.trim().trim_start_matches('/');
    if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
        return None;
    }
    roots.into_iter().find_map(|root| match root.kind {
        SkillKind::Skill => load_skill(&root.dir.join(name), root.source),
        // By the names the directory's files have, as listed: a name cannot climb out of it.
        SkillKind::Command => command_files(&root.dir)
            .into_iter()
            .find(|(found, _)| found == name)
            .and_then(|(found, file)| load_command(&file, &found, root.source)),
    })
}

/// The skill's text for the conversation: arguments and directory substituted, as Claude
/// Code substitutes them: `$ARGUMENTS[N]` and `$N` are the N-th argument (0-based, split as
/// a shell splits words, [`split_arguments`]), `$ARGUMENTS` all of them; when the body has
/// none of these, the arguments follow it as an `ARGUMENTS:` line. `${CLAUDE_SKILL_DIR}`
/// is the skill's directory and `${CLAUDE_SESSION_ID}` `session_id`. All are replaced in
/// one pass over the body as written: what is put in (an argument, a directory whose path
/// holds a `$`) is never read for placeholders again, and whether the body has an argument
/// placeholder is decided on the body as written. A skill's text starts with its base
/// directory; a command file's is its body alone.
pub fn render_skill(skill: &SkillInfo, args: Option<&str>, session_id: &str) -> String {
    let args = args.unwrap_or("").trim();
    let dir = skill.dir.to_string_lossy();
    let words = split_arguments(args);
    // Without arguments, `$1` is left as written (a skill's `awk '{print $1}'`);
    // `$ARGUMENTS[1]` is still a placeholder, and becomes empty.
    let (mut body, replaced) = substitute(
        &skill.body,
        &Substitutions {
            args,
            words: &words,
            names: &skill.argument_names,
            bare: !args.is_empty(),
            literals: &[
                ("{CLAUDE_SKILL_DIR}", &dir),
                ("{CLAUDE_SESSION_ID}", session_id),
            ],
        },
    );
    if !replaced && !args.is_empty() {
        body = format!("{}\n\nARGUMENTS: {args}", body.trim_end());
    }
    match skill.kind {
        SkillKind::Skill => format!(
            "Base directory for this skill: {}\n\n{}",
            skill.dir.display(),
            body.trim()
        ),
        SkillKind::Command => body.trim().to_owned(),
    }
}

/// `args` split into words as a shell splits them, for `$N`: whitespace separates words,
/// `'...'` keeps its text as written, `"..."` too but for the escapes `\"`, `\\`, `\$`,
/// `` \` `` (and a backslash before a line break, which goes), and outside quotes a
/// backslash keeps the next character as text (`a\ b` is one word). A `#` is text wherever
/// it is; unlike in a shell it starts no comment: `fix #12` is two arguments. With a quote that is
/// not closed, or a backslash at the end, the words are split on whitespace only, as
/// written.
pub fn split_arguments(args: &str) -> Vec<String> {
    shell_words(args).unwrap_or_else(|| args.split_whitespace().map(str::to_owned).collect())
}

/// [`split_arguments`]'s shell split; `None` for an unclosed quote or a final backslash.
fn shell_words(args: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    // The word being read; `Some("")` after an empty quoted word (`''`).
    let mut word: Option<String> = None;
    let mut chars = args.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => words.extend(word.take()),
            '\'' => {
                let word = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                let word = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('$' | '`' | '"' | '\\') => word.push(c),
                            '\n' => {}
                            c => {
                                word.push('\\');
                                word.push(c);
                            }
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                let next = chars.next()?;
                let word = word.get_or_insert_with(String::new);
                if next != '\n' {
                    word.push(next);
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

/// Whether `name` may name an argument (`$name`): letters, digits, `_` and `-`, not only
/// digits (`$1` is the second word).
fn is_argument_name(name: &str) -> bool {
    !name.is_empty()
        && !name.chars().all(|c| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// What [`substitute`] puts in for the placeholders of a skill's body.
struct Substitutions<'a> {
    /// The arguments as given (`$ARGUMENTS`).
    args: &'a str,
    /// The arguments split into words (`$ARGUMENTS[N]`, `$N`, `$NAME`).
    words: &'a [String],
    /// The frontmatter's names for the words by position (`$NAME`).
    names: &'a [String],
    /// Whether `$N` is a placeholder (only with arguments).
    bare: bool,
    /// Placeholders that are no argument placeholder, each as written after its `$`
    /// (`{CLAUDE_SKILL_DIR}`), with the text that replaces it.
    literals: &'a [(&'a str, &'a str)],
}

/// `body` with `$ARGUMENTS[N]` (and `$N` when `bare` is set) replaced by the N-th of
/// `words` (empty when there is none), `$NAME` for the N-th of `names` by the same word (a
/// name followed by a word character or `[` is no placeholder), `$ARGUMENTS` by `args`, and
/// each of `literals` by its text, in one pass (nothing put in is read again), and whether
/// an argument placeholder was replaced (a literal's does not count).
fn substitute(body: &str, with: &Substitutions<'_>) -> (String, bool) {
    let Substitutions {
        args,
        words,
        names,
        bare,
        literals,
    } = *with;
    let mut out = String::with_capacity(body.len());
    let mut replaced = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        // `${CLAUDE_SKILL_DIR}`, `${CLAUDE_SESSION_ID}`: their text as it is.
        if let Some((placeholder, text)) = literals.iter().find(|(p, _)| after.starts_with(p)) {
            out.push_str(text);
            rest = &after[placeholder.len()..];
            continue;
        }
        // `$ARGUMENTS[N]`: the N-th word.
        let indexed = after.strip_prefix("ARGUMENTS[").and_then(|inner| {
            let n = inner.chars().take_while(char::is_ascii_digit).count();
            (n > 0 && inner[n..].starts_with(']'))
                .then(|| (&inner[..n], "ARGUMENTS[".len() + n + 1))
        });
        // `$N` (with arguments only): the N-th word; `$1abc` is no placeholder.
        let bare_index = || {
            let n = after.chars().take_while(char::is_ascii_digit).count();
            let word_follows = after[n..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            (bare && n > 0 && !word_follows).then(|| (&after[..n], n))
        };
        // `$name`: the word at that name's position.
        let named = || {
            names.iter().enumerate().find_map(|(i, name)| {
                let tail = after.strip_prefix(name.as_str())?;
                let ends = !tail
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '[');
                ends.then_some((i, name.len()))
            })
        };
        if indexed.is_none()
            && let Some((i, skip)) = named()
        {
            out.push_str(words.get(i).map_or("", String::as_str));
            replaced = true;
            rest = &after[skip..];
        } else if let Some((digits, skip)) = indexed.or_else(bare_index)
            && let Ok(i) = digits.parse::<usize>()
        {
            out.push_str(words.get(i).map_or("", String::as_str));
            replaced = true;
            rest = &after[skip..];
        } else if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            // `$ARGUMENTS`: all of them, as given.
            out.push_str(args);
            replaced = true;
            rest = tail;
        } else {
            out.push('$');
            rest = after;
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
            // A SKILL.md is read into the conversation without a Read permission: not when a
            // Read deny rule covers it (a skill that is a symlink to a protected file), nor a
            // project's when a link takes it out of the project.
            Some(s) => refusal(ctx, name, &s).map_or(Ok(()), Err),
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
        // Checked again on the skill as read now: a link changed since validation.
        if let Some(refused) = refusal(&ctx, name, &skill) {
            return Err(ToolError::msg(refused.message));
        }
        let text = render_skill(&skill, input.args.as_deref(), ctx.session_id());
        let mut result = ToolResult::new(SkillOutput {
            success: true,
            command_name: skill.name.clone(),
            allowed_tools: skill.allowed_tools.clone(),
            model: skill.model.clone(),
        })
        .with_message(Message::User(vec![ContentBlock::text(text)]));
        // Claude Code runs the turn on the skill's model while the skill is active; here
        // the conversation keeps its model, which the user is told (not the model).
        if let Some(model) = &skill.model {
            result = result.with_message(Message::System(model_not_applied(&skill.name, model)));
        }
        Ok(result)
    }

    fn to_content(&self, output: &SkillOutput) -> ToolResultContent {
        ToolResultContent::Text(format!("Launching skill: {}", output.command_name))
    }
}

/// The notice for a skill `name` whose frontmatter asks for `model`, which is not applied
/// (names shown with control characters escaped).
fn model_not_applied(name: &str, model: &str) -> String {
    format!(
        "skill {} asks for the model `{}`, which is not applied: the conversation goes on with the session's model",
        listing_text(name),
        listing_text(model)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(body: &str) -> SkillInfo {
        SkillInfo {
            name: "s".into(),
            dir: PathBuf::from("/skills/s"),
            path: PathBuf::from("/skills/s/SKILL.md"),
            file: PathBuf::from("/skills/s/SKILL.md"),
            source: SkillSource::Project,
            kind: SkillKind::Skill,
            description: None,
            allowed_tools: None,
            model: None,
            argument_hint: None,
            argument_names: Vec::new(),
            when_to_use: None,
            disable_model_invocation: false,
            body: body.into(),
            warnings: Vec::new(),
        }
    }

    /// A managed skill wins over the user's, the user's over the project's.
    #[test]
    fn managed_then_personal_then_project() {
        let tmp = tempfile::tempdir().unwrap();
        let write = |root: &Path, name: &str, body: &str| {
            let dir = root.join(".claude/skills").join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("SKILL.md"), body).unwrap();
        };
        let (managed, home, project) = (
            tmp.path().join("etc"),
            tmp.path().join("home"),
            tmp.path().join("project"),
        );
        std::fs::create_dir_all(project.join(".git")).unwrap();
        for (root, body) in [
            (&managed, "managed"),
            (&home, "user"),
            (&project, "project"),
        ] {
            write(root, "all", body);
        }
        write(&home, "mine", "user");
        write(&project, "mine", "project");
        write(&project, "ours", "project");
        let ctx = ToolUseContext::new(&project).with_home(Some(home.clone()));
        let roots = || roots_with_managed(&ctx, &managed);
        assert_eq!(
            roots().into_iter().map(|(_, s)| s).collect::<Vec<_>>(),
            [
                SkillSource::Managed,
                SkillSource::User,
                SkillSource::Project
            ]
        );
        let search = || search_roots(&ctx, &managed);
        let found = |name: &str| find_in(search(), name).map(|k| (k.source, k.body));
        assert_eq!(found("all"), Some((SkillSource::Managed, "managed".into())));
        assert_eq!(found("mine"), Some((SkillSource::User, "user".into())));
        assert_eq!(
            found("ours"),
            Some((SkillSource::Project, "project".into()))
        );
        let listed: Vec<(String, SkillSource)> = discover_in(search())
            .into_iter()
            .map(|k| (k.name, k.source))
            .collect();
        assert_eq!(
            listed,
            [
                ("all".to_owned(), SkillSource::Managed),
                ("mine".to_owned(), SkillSource::User),
                ("ours".to_owned(), SkillSource::Project),
            ]
        );
    }

    /// The walk of a commands directory reads at most `MAX_MARKDOWN_ENTRIES` entries, of
    /// every kind (here files that are no command files): what was read up to then is used
    /// (`z.md`, read with the top directory), and a directory reached after that is not
    /// read (`b/late.md` is not found).
    #[test]
    fn the_commands_walk_stops_after_its_entry_budget() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("commands");
        let filler = root.join("a");
        std::fs::create_dir_all(&filler).unwrap();
        for i in 0..MAX_MARKDOWN_ENTRIES {
            std::fs::write(filler.join(format!("f{i}.txt")), "").unwrap();
        }
        std::fs::create_dir_all(root.join("b")).unwrap();
        std::fs::write(root.join("b/late.md"), "late").unwrap();
        std::fs::write(root.join("z.md"), "z").unwrap();
        let names: Vec<String> = command_files(&root).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["z"]);
    }

    #[test]
    fn arguments_are_substituted_by_position_and_whole() {
        let render = |body: &str, args: &str| {
            render_skill(&skill(body), Some(args), "sess-1")
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
        // An argument's own text is not substituted again.
        assert_eq!(
            render("first=[$0] all=[$ARGUMENTS]", "'$ARGUMENTS' z"),
            "first=[$ARGUMENTS] all=['$ARGUMENTS' z]"
        );
        assert_eq!(render("$ARGUMENTS", "$1 x"), "$1 x");
        assert_eq!(render("in ${CLAUDE_SESSION_ID}", ""), "in sess-1");
    }

    /// A home with a credentials file and a skill of its own, and a project (a git
    /// repository) beside it; the context's session starts in the project.
    fn linked_setup() -> (tempfile::TempDir, PathBuf, PathBuf, ToolUseContext) {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let (home, project) = (root.join("home"), root.join("work/project"));
        std::fs::create_dir_all(home.join(".aws")).unwrap();
        std::fs::write(
            home.join(".aws/credentials"),
            "aws_secret_access_key=abc123\n",
        )
        .unwrap();
        std::fs::create_dir_all(project.join(".git")).unwrap();
        let ctx = ToolUseContext::new(&project).with_home(Some(home.clone()));
        (tmp, home, project, ctx)
    }

    /// Runs Skill as the pipeline does (validate, then call): the tool_result's text and the
    /// message it adds, or the refusal.
    async fn load(ctx: &ToolUseContext, name: &str) -> Result<(String, String), String> {
        let input = serde_json::json!({ "skill": name });
        tool_core::Tool::validate_input(&Skill, &input, ctx)
            .await
            .map_err(|e| e.message)?;
        let result = tool_core::Tool::call(&Skill, input, ctx.clone(), ProgressSender::none())
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

    /// A project skill whose SKILL.md (or whose directory) is a symbolic link leading out of
    /// the project is refused, with the skill, the link and where it leads named and what to
    /// do instead, and is not listed: a cloned repository cannot read `~/.aws/credentials`
    /// into the conversation through a skill without any Read permission. A link that stays
    /// inside the project, and a link in the user's own skills, still load.
    #[tokio::test]
    async fn a_project_skill_linked_outside_the_project_is_refused() {
        let (_tmp, home, project, ctx) = linked_setup();
        let skills = project.join(".claude/skills");
        // SKILL.md a relative link out of the project, as a repository would ship it.
        std::fs::create_dir_all(skills.join("helper")).unwrap();
        std::os::unix::fs::symlink(
            "../../../../../home/.aws/credentials",
            skills.join("helper/SKILL.md"),
        )
        .unwrap();
        // The skill's directory a link out of the project.
        let outside = home.join("stash");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("SKILL.md"), "stash secret body\n").unwrap();
        std::os::unix::fs::symlink(&outside, skills.join("stash")).unwrap();
        // A link inside the project.
        std::fs::create_dir_all(project.join("docs")).unwrap();
        std::fs::write(
            project.join("docs/inner.md"),
            "---\ndescription: in\n---\ninner body\n",
        )
        .unwrap();
        std::fs::create_dir_all(skills.join("inner")).unwrap();
        std::os::unix::fs::symlink("../../../docs/inner.md", skills.join("inner/SKILL.md"))
            .unwrap();
        // The user's own skill may link anywhere.
        let mine = home.join(".claude/skills/mine");
        std::fs::create_dir_all(&mine).unwrap();
        std::fs::write(project.join("docs/mine.md"), "my body\n").unwrap();
        std::os::unix::fs::symlink(project.join("docs/mine.md"), mine.join("SKILL.md")).unwrap();

        let err = load(&ctx, "helper").await.unwrap_err();
        let file = skills.join("helper/SKILL.md");
        for part in [
            "Skill helper cannot be loaded".to_owned(),
            file.display().to_string(),
            home.join(".aws/credentials").display().to_string(),
            project.display().to_string(),
            "Copy the file into".to_owned(),
            home.join(".claude/skills").display().to_string(),
        ] {
            assert!(err.contains(&part), "{part:?} not in: {err}");
        }
        assert!(!err.contains("abc123"), "{err}");

        let err = load(&ctx, "stash").await.unwrap_err();
        assert!(
            err.starts_with("Skill stash cannot be loaded")
                && err.contains(&format!("symbolic link {}", skills.join("stash").display()))
                && err.contains(&outside.join("SKILL.md").display().to_string()),
            "{err}"
        );
        assert!(!err.contains("stash secret body"), "{err}");

        let (text, added) = load(&ctx, "inner").await.unwrap();
        assert_eq!(text, "Launching skill: inner");
        assert!(added.ends_with("inner body"), "{added}");
        let (_, added) = load(&ctx, "mine").await.unwrap();
        assert!(added.ends_with("my body"), "{added}");

        let listed: Vec<String> = discover_skills(&ctx).into_iter().map(|k| k.name).collect();
        assert_eq!(listed, ["mine", "inner"]);
    }

    /// The checks judge the file the body was read from, not the link as it is when they
    /// run: a project skill read while its SKILL.md linked to `~/.aws/credentials`, the link
    /// then pointed back inside the project (as Skill's call finds the skill, then checks
    /// it), is still refused; and one read while it linked to a file a deny rule covers is
    /// still denied after the link moved to a file none does.
    #[test]
    fn the_checks_judge_the_file_the_body_was_read_from() {
        let (_tmp, home, project, ctx) = linked_setup();
        let dir = project.join(".claude/skills/helper");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(project.join("inner.md"), "inner body\n").unwrap();
        let link = dir.join("SKILL.md");
        std::os::unix::fs::symlink(home.join(".aws/credentials"), &link).unwrap();
        let skill = load_skill(&dir, SkillSource::Project).unwrap();
        assert!(skill.body.contains("abc123"), "{}", skill.body);
        assert_eq!(skill.file, home.join(".aws/credentials"));
        // The link is flipped back inside once the file was read.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink("../../../inner.md", &link).unwrap();
        let outside = project_skill_link_outside(&skill).expect("the file read was outside");
        assert_eq!(outside.target, home.join(".aws/credentials"));
        assert!(refusal(&ctx, "helper", &skill).is_some());

        // A deny rule on the file read, the link moved to a file no rule covers.
        std::fs::write(project.join(".env"), "TOKEN=abc123\n").unwrap();
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink("../../../.env", &link).unwrap();
        let mut permission = ctx.permission().clone();
        permission.deny.push(tool_core::SourcedRule {
            source: tool_core::RuleSource::UserSettings,
            rule: "Read(./.env)".into(),
        });
        let ctx = ctx.with_permission(permission);
        let skill = load_skill(&dir, SkillSource::Project).unwrap();
        assert!(skill.body.contains("TOKEN=abc123"), "{}", skill.body);
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink("../../../inner.md", &link).unwrap();
        let denied = denied_skill_file(&ctx, &skill).expect("the file read is denied");
        assert_eq!(denied.rule, "Read(./.env)");
    }

    /// The Read deny rules still hold for a link inside the project: a SKILL.md that links to
    /// a file of the project a deny rule covers is refused with that rule.
    #[tokio::test]
    async fn a_skill_linked_to_a_denied_file_of_the_project_is_refused() {
        let (_tmp, _home, project, ctx) = linked_setup();
        std::fs::write(project.join(".env"), "TOKEN=abc123\n").unwrap();
        let dir = project.join(".claude/skills/env");
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink("../../../.env", dir.join("SKILL.md")).unwrap();
        let (_, added) = load(&ctx, "env").await.unwrap();
        assert!(added.ends_with("TOKEN=abc123"), "{added}");
        let mut permission = ctx.permission().clone();
        permission.deny.push(tool_core::SourcedRule {
            source: tool_core::RuleSource::UserSettings,
            rule: "Read(./.env)".into(),
        });
        let ctx = ctx.with_permission(permission);
        let err = load(&ctx, "env").await.unwrap_err();
        assert!(
            err.contains("covered by the deny rule Read(./.env)"),
            "{err}"
        );
    }

    /// The frontmatter's `arguments` name the words by position, as in Claude Code:
    /// `$issue` is the first; `$issues` and `$issue[0]` are no placeholders; a name with no
    /// word is empty.
    #[test]
    fn named_arguments_are_substituted() {
        let named = SkillInfo {
            argument_names: vec!["issue".into(), "branch".into(), "extra".into()],
            ..skill(
                "Fix $issue on $branch ($extra) in ${CLAUDE_SESSION_ID}; $issues $issue[0] $ARGUMENTS[1]",
            )
        };
        let text = render_skill(&named, Some("42 'hot fix'"), "sess-1");
        assert!(
            text.ends_with("Fix 42 on hot fix () in sess-1; $issues $issue[0] hot fix"),
            "{text}"
        );
        // Named placeholders count as placeholders: the arguments are not appended.
        assert!(!text.contains("ARGUMENTS:"), "{text}");
    }
}
