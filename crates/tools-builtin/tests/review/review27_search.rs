//! Glob, Grep and the file tools' paths, review 27: path rules hold for paths that are not
//! valid UTF-8 (a project, or a home directory, whose name is not), and input refusals are
//! short.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use crate::common::{ctx, fail, text};
use serde_json::{Value, json};
use tool_core::{
    PermissionMode, PermissionResult, RuleSource, SourcedRule, Tool, ToolPermissionContext,
    ToolUseContext,
};
use tools_builtin::{Glob, Grep, Read, Write};

/// A directory named `bad\xffdir` (not valid UTF-8) in `parent`.
fn non_utf8_dir(parent: &Path, name: &[u8]) -> PathBuf {
    let dir = parent.join(OsStr::from_bytes(name));
    fs::create_dir_all(&dir).unwrap();
    assert!(dir.to_str().is_none());
    dir
}

fn rules(list: &[&str]) -> Vec<SourcedRule> {
    list.iter()
        .map(|r| SourcedRule {
            source: RuleSource::ProjectSettings,
            rule: (*r).to_owned(),
        })
        .collect()
}

/// The session's decision on `input`, taken as the pipeline takes it: the input as hooks
/// and permission checks see it, judged by an engine of `perm`'s rules anchored at `cwd`
/// (with `home` as `~`), in `perm`'s mode.
async fn decide(
    tool: &dyn Tool,
    input: Value,
    cwd: &Path,
    home: Option<&Path>,
    perm: ToolPermissionContext,
) -> PermissionResult {
    let mut roots = tool_perms::PathRoots::for_cwd(cwd);
    if let Some(home) = home {
        roots.home = Some(home.to_path_buf());
    }
    let engine = tool_perms::PermissionEngine::new(&perm, roots).unwrap();
    let c = ToolUseContext::new(cwd)
        .with_home(home.map(Path::to_path_buf))
        .with_permission(perm);
    let input = tool.parse_input(input).unwrap();
    let observed = tool.observable_input(&input, &c).unwrap_or(input);
    engine.decide(tool, &observed, &c).await
}

fn perm(mode: PermissionMode) -> ToolPermissionContext {
    ToolPermissionContext {
        mode,
        ..Default::default()
    }
}

fn with_deny(mode: PermissionMode, list: &[&str]) -> ToolPermissionContext {
    ToolPermissionContext {
        deny: rules(list),
        ..perm(mode)
    }
}

fn with_ask(mode: PermissionMode, list: &[&str]) -> ToolPermissionContext {
    ToolPermissionContext {
        ask: rules(list),
        ..perm(mode)
    }
}

