//! Review findings on path, domain and suggestion handling: deny and ask rules written
//! through a symlink, case-insensitive deny and ask matching, the suggestions of a path ask
//! and of "don't ask again", IDNA in domain rules, and rules that can never apply.

use crate::common;

use std::path::{Path, PathBuf};

use crate::common::{Fixture, behavior, case, context, probe, run, run_table, run_table_in};
use serde_json::json;
use tool_core::{
    PermissionResult, PermissionUpdate, RuleBehavior, RuleSource, SourcedRule,
    ToolPermissionContext, ToolUseContext,
};
use tool_perms::probe::ProbeTool;
use tool_perms::settings::{SettingsSources, load_permissions};
use tool_perms::{PathRoots, PermissionEngine};

// --- 1. Deny and ask rules written through a symlink ----------------------------------------

/// A rule's base and literal leading directories are resolved too: `Edit(/link_in/**)`
/// (`link_in -> src`) denies `src/main.rs`, `Read(/dir_out/**)` (`dir_out -> $O`) denies
/// `$O/secret.txt`, in every mode. Allow rules are unchanged.
#[tokio::test]
async fn deny_and_ask_rules_through_a_symlink_cover_the_real_path() {
    run_table(vec![
        case("deny", "Edit", "src/main.rs")
            .mode("acceptEdits")
            .deny(&["Edit(/link_in/**)"]),
        case("deny", "Read", "$O/secret.txt")
            .mode("bypassPermissions")
            .deny(&["Read(/dir_out/**)"]),
        case("deny", "Read", "$O/secret.txt")
            .mode("bypassPermissions")
            .deny(&["Read(/dir_out/)"]),
        // A file link: the file it names.
        case("deny", "Read", "$O/secret.txt")
            .mode("bypassPermissions")
            .deny(&["Read(/link_out)"]),
        // The literal prefix is resolved, the glob after it kept.
        case("deny", "Read", "$O/secret.txt")
            .mode("bypassPermissions")
            .deny(&["Read(/dir_out/*.txt)"]),
        case("allow", "Read", "$O/notes.md")
            .mode("bypassPermissions")
            .deny(&["Read(/dir_out/*.txt)"]),
        case("deny", "Read", "$P/.git/config")
            .mode("bypassPermissions")
            .deny(&["Read(/gitlink/config)"]),
        case("deny", "Read", "$O/secret.txt")
            .mode("bypassPermissions")
            .deny(&["Read(//$P/dir_out/**)"]),
        // Ask rules too (bypass-immune).
        case("ask", "Read", "$O/notes.md")
            .mode("bypassPermissions")
            .ask(&["Read(/dir_out/**)"]),
        // Shell paths go through the same rules.
        case("deny", "Bash", "cat $O/secret.txt")
            .mode("bypassPermissions")
            .deny(&["Read(/dir_out/**)"]),
        case("deny", "Bash", "echo x > src/new.rs")
            .mode("bypassPermissions")
            .deny(&["Edit(/link_in/**)"]),
        // Allow rules still need the path itself to match.
        case("ask", "Read", "$O/notes.md").allow(&["Read(/dir_out/**)"]),
        case("allow", "Read", "$P/dir_out/notes.md").allow(&["Read(/dir_out/**)", "Read(//$O/**)"]),
    ])
    .await;
}

/// The `~` base is resolved as well: a home reached through a link (`/home -> /usr/home`)
/// still has its deny rules applied to the real directory.
#[tokio::test]
async fn a_home_behind_a_symlink_keeps_its_deny_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let real_home = root.join("real_home");
    std::fs::create_dir_all(real_home.join(".ssh")).unwrap();
    std::fs::write(real_home.join(".ssh/id_rsa"), "k").unwrap();
    std::fs::write(real_home.join("notes.txt"), "n").unwrap();
    let home = root.join("home_link");
    std::os::unix::fs::symlink(&real_home, &home).unwrap();
    // The project beside the home directory, and inside it (the session's cwd is
    // canonical: under the real home, while `$HOME` names the link).
    for proj in [root.join("proj"), real_home.join("proj")] {
        std::fs::create_dir_all(&proj).unwrap();
        home_behind_a_symlink(&home, &real_home, &proj).await;
    }
}

async fn home_behind_a_symlink(home: &Path, real_home: &Path, proj: &Path) {
    let (home, proj) = (home.to_path_buf(), proj.to_path_buf());
    let decide = async |deny: &str, path: &Path| {
        let perm = ToolPermissionContext {
            mode: tool_core::PermissionMode::BypassPermissions,
            bypass_available: true,
            deny: vec![SourcedRule {
                source: RuleSource::UserSettings,
                rule: deny.into(),
            }],
            ..Default::default()
        };
        let roots = PathRoots {
            home: Some(home.clone()),
            ..PathRoots::for_cwd(&proj)
        };
        let engine = PermissionEngine::new(&perm, roots).unwrap();
        let ctx = ToolUseContext::new(&proj)
            .with_home(Some(home.clone()))
            .with_permission(perm);
        let tool = ProbeTool::new("Read", &proj, Some(home.clone()));
        let input = json!({"file_path": path.display().to_string()});
        behavior(&engine.decide(&tool, &input, &ctx).await).to_owned()
    };
    assert_eq!(
        decide("Read(~/.ssh/**)", &real_home.join(".ssh/id_rsa")).await,
        "deny"
    );
    assert_eq!(
        decide("Read(~)", &real_home.join("notes.txt")).await,
        "deny"
    );
    assert_eq!(
        decide("Read(~/.ssh/**)", &real_home.join("notes.txt")).await,
        "allow"
    );
    assert_eq!(
        decide("Read(~/**)", &real_home.join("notes.txt")).await,
        "deny"
    );
}

