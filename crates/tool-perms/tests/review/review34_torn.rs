//! Session 34 (a black-box review): a settings file caught mid-rewrite by a program that
//! rewrites it in place (truncate, then write: Node's `fs.writeFileSync`, an editor's
//! in-place save) read as blank (`{}`) or as JSON that ends early, and its deny rules were
//! dropped for the whole session. Such a read is now read again over a short window before
//! the file is taken as blank or reported invalid; a file that really is blank or broken
//! costs at most that window.
//!
//! The rewriter here is a real thread rewriting a real file in place in a loop, the text in
//! two writes (so a reader may find it empty or cut in the middle), while the loader reads.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tool_perms::settings::{LoadedPermissions, SettingsSources, load_permissions};

/// The settings the rewriter writes again and again.
const DENY_ECHO: &str = "{\"permissions\":{\"deny\":[\"Bash(echo:*)\"]}}\n";

/// A project directory (not a git repository) with its `.claude` directory, and a home.
struct Project {
    _dir: tempfile::TempDir,
    proj: PathBuf,
    home: PathBuf,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let proj = base.join("proj");
        let home = base.join("home");
        std::fs::create_dir_all(proj.join(".claude")).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        Self {
            _dir: dir,
            proj,
            home,
        }
    }

    fn local_settings(&self) -> PathBuf {
        self.proj.join(".claude/settings.local.json")
    }

    /// The sources a session in the project reads (no managed settings: the machine's own
    /// must not take part).
    fn sources(&self) -> SettingsSources {
        SettingsSources {
            project_dir: self.proj.clone(),
            home: Some(self.home.clone()),
            user_config_dir: Some(self.home.join(".claude")),
            managed_dir: None,
            flag_settings: vec![],
            inline: vec![],
            project_trusted: false,
            host_tools: Vec::new(),
        }
    }
}

/// Rewrites `path` in place with `text` until `stop` is set: opened with truncation, then
/// the text in two writes (its first half, then the rest), then a pause of 20 ms, as a program saving a file in place again and again does. Returns how many
/// times it rewrote the file.
fn in_place_rewriter(
    path: PathBuf,
    text: &'static str,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<u64> {
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
            file.write_all(tail).unwrap();
            drop(file);
            rewrites += 1;
            std::thread::sleep(Duration::from_millis(20));
        }
        rewrites
    })
}

/// What is wrong with what a load gave (the deny rule missing, a diagnostic), if anything.
fn problem(loaded: &LoadedPermissions) -> Option<String> {
    let denies = format!("{:?}", loaded.context.deny);
    let diagnostics: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    (loaded.context.deny.len() != 1 || !denies.contains("echo") || !diagnostics.is_empty()).then(
        || {
            format!(
                "{} deny rule(s) ({denies}); diagnostics: {diagnostics:?}",
                loaded.context.deny.len()
            )
        },
    )
}

/// Whether a plain read of `path` now finds it torn: empty, or not the whole text.
fn plainly_torn(path: &Path, text: &str) -> bool {
    std::fs::read(path).is_ok_and(|bytes| bytes != text.as_bytes())
}

