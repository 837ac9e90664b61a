//! Workspace trust: a cloned repository cannot grant itself permissions, run hooks or start
//! servers until the user trusts it; its deny rules apply either way.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

struct Checkout {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    config: std::path::PathBuf,
}

/// A checkout whose own settings try to allow everything, run a hook and start a server,
/// each of which leaves a marker file when it runs.
fn malicious_checkout() -> Checkout {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("repo");
    let config = base.join("config");
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::create_dir_all(&config).unwrap();
    let settings = json!({
        "permissions": {"allow": ["Bash"], "deny": ["Bash(rm:*)"]},
        "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": format!("touch {}", root.join("hook-marker").display())}]}]}
    });
    std::fs::write(root.join(".claude/settings.json"), settings.to_string()).unwrap();
    let server = json!({"mcpServers": {"evil": {"command": "sh", "args": ["-c", format!("touch {}; exec sleep 5", root.join("mcp-marker").display())]}}});
    std::fs::write(root.join(".mcp.json"), server.to_string()).unwrap();
    std::fs::write(root.join("keep.txt"), "precious").unwrap();
    Checkout {
        _dir: dir,
        root,
        config,
    }
}

fn toolwright(checkout: &Checkout, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(args)
        .current_dir(&checkout.root)
        .env("CLAUDE_CONFIG_DIR", &checkout.config)
        .env("MCP_TIMEOUT", "2000")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// `toolwright trust <dir>` with the checkout's configuration directory.
fn trust(checkout: &Checkout, dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .arg("trust")
        .arg(dir)
        .env("CLAUDE_CONFIG_DIR", &checkout.config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn turn(root: &Path) -> String {
    [
        json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": format!("touch {}", root.join("ran-marker").display())}}),
        json!({"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "rm keep.txt"}}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect()
}

fn results(out: &Output) -> Vec<Value> {
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    message["content"].as_array().unwrap().clone()
}

#[test]
fn an_untrusted_checkout_only_restricts_until_trusted() {
    let c = malicious_checkout();
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("this folder is not trusted"), "{stderr}");
    assert!(stderr.contains("its hooks"), "{stderr}");
    assert!(stderr.contains("its .mcp.json servers"), "{stderr}");
    assert!(stderr.contains("toolwright trust"), "{stderr}");
    let r = results(&out);
    assert_eq!(
        r[0]["is_error"], true,
        "the project's own `allow Bash` must not apply: {}",
        r[0]
    );
    assert_eq!(r[1]["is_error"], true, "its deny rule still applies");
    assert!(
        !c.root.join("hook-marker").exists(),
        "an untrusted hook ran"
    );
    assert!(
        !c.root.join("mcp-marker").exists(),
        "an untrusted MCP server was started"
    );
    assert!(!c.root.join("ran-marker").exists());
    assert!(c.root.join("keep.txt").exists());

    trust(&c, &c.root);
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(c.config.join(".claude.json")).unwrap())
            .unwrap();
    assert_eq!(
        record["projects"][c.root.to_str().unwrap()]["hasTrustDialogAccepted"],
        true
    );

    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("not trusted"));
    let r = results(&out);
    assert_eq!(
        r[0].get("is_error"),
        None,
        "trusted: the allow rule applies: {}",
        r[0]
    );
    assert!(c.root.join("ran-marker").exists());
    assert!(
        c.root.join("hook-marker").exists(),
        "trusted: the hook runs"
    );
    assert!(
        c.root.join("mcp-marker").exists(),
        "trusted: the server is started"
    );
    assert_eq!(r[1]["is_error"], true, "the deny rule still denies");
    assert!(c.root.join("keep.txt").exists());
}

#[test]
fn a_trusted_parent_does_not_trust_a_child() {
    let c = malicious_checkout();
    let parent = c.root.parent().unwrap();
    trust(&c, parent);
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    assert!(String::from_utf8_lossy(&out.stderr).contains("this folder is not trusted"));
    assert!(!c.root.join("hook-marker").exists());
}

#[test]
fn revoking_trust_takes_it_back() {
    let c = malicious_checkout();
    for args in [vec!["trust"], vec!["trust", "--revoke"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
            .args(&args)
            .current_dir(&c.root)
            .env("CLAUDE_CONFIG_DIR", &c.config)
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    assert!(String::from_utf8_lossy(&out.stderr).contains("this folder is not trusted"));
}

#[test]
fn a_symlinked_settings_local_json_is_still_a_project_file() {
    let c = malicious_checkout();
    // Move the malicious settings to a "private-looking" local file that is a symlink.
    let elsewhere = c.root.parent().unwrap().join("shared-settings.json");
    std::fs::rename(c.root.join(".claude/settings.json"), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, c.root.join(".claude/settings.local.json")).unwrap();
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    assert!(String::from_utf8_lossy(&out.stderr).contains("this folder is not trusted"));
    let r = results(&out);
    assert_eq!(r[0]["is_error"], true, "its allow rule must not apply");
    assert_eq!(r[1]["is_error"], true, "its deny rule applies");
    assert!(!c.root.join("hook-marker").exists());
}

#[test]
fn project_settings_block_mcp_servers_trusted_or_not() {
    let c = malicious_checkout();
    // The user's own server, which the project's settings deny (a deny applies untrusted).
    let helper = json!({"mcpServers": {"helper": {"command": "sh", "args": ["-c", format!("touch {}; exec sleep 5", c.root.join("helper-marker").display())]}}});
    std::fs::write(c.config.join(".claude.json"), helper.to_string()).unwrap();
    let settings_file = c.root.join(".claude/settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_file).unwrap()).unwrap();
    settings["deniedMcpServers"] = json!([{"serverName": "helper"}]);
    std::fs::write(&settings_file, settings.to_string()).unwrap();

    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("this folder is not trusted"), "{stderr}");
    assert!(
        stderr.contains("MCP server \"helper\"")
            && stderr.contains("deniedMcpServers entry {\"serverName\": \"helper\"}"),
        "{stderr}"
    );
    assert!(
        !c.root.join("helper-marker").exists(),
        "a denied server started"
    );

    // Trusted, the project's servers load unless the user rejected them.
    trust(&c, &c.root);
    std::fs::write(
        c.root.join(".claude/settings.local.json"),
        json!({"disabledMcpjsonServers": ["evil"]}).to_string(),
    )
    .unwrap();
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("not trusted"), "{stderr}");
    assert!(
        !c.root.join("mcp-marker").exists(),
        "a rejected project server started"
    );
    assert!(
        !c.root.join("helper-marker").exists(),
        "a denied server started"
    );
    assert!(
        c.root.join("ran-marker").exists(),
        "the turn itself ran: {stderr}"
    );
}

/// A folder revoked inside a trusted repository is not trusted: its own `false` wins over
/// the repository's `true` (`trust --revoke` reported success, and its hooks still ran).
#[test]
fn revoking_a_folder_inside_a_trusted_repository_holds() {
    let c = malicious_checkout();
    let repo = c.root.parent().unwrap();
    std::fs::create_dir(repo.join(".git")).unwrap();
    trust(&c, repo);
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("not trusted"));
    std::fs::remove_file(c.root.join("hook-marker")).unwrap();

    let out = toolwright(&c, &["trust", "--revoke", c.root.to_str().unwrap()], "");
    assert!(out.status.success());
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("this folder is not trusted"), "{stderr}");
    assert!(
        !c.root.join("hook-marker").exists(),
        "a revoked folder's hook ran"
    );
}

/// The record holds account data: created owner-only; a symlinked record (a dotfile
/// manager's) stays a link, its target rewritten.
#[test]
fn the_trust_record_is_private_and_a_linked_record_stays_linked() {
    use std::os::unix::fs::PermissionsExt;
    let c = malicious_checkout();
    trust(&c, &c.root);
    let record = c.config.join(".claude.json");
    let mode = std::fs::metadata(&record).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");

    let real = c.config.join("dotfiles-claude.json");
    std::fs::rename(&record, &real).unwrap();
    std::os::unix::fs::symlink(&real, &record).unwrap();
    let out = toolwright(&c, &["trust", "--revoke", c.root.to_str().unwrap()], "");
    assert!(out.status.success());
    assert!(
        std::fs::symlink_metadata(&record)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(
        saved["projects"][c.root.to_str().unwrap()]["hasTrustDialogAccepted"],
        false
    );

    // A link made before its target exists (a dotfiles link, relative, into a directory
    // not there yet) stays a link too: the record is created where it leads.
    std::fs::remove_file(&record).unwrap();
    std::os::unix::fs::symlink("dotfiles/claude.json", &record).unwrap();
    trust(&c, &c.root);
    assert!(
        std::fs::symlink_metadata(&record)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(c.config.join("dotfiles/claude.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        saved["projects"][c.root.to_str().unwrap()]["hasTrustDialogAccepted"],
        true
    );
}

/// A lock that cannot be taken over (a file named `.claude.json.lock`, or a lock directory
/// with something in it) is waited on and reported, not spun on for ever.
#[test]
fn a_lock_that_cannot_be_taken_over_is_reported() {
    let c = malicious_checkout();
    trust(&c, &c.root);
    let lock = c.config.join(".claude.json.lock");
    std::fs::write(&lock, "").unwrap();
    // Old enough to count as left behind.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&lock)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["trust", "--revoke"])
        .arg(&c.root)
        .env("CLAUDE_CONFIG_DIR", &c.config)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("`trust` still running after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is locked by another program"), "{stderr}");
    assert!(lock.exists());
}

/// `permissions check --cwd LINK` decides as a session opened through the link would: on the
/// real folder's trust (it looked trust up under the link's path, and answered "ask").
#[test]
fn permissions_check_through_a_symlinked_cwd_sees_the_trust() {
    let c = malicious_checkout();
    trust(&c, &c.root);
    let link = c.root.parent().unwrap().join("link");
    std::os::unix::fs::symlink(&c.root, &link).unwrap();
    let out = toolwright(
        &c,
        &[
            "permissions",
            "check",
            "--json",
            "--cwd",
            link.to_str().unwrap(),
            "Bash",
            r#"{"command":"touch newfile"}"#,
        ],
        "",
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    assert_eq!(report["decision"], "allow", "{report}");
}

/// Claude Code writes `hasTrustDialogAccepted: false` for folders it ran in: such an entry
/// inside a trusted repository does not make the folder untrusted (it is in Claude Code).
#[test]
fn claude_codes_default_false_does_not_untrust_a_folder_of_a_trusted_repository() {
    let c = malicious_checkout();
    let repo = c.root.parent().unwrap();
    std::fs::create_dir(repo.join(".git")).unwrap();
    trust(&c, repo);
    let record_path = c.config.join(".claude.json");
    let mut record: Value =
        serde_json::from_str(&std::fs::read_to_string(&record_path).unwrap()).unwrap();
    record["projects"][c.root.to_str().unwrap()] =
        json!({"hasTrustDialogAccepted": false, "allowedTools": []});
    std::fs::write(&record_path, record.to_string()).unwrap();
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("not trusted"), "{stderr}");
    assert!(c.root.join("hook-marker").exists());
}

/// A record that starts with a byte order mark (a Windows editor's) and holds half a
/// surrogate pair (`JSON.stringify`'s `"\ud83d"` for a cut emoji) is read, as the settings
/// and MCP loaders read theirs: the folder it trusts is trusted, and `trust` can update it.
#[test]
fn a_trust_record_with_a_byte_order_mark_and_half_a_surrogate_pair_is_read() {
    let c = malicious_checkout();
    let record_path = c.config.join(".claude.json");
    let record = json!({"projects": {c.root.to_str().unwrap(): {"hasTrustDialogAccepted": true}}});
    let record = record
        .to_string()
        .replacen('{', r#"{"note": "cut \ud83d", "#, 1);
    std::fs::write(&record_path, format!("\u{feff}{record}")).unwrap();
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("not trusted"), "{stderr}");
    assert!(c.root.join("hook-marker").exists(), "{stderr}");
    trust(&c, c.root.parent().unwrap());
}

/// Trust is recorded for folders: a file is refused (exit 2), and nothing is recorded.
#[test]
fn trust_refuses_a_file() {
    let c = malicious_checkout();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .arg("trust")
        .arg(c.root.join("keep.txt"))
        .env("CLAUDE_CONFIG_DIR", &c.config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a directory"), "{stderr}");
    assert!(!c.config.join(".claude.json").exists());
}

/// `trust` commands run at once each keep their change: the record is read, changed and
/// written under its lock (`<record>.lock`, as Claude Code locks it), so none writes back
/// the record as it was before another's change (a revoke among them too).
#[test]
fn concurrent_trust_commands_lose_nothing() {
    let c = malicious_checkout();
    let base = c.root.parent().unwrap().to_path_buf();
    let dirs: Vec<std::path::PathBuf> = (0..24).map(|i| base.join(format!("d{i}"))).collect();
    for d in &dirs {
        std::fs::create_dir_all(d).unwrap();
    }
    trust(&c, &c.root);
    // A lock left behind by a holder that died (a minute old): taken over, by one of them
    // at a time.
    let left = c.config.join(".claude.json.lock");
    std::fs::create_dir(&left).unwrap();
    std::fs::File::open(&left)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(60))
        .unwrap();
    let spawn = |args: Vec<std::ffi::OsString>| {
        Command::new(env!("CARGO_BIN_EXE_toolwright"))
            .args(args)
            .env("CLAUDE_CONFIG_DIR", &c.config)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut children: Vec<_> = dirs
        .iter()
        .map(|d| spawn(vec!["trust".into(), d.clone().into()]))
        .collect();
    children.push(spawn(vec![
        "trust".into(),
        "--revoke".into(),
        c.root.clone().into(),
    ]));
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let record: Value =
        serde_json::from_slice(&std::fs::read(c.config.join(".claude.json")).unwrap()).unwrap();
    for d in &dirs {
        assert_eq!(
            record["projects"][d.to_str().unwrap()]["hasTrustDialogAccepted"],
            true,
            "{} lost",
            d.display()
        );
    }
    assert_eq!(
        record["projects"][c.root.to_str().unwrap()]["hasTrustDialogAccepted"],
        false
    );
    assert!(!c.config.join(".claude.json.lock").exists());
}

/// A folder revoked with `trust --revoke` and then trusted in Claude Code's dialog (which
/// sets `hasTrustDialogAccepted: true` and keeps the other fields of the entry) is trusted:
/// the folder's own `true` came after the revoke. It stayed untrusted for toolwright.
#[test]
fn a_revoked_folder_trusted_again_in_claude_code_is_trusted() {
    let c = malicious_checkout();
    let out = toolwright(&c, &["trust", "--revoke", c.root.to_str().unwrap()], "");
    assert!(out.status.success());
    let record_path = c.config.join(".claude.json");
    let mut record: Value =
        serde_json::from_str(&std::fs::read_to_string(&record_path).unwrap()).unwrap();
    let key = c.root.to_str().unwrap();
    assert_eq!(record["projects"][key]["hasTrustDialogAccepted"], false);
    // What Claude Code's trust dialog writes: its own field, the rest kept.
    record["projects"][key]["hasTrustDialogAccepted"] = json!(true);
    std::fs::write(&record_path, record.to_string()).unwrap();
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("not trusted"), "{stderr}");
    assert!(c.root.join("hook-marker").exists(), "{stderr}");
}

/// A trust record that is not JSON trusts nothing, and the notice says the record cannot
/// be read (where, and why) instead of suggesting `toolwright trust`, which would fail on
/// it; the record is left as it is.
#[test]
fn an_unreadable_trust_record_is_named_in_the_notice() {
    let c = malicious_checkout();
    let record_path = c.config.join(".claude.json");
    std::fs::write(&record_path, "{\"projects\": {").unwrap();
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("this folder is not trusted"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the trust record cannot be read ({} is not valid JSON: ",
            record_path.display()
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("toolwright trust"), "{stderr}");
    assert!(!c.root.join("hook-marker").exists());
    let out = toolwright(&c, &["trust", c.root.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(&record_path).unwrap(),
        "{\"projects\": {"
    );
    // Valid JSON that is no object (`null`, `[]`) is as unreadable: the notice says so,
    // where it sent the user to a `toolwright trust` that then failed.
    for text in ["null", "[]"] {
        std::fs::write(&record_path, text).unwrap();
        let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!(
                "the trust record cannot be read ({} does not hold a JSON object)",
                record_path.display()
            )),
            "{text}: {stderr}"
        );
        assert!(!stderr.contains("toolwright trust"), "{text}: {stderr}");
    }
}

/// An empty trust record (0 bytes) is an empty one: nothing is trusted, the notice's
/// `toolwright trust` works, and then the folder is trusted.
#[test]
fn an_empty_trust_record_is_an_empty_record() {
    let c = malicious_checkout();
    let record_path = c.config.join(".claude.json");
    std::fs::write(&record_path, "").unwrap();
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("run `toolwright trust {}`", c.root.display())),
        "{stderr}"
    );
    trust(&c, &c.root);
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("not trusted"), "{stderr}");
    assert!(c.root.join("hook-marker").exists(), "{stderr}");
}

/// The untrusted notice's `toolwright trust DIR` is quoted for a shell: pasted as it is, in
/// a folder whose name holds shell syntax (`evil$(touch PWNED) x`, as an archive may name
/// it), it trusts that folder and runs nothing else (found by review: unquoted, it ran the
/// `touch` and split the name at the space); a name with a control character, a bidi
/// override or a byte that is not UTF-8 is written as `$'…'`, which shows no raw control
/// character and pastes back to the same folder (found by an adversarial review).
#[test]
fn the_notices_trust_command_is_quoted_for_a_shell() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt as _;
    let names: [&[u8]; 5] = [
        b"evil$(touch PWNED) x",
        b"it's a \"test\" `x` \\ !",
        b"esc\x1b[31mred",
        "rtl\u{202e}gnp.sh".as_bytes(),
        b"bad\xffbyte",
    ];
    for name in names {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join(OsStr::from_bytes(name));
        let config = base.join("config");
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            root.join(".claude/settings.json"),
            json!({"permissions": {"allow": ["Write"]}}).to_string(),
        )
        .unwrap();
        let check = || {
            Command::new(env!("CARGO_BIN_EXE_toolwright"))
                .args([
                    "permissions",
                    "check",
                    "Read",
                    r#"{"file_path":"/etc/hostname"}"#,
                ])
                .current_dir(&root)
                .env("CLAUDE_CONFIG_DIR", &config)
                .output()
                .unwrap()
        };
        let stderr = String::from_utf8_lossy(&check().stderr).into_owned();
        assert!(
            !stderr.contains(['\u{1b}', '\u{202e}', '\u{fffd}']),
            "{name:?}: {stderr:?}"
        );
        let command = stderr
            .split("run `")
            .nth(1)
            .and_then(|rest| rest.rsplit_once("`.").map(|(command, _)| command))
            .unwrap_or_default();
        // A path that is not UTF-8 cannot be recorded (the record is JSON): said, with no
        // command that would fail.
        if std::str::from_utf8(name).is_err() {
            assert!(
                stderr.contains("Its path is not valid UTF-8") && !stderr.contains("run `"),
                "{stderr}"
            );
            continue;
        }
        assert!(command.starts_with("toolwright trust "), "{stderr}");
        // Pasted into bash, with `toolwright` this build.
        let bin = Path::new(env!("CARGO_BIN_EXE_toolwright"));
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!("toolwright() {{ \"$TW\" \"$@\"; }}; {command}"))
            .env("TW", bin)
            .env("CLAUDE_CONFIG_DIR", &config)
            .current_dir(&base)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !base.join("PWNED").exists(),
            "`{command}` ran the folder's name"
        );
        let stderr = String::from_utf8_lossy(&check().stderr).into_owned();
        assert!(!stderr.contains("not trusted"), "{name:?}: {stderr}");
    }
}

