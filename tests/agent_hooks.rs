//! The agent loop's own hook events, with real hook scripts in the user's settings and
//! `toolwright agent` against the local Messages API stand-in (`support/model_api.rs`):
//! SessionStart, UserPromptSubmit, PostToolBatch, Stop (with its block cap), SubagentStart,
//! SubagentStop and SessionEnd. Each script saves the JSON it got on stdin, so the tests check
//! both what the hooks were told and what their answers did to the conversation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

#[path = "support/model_api.rs"]
mod model_api;
use model_api::*;

/// A project directory whose user settings (`CLAUDE_CONFIG_DIR`, as `agent_command` sets
/// it) run `hooks`: `(event, script body)`. Each script first saves its stdin as
/// `<inputs>/<event>-<n>.json` (n = 0, 1, ...) in `$IN`, then runs its body.
struct Project {
    dir: tempfile::TempDir,
    inputs: PathBuf,
}

impl Project {
    fn new(hooks: &[(&str, &str)]) -> Self {
        Self::with_settings(hooks, json!({}))
    }

    /// As [`new`](Self::new), with `extra` settings beside `hooks` (and a handler's
    /// `timeout` when an event's body starts with `timeout=N;`, `async: true` when it starts
    /// with `async;`).
    fn with_settings(hooks: &[(&str, &str)], extra: Value) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let inputs = dir.path().join("hook-inputs");
        let config = dir.path().join(".no-user-config");
        std::fs::create_dir_all(&inputs).unwrap();
        std::fs::create_dir_all(&config).unwrap();
        let mut settings = serde_json::Map::new();
        for (event, body) in hooks {
            let script = config.join(format!("{event}.sh"));
            std::fs::write(
                &script,
                format!(
                    "#!/bin/sh\nn=$(ls '{d}' | grep -c '^{event}-[0-9]*\\.json$')\nIN='{d}/{event}-'\"$n\"'.json'\ncat > \"$IN\"\n{body}\n",
                    d = inputs.display()
                ),
            )
            .unwrap();
            let mut handler =
                json!({"type": "command", "command": format!("sh '{}'", script.display())});
            if let Some(secs) = body
                .strip_prefix("timeout=")
                .and_then(|rest| rest.split(';').next())
            {
                handler["timeout"] = json!(secs.parse::<u64>().unwrap());
            }
            if body.starts_with("async;") {
                handler["async"] = json!(true);
            }
            settings.insert((*event).to_owned(), json!([{"hooks": [handler]}]));
        }
        let mut all = extra;
        all["hooks"] = Value::Object(settings);
        std::fs::write(config.join("settings.json"), all.to_string()).unwrap();
        Self { dir, inputs }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// What the hooks of `event` were given, in order.
    fn inputs(&self, event: &str) -> Vec<Value> {
        (0..)
            .map(|n| self.inputs.join(format!("{event}-{n}.json")))
            .take_while(|p| p.exists())
            .map(|p| serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap())
            .collect()
    }
}

/// How a hook's additional context reaches the model.
fn reminder(event: &str, text: &str) -> String {
    format!("<system-reminder>\n{event} hook additional context: {text}\n</system-reminder>")
}

/// How a hook's plain stdout that is context reaches the model, as Claude Code's "hook
/// success" output (`hook` is the event, and SessionStart's source: `SessionStart:startup`).
fn success(hook: &str, text: &str) -> String {
    format!("<system-reminder>\n{hook} hook success: {text}\n</system-reminder>")
}