/// A Grep of a relative `path` in a project whose directory name is not valid UTF-8 is
/// judged by the Read rules as one in any other project: a deny rule refuses it in every
/// mode, an ask rule asks (dontAsk refuses), and a link out of the project is judged where
/// it leads (a deny on the target holds in bypass mode; the question names the path). The
/// resolved path could not be written into the input's JSON, so the call had no permission
/// subject and was allowed as a search inside the working directory, without the rules.
#[tokio::test]
async fn a_relative_grep_path_in_a_non_utf8_project_is_judged_by_the_path_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let utf8 = tmp.path().join("good");
    fs::create_dir_all(&utf8).unwrap();
    let bad = non_utf8_dir(tmp.path(), b"bad\xffdir");
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("passwd"), "root:x:0:0\n").unwrap();
    for proj in [&utf8, &bad] {
        fs::write(proj.join("secret.txt"), "TOKEN=topsecret\n").unwrap();
        std::os::unix::fs::symlink(&outside, proj.join("etclink")).unwrap();
        let shown = proj.display();
        for path in ["secret.txt", "./secret.txt", " secret.txt "] {
            let input = json!({"pattern": "TOKEN", "path": path, "output_mode": "content"});
            for mode in [
                PermissionMode::Default,
                PermissionMode::BypassPermissions,
                PermissionMode::DontAsk,
                PermissionMode::AcceptEdits,
            ] {
                let got = decide(
                    &Grep,
                    input.clone(),
                    proj,
                    None,
                    with_deny(mode, &["Read(./secret.txt)"]),
                )
                .await;
                assert_eq!(got.behavior(), "deny", "{shown} {path} {mode:?}: {got:?}");
            }
            let got = decide(
                &Grep,
                input.clone(),
                proj,
                None,
                with_ask(PermissionMode::Default, &["Read(./secret.txt)"]),
            )
            .await;
            assert_eq!(got.behavior(), "ask", "{shown} {path}: {got:?}");
            for mode in [PermissionMode::DontAsk, PermissionMode::Plan] {
                let got = decide(
                    &Grep,
                    input.clone(),
                    proj,
                    None,
                    with_ask(mode, &["Read(./secret.txt)"]),
                )
                .await;
                assert_ne!(got.behavior(), "allow", "{shown} {path} {mode:?}: {got:?}");
            }
            // Without a rule, a file of the project is read unasked.
            let got = decide(&Grep, input, proj, None, perm(PermissionMode::Default)).await;
            assert_eq!(got.behavior(), "allow", "{shown} {path}: {got:?}");
        }
        // Through a link out of the project: judged where it leads.
        let input = json!({"pattern": "root", "path": "etclink/passwd"});
        let passwd = format!("Read(/{}/passwd)", outside.display());
        let got = decide(
            &Grep,
            input.clone(),
            proj,
            None,
            with_deny(PermissionMode::BypassPermissions, &[&passwd]),
        )
        .await;
        assert_eq!(got.behavior(), "deny", "{shown}: {got:?}");
        // An allow rule on the target alone does not allow the link's path (the engine
        // wants both): asked about, with a question that names the path.
        let all = format!("Read(/{}/**)", outside.display());
        let allowed = ToolPermissionContext {
            allow: rules(&[&all]),
            ..perm(PermissionMode::Default)
        };
        for perm in [allowed, perm(PermissionMode::Default)] {
            match decide(&Grep, input.clone(), proj, None, perm).await {
                PermissionResult::Ask { message, .. } => {
                    assert!(message.contains("etclink/passwd"), "{shown}: {message}");
                }
                other => panic!("{shown}: {other:?}"),
            }
        }
    }
}

/// Glob's search root in a project whose name is not valid UTF-8 is judged as Grep's: a
/// relative `path`, a pattern climbing out with `..`, and a `~/` pattern in a home
/// directory whose name is not valid UTF-8 (it was judged as a search of the working
/// directory).
#[tokio::test]
async fn glob_roots_with_non_utf8_names_are_judged_by_the_path_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = non_utf8_dir(tmp.path(), b"proj\xfe");
    let home = non_utf8_dir(tmp.path(), b"home\xff");
    fs::create_dir_all(proj.join("private")).unwrap();
    fs::write(proj.join("private/key.pem"), "k").unwrap();
    fs::create_dir_all(home.join("notes")).unwrap();
    fs::write(home.join("notes/a.txt"), "a").unwrap();
    let sibling = tmp.path().join("sibling");
    fs::create_dir_all(&sibling).unwrap();
    for input in [
        json!({"pattern": "*", "path": "private"}),
        json!({"pattern": "../*", "path": "private/../private/x"}),
    ] {
        let got = decide(
            &Glob,
            input.clone(),
            &proj,
            None,
            with_deny(PermissionMode::BypassPermissions, &["Read(./private)"]),
        )
        .await;
        assert_eq!(got.behavior(), "deny", "{input}: {got:?}");
        let got = decide(
            &Glob,
            input.clone(),
            &proj,
            None,
            with_ask(PermissionMode::Default, &["Read(./private)"]),
        )
        .await;
        assert_eq!(got.behavior(), "ask", "{input}: {got:?}");
    }
    // Climbing with `..`: inside the project allowed, out of it asked about.
    let got = decide(
        &Glob,
        json!({"pattern": "../sibling/*", "path": "private"}),
        &proj,
        None,
        perm(PermissionMode::Default),
    )
    .await;
    assert_eq!(got.behavior(), "allow", "{got:?}");
    let got = decide(
        &Glob,
        json!({"pattern": "../../sibling/*", "path": "private"}),
        &proj,
        None,
        perm(PermissionMode::Default),
    )
    .await;
    assert_eq!(got.behavior(), "ask", "{got:?}");
    // A climb that ends in a directory named `~` names that directory of the project, not
    // the home directory.
    fs::create_dir_all(proj.join("~/x")).unwrap();
    let got = decide(
        &Glob,
        json!({"pattern": "a/../~/x/*"}),
        &proj,
        Some(&home),
        with_deny(PermissionMode::BypassPermissions, &["Read(./~/x)"]),
    )
    .await;
    assert_eq!(got.behavior(), "deny", "{got:?}");
    // A `~/` pattern: searched in the home directory (not in a `~` of the working
    // directory), and judged by the home directory's rules.
    let c = ctx(&proj).with_home(Some(home.clone()));
    let found = text(&Glob, &c, json!({"pattern": "~/notes/*.txt"})).await;
    assert_eq!(found, home.join("notes/a.txt").display().to_string());
    let got = decide(
        &Glob,
        json!({"pattern": "~/notes/*.txt"}),
        &proj,
        Some(&home),
        with_deny(PermissionMode::BypassPermissions, &["Read(~/notes)"]),
    )
    .await;
    assert_eq!(got.behavior(), "deny", "{got:?}");
    let got = decide(
        &Glob,
        json!({"pattern": "*.txt", "path": "~/notes"}),
        &proj,
        Some(&home),
        with_deny(PermissionMode::BypassPermissions, &["Read(~/notes)"]),
    )
    .await;
    assert_eq!(got.behavior(), "deny", "{got:?}");
}

