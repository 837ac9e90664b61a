//! The engine's API as tool-exec and tool-hooks use it: prompts and session rules,
//! rule-based checks after a hook allow, blanket denies, the hook-condition matcher,
//! diagnostics, denial tracking, and settings loading from real files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Mutex;

use common::{Fixture, behavior, case, context, probe};
use serde_json::json;
use tool_core::{
    DecisionReason, PermissionMode, PermissionResult, PermissionUpdate, RuleBehavior, RuleSource,
    RuleValue, SourcedRule, ToolPermissionContext, ToolUseContext, UpdateDestination,
};
use tool_perms::settings::{
    SettingsSources, Severity, load_permissions, load_settings_files, merge_settings,
};
use tool_perms::{
    EngineError, PathRoots, PermissionEngine, PromptAnswer, PromptRequest, Prompter,
    REJECT_MESSAGE, matches_rule,
};

struct Scripted {
    answer: PromptAnswer,
    seen: Mutex<Vec<PromptRequest>>,
}

#[async_trait::async_trait]
impl Prompter for Scripted {
    async fn prompt(&self, request: &PromptRequest) -> PromptAnswer {
        self.seen.lock().unwrap().push(request.clone());
        self.answer.clone()
    }
}

#[tokio::test]
async fn dont_ask_again_stores_prefixes_at_most_five() {
    let fx = Fixture::new();
    let (engine, ctx) = context(&fx, &case("ask", "Bash", ""));
    let bash = probe(&fx, "Bash");
    let cmd = "git push origin main && npm run build --prod && cargo publish && docker push x && kubectl apply -f k.yaml && make deploy && ls";
    let input = json!({"command": cmd});
    assert_eq!(behavior(&engine.decide(&bash, &input, &ctx).await), "ask");
    let prompter = Scripted {
        answer: PromptAnswer::AllowAlways {
            updated_input: None,
            updates: vec![],
        },
        seen: Mutex::default(),
    };
    let result = engine
        .decide_and_prompt(&prompter, &bash, &input, &ctx)
        .await;
    assert_eq!(behavior(&result), "allow");
    let seen = prompter.seen.lock().unwrap().clone();
    let rules: Vec<String> = seen[0]
        .dont_ask_again
        .iter()
        .filter_map(|r| r.rule_content.clone())
        .collect();
    assert_eq!(
        rules,
        [
            "git push:*",
            "npm run:*",
            "cargo publish:*",
            "docker push:*",
            "kubectl apply:*"
        ]
    );
    // The stored prefixes now allow related commands, not the exact string only...
    let later = json!({"command": "git push origin feature"});
    assert_eq!(behavior(&engine.decide(&bash, &later, &ctx).await), "allow");
    // ...but not a compound with something new.
    let worse = json!({"command": "git push && rm -rf build"});
    assert_eq!(behavior(&engine.decide(&bash, &worse, &ctx).await), "ask");
    // The sixth subcommand was not stored.
    assert_eq!(
        behavior(
            &engine
                .decide(&bash, &json!({"command": "make deploy"}), &ctx)
                .await
        ),
        "ask"
    );
}

#[tokio::test]
async fn prompt_answers() {
    let fx = Fixture::new();
    let (engine, ctx) = context(&fx, &case("ask", "Bash", ""));
    let bash = probe(&fx, "Bash");
    let input = json!({"command": "rm -rf build"});
    let deny = Scripted {
        answer: PromptAnswer::Deny { feedback: None },
        seen: Mutex::default(),
    };
    let r = engine.decide_and_prompt(&deny, &bash, &input, &ctx).await;
    assert!(matches!(r, PermissionResult::Deny { ref message, .. } if message == REJECT_MESSAGE));
    let feedback = Scripted {
        answer: PromptAnswer::Deny {
            feedback: Some("use cargo clean".into()),
        },
        seen: Mutex::default(),
    };
    let r = engine
        .decide_and_prompt(&feedback, &bash, &input, &ctx)
        .await;
    assert!(
        matches!(r, PermissionResult::Deny { ref message, .. } if message.ends_with("use cargo clean"))
    );
    let once = Scripted {
        answer: PromptAnswer::AllowOnce {
            updated_input: Some(json!({"command": "rm -r build"})),
        },
        seen: Mutex::default(),
    };
    let r = engine.decide_and_prompt(&once, &bash, &input, &ctx).await;
    assert_eq!(
        r,
        PermissionResult::Allow {
            updated_input: Some(json!({"command": "rm -r build"})),
            reason: Some(DecisionReason::User { permanent: false })
        }
    );
    // Allow once adds nothing.
    assert_eq!(behavior(&engine.decide(&bash, &input, &ctx).await), "ask");
    // Explicit updates from the user are applied.
    let always = Scripted {
        answer: PromptAnswer::AllowAlways {
            updated_input: None,
            updates: vec![PermissionUpdate::AddRules {
                rules: vec![RuleValue {
                    tool_name: "Bash".into(),
                    rule_content: Some("rm -rf build".into()),
                }],
                behavior: RuleBehavior::Allow,
                destination: UpdateDestination::Session,
            }],
        },
        seen: Mutex::default(),
    };
    let r = engine.decide_and_prompt(&always, &bash, &input, &ctx).await;
    assert!(
        matches!(
            r,
            PermissionResult::Allow {
                reason: Some(DecisionReason::User { permanent: true }),
                ..
            }
        ),
        "{r:?}"
    );
    assert_eq!(behavior(&engine.decide(&bash, &input, &ctx).await), "allow");
    // Removing it restores the ask.
    engine.apply_update(&PermissionUpdate::RemoveRules {
        rules: vec![RuleValue {
            tool_name: "Bash".into(),
            rule_content: Some("rm -rf build".into()),
        }],
        behavior: RuleBehavior::Allow,
        destination: UpdateDestination::Session,
    });
    assert_eq!(behavior(&engine.decide(&bash, &input, &ctx).await), "ask");
}

/// Under `allowManagedPermissionRulesOnly` no rule is added during the session: the prompt
/// offers no "don't ask again" rules, an "always" answer allows once (asked again next
/// time), and a hook's `updatedPermissions` adding or replacing rules is refused with a
/// warning. Rules the managed settings give still apply.
#[tokio::test]
async fn managed_rules_only_adds_no_rule_during_the_session() {
    let fx = Fixture::new();
    let managed_dir = fx.home.join("managed");
    std::fs::create_dir_all(&managed_dir).unwrap();
    std::fs::write(
        managed_dir.join("managed-settings.json"),
        json!({"allowManagedPermissionRulesOnly": true,
            "permissions": {"deny": ["Bash(curl:*)"]}})
        .to_string(),
    )
    .unwrap();
    let sources = SettingsSources {
        project_dir: fx.proj.clone(),
        home: Some(fx.home.clone()),
        user_config_dir: Some(fx.home.join("config")),
        managed_dir: Some(managed_dir),
        flag_settings: vec![],
        inline: vec![],
        project_trusted: true,
        host_tools: Vec::new(),
    };
    let loaded = load_permissions(&sources);
    assert!(loaded.context.managed_rules_only);
    let engine = loaded.engine();
    let ctx = ToolUseContext::new(&fx.proj)
        .with_home(Some(fx.home.clone()))
        .with_permission(loaded.context.clone());
    let bash = probe(&fx, "Bash");
    let input = json!({"command": "rm -rf build"});
    assert_eq!(behavior(&engine.decide(&bash, &input, &ctx).await), "ask");
    let always = Scripted {
        answer: PromptAnswer::AllowAlways {
            updated_input: None,
            updates: Vec::new(),
        },
        seen: Mutex::default(),
    };
    let r = engine.decide_and_prompt(&always, &bash, &input, &ctx).await;
    assert_eq!(
        r,
        PermissionResult::Allow {
            updated_input: None,
            reason: Some(DecisionReason::User { permanent: false })
        }
    );
    assert!(always.seen.lock().unwrap()[0].dont_ask_again.is_empty());
    assert_eq!(behavior(&engine.decide(&bash, &input, &ctx).await), "ask");
    for update in [
        PermissionUpdate::AddRules {
            rules: vec![RuleValue {
                tool_name: "Bash".into(),
                rule_content: None,
            }],
            behavior: RuleBehavior::Allow,
            destination: UpdateDestination::Session,
        },
        PermissionUpdate::ReplaceRules {
            rules: vec![RuleValue {
                tool_name: "Bash".into(),
                rule_content: None,
            }],
            behavior: RuleBehavior::Allow,
            destination: UpdateDestination::LocalSettings,
        },
    ] {
        let said = engine.apply_update(&update);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0]
                .to_string()
                .contains("allowManagedPermissionRulesOnly"),
            "{said:?}"
        );
        assert_eq!(behavior(&engine.decide(&bash, &input, &ctx).await), "ask");
    }
    let curl = json!({"command": "curl https://example.com"});
    assert_eq!(behavior(&engine.decide(&bash, &curl, &ctx).await), "deny");
}

