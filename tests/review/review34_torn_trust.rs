//! Session 34 (a black-box review): the trust record (`$CLAUDE_CONFIG_DIR/.claude.json`)
//! or a settings file caught mid-rewrite by a program that rewrites it in place (truncate,
//! then write: Node's `fs.writeFileSync`, an editor's in-place save) was read as empty or
//! as JSON that ends early: the folder was taken as untrusted for the whole session (its
//! hooks not run, with the ordinary "not trusted" notice), a deny rule was dropped (the
//! denied command ran), and hooks were lost. Such a read is now read again over a short
//! window first.
//!
//! Each test has a real thread rewriting a real file in place in a loop while real
//! `toolwright` processes (or the hooks loader) read it, and a probe that proves the race
//! was live: a plain read found the file mid-rewrite.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::json;

/// A trusted-or-not project, its configuration directory (the trust record's) and home.
struct Setup {
    _dir: tempfile::TempDir,
    base: PathBuf,
    proj: PathBuf,
    config: PathBuf,
    home: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let proj = base.join("proj");
        let config = base.join("config");
        let home = base.join("home");
        for d in [proj.join(".claude"), config.clone(), home.clone()] {
            std::fs::create_dir_all(d).unwrap();
        }
        Self {
            _dir: dir,
            base,
            proj,
            config,
            home,
        }
    }

    fn record(&self) -> PathBuf {
        self.config.join(".claude.json")
    }

    fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolwright"));
        c.env("CLAUDE_CONFIG_DIR", &self.config)
            .env("HOME", &self.home)
            .env("TMPDIR", &self.base)
            .stdin(Stdio::null());
        c
    }

    /// `toolwright trust PROJ`, which must succeed.
    fn trust(&self) {
        let out = self
            .command()
            .arg("trust")
            .arg(&self.proj)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `toolwright run --json --mode bypassPermissions` of one Bash call running `command`
    /// in the project.
    fn run_bash(&self, command: &str) -> Output {
        let turn = self.base.join("turn.jsonl");
        let call = json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": command}});
        std::fs::write(&turn, format!("{call}\n")).unwrap();
        self.command()
            .args(["run", "--json", "--mode", "bypassPermissions", "--cwd"])
            .arg(&self.proj)
            .arg(&turn)
            .output()
            .unwrap()
    }
}

/// A thread rewriting `path` in place with `text` until `stop`: opened with truncation,
/// the text in two writes a millisecond apart (its first half, then the rest: a program
/// writing a larger file in pieces), then a pause of 20 ms, as a program that saves the file
/// in place again and again does.
fn in_place_rewriter(path: PathBuf, text: String, stop: Arc<AtomicBool>) -> JoinHandle<u64> {
    std::thread::spawn(move || {
        let (head, tail) = text.as_bytes().split_at(text.len() / 2);
        let mut rewrites = 0;
        while !stop.load(Ordering::Relaxed) {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(&path)
                .unwrap();
            file.write_all(head).unwrap();
            std::thread::sleep(Duration::from_millis(1));
            file.write_all(tail).unwrap();
            drop(file);
            rewrites += 1;
            std::thread::sleep(Duration::from_millis(20));
        }
        rewrites
    })
}

/// A thread reading `path` plainly every millisecond until `stop`, counting in `torn` the
/// reads that found it mid-rewrite (not `text`): proof that the readers raced the writer.
fn torn_probe(
    path: PathBuf,
    text: String,
    stop: Arc<AtomicBool>,
    torn: Arc<AtomicU64>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            if std::fs::read(&path).is_ok_and(|bytes| bytes != text.as_bytes()) {
                torn.fetch_add(1, Ordering::Relaxed);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    })
}

