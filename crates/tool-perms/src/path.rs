//! Path rules (`Read(...)`, `Edit(...)`) with gitignore semantics, working directories,
//! symlink resolution and protected paths.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use tool_core::{RuleBehavior, RuleSource, normalize_lexically};
use unicode_normalization::UnicodeNormalization as _;

/// The directories that anchor path patterns, per Claude Code's table: `/x` is relative to
/// the settings source's root, bare and `./x` to the session's original cwd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRoots {
    /// The session's original working directory.
    pub cwd: PathBuf,
    /// The user's home directory (`~/x`).
    pub home: Option<PathBuf>,
    /// The project root (project and local settings' `/x`); defaults to `cwd`.
    pub project_root: Option<PathBuf>,
    /// The user config dir (`~/.claude` or `$CLAUDE_CONFIG_DIR`; user settings' `/x`).
    pub user_config_dir: Option<PathBuf>,
    /// The directory of the `--settings` file (flag settings' `/x`); defaults to `cwd`.
    pub flag_settings_dir: Option<PathBuf>,
    /// The settings files this session reads: the user's `settings.json` (whether it exists
    /// yet or not), each `--settings` file, the managed ones. Writing one is a safety check
    /// wherever it is (Claude Code's `isClaudeSettingsPath`): under `$CLAUDE_CONFIG_DIR` or
    /// given to `--settings` it is not in a `.claude` directory ([`protected_reason`]).
    pub settings_files: Vec<PathBuf>,
    /// Directories whose files this session reads as settings (the managed
    /// `managed-settings.d`), whether they exist yet or not: writing the directory or a file
    /// directly in it is a safety check, as for [`settings_files`](Self::settings_files) (a
    /// new drop-in would be managed settings, the highest precedence).
    pub settings_dirs: Vec<PathBuf>,
}

impl PathRoots {
    /// Why writing `path` (or `resolved`, where its links lead) is a safety check because it
    /// is one of the [`settings_files`](Self::settings_files), if it is.
    pub fn settings_file_reason(&self, path: &Path, resolved: &Path) -> Option<String> {
        let same = |a: &Path, b: &Path| {
            if CASE_INSENSITIVE_FILE_SYSTEMS {
                a.to_string_lossy().to_lowercase() == b.to_string_lossy().to_lowercase()
            } else {
                a == b
            }
        };
        let variants = |f: &PathBuf| [normalize_lexically(f), resolve_symlinks(f)];
        let is_file = self
            .settings_files
            .iter()
            .flat_map(variants)
            .any(|f| same(&f, path) || same(&f, resolved));
        let in_dir = || {
            self.settings_dirs.iter().flat_map(variants).any(|d| {
                [path, resolved]
                    .into_iter()
                    .any(|p| same(&d, p) || p.parent().is_some_and(|parent| same(&d, parent)))
            })
        };
        (is_file || in_dir())
            .then(|| {
                format!(
                    "Claude requested permissions to write to {}, which is a settings file of this session (its settings or its MCP servers).",
                    path.display()
                )
            })
    }