/// A command too long to analyse says so (not "nested too deeply"); a refused ask whose
/// reason is a phrase (a hook's `please confirm`) ends it as a sentence.
#[tokio::test]
async fn refusal_texts_say_what_happened() {
    let fx = Fixture::new();
    let (engine, ctx) = context(&fx, &case("x", "Bash", "").mode("bypassPermissions"));
    let bash = probe(&fx, "Bash");
    let long = format!("echo {}", "z".repeat(150_000));
    let r = engine.decide(&bash, &json!({"command": long}), &ctx).await;
    let PermissionResult::Ask { message, .. } = &r else {
        panic!("{r:?}")
    };
    assert!(
        message.contains("longer than 100000 bytes") && !message.contains("nested"),
        "{message}"
    );
    let nested = format!("{}x{}", "$(".repeat(200), ")".repeat(200));
    let r = engine
        .decide(&bash, &json!({"command": nested}), &ctx)
        .await;
    let PermissionResult::Ask { message, .. } = &r else {
        panic!("{r:?}")
    };
    assert!(message.contains("nested too deeply"), "{message}");

    for (asked, said) in [
        (
            "please confirm",
            "It needed approval: please confirm. Prompts",
        ),
        ("Sure?", "It needed approval: Sure? Prompts"),
    ] {
        let ask = PermissionResult::Ask {
            message: asked.into(),
            updated_input: None,
            suggestions: Vec::new(),
            reason: None,
        };
        let refused = PermissionEngine::refuse_prompt(&bash, &ctx, &ask);
        let PermissionResult::Deny { message, .. } = &refused else {
            panic!("{refused:?}")
        };
        assert!(message.contains(said), "{message}");
    }
}

#[tokio::test]
async fn rule_based_check_after_hook_allow() {
    let fx = Fixture::new();
    let c = case("x", "Bash", "")
        .deny(&["Bash(rm:*)"])
        .ask(&["Bash(git push:*)"]);
    let (engine, ctx) = context(&fx, &c);
    let bash = probe(&fx, "Bash");
    let rb = |cmd: &'static str| {
        let engine = &engine;
        let ctx = &ctx;
        let bash = &bash;
        async move {
            engine
                .check_rule_based(bash, &json!({"command": cmd}), ctx)
                .await
                .map(|r| behavior(&r))
        }
    };
    assert_eq!(rb("rm x").await, Some("deny"));
    assert_eq!(rb("git push").await, Some("ask"));
    // No opinion: the hook's allow stands (no mode or passthrough logic).
    assert_eq!(rb("npm install").await, None);
    assert_eq!(rb("echo x > .git/config").await, Some("ask"));
    let edit = probe(&fx, "Edit");
    assert_eq!(
        engine
            .check_rule_based(&edit, &json!({"file_path": "README.md"}), &ctx)
            .await,
        None
    );
}

/// `rule_denial`, the check without waiting: every deny of the rules that
/// `check_rule_based` gives (tool-wide, command, path; field rules: review32_rules), the same message; nothing
/// for an ask rule or a call no rule refuses.
#[tokio::test]
async fn the_rule_denial_without_waiting_is_the_rule_based_deny() {
    let fx = Fixture::new();
    let c = case("x", "Bash", "")
        .deny(&["Bash(rm:*)", "Read(.env)", "Glob"])
        .ask(&["Bash(git push:*)"]);
    let (engine, ctx) = context(&fx, &c);
    let bash = probe(&fx, "Bash");
    let read = probe(&fx, "Read");
    let glob = probe(&fx, "Glob");
    let grep = probe(&fx, "Grep");
    for (tool, input, denied) in [
        (&bash, json!({"command": "rm -rf build"}), true),
        (&bash, json!({"command": "ls && rm x"}), true),
        (&bash, json!({"command": "git push"}), false),
        (&bash, json!({"command": "ls"}), false),
        (&read, json!({"file_path": fx.proj.join(".env")}), true),
        (
            &read,
            json!({"file_path": fx.proj.join("README.md")}),
            false,
        ),
        (&glob, json!({"pattern": "*"}), true),
        (
            &grep,
            json!({"pattern": "x", "path": fx.proj.join(".env")}),
            true,
        ),
        (&grep, json!({"pattern": "x"}), false),
    ] {
        let now = engine.rule_denial(tool, &input, &ctx);
        let full = engine.check_rule_based(tool, &input, &ctx).await;
        if denied {
            assert_eq!(now.as_ref().map(behavior), Some("deny"), "{input}");
            assert_eq!(now, full, "{input}");
        } else {
            assert_eq!(now, None, "{input}: {full:?}");
        }
    }
}

/// A tool-wide ask rule does not outrank a deny rule on the call's content: deny rules always
/// take precedence (Claude Code's documented order; its code asks first), both in the full
/// decision and in the check after a hook's allow. Without a matching deny, it asks, even in
/// bypass mode.
#[tokio::test]
async fn a_tool_wide_ask_rule_does_not_outrank_a_content_deny() {
    let fx = Fixture::new();
    for mode in ["default", "acceptEdits", "bypassPermissions"] {
        let c = case("x", "Bash", "")
            .ask(&["Bash", "Read"])
            .deny(&["Bash(rm:*)", "Read(.env)"])
            .mode(mode);
        let (engine, ctx) = context(&fx, &c);
        let bash = probe(&fx, "Bash");
        let read = probe(&fx, "Read");
        let env = json!({"file_path": fx.proj.join(".env")});
        let readme = json!({"file_path": fx.proj.join("README.md")});
        for (tool, input, expected) in [
            (&bash, json!({"command": "rm -rf build"}), "deny"),
            (&bash, json!({"command": "ls"}), "ask"),
            (&read, env, "deny"),
            (&read, readme, "ask"),
        ] {
            let decided = engine.decide(tool, &input, &ctx).await;
            assert_eq!(behavior(&decided), expected, "{mode} {input}");
            let after_hook = engine.check_rule_based(tool, &input, &ctx).await;
            assert_eq!(
                after_hook.as_ref().map(behavior),
                Some(expected),
                "{mode} {input}"
            );
            if expected == "deny" {
                assert!(
                    !format!("{decided:?}").contains("requires approval"),
                    "{decided:?}"
                );
            }
        }
    }
}