/// Runs `each` (which says what went wrong, if anything) for `runs` rounds while `path` is
/// rewritten in place with its present text; fails on any round that went wrong, or when
/// the file was never seen mid-rewrite.
fn while_rewritten(path: &Path, runs: u32, mut each: impl FnMut() -> Option<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let torn = Arc::new(AtomicU64::new(0));
    let writer = in_place_rewriter(path.to_path_buf(), text.clone(), stop.clone());
    let probe = torn_probe(path.to_path_buf(), text, stop.clone(), torn.clone());
    let mut failures = Vec::new();
    for _ in 0..runs {
        if let Some(failure) = each() {
            failures.push(failure);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let rewrites = writer.join().unwrap();
    probe.join().unwrap();
    let torn = torn.load(Ordering::Relaxed);
    assert!(
        torn > 0,
        "{} was never seen mid-rewrite ({rewrites} rewrites): the test did not race",
        path.display()
    );
    assert!(
        failures.is_empty(),
        "{} of {runs} rounds went wrong while {} was rewritten in place ({rewrites} rewrites; a plain read found it torn {torn} times); the first: {:#?}",
        failures.len(),
        path.display(),
        &failures[..failures.len().min(3)]
    );
}

#[test]
fn a_trust_record_rewritten_in_place_keeps_the_folder_trusted() {
    let s = Setup::new();
    let marker = s.base.join("hook-ran");
    // The project's own hook: it runs only when the folder is trusted.
    let hook = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": format!("echo ran >> '{}'", marker.display())}
    ]}]}});
    std::fs::write(s.proj.join(".claude/settings.json"), hook.to_string()).unwrap();
    s.trust();
    // Without a writer, the hook runs.
    let out = s.run_bash("true");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap().lines().count(), 1);

    let mut expected = 1;
    while_rewritten(&s.record(), 100, || {
        let out = s.run_bash("true");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let hooks_ran = std::fs::read_to_string(&marker).unwrap().lines().count();
        let ran_now = hooks_ran > expected;
        expected = hooks_ran;
        (!ran_now || stderr.contains("not trusted"))
            .then(|| format!("the hook ran: {ran_now}; stderr: {stderr}"))
    });
}

#[test]
fn a_settings_file_rewritten_in_place_keeps_its_deny_rule_in_every_session() {
    let s = Setup::new();
    // The reviewer's case: the untrusted project's own deny rule (a restriction, which
    // applies trusted or not), in bypass mode.
    let local = s.proj.join(".claude/settings.local.json");
    std::fs::write(&local, "{\"permissions\":{\"deny\":[\"Bash(echo:*)\"]}}\n").unwrap();
    // The command's output as the call's result (a denial names the command too).
    let ran = |out: &Output| {
        String::from_utf8_lossy(&out.stdout).contains("\"content\":\"DENIED-COMMAND-RAN")
    };
    let out = s.run_bash("echo DENIED-COMMAND-RAN");
    assert!(!ran(&out), "{out:?}");

    while_rewritten(&local, 100, || {
        let out = s.run_bash("echo DENIED-COMMAND-RAN");
        ran(&out).then(|| {
            format!(
                "the denied command ran; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
    });
}

#[test]
fn a_settings_file_rewritten_in_place_keeps_its_hooks_on_every_load() {
    let s = Setup::new();
    let local = s.proj.join(".claude/settings.local.json");
    let hook = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "true"}
    ]}]}});
    std::fs::write(&local, format!("{hook}\n")).unwrap();
    let paths = toolwright::hooks::SettingsPaths {
        managed_dir: None,
        flag_settings: vec![],
        project_dir: Some(s.proj.clone()),
        user_config_dir: Some(s.config.clone()),
        project_trusted: true,
    };
    let problem = || {
        let loaded = toolwright::hooks::load_hooks(&paths);
        let handlers = loaded.config.matching("PreToolUse", Some("Bash")).len();
        (handlers != 1 || !loaded.diagnostics.is_empty()).then(|| {
            format!(
                "{handlers} PreToolUse hook(s); diagnostics: {:?}",
                loaded
                    .diagnostics
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
            )
        })
    };
    assert_eq!(problem(), None);
    // Loads back to back for about 4 seconds.
    let started = Instant::now();
    let mut loads = 0;
    while_rewritten(&local, 1, || {
        let mut failures = Vec::new();
        while started.elapsed() < Duration::from_secs(4) {
            loads += 1;
            failures.extend(problem());
        }
        (!failures.is_empty()).then(|| {
            format!(
                "{} of {loads} loads lost the hook; the first: {:?}",
                failures.len(),
                &failures[..failures.len().min(3)]
            )
        })
    });
}

#[test]
fn a_really_cut_trust_record_is_reported_at_once_not_retried_for_long() {
    let s = Setup::new();
    std::fs::write(s.record(), "{\"projects\":{").unwrap();
    let started = Instant::now();
    let out = s.command().arg("trust").arg(&s.proj).output().unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("is not valid JSON") && stderr.contains("EOF while parsing"),
        "{stderr}"
    );
    // Read again once or a few times (it has not changed), within the window.
    assert!(took < Duration::from_secs(2), "took {took:?}");
    // A blank record is an empty one: trusting the folder writes it.
    std::fs::write(s.record(), "").unwrap();
    s.trust();
    assert!(
        std::fs::read_to_string(s.record())
            .unwrap()
            .contains("hasTrustDialogAccepted")
    );
}