/// The behaviour of one Read in a session whose cwd is `cwd`, with these deny and ask rules.
async fn read_in(cwd: &Path, mode: &str, deny: &[&str], ask: &[&str], path: &str) -> String {
    let rules = |v: &[&str]| {
        v.iter()
            .map(|r| SourcedRule {
                source: RuleSource::ProjectSettings,
                rule: (*r).to_owned(),
            })
            .collect::<Vec<_>>()
    };
    let perm = ToolPermissionContext {
        mode: common::mode_of(mode),
        bypass_available: true,
        deny: rules(deny),
        ask: rules(ask),
        ..Default::default()
    };
    let engine = PermissionEngine::new(&perm, PathRoots::for_cwd(cwd)).unwrap();
    let ctx = ToolUseContext::new(cwd).with_permission(perm);
    let tool = ProbeTool::new("Read", cwd, None);
    let input = json!({ "file_path": path });
    behavior(&engine.decide(&tool, &input, &ctx).await).to_owned()
}

/// A rule written through `/proc` is not also compiled where toolwright's own process sees
/// it lead: `/proc/self/cwd` is our cwd (the session's), `/proc/self/root` is `/`. Resolved,
/// `Read(//proc/self/cwd/**)` denied every read in the project and `Read(//proc/self/root/*)`
/// every path on disk. The rules still apply to paths written through `/proc`.
#[tokio::test]
async fn rules_through_proc_are_not_resolved_in_our_own_process() {
    // cargo runs a test in its package's directory: the session's cwd here.
    let cwd = std::fs::canonicalize(std::env::current_dir().unwrap()).unwrap();
    let manifest = cwd.join("Cargo.toml");
    assert!(manifest.is_file(), "{}", manifest.display());
    let manifest = manifest.display().to_string();
    for deny in ["Read(//proc/self/cwd/**)", "Read(//proc/self/root/*)"] {
        assert_eq!(
            read_in(&cwd, "default", &[deny], &[], &manifest).await,
            "allow",
            "{deny}"
        );
        assert_eq!(
            read_in(&cwd, "bypassPermissions", &[], &[deny], &manifest).await,
            "allow",
            "{deny} as an ask rule"
        );
    }
    assert_eq!(
        read_in(
            &cwd,
            "bypassPermissions",
            &["Read(//proc/self/cwd/**)"],
            &[],
            "/proc/self/cwd/Cargo.toml"
        )
        .await,
        "deny"
    );
    assert_eq!(
        read_in(
            &cwd,
            "bypassPermissions",
            &["Read(//proc/self/root/*)"],
            &[],
            "/proc/self/root/etc/hostname"
        )
        .await,
        "deny"
    );
}

/// A link to `/`, to a directory holding the project, or to the home directory does not
/// widen a rule written through it to that directory (the rule is kept as written, with a
/// warning); a link to anywhere narrower still does.
#[tokio::test]
async fn rules_through_a_link_to_slash_or_above_are_not_widened() {
    let fx = Fixture::new();
    let above = fx.proj.parent().unwrap().to_path_buf();
    std::os::unix::fs::symlink("/", fx.proj.join("slash")).unwrap();
    std::os::unix::fs::symlink(&above, fx.proj.join("up")).unwrap();
    std::os::unix::fs::symlink(&fx.home, fx.proj.join("homelink")).unwrap();
    // Links to `/` and to a directory holding the link: covering their targets would cover
    // the project itself, or everything.
    let wide = [
        "Read(/slash/*)",
        "Read(/slash/**)",
        "Read(/up/**)",
        "Read(/up/*/README.md)",
    ];
    let mut cases = vec![];
    for rule in wide {
        // A project file, a home file, a file outside: as without the rule.
        cases.push(case("allow", "Read", "$P/README.md").deny(&[rule]));
        cases.push(
            case("allow", "Read", "$H/.bashrc")
                .mode("bypassPermissions")
                .deny(&[rule]),
        );
        cases.push(
            case("allow", "Read", "$P/README.md")
                .mode("bypassPermissions")
                .ask(&[rule]),
        );
    }
    // The rules as written still apply.
    cases.extend([
        case("deny", "Read", "$P/slash/etc/hostname")
            .mode("bypassPermissions")
            .deny(&["Read(/slash/*)"]),
        case("deny", "Read", "$P/up/outside/notes.md")
            .mode("bypassPermissions")
            .deny(&["Read(/up/**)"]),
        case("deny", "Read", "$P/homelink/.bashrc")
            .mode("bypassPermissions")
            .deny(&["Read(/homelink/**)"]),
        // A link elsewhere (here to the home directory, beside the project) is that place
        // under another name: the rule covers it by its real name too.
        case("deny", "Read", "$H/.bashrc")
            .mode("bypassPermissions")
            .deny(&["Read(/homelink/**)"]),
        case("allow", "Read", "$P/README.md").deny(&["Read(/homelink/**)"]),
        // Narrower than the link's target: resolved as before.
        case("deny", "Read", "/etc/hostname")
            .mode("bypassPermissions")
            .deny(&["Read(/slash/etc/hostname)"]),
        case("deny", "Read", "$O/notes.md")
            .mode("bypassPermissions")
            .deny(&["Read(/up/outside/**)"]),
        case("deny", "Read", "$H/.ssh/id_rsa")
            .mode("bypassPermissions")
            .deny(&["Read(/homelink/.ssh/**)"]),
    ]);
    for c in &cases {
        assert_eq!(
            behavior(&common::run(&fx, c).await),
            c.expect,
            "{} {} {:?} {:?}",
            c.mode,
            c.input,
            c.deny,
            c.ask
        );
    }
    for rule in wide {
        let w = warnings(&fx, &[rule], &[]);
        assert!(
            w.iter().any(|w| w.starts_with(rule) && w.contains("link")),
            "{rule}: {w:?}"
        );
    }
}

// --- 2. Case-insensitive deny and ask rules -------------------------------------------------