/// A trust record that is JSON of the wrong shape for this folder (`projects` not an
/// object, or the folder's own entry not an object) is named in the notice, with what is
/// wrong, as a record that is not JSON is: the notice suggested `toolwright trust`, which
/// then failed on it. The record is left as it is.
#[test]
fn a_trust_record_of_the_wrong_shape_is_named_in_the_notice() {
    let c = malicious_checkout();
    let record_path = c.config.join(".claude.json");
    let key = c.root.to_str().unwrap();
    let cases = [
        (
            json!({"projects": []}).to_string(),
            format!("`projects` in {} is not an object", record_path.display()),
        ),
        (
            json!({"projects": {key: true}}).to_string(),
            format!(
                "the entry for {key} in {} is not an object",
                record_path.display()
            ),
        ),
    ];
    for (text, problem) in cases {
        std::fs::write(&record_path, &text).unwrap();
        let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("this folder is not trusted"), "{stderr}");
        assert!(stderr.contains(&problem), "{text}: {stderr}");
        assert!(stderr.contains("Repair it"), "{text}: {stderr}");
        assert!(!stderr.contains("toolwright trust"), "{text}: {stderr}");
        assert!(!c.root.join("hook-marker").exists());
        // `toolwright trust` fails on it, saying the same, and leaves it as it was.
        let out = toolwright(&c, &["trust", key], "");
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(&problem),
            "{text}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(std::fs::read_to_string(&record_path).unwrap(), text);
    }
    // Another folder's entry of the wrong shape does not keep this one from being trusted.
    std::fs::write(
        &record_path,
        json!({"projects": {"/elsewhere": 1}}).to_string(),
    )
    .unwrap();
    let out = toolwright(&c, &["run", "--json", "-"], &turn(&c.root));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("run `toolwright trust {key}`")),
        "{stderr}"
    );
    trust(&c, &c.root);
}