    /// Why writing `path` (or `resolved`) is a safety check because it is one of what every
    /// session reads from the user's configuration directory ([`CONFIG_DIR_ENTRIES`]: its
    /// settings, `CLAUDE.md`, skills, agents, commands, hooks, plugins) when that directory
    /// is not named `.claude`, which [`protected_reason`] covers whole by name:
    /// `$CLAUDE_CONFIG_DIR`, or the dotfiles folder a `~/.claude` link leads to. Only those
    /// entries, and the directory itself and its parents (moving it away or linking another in
    /// its place): such a directory may be the home directory itself. A session working inside
    /// the directory may write what is in its own cwd (its files are the work then).
    pub fn config_dir_reason(&self, path: &Path, resolved: &Path) -> Option<String> {
        let dir = self.user_config_dir.as_deref()?;
        let named_claude = |d: &Path| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case(".claude"))
        };
        let protects = |d: &Path, p: &Path| {
            // The directory itself or a parent of it (moved away, removed, a link made in
            // its place: the next session would read another), or an entry sessions read.
            let replaces_it = d.starts_with(p);
            let entry = p
                .strip_prefix(d)
                .ok()
                .and_then(|rest| rest.components().next())
                .map(|c| c.as_os_str().to_string_lossy().to_lowercase());
            (replaces_it || entry.is_some_and(|e| CONFIG_DIR_ENTRIES.contains(&e.as_str())))
                && !(self.cwd.starts_with(d) && p.starts_with(&self.cwd))
        };
        [normalize_lexically(dir), resolve_symlinks(dir)]
            .iter()
            .filter(|d| !named_claude(d))
            .any(|d| protects(d, path) || protects(d, resolved))
            .then(|| {
                format!(
                    "Claude requested permissions to write to {}, which is in the user's configuration directory ({}).",
                    path.display(),
                    dir.display()
                )
            })
    }

    fn source_root(&self, source: RuleSource) -> PathBuf {
        match source {
            RuleSource::ProjectSettings => self
                .project_root
                .clone()
                .unwrap_or_else(|| self.cwd.clone()),
            // The local file is read at the root of the project's git repository
            // (`tool_core::local_settings_path`): its `/x` is anchored where it lives, so one
            // deny rule guards the same place wherever in the repository a session starts.
            RuleSource::LocalSettings => {
                let project = self.project_root.as_ref().unwrap_or(&self.cwd);
                tool_core::git_root(project)
                    .unwrap_or(project)
                    .to_path_buf()
            }
            RuleSource::UserSettings => self
                .user_config_dir
                .clone()
                .or_else(|| self.home.as_ref().map(|h| h.join(".claude")))
                .unwrap_or_else(|| self.cwd.clone()),
            RuleSource::FlagSettings => self
                .flag_settings_dir
                .clone()
                .unwrap_or_else(|| self.cwd.clone()),
            RuleSource::PolicySettings
            | RuleSource::CliArg
            | RuleSource::Command
            | RuleSource::Session => self.cwd.clone(),
        }
    }

    /// The root directory and the gitignore line a path pattern becomes (with a warning
    /// when it is not read as written), or why it cannot.
    pub fn anchor(
        &self,
        pattern: &str,
        source: RuleSource,
        behavior: RuleBehavior,
    ) -> Result<Anchored, String> {
        let pattern = pattern.trim();
        if pattern.is_empty() {
            return Err("empty path pattern".into());
        }
        let pattern = pattern.to_owned();
        let (root, mut line) = if let Some(rest) = pattern.strip_prefix("//") {
            (
                PathBuf::from("/"),
                format!("/{}", rest.trim_start_matches('/')),
            )
        } else if pattern == "~" {
            (
                self.home
                    .clone()
                    .ok_or("`~` used but the home directory is unknown")?,
                "**".to_owned(),
            )
        } else if let Some(rest) = pattern.strip_prefix("~/") {
            (
                self.home
                    .clone()
                    .ok_or("`~` used but the home directory is unknown")?,
                format!("/{rest}"),
            )
        } else if pattern.starts_with('/') {
            (self.source_root(source), pattern.clone())
        } else {
            let explicit = pattern.starts_with("./");
            let mut rest = pattern.trim_start_matches("./").to_owned();
            // `..` alone is the parent directory: what is in it and below.
            if rest == ".." || rest == "../" {
                rest = "../**".to_owned();
            }
            // A pattern that climbs (`../x`) names a place, never a name at any depth; nor
            // does `.` (the cwd itself).
            let itself = rest.is_empty() || rest == ".";
            // A name at any depth: a bare name (`.env`), or a pattern that says so with a
            // leading `**/` (`**/.env`, the same rule in gitignore; `**/secrets/*.pem`).
            // Written with `./`, it is read as gitignore reads what follows: a name alone
            // (`./.env`) matches at any depth, a path (`./secrets/**`) only where it says.
            let name_part = if explicit {
                rest.trim_end_matches('/')
            } else {
                // `secrets/` is a name as `secrets/**` is (gitignore: a directory of that
                // name at any depth).
                rest.trim_end_matches("/**").trim_end_matches('/')
            };
            // After `./`, a pattern of wildcards only (`./**`, `./**/*`, `./*`) names no name:
            // it is everything in the cwd's tree, as Claude Code reads it, not every path on
            // disk (a bare `**` or `*` still matches anywhere, as `**/…` does).
            let wildcards_only = explicit
                && name_part
                    .split('/')
                    .all(|segment| matches!(segment, "*" | "**"));
            let any_depth = !itself
                && !wildcards_only
                && !rest.starts_with("../")
                && (rest.starts_with("**/") || !name_part.contains('/'));
            // Deliberate: a deny/ask for a name at any depth (`Read(.env)`) applies anywhere on
            // disk, not only under the cwd; an allow stays under the cwd.
            if any_depth && behavior != RuleBehavior::Allow {
                (PathBuf::from("/"), rest)
            } else if explicit && !any_depth && !itself && !rest.starts_with("../") {
                // Anchored for good: a deny or ask rule's `/**` is dropped below, which
                // would leave a name alone.
                (self.cwd.clone(), format!("/{rest}"))
            } else {
                (self.cwd.clone(), rest)
            }
        };
        // `..` leading the pattern climbs from its root (`Read(../secrets/**)` from the cwd):
        // gitignore patterns cannot hold `..`, so it would match nothing.
        let mut root = root;
        while let Some(rest) = line
            .strip_prefix("../")
            .or_else(|| line.strip_prefix("/../"))
        {
            root = normalize_lexically(&self.cwd.join(&root).join(".."));
            line = format!("/{}", rest.trim_start_matches('/'));
        }
        if line.split('/').any(|segment| segment == "..") {
            return Err(format!(
                "`..` may only start a path pattern (`../dir/**`): in `{pattern}` it would never match"
            ));
        }
        let mut warning = None;
        if matches!(line.trim_start_matches('/'), "" | ".") {
            // The pattern names its base directory itself (`./`, `.`, `/`, `//`, `~/`), which
            // a gitignore line never matches (an empty line is skipped, `.` is no path's
            // name): Claude Code's rule silently does nothing. A deny or ask rule is read as
            // the directory and everything in it, as it was surely meant; an allow rule keeps
            // matching nothing (granting more than Claude Code would is not ours to decide).
            if behavior == RuleBehavior::Allow {
                warning = Some(format!(
                    "`{pattern}` names a directory itself, which a path pattern never matches: this allow rule matches nothing (as in Claude Code); end the directory with `/**` to allow everything in it"
                ));
                line = String::new();
            } else {
                warning = Some(format!(
                    "`{pattern}` names a directory itself, which a path pattern never matches: read as that directory and everything in it (`/**`)"
                ));
                line = "**".to_owned();
            }
        } else {
            // An empty or `.` segment (`secrets//key`, `src/./x`): the paths matched are
            // lexically normal and never hold one, so the rule as written matches nothing. A
            // deny or ask rule is read without it, as it was surely meant; an allow rule keeps
            // matching nothing (as in Claude Code). A trailing `/` (directories only) stays.
            let body = line.trim_start_matches('/');
            // A doubled slash at the start (`~//.ssh/**`) is an empty segment too.
            let doubled_lead = line.len() - body.len() > 1;
            let lead = if body.len() < line.len() { "/" } else { "" };
            let (inner, trail) = match body.strip_suffix('/') {
                Some(inner) => (inner, "/"),
                None => (body, ""),
            };
            if doubled_lead || inner.split('/').any(|s| s.is_empty() || s == ".") {
                if behavior == RuleBehavior::Allow {
                    warning = Some(format!(
                        "an empty or `.` segment never matches (paths are compared without them): this allow rule `{pattern}` matches nothing (as in Claude Code); write it without"
                    ));
                } else {
                    let kept: Vec<&str> = inner
                        .split('/')
                        .filter(|s| !s.is_empty() && *s != ".")
                        .collect();
                    let cleaned = if kept.is_empty() {
                        "**".to_owned()
                    } else {
                        format!("{lead}{}{trail}", kept.join("/"))
                    };
                    warning = Some(format!(
                        "an empty or `.` segment never matches (paths are compared without them): `{pattern}` is read without its empty and `.` segments"
                    ));
                    line = cleaned;
                }
            }
        }
        if behavior != RuleBehavior::Allow
            && let Some(stripped) = line.strip_suffix("/**")
            && !stripped.is_empty()
            && stripped != "/"
        {
            line = stripped.to_owned();
        }
        if line.starts_with('!') || line.starts_with('#') {
            line.insert(0, '\\');
        }
        if warning.is_none() && looks_like_alternation(&pattern) {
            warning = Some(format!(
                "braces are literal in a path rule (as in Claude Code and gitignore), not `{{a,b}}` alternatives: `{pattern}` names a path with braces in it; write one rule per alternative"
            ));
        }
        if warning.is_none() {
            warning = matches_other_than_meant(&pattern);
        }
        // As the paths it is matched against: absolute and lexically normal (a home of
        // `/h//u` or `/h/u/.` would not prefix them, and the matcher asserts it does), in
        // Unicode NFC (a rule typed in NFD would match nothing).
        let root = nfc(&normalize_lexically(&self.cwd.join(root)));
        let line = line.nfc().collect();
        Ok(Anchored {
            root,
            line,
            warning,
        })
    }

    /// For a cwd-relative deny or ask rule that names a name at any depth (`sdir`, `./sdir`,
    /// `sdir/`, `sdir/**`, `**/sdir`; anchored at `/` by [`anchor`](Self::anchor)), the same
    /// name at the rule's root, the cwd, as an anchored line (`<cwd>`, `/sdir`): what
    /// [`resolved_anchor`] follows through a link, so that the rule also covers where a
    /// link of that name in the cwd leads, as `./sdir/**` does. Deny and ask rules ignore
    /// case, so an entry of the cwd whose name differs from the rule's only in case (`SDIR`
    /// for the link `sdir`) is named too, found with one bounded listing of the cwd. Empty
    /// for any other rule.
    pub fn name_at_cwd(&self, pattern: &str, anchored: &Anchored) -> Vec<(PathBuf, String)> {
        /// Entries of the cwd looked at for a name in another case.
        const MAX_CWD_ENTRIES: usize = 10_000;
        let pattern = pattern.trim();
        if pattern.starts_with(['/', '~']) || anchored.root != Path::new("/") {
            return Vec::new();
        }
        let line = anchored.line.strip_prefix("**/").unwrap_or(&anchored.line);
        let name = line
            .strip_suffix("/**")
            .or_else(|| line.strip_suffix('/'))
            .unwrap_or(line);
        let suffix = &line[name.len()..];
        // Only a literal name can be a link's (a glob is matched at any depth as it is).
        let Some(literal) = literal_segment(name).filter(|n| !n.is_empty() && !name.contains('/'))
        else {
            return Vec::new();
        };
        let root = nfc(&normalize_lexically(&self.cwd));
        let mut out = vec![(root.clone(), format!("/{line}"))];
        let fold = |n: &str| fold_case(n).to_ascii_lowercase();
        let folded = fold(&literal);
        if let Ok(entries) = std::fs::read_dir(&root) {
            for entry in entries.flatten().take(MAX_CWD_ENTRIES) {
                let Some(entry_name) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                if entry_name != literal && fold(&entry_name) == folded {
                    out.push((
                        root.clone(),
                        format!("/{}{suffix}", escape_glob(&entry_name)),
                    ));
                }
            }
        }
        out
    }
}