#[tokio::test]
async fn blanket_denies_and_hook_conditions() {
    let fx = Fixture::new();
    let c = case("x", "Bash", "").deny(&[
        "WebSearch",
        "mcp__gh",
        "Bash(rm:*)",
        "Agent(*)",
        "WebFetch(domain:*)",
    ]);
    let (engine, ctx) = context(&fx, &c);
    assert!(engine.is_blanket_denied(&probe(&fx, "WebSearch")));
    // `WebFetch(domain:*)` is `WebFetch`: the tool goes from the list.
    assert!(engine.is_blanket_denied(&probe(&fx, "WebFetch")));
    // `Task` is the Agent tool's legacy name: its probe is the Agent tool's.
    assert!(engine.is_blanket_denied(&probe(&fx, "Task")));
    assert!(engine.is_blanket_denied(&probe(&fx, "mcp__gh__x")));
    assert!(engine.is_blanket_denied(&probe(&fx, "Agent")));
    assert!(!engine.is_blanket_denied(&probe(&fx, "Bash")));
    assert!(!engine.is_blanket_denied(&probe(&fx, "mcp__ghx__x")));

    let bash = probe(&fx, "Bash");
    assert!(matches_rule(
        "Bash(git *)",
        &bash,
        &json!({"command": "ls && git push"}),
        &ctx
    ));
    assert!(matches_rule(
        "Bash(rm:*)",
        &bash,
        &json!({"command": "sudo rm -rf x"}),
        &ctx
    ));
    assert!(!matches_rule(
        "Bash(git *)",
        &bash,
        &json!({"command": "ls"}),
        &ctx
    ));
    assert!(matches_rule("Bash", &bash, &json!({"command": "ls"}), &ctx));
    // A command that cannot be parsed: the hook runs (fail open), whatever the rule.
    for command in ["echo 'abc", "echo ${x", "if then fi rm"] {
        assert!(
            matches_rule("Bash(git *)", &bash, &json!({"command": command}), &ctx),
            "{command}"
        );
    }
    let edit = probe(&fx, "Edit");
    assert!(matches_rule(
        "Edit(*.md)",
        &edit,
        &json!({"file_path": "docs/a.md"}),
        &ctx
    ));
    assert!(!matches_rule(
        "Edit(*.md)",
        &edit,
        &json!({"file_path": "src/main.rs"}),
        &ctx
    ));
    assert!(matches_rule(
        "Edit(src/**)",
        &edit,
        &json!({"file_path": "src/main.rs"}),
        &ctx
    ));
    // The call's own tool names a path rule too (`Write(*.md)` for Writes of `.md` files).
    let write = probe(&fx, "Write");
    assert!(matches_rule(
        "Write(*.md)",
        &write,
        &json!({"file_path": "docs/a.md"}),
        &ctx
    ));
    assert!(!matches_rule(
        "Write(*.md)",
        &write,
        &json!({"file_path": "src/main.rs"}),
        &ctx
    ));
    assert!(!matches_rule(
        "Read(*.md)",
        &bash,
        &json!({"command": "ls"}),
        &ctx
    ));
    assert!(matches_rule(
        "mcp__gh__*",
        &probe(&fx, "mcp__gh__create"),
        &json!({}),
        &ctx
    ));
    assert!(!matches_rule(
        "Bash(",
        &bash,
        &json!({"command": "ls"}),
        &ctx
    ));
    assert!(engine.rule_matches(
        "WebFetch(domain:*.rs)",
        &probe(&fx, "WebFetch"),
        &json!({"url": "https://docs.rs/x"}),
        &ctx
    ));
}

#[test]
fn malformed_rules_are_reported_not_dropped() {
    let perm = ToolPermissionContext {
        allow: vec![
            SourcedRule {
                source: RuleSource::UserSettings,
                rule: "Bash(npm test".into(),
            },
            SourcedRule {
                source: RuleSource::LocalSettings,
                rule: "*".into(),
            },
            SourcedRule {
                source: RuleSource::ProjectSettings,
                rule: "WebFetch(https://x.com)".into(),
            },
            SourcedRule {
                source: RuleSource::ProjectSettings,
                rule: "Write(src/**)".into(),
            },
        ],
        deny: vec![SourcedRule {
            source: RuleSource::ProjectSettings,
            rule: "Bash()".into(),
        }],
        ..Default::default()
    };
    let err = PermissionEngine::new(&perm, PathRoots::for_cwd("/p")).unwrap_err();
    let EngineError::MalformedRules(diags) = &err;
    let rules: Vec<&str> = diags.iter().map(|d| d.rule.as_str()).collect();
    assert_eq!(
        rules,
        ["Bash()", "Bash(npm test", "*", "WebFetch(https://x.com)"]
    );
    assert!(err.to_string().contains("mismatched parentheses"));
    let (_engine, all) = PermissionEngine::new_lenient(&perm, PathRoots::for_cwd("/p"));
    assert!(
        all.iter()
            .any(|d| !d.error && d.rule == "Write(src/**)" && d.reason.contains("never consulted"))
    );
}

#[tokio::test]
async fn denial_tracking_counts() {
    let fx = Fixture::new();
    let (engine, ctx) = context(&fx, &case("x", "Bash", "").mode("dontAsk"));
    let bash = probe(&fx, "Bash");
    for _ in 0..3 {
        engine
            .decide(&bash, &json!({"command": "rm x"}), &ctx)
            .await;
    }
    assert_eq!(ctx.denials().consecutive, 3);
    engine.decide(&bash, &json!({"command": "ls"}), &ctx).await;
    assert_eq!(ctx.denials().consecutive, 0);
    assert_eq!(ctx.denials().total, 3);
}

#[tokio::test]
async fn explanations_name_rule_source_and_subcommand() {
    let fx = Fixture::new();
    let (engine, ctx) = context(
        &fx,
        &case("x", "Bash", "")
            .allow(&["Bash(git status:*)"])
            .deny(&["Bash(curl:*)"]),
    );
    let bash = probe(&fx, "Bash");
    let e = engine
        .explain(&bash, &json!({"command": "git status && curl x"}), &ctx)
        .await;
    assert_eq!(behavior(&e.result), "deny");
    assert_eq!(
        e.rule.as_ref().map(|r| r.rule.as_str()),
        Some("Bash(curl:*)")
    );
    assert_eq!(
        e.rule.as_ref().map(|r| r.source),
        Some(RuleSource::ProjectSettings)
    );
    assert_eq!(e.subcommand.as_deref(), Some("curl x"));
    assert_eq!(e.details.len(), 2);
    let e = engine
        .explain(&bash, &json!({"command": "git status && rm x"}), &ctx)
        .await;
    assert_eq!(behavior(&e.result), "ask");
    assert_eq!(e.subcommand.as_deref(), Some("rm x"));
    let PermissionResult::Ask { suggestions, .. } = &e.result else {
        panic!()
    };
    assert!(
        matches!(&suggestions[0], PermissionUpdate::AddRules { rules, .. } if rules[0].rule_content.as_deref() == Some("rm x"))
    );
    // A program whose first argument is an option has no subcommand to stop at: the exact
    // command, never `sed:*` (which would allow `sed 'e cmd'`) or `git:*`; its `*` escaped,
    // so that it stays that one command.
    for (command, stored) in [
        ("sed -i s/a/b/ README.md", "sed -i s/a/b/ README.md"),
        ("sed -i 's/a/b/' *.txt", "sed -i 's/a/b/' \\*.txt"),
        ("git -C sub commit -m x", "git -C sub commit -m x"),
        ("cargo build --release", "cargo build:*"),
        ("make", "make:*"),
    ] {
        let e = engine
            .explain(&bash, &json!({"command": command}), &ctx)
            .await;
        let PermissionResult::Ask { suggestions, .. } = &e.result else {
            panic!("{command}: {:?}", e.result)
        };
        assert!(
            matches!(&suggestions[0], PermissionUpdate::AddRules { rules, .. } if rules[0].rule_content.as_deref() == Some(stored)),
            "{command}: {suggestions:?}"
        );
    }
}

#[test]
fn per_file_deny_check_for_directory_walkers() {
    let fx = Fixture::new();
    let (engine, _) = context(
        &fx,
        &case("x", "Grep", "").deny(&["Read(.env)", "Edit(docs/**)"]),
    );
    use tool_core::FileAccess;
    assert!(
        engine
            .denied_by(&fx.proj.join("src/sub/.env"), FileAccess::Read)
            .is_some()
    );
    assert!(
        engine
            .denied_by(&fx.out.join("env_link"), FileAccess::Read)
            .is_some(),
        "symlink to .env"
    );
    assert!(
        engine
            .denied_by(&fx.proj.join("src/main.rs"), FileAccess::Read)
            .is_none()
    );
    assert!(
        engine
            .denied_by(&fx.proj.join("docs/a.md"), FileAccess::Write)
            .is_some()
    );
    assert!(
        engine
            .denied_by(&fx.proj.join(".env"), FileAccess::Write)
            .is_some()
    );
    assert!(
        engine
            .denied_by(&fx.proj.join("docs/a.md"), FileAccess::Read)
            .is_none()
    );
}