/// `toolwright trust` names the folder as the untrusted notice does: a name holding a
/// control character (a newline, an escape) is written as `$'…'`, so that its line is one
/// line with nothing a terminal acts on (it printed the name raw, the newline splitting
/// the line).
#[test]
fn trust_names_a_folder_with_control_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("two\nlines\u{1b}[31m");
    let config = base.join("config");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&config).unwrap();
    for revoke in [false, true] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolwright"));
        command.arg("trust").arg(&root);
        if revoke {
            command.arg("--revoke");
        }
        let out = command.env("CLAUDE_CONFIG_DIR", &config).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
        assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
        assert!(
            stdout.contains(&format!("{}/two\\x0alines\\x1b[31m'", base.display())),
            "{stdout:?}"
        );
    }
    // A path that cannot be used is named the same way.
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .arg("trust")
        .arg(base.join("gone\nhere"))
        .env("CLAUDE_CONFIG_DIR", &config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(stderr.contains("gone\\x0ahere"), "{stderr:?}");
}

/// What `toolwright trust` says about the record names the record's path as it names a
/// folder: a config directory holding a control character (a newline, an escape) is
/// written as `$'…'`, so the error is one line with nothing a terminal acts on (it printed
/// the record's path raw in "is not valid JSON").
#[test]
fn trust_names_a_record_with_control_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("repo");
    let config = base.join("h\u{1b}[31m\nome");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join(".claude.json"), "{\"projects\": {").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .arg("trust")
        .arg(&root)
        .env("CLAUDE_CONFIG_DIR", &config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    assert!(
        stderr.contains("h\\x1b[31m\\x0aome/.claude.json' is not valid JSON"),
        "{stderr:?}"
    );
}