/// A path pattern anchored: the gitignore `line` it is matched as, below `root`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchored {
    /// The directory the line is relative to (absolute, lexically normal, NFC).
    pub root: PathBuf,
    /// The gitignore line.
    pub line: String,
    /// Why the pattern is not read as written, if it is not (the rule is kept).
    pub warning: Option<String>,
}

/// `text` with the characters a gitignore line gives a meaning (`[ ] * ? { } \ !`) escaped
/// with a backslash, so that it matches itself only (`app/[slug]` is not a character class).
pub fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '[' | ']' | '*' | '?' | '{' | '}' | '\\' | '!') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `line` with its braces escaped where they are not already: in a permission rule, as in
/// a gitignore file (git's own and node `ignore`'s, which Claude Code matches with), `{a,b}`
/// is no alternation but those characters, and a deny rule naming a folder called
/// `{{cookiecutter.slug}}` must reach that folder. (The `ignore` crate's matcher reads
/// braces as alternatives.) A brace inside a `[...]` class is left as it is: it is literal
/// there already.
fn literal_braces(line: &str) -> String {
    if !line.contains(['{', '}']) {
        return line.to_owned();
    }
    let mut out = String::with_capacity(line.len() + 4);
    let mut chars = line.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` first in the class (after a negation) is one of its characters.
                if let Some(&neg) = chars.peek()
                    && (neg == '!' || neg == '^')
                {
                    out.push(neg);
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push(']');
                    chars.next();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '{' | '}' if !in_class => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Why a path rule as written surely matches other than what it was meant to, when it does:
/// a variable, which is not expanded (`$HOME/.ssh/**` names a directory called `$HOME`); a
/// character that shows nothing (`.env` with a zero-width space matches no `.env`); a `[…]`
/// class with a letter beyond ASCII, which matches one byte, never that letter.
fn matches_other_than_meant(pattern: &str) -> Option<String> {
    if pattern.chars().any(tool_core::is_hidden_char) {
        return Some(format!(
            "`{}` holds a character that shows nothing (escaped here), which the path meant surely does not have: as written, the rule matches no such path",
            tool_core::escape_hidden(pattern)
        ));
    }
    let variable = pattern.match_indices('$').any(|(i, _)| {
        pattern[i + 1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '{')
    });
    if variable {
        return Some(format!(
            "variables are not expanded in a path rule: `{pattern}` names a path with a `$` in it; write `~/…` for the home, or the path itself"
        ));
    }
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            c if in_class && !c.is_ascii() => {
                return Some(format!(
                    "a `[…]` class matches one byte, so `{c}` in `{pattern}` (a letter beyond ASCII) matches no name that has it; write the name in full, or `*` in its place"
                ));
            }
            _ => {}
        }
    }
    None
}

/// Whether `pattern` holds an unescaped brace group with a comma outside a `[...]` class
/// (`*.{pem,key}`): written as shell or glob alternatives, which a path rule reads as the
/// characters themselves ([`literal_braces`]).
fn looks_like_alternation(pattern: &str) -> bool {
    let mut chars = pattern.chars();
    let (mut in_class, mut open, mut comma) = (false, false, false);
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '{' if !in_class => (open, comma) = (true, false),
            ',' if open && !in_class => comma = true,
            '}' if open && !in_class => {
                if comma {
                    return true;
                }
                open = false;
            }
            _ => {}
        }
    }
    false
}

/// A segment of a gitignore line read as a literal name (backslash escapes undone), or
/// `None` when it holds a glob character.
fn literal_segment(segment: &str) -> Option<String> {
    let mut name = String::with_capacity(segment.len());
    let mut chars = segment.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => name.push(chars.next()?),
            '*' | '?' | '[' => return None,
            c => name.push(c),
        }
    }
    Some(name)
}

/// Whether this platform's file systems ignore case by default (macOS, Windows).
const CASE_INSENSITIVE_FILE_SYSTEMS: bool = cfg!(any(target_os = "macos", windows));

/// `path` below `root`: the rest of it when `root` is a prefix of it, component by
/// component, ignoring case when `fold`.
fn strip_root<'p>(path: &'p Path, root: &Path, fold: bool) -> Option<&'p Path> {
    if let Ok(relative) = path.strip_prefix(root) {
        return Some(relative);
    }
    if !fold {
        return None;
    }
    let mut rest = path.components();
    for want in root.components() {
        let got = rest.next()?;
        let lower = |c: std::path::Component<'_>| c.as_os_str().to_string_lossy().to_lowercase();
        if lower(got) != lower(want) {
            return None;
        }
    }
    Some(rest.as_path())
}

/// For a deny or ask rule, the same rule where its pattern starts from once symlinks are
/// resolved: the root joined with the pattern's literal leading directories (`/link/**`
/// starts at `<root>/link`, `//var/run/x/*.pem` at `/var/run/x`, `~/**` at the home
/// directory) is resolved (canonicalized where it exists), and the rest of the pattern kept.
/// `Ok(None)` when resolving changes nothing. The path a call names and its resolved target
/// are both checked, but the rule itself was written through the link: without this,
/// `Read(//var/run/secrets/**)` (`/var/run -> /run`) would miss `/run/secrets/token`.
///
/// Not resolved (`Ok(None)`): a start through `/proc` or `/dev/fd`, which names what the
/// process opening it sees (here: toolwright's own cwd and root, so that
/// `Read(//proc/self/cwd/**)` would deny the whole project and `Read(//proc/self/root/*)`
/// every path); a path through `/proc` is judged per call instead
/// ([`through_proc`]). Refused, with the warning as `Err`: a resolved start that is `/` or
/// holds the link itself (a link to `/` or to `..` would turn `Edit(/link/**)` into a rule
/// for everything, or for the whole project); a start that is merely elsewhere (a home
/// directory behind a link) is resolved.
pub fn resolved_anchor(root: &Path, line: &str) -> Result<Option<(PathBuf, String)>, String> {
    let (body, dir_only) = match line.strip_suffix('/') {
        Some(body) => (body, "/"),
        None => (line, ""),
    };
    if body.is_empty() {
        return Ok(None);
    }
    // gitignore: a line with a slash (not only at the end) is matched from the root; one
    // without matches a name at any depth below it.
    let anchored = body.contains('/');
    let mut base = root.to_path_buf();
    let mut remainder = body.to_owned();
    if anchored {
        let segments: Vec<&str> = body.trim_start_matches('/').split('/').collect();
        let mut literal = 0;
        for segment in &segments {
            match literal_segment(segment) {
                Some(name) if !name.is_empty() && name != "." && name != ".." => {
                    base.push(name);
                    literal += 1;
                }
                _ => break,
            }
        }
        remainder = segments[literal..].join("/");
    }
    let resolved = nfc(&resolve_symlinks(&base));
    if resolved == base {
        return Ok(None);
    }
    let per_process = |p: &Path| p.starts_with("/proc") || p.starts_with("/dev/fd");
    if per_process(&base) || per_process(&resolved) || through_proc(&base) {
        return Ok(None);
    }
    // A link to `/`, or to a directory above where the link itself is (`..`, the home
    // directory from inside the project), would make the rule cover what holds it. A base
    // that is a link elsewhere (a home directory behind `/home/u -> /nfs/u`, `/var/run ->
    // /run`) is the same place under another name and keeps its rule.
    let above_itself = resolved.parent().is_none()
        || base
            .parent()
            .is_some_and(|parent| nfc(&resolve_symlinks(parent)).starts_with(&resolved));
    if above_itself {
        return Err(format!(
            "written through a link to `{}`, which holds the link itself: not also applied there (it would cover far more than the rule names); only paths written through the link match",
            resolved.display(),
        ));
    }
    if remainder.is_empty() {
        // The whole pattern is literal: the resolved path itself (and what is below it).
        let Some((name, parent)) = resolved
            .file_name()
            .and_then(|n| n.to_str())
            .zip(resolved.parent())
        else {
            return Ok(None);
        };
        return Ok(Some((
            parent.to_path_buf(),
            format!("/{}{dir_only}", escape_glob(name)),
        )));
    }
    let line = if anchored {
        format!("/{remainder}{dir_only}")
    } else {
        format!("{remainder}{dir_only}")
    };
    Ok(Some((resolved, line.nfc().collect())))
}

struct Group {
    root: PathBuf,
    matcher: Gitignore,
    lines: HashMap<String, usize>,
    first: usize,
}

impl Group {
    /// The group of `lines` (rule index, line; not empty), compiled into `matcher`.
    fn new(root: &Path, matcher: Gitignore, lines: &[(usize, String)]) -> Self {
        let mut map = HashMap::new();
        for (idx, line) in lines {
            map.entry(line.clone()).or_insert(*idx);
        }
        Self {
            root: root.to_path_buf(),
            matcher,
            lines: map,
            first: lines.first().map_or(0, |(idx, _)| *idx),
        }
    }
}

/// A set of path patterns compiled into one gitignore matcher per root.
#[derive(Default)]
pub struct PathRuleSet {
    groups: Vec<Group>,
    /// Deny or ask rules: they ignore case, and `**` covers its root too.
    restricting: bool,
}

impl std::fmt::Debug for PathRuleSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PathRuleSet")
            .field("groups", &self.groups.len())
            .finish()
    }
}

impl PathRuleSet {
    /// Builds from `(rule index, root, line)`; returns the set and `(rule index, error)` for
    /// lines that are not valid globs. `restricting` (deny and ask rules): the lines match the path below
    /// their root whatever its case (as node `ignore`, which Claude Code uses, does by
    /// default, and as a case-insensitive file system opens them): for deny and ask rules.
    /// The root itself is matched exactly.
    pub fn build(
        entries: &[(usize, PathBuf, String)],
        restricting: bool,
    ) -> (Self, Vec<(usize, String)>) {
        let mut by_root: Vec<(PathBuf, Vec<(usize, String)>)> = Vec::new();
        for (idx, root, line) in entries {
            let line = literal_braces(line);
            let line = if restricting { fold_case(&line) } else { line };
            match by_root.iter_mut().find(|(r, _)| r == root) {
                Some((_, v)) => v.push((*idx, line)),
                None => by_root.push((root.clone(), vec![(*idx, line)])),
            }
        }
        let mut errors = Vec::new();
        let mut groups = Vec::new();
        for (root, lines) in by_root {
            // A line that is no glob is reported alone, and the rest compiled together.
            let mut builder = GitignoreBuilder::new(&root);
            // Always `Ok` (the `Result` is historical).
            let _ = builder.case_insensitive(restricting);
            let mut valid = Vec::with_capacity(lines.len());
            for (idx, line) in lines {
                match builder.add_line(None, &line) {
                    Ok(_) => valid.push((idx, line)),
                    Err(e) => errors.push((idx, e.to_string())),
                }
            }
            if valid.is_empty() {
                continue;
            }
            match builder.build() {
                Ok(matcher) => groups.push(Group::new(&root, matcher, &valid)),
                Err(_) => {
                    let (a, b) = valid.split_at(valid.len() / 2);
                    Self::build_groups(&root, a, restricting, &mut groups, &mut errors);
                    Self::build_groups(&root, b, restricting, &mut groups, &mut errors);
                }
            }
        }
        (
            Self {
                groups,
                restricting,
            },
            errors,
        )
    }

    /// Compiles `lines` (valid globs of one root that together passed the regex engine's
    /// size limit: thousands of long rules) into several matchers, halving until each
    /// compiles: no rule is dropped because others came with it. Only a line that cannot
    /// compile even alone is an error.
    fn build_groups(
        root: &Path,
        lines: &[(usize, String)],
        restricting: bool,
        groups: &mut Vec<Group>,
        errors: &mut Vec<(usize, String)>,
    ) {
        let Some(&(first, _)) = lines.first() else {
            return;
        };
        let mut builder = GitignoreBuilder::new(root);
        let _ = builder.case_insensitive(restricting);
        for (_, line) in lines {
            // Checked when the whole list was added.
            let _ = builder.add_line(None, line);
        }
        match builder.build() {
            Ok(matcher) => groups.push(Group::new(root, matcher, lines)),
            Err(e) if lines.len() == 1 => errors.push((first, e.to_string())),
            Err(_) => {
                let (a, b) = lines.split_at(lines.len() / 2);
                Self::build_groups(root, a, restricting, groups, errors);
                Self::build_groups(root, b, restricting, groups, errors);
            }
        }
    }

    /// The index of a rule matching `path` (absolute), if any.
    pub fn matching(&self, path: &Path) -> Option<usize> {
        // `//` and inner `.` dropped: the matcher strips the root as bytes and asserts
        // what is left is relative.
        let normal: PathBuf = path.components().collect();
        let is_dir = normal.is_dir();
        // Rules are in NFC; so is the path they are matched with (the file on disk may be
        // named in NFD, which is the same name to the person who wrote the rule).
        let normal = nfc(&normal);
        let path = normal.as_path();
        // Matched relative to the root (the matcher takes a relative path as it is). On a
        // case-sensitive system the root is compared as it is, whatever `restricting`:
        // only the relative path's case is ignored (as node `ignore` does; `/home/u/Proj` is
        // not `/home/u/proj` there). Where file systems ignore case by default (macOS,
        // Windows), so does the root of a deny or ask rule: a new file spelled
        // `/USERS/u/proj/config/x` is in the project.
        let fold_root = self.restricting && CASE_INSENSITIVE_FILE_SYSTEMS;
        for g in &self.groups {
            let Some(relative) = strip_root(path, &g.root, fold_root) else {
                continue;
            };
            if relative.as_os_str().is_empty() {
                // The root itself: a gitignore line never matches it, but in a deny or ask
                // rule `**` or `/**` (what one naming its directory itself is read as,
                // `Read(./)`; `Read(/**)`, `Read(~/**)` as written) stands for the directory
                // and everything in it, as `dir/**` covers `dir`. An allow rule grants no
                // more than Claude Code's.
                if self.restricting
                    && let Some(&idx) = g.lines.get("**").or_else(|| g.lines.get("/**"))
                {
                    return Some(idx);
                }
                continue;
            }
            let folded;
            let relative = match self.restricting.then(|| fold_path_case(relative)).flatten() {
                Some(path) => {
                    folded = path;
                    folded.as_path()
                }
                None => relative,
            };
            let m = g.matcher.matched_path_or_any_parents(relative, is_dir);
            if let ignore::Match::Ignore(glob) = m {
                return Some(g.lines.get(glob.original()).copied().unwrap_or(g.first));
            }
        }
        None
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Whether a rule could match `dir` (absolute) or a path below it, whether or not such a
    /// path exists: the place a rule's pattern starts from (its root, and the literal
    /// leading directories of an anchored pattern: `~/.ssh/**` starts at `~/.ssh`) lies
    /// inside `dir`, or `dir` inside it. A pattern without a slash (`.env`) matches a name at
    /// any depth of its root. Case is ignored in the root too when `restricting` (a
    /// guess on the safe side: the same directory, on a case-insensitive file system).
    pub fn may_match_inside(&self, dir: &Path) -> bool {
        let fold = |p: PathBuf| {
            if self.restricting {
                PathBuf::from(fold_case(&p.to_string_lossy()).to_ascii_lowercase())
            } else {
                p
            }
        };
        let dir = fold(nfc(&dir.components().collect::<PathBuf>()));
        self.groups.iter().any(|g| {
            g.lines.keys().any(|line| {
                let start = fold(pattern_start(&g.root, line));
                start.starts_with(&dir) || dir.starts_with(&start)
            })
        })
    }
}

/// The directory (or file) a gitignore `line` under `root` matches from: `root` for a pattern
/// that matches at any depth (no slash but a trailing one), else `root` joined with the
/// pattern's components before the first one holding a wildcard or an escape.
fn pattern_start(root: &Path, line: &str) -> PathBuf {
    let line = line.strip_suffix('/').unwrap_or(line);
    let mut start = root.to_path_buf();
    if !line.contains('/') {
        return start;
    }
    for segment in line.trim_start_matches('/').split('/') {
        if segment.is_empty() || segment.contains(['*', '?', '[', '{', '\\']) {
            break;
        }
        start.push(segment);
    }
    start
}

/// `text` with the case of its letters beyond ASCII folded, for matching case
/// insensitively: the matcher folds ASCII only, node `ignore`'s `i` flag (Claude Code's)
/// folds `Ä` and `ä` too. Both the lines and the paths are folded; ASCII text is kept as
/// it is (its case is the matcher's to ignore). Letter by letter, whatever is around it
/// (`str::to_lowercase` makes a `Σ` before a letter `σ` and one at a word's end `ς`, which
/// would fold a rule's `ΟΔΟΣ*` and the file `ΟΔΟΣΑ` apart), with `ς` as `σ`, one letter to
/// a case-insensitive regex.
fn fold_case(text: &str) -> String {
    if text.is_ascii() {
        return text.to_owned();
    }
    text.chars()
        .flat_map(char::to_lowercase)
        .map(|c| if c == 'ς' { 'σ' } else { c })
        .collect()
}

/// [`fold_case`] of a path's name: its UTF-8 parts folded, bytes that are no UTF-8 kept as
/// they are (a name with both is still matched without case). `None` when nothing changes.
fn fold_path_case(path: &Path) -> Option<PathBuf> {
    use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
    let bytes = path.as_os_str().as_bytes();
    if bytes.is_ascii() {
        return None;
    }
    let mut folded = Vec::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        folded.extend_from_slice(fold_case(chunk.valid()).as_bytes());
        folded.extend_from_slice(chunk.invalid());
    }
    Some(PathBuf::from(std::ffi::OsString::from_vec(folded)))
}

/// `path` in Unicode NFC (a path that is not UTF-8 is kept as it is).
fn nfc(path: &Path) -> PathBuf {
    match path.to_str() {
        Some(text) if !text.is_ascii() => PathBuf::from(text.nfc().collect::<String>()),
        _ => path.to_path_buf(),
    }
}

/// The symlink-resolved form of `path`, as the kernel will resolve it when a command writes
/// there: every symlink on the way followed, a dangling one included (`ln -s ~/.ssh/x link;
/// echo > link` creates `~/.ssh/x`), the components that do not exist kept as they are.
/// At most 40 links are followed (the kernel's limit); past that the rest is kept as is.
pub fn resolve_symlinks(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    match walk_links(path, |_, _| false) {
        Walk::Resolved(p) | Walk::Stopped(p) => p,
    }
}

/// How [`walk_links`] ended.
enum Walk {
    /// Every component was looked up: the resolved path.
    Resolved(PathBuf),
    /// The visitor stopped the walk before the next component (in this directory).
    Stopped(PathBuf),
}

/// Walks `path` component by component as the kernel resolves it: `..` goes up from where
/// the walk is (after the links before it), a symlink is replaced by its target, a
/// component that does not exist is kept as it is, and at most 40 links are followed (the
/// rest is kept as it is). Before each component `stop` is asked, with the directory
/// reached and the name about to be looked up.
fn walk_links(path: &Path, mut stop: impl FnMut(&Path, &std::ffi::OsStr) -> bool) -> Walk {
    let mut resolved = PathBuf::new();
    let mut pending: std::collections::VecDeque<std::ffi::OsString> = Default::default();
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => resolved.push(c.as_os_str()),
            other => pending.push_back(other.as_os_str().to_owned()),
        }
    }
    let mut links = 0;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            resolved.pop();
            continue;
        }
        if name == "." {
            continue;
        }
        if stop(&resolved, &name) {
            return Walk::Stopped(resolved);
        }
        let next = resolved.join(&name);
        let is_link = std::fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink());
        let target = is_link
            .then(|| std::fs::read_link(&next).ok())
            .flatten()
            .filter(|_| links < 40);
        match target {
            Some(target) => {
                links += 1;
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                for c in target.components().rev() {
                    if !matches!(c, Component::RootDir | Component::Prefix(_)) {
                        pending.push_front(c.as_os_str().to_owned());
                    }
                }
            }
            None => resolved = next,
        }
    }
    Walk::Resolved(resolved)
}

/// Whether `path` (absolute, as written: `..` not folded) reaches a process's view of the
/// file system, `/proc/<pid>/{cwd,root,fd,map_files,exe}` (also under `task/<tid>`): what
/// it names depends on the process that opens it (for a command: the shell, not us), so it
/// cannot be checked here. Each component is looked up as the kernel would, so every
/// spelling counts: `/proc/self/cwd`, `/proc/self/../self/cwd`, `/dev//fd/../cwd` (`/dev/fd`
/// is a link to `/proc/self/fd`), `x/.env` with `x` a link to `/proc/thread-self/cwd`. The
/// magic links themselves are not followed (at most 40 links in all).
pub fn through_proc(path: &Path) -> bool {
    // `/proc/<pid>/` or `/proc/<pid>/task/<tid>/`, then a magic link.
    let digits = |c: Option<&Component<'_>>| {
        c.and_then(|c| c.as_os_str().to_str())
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    let magic = |dir: &Path, name: &std::ffi::OsStr| {
        let parts: Vec<Component<'_>> = dir.components().skip(1).collect();
        let in_process = parts.first().is_some_and(|c| c.as_os_str() == "proc")
            && digits(parts.get(1))
            && (parts.len() == 2
                || (parts.len() == 4 && parts[2].as_os_str() == "task" && digits(parts.get(3))));
        in_process
            && matches!(
                name.to_str(),
                Some("cwd" | "root" | "fd" | "map_files" | "exe")
            )
    };
    matches!(walk_links(path, magic), Walk::Stopped(_))
}

/// Whether `path` is `dir` or below it (lexically).
pub fn is_inside(path: &Path, dir: &Path) -> bool {
    path.starts_with(dir)
}

/// Directories protected by name wherever they are (lower case), with everything in them:
/// git's, editors' and tools' that run programs (`.vscode`, `.husky`, `.cargo`, …), the
/// ones holding credentials, and `.bashrc.d`, whose every file bash runs at start where
/// `.bashrc` sources them (Fedora's does). (`.config/git` and `.config/fish`, fish's
/// `conf.d` and `functions` among it, are protected by [`protected_kind`] itself.)
const PROTECTED_DIRS: &[&str] = &[
    ".git",
    ".vscode",
    ".idea",
    ".claude",
    ".husky",
    ".cargo",
    ".devcontainer",
    ".yarn",
    ".mvn",
    ".ssh",
    ".gnupg",
    ".aws",
    ".kube",
    ".docker",
    ".bashrc.d",
];
/// Files protected by name wherever they are (lower case): git's, the shells' startup files
/// (what a shell runs when it starts or ends: sh's `.profile` and `.shrc`, bash, zsh, csh
/// and tcsh, ksh and mksh, yash, fish, xonsh; `.bash_aliases`, which Debian's `.bashrc`
/// sources), other tools' configurations that can run programs or decide where data goes,
/// and Claude Code's own. Editor configurations (`.vimrc`, `.emacs`) are not on it.
const PROTECTED_FILES: &[&str] = &[
    ".gitconfig",
    ".gitmodules",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".profile",
    ".shrc",
    ".login",
    ".logout",
    ".mkshrc",
    ".yashrc",
    ".yash_profile",
    ".xonshrc",
    ".ripgreprc",
    ".mcp.json",
    ".claude.json",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pypirc",
    ".netrc",
    ".envrc",
    ".tcshrc",
    ".cshrc",
    ".kshrc",
    ".inputrc",
    "config.fish",
    // What curl and wget read by default (`output = …` decides where a download goes).
    ".curlrc",
    "curlrc",
    ".wgetrc",
];

/// What every session reads from the user's configuration directory, by name (lower case):
/// writing one is a safety check wherever that directory is ([`PathRoots::config_dir_reason`]).
pub const CONFIG_DIR_ENTRIES: &[&str] = &[
    "settings.json",
    "settings.local.json",
    ".claude.json",
    "claude.md",
    "agents",
    "commands",
    "skills",
    "hooks",
    "plugins",
    "output-styles",
    "rules",
];

/// What in `path` a Windows file system (NTFS or FAT, which Linux and macOS mount too) reads
/// as another name than the one written, if anything: an 8.3 short name (`GIT~1` is `.git`
/// on such a volume), a component ending in a dot or a space (dropped: `.git./config` is
/// `.git/config`, `.bashrc.` is `.bashrc`), and for a write also what Claude Code's
/// `hasSuspiciousWindowsPathPattern` asks about besides: a device or long-path prefix
/// (`\\?\`, `//./`), a DOS device name at the end (`x.PRN`), or a component of three or
/// more dots (all but the alternate-data-stream `:` check, which is Windows-only there
/// too). A rule or a protected name checked against the written name would miss the file
/// meant. `path` is what the call adds to a working directory it is in (a project that is
/// itself at `proj~1` is no such name), else the whole path. A name of dots only (`..`,
/// `...`) is not one "ending in a dot".
pub fn suspicious_windows_pattern(path: &Path, write: bool) -> Option<&'static str> {
    let text = path.to_string_lossy();
    let parts = || text.split(['/', '\\']).filter(|p| !p.is_empty());
    if parts().any(|part| {
        part.as_bytes()
            .windows(2)
            .any(|w| w[0] == b'~' && w[1].is_ascii_digit())
    }) {
        return Some(
            "an 8.3 short name (`~1`), which FAT and NTFS volumes resolve to another name",
        );
    }
    if write
        && [r"\\?\", r"\\.\", "//?/", "//./"]
            .iter()
            .any(|prefix| text.starts_with(prefix))
    {
        return Some("a Windows device or long-path prefix");
    }
    if write && parts().any(|part| part.len() >= 3 && part.bytes().all(|b| b == b'.')) {
        return Some("a component of three or more dots");
    }
    if parts().any(|part| {
        !part.bytes().all(|b| b == b'.') && part.ends_with(|c: char| c == '.' || c.is_whitespace())
    }) {
        return Some("a name ending in a dot or a space, which Windows file systems drop");
    }
    if write && let Some((_, extension)) = text.rsplit_once('.') {
        let upper = extension.to_ascii_uppercase();
        let numbered = |stem: &str| {
            upper
                .strip_prefix(stem)
                .is_some_and(|n| n.len() == 1 && matches!(n.as_bytes()[0], b'1'..=b'9'))
        };
        if matches!(upper.as_str(), "CON" | "PRN" | "AUX" | "NUL")
            || numbered("COM")
            || numbered("LPT")
        {
            return Some("a DOS device name (`.CON`, `.PRN`, `.AUX`, `.NUL`, `.COM1`, `.LPT1`)");
        }
    }
    None
}

/// Why writing `path` is a safety check (asks even in bypass mode), if it is.
pub fn protected_reason(path: &Path) -> Option<String> {
    protected_kind(path).map(|what| {
        format!(
            "Claude requested permissions to write to {}, which {what}.",
            path.display()
        )
    })
}

/// What makes `path` protected ([`protected_reason`]): `is in a protected directory
/// (.git)` or `is a sensitive file`.
pub fn protected_kind(path: &Path) -> Option<String> {
    let comps: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().to_lowercase()),
            _ => None,
        })
        .collect();
    for (i, c) in comps.iter().enumerate() {
        if c == ".claude"
            && comps.get(i + 1).is_some_and(|n| n == "worktrees")
            && i + 2 < comps.len()
        {
            continue;
        }
        if c == ".config" && comps.get(i + 1).is_some_and(|n| n == "git" || n == "fish") {
            return Some("is a sensitive file".to_owned());
        }
        if PROTECTED_DIRS.contains(&c.as_str())
            && (i + 1 < comps.len() || path.is_dir() || c == ".git")
        {
            return Some(format!("is in a protected directory ({c})"));
        }
    }
    let name = comps.last()?;
    if PROTECTED_FILES.contains(&name.as_str()) || PROTECTED_DIRS.contains(&name.as_str()) {
        return Some("is a sensitive file".to_owned());
    }
    None
}

/// What makes an entry named `name` protected wherever it is ([`protected_kind`] of a path
/// ending in it, judged by the name alone): a protected directory's name (`.git`, which
/// counts as a file too, `.claude` when `is_dir`) or a sensitive file's (`.bashrc`).
pub fn protected_name_kind(
    name: &std::ffi::OsStr,
    is_dir: impl FnOnce() -> bool,
) -> Option<String> {
    let name = name.to_string_lossy().to_lowercase();
    if PROTECTED_DIRS.contains(&name.as_str()) && (name == ".git" || is_dir()) {
        return Some(format!("is in a protected directory ({name})"));
    }
    (PROTECTED_FILES.contains(&name.as_str()) || PROTECTED_DIRS.contains(&name.as_str()))
        .then(|| "is a sensitive file".to_owned())
}

/// Why writing what the glob `pattern` matches is a safety check, if it may be: the
/// [`protected_reason`] of the pattern read with each glob part standing for a protected
/// name it matches (`.gi[t]/config` is `.git/config`, `~/.clau?e/x` is `~/.claude/x`), or
/// of the pattern itself (`.git/co?fig`). For what a glob that cannot be listed names. A
/// glob part matches a hidden name only when it starts with `.`, unless `dotglob`; case
/// does not count, as [`protected_reason`] does not count it.
pub fn protected_glob_reason(pattern: &str, dotglob: bool) -> Option<String> {
    /// Candidate paths tried at most (each glob part multiplies them).
    const MAX_CANDIDATES: usize = 256;
    let names = PROTECTED_DIRS.iter().chain(PROTECTED_FILES).chain(&[
        ".config",
        "git",
        "fish",
        "worktrees",
    ]);
    let mut candidates: Vec<String> = vec![String::new()];
    for (i, part) in pattern.split('/').enumerate() {
        let mut choices: Vec<&str> = Vec::new();
        if part.contains(['*', '?', '[']) {
            let matcher = globset::GlobBuilder::new(&part.replace("[^", "[!"))
                .literal_separator(true)
                .case_insensitive(true)
                .build()
                .ok()
                .map(|g| g.compile_matcher());
            // The part as written first, so that a pattern protected as it stands
            // (`.git/*/x`) is named as written.
            choices.push(part);
            if let Some(matcher) = matcher {
                choices.extend(names.clone().copied().filter(|name| {
                    (dotglob || part.starts_with('.') || !name.starts_with('.'))
                        && matcher.is_match(name)
                }));
            }
        } else {
            choices.push(part);
        }
        candidates = candidates
            .iter()
            .flat_map(|c| {
                choices.iter().map(move |choice| {
                    if i == 0 {
                        (*choice).to_owned()
                    } else {
                        format!("{c}/{choice}")
                    }
                })
            })
            .take(MAX_CANDIDATES)
            .collect();
    }
    candidates
        .iter()
        .find_map(|c| protected_reason(Path::new(c)))
}

/// Whether deleting `path` would remove a critical directory: `/`, a top-level directory,
/// the home directory or its parent, or a working directory root. The home and the working
/// directories count by their own names and by where their links lead: with `$HOME` a link
/// (`/x/homelink -> /x/home`), `/x/home` is the home directory too. For many paths, resolve
/// the directories once with [`CriticalDirs`].
pub fn is_critical_removal(path: &Path, home: Option<&Path>, working_dirs: &[PathBuf]) -> bool {
    CriticalDirs::new(home, working_dirs).contains(path)
}

/// The directories whose removal is critical ([`is_critical_removal`]), with the home's and
/// the working directories' spellings (as given, and where their links lead) resolved once:
/// checking a path is then comparisons only, not a walk of links per path.
#[derive(Debug, Clone, Default)]
pub struct CriticalDirs {
    /// The home directory's spellings.
    homes: Vec<PathBuf>,
    /// The working directories' spellings.
    working: Vec<PathBuf>,
}

impl CriticalDirs {
    /// The critical directories for a session whose home is `home` (an empty one is none)
    /// and whose working directories are `working_dirs`.
    pub fn new(home: Option<&Path>, working_dirs: &[PathBuf]) -> Self {
        let spellings = |dir: &Path| {
            let lexical = normalize_lexically(dir);
            let resolved = resolve_symlinks(&lexical);
            [lexical, resolved]
        };
        let homes = home
            .filter(|h| !h.as_os_str().is_empty())
            .map(|h| spellings(h).to_vec())
            .unwrap_or_default();
        let working = working_dirs
            .iter()
            .flat_map(|d| std::iter::once(d.clone()).chain(spellings(d)))
            .collect();
        Self { homes, working }
    }

    /// Whether deleting `path` would remove a critical directory ([`is_critical_removal`]).
    pub fn contains(&self, path: &Path) -> bool {
        let depth = path
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .count();
        if path.is_absolute() && depth <= 1 {
            return true;
        }
        self.homes
            .iter()
            .any(|h| path == h || h.parent() == Some(path))
            || self.working.iter().any(|d| d == path)
    }
}

/// Names found inside protected directories whose removal matters (git's own files, the
/// settings a `.claude` or configuration directory holds, keys and credentials), lower case:
/// a `find -name` filter naming one may delete them there.
const INSIDE_PROTECTED: &[&str] = &[
    "config",
    "config.toml",
    "config.json",
    "credentials",
    "credentials.toml",
    "head",
    "index",
    "objects",
    "refs",
    "packed-refs",
    "info",
    "logs",
    "modules",
    "description",
    "settings.json",
    "settings.local.json",
    "tasks.json",
    "launch.json",
    "id_rsa",
    "id_ecdsa",
    "id_ed25519",
    "authorized_keys",
    "known_hosts",
];

/// What a find name filter (`-name`/`-iname PATTERN`) lets through of the protected names,
/// compared without regard to case ([`FindNameFilter`]).
pub fn find_name_filter(pattern: &str) -> FindNameFilter {
    let protected = || {
        PROTECTED_DIRS
            .iter()
            .chain(PROTECTED_FILES)
            .chain(&[".config"])
    };
    let inside = || INSIDE_PROTECTED.iter().chain(CONFIG_DIR_ENTRIES);
    if !pattern.contains(['*', '?', '[']) {
        let name = pattern.replace('\\', "").to_lowercase();
        return if protected().any(|p| *p == name) {
            FindNameFilter::Protected
        } else if inside().any(|p| *p == name) {
            FindNameFilter::MayMatch
        } else {
            FindNameFilter::RulesOut
        };
    }
    // find's `*` matches a leading dot, and `/` never is in a name.
    let Ok(glob) = globset::GlobBuilder::new(&pattern.replace("[^", "[!"))
        .literal_separator(true)
        .case_insensitive(true)
        .build()
    else {
        return FindNameFilter::MayMatch;
    };
    let matcher = glob.compile_matcher();
    if protected().chain(inside()).any(|n| matcher.is_match(n)) {
        FindNameFilter::MayMatch
    } else {
        FindNameFilter::RulesOut
    }
}

/// What a find name filter lets through of the protected names ([`find_name_filter`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FindNameFilter {
    /// No protected name, nor a name found inside a protected directory (`*.pyc`, `a.o`).
    RulesOut,
    /// Some of them (`.bash*`, `config`, `*.json`).
    MayMatch,
    /// A protected name itself (`.bashrc`, `.git`).
    Protected,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A glob part stands for each protected name it matches; a hidden name only for a
    /// part that starts with `.` (or with `dotglob`).
    #[test]
    fn a_glob_that_may_match_a_protected_name_is_protected() {
        for pattern in [
            ".gi[t]/config",
            ".git/co?fig",
            ".git/hook[s]/pre-commit",
            "~/.clau?e/settings.json",
            "/home/u/.ss[h]/id_rsa",
            "p/.*/config",
            "~/.bash*",
            "~/.config/gi?/config",
            "x/.GI[T]/config",
        ] {
            assert!(protected_glob_reason(pattern, false).is_some(), "{pattern}");
        }
        for pattern in ["src/*.rs", "*/y", "b[u]ild/out", "docs/?/index.md", "[/x"] {
            assert_eq!(protected_glob_reason(pattern, false), None, "{pattern}");
        }
        assert!(protected_glob_reason("*/config", true).is_some());
        assert!(
            protected_glob_reason(".gi[t]/config", false)
                .unwrap()
                .contains(".git/config")
        );
    }

    /// Thousands of long rules of one root pass the regex engine's size limit together:
    /// they are compiled in parts, and every one of them still matches (the whole group,
    /// `.env` with it, used to be dropped with an error for each).
    #[test]
    fn a_deny_list_too_large_for_one_matcher_keeps_every_rule() {
        let root = PathBuf::from("/p");
        let mut entries = vec![(0, root.clone(), ".env".to_owned())];
        entries.extend((1..=5000).map(|i| {
            (
                i,
                root.clone(),
                format!("**/customer-{i}-credentials/**/*.json"),
            )
        }));
        let (set, errors) = PathRuleSet::build(&entries, true);
        assert!(
            errors.is_empty(),
            "{} errors, first {:?}",
            errors.len(),
            errors.first()
        );
        assert!(set.groups.len() > 1, "one matcher held them all");
        assert_eq!(set.matching(Path::new("/p/.env")), Some(0));
        assert_eq!(
            set.matching(Path::new("/p/a/customer-4999-credentials/b/key.json")),
            Some(4999)
        );
        assert_eq!(
            set.matching(Path::new("/p/customer-1-credentials/key.json")),
            Some(1)
        );
        assert_eq!(
            set.matching(Path::new("/p/customer-1-credentials/key.txt")),
            None
        );
        // A line that is no glob is still reported alone, and the rest kept.
        let (set, errors) = PathRuleSet::build(
            &[
                (0, root.clone(), "a/[z-a]".to_owned()),
                (1, root.clone(), ".env".to_owned()),
            ],
            true,
        );
        assert_eq!(errors.iter().map(|e| e.0).collect::<Vec<_>>(), [0]);
        assert_eq!(set.matching(Path::new("/p/.env")), Some(1));
    }

    /// Found by review: a `**` line covers its root itself in a deny or ask set only (an
    /// allow rule grants no more than Claude Code's), and the case of a name is folded
    /// letter by letter (a final `Σ` folds as any other) and around bytes that are no UTF-8.
    #[test]
    fn only_a_restricting_set_covers_its_root_and_case_folds_letter_by_letter() {
        let root = PathBuf::from("/p");
        let entries = [(0, root.clone(), "**".to_owned())];
        assert_eq!(
            PathRuleSet::build(&entries, true).0.matching(&root),
            Some(0)
        );
        assert_eq!(PathRuleSet::build(&entries, false).0.matching(&root), None);
        let greek = [(0, root.clone(), "ΟΔΟΣ*".to_owned())];
        let set = PathRuleSet::build(&greek, true).0;
        assert_eq!(set.matching(Path::new("/p/ΟΔΟΣΑ.txt")), Some(0));
        assert_eq!(set.matching(Path::new("/p/οδος")), Some(0));
        let odd = {
            use std::os::unix::ffi::OsStrExt as _;
            PathBuf::from(std::ffi::OsStr::from_bytes(b"/p/\xc3\x84pfel/\xff.txt"))
        };
        let folded = [(0, root.clone(), "Äpfel/*.txt".to_owned())];
        assert_eq!(PathRuleSet::build(&folded, true).0.matching(&odd), Some(0));
    }

    /// The root of a rule compared ignoring case only when asked (on macOS and Windows).
    #[test]
    fn a_root_is_folded_only_when_asked() {
        let (path, root) = (
            Path::new("/USERS/u/Proj/config/x"),
            Path::new("/Users/u/proj"),
        );
        assert_eq!(strip_root(path, root, false), None);
        assert_eq!(strip_root(path, root, true), Some(Path::new("config/x")));
        assert_eq!(strip_root(Path::new("/Users/u"), root, true), None);
    }

    #[test]
    fn protected() {
        assert!(protected_reason(Path::new("/p/.git/config")).is_some());
        assert!(protected_reason(Path::new("/p/.GIT/hooks/x")).is_some());
        assert!(protected_reason(Path::new("/h/.bashrc")).is_some());
        assert!(protected_reason(Path::new("/p/.claude/worktrees/a/src/x.rs")).is_none());
        assert!(protected_reason(Path::new("/p/src/main.rs")).is_none());
        assert!(protected_reason(Path::new("/p/gitignore")).is_none());
    }

    #[test]
    fn gitignore_rules() {
        let roots = PathRoots {
            cwd: "/p".into(),
            home: Some("/h".into()),
            project_root: None,
            user_config_dir: None,
            flag_settings_dir: None,
            settings_files: Vec::new(),
            settings_dirs: Vec::new(),
        };
        let mk = |pat: &str, b| {
            let a = roots.anchor(pat, RuleSource::ProjectSettings, b).unwrap();
            PathRuleSet::build(&[(0, a.root, a.line)], b != RuleBehavior::Allow).0
        };
        let s = mk(".env", RuleBehavior::Deny);
        assert!(s.matching(Path::new("/p/.env")).is_some());
        assert!(s.matching(Path::new("/p/a/b/.env")).is_some());
        assert!(s.matching(Path::new("/elsewhere/.env")).is_some());
        assert!(s.matching(Path::new("/p/.envrc")).is_none());
        let s = mk("src/**", RuleBehavior::Allow);
        assert!(s.matching(Path::new("/p/src/a/b.rs")).is_some());
        assert!(s.matching(Path::new("/p/x/src/a.rs")).is_none());
        let s = mk("~/.ssh/**", RuleBehavior::Deny);
        assert!(s.matching(Path::new("/h/.ssh/id_rsa")).is_some());
        assert!(s.matching(Path::new("/h/.ssh")).is_some());
        let s = mk("//etc/passwd", RuleBehavior::Deny);
        assert!(s.matching(Path::new("/etc/passwd")).is_some());
        assert!(s.matching(Path::new("/p/etc/passwd")).is_none());
        let s = mk("/docs/*.md", RuleBehavior::Allow);
        assert!(s.matching(Path::new("/p/docs/a.md")).is_some());
        assert!(s.matching(Path::new("/p/docs/x/a.md")).is_none());
    }

    #[test]
    fn rules_that_may_match_inside_a_directory() {
        let roots = PathRoots {
            cwd: "/h/p".into(),
            home: Some("/h".into()),
            project_root: None,
            user_config_dir: None,
            flag_settings_dir: None,
            settings_files: Vec::new(),
            settings_dirs: Vec::new(),
        };
        let reaches = |pat: &str, dir: &str| {
            let a = roots
                .anchor(pat, RuleSource::ProjectSettings, RuleBehavior::Deny)
                .unwrap();
            PathRuleSet::build(&[(0, a.root, a.line)], true)
                .0
                .may_match_inside(Path::new(dir))
        };
        for (pat, dir) in [
            (".env", "/h/p"),
            ("./.env", "/elsewhere"),
            ("*.pem", "/h/p"),
            ("secrets/", "/h/p"),
            ("src/**", "/h/p"),
            ("/secrets/**", "/h/p"),
            ("~/p/.env", "/h/p"),
            ("~/**", "/h/p"),
            ("~/*/.env", "/h/p"),
            ("~/**/.env", "/h/p"),
            ("../**", "/h/p"),
            ("//**/id_rsa", "/h/p"),
            ("//h/p/src/**", "/h/p"),
            ("src/**", "/h/p/src/sub"),
        ] {
            assert!(reaches(pat, dir), "{pat} in {dir}");
        }
        for (pat, dir) in [
            ("~/.ssh/**", "/h/p"),
            ("~/.ssh/id_*", "/h/p"),
            ("~/.bashrc", "/h/p"),
            ("//etc/shadow", "/h/p"),
            ("~/q/**", "/h/p"),
            ("~/pq/**", "/h/p"),
            ("//h/p/src/**", "/h/p/docs"),
            ("/src/*.rs", "/h/p/docs"),
        ] {
            assert!(!reaches(pat, dir), "{pat} in {dir}");
        }
    }
}
