//! Shared fixture: a real project, home and outside directory in a temp dir, with real
//! symlinks, and a `check` that runs the engine on a probe tool.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tool_core::{
    PermissionMode, PermissionResult, RuleSource, SourcedRule, ToolPermissionContext,
    ToolUseContext,
};
use tool_perms::probe::ProbeTool;
use tool_perms::settings::{LoadedPermissions, SettingsSources, parse_mode};
use tool_perms::{PathRoots, PermissionEngine};

pub struct Fixture {
    pub _tmp: tempfile::TempDir,
    pub proj: PathBuf,
    pub home: PathBuf,
    pub out: PathBuf,
}

impl Fixture {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let proj = root.join("proj");
        let home = root.join("home");
        let out = root.join("outside");
        for d in [
            proj.join("src/sub"),
            proj.join(".git/hooks"),
            proj.join(".claude/worktrees/wt"),
            proj.join("secrets"),
            proj.join("docs"),
            proj.join(".vscode"),
            home.join(".ssh"),
            out.clone(),
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        for (f, c) in [
            (proj.join("src/main.rs"), "fn main() {}"),
            (proj.join("src/sub/.env"), "X=1"),
            (proj.join(".env"), "SECRET=1"),
            (proj.join("README.md"), "# readme"),
            (proj.join(".git/config"), "[core]"),
            (proj.join("secrets/key.pem"), "k"),
            (proj.join("docs/a.md"), "a"),
            (proj.join("package.json"), "{}"),
            (home.join(".ssh/id_rsa"), "key"),
            (home.join(".bashrc"), "# rc"),
            (out.join("secret.txt"), "s"),
            (out.join("notes.md"), "n"),
        ] {
            std::fs::write(f, c).unwrap();
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(out.join("secret.txt"), proj.join("link_out")).unwrap();
            std::os::unix::fs::symlink(&out, proj.join("dir_out")).unwrap();
            std::os::unix::fs::symlink(proj.join("src"), proj.join("link_in")).unwrap();
            std::os::unix::fs::symlink(proj.join(".git"), proj.join("gitlink")).unwrap();
            std::os::unix::fs::symlink(proj.join(".env"), out.join("env_link")).unwrap();
        }
        Self {
            _tmp: tmp,
            proj,
            home,
            out,
        }
    }

    pub fn subst(&self, s: &str) -> String {
        s.replace("$P", &self.proj.display().to_string())
            .replace("$H", &self.home.display().to_string())
            .replace("$O", &self.out.display().to_string())
    }