/// A file tool's `~/` path, in a home directory whose name is not valid UTF-8, is judged
/// in the call's home directory: it was judged in `$HOME` (or, without one, not at all).
#[tokio::test]
async fn a_file_tools_tilde_path_in_a_non_utf8_home_is_judged_by_the_path_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    fs::create_dir_all(&proj).unwrap();
    let home = non_utf8_dir(tmp.path(), b"home\xff");
    fs::write(home.join("secret.txt"), "s").unwrap();
    let got = decide(
        &Read,
        json!({"file_path": "~/secret.txt"}),
        &proj,
        Some(&home),
        with_deny(PermissionMode::BypassPermissions, &["Read(~/secret.txt)"]),
    )
    .await;
    assert_eq!(got.behavior(), "deny", "{got:?}");
    let got = decide(
        &Read,
        json!({"file_path": "~/secret.txt"}),
        &proj,
        Some(&home),
        with_ask(PermissionMode::Default, &["Read(~/secret.txt)"]),
    )
    .await;
    assert_eq!(got.behavior(), "ask", "{got:?}");
    let got = decide(
        &Write,
        json!({"file_path": "~/new.txt", "content": "x"}),
        &proj,
        Some(&home),
        with_deny(PermissionMode::BypassPermissions, &["Edit(~/new.txt)"]),
    )
    .await;
    assert_eq!(got.behavior(), "deny", "{got:?}");
}

/// A Grep of a single file a deny rule forbids is refused by the tool itself, as the file
/// tools refuse it, whoever let the call through (a walk already left such files out; a
/// file named as the root was searched).
#[tokio::test]
async fn grep_refuses_a_denied_single_file_root() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = non_utf8_dir(tmp.path(), b"bad\xffdir");
    fs::write(proj.join("secret.txt"), "TOKEN=topsecret\n").unwrap();
    fs::write(proj.join("open.txt"), "TOKEN=open\n").unwrap();
    let c = ctx(&proj).with_permission(with_deny(
        PermissionMode::BypassPermissions,
        &["Read(./secret.txt)"],
    ));
    let input = json!({"pattern": "TOKEN", "path": "secret.txt", "output_mode": "content"});
    let e = fail(&Grep, &c, input).await;
    assert!(!e.text.contains("topsecret"), "{}", e.text);
    assert!(
        e.text.contains("denied by your permission settings"),
        "{}",
        e.text
    );
    let found = text(
        &Grep,
        &c,
        json!({"pattern": "TOKEN", "output_mode": "content"}),
    )
    .await;
    assert_eq!(found, "open.txt:1:TOKEN=open");
}

/// An empty or all-blank `type` is no type filter, as an empty `glob` or `path` is
/// absent: it was refused as an unrecognized file type ``.
#[tokio::test]
async fn an_empty_grep_type_is_absent() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.rs"), "needle\n").unwrap();
    fs::write(dir.path().join("b.txt"), "needle\n").unwrap();
    let c = ctx(dir.path());
    let all = text(&Grep, &c, json!({"pattern": "needle"})).await;
    assert!(all.contains("a.rs") && all.contains("b.txt"), "{all}");
    for empty in ["", " ", "\t \n"] {
        let found = text(&Grep, &c, json!({"pattern": "needle", "type": empty})).await;
        assert_eq!(found, all, "{empty:?}");
    }
    // A type given with blanks around it is that type.
    let found = text(&Grep, &c, json!({"pattern": "needle", "type": " rust "})).await;
    assert_eq!(found, "Found 1 file\na.rs");
}