/// Deny and ask rules match whatever the case (node `ignore`'s default, and what a
/// case-insensitive file system does); allow rules stay case-sensitive.
#[tokio::test]
async fn deny_and_ask_rules_ignore_case() {
    run_table(vec![
        case("deny", "Read", ".ENV").deny(&["Read(.env)"]),
        case("deny", "Read", "src/sub/.Env")
            .mode("bypassPermissions")
            .deny(&["Read(.env)"]),
        case("deny", "Edit", "SECRETS/new.txt")
            .mode("bypassPermissions")
            .deny(&["Edit(/secrets/**)"]),
        case("deny", "Read", "$O/Secret.TXT")
            .mode("bypassPermissions")
            .deny(&["Read(//$O/secret.txt)"]),
        case("deny", "Read", "$P/SECRETS/key.pem")
            .mode("bypassPermissions")
            .deny(&["Read(/secrets/**)"]),
        // Not the root: `$P/../PROJ` is another directory on Linux, not the project, and
        // node `ignore` folds only the path relative to the root.
        case("allow", "Read", "$P/../PROJ/secrets/key.pem")
            .mode("bypassPermissions")
            .deny(&["Read(/secrets/**)"]),
        case("allow", "Read", "$P/../PROJ/docs/a.md")
            .mode("bypassPermissions")
            .ask(&["Read(/docs/**)"]),
        case("ask", "Read", "Docs/A.md")
            .mode("bypassPermissions")
            .ask(&["Read(docs/*.md)"]),
        case("deny", "Bash", "cat .ENV")
            .mode("bypassPermissions")
            .deny(&["Read(.env)"]),
        case("allow", "Read", "$O/notes.md").allow(&["Read(//$O/notes.md)"]),
        case("ask", "Read", "$O/NOTES.md").allow(&["Read(//$O/notes.md)"]),
    ])
    .await;
}

// --- 3. The suggestions of a path ask -------------------------------------------------------

fn suggestions(r: &PermissionResult) -> Vec<PermissionUpdate> {
    match r {
        PermissionResult::Ask { suggestions, .. }
        | PermissionResult::Passthrough { suggestions, .. } => suggestions.clone(),
        other => panic!("not an ask: {other:?}"),
    }
}