    pub fn input(&self, tool: &str, raw: &str) -> Value {
        let raw = self.subst(raw);
        match tool {
            "Bash" | "Monitor" | "PowerShell" => json!({"command": raw}),
            "Read" | "Edit" | "Write" | "MultiEdit" => json!({"file_path": raw}),
            "NotebookEdit" => json!({"notebook_path": raw}),
            "Glob" | "Grep" => json!({"path": raw, "pattern": "x"}),
            "WebFetch" => json!({"url": raw, "prompt": "x"}),
            "Skill" => json!({"skill": raw}),
            "Agent" | "Task" => json!({"subagent_type": raw, "prompt": "x", "description": "x"}),
            _ if raw.is_empty() => json!({}),
            _ => serde_json::from_str(&raw).unwrap_or_else(|_| json!({"value": raw})),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Case {
    pub expect: &'static str,
    pub tool: &'static str,
    pub input: String,
    pub mode: &'static str,
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
    pub add_dirs: Vec<String>,
    pub bypass_available: bool,
    pub avoid_prompts: bool,
}

pub fn case(expect: &'static str, tool: &'static str, input: &str) -> Case {
    Case {
        expect,
        tool,
        input: input.to_owned(),
        mode: "default",
        allow: vec![],
        ask: vec![],
        deny: vec![],
        add_dirs: vec![],
        bypass_available: false,
        avoid_prompts: false,
    }
}

impl Case {
    pub fn mode(mut self, m: &'static str) -> Self {
        self.mode = m;
        self
    }
    pub fn allow(mut self, r: &[&str]) -> Self {
        self.allow.extend(r.iter().map(|s| (*s).to_owned()));
        self
    }
    pub fn ask(mut self, r: &[&str]) -> Self {
        self.ask.extend(r.iter().map(|s| (*s).to_owned()));
        self
    }
    pub fn deny(mut self, r: &[&str]) -> Self {
        self.deny.extend(r.iter().map(|s| (*s).to_owned()));
        self
    }
    pub fn add_dir(mut self, d: &str) -> Self {
        self.add_dirs.push(d.to_owned());
        self
    }
    pub fn bypass_available(mut self) -> Self {
        self.bypass_available = true;
        self
    }
    pub fn no_prompts(mut self) -> Self {
        self.avoid_prompts = true;
        self
    }
}

pub fn behavior(r: &PermissionResult) -> &'static str {
    match r {
        PermissionResult::Allow { .. } => "allow",
        PermissionResult::Ask { .. } | PermissionResult::Passthrough { .. } => "ask",
        PermissionResult::Deny { .. } => "deny",
    }
}

pub fn context(fx: &Fixture, c: &Case) -> (PermissionEngine, ToolUseContext) {
    let rules = |v: &[String]| {
        v.iter()
            .map(|r| SourcedRule {
                source: RuleSource::ProjectSettings,
                rule: fx.subst(r),
            })
            .collect::<Vec<_>>()
    };
    let perm = ToolPermissionContext {
        mode: parse_mode(c.mode).unwrap(),
        additional_working_directories: c
            .add_dirs
            .iter()
            .map(|d| PathBuf::from(fx.subst(d)))
            .collect(),
        allow: rules(&c.allow),
        deny: rules(&c.deny),
        ask: rules(&c.ask),
        bypass_available: c.bypass_available || c.mode == "bypassPermissions",
        avoid_prompts: c.avoid_prompts,
        pre_plan_mode: None,
        managed_rules_only: false,
        ..Default::default()
    };
    let roots = PathRoots {
        cwd: fx.proj.clone(),
        home: Some(fx.home.clone()),
        project_root: Some(fx.proj.clone()),
        user_config_dir: Some(fx.home.join(".claude")),
        flag_settings_dir: None,
        settings_files: vec![fx.home.join(".claude/settings.json")],
        settings_dirs: Vec::new(),
    };
    let engine = PermissionEngine::new(&perm, roots).unwrap_or_else(|e| panic!("{c:?}: {e}"));
    let ctx = ToolUseContext::new(&fx.proj)
        .with_home(Some(fx.home.clone()))
        .with_permission(perm);
    (engine, ctx)
}

pub fn probe(fx: &Fixture, tool: &str) -> ProbeTool {
    ProbeTool::new(tool, &fx.proj, Some(fx.home.clone()))
}

pub async fn run(fx: &Fixture, c: &Case) -> PermissionResult {
    let (engine, ctx) = context(fx, c);
    let tool = probe(fx, c.tool);
    engine
        .decide(&tool, &fx.input(c.tool, &c.input), &ctx)
        .await
}

pub async fn run_table(cases: Vec<Case>) -> usize {
    run_table_in(&Fixture::new(), cases).await
}

/// [`run_table`] in a fixture of the caller's (one with files of its own added).
pub async fn run_table_in(fx: &Fixture, cases: Vec<Case>) -> usize {
    let mut failures = Vec::new();
    for c in &cases {
        let got = run(fx, c).await;
        if behavior(&got) != c.expect {
            failures.push(format!(
                "expected {} got {} for {} {:?} mode={} allow={:?} ask={:?} deny={:?}\n    -> {got:?}",
                c.expect,
                behavior(&got),
                c.tool,
                c.input,
                c.mode,
                c.allow,
                c.ask,
                c.deny
            ));
        }
    }
    eprintln!("table: {} cases", cases.len());
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    cases.len()
}

pub fn mode_of(name: &str) -> PermissionMode {
    parse_mode(name).unwrap()
}

pub fn exists(p: &Path) -> bool {
    p.exists()
}

/// Writes `contents` to `path`, creating its directory.
pub fn write(path: &Path, contents: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

/// Settings sources for `project_dir` with nothing but what the test writes: the user
/// config dir is `<home>/config`, no managed settings.
pub fn sources(fx: &Fixture, project_dir: PathBuf, trusted: bool) -> SettingsSources {
    SettingsSources {
        project_dir,
        home: Some(fx.home.clone()),
        user_config_dir: Some(fx.home.join("config")),
        managed_dir: None,
        flag_settings: vec![],
        inline: vec![],
        project_trusted: trusted,
        host_tools: Vec::new(),
    }
}

/// The loaded settings' diagnostics, as they are printed.
pub fn messages(loaded: &LoadedPermissions) -> Vec<String> {
    loaded.diagnostics.iter().map(ToString::to_string).collect()
}

/// What the loaded settings decide for `Bash` running `command` in `cwd`.
pub async fn bash(fx: &Fixture, loaded: &LoadedPermissions, cwd: &Path, command: &str) -> String {
    let engine = loaded.engine();
    let tctx = ToolUseContext::new(cwd)
        .with_home(Some(fx.home.clone()))
        .with_permission(loaded.context.clone());
    let tool = probe(fx, "Bash");
    behavior(
        &engine
            .decide(&tool, &json!({"command": command}), &tctx)
            .await,
    )
    .to_owned()
}

/// Whether `program` is installed (found on `PATH`).
pub fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Runs `command` with the real bash in `dir` (standard input and output to /dev/null,
/// `HOME` set to `home`, git's system configuration and the caller's `GIT_DIR` and
/// `GIT_WORK_TREE` kept out), so that a test can see what it did to the files there; says
/// whether it succeeded.
pub fn real_bash(command: &str, dir: &Path, home: &Path) -> bool {
    std::process::Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("bash runs")
        .success()
}

/// Pieces of shell syntax (quotes, substitutions, operators, control flow, wrappers) that
/// the fuzz and robustness tests glue into commands. `fuzz_bash`'s saved regression seeds
/// replay through this list, so a change to it changes what they replay.
pub const SHELL_BITS: &[&str] = &[
    "ls",
    "echo",
    "rm",
    "-rf",
    "'",
    "\"",
    "`",
    "$(",
    ")",
    "${",
    "}",
    "{",
    "(",
    ";",
    "&&",
    "||",
    "|",
    "&",
    "\n",
    "\\",
    "<<EOF",
    "EOF",
    "<(",
    ">(",
    ">",
    ">>",
    "2>&1",
    "$'\\x41'",
    "*",
    "?",
    "[",
    "]",
    "~",
    "#",
    "=",
    "X=1",
    "bash -c",
    "eval",
    "xargs",
    "find . -exec",
    "\\;",
    "if",
    "then",
    "fi",
    "for",
    "do",
    "done",
    "case",
    "esac",
    "((",
    "))",
    "$((1+2))",
    "\t",
    " ",
    "é",
    "!",
    "[[",
    "]]",
    "/tmp/x",
    "$HOME",
    "sudo",
    "env",
    "command",
    "nohup",
    "time",
    "curl",
    "wget",
    "tar",
    "xzf",
    "patch",
    "-o",
    "-O",
    "-C",
    "-F",
    "--output-dir",
    "@",
    "=@",
    "file:///",
    "https://x/",
];