/// The longest refusal a bad input may get.
const BOUND: usize = 2_000;

/// Asserts that `refusal` is bounded, quotes the input's start at most once, and says how
/// long the input was.
fn assert_short(refusal: &str, input: &str) {
    assert!(
        refusal.chars().count() < BOUND,
        "{} characters: {}…",
        refusal.chars().count(),
        refusal.chars().take(300).collect::<String>()
    );
    // 150 characters: a quote of 200 holds one such run, a second quote another.
    let head: String = input.chars().take(150).collect();
    assert_eq!(refusal.matches(head.as_str()).count(), 1, "{refusal}");
    let count = format!("({} characters)", input.chars().count());
    assert!(refusal.contains(&count), "{refusal}");
}

/// Refusals of an invalid `glob`, `pattern` or `type` quote the input once, cut short with
/// its length, and keep the library's explanation short: a 100,000-`*` glob gave a
/// 500,000-character refusal (the compiled regex), a 30,000-character regex one of 90,000
/// (the pattern twice and a caret line), and Glob let the 100,000-`*` pattern through its
/// validation (only the glob's parse was checked, not its build) to fail in the call.
#[tokio::test]
async fn refusals_of_huge_inputs_are_short() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.rs"), "needle\n").unwrap();
    let c = ctx(dir.path());
    let stars = format!("{}.rs", "*".repeat(100_000));
    let e = fail(&Grep, &c, json!({"pattern": "x", "glob": stars})).await;
    assert!(e.text.contains("Invalid glob pattern `****"), "{}", e.text);
    assert_short(&e.text, &stars);
    let e = fail(&Glob, &c, json!({"pattern": stars})).await;
    assert!(
        e.code.is_some() || e.text.contains("<tool_use_error>"),
        "{e:?}"
    );
    assert!(e.text.contains("Invalid glob pattern `****"), "{}", e.text);
    assert_short(&e.text, &stars);
    let unclosed = format!("{}[", "a".repeat(30_000));
    for tool in [&Grep as &dyn Tool, &Glob] {
        let input = if tool.name() == "Grep" {
            json!({"pattern": "x", "glob": unclosed})
        } else {
            json!({"pattern": unclosed})
        };
        let e = fail(tool, &c, input).await;
        assert!(e.text.contains("unclosed character class"), "{}", e.text);
        assert_short(&e.text, &unclosed);
    }
    let regex = format!("{}(", "a".repeat(30_000));
    let e = fail(&Grep, &c, json!({"pattern": regex})).await;
    assert!(e.text.contains("Invalid regex pattern `aaaa"), "{}", e.text);
    assert!(e.text.contains("unclosed group"), "{}", e.text);
    assert_short(&e.text, &regex);
    let long_type = "t".repeat(30_000);
    let e = fail(&Grep, &c, json!({"pattern": "x", "type": long_type})).await;
    assert!(e.text.contains("unrecognized file type"), "{}", e.text);
    assert_short(&e.text, &long_type);
    // A short bad input is quoted whole, with the library's explanation.
    let e = fail(&Grep, &c, json!({"pattern": "x", "glob": "a[b"})).await;
    assert!(
        e.text
            .contains("Invalid glob pattern `a[b`: unclosed character class"),
        "{}",
        e.text
    );
}

/// The directory the permission engine judges for a Glob call: its permission subject, a
/// relative one resolved with the call's context (`~` expanded with its home), as the
/// engine resolves it.
fn judged_dir(input: &Value, c: &ToolUseContext) -> PathBuf {
    match Glob.permission_subject(input) {
        Some(tool_core::PermissionSubject::Path { path, .. }) if path.is_relative() => {
            c.resolve_path(&path.to_string_lossy())
        }
        Some(tool_core::PermissionSubject::Path { path, .. }) => path,
        other => panic!("{input}: no path subject: {other:?}"),
    }
}