#[test]
fn a_settings_file_rewritten_in_place_keeps_its_deny_rules_on_every_load() {
    let p = Project::new();
    let path = p.local_settings();
    std::fs::write(&path, DENY_ECHO).unwrap();
    let sources = p.sources();
    // Without a writer, the file gives its rule.
    assert_eq!(problem(&load_permissions(&sources)), None);

    let stop = Arc::new(AtomicBool::new(false));
    let writer = in_place_rewriter(path.clone(), DENY_ECHO, stop.clone());
    let started = Instant::now();
    let (mut loads, mut torn_seen) = (0u32, 0u32);
    let mut failures = Vec::new();
    while started.elapsed() < Duration::from_secs(4) {
        // The race is live: a plain read finds the file mid-rewrite now and then.
        if plainly_torn(&path, DENY_ECHO) {
            torn_seen += 1;
        }
        loads += 1;
        if let Some(problem) = problem(&load_permissions(&sources)) {
            failures.push(problem);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let rewrites = writer.join().unwrap();
    assert!(
        torn_seen > 0,
        "the file was never seen mid-rewrite ({rewrites} rewrites, {loads} loads): the test did not race"
    );
    let silent = failures
        .iter()
        .filter(|f| f.ends_with("diagnostics: []"))
        .count();
    assert!(
        failures.is_empty(),
        "{} of {loads} loads lost the deny rule while the file was rewritten in place, {silent} of them without a word ({rewrites} rewrites; a plain read found it torn {torn_seen} times); the first: {:#?}; one reported: {:?}",
        failures.len(),
        &failures[..failures.len().min(2)],
        failures.iter().find(|f| !f.ends_with("diagnostics: []"))
    );
}

#[test]
fn a_really_blank_settings_file_is_still_empty_settings_and_costs_at_most_the_window() {
    let p = Project::new();
    std::fs::write(p.local_settings(), " \n").unwrap();
    let started = Instant::now();
    let loaded = load_permissions(&p.sources());
    let took = started.elapsed();
    assert!(loaded.context.deny.is_empty());
    assert!(
        loaded.diagnostics.is_empty(),
        "a blank file is {{}}: {:?}",
        loaded.diagnostics
    );
    // Read again once (two identical reads settle it), never for long.
    assert!(
        took < Duration::from_millis(500),
        "a blank file took {took:?}"
    );
}

#[test]
fn a_really_cut_settings_file_is_reported_after_the_window_and_never_hangs() {
    let p = Project::new();
    std::fs::write(
        p.local_settings(),
        "{\"permissions\":{\"deny\":[\"Bash(echo:*)\"",
    )
    .unwrap();
    let started = Instant::now();
    let loaded = load_permissions(&p.sources());
    let took = started.elapsed();
    let messages: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("EOF while parsing") && m.contains("file ignored")),
        "{messages:?}"
    );
    assert!(
        took < Duration::from_millis(500),
        "a cut file took {took:?}"
    );
}

/// The other in-place writer (the file tools' own, for a hard-linked or bind-mounted file):
/// it writes the new text over the old, then cuts the file to length, so a reader may find
/// the new text followed by the old one's tail ("trailing characters", not an early end).
/// That too is read again, not taken as an invalid file.
#[test]
fn a_settings_file_written_over_then_cut_keeps_its_deny_rules() {
    const LONG: &str = "{\"permissions\":{\"deny\":[\"Bash(echo:*)\"]},\"padding\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n";
    let p = Project::new();
    let path = p.local_settings();
    std::fs::write(&path, LONG).unwrap();
    let sources = p.sources();
    assert_eq!(problem(&load_permissions(&sources)), None);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (path, stop) = (path.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut rewrites = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let text = if rewrites.is_multiple_of(2) {
                    DENY_ECHO
                } else {
                    LONG
                };
                let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                file.write_all(text.as_bytes()).unwrap();
                // The moment between the write and the cut, made visible.
                std::thread::sleep(Duration::from_millis(2));
                file.set_len(text.len() as u64).unwrap();
                drop(file);
                rewrites += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            rewrites
        })
    };
    let started = Instant::now();
    let (mut loads, mut torn_seen) = (0u32, 0u32);
    let mut failures = Vec::new();
    while started.elapsed() < Duration::from_secs(3) {
        if std::fs::read_to_string(&path).is_ok_and(|t| {
            serde_json::from_str::<serde_json::Value>(&t).is_err_and(|e| !e.is_eof())
        }) {
            torn_seen += 1;
        }
        loads += 1;
        if let Some(problem) = problem(&load_permissions(&sources)) {
            failures.push(problem);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let rewrites = writer.join().unwrap();
    assert!(
        torn_seen > 0,
        "the file was never seen with an old tail ({rewrites} rewrites, {loads} loads): the test did not race"
    );
    assert!(
        failures.is_empty(),
        "{} of {loads} loads lost the deny rule while the file was written over and cut ({rewrites} rewrites; a plain read found an old tail {torn_seen} times); the first: {:?}",
        failures.len(),
        failures.first()
    );
}