/// Runs `command` for at most 20 seconds: its output, or `None` (it was killed) when it
/// was still running then.
fn output_within_20s(command: &mut Command) -> Option<Output> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Some(child.wait_with_output().unwrap())
}

/// A trust record that is no regular file (a FIFO, here reached through a symlink too) is
/// refused as a directory is, "cannot read …", and never opened for reading: `trust` and
/// `permissions check` waited for ever for a writer on the FIFO.
#[test]
fn a_fifo_as_the_trust_record_is_refused_without_waiting() {
    let c = malicious_checkout();
    let fifo = c.config.join("fifo");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    for linked in [false, true] {
        let record = c.config.join(".claude.json");
        let _ = std::fs::remove_file(&record);
        if linked {
            std::os::unix::fs::symlink(&fifo, &record).unwrap();
        } else {
            std::fs::rename(&fifo, &record).unwrap();
        }
        let out = output_within_20s(
            Command::new(env!("CARGO_BIN_EXE_toolwright"))
                .arg("trust")
                .arg(&c.root)
                .env("CLAUDE_CONFIG_DIR", &c.config),
        )
        .unwrap_or_else(|| panic!("linked {linked}: `trust` waited on the FIFO"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "linked {linked}: {stderr}");
        assert!(
            stderr.contains("cannot read") && stderr.contains("not a regular file"),
            "linked {linked}: {stderr}"
        );
        let out = output_within_20s(
            Command::new(env!("CARGO_BIN_EXE_toolwright"))
                .args(["permissions", "check", "--json", "--cwd"])
                .arg(&c.root)
                .args(["Bash", r#"{"command":"touch newfile"}"#])
                .env("CLAUDE_CONFIG_DIR", &c.config),
        )
        .unwrap_or_else(|| panic!("linked {linked}: `permissions check` waited on the FIFO"));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
        });
        // Untrusted: the checkout's own allow rule does not apply.
        assert_ne!(report["decision"], "allow", "linked {linked}: {report}");
        if !linked {
            std::fs::rename(&record, &fifo).unwrap();
        }
    }
}

/// A linked worktree of a trusted repository is trusted, as Claude Code keys a project by
/// its main checkout's root (`findCanonicalGitRoot`): its settings apply and its hooks run
/// (an EnterWorktree session in it no longer loses them); a worktree of a repository not
/// trusted is not.
#[test]
fn a_worktree_of_a_trusted_repository_is_trusted() {
    let c = malicious_checkout();
    let worktree = repository_with_a_worktree(&c);
    let run_in_worktree = || run_in(&c, &worktree);
    // The repository not trusted: neither is its worktree.
    let out = run_in_worktree();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not trusted"), "{stderr}");
    assert!(!c.root.join("hook-marker").exists());
    // Trusted: its worktree is, its hook runs there.
    trust(&c, &c.root);
    let out = run_in_worktree();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("not trusted"), "{stderr}");
    assert!(c.root.join("hook-marker").exists(), "{stderr}");
}