/// A Glob `path` with `~` and a pattern climbing out of it with `..` is judged in the
/// directory the search walks, whatever the `path` (absent, relative, `~`, `~/x`,
/// absolute), the working directory and the home directory (valid UTF-8 or not, or no
/// home), and whether the engine sees the input as the model wrote it or as observed: for
/// every combination, each file found is in the directory the subject names. A `~` base was
/// collapsed with the pattern's `..` before `~` was expanded (`~/proj` + `../.ssh/*` became
/// `~/.ssh`, then `./~/.ssh`, a directory of the project), while the search walked
/// `$HOME/.ssh`.
#[tokio::test]
async fn a_climbing_glob_is_judged_where_it_walks() {
    let tmp = tempfile::tempdir().unwrap();
    let mid = tmp.path().join("top/mid");
    let marked = |dir: &Path| {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join("f"), "x").unwrap();
    };
    marked(&tmp.path().join("top"));
    marked(&mid);
    marked(&mid.join(".ssh"));
    let utf8_cwd = mid.join("proj");
    let bad_cwd = non_utf8_dir(&mid, b"proj\xfe");
    let utf8_home = mid.join("home");
    let bad_home = non_utf8_dir(&mid, b"home\xff");
    for dir in [&utf8_cwd, &bad_cwd, &utf8_home, &bad_home] {
        for sub in ["", "sub", "proj", ".ssh", "~", "~/proj", "~/.ssh"] {
            marked(&dir.join(sub));
        }
    }
    let mut checked = 0;
    for cwd in [&utf8_cwd, &bad_cwd] {
        for home in [Some(&utf8_home), Some(&bad_home), None] {
            let c = ctx(cwd).with_home(home.cloned());
            let mut paths = vec![None, Some("sub".to_owned()), Some("./sub".to_owned())];
            paths.extend(
                ["~", "~/", "~/proj", " ~/proj ", "~/proj/../proj"].map(|p| Some(p.into())),
            );
            for abs in [utf8_cwd.join("sub"), utf8_home.join("proj")] {
                paths.push(Some(abs.to_str().unwrap().to_owned()));
            }
            for path in &paths {
                for pattern in ["../*", "../.ssh/*", "../../*", "x/../../*", "./../*"] {
                    let mut input = json!({ "pattern": pattern });
                    if let Some(path) = path {
                        input["path"] = json!(path);
                    }
                    let label = format!("cwd {} home {home:?} {input}", cwd.display());
                    let Ok(out) = common::run(&Glob, &c, input.clone()).await else {
                        continue;
                    };
                    let found = out.content.joined_text();
                    let lines: Vec<&str> = found
                        .lines()
                        .filter(|l| l.ends_with("/f") || *l == "f")
                        .collect();
                    assert!(!lines.is_empty(), "{label}: nothing found: {found}");
                    let parsed = Glob.parse_input(input.clone()).unwrap();
                    let observed = Glob.observable_input(&parsed, &c);
                    for seen in std::iter::once(&parsed).chain(observed.as_ref()) {
                        let dir = judged_dir(seen, &c);
                        let marker = dir.join("f");
                        let shown = match marker.strip_prefix(c.cwd()) {
                            Ok(rel) => rel.display().to_string(),
                            Err(_) => marker.display().to_string(),
                        };
                        assert_eq!(lines, [shown.as_str()], "{label} judged as {seen}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 150, "only {checked} combinations searched");
}

/// A Glob of `~/proj` climbing to `~/.ssh`, with a home directory whose name is not valid
/// UTF-8 (the observed input cannot show it resolved), is denied by `Read(~/.ssh/**)` in
/// every mode; it was judged as `./~/.ssh`, a directory of the project, and allowed. `~`
/// climbing to `../../etc` is judged there, not below the working directory.
#[tokio::test]
async fn a_climb_from_a_tilde_path_is_judged_in_the_home_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let mid = tmp.path().join("top/mid");
    let proj = mid.join("proj");
    let home = non_utf8_dir(&mid, b"home\xff");
    for dir in [
        proj.clone(),
        home.join("proj"),
        home.join(".ssh"),
        tmp.path().join("top/etc"),
    ] {
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("f"), "x").unwrap();
    }
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::BypassPermissions,
    ] {
        let got = decide(
            &Glob,
            json!({"path": "~/proj", "pattern": "../.ssh/*"}),
            &proj,
            Some(&home),
            with_deny(mode, &["Read(~/.ssh/**)"]),
        )
        .await;
        assert_eq!(got.behavior(), "deny", "{mode:?}: {got:?}");
    }
    let etc = format!("Read(/{}/**)", tmp.path().join("top/etc").display());
    let got = decide(
        &Glob,
        json!({"path": "~", "pattern": "../../etc/*"}),
        &proj,
        Some(&home),
        with_deny(PermissionMode::BypassPermissions, &[&etc]),
    )
    .await;
    assert_eq!(got.behavior(), "deny", "{got:?}");
}