fn added_dirs(s: &[PermissionUpdate]) -> Vec<String> {
    s.iter()
        .filter_map(|u| match u {
            PermissionUpdate::AddDirectories { directories, .. } => Some(directories.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

fn added_rules(s: &[PermissionUpdate]) -> Vec<String> {
    s.iter()
        .filter_map(|u| match u {
            PermissionUpdate::AddRules {
                rules,
                behavior: RuleBehavior::Allow,
                ..
            } => Some(rules.clone()),
            _ => None,
        })
        .flatten()
        .map(|r| format!("{}({})", r.tool_name, r.rule_content.unwrap_or_default()))
        .collect()
}

async fn ask_of(fx: &Fixture, tool: &str, raw: &str) -> (Vec<PermissionUpdate>, PermissionEngine) {
    let c = case("ask", "Read", "");
    let (engine, ctx) = context(fx, &c);
    let r = engine
        .decide(&probe(fx, tool), &fx.input(tool, raw), &ctx)
        .await;
    assert_eq!(behavior(&r), "ask", "{tool} {raw}: {r:?}");
    (suggestions(&r), engine)
}

async fn decide_with(fx: &Fixture, engine: &PermissionEngine, tool: &str, raw: &str) -> String {
    let (_, ctx) = context(fx, &case("ask", "Read", ""));
    behavior(
        &engine
            .decide(&probe(fx, tool), &fx.input(tool, raw), &ctx)
            .await,
    )
    .to_owned()
}

/// A search of a directory outside the working directories suggests that directory (as a
/// session Read rule, and as a working directory), not its parent; never `/` or the home
/// directory as a working directory.
#[tokio::test]
async fn a_directory_outside_suggests_itself_not_its_parent() {
    let fx = Fixture::new();
    let out = fx.out.display().to_string();
    let (s, engine) = ask_of(&fx, "Grep", "$O").await;
    assert_eq!(added_dirs(&s), std::slice::from_ref(&out), "{s:?}");
    // The rule alone (without the working directory) allows the same search again and what
    // is in the directory, not a sibling whose name starts alike.
    let sibling = fx.out.parent().unwrap().join("outside2");
    std::fs::create_dir_all(&sibling).unwrap();
    std::fs::write(sibling.join("notes.md"), "n").unwrap();
    for u in &s {
        if matches!(u, PermissionUpdate::AddRules { .. }) {
            engine.apply_update(u);
        }
    }
    assert_eq!(decide_with(&fx, &engine, "Grep", "$O").await, "allow");
    assert_eq!(decide_with(&fx, &engine, "Glob", "$O").await, "allow");
    assert_eq!(
        decide_with(&fx, &engine, "Read", "$O/notes.md").await,
        "allow"
    );
    let sibling_notes = sibling.join("notes.md").display().to_string();
    assert_eq!(
        decide_with(&fx, &engine, "Read", &sibling_notes).await,
        "ask"
    );
    assert_eq!(added_rules(&s), [format!("Read(/{out})")], "{s:?}");
    // So does the "don't ask again" answer.
    let (engine, _) = context(&fx, &case("ask", "Read", ""));
    add_session_allows(&fx, &engine, "Grep", "$O");
    assert_eq!(decide_with(&fx, &engine, "Grep", "$O").await, "allow");
    let (s, engine) = ask_of(&fx, "Grep", "$O").await;
    for u in &s {
        engine.apply_update(u);
    }
    assert_eq!(
        decide_with(&fx, &engine, "Read", "$O/notes.md").await,
        "allow"
    );

    for dir in ["$H", "/"] {
        let (s, _) = ask_of(&fx, "Grep", dir).await;
        assert!(added_dirs(&s).is_empty(), "{dir}: {s:?}");
        assert!(added_rules(&s).is_empty(), "{dir}: {s:?}");
    }
    // A file directly in the home directory: that file, not the home directory.
    let (s, engine) = ask_of(&fx, "Read", "$H/.bashrc").await;
    let home = fx.home.display().to_string();
    assert!(added_dirs(&s).is_empty(), "{s:?}");
    assert_eq!(added_rules(&s), [format!("Read(/{home}/.bashrc)")], "{s:?}");
    for u in &s {
        engine.apply_update(u);
    }
    assert_eq!(
        decide_with(&fx, &engine, "Read", "$H/.bashrc").await,
        "allow"
    );
    assert_eq!(
        decide_with(&fx, &engine, "Read", "$H/.ssh/id_rsa").await,
        "ask"
    );
}

/// A write outside the working directories suggests an Edit rule that allows it, not
/// acceptEdits (which allows writes inside the working directories only).
#[tokio::test]
async fn a_write_outside_suggests_what_allows_it() {
    let fx = Fixture::new();
    let (s, engine) = ask_of(&fx, "Write", "$O/new.txt").await;
    assert!(
        !s.iter()
            .any(|u| matches!(u, PermissionUpdate::SetMode { .. })),
        "{s:?}"
    );
    let out = fx.out.display().to_string();
    assert_eq!(added_rules(&s), [format!("Edit(/{out}/**)")], "{s:?}");
    for u in &s {
        engine.apply_update(u);
    }
    assert_eq!(
        decide_with(&fx, &engine, "Write", "$O/new.txt").await,
        "allow"
    );
    // Inside, acceptEdits is still the suggestion.
    let (s, _) = ask_of(&fx, "Write", "src/new.rs").await;
    assert!(
        s.iter()
            .any(|u| matches!(u, PermissionUpdate::SetMode { .. })),
        "{s:?}"
    );
}

/// A path whose last component is a link to a file elsewhere (`out/hosts -> /etc/hosts`,
/// dangling or not) gets a rule for that file, not for the directory it is in (which would
/// make `/etc` writable); a link in a directory above still gets the directory it leads to.
#[tokio::test]
async fn a_link_to_a_file_grants_that_file_not_its_directory() {
    let fx = Fixture::new();
    let generated = fx.proj.join("gen");
    std::fs::create_dir_all(&generated).unwrap();
    std::os::unix::fs::symlink(fx.out.join("secret.txt"), generated.join("hosts")).unwrap();
    std::os::unix::fs::symlink(fx.out.join("new.txt"), generated.join("dangling")).unwrap();
    let out = fx.out.display().to_string();
    for (tool, name, target) in [
        ("Write", "hosts", "secret.txt"),
        ("Write", "dangling", "new.txt"),
        ("Read", "hosts", "secret.txt"),
    ] {
        let family = if tool == "Read" { "Read" } else { "Edit" };
        let raw = format!("$P/gen/{name}");
        let (s, engine) = ask_of(&fx, tool, &raw).await;
        let rules = added_rules(&s);
        assert!(
            rules.contains(&format!("{family}(/{out}/{target})")),
            "{tool} {name}: {rules:?}"
        );
        for u in &s {
            engine.apply_update(u);
        }
        assert_eq!(decide_with(&fx, &engine, tool, &raw).await, "allow");
        // Nothing else in the target's directory.
        assert_eq!(
            decide_with(&fx, &engine, tool, "$O/notes.md").await,
            "ask",
            "{tool} {name}: {rules:?}"
        );
        // "Don't ask again" likewise.
        let (engine, _) = context(&fx, &case("ask", "Read", ""));
        let rules = dont_ask_again(&fx, &engine, tool, &raw);
        assert!(
            !rules.contains(&format!("{family}(/{out}/**)")),
            "{tool} {name}: {rules:?}"
        );
        add_session_allows(&fx, &engine, tool, &raw);
        assert_eq!(decide_with(&fx, &engine, tool, &raw).await, "allow");
        assert_eq!(decide_with(&fx, &engine, tool, "$O/notes.md").await, "ask");
    }
    // A link in a directory above the file: the directory it leads to.
    let (s, _) = ask_of(&fx, "Write", "$P/dir_out/new.txt").await;
    assert!(
        added_rules(&s).contains(&format!("Edit(/{out}/**)")),
        "{s:?}"
    );
}

// --- 4. "Don't ask again" rules are literal -------------------------------------------------

fn dont_ask_again(fx: &Fixture, engine: &PermissionEngine, tool: &str, raw: &str) -> Vec<String> {
    let (_, ctx) = context(fx, &case("ask", "Read", ""));
    engine
        .suggest_rules(&probe(fx, tool), &fx.input(tool, raw), &ctx)
        .into_iter()
        .map(|r| format!("{}({})", r.tool_name, r.rule_content.unwrap_or_default()))
        .collect()
}

fn add_session_allows(fx: &Fixture, engine: &PermissionEngine, tool: &str, raw: &str) {
    let (_, ctx) = context(fx, &case("ask", "Read", ""));
    let rules = engine.suggest_rules(&probe(fx, tool), &fx.input(tool, raw), &ctx);
    let diags = engine.add_rules(RuleBehavior::Allow, RuleSource::Session, &rules);
    assert!(diags.iter().all(|d| !d.error), "{diags:?}");
}

/// A directory name with glob characters (Next.js `app/[slug]`) is escaped in the rule.
#[tokio::test]
async fn dont_ask_again_escapes_glob_characters() {
    let fx = Fixture::new();
    for d in ["app/[slug]", "app/s", "app/{a,b}", "app/a"] {
        std::fs::create_dir_all(fx.proj.join(d)).unwrap();
    }
    let (engine, _) = context(&fx, &case("ask", "Edit", ""));
    assert_eq!(
        decide_with(&fx, &engine, "Edit", "app/[slug]/page.tsx").await,
        "ask"
    );
    add_session_allows(&fx, &engine, "Edit", "app/[slug]/page.tsx");
    assert_eq!(
        decide_with(&fx, &engine, "Edit", "app/[slug]/page.tsx").await,
        "allow"
    );
    assert_eq!(
        decide_with(&fx, &engine, "Edit", "app/s/a.tsx").await,
        "ask"
    );

    add_session_allows(&fx, &engine, "Edit", "app/{a,b}/x.ts");
    assert_eq!(
        decide_with(&fx, &engine, "Edit", "app/{a,b}/x.ts").await,
        "allow"
    );
    assert_eq!(decide_with(&fx, &engine, "Edit", "app/a/x.ts").await, "ask");
}

/// A file directly under `/` is never turned into `Read(///**)` (every path on disk).
#[tokio::test]
async fn dont_ask_again_never_covers_the_whole_disk_or_home() {
    let fx = Fixture::new();
    let (engine, _) = context(&fx, &case("ask", "Read", ""));
    let rules = dont_ask_again(&fx, &engine, "Read", "/x.txt");
    assert_eq!(rules, ["Read(//x.txt)"]);
    add_session_allows(&fx, &engine, "Read", "/x.txt");
    assert_eq!(decide_with(&fx, &engine, "Read", "/y.txt").await, "ask");
    assert_eq!(decide_with(&fx, &engine, "Read", "/x.txt").await, "allow");

    for dir in ["/", "$H"] {
        assert!(
            dont_ask_again(&fx, &engine, "Grep", dir).is_empty(),
            "{dir}"
        );
    }
    add_session_allows(&fx, &engine, "Read", "$H/.bashrc");
    assert_eq!(
        decide_with(&fx, &engine, "Read", "$H/.bashrc").await,
        "allow"
    );
    assert_eq!(
        decide_with(&fx, &engine, "Read", "$H/.ssh/id_rsa").await,
        "ask"
    );
}

/// The rule for a directory reached through a link also names the link's target, which an
/// allow needs to match too.
#[tokio::test]
async fn dont_ask_again_through_a_link_is_effective() {
    let fx = Fixture::new();
    let (engine, _) = context(&fx, &case("ask", "Read", ""));
    assert_eq!(
        decide_with(&fx, &engine, "Read", "$P/dir_out/notes.md").await,
        "ask"
    );
    add_session_allows(&fx, &engine, "Read", "$P/dir_out/notes.md");
    assert_eq!(
        decide_with(&fx, &engine, "Read", "$P/dir_out/notes.md").await,
        "allow"
    );
}

/// `/x` of a `--settings` file that is not the last is anchored at its own directory, whose
/// name is a literal even with `{` `}` in it.
#[tokio::test]
async fn settings_file_directory_with_braces_is_literal() {
    let fx = Fixture::new();
    let dir = fx.home.join("a{b}");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("secret.txt"), "s").unwrap();
    let first = dir.join("flags.json");
    std::fs::write(&first, r#"{"permissions":{"deny":["Read(/secret.txt)"]}}"#).unwrap();
    let last = fx.home.join("last.json");
    std::fs::write(&last, r#"{"permissions":{}}"#).unwrap();
    let sources = SettingsSources {
        project_dir: fx.proj.clone(),
        home: Some(fx.home.clone()),
        user_config_dir: Some(fx.home.join("config")),
        managed_dir: None,
        flag_settings: vec![first.display().to_string(), last.display().to_string()],
        inline: vec![],
        project_trusted: true,
        host_tools: Vec::new(),
    };
    let loaded = load_permissions(&sources);
    assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics);
    let engine = loaded.engine();
    let ctx = ToolUseContext::new(&fx.proj)
        .with_home(Some(fx.home.clone()))
        .with_permission(loaded.context.clone());
    let read = |p: PathBuf| json!({"file_path": p.display().to_string()});
    let tool = probe(&fx, "Read");
    assert_eq!(
        behavior(
            &engine
                .decide(&tool, &read(dir.join("secret.txt")), &ctx)
                .await
        ),
        "deny"
    );
    std::fs::create_dir_all(fx.home.join("ab")).unwrap();
    assert_ne!(
        behavior(
            &engine
                .decide(&tool, &read(fx.home.join("ab/secret.txt")), &ctx)
                .await
        ),
        "deny"
    );
}

/// Braces in a rule are the characters themselves, as in git's and node `ignore`'s
/// gitignore (which Claude Code matches with): `Read(./{{cookiecutter.slug}}/secrets/**)`
/// denies that template folder, not `cookiecutter.slug/`, and `Read(./x{a,b}/**)` names the
/// folder `x{a,b}`, not `xa` or `xb`. Inside a class and escaped they stay as they were.
#[tokio::test]
async fn braces_in_a_path_rule_are_literal() {
    let fx = Fixture::new();
    for dir in ["{{cookiecutter.slug}}/secrets", "x{a,b}", "xa", "{p}", "p"] {
        std::fs::create_dir_all(fx.proj.join(dir)).unwrap();
    }
    run_table_in(
        &fx,
        vec![
            case("deny", "Read", "$P/{{cookiecutter.slug}}/secrets/.env")
                .mode("bypassPermissions")
                .deny(&["Read(./{{cookiecutter.slug}}/secrets/**)"]),
            case("deny", "Edit", "$P/{{cookiecutter.slug}}/secrets/new")
                .mode("bypassPermissions")
                .deny(&["Edit(./{{cookiecutter.slug}}/secrets/**)"]),
            case("allow", "Read", "$P/cookiecutter.slug/secrets/.env")
                .mode("bypassPermissions")
                .deny(&["Read(./{{cookiecutter.slug}}/secrets/**)"]),
            case("deny", "Read", "$P/x{a,b}/f")
                .mode("bypassPermissions")
                .deny(&["Read(./x{a,b}/**)"]),
            case("allow", "Read", "$P/xa/f")
                .mode("bypassPermissions")
                .deny(&["Read(./x{a,b}/**)"]),
            case("deny", "Read", "$P/{p}/f")
                .mode("bypassPermissions")
                .deny(&["Read({p})"]),
            case("allow", "Read", "$P/p/f")
                .mode("bypassPermissions")
                .deny(&["Read({p})"]),
            // Already escaped, and in a class: unchanged.
            case("deny", "Read", "$P/{p}/f")
                .mode("bypassPermissions")
                .deny(&["Read(./\\{p\\}/**)"]),
            case("deny", "Read", "$P/{p}/f")
                .mode("bypassPermissions")
                .deny(&["Read(./[{]p[}]/**)"]),
            // Grep and Glob skip what such a rule denies.
            case("deny", "Grep", "$P/{{cookiecutter.slug}}/secrets")
                .mode("bypassPermissions")
                .deny(&["Read(./{{cookiecutter.slug}}/**)"]),
            case("allow", "Read", "$P/key.pem")
                .mode("bypassPermissions")
                .deny(&["Read(**/*.{pem,key})"]),
        ],
    )
    .await;
    // A rule written as alternatives says it is read literally; a literal name does not.
    let said = warnings(&fx, &["Read(**/*.{pem,key})", "Read(./x\\{a,b\\}/**)"], &[]);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("braces are literal"), "{said:?}");
    assert!(
        warnings(
            &fx,
            &["Read(./{{cookiecutter.slug}}/**)", "Read(./[{,}]/**)"],
            &[]
        )
        .is_empty()
    );
}

/// A path a Windows file system (NTFS or FAT, mountable on Linux) reads as another name is
/// asked about even in bypass mode: written (`GIT~1/hooks/pre-commit` is
/// `.git/hooks/pre-commit` on such a volume, `.git./config` is `.git/config`, and Claude
/// Code's other patterns: device names, `...`), and read where the name is an alias (`cat
/// ENV~1` or `.env.` reads the `.env` a deny rule names), by the tools and by shell
/// commands. Judged below the working directory: a project at `work~1` is no alias. Names
/// that merely hold a tilde or dots elsewhere, and git revisions, are not of this kind.
#[tokio::test]
async fn paths_a_windows_file_system_renames_are_asked_about() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.home.join("work~1")).unwrap();
    // What a FAT volume shows under these names (here, real files named so): a read is
    // judged where the path exists.
    for dir in ["PROGRA~1", "GIT~1"] {
        std::fs::create_dir_all(fx.proj.join(dir)).unwrap();
    }
    std::fs::write(fx.proj.join("PROGRA~1/x"), "x").unwrap();
    std::fs::write(fx.proj.join("GIT~1/config"), "x").unwrap();
    std::fs::write(fx.proj.join(".env."), "x").unwrap();
    std::fs::write(fx.proj.join("notes~1.txt"), "x").unwrap();
    run_table_in(
        &fx,
        vec![
            case("ask", "Write", "$P/GIT~1/hooks/pre-commit").mode("bypassPermissions"),
            case("ask", "Write", "$P/.bashrc.").mode("bypassPermissions"),
            case("ask", "Write", "$P/.git./config").mode("bypassPermissions"),
            case("ask", "Write", "$P/src /main.rs").mode("acceptEdits"),
            case("ask", "Write", "$P/settings.json.PRN").mode("bypassPermissions"),
            case("ask", "Write", "$P/out.com1").mode("acceptEdits"),
            case("ask", "Write", "$P/.../x").mode("bypassPermissions"),
            case("ask", "Edit", "$P/SRC~2/main.rs").mode("acceptEdits"),
            case("ask", "Bash", "echo x > GIT~1/hooks/pre-commit").mode("bypassPermissions"),
            case("ask", "Bash", "cp a.txt .git./config").mode("bypassPermissions"),
            case("ask", "Read", "$P/PROGRA~1/x"),
            case("ask", "Read", "$P/PROGRA~1/x").mode("bypassPermissions"),
            case("ask", "Read", "$P/.env.").mode("bypassPermissions"),
            case("ask", "Bash", "cat GIT~1/config"),
            case("ask", "Bash", "cat .env."),
            // Not of that kind.
            case("allow", "Read", "$P/.../x"),
            case("allow", "Read", "$P/paper.aux"),
            case("allow", "Write", "$P/backup~/x.txt").mode("acceptEdits"),
            case("allow", "Write", "$P/a..b/x.txt").mode("acceptEdits"),
            case("allow", "Write", "$P/con.txt").mode("acceptEdits"),
            case("allow", "Write", "$P/prn/x").mode("acceptEdits"),
            case("allow", "Write", "$H/work~1/x.txt")
                .mode("acceptEdits")
                .add_dir("$H/work~1"),
            case("allow", "Bash", "git diff HEAD~1"),
            case("allow", "Bash", "git log --oneline HEAD~3..HEAD"),
            case("allow", "Read", "$P/missing~1.txt"),
            case("ask", "Bash", "cat notes~1.txt"),
        ],
    )
    .await;
}

// --- 5. IDNA in domain rules ----------------------------------------------------------------

#[tokio::test]
async fn domain_rules_with_non_ascii_hosts_match() {
    run_table(vec![
        case("deny", "WebFetch", "https://bücher.de/x").deny(&["WebFetch(domain:bücher.de)"]),
        case("deny", "WebFetch", "https://bücher.de/x")
            .mode("bypassPermissions")
            .deny(&["WebFetch(domain:bücher.de)"]),
        case("deny", "WebFetch", "https://xn--bcher-kva.de/x")
            .mode("bypassPermissions")
            .deny(&["WebFetch(domain:bücher.de)"]),
        case("deny", "WebFetch", "https://a.b.bücher.de/x")
            .mode("bypassPermissions")
            .deny(&["WebFetch(domain:*.bücher.de)"]),
        case("allow", "WebFetch", "https://bücher.de/x")
            .mode("bypassPermissions")
            .deny(&["WebFetch(domain:*.bücher.de)"]),
        case("deny", "WebFetch", "https://bücher.de/x")
            .mode("bypassPermissions")
            .deny(&["WebFetch(domain:BÜCHER.DE)"]),
        case("deny", "WebFetch", "https://www.bücher.de/x")
            .mode("bypassPermissions")
            .deny(&["WebFetch(domain:*.bücher。de)"]),
        case("allow", "WebFetch", "https://bücher.de/").allow(&["WebFetch(domain:bücher.de)"]),
        case("ask", "WebFetch", "https://bucher.de/").allow(&["WebFetch(domain:bücher.de)"]),
    ])
    .await;
}

// --- 6. Rules that can never apply ----------------------------------------------------------

fn warnings(fx: &Fixture, deny: &[&str], allow: &[&str]) -> Vec<String> {
    let c = case("ask", "Read", "").deny(deny).allow(allow);
    let (engine, _) = context(fx, &c);
    let diags = engine.diagnostics();
    assert!(diags.iter().all(|d| !d.error), "{diags:?}");
    diags
        .into_iter()
        .map(|d| format!("{}: {}", d.rule, d.reason))
        .collect()
}

/// `./` and `.` name the directory itself: a deny or ask rule means the directory and
/// everything in it (said in a warning); an allow rule matches nothing, as in Claude Code,
/// and says so.
#[tokio::test]
async fn rules_naming_the_directory_itself() {
    run_table(vec![
        case("deny", "Edit", "src/main.rs")
            .mode("acceptEdits")
            .deny(&["Edit(./)"]),
        case("deny", "Edit", "src/main.rs")
            .mode("acceptEdits")
            .deny(&["Edit(.)"]),
        case("deny", "Read", "README.md")
            .mode("bypassPermissions")
            .deny(&["Read(./)"]),
        case("allow", "Read", "$O/notes.md")
            .mode("bypassPermissions")
            .deny(&["Read(./)"]),
        case("ask", "Edit", "src/main.rs").allow(&["Edit(./)"]),
    ])
    .await;
    let fx = Fixture::new();
    for rule in ["Edit(./)", "Edit(.)", "Read(/)"] {
        let w = warnings(&fx, &[rule], &[]);
        assert!(
            w.iter()
                .any(|w| w.starts_with(rule) && w.contains("everything in it")),
            "{rule}: {w:?}"
        );
    }
    let w = warnings(&fx, &[], &["Edit(./)"]);
    assert!(w.iter().any(|w| w.contains("matches nothing")), "{w:?}");
}

/// Rule content that a tool without a permission subject cannot match is said to do
/// nothing: on an MCP tool, content that names no input field (`FIELD:VALUE`, which is
/// matched since review 32: `tests/review/review32_rules.rs`); on another tool, a field it does
/// not have.
#[tokio::test]
async fn param_value_rules_warn() {
    let fx = Fixture::new();
    let w = warnings(&fx, &["mcp__github__delete_repo(prod)"], &[]);
    assert!(
        w.iter()
            .any(|w| w.starts_with("mcp__github__delete_repo(prod)")
                && w.contains("names no field")
                && w.contains("does nothing")),
        "{w:?}"
    );
    let w = warnings(&fx, &["mcp__github__delete_repo(owner:prod)"], &[]);
    assert!(w.is_empty(), "{w:?}");
    let w = warnings(&fx, &["TodoWrite(status:done)"], &[]);
    assert!(w.iter().any(|w| w.contains("not supported")), "{w:?}");
    // Content rules of tools that have a subject are not warned about.
    let w = warnings(
        &fx,
        &[
            "Bash(rm:*)",
            "Monitor(tail:*)",
            "Skill(x)",
            "Agent(Explore)",
            "WebFetch(domain:x.com)",
            "Read(.env)",
        ],
        &[],
    );
    assert!(w.is_empty(), "{w:?}");
}

// --- 7. Edit implies read where the write is allowed; bare Read and Edit rules; links -----

/// Edit permission implies read only where the write check for the same path allows it: an
/// `Edit(~/**)` allow reads neither `~/.ssh/id_rsa` nor `~/.bashrc` (protected: their writes
/// ask), nor a file outside the working directories that an Edit ask or deny rule covers.
#[tokio::test]
async fn an_edit_allow_reads_only_what_it_may_write() {
    run_table(vec![
        case("allow", "Read", "$O/notes.md").allow(&["Edit(//$O/**)"]),
        case("ask", "Read", "$H/.ssh/id_rsa").allow(&["Edit(~/**)"]),
        case("ask", "Read", "$H/.bashrc").allow(&["Edit(~/**)"]),
        case("ask", "Read", "$O/secret.txt")
            .allow(&["Edit(//$O/**)"])
            .ask(&["Edit(//$O/secret.txt)"]),
        case("ask", "Read", "$O/secret.txt")
            .allow(&["Edit(//$O/**)"])
            .deny(&["Edit(//$O/secret.txt)"]),
        case("allow", "Read", "$O/notes.md")
            .allow(&["Edit(//$O/**)"])
            .deny(&["Edit(//$O/secret.txt)"]),
        // A Read allow rule still reads what the Edit allow does not.
        case("allow", "Read", "$H/.ssh/id_rsa").allow(&["Edit(~/**)", "Read(~/.ssh/**)"]),
    ])
    .await;
}

/// A bare `Edit` or `Read` deny or ask rule (or `Edit(*)`) covers every file tool of its
/// family: `deny: ["Edit"]` stops Write and NotebookEdit, `deny: ["Read"]` Grep and Glob
/// (Claude Code's documentation says Edit rules apply to every tool that edits files; its
/// code matches the tool's own name only). Allow rules stay the tool's own, and Bash is not
/// a file tool.
#[tokio::test]
async fn bare_read_and_edit_deny_and_ask_rules_cover_their_family() {
    run_table(vec![
        case("deny", "Write", "$P/src/new.rs")
            .mode("acceptEdits")
            .deny(&["Edit"]),
        case("deny", "NotebookEdit", "$P/src/a.ipynb")
            .mode("bypassPermissions")
            .deny(&["Edit(*)"]),
        case("ask", "Write", "$P/src/new.rs")
            .mode("acceptEdits")
            .ask(&["Edit"]),
        case("deny", "Grep", "$P/src").deny(&["Read"]),
        case("deny", "Glob", "$P/src").deny(&["Read"]),
        case("ask", "Grep", "$P/src").ask(&["Read"]),
        case("ask", "Write", "$O/new.txt").allow(&["Edit"]),
        case("allow", "Read", "$P/README.md").deny(&["Edit"]),
        case("allow", "Bash", "echo x > src/new.rs")
            .mode("bypassPermissions")
            .deny(&["Edit"]),
    ])
    .await;
}

/// An empty or `.` segment (`secrets//key.pem`, `src/./main.rs`) is in no path the rules are
/// matched against: a deny or ask rule is read without it (with a warning that says so); an
/// allow rule still matches nothing, and says so.
#[tokio::test]
async fn empty_and_dot_segments_in_a_deny_rule_are_read_without_them() {
    run_table(vec![
        case("deny", "Read", "$P/secrets/key.pem")
            .mode("bypassPermissions")
            .deny(&["Read(//$P//secrets/**)"]),
        case("deny", "Read", "$P/secrets/key.pem")
            .mode("bypassPermissions")
            .deny(&["Read(./secrets//key.pem)"]),
        case("ask", "Edit", "$P/src/main.rs")
            .mode("acceptEdits")
            .ask(&["Edit(src/./main.rs)"]),
        case("ask", "Read", "$O/notes.md").allow(&["Read(//$O//notes.md)"]),
        // A doubled slash after `~` is an empty segment too.
        case("deny", "Read", "$H/.ssh/id_rsa")
            .mode("bypassPermissions")
            .deny(&["Read(~//.ssh/**)"]),
    ])
    .await;
    let fx = Fixture::new();
    let w = warnings(&fx, &["Read(./secrets//key.pem)"], &[]);
    assert!(
        w.iter()
            .any(|w| w.contains("is read without its empty and `.` segments")),
        "{w:?}"
    );
    let w = warnings(&fx, &[], &["Read(src//main.rs)"]);
    assert!(w.iter().any(|w| w.contains("matches nothing")), "{w:?}");
}

/// A working directory reached through a link (a symlinked project, `/tmp` on macOS): a
/// path spelled through the link is inside, as the file it names is. A path spelled inside
/// whose link leads out is still outside.
#[tokio::test]
async fn a_path_spelled_through_a_link_to_the_project_is_inside() {
    let fx = Fixture::new();
    let link = fx.proj.parent().unwrap().join("plink");
    std::os::unix::fs::symlink(&fx.proj, &link).unwrap();
    let l = link.display().to_string();
    for c in [
        case("allow", "Read", &format!("{l}/src/main.rs")),
        case("allow", "Write", &format!("{l}/src/new.rs")).mode("acceptEdits"),
        case("ask", "Read", &format!("{l}/dir_out/notes.md")),
        case("ask", "Write", &format!("{l}/.git/config")).mode("acceptEdits"),
    ] {
        let got = run(&fx, &c).await;
        assert_eq!(behavior(&got), c.expect, "{c:?}: {got:?}");
    }
}

/// A link from one protected directory into another (`.vscode/settings.json` to
/// `.git/config`, as a repository can ship it) is asked about as both: the question names
/// the real target and why it is protected, so that approving a `.vscode` edit is not
/// approving a `.git` one unseen (found by an adversarial review). A link within one
/// protected directory, and a plain protected path, are asked about as before.
#[tokio::test]
async fn a_link_between_protected_directories_names_both_in_the_question() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.proj.join(".git")).unwrap();
    std::fs::write(fx.proj.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(fx.proj.join(".vscode")).unwrap();
    std::os::unix::fs::symlink("../.git/config", fx.proj.join(".vscode/settings.json")).unwrap();
    std::os::unix::fs::symlink("config", fx.proj.join(".git/config-link")).unwrap();
    let message = |path: &str| {
        let fx = &fx;
        let path = path.to_owned();
        async move {
            let c = case("ask", "Edit", &format!("$P/{path}")).mode("bypassPermissions");
            match run(fx, &c).await {
                PermissionResult::Ask { message, .. } => message,
                other => panic!("{path}: {other:?}"),
            }
        }
    };
    let linked = message(".vscode/settings.json").await;
    assert!(
        linked.contains("settings.json, which is in a protected directory (.vscode).")
            && linked.contains(&format!(
                "It is a link to {}, which is in a protected directory (.git).",
                fx.proj.join(".git/config").display()
            )),
        "{linked}"
    );
    // Two sensitive files: both named too.
    std::os::unix::fs::symlink(".zshrc", fx.proj.join(".bashrc")).unwrap();
    std::fs::write(fx.proj.join(".zshrc"), "").unwrap();
    let linked = message(".bashrc").await;
    assert!(
        linked.contains(&format!(
            "It is a link to {}, which is a sensitive file.",
            fx.proj.join(".zshrc").display()
        )),
        "{linked}"
    );
    // A link within one protected directory names its target too (found by a second
    // adversarial review: approving a `.claude` command approved a rewrite of
    // `.claude/settings.json`, which sets hooks; a session's own settings files are named
    // as such, see `tests/cli.rs`).
    let within = message(".git/config-link").await;
    assert!(
        within.contains(&format!(
            "It is a link to {}, which is in a protected directory (.git).",
            fx.proj.join(".git/config").display()
        )),
        "{within}"
    );
    std::fs::create_dir_all(fx.proj.join(".claude/commands")).unwrap();
    std::fs::write(fx.proj.join(".claude/settings.json"), "{}").unwrap();
    std::os::unix::fs::symlink(
        "../settings.json",
        fx.proj.join(".claude/commands/deploy.md"),
    )
    .unwrap();
    let settings = message(".claude/commands/deploy.md").await;
    assert!(
        settings.contains(&format!(
            "It is a link to {}, which ",
            fx.proj.join(".claude/settings.json").display()
        )),
        "{settings}"
    );
    // No link: the question is as before.
    let said = message(".vscode/tasks.json").await;
    assert!(!said.contains("It is a link"), "{said}");
}