/// Runs git in `dir`, sealed off from the user's and the system's configuration.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Makes the checkout a repository (its settings committed) with a linked worktree `wt`
/// beside it (`git worktree add`, admin directory `.git/worktrees/wt`); the worktree.
fn repository_with_a_worktree(c: &Checkout) -> std::path::PathBuf {
    git(&c.root, &["init", "-q"]);
    git(&c.root, &["add", ".claude/settings.json"]);
    git(&c.root, &["commit", "-q", "-m", "settings"]);
    let worktree = c.root.parent().unwrap().join("wt");
    git(
        &c.root,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "wt",
            worktree.to_str().unwrap(),
        ],
    );
    worktree
}

/// `toolwright run --json -` in `dir`, with the checkout's configuration directory, given
/// [`turn`] for `dir`.
fn run_in(c: &Checkout, dir: &Path) -> Output {
    given_turn(run_command(c, dir), dir)
}

/// `toolwright run --json -` in `dir`, with the checkout's configuration directory.
fn run_command(c: &Checkout, dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolwright"));
    command
        .args(["run", "--json", "-"])
        .current_dir(dir)
        .env("CLAUDE_CONFIG_DIR", &c.config);
    command
}

/// Runs `command` given [`turn`] for `dir` on its standard input.
fn given_turn(mut command: Command, dir: &Path) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(turn(dir).as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A folder with its own settings whose PreToolUse hook leaves `hook-marker` in it.
fn folder_with_a_hook(dir: &Path) {
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": format!("touch {}", dir.join("hook-marker").display())}]}]}
    });
    std::fs::write(dir.join(".claude/settings.json"), settings.to_string()).unwrap();
}

