//! Session 33's review of the session directory, the trust record and the agent transcript
//! on failing file systems: a root-run `toolwright trust` keeps the record's owner, a dead
//! writer's temporary record is removed by the next write, a failed transcript append
//! leaves no torn line, a full TMPDIR no longer stops `run`, and a save that failed leaves
//! no empty session directory behind.
//!
//! A full file system is a tmpfs mounted in a private mount namespace (`unshare -m`), which
//! needs root; the tests that need root skip with the reason printed when not root.

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::binary::output_with_input;
use serde_json::{Value, json};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether this process is root; when not, prints why `test` is skipped.
fn root_or_skip(test: &str) -> bool {
    let root = nix::unistd::geteuid().is_root();
    if !root {
        eprintln!("SKIPPED {test}: needs root (private mount namespaces, chown, setpriv)");
    }
    root
}

/// `program args` run in a private mount namespace in which a tmpfs mounted with `options`
/// is at `dir` (gone with the namespace). The caller adds its environment.
fn in_tmpfs(dir: &Path, options: &str, program: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("unshare");
    command
        .args(["-m", "--propagation", "private", "sh", "-c"])
        .arg(r#"mount -t tmpfs -o "$1" tmpfs "$2" || exit 97; shift 2; exec "$@""#)
        .arg("sh")
        .arg(options)
        .arg(dir)
        .arg(program)
        .args(args);
    command
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A PID no process has now.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// A folder to trust and a configuration directory for the record, both reachable by
/// every user (`setpriv --reuid=65534` runs the binary in them).
struct TrustDirs {
    _holder: tempfile::TempDir,
    project: PathBuf,
    config: PathBuf,
}

impl TrustDirs {
    fn new() -> Self {
        let holder = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(holder.path()).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (project, config) = (base.join("project"), base.join("config"));
        std::fs::create_dir(&project).unwrap();
        std::fs::create_dir(&config).unwrap();
        Self {
            _holder: holder,
            project,
            config,
        }
    }

    fn record(&self) -> PathBuf {
        self.config.join(".claude.json")
    }

    /// `toolwright trust PROJECT` with this record, as the user `as_user` gives (`None`:
    /// this one).
    fn trust(&self, as_user: Option<u32>) -> Output {
        let bin = env!("CARGO_BIN_EXE_toolwright");
        let mut command = match as_user {
            Some(id) => {
                let mut c = Command::new("setpriv");
                c.arg(format!("--reuid={id}"))
                    .arg(format!("--regid={id}"))
                    .arg("--clear-groups")
                    .arg(bin);
                c
            }
            None => Command::new(bin),
        };
        command
            .arg("trust")
            .arg(&self.project)
            .current_dir(&self.project)
            .env("CLAUDE_CONFIG_DIR", &self.config)
            .env("HOME", &self.config);
        output_with_input(command, b"")
    }
}

/// Found by review: `toolwright trust` run as root replaced a user's `~/.claude.json`
/// (theirs, 0600) with a root-owned file, which the user could then no longer read (their
/// own `trust --revoke` failed "cannot read"). The new file keeps the record's owner and
/// group; where this user cannot give it them, the record is left as it is and the error
/// says so.
#[test]
fn trust_keeps_the_records_owner_and_group() {
    if !root_or_skip("trust_keeps_the_records_owner_and_group") {
        return;
    }
    let nobody = 65534;
    let dirs = TrustDirs::new();
    let record = dirs.record();
    std::fs::write(&record, "{\"numStartups\": 3}\n").unwrap();
    std::os::unix::fs::chown(&record, Some(nobody), Some(nobody)).unwrap();
    std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o600)).unwrap();

    let out = dirs.trust(None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let meta = std::fs::metadata(&record).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid(), meta.mode() & 0o7777),
        (nobody, nobody, 0o600),
        "the record changed hands"
    );
    // Its user still reads it, and it holds the trust and what was there before.
    let read = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "cat",
            record.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(read.status.success(), "{}", text(&read.stderr));
    let held: Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(held["numStartups"], 3);
    assert_eq!(
        held["projects"][dirs.project.to_str().unwrap()]["hasTrustDialogAccepted"],
        true
    );

    // A user who cannot give the new file the record's owner (root's record, in a
    // directory anyone may write to): refused, the record left as it was.
    let dirs = TrustDirs::new();
    let record = dirs.record();
    std::fs::set_permissions(&dirs.config, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::write(&record, "{}\n").unwrap();
    std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = dirs.trust(Some(nobody));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot write")
            && stderr.contains("belongs to user 0 and group 0")
            && stderr.contains("left as it is"),
        "{stderr}"
    );
    let meta = std::fs::metadata(&record).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (0, 0));
    assert_eq!(std::fs::read_to_string(&record).unwrap(), "{}\n");
    assert_eq!(
        entries(&dirs.config),
        [".claude.json"],
        "nothing left beside it"
    );
}