#[test]
fn session_and_prompt_hooks_add_context_and_get_claude_codes_input() {
    let project = Project::new(&[
        ("SessionStart", "echo 'session note: main branch is frozen'"),
        ("UserPromptSubmit", "echo 'prompt note: answer in French'"),
        ("SessionEnd", "true"),
    ]);
    let (url, seen) = serve(|_, _| full(turn(Some("Bonjour."), &[])));
    let out = agent(&url, project.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    let first = &seen[0].messages()[0];
    assert_eq!(first["role"], "user");
    // SessionStart's context, then the prompt, then UserPromptSubmit's context.
    assert_eq!(
        text_of(first),
        format!(
            "{}\nrun the check\n{}",
            success(
                "SessionStart:startup",
                "session note: main branch is frozen"
            ),
            success("UserPromptSubmit", "prompt note: answer in French")
        )
    );

    let start = &project.inputs("SessionStart")[..];
    assert_eq!(start.len(), 1);
    assert_eq!(start[0]["hook_event_name"], "SessionStart");
    assert_eq!(start[0]["source"], "startup");
    assert_eq!(start[0]["model"], "claude-sonnet-4-5");
    let prompt = &project.inputs("UserPromptSubmit")[..];
    assert_eq!(prompt.len(), 1);
    assert_eq!(prompt[0]["prompt"], "run the check");
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    assert_eq!(prompt[0]["cwd"], cwd.to_str().unwrap());
    assert!(
        prompt[0]["session_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    assert_eq!(prompt[0]["session_id"], start[0]["session_id"]);
    // The prompt's id: absent before the first prompt, as in Claude Code.
    assert!(start[0].get("prompt_id").is_none(), "{}", start[0]);
    assert_eq!(
        prompt[0]["prompt_id"].as_str().map(str::len),
        Some(36),
        "{}",
        prompt[0]
    );
    let end = &project.inputs("SessionEnd")[..];
    assert_eq!(end.len(), 1, "SessionEnd runs once, at exit");
    assert_eq!(end[0]["reason"], "other");
}

#[test]
fn a_blocking_prompt_hook_rejects_the_prompt_before_any_request() {
    let project = Project::new(&[(
        "UserPromptSubmit",
        "echo 'prompts about the check are not allowed' >&2; exit 2",
    )]);
    let (url, seen) = serve(|_, _| full(turn(Some("should not be asked"), &[])));
    let out = agent(&url, project.path(), &["--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(seen.lock().unwrap().is_empty(), "the model was asked");
    let report = json_out(&out);
    assert_eq!(report["success"], false);
    let stop = report["stop"].as_str().unwrap();
    assert!(
        stop.starts_with("UserPromptSubmit operation blocked by hook:\n[")
            && stop.ends_with("]: prompts about the check are not allowed")
            // The exit-2 text names the hook once.
            && stop.matches("]: ").count() == 1,
        "{stop}"
    );
    // The prompt is erased, as in Claude Code.
    assert_eq!(report["messages"], json!([]));
}

#[test]
fn a_stop_hook_block_makes_the_model_go_on_with_the_reason() {
    // Blocks the first stop only: the usual `stop_hook_active` guard of real Stop hooks.
    let project = Project::new(&[(
        "Stop",
        r#"case "$(cat "$IN")" in *'"stop_hook_active":false'*) echo '{"decision":"block","reason":"run the tests first"}';; esac"#,
    )]);
    let (url, seen) = serve(|index, _| {
        full(turn(
            Some(if index == 0 {
                "Done."
            } else {
                "Tests pass now."
            }),
            &[],
        ))
    });
    let out = agent(&url, project.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = json_out(&out);
    assert_eq!(report["final_text"], "Tests pass now.");
    assert_eq!(report["turns"], 2);

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let messages = seen[1].messages();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(text_of(&messages[1]), "Done.");
    let feedback = text_of(&messages[2]);
    assert_eq!(messages[2]["role"], "user");
    // A JSON block's reason as it was given (only an exit-2 block names the hook).
    assert_eq!(feedback, "Stop hook feedback:\nrun the tests first");

    let stops = project.inputs("Stop");
    assert_eq!(stops.len(), 2);
    assert_eq!(stops[0]["stop_hook_active"], false);
    assert_eq!(stops[0]["last_assistant_message"], "Done.");
    assert_eq!(stops[1]["stop_hook_active"], true);
    assert_eq!(stops[1]["last_assistant_message"], "Tests pass now.");
}

#[test]
fn stop_hook_blocks_are_capped() {
    let project = Project::new(&[("Stop", "echo 'never done' >&2; exit 2")]);
    let (url, seen) = serve(|_, _| full(turn(Some("Done."), &[])));
    // Without --json the run's notices are shown on stderr.
    let out = agent_command(&url, project.path(), &[], "run the check")
        .env("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "2")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // The first answer and one more per allowed block.
    assert_eq!(seen.lock().unwrap().len(), 3);
    assert_eq!(project.inputs("Stop").len(), 3);
    let err = stderr(&out);
    assert!(
        err.contains(
            "A hook blocked the turn from ending 3 consecutive times - overriding and ending turn."
        ),
        "{err}"
    );
}

/// A cap of 0 turns the cap off, as in Claude Code: the hook decides alone when the run ends.
#[test]
fn a_stop_hook_block_cap_of_zero_is_no_cap() {
    let project = Project::new(&[(
        "Stop",
        r#"n=$(cat "$CLAUDE_PROJECT_DIR/count" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$CLAUDE_PROJECT_DIR/count"; if [ $n -le 10 ]; then echo "not yet $n" >&2; exit 2; fi"#,
    )]);
    let (url, seen) = serve(|_, _| full(turn(Some("Done."), &[])));
    let out = agent_command(
        &url,
        project.path(),
        &["--max-turns", "30"],
        "run the check",
    )
    .env("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "0")
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // Ten blocks, each followed by one more answer; the eleventh Stop lets the run end.
    assert_eq!(seen.lock().unwrap().len(), 11);
    assert_eq!(project.inputs("Stop").len(), 11);
    let err = stderr(&out);
    assert!(!err.contains("overriding and ending turn"), "{err}");
}

#[test]
fn stop_hook_context_also_makes_the_model_go_on() {
    let project = Project::new(&[(
        "Stop",
        r#"case "$(cat "$IN")" in *'"stop_hook_active":false'*) echo '{"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "the changelog is not updated"}}';; esac"#,
    )]);
    let (url, seen) = serve(|index, _| {
        full(turn(
            Some(if index == 0 {
                "Done."
            } else {
                "Changelog updated."
            }),
            &[],
        ))
    });
    let out = agent(&url, project.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        text_of(&seen[1].messages()[2]),
        reminder("Stop", "the changelog is not updated")
    );
    assert_eq!(json_out(&out)["final_text"], "Changelog updated.");
}

#[test]
fn continue_false_overrides_a_prompt_block_and_ends_the_run_as_a_success() {
    let project = Project::new(&[(
        "UserPromptSubmit",
        r#"echo '{"continue": false, "stopReason": "maintenance window", "decision": "block", "reason": "no"}'"#,
    )]);
    let (url, seen) = serve(|_, _| full(turn(Some("should not be asked"), &[])));
    let out = agent(&url, project.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(seen.lock().unwrap().is_empty());
    assert_eq!(
        json_out(&out)["stop"],
        "stopped by a hook: maintenance window"
    );
}

#[test]
fn session_start_exports_reach_bash_through_claude_env_file() {
    let project = Project::with_settings(
        &[(
            "SessionStart",
            r#"echo "export GREETING='hello from the hook'" >> "$CLAUDE_ENV_FILE""#,
        )],
        json!({"permissions": {"allow": ["Bash(echo:*)"]}}),
    );
    let (url, seen) = serve(|index, _| {
        full(if index == 0 {
            turn(
                None,
                &[("toolu_1", "Bash", json!({"command": "echo \"$GREETING\""}))],
            )
        } else {
            turn(Some("Greeted."), &[])
        })
    });
    let out = agent(&url, project.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    let result = &results(&seen[1].messages()[2])[0].1;
    assert_eq!(result["is_error"], Value::Null, "{result}");
    assert_eq!(result["content"], "hello from the hook", "{result}");
}

#[test]
fn session_end_hooks_are_stopped_at_their_budget() {
    // Over the default 1.5 s budget: killed, so "finished" is never written.
    let project = Project::new(&[(
        "SessionEnd",
        r#"touch "$IN.started"; sleep 30; touch "$IN.finished""#,
    )]);
    let (url, _) = serve(|_, _| full(turn(Some("Bye."), &[])));
    let out = agent(&url, project.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let input = project.inputs.join("SessionEnd-0.json");
    assert!(PathBuf::from(format!("{}.started", input.display())).exists());
    assert!(!PathBuf::from(format!("{}.finished", input.display())).exists());
    let err = stderr(&out);
    assert!(
        err.contains("SessionEnd hooks were stopped after their 1500 ms budget"),
        "{err}"
    );
}

#[test]
fn a_session_end_hook_timeout_raises_the_budget() {
    // A handler's own `timeout` (5 s) raises the shared budget: a 2 s hook finishes.
    let project = Project::new(&[("SessionEnd", r#"timeout=5; sleep 2; touch "$IN.finished""#)]);
    let (url, _) = serve(|_, _| full(turn(Some("Bye."), &[])));
    let out = agent(&url, project.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let input = project.inputs.join("SessionEnd-0.json");
    assert!(PathBuf::from(format!("{}.finished", input.display())).exists());
    assert!(!stderr(&out).contains("budget"), "{}", stderr(&out));
}

#[test]
fn post_tool_batch_sees_every_result_and_adds_context() {
    let project = Project::new(&[(
        "PostToolBatch",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PostToolBatch", "additionalContext": "batch note: both searches done"}}'"#,
    )]);
    std::fs::write(project.path().join("a.txt"), "alpha\n").unwrap();
    let calls = turn(
        None,
        &[
            ("toolu_1", "Glob", json!({"pattern": "*.txt"})),
            ("toolu_2", "Grep", json!({"pattern": "alpha"})),
        ],
    );
    let (url, seen) = serve(move |index, _| {
        full(if index == 0 {
            calls.clone()
        } else {
            turn(Some("Found it."), &[])
        })
    });
    let out = agent(&url, project.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let user = &seen[1].messages()[2];
    let ids: Vec<String> = results(user).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, ["toolu_1", "toolu_2"]);
    let blocks = user["content"].as_array().unwrap();
    assert_eq!(
        blocks.last().unwrap(),
        &json!({"type": "text", "text": reminder("PostToolBatch", "batch note: both searches done")})
    );

    let batches = project.inputs("PostToolBatch");
    assert_eq!(batches.len(), 1, "one batch, one run");
    let calls = batches[0]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["tool_name"], "Glob");
    assert_eq!(calls[0]["tool_use_id"], "toolu_1");
    assert_eq!(calls[0]["tool_input"], json!({"pattern": "*.txt"}));
    // What the model saw: the tool_result content.
    assert_eq!(calls[0]["tool_response"], results(user)[0].1["content"]);
    assert!(
        calls[0]["tool_response"].to_string().contains("a.txt"),
        "{}",
        calls[0]["tool_response"]
    );
    assert_eq!(calls[1]["tool_name"], "Grep");
}

#[test]
fn background_hook_context_reaches_the_model_on_a_later_request() {
    // An `async: true` PostToolUse hook: its context is delivered with the next request
    // after it finished (here the second tool waits until the hook is done, then a second
    // more for the runner to collect it; the check reads the last request, so a late
    // collection still passes as long as it lands before that one).
    let project = Project::with_settings(
        &[(
            "PostToolUse",
            r#"async;case "$(cat "$IN")" in *'"Glob"'*) echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "late note: the glob was checked"}}'; touch "$CLAUDE_PROJECT_DIR/hook-done";; esac"#,
        )],
        json!({"permissions": {"allow": ["Bash"]}}),
    );
    let first = turn(None, &[("toolu_1", "Glob", json!({"pattern": "*.txt"}))]);
    let wait = turn(
        None,
        &[(
            "toolu_2",
            "Bash",
            json!({"command": "for i in $(seq 100); do [ -f hook-done ] && break; sleep 0.1; done; sleep 1; echo waited"}),
        )],
    );
    let (url, seen) = serve(move |index, _| {
        full(match index {
            0 => first.clone(),
            1 => wait.clone(),
            _ => turn(Some("Done."), &[]),
        })
    });
    let out = agent(&url, project.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    let history = serde_json::to_string(&seen[2].messages()).unwrap();
    assert_eq!(
        history.matches("late note: the glob was checked").count(),
        1,
        "{history}"
    );
    // PostToolUse input carries how long the call ran (the Glob's hook; the Bash's one may
    // still be running when the agent exits).
    // Only the first input file: the Bash's may be half-written when the agent exits.
    let first = project.inputs.join("PostToolUse-0.json");
    let post: Value = serde_json::from_slice(&std::fs::read(first).unwrap()).unwrap();
    assert_eq!(post["tool_name"], "Glob");
    assert!(post["duration_ms"].is_u64(), "{post}");
}

#[test]
fn a_blocking_post_tool_batch_hook_stops_the_loop() {
    let project = Project::new(&[(
        "PostToolBatch",
        r#"echo '{"decision": "block", "reason": "budget for searches used up"}'"#,
    )]);
    let (url, seen) =
        serve(|_, _| full(turn(None, &[("toolu_1", "Glob", json!({"pattern": "*"}))])));
    let out = agent(&url, project.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(seen.lock().unwrap().len(), 1, "no request after the block");
    let report = json_out(&out);
    let stop = report["stop"].as_str().unwrap();
    assert_eq!(stop, "stopped by a hook: budget for searches used up");
    // The conversation still pairs the call with its result.
    let messages = report["messages"].as_array().unwrap();
    assert_eq!(results(messages.last().unwrap()).len(), 1);
}

#[test]
fn sub_agents_run_subagent_start_and_stop_hooks_not_the_main_ones() {
    let project = Project::new(&[
        (
            "SubagentStart",
            r#"echo '{"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "sub note: stay read-only"}}'"#,
        ),
        ("SubagentStop", COPY_AGENT_TRANSCRIPT),
        ("Stop", COPY_TRANSCRIPT),
        ("UserPromptSubmit", "true"),
    ]);
    let (url, seen) = serve_one_agent_call();
    let out = agent(&url, project.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));

    let seen = seen.lock().unwrap();
    let sub = seen.iter().find(|r| r.is_subagent()).unwrap();
    assert_eq!(
        text_of(&sub.messages()[0]),
        format!(
            "look around\n{}",
            reminder("SubagentStart", "sub note: stay read-only")
        )
    );

    let start = project.inputs("SubagentStart");
    assert_eq!(start.len(), 1);
    assert_eq!(start[0]["agent_type"], "general-purpose");
    // The sub-agent works on the user's prompt: its hooks get that prompt's id.
    assert_eq!(
        start[0]["prompt_id"],
        project.inputs("UserPromptSubmit")[0]["prompt_id"]
    );
    assert!(start[0]["prompt_id"].is_string(), "{}", start[0]);
    let agent_id = start[0]["agent_id"].as_str().unwrap();
    assert!(!agent_id.is_empty());
    let stop = project.inputs("SubagentStop");
    assert_eq!(stop.len(), 1);
    assert_eq!(stop[0]["agent_id"], agent_id);
    assert_eq!(stop[0]["last_assistant_message"], "sub report: all quiet");
    assert_eq!(stop[0]["stop_hook_active"], false);
    // The main agent's Stop and UserPromptSubmit ran once each, for the main agent only.
    let main_stop = project.inputs("Stop");
    assert_eq!(main_stop.len(), 1);
    assert_eq!(main_stop[0]["last_assistant_message"], "All quiet.");
    assert!(main_stop[0].get("agent_id").is_none());
    assert_eq!(project.inputs("UserPromptSubmit").len(), 1);

    // The sub-agent's conversation is in its own transcript, next to the main one, which
    // does not hold it.
    let main_path = Path::new(main_stop[0]["transcript_path"].as_str().unwrap());
    let sub_path = stop[0]["agent_transcript_path"].as_str().unwrap();
    assert_eq!(
        Path::new(sub_path),
        main_path
            .parent()
            .unwrap()
            .join(format!("subagents/agent-{agent_id}.jsonl"))
    );
    let sub = transcript_copy(&project, "SubagentStop-0");
    assert_eq!(sub.len(), 2, "{sub:?}");
    assert_eq!(sub[0]["message"]["content"][0]["text"], "look around");
    assert_eq!(
        sub[1]["message"]["content"][0]["text"],
        "sub report: all quiet"
    );
    for line in &sub {
        assert_eq!(line["isSidechain"], true);
        assert_eq!(line["agentId"], agent_id);
    }
    let main = transcript_copy(&project, "Stop-0");
    let texts: Vec<&Value> = main
        .iter()
        .flat_map(|l| l["message"]["content"].as_array().into_iter().flatten())
        .collect();
    assert!(
        texts.iter().all(|b| b["text"] != "sub report: all quiet"),
        "{main:?}"
    );
    assert!(main.iter().all(|l| l["isSidechain"] == false));
}

/// The model API for a run whose model calls one general-purpose agent ("look around"),
/// which reports "sub report: all quiet"; then the model says "All quiet.".
fn serve_one_agent_call() -> (String, Seen) {
    let parent = turn(
        None,
        &[(
            "toolu_agent",
            "Agent",
            json!({"description": "look", "prompt": "look around", "subagent_type": "general-purpose"}),
        )],
    );
    serve(move |_, request| {
        if request.is_subagent() {
            full(turn(Some("sub report: all quiet"), &[]))
        } else if request.messages().len() == 1 {
            full(parent.clone())
        } else {
            full(turn(Some("All quiet."), &[]))
        }
    })
}

/// A hook body that copies the transcript it was given to `$IN.transcript`.
const COPY_TRANSCRIPT: &str =
    r#"cp "$(sed -n 's/.*"transcript_path":"\([^"]*\)".*/\1/p' "$IN")" "$IN.transcript""#;

/// A hook body that copies the sub-agent transcript it was given to `$IN.transcript`.
const COPY_AGENT_TRANSCRIPT: &str =
    r#"cp "$(sed -n 's/.*"agent_transcript_path":"\([^"]*\)".*/\1/p' "$IN")" "$IN.transcript""#;

/// The lines of the transcript the hook run `<event>-<n>` copied.
fn transcript_copy(project: &Project, run: &str) -> Vec<Value> {
    let copy = project.inputs.join(format!("{run}.json.transcript"));
    std::fs::read_to_string(&copy)
        .unwrap_or_else(|e| panic!("{}: {e}", copy.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn permission_request_hooks_answer_asks_and_add_rules() {
    // Allows Bash and adds a session rule for it, so the second call is never asked about.
    let project = Project::new(&[(
        "PermissionRequest",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow", "updatedPermissions": [{"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow", "destination": "session"}]}}}'"#,
    )]);
    let (url, seen) = serve(|index, _| {
        full(match index {
            0 => turn(
                None,
                &[("toolu_1", "Bash", json!({"command": "touch first"}))],
            ),
            1 => turn(
                None,
                &[("toolu_2", "Bash", json!({"command": "touch second"}))],
            ),
            _ => turn(Some("Made both."), &[]),
        })
    });
    // --json: nobody can be asked, so without the hook both calls would be refused.
    let out = agent(&url, project.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(project.path().join("first").exists());
    assert!(project.path().join("second").exists());
    let seen = seen.lock().unwrap();
    assert_eq!(
        results(&seen[1].messages()[2])[0].1["is_error"],
        Value::Null
    );

    let asked = project.inputs("PermissionRequest");
    assert_eq!(asked.len(), 1, "the added rule answers the second call");
    assert_eq!(asked[0]["tool_name"], "Bash");
    assert_eq!(asked[0]["tool_input"], json!({"command": "touch first"}));
    assert!(asked[0]["permission_suggestions"].is_array());
    assert!(asked[0].get("tool_use_id").is_none());
}

#[test]
fn a_permission_request_hook_deny_is_the_result_the_model_sees() {
    let project = Project::new(&[(
        "PermissionRequest",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "Writes are frozen today"}}}'"#,
    )]);
    let (url, seen) = serve(|index, _| {
        full(if index == 0 {
            turn(
                None,
                &[("toolu_1", "Bash", json!({"command": "touch frozen"}))],
            )
        } else {
            turn(Some("Understood."), &[])
        })
    });
    let out = agent(&url, project.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!project.path().join("frozen").exists());
    let seen = seen.lock().unwrap();
    let result = &results(&seen[1].messages()[2])[0].1;
    assert_eq!(result["is_error"], true);
    assert_eq!(result["content"], "Writes are frozen today");
}

/// Stop hooks read the conversation at `transcript_path`, as they do under Claude Code: one
/// JSON line per message, the model's last answer last.
#[test]
fn stop_hooks_read_the_transcript() {
    let project = Project::new(&[("Stop", COPY_TRANSCRIPT)]);
    let (url, _seen) = serve(|_, _| full(turn(Some("All done."), &[])));
    let out = agent(&url, project.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stops = project.inputs("Stop");
    assert_eq!(stops.len(), 1);
    let path = stops[0]["transcript_path"].as_str().unwrap();
    assert!(path.ends_with("transcript.jsonl"), "{path}");
    let lines = transcript_copy(&project, "Stop-0");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["type"], "user");
    assert_eq!(lines[1]["type"], "assistant");
    assert_eq!(lines[1]["message"]["content"][0]["text"], "All done.");
    assert_eq!(lines[1]["parentUuid"], lines[0]["uuid"]);
    assert_eq!(lines[0]["sessionId"], stops[0]["session_id"]);
}

/// As under Claude Code, a call is in the transcript (a content block per line) before its
/// PreToolUse hooks run, so a guard can read what the model said before asking.
#[test]
fn pre_tool_use_hooks_find_the_call_in_the_transcript() {
    let project = Project::new(&[("PreToolUse", COPY_TRANSCRIPT), ("Stop", COPY_TRANSCRIPT)]);
    let (url, _seen) = serve(|index, _| {
        full(match index {
            0 => turn(
                Some("Listing first."),
                &[
                    // Not read-only, so one at a time (the hook scripts number their runs).
                    ("toolu_1", "Bash", json!({"command": "touch a"})),
                    ("toolu_2", "Bash", json!({"command": "touch b"})),
                ],
            ),
            _ => turn(Some("Listed."), &[]),
        })
    });
    let out = agent(&url, project.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Each hook finds its call (the stream may have delivered the next one by then).
    for (n, input) in project.inputs("PreToolUse").iter().enumerate() {
        let copy = transcript_copy(&project, &format!("PreToolUse-{n}"));
        assert!(
            copy.iter()
                .any(|l| l["message"]["content"][0]["id"] == input["tool_use_id"]),
            "{n}: {copy:?}"
        );
        assert_eq!(copy[1]["message"]["content"][0]["text"], "Listing first.");
    }
    assert_eq!(project.inputs("PreToolUse").len(), 2);
    // Each block once, in order, chained, and the results after them.
    let all = transcript_copy(&project, "Stop-0");
    let kinds: Vec<String> = all
        .iter()
        .map(|l| {
            format!(
                "{}:{}",
                l["type"].as_str().unwrap(),
                l["message"]["content"][0]["type"]
                    .as_str()
                    .unwrap_or("string")
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "user:string",
            "assistant:text",
            "assistant:tool_use",
            "assistant:tool_use",
            "user:tool_result",
            "assistant:text"
        ]
    );
    for pair in all.windows(2) {
        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
    }
}

/// A hook's `if` condition is matched against the Agent tool too (it is added to the
/// session after the hooks were built): `if: "Agent(reviewer)"` does not fire for a
/// general-purpose agent. It once matched every Agent call, blocking them all.
#[test]
fn a_hook_if_condition_is_matched_against_agent_calls() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("settings.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "if": "Agent(reviewer)", "command": "echo 'no reviewers today' >&2; exit 2"}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let (url, seen) = serve_one_agent_call();
    let out = agent(&url, dir.path(), &["--json", "--mode", "bypassPermissions"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    assert!(
        seen.iter().any(|r| r.is_subagent()),
        "the general-purpose agent was blocked: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// An allow's `permissionDecisionReason` is for the user (Claude Code shows it; a deny's
/// goes to the model): the agent's line for the call shows it.
#[test]
fn a_pre_tool_use_allow_reason_is_shown_to_the_user() {
    let project = Project::new(&[(
        "PreToolUse",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "read-only listing"}}'"#,
    )]);
    let calls = turn(None, &[("toolu_1", "Bash", json!({"command": "ls"}))]);
    let (url, _seen) = serve(move |index, _| {
        full(if index == 0 {
            calls.clone()
        } else {
            turn(Some("Listed."), &[])
        })
    });
    let out = agent_command(&url, project.path(), &[], "list the files")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.contains("✓ Bash(ls)"))
        .unwrap_or_else(|| panic!("no line for the call: {err}"));
    assert!(
        line.contains("allowed by a PreToolUse hook: read-only listing"),
        "{err}"
    );
    assert_eq!(project.inputs("PreToolUse").len(), 1);
}