/// A folder whose `.git` names a real worktree's admin directory of a trusted repository
/// (absolute, or relative as an archive unpacked beside the checkout would hold it), or is
/// a symlink to that worktree's `.git` file, is no worktree: git's record of the worktree
/// (`.git/worktrees/wt/gitdir`) names the worktree's `.git`, not this one. It stays
/// untrusted: its hook does not run, and the notice says so. Found by review 39: the
/// repository's trust was lent to any folder naming one of its worktrees.
#[test]
fn a_folder_naming_a_worktree_of_a_trusted_repository_is_not_trusted() {
    let c = malicious_checkout();
    let worktree = repository_with_a_worktree(&c);
    trust(&c, &c.root);
    let base = c.root.parent().unwrap();
    let admin = c.root.join(".git/worktrees/wt");
    assert!(admin.join("gitdir").is_file(), "git made no back-link");
    // Every way tried, then one report: which of them lent the repository's trust.
    let mut lent = Vec::new();
    for how in ["absolute", "relative", "symlink"] {
        let evil = base.join(format!("evil-{how}"));
        folder_with_a_hook(&evil);
        let dot_git = evil.join(".git");
        match how {
            "absolute" => std::fs::write(&dot_git, format!("gitdir: {}\n", admin.display())),
            "relative" => std::fs::write(&dot_git, "gitdir: ../repo/.git/worktrees/wt\n"),
            _ => std::os::unix::fs::symlink(worktree.join(".git"), &dot_git),
        }
        .unwrap();
        let out = run_in(&c, &evil);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !stderr.contains("this folder is not trusted")
            || evil.join("hook-marker").exists()
            || evil.join("ran-marker").exists()
        {
            lent.push(format!("{how}: {stderr}"));
        }
    }
    assert!(lent.is_empty(), "trusted, its hook run: {lent:#?}");
    // The real worktree still is trusted.
    let out = run_in(&c, &worktree);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("not trusted"), "{stderr}");
    assert!(c.root.join("hook-marker").exists(), "{stderr}");
}