/// Found by review: the record's temporary file was `.claude.json.toolwright-PID`, and a
/// writer killed mid-write left it for good (60 MB records left 6 MB and 27 MB files). The
/// record is now written as every atomic write is (`tool_core::temp_file`), and the next
/// write removes what a dead writer left: at once when it ran here, and the old name once
/// it is 15 minutes old. A live writer's file, and a fresh old-named one (an older
/// toolwright may be writing it), stay.
#[test]
fn the_next_trust_removes_a_dead_writers_temporary_record() {
    let dirs = TrustDirs::new();
    let tag = toolwright::core::temp_file::writer_tag();
    let (dead, live) = (dead_pid(), std::process::id());
    let dead_now = format!("..claude.json.tw-tmp.{dead}.{tag}.0");
    let live_now = format!("..claude.json.tw-tmp.{live}.{tag}.0");
    let old_named = format!(".claude.json.toolwright-{dead}");
    let fresh_old_named = format!(".claude.json.toolwright-{live}");
    for name in [&dead_now, &live_now, &old_named, &fresh_old_named] {
        std::fs::write(dirs.config.join(name), "{\"half\": ").unwrap();
    }
    let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(20 * 60);
    std::fs::File::options()
        .write(true)
        .open(dirs.config.join(&old_named))
        .unwrap()
        .set_modified(long_ago)
        .unwrap();

    let out = dirs.trust(None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut expected = vec![
        ".claude.json".to_owned(),
        live_now.clone(),
        fresh_old_named.clone(),
    ];
    expected.sort();
    assert_eq!(entries(&dirs.config), expected);
}

/// The child of [`a_failed_transcript_append_leaves_no_torn_line`], run in a private mount
/// namespace where `dir` is a 64 KiB tmpfs.
fn transcript_on_a_full_disk(dir: &Path) {
    use toolwright::agent::transcript::Transcript;
    let path = dir.join("transcript.jsonl");
    let mut transcript = Transcript::new(&path, "s1", dir);
    let mut messages = vec![json!({"role": "user", "content": "first"})];
    assert_eq!(transcript.sync(&messages), None);
    // More than the file system holds: the append is cut short, then fails.
    messages.push(json!({"role": "assistant", "content": [
        {"type": "text", "text": "x".repeat(200_000)},
    ]}));
    let notice = transcript.sync(&messages);
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(
        written.ends_with('\n'),
        "a torn last line: {} bytes",
        written.len()
    );
    let lines: Vec<Value> = written
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is JSON"))
        .collect();
    assert_eq!(lines.len(), 1, "only the line before the failed append");
    assert_eq!(lines[0]["message"]["content"], "first");
    // Told once, and then nothing more is written.
    let notice = notice.expect("the failed append is told");
    assert!(
        notice.contains("stopped being written")
            && notice.contains("No space left on device")
            && notice.contains(path.to_str().unwrap()),
        "{notice}"
    );
    messages.push(json!({"role": "user", "content": "later"}));
    assert_eq!(transcript.sync(&messages), None);
    assert_eq!(
        transcript.blocks(&[json!({"type": "text", "text": "t"})]),
        None
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), written);
}

/// Found by review: on a full disk `toolwright agent` left a torn JSON line in
/// `transcript.jsonl` (a 7898-byte line cut at 8192 bytes of file), which a hook reading
/// `transcript_path` cannot parse, and the failure went only to the log. The append is
/// undone (the file cut back to its length before it) and the transcript writer returns,
/// once, the notice for the user.
#[test]
fn a_failed_transcript_append_leaves_no_torn_line() {
    const CHILD: &str = "REVIEW33_TRANSCRIPT_DIR";
    if let Some(dir) = std::env::var_os(CHILD) {
        transcript_on_a_full_disk(Path::new(&dir));
        return;
    }
    if !root_or_skip("a_failed_transcript_append_leaves_no_torn_line") {
        return;
    }
    let holder = tempfile::tempdir().unwrap();
    let fs = holder.path().join("fs");
    std::fs::create_dir(&fs).unwrap();
    let mut child = in_tmpfs(
        &fs,
        "size=64k",
        &std::env::current_exe().unwrap(),
        &[
            "--exact",
            // Its path in the `review` binary (this file is its module `review33_session`).
            "review33_session::a_failed_transcript_append_leaves_no_torn_line",
            "--nocapture",
            "--test-threads=1",
        ],
    );
    child.env(CHILD, &fs);
    let out = output_with_input(child, b"");
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("1 passed"),
        "{}",
        text(&out.stdout)
    );
}