#[tokio::test]
async fn cancelled_calls_are_denied() {
    let fx = Fixture::new();
    let (engine, ctx) = context(&fx, &case("x", "Bash", ""));
    ctx.cancellation().cancel();
    assert_eq!(
        behavior(
            &engine
                .decide(&probe(&fx, "Bash"), &json!({"command": "ls"}), &ctx)
                .await
        ),
        "deny"
    );
}

fn write(path: &std::path::Path, v: serde_json::Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[tokio::test]
async fn settings_precedence_and_sources() {
    let fx = Fixture::new();
    let managed = fx.home.join("managed");
    let config = fx.home.join("config");
    write(
        &managed.join("managed-settings.json"),
        json!({"permissions": {"deny": ["Bash(curl:*)"]}}),
    );
    write(
        &managed.join("managed-settings.d/10-extra.json"),
        json!({"permissions": {"ask": ["Bash(git push:*)"]}}),
    );
    write(
        &config.join("settings.json"),
        json!({"permissions": {"allow": ["Bash(npm test:*)", "Read(/notes/**)"], "defaultMode": "plan"}, "hooks": {"PreToolUse": [{"matcher": "Bash"}]}}),
    );
    write(
        &fx.proj.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Edit(/docs/**)"], "defaultMode": "acceptEdits", "additionalDirectories": ["../outside"]}, "hooks": {"PostToolUse": []}}),
    );
    write(
        &fx.proj.join(".claude/settings.local.json"),
        json!({"permissions": {"deny": ["Read(.env)"], "allow": ["Bash(oops"]}}),
    );
    let flag = fx.home.join("flags/extra.json");
    write(
        &flag,
        json!({"permissions": {"allow": ["Read(/shared/**)"]}}),
    );
    let sources = SettingsSources {
        project_dir: fx.proj.clone(),
        home: Some(fx.home.clone()),
        user_config_dir: Some(config.clone()),
        managed_dir: Some(managed.clone()),
        flag_settings: vec![flag.display().to_string()],
        inline: vec![],
        project_trusted: true,
        host_tools: Vec::new(),
    };
    let loaded = load_permissions(&sources);
    let ctx = &loaded.context;
    assert_eq!(
        ctx.mode,
        PermissionMode::AcceptEdits,
        "project beats user for scalars"
    );
    assert_eq!(ctx.additional_working_directories, vec![fx.out.clone()]);
    let src =
        |list: &[SourcedRule], rule: &str| list.iter().find(|r| r.rule == rule).map(|r| r.source);
    assert_eq!(
        src(&ctx.deny, "Bash(curl:*)"),
        Some(RuleSource::PolicySettings)
    );
    assert_eq!(
        src(&ctx.ask, "Bash(git push:*)"),
        Some(RuleSource::PolicySettings)
    );
    assert_eq!(
        src(&ctx.allow, "Bash(npm test:*)"),
        Some(RuleSource::UserSettings)
    );
    assert_eq!(
        src(&ctx.allow, "Edit(/docs/**)"),
        Some(RuleSource::ProjectSettings)
    );
    assert_eq!(
        src(&ctx.deny, "Read(.env)"),
        Some(RuleSource::LocalSettings)
    );
    assert_eq!(
        src(&ctx.allow, "Read(/shared/**)"),
        Some(RuleSource::FlagSettings)
    );
    // The malformed rule is reported with its file.
    let bad: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    assert_eq!(bad.len(), 1, "{:?}", loaded.diagnostics);
    assert_eq!(
        bad[0].file.as_deref(),
        Some(fx.proj.join(".claude/settings.local.json").as_path())
    );
    assert!(bad[0].to_string().contains("Bash(oops"));

    // `/x` anchoring follows each rule's source.
    let engine = loaded.engine();
    let tctx = ToolUseContext::new(&fx.proj)
        .with_home(Some(fx.home.clone()))
        .with_permission(ctx.clone());
    let edit = common::probe(&fx, "Edit");
    let read = common::probe(&fx, "Read");
    let decide = |tool: &'static str, p: std::path::PathBuf| {
        let engine = &engine;
        let tctx = &tctx;
        let edit = &edit;
        let read = &read;
        async move {
            let t: &dyn tool_core::Tool = if tool == "Edit" { edit } else { read };
            behavior(&engine.decide(t, &json!({"file_path": p}), tctx).await)
        }
    };
    let plain = tctx.clone().with_permission(ToolPermissionContext {
        mode: PermissionMode::Default,
        ..ctx.clone()
    });
    assert_eq!(
        behavior(
            &engine
                .decide(
                    &edit,
                    &json!({"file_path": fx.proj.join("docs/a.md")}),
                    &plain
                )
                .await
        ),
        "allow"
    );
    // The user's `Read(/notes/**)` is anchored at their config directory (outside the
    // working directories); writing what sessions read there (its agents) is a safety
    // check, as in `~/.claude`.
    assert_eq!(
        behavior(
            &engine
                .decide(
                    &read,
                    &json!({"file_path": config.join("notes/n.md")}),
                    &plain
                )
                .await
        ),
        "allow"
    );
    let in_config = engine
        .decide(
            &edit,
            &json!({"file_path": config.join("agents/a.md")}),
            &plain,
        )
        .await;
    assert_eq!(behavior(&in_config), "ask");
    assert!(
        format!("{in_config:?}").contains("in the user's configuration directory"),
        "{in_config:?}"
    );
    assert_eq!(
        behavior(
            &engine
                .decide(
                    &edit,
                    &json!({"file_path": fx.proj.join("notes/n.md")}),
                    &plain
                )
                .await
        ),
        "ask"
    );
    assert_eq!(
        decide("Read", fx.home.join("flags/shared/x")).await,
        "allow"
    );
    assert_eq!(decide("Read", fx.proj.join(".env")).await, "deny");

    // The raw merge keeps other sections for other layers (hooks).
    let (files, _) = load_settings_files(&sources);
    let merged = merge_settings(&files);
    assert!(merged["hooks"]["PreToolUse"].is_array());
    assert!(merged["hooks"]["PostToolUse"].is_array());
    assert_eq!(merged["permissions"]["defaultMode"], "acceptEdits");
    assert_eq!(merged["permissions"]["deny"][0], "Bash(curl:*)");
}

#[test]
fn settings_errors_and_bypass_disable() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.proj.join(".claude")).unwrap();
    std::fs::write(fx.proj.join(".claude/settings.json"), "{ not json").unwrap();
    let managed = fx.home.join("managed");
    write(
        &managed.join("managed-settings.json"),
        json!({"permissions": {"disableBypassPermissionsMode": "disable"}}),
    );
    let sources = SettingsSources {
        project_dir: fx.proj.clone(),
        home: Some(fx.home.clone()),
        user_config_dir: Some(fx.home.join("nothing-here")),
        managed_dir: Some(managed),
        flag_settings: vec![
            r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#.into(),
            "/does/not/exist.json".into(),
        ],
        inline: vec![],
        project_trusted: true,
        host_tools: Vec::new(),
    };
    let loaded = load_permissions(&sources);
    assert!(loaded.has_errors());
    let msgs: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("settings.json") && m.contains("invalid JSON")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("/does/not/exist.json") && m.contains("cannot read")),
        "{msgs:?}"
    );
    assert_eq!(loaded.context.mode, PermissionMode::Default);
    assert!(!loaded.context.bypass_available);
}

/// Drop-ins merge after `managed-settings.json`, alphabetically: the last one wins.
#[test]
fn managed_drop_ins_override_the_main_file_in_name_order() {
    let fx = Fixture::new();
    let managed = fx.home.join("managed");
    write(
        &managed.join("managed-settings.json"),
        json!({"permissions": {"defaultMode": "acceptEdits"}, "env": {"X": "main", "Y": "main"}}),
    );
    write(
        &managed.join("managed-settings.d/50-lock.json"),
        json!({"permissions": {"defaultMode": "plan"}, "env": {"X": "fifty"}}),
    );
    write(
        &managed.join("managed-settings.d/10-base.json"),
        json!({"permissions": {"defaultMode": "dontAsk"}, "env": {"X": "ten", "Y": "ten"}}),
    );
    let sources = SettingsSources {
        project_dir: fx.proj.clone(),
        home: Some(fx.home.clone()),
        user_config_dir: Some(fx.home.join("nothing-here")),
        managed_dir: Some(managed),
        flag_settings: vec![],
        inline: vec![],
        project_trusted: true,
        host_tools: Vec::new(),
    };
    assert_eq!(
        load_permissions(&sources).context.mode,
        PermissionMode::Plan
    );
    let (files, _) = load_settings_files(&sources);
    let merged = merge_settings(&files);
    assert_eq!(merged["env"], json!({"X": "fifty", "Y": "ten"}));
}

/// A drop-in directory that cannot be read is an error, not an empty policy.
#[test]
fn an_unreadable_managed_drop_in_directory_is_reported() {
    let fx = Fixture::new();
    let managed = fx.home.join("managed");
    write(
        &managed.join("managed-settings.json"),
        json!({"permissions": {"deny": ["Bash(curl:*)"]}}),
    );
    // A file where the directory should be: reading it fails (as an unreadable directory
    // does for a user who is not root).
    std::fs::write(managed.join("managed-settings.d"), "not a directory").unwrap();
    let sources = SettingsSources {
        project_dir: fx.proj.clone(),
        home: Some(fx.home.clone()),
        user_config_dir: Some(fx.home.join("nothing-here")),
        managed_dir: Some(managed),
        flag_settings: vec![],
        inline: vec![],
        project_trusted: true,
        host_tools: Vec::new(),
    };
    let loaded = load_permissions(&sources);
    assert!(loaded.has_errors(), "{:?}", loaded.diagnostics);
    let msgs: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        msgs.iter().any(|m| m.contains("managed-settings.d")
            && m.contains("cannot read the managed settings drop-in directory")),
        "{msgs:?}"
    );
    // The main file still applies.
    assert_eq!(loaded.context.deny.len(), 1);
}

/// An `env` (or `permissions`) that is not an object is reported and left out: it does not
/// replace the other levels' variables when the files merge.
#[test]
fn a_mistyped_env_does_not_wipe_the_other_levels() {
    let fx = Fixture::new();
    let managed = fx.home.join("managed");
    write(
        &managed.join("managed-settings.json"),
        json!({"env": {"M": "managed"}}),
    );
    let user = fx.home.join("user-config");
    write(&user.join("settings.json"), json!({"env": {"U": "user"}}));
    write(
        &fx.proj.join(".claude/settings.json"),
        json!({"env": null, "permissions": ["Bash(ls)"]}),
    );
    write(
        &fx.proj.join(".claude/settings.local.json"),
        json!({"env": ["A=1"]}),
    );
    let sources = SettingsSources {
        project_dir: fx.proj.clone(),
        home: Some(fx.home.clone()),
        user_config_dir: Some(user),
        managed_dir: Some(managed),
        flag_settings: vec![],
        inline: vec![],
        project_trusted: true,
        host_tools: Vec::new(),
    };
    let (files, diags) = load_settings_files(&sources);
    assert_eq!(
        merge_settings(&files)["env"],
        json!({"M": "managed", "U": "user"})
    );
    let msgs: Vec<String> = diags.iter().map(ToString::to_string).collect();
    for expected in [
        "`env` must be an object, not null",
        "`env` must be an object, not an array",
        "`permissions` must be an object, not an array",
    ] {
        assert!(
            msgs.iter().any(|m| m.contains(expected)),
            "{expected}: {msgs:?}"
        );
    }
}

/// With several `--settings`, the last one given wins (as it does for hooks).
#[test]
fn the_last_settings_flag_wins() {
    let fx = Fixture::new();
    let first = fx.home.join("first.json");
    let second = fx.home.join("second.json");
    write(
        &first,
        json!({"permissions": {"defaultMode": "plan"}, "env": {"X": "first"}}),
    );
    write(
        &second,
        json!({"permissions": {"defaultMode": "acceptEdits"}, "env": {"X": "second"}}),
    );
    let sources = SettingsSources {
        project_dir: fx.proj.clone(),
        home: Some(fx.home.clone()),
        user_config_dir: Some(fx.home.join("nothing-here")),
        managed_dir: None,
        flag_settings: vec![first.display().to_string(), second.display().to_string()],
        inline: vec![],
        project_trusted: true,
        host_tools: Vec::new(),
    };
    assert_eq!(
        load_permissions(&sources).context.mode,
        PermissionMode::AcceptEdits
    );
    let (files, _) = load_settings_files(&sources);
    assert_eq!(merge_settings(&files)["env"], json!({"X": "second"}));
}

/// Values Claude Code's schema refuses are reported, not silently dropped.
#[test]
fn settings_values_of_the_wrong_kind_are_reported() {
    let fx = Fixture::new();
    write(
        &fx.proj.join(".claude/settings.json"),
        json!({"permissions": {"disableBypassPermissionsMode": true, "additionalDirectories": "../lib"}}),
    );
    let sources = SettingsSources {
        project_dir: fx.proj.clone(),
        home: Some(fx.home.clone()),
        user_config_dir: Some(fx.home.join("nothing-here")),
        managed_dir: None,
        flag_settings: vec![],
        inline: vec![],
        project_trusted: true,
        host_tools: Vec::new(),
    };
    let loaded = load_permissions(&sources);
    let msgs: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        msgs.iter().any(|m| m.contains(
            "`permissions.disableBypassPermissionsMode` must be \"disable\", got true; read as \"disable\""
        )),
        "{msgs:?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("`permissions.additionalDirectories` must be an array")),
        "{msgs:?}"
    );
}

#[test]
fn claude_config_dir_is_honoured() {
    let fx = Fixture::new();
    let dir = fx.home.join("custom-config");
    write(
        &dir.join("settings.json"),
        json!({"permissions": {"allow": ["Bash(make:*)"]}}),
    );
    let home = fx.home.clone();
    let cfg = dir.clone();
    let mut sources = SettingsSources::standard_with_env(&fx.proj, move |k| match k {
        "HOME" => Some(home.clone().into_os_string()),
        "CLAUDE_CONFIG_DIR" => Some(cfg.clone().into_os_string()),
        _ => None,
    });
    sources.managed_dir = None;
    assert_eq!(sources.user_config_dir.as_deref(), Some(dir.as_path()));
    let loaded = load_permissions(&sources);
    assert_eq!(loaded.context.allow[0].rule, "Bash(make:*)");
    assert_eq!(loaded.context.allow[0].source, RuleSource::UserSettings);
}

/// A server whose name holds `__` (`gh__admin`) has tools named like another server's
/// (`mcp__gh__admin__delete`): rules for server `gh` do not reach them.
#[tokio::test]
async fn a_server_rule_matches_the_tools_real_server_not_its_name_prefix() {
    let fx = Fixture::new();
    let (engine, ctx) = context(
        &fx,
        &case("x", "Bash", "").allow(&["mcp__gh", "mcp__other__*"]),
    );
    let admin = probe(&fx, "mcp__gh__admin__delete_repo").with_mcp_server("gh__admin");
    assert_eq!(
        behavior(&engine.decide(&admin, &json!({}), &ctx).await),
        "ask"
    );
    let gh = probe(&fx, "mcp__gh__admin__delete_repo").with_mcp_server("gh");
    assert_eq!(
        behavior(&engine.decide(&gh, &json!({}), &ctx).await),
        "allow"
    );
    let other = probe(&fx, "mcp__other__x").with_mcp_server("other");
    assert_eq!(
        behavior(&engine.decide(&other, &json!({}), &ctx).await),
        "allow"
    );
}

/// An MCP tool nothing allows is asked about with Claude Code's suggestion: a rule for the
/// tool in local settings (what a PermissionRequest hook echoes back to approve it for
/// good). A built-in tool without a subject of its own gets none.
#[tokio::test]
async fn an_mcp_tool_ask_suggests_a_rule_for_the_tool() {
    let fx = Fixture::new();
    let (engine, ctx) = context(&fx, &case("x", "Bash", ""));
    let tool = probe(&fx, "mcp__gh__create_issue").with_mcp_server("gh");
    let PermissionResult::Ask { suggestions, .. } = engine.decide(&tool, &json!({}), &ctx).await
    else {
        panic!("an MCP tool nothing allows is asked about");
    };
    assert_eq!(
        suggestions,
        vec![PermissionUpdate::AddRules {
            rules: vec![RuleValue {
                tool_name: "mcp__gh__create_issue".into(),
                rule_content: None,
            }],
            behavior: RuleBehavior::Allow,
            destination: UpdateDestination::LocalSettings,
        }]
    );
}

/// An MCP tool whose full name is too long for the API, shortened with a hash: it carries
/// the server and tool names it really has.
struct ShortenedMcpTool {
    name: String,
    server: String,
    tool: String,
}

#[async_trait::async_trait]
impl tool_core::Tool for ShortenedMcpTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn mcp_info(&self) -> Option<tool_core::McpToolInfo> {
        Some(tool_core::McpToolInfo {
            server_name: self.server.clone(),
            tool_name: self.tool.clone(),
            source: None,
        })
    }
    fn input_schema(&self) -> serde_json::Value {
        json!({"type": "object"})
    }
    fn description(&self) -> std::borrow::Cow<'_, str> {
        "a tool with a shortened name".into()
    }
    fn max_result_size(&self) -> tool_core::MaxResultSize {
        tool_core::MaxResultSize::Chars(1000)
    }
    async fn call(
        &self,
        _input: serde_json::Value,
        _ctx: ToolUseContext,
        _progress: tool_core::ProgressSender,
    ) -> Result<tool_core::ToolResult, tool_core::ToolError> {
        Err(tool_core::ToolError::Message("not called".into()))
    }
}

/// Found by review: a rule naming a long MCP tool by its full `mcp__<server>__<tool>` (as
/// Claude Code's rules do) never matched the shortened name it goes by, and a deny did
/// nothing. And an allow glob under one server's prefix (`mcp__gh__*o`) allowed the tools
/// of a server named `gh__e`, whose names start the same.
#[tokio::test]
async fn mcp_rules_name_a_tool_in_full_and_a_glob_keeps_to_its_server() {
    let fx = Fixture::new();
    let long = "x".repeat(70);
    let tool = ShortenedMcpTool {
        name: "mcp__s__xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_63b6d26c".into(),
        server: "s".into(),
        tool: long.clone(),
    };
    let full = format!("mcp__s__{long}");
    let (engine, ctx) = context(
        &fx,
        &case("x", "Bash", "")
            .deny(&[full.as_str()])
            .mode("bypassPermissions"),
    );
    assert_eq!(
        behavior(&engine.decide(&tool, &json!({}), &ctx).await),
        "deny"
    );
    assert!(engine.is_blanket_denied(&tool));
    let (engine, ctx) = context(&fx, &case("x", "Bash", "").allow(&[full.as_str()]));
    assert_eq!(
        behavior(&engine.decide(&tool, &json!({}), &ctx).await),
        "allow"
    );

    let other_server = probe(&fx, "mcp__gh__e__echo").with_mcp_server("gh__e");
    let own = probe(&fx, "mcp__gh__e__echo").with_mcp_server("gh");
    for allow in ["mcp__gh__*o", "mcp__gh__e*"] {
        let (engine, ctx) = context(&fx, &case("x", "Bash", "").allow(&[allow]));
        assert_eq!(
            behavior(&engine.decide(&other_server, &json!({}), &ctx).await),
            "ask",
            "{allow}"
        );
        assert_eq!(
            behavior(&engine.decide(&own, &json!({}), &ctx).await),
            "allow",
            "{allow}"
        );
    }
    // A glob that names the other server's prefix in full allows its tools (and the tools
    // of `gh` whose names start so).
    let (engine, ctx) = context(&fx, &case("x", "Bash", "").allow(&["mcp__gh__e__*"]));
    for tool in [&other_server, &own] {
        assert_eq!(
            behavior(&engine.decide(tool, &json!({}), &ctx).await),
            "allow"
        );
    }
    // A deny glob still reaches every tool whose name it matches.
    let (engine, ctx) = context(
        &fx,
        &case("x", "Bash", "")
            .deny(&["mcp__gh__*o"])
            .mode("bypassPermissions"),
    );
    assert_eq!(
        behavior(&engine.decide(&other_server, &json!({}), &ctx).await),
        "deny"
    );
}

/// A deny or ask rule for a server reaches every tool whose name starts with it, as in
/// Claude Code (which reads the server from the name): a server named `gh__admin` does not
/// slip out of `deny: ["mcp__gh__*"]` or `["mcp__gh"]`. In a deny rule `mcp__gh__admin` (no
/// `*`) is the tool named so or the server whose name is `gh__admin`; in an allow rule, the
/// tool only.
#[tokio::test]
async fn server_rules_and_servers_whose_names_hold_a_double_underscore() {
    let fx = Fixture::new();
    let admin = probe(&fx, "mcp__gh__admin__delete_repo").with_mcp_server("gh__admin");
    let gh_tool = probe(&fx, "mcp__gh__admin").with_mcp_server("gh");
    let gh_other = probe(&fx, "mcp__gh__issues").with_mcp_server("gh");
    for deny in ["mcp__gh__*", "mcp__gh"] {
        let (engine, ctx) = context(
            &fx,
            &case("x", "Bash", "")
                .allow(&["mcp__gh__admin__*"])
                .deny(&[deny]),
        );
        assert_eq!(
            behavior(&engine.decide(&admin, &json!({}), &ctx).await),
            "deny",
            "{deny}"
        );
        assert!(engine.is_blanket_denied(&admin), "{deny}");
        let (engine, ctx) = context(
            &fx,
            &case("x", "Bash", "").ask(&[deny]).mode("bypassPermissions"),
        );
        assert_eq!(
            behavior(&engine.decide(&admin, &json!({}), &ctx).await),
            "ask",
            "{deny}"
        );
    }
    // An allow stays strict: `mcp__gh__admin` is the tool named so, as in Claude Code.
    let (engine, ctx) = context(&fx, &case("x", "Bash", "").allow(&["mcp__gh__admin"]));
    assert_eq!(
        behavior(&engine.decide(&admin, &json!({}), &ctx).await),
        "ask"
    );
    assert_eq!(
        behavior(&engine.decide(&gh_tool, &json!({}), &ctx).await),
        "allow"
    );
    assert_eq!(
        behavior(&engine.decide(&gh_other, &json!({}), &ctx).await),
        "ask"
    );
    let (engine, ctx) = context(&fx, &case("x", "Bash", "").deny(&["mcp__gh__admin"]));
    assert_eq!(
        behavior(&engine.decide(&admin, &json!({}), &ctx).await),
        "deny"
    );
    assert_eq!(
        behavior(&engine.decide(&gh_other, &json!({}), &ctx).await),
        "ask"
    );
}

/// The server rule compares the names the model sees, normalised the way tools-mcp names
/// the tools: `claude.ai Gmail!` is `claude_ai_Gmail` (runs collapsed, ends trimmed).
#[tokio::test]
async fn a_server_rule_matches_the_server_under_the_tool_names_normalisation() {
    let fx = Fixture::new();
    let (engine, ctx) = context(&fx, &case("x", "Bash", "").allow(&["mcp__claude_ai_Gmail"]));
    let gmail = probe(&fx, "mcp__claude_ai_Gmail__send").with_mcp_server("claude.ai Gmail!");
    assert_eq!(
        behavior(&engine.decide(&gmail, &json!({}), &ctx).await),
        "allow"
    );
}

#[tokio::test]
async fn tool_own_check_is_merged() {
    let fx = Fixture::new();
    let (engine, ctx) = context(&fx, &case("x", "Bash", "").mode("bypassPermissions"));
    let tool = probe(&fx, "Custom").with_own_check(PermissionResult::Ask {
        message: "sensitive".into(),
        updated_input: None,
        suggestions: vec![],
        reason: Some(DecisionReason::SafetyCheck { reason: "x".into() }),
    });
    assert_eq!(
        behavior(&engine.decide(&tool, &json!({}), &ctx).await),
        "ask"
    );
    let tool = probe(&fx, "Custom").with_own_check(PermissionResult::deny(
        "no",
        DecisionReason::Other { reason: "x".into() },
    ));
    assert_eq!(
        behavior(&engine.decide(&tool, &json!({}), &ctx).await),
        "deny"
    );
    let (engine, ctx) = context(&fx, &case("x", "Bash", ""));
    let tool = probe(&fx, "Custom").with_read_only_allow(false);
    assert_eq!(
        behavior(&engine.decide(&tool, &json!({}), &ctx).await),
        "ask",
        "default passthrough asks"
    );
    let tool = probe(&fx, "Custom").with_own_check(PermissionResult::Allow {
        updated_input: Some(json!({"a": 1})),
        reason: None,
    });
    assert_eq!(
        engine.decide(&tool, &json!({}), &ctx).await,
        PermissionResult::Allow {
            updated_input: Some(json!({"a": 1})),
            reason: None
        }
    );
}

#[test]
fn an_untrusted_project_may_only_restrict() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    std::fs::write(
        proj.join(".claude/settings.json"),
        json!({"permissions": {
            "allow": ["Bash"], "deny": ["Bash(rm:*)"], "ask": ["Bash(git push:*)"],
            "defaultMode": "bypassPermissions", "additionalDirectories": ["/"]
        }})
        .to_string(),
    )
    .unwrap();
    let mut sources = SettingsSources::standard_with_env(&proj, |_| None);
    sources.managed_dir = None;
    sources.inline = vec![(
        tool_core::RuleSource::ProjectSettings,
        json!({"permissions": {"allow": ["Read"]}}),
    )];
    let untrusted = load_permissions(&sources);
    let rules = |v: &[tool_core::SourcedRule]| v.iter().map(|r| r.rule.clone()).collect::<Vec<_>>();
    assert_eq!(
        rules(&untrusted.context.allow),
        ["Read"],
        "only the explicit inline allow applies"
    );
    assert_eq!(rules(&untrusted.context.deny), ["Bash(rm:*)"]);
    assert_eq!(rules(&untrusted.context.ask), ["Bash(git push:*)"]);
    assert_eq!(untrusted.context.mode, tool_core::PermissionMode::Default);
    assert!(untrusted.context.additional_working_directories.is_empty());
    assert_eq!(
        untrusted.untrusted_ignored,
        vec![proj.join(".claude/settings.json")]
    );

    sources.project_trusted = true;
    let trusted = load_permissions(&sources);
    assert!(rules(&trusted.context.allow).contains(&"Bash".to_owned()));
    assert_eq!(
        trusted.context.mode,
        tool_core::PermissionMode::BypassPermissions
    );
    assert!(trusted.untrusted_ignored.is_empty());
}

/// `disableBypassPermissionsMode: "disable"` restricts, so an untrusted project's own file
/// applies it (and is not listed as ignored for it).
#[test]
fn an_untrusted_project_may_disable_bypass_mode() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    std::fs::write(
        proj.join(".claude/settings.json"),
        json!({"permissions": {
            "deny": ["Bash(rm:*)"], "disableBypassPermissionsMode": "disable"
        }})
        .to_string(),
    )
    .unwrap();
    let mut sources = SettingsSources::standard_with_env(&proj, |_| None);
    sources.managed_dir = None;
    sources.flag_settings = vec![r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#.into()];
    let loaded = load_permissions(&sources);
    assert_eq!(loaded.context.mode, tool_core::PermissionMode::Default);
    assert!(!loaded.context.bypass_available);
    assert!(
        loaded.untrusted_ignored.is_empty(),
        "{:?}",
        loaded.untrusted_ignored
    );

    // Another value is the same error as in a trusted project's file, and, a restriction of
    // the wrong type never failing open, disables bypass mode as "disable" does.
    std::fs::write(
        proj.join(".claude/settings.json"),
        json!({"permissions": {"disableBypassPermissionsMode": "enable"}}).to_string(),
    )
    .unwrap();
    let loaded = load_permissions(&sources);
    assert_eq!(loaded.context.mode, tool_core::PermissionMode::Default);
    assert!(!loaded.context.bypass_available);
    assert!(
        loaded.untrusted_ignored.is_empty(),
        "{:?}",
        loaded.untrusted_ignored
    );
    assert!(
        loaded
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error && d.message.contains("\"disable\"")),
        "{:?}",
        loaded.diagnostics
    );
}

/// The Bash tool's read-only flag follows the same analysis: an unquoted expansion in `[`
/// may split into `-v a[$(cmd)]`, a `printf` format starting with text cannot be `-v`.
#[test]
fn read_only_command_flag() {
    use tool_perms::bash::is_read_only_command;
    assert!(!is_read_only_command("[ $x ]"));
    assert!(is_read_only_command("[ -n \"$x\" ]"));
    assert!(is_read_only_command("printf \"Total: $n\\n\""));
    assert!(!is_read_only_command("printf \"$fmt\" x"));
    assert!(!is_read_only_command("echo $((x + 1))"));
    assert!(is_read_only_command("[[ $# -eq 0 ]] && echo none"));
    assert!(!is_read_only_command("ls | xargs sort"));
}

/// `/x` in each `--settings` file is relative to that file's directory: a second file's
/// rule no longer lands in the first file's directory.
#[tokio::test]
async fn each_flag_settings_file_anchors_its_own_rules() {
    let fx = Fixture::new();
    let first = fx.home.join("s1/a.json");
    let second = fx.home.join("s2/b.json");
    // A directory whose name holds glob characters is taken literally.
    let third = fx.home.join("s[3]/c.json");
    write(
        &third,
        json!({"permissions": {"deny": ["Read( /three.txt)"]}}),
    );
    write(&first, json!({"permissions": {"deny": ["Read(/one.txt)"]}}));
    write(
        &second,
        json!({"permissions": {"deny": ["Read(/secret.txt)", "Bash(rm:*)"]}}),
    );
    let sources = SettingsSources {
        project_dir: fx.proj.clone(),
        home: Some(fx.home.clone()),
        user_config_dir: Some(fx.home.join("nothing-here")),
        managed_dir: None,
        flag_settings: vec![
            first.display().to_string(),
            second.display().to_string(),
            third.display().to_string(),
        ],
        inline: vec![],
        project_trusted: true,
        host_tools: Vec::new(),
    };
    let loaded = load_permissions(&sources);
    assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics);
    let rules: Vec<&str> = loaded
        .context
        .deny
        .iter()
        .map(|r| r.rule.as_str())
        .collect();
    let absolute = format!("Read(/{}/secret.txt)", fx.home.join("s2").display());
    // The last file given comes first (it wins where values conflict); its rules are
    // anchored through `flag_settings_dir`, the others are made absolute.
    let one = format!("Read(/{}/one.txt)", fx.home.join("s1").display());
    assert_eq!(
        rules[..4],
        [
            "Read( /three.txt)",
            absolute.as_str(),
            "Bash(rm:*)",
            one.as_str()
        ]
    );
    let engine = loaded.engine();
    let tctx = ToolUseContext::new(&fx.proj)
        .with_home(Some(fx.home.clone()))
        .with_permission(loaded.context.clone());
    let read = common::probe(&fx, "Read");
    for (path, expected) in [
        (fx.home.join("s2/secret.txt"), "deny"),
        (fx.home.join("s1/one.txt"), "deny"),
        (fx.home.join("s1/secret.txt"), "ask"),
        (fx.home.join("s[3]/three.txt"), "deny"),
        (fx.home.join("s3/three.txt"), "ask"),
    ] {
        let got = behavior(
            &engine
                .decide(&read, &json!({"file_path": path}), &tctx)
                .await,
        );
        assert_eq!(got, expected, "{}", path.display());
    }
}

/// Rules are written (and kept) in NFC; the files and the project directory may be named in
/// NFD on disk (unpacked from a macOS archive). A deny still applies to them.
#[tokio::test]
async fn path_rules_match_decomposed_names_on_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let proj = root.join("proje\u{301}t");
    std::fs::create_dir_all(&proj).unwrap();
    for name in ["cafe\u{301}.txt", "secret.txt", "open.txt"] {
        std::fs::write(proj.join(name), "x").unwrap();
    }
    write(
        &proj.join(".claude/settings.json"),
        json!({"permissions": {"deny": ["Read(./caf\u{e9}.txt)", "Read(./secret.txt)"]}}),
    );
    let sources = SettingsSources {
        project_dir: proj.clone(),
        home: None,
        user_config_dir: Some(root.join("nothing-here")),
        managed_dir: None,
        flag_settings: vec![],
        inline: vec![],
        project_trusted: true,
        host_tools: Vec::new(),
    };
    let loaded = load_permissions(&sources);
    assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics);
    let engine = loaded.engine();
    let tctx = ToolUseContext::new(&proj).with_permission(loaded.context.clone());
    let read = tool_perms::probe::ProbeTool::new("Read", &proj, None);
    for (name, expected) in [
        ("cafe\u{301}.txt", "deny"),
        ("caf\u{e9}.txt", "deny"),
        ("secret.txt", "deny"),
        ("open.txt", "allow"),
    ] {
        let got = behavior(
            &engine
                .decide(&read, &json!({"file_path": proj.join(name)}), &tctx)
                .await,
        );
        assert_eq!(got, expected, "{name:?}");
    }
}

/// The user's state file, `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json` when that is
/// set), records which folders are trusted and holds the user's MCP servers, whose commands
/// the next session runs unasked: writing it is a safety check even in bypass mode, and so
/// is writing the file it links to (a dotfiles checkout), by Write and by Bash alike.
#[tokio::test]
async fn the_trust_record_is_protected_where_its_link_leads() {
    let fx = Fixture::new();
    let dotfiles = fx.out.join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let config = fx.home.join("config");
    std::fs::create_dir_all(&config).unwrap();
    for (link, target) in [
        (
            fx.home.join(".claude.json"),
            dotfiles.join("claude-state.json"),
        ),
        (
            config.join(".claude.json"),
            dotfiles.join("config-state.json"),
        ),
    ] {
        std::fs::write(&target, "{}").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
    }
    // Without CLAUDE_CONFIG_DIR (the user config dir is ~/.claude) and with it.
    for (user_config_dir, record) in [
        (fx.home.join(".claude"), dotfiles.join("claude-state.json")),
        (config.clone(), dotfiles.join("config-state.json")),
    ] {
        let sources = SettingsSources {
            project_dir: fx.proj.clone(),
            home: Some(fx.home.clone()),
            user_config_dir: Some(user_config_dir.clone()),
            managed_dir: None,
            flag_settings: vec![],
            inline: vec![],
            project_trusted: true,
            host_tools: Vec::new(),
        };
        let loaded = load_permissions(&sources);
        let engine = loaded.engine();
        let ctx = ToolUseContext::new(&fx.proj)
            .with_home(Some(fx.home.clone()))
            .with_permission(ToolPermissionContext {
                mode: PermissionMode::BypassPermissions,
                ..loaded.context.clone()
            });
        let write = probe(&fx, "Write");
        let bash = probe(&fx, "Bash");
        let r = record.display();
        for (tool, input, want) in [
            (&write, json!({"file_path": record, "content": "{}"}), "ask"),
            (
                &bash,
                json!({"command": format!("echo '{{}}' > {r}")}),
                "ask",
            ),
            (
                &bash,
                json!({"command": format!("sed -i s/a/b/ {r}")}),
                "ask",
            ),
            (
                &write,
                json!({"file_path": dotfiles.join("notes.txt"), "content": "x"}),
                "allow",
            ),
        ] {
            let got = engine.decide(tool, &input, &ctx).await;
            assert_eq!(
                behavior(&got),
                want,
                "{}: {input}: {got:?}",
                user_config_dir.display()
            );
        }
    }
}

/// The managed settings files are settings of the session before they exist: writing
/// `managed-settings.json`, `managed-mcp.json` or a new drop-in in `managed-settings.d`
/// (read next time at the highest precedence) is a safety check even in bypass mode, by Write and by Bash alike.
/// Another file of the managed directory is not.
#[tokio::test]
async fn managed_settings_files_are_protected_before_they_exist() {
    let fx = Fixture::new();
    let managed_dir = fx.out.join("managed");
    std::fs::create_dir_all(&managed_dir).unwrap();
    let sources = SettingsSources {
        project_dir: fx.proj.clone(),
        home: Some(fx.home.clone()),
        user_config_dir: Some(fx.home.join("config")),
        managed_dir: Some(managed_dir.clone()),
        flag_settings: vec![],
        inline: vec![],
        project_trusted: true,
        host_tools: Vec::new(),
    };
    let loaded = load_permissions(&sources);
    let engine = loaded.engine();
    let ctx = ToolUseContext::new(&fx.proj)
        .with_home(Some(fx.home.clone()))
        .with_permission(ToolPermissionContext {
            mode: PermissionMode::BypassPermissions,
            ..loaded.context.clone()
        });
    let write = probe(&fx, "Write");
    let bash = probe(&fx, "Bash");
    let m = managed_dir.display();
    for (tool, input, want) in [
        (
            &write,
            json!({"file_path": managed_dir.join("managed-settings.json"), "content": "{}"}),
            "ask",
        ),
        (
            &write,
            json!({"file_path": managed_dir.join("managed-settings.d/zz.json"), "content": "{}"}),
            "ask",
        ),
        (
            &bash,
            json!({"command": format!("mkdir -p {m}/managed-settings.d && echo '{{}}' > {m}/managed-settings.d/zz.json")}),
            "ask",
        ),
        (
            &bash,
            json!({"command": format!("cp /dev/null {m}/managed-settings.json")}),
            "ask",
        ),
        // managed-mcp.json names the servers the next session starts, unasked.
        (
            &write,
            json!({"file_path": managed_dir.join("managed-mcp.json"), "content": "{}"}),
            "ask",
        ),
        (
            &bash,
            json!({"command": format!("echo '{{}}' > {m}/managed-mcp.json")}),
            "ask",
        ),
        (
            &write,
            json!({"file_path": managed_dir.join("notes.txt"), "content": "x"}),
            "allow",
        ),
    ] {
        let got = engine.decide(tool, &input, &ctx).await;
        assert_eq!(behavior(&got), want, "{input}: {got:?}");
        if want == "ask" {
            assert!(
                format!("{got:?}").contains("settings file of this session"),
                "{got:?}"
            );
        }
    }
}

/// `permissions check` judges an Agent call as the Agent tool reads it: `subagent_type` with
/// the spaces around it taken off, `general-purpose` when it is blank. A deny rule on
/// `Agent(reviewer)` denied `" reviewer"` in a session but was reported as allowed.
#[tokio::test]
async fn the_probe_reads_an_agent_type_as_the_agent_tool_does() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = std::fs::canonicalize(tmp.path()).unwrap();
    let sources = SettingsSources {
        project_dir: proj.clone(),
        home: None,
        user_config_dir: Some(proj.join("nothing-here")),
        managed_dir: None,
        flag_settings: vec![],
        inline: vec![(
            RuleSource::FlagSettings,
            json!({"permissions": {"deny": ["Agent(reviewer)", "Agent(general-purpose)"], "allow": ["Agent"]}}),
        )],
        project_trusted: true,
        host_tools: Vec::new(),
    };
    let loaded = load_permissions(&sources);
    assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics);
    let engine = loaded.engine();
    let tctx = ToolUseContext::new(&proj).with_permission(loaded.context.clone());
    let agent = tool_perms::probe::ProbeTool::new("Agent", &proj, None);
    for (subagent_type, expected) in [
        (json!(" reviewer"), "deny"),
        (json!("reviewer\n"), "deny"),
        (json!("  "), "deny"),
        (json!("explorer"), "allow"),
    ] {
        let input = json!({"description": "d", "prompt": "p", "subagent_type": subagent_type});
        let got = behavior(&engine.decide(&agent, &input, &tctx).await);
        assert_eq!(got, expected, "{subagent_type}");
    }
}