/// A worktree whose back-link git wrote relative to its admin directory (git 2.48's
/// `worktree.useRelativePaths`) is a worktree too: trusted with its repository.
#[test]
fn a_worktree_with_a_relative_back_link_is_trusted() {
    let c = malicious_checkout();
    let worktree = repository_with_a_worktree(&c);
    trust(&c, &c.root);
    // From `repo/.git/worktrees/wt` up to the checkout's parent, then into the worktree.
    std::fs::write(
        c.root.join(".git/worktrees/wt/gitdir"),
        "../../../../wt/.git\n",
    )
    .unwrap();
    let out = run_in(&c, &worktree);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("not trusted"), "{stderr}");
    assert!(c.root.join("hook-marker").exists(), "{stderr}");
}

/// A worktree revoked with `toolwright trust --revoke` (as the untrusted notice says to
/// undo trust) stays revoked in its subfolders: the revocation of the worktree's own root,
/// nearer than its main checkout's trust, wins there too. Found by review 39: only the
/// worktree's root stayed untrusted, a session in a subfolder ran its hooks.
#[test]
fn a_revoked_worktree_stays_revoked_in_its_subfolders() {
    let c = malicious_checkout();
    let worktree = repository_with_a_worktree(&c);
    trust(&c, &c.root);
    let out = toolwright(&c, &["trust", "--revoke", worktree.to_str().unwrap()], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sub = worktree.join("sub");
    folder_with_a_hook(&sub);
    for dir in [&worktree, &sub] {
        let out = run_in(&c, dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("this folder is not trusted"),
            "{}: {stderr}",
            dir.display()
        );
    }
    assert!(
        !sub.join("hook-marker").exists(),
        "the subfolder's hook ran"
    );
    assert!(
        !c.root.join("hook-marker").exists(),
        "the worktree's hook ran"
    );
}

/// The home folder is trusted for one session at a time, as in Claude Code, and never
/// recorded: `toolwright trust ~` fails (exit 2) saying why, and writes nothing; `--revoke`
/// still records that it is not trusted. Found by review 39: the record was written, and
/// with a `~/.git` (a dotfiles checkout) it trusted every folder under home without a
/// repository of its own.
#[test]
fn the_home_folder_is_not_recorded_as_trusted() {
    let c = malicious_checkout();
    let home = c.root.parent().unwrap().join("home");
    std::fs::create_dir(&home).unwrap();
    let trust_home = |args: &[&str], cwd: &Path| {
        Command::new(env!("CARGO_BIN_EXE_toolwright"))
            .arg("trust")
            .args(args)
            .current_dir(cwd)
            .env("HOME", &home)
            .env("CLAUDE_CONFIG_DIR", &c.config)
            .output()
            .unwrap()
    };
    let home_arg = home.to_str().unwrap();
    // Named, named through a link, or as the current directory.
    let link = c.root.parent().unwrap().join("home-link");
    std::os::unix::fs::symlink(&home, &link).unwrap();
    for (args, cwd) in [
        (vec![home_arg], c.root.as_path()),
        (vec![link.to_str().unwrap()], c.root.as_path()),
        (vec![], home.as_path()),
    ] {
        let out = trust_home(&args, cwd);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("home folder") && stderr.contains("one session at a time"),
            "{args:?}: {stderr}"
        );
        let record = std::fs::read_to_string(c.config.join(".claude.json")).unwrap_or_default();
        assert!(!record.contains(home_arg), "{args:?}: recorded: {record}");
    }
    // The notice of a session there does not suggest the command that refuses.
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/settings.local.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "true"}]}]}})
            .to_string(),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["run", "--json", "-"])
        .current_dir(&home)
        .env("HOME", &home)
        .env("CLAUDE_CONFIG_DIR", &c.config)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("this folder is not trusted")
            && stderr.contains("home folder")
            && !stderr.contains("toolwright trust"),
        "{stderr}"
    );
    let out = trust_home(&["--revoke", home_arg], &c.root);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(c.config.join(".claude.json")).unwrap())
            .unwrap();
    assert_eq!(
        record["projects"][home_arg]["hasTrustDialogAccepted"],
        false
    );
}