fn jsonl(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// A project with `notes.txt`, and a TMPDIR mount point beside it.
fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let holder = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(holder.path()).unwrap();
    let (root, tmp) = (base.join("project"), base.join("tmp"));
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(&tmp).unwrap();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\n").unwrap();
    (holder, root, tmp)
}

/// `toolwright run --json -` in `root`, with TMPDIR a tmpfs mounted at `tmp` with
/// `options`, given `turn`.
fn run_in_tmpfs(root: &Path, tmp: &Path, options: &str, args: &[&str], turn: &str) -> Output {
    let mut all = vec!["run", "--json"];
    all.extend_from_slice(args);
    all.push("-");
    let mut command = in_tmpfs(
        tmp,
        options,
        Path::new(env!("CARGO_BIN_EXE_toolwright")),
        &all,
    );
    command
        .current_dir(root)
        .env("TMPDIR", tmp)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"));
    output_with_input(command, turn.as_bytes())
}

/// Found by review: with TMPDIR full, `run` (and `serve`, `demo`, `agent`: every command
/// opens its session the same way) stopped before any tool ran ("cannot create the
/// session's temporary directory", exit 2, no tool_result). The session now goes on
/// without its directory, saying once what that changes: every tool_use gets its result;
/// Bash, which has nowhere to put its scratch file, fails saying so.
#[test]
fn a_full_tmpdir_does_not_stop_the_run() {
    if !root_or_skip("a_full_tmpdir_does_not_stop_the_run") {
        return;
    }
    let (_holder, root, tmp) = project();
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": root.join("notes.txt")}}),
        json!({"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "echo from-bash"}}),
    ]);
    // No inode left: not even a directory can be made in it.
    let out = run_in_tmpfs(&root, &tmp, "size=1m,nr_inodes=1", &[], &turn);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let warning = "cannot create the session's temporary directory in";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    assert!(
        stderr.contains("No space left on device")
            && stderr.contains("large tool results cannot be saved to disk"),
        "{stderr}"
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = message["content"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{message}");
    assert_eq!(results[0]["tool_use_id"], "toolu_1");
    assert_eq!(results[0]["content"], "     1→alpha\n     2→beta");
    assert_eq!(results[1]["tool_use_id"], "toolu_2");
    assert_eq!(results[1]["is_error"], true, "{message}");
    let bash = results[1]["content"].to_string();
    assert!(
        bash.contains("Could not start the command")
            && bash.contains(&format!("{}/toolwright-0", tmp.display()))
            && bash.contains("No space left on device"),
        "{bash}"
    );
}

/// Found by review: a save that failed on a full disk (a hook's long message) left the
/// session's directory behind at the end of the run, holding an empty
/// `tool-results/toolwright-hook-output/` (only an empty `tool-results` was removed). Every
/// empty directory in it goes now, and with them the session's directory.
#[test]
fn a_failed_save_leaves_no_session_directory() {
    if !root_or_skip("a_failed_save_leaves_no_session_directory") {
        return;
    }
    let (_holder, root, tmp) = project();
    // After the Read, the hook fills TMPDIR, then gives a message too long to keep in
    // memory, which is saved to a file there (and fails).
    let hook = r#"head -c 4194304 /dev/zero > "$TMPDIR/filler" 2>/dev/null; printf '{"systemMessage": "%s"}' "$(head -c 20000 /dev/zero | tr '\0' x)""#;
    let settings = json!({"hooks": {"PostToolUse": [
        {"matcher": "Read", "hooks": [{"type": "command", "command": hook}]},
    ]}})
    .to_string();
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": root.join("notes.txt")}}),
    ]);
    // The mount ends with the namespace: the test looks at it from inside.
    let mut command = in_tmpfs(
        &tmp,
        "size=256k",
        Path::new("sh"),
        &[
            "-c",
            r#""$@" >/dev/null 2>&1; ls -A "$TMPDIR"; find "$TMPDIR" -mindepth 1 -type d"#,
            "sh",
            env!("CARGO_BIN_EXE_toolwright"),
            "run",
            "--json",
            "--settings",
            &settings,
            "-",
        ],
    );
    command
        .current_dir(&root)
        .env("TMPDIR", &tmp)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"));
    let out = output_with_input(command, turn.as_bytes());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "filler\n",
        "left in TMPDIR (then its directories)"
    );
}