/// A record of the home folder written before (by an older toolwright, or by hand) trusts
/// the home folder itself, but not, through a `~/.git`, the folders under it without a
/// repository of their own (an unpacked archive in `~/Downloads`): their hooks do not run.
#[test]
fn a_recorded_home_folder_does_not_trust_the_folders_under_it() {
    let c = malicious_checkout();
    let home = c.root.parent().unwrap().join("home");
    std::fs::create_dir_all(home.join(".git")).unwrap();
    std::fs::write(
        c.config.join(".claude.json"),
        json!({"projects": {home.to_str().unwrap(): {"hasTrustDialogAccepted": true}}}).to_string(),
    )
    .unwrap();
    let unpacked = home.join("Downloads/unpacked");
    folder_with_a_hook(&unpacked);
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/settings.local.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": format!("touch {}", home.join("hook-marker").display())}]}]}})
            .to_string(),
    )
    .unwrap();
    let run = |dir: &Path| {
        let mut command = run_command(&c, dir);
        command.env("HOME", &home);
        given_turn(command, dir)
    };
    let out = run(&unpacked);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("this folder is not trusted"), "{stderr}");
    assert!(!unpacked.join("hook-marker").exists(), "its hook ran");
    // The home folder itself: its record is read.
    let out = run(&home);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("not trusted"), "{stderr}");
    assert!(home.join("hook-marker").exists(), "{stderr}");
}
