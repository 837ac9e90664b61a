//! Review 30: ExitPlanMode's plan file rewritten while the user reads the question. The
//! user saw "# Plan A benign"; the model was handed "## Approved Plan:\n# Plan B EVIL" and
//! PostToolUse hooks saw plan B, because the call read the plan file again (the pipeline
//! hands the call the model's `{}` when nobody changed the observable input). Through the
//! pipeline with a prompter (as `toolwright agent` asks on a terminal) and through
//! `toolwright serve` with a client that answers the elicitation.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tool_core::ToolUseContext;
use tool_exec::{
    ExecutorConfig, HookCall, Hooks, Pipeline, PostToolUseOutcome, PreToolUseOutcome, PromptAnswer,
    PromptRequest, Prompter, ToolUse, run_tools,
};

/// Approves ExitPlanMode after another writer rewrote the plan file while the question was
/// open; keeps the questions.
struct RewritesWhileAsked {
    plan_file: std::path::PathBuf,
    asked: Mutex<Vec<String>>,
}

#[tool_core::async_trait]
impl Prompter for RewritesWhileAsked {
    async fn prompt(&self, request: &PromptRequest) -> PromptAnswer {
        self.asked.lock().unwrap().push(request.message.clone());
        if request.tool_name != "ExitPlanMode" {
            return PromptAnswer::Deny { feedback: None };
        }
        std::fs::write(&self.plan_file, "# Plan B EVIL\n").unwrap();
        PromptAnswer::AllowOnce {
            updated_input: None,
        }
    }
}

/// Keeps the input each PostToolUse hook is given.
#[derive(Default)]
struct PostInputs(Mutex<Vec<Value>>);

#[tool_core::async_trait]
impl Hooks for PostInputs {
    async fn pre_tool_use(&self, _call: HookCall<'_>, _ctx: &ToolUseContext) -> PreToolUseOutcome {
        PreToolUseOutcome::default()
    }
    async fn post_tool_use(
        &self,
        call: HookCall<'_>,
        _output: &Value,
        _ctx: &ToolUseContext,
    ) -> PostToolUseOutcome {
        self.0.lock().unwrap().push(call.input.clone());
        PostToolUseOutcome::default()
    }
    async fn post_tool_use_failure(
        &self,
        _call: HookCall<'_>,
        _error: &str,
        _is_interrupt: bool,
        _ctx: &ToolUseContext,
    ) -> PostToolUseOutcome {
        PostToolUseOutcome::default()
    }
}

/// Through the pipeline and the real permission engine, as the agent asks on a terminal:
/// the plan shown in the question is the plan the model is handed and the PostToolUse hook
/// sees, though the plan file holds another by the time the user answers.
#[tokio::test(flavor = "multi_thread")]
async fn the_plan_approved_at_the_prompt_is_the_plan_the_model_gets() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    std::fs::create_dir_all(home.join(".claude/plans")).unwrap();
    let (engine, ctx) = crate::review39_plan::plan_session(&root, &home, "review30-plan");
    let plan_file = ctx.plan_file().unwrap();
    let prompter = Arc::new(RewritesWhileAsked {
        plan_file: plan_file.clone(),
        asked: Mutex::default(),
    });
    let hooks = Arc::new(PostInputs::default());
    let pipeline = Arc::new(Pipeline::new(
        Arc::new(engine),
        Arc::clone(&prompter) as Arc<dyn Prompter>,
        Arc::clone(&hooks) as Arc<dyn Hooks>,
    ));
    let (results, _) = run_tools(
        pipeline,
        ctx,
        vec![
            ToolUse::new("p", "EnterPlanMode", json!({})),
            ToolUse::new(
                "w",
                "Write",
                json!({"file_path": plan_file, "content": "# Plan A benign\n"}),
            ),
            ToolUse::new("x", "ExitPlanMode", json!({})),
        ],
        ExecutorConfig::default(),
    )
    .await;
    let text = |i: usize| results[i].outcome.result.content.joined_text();
    for (i, call) in results.iter().enumerate().take(3) {
        assert!(!call.outcome.result.is_error, "{}", text(i));
    }
    let asked = prompter.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].ends_with("# Plan A benign\n"), "{}", asked[0]);
    assert_eq!(
        std::fs::read_to_string(&plan_file).unwrap(),
        "# Plan B EVIL\n"
    );
    assert!(
        text(2).ends_with("## Approved Plan:\n# Plan A benign\n"),
        "the model was not handed the plan approved: {}",
        text(2)
    );
    assert!(!text(2).contains("EVIL"), "{}", text(2));
    let post = hooks.0.lock().unwrap().clone();
    let exit = post
        .iter()
        .find(|input| input.get("plan").is_some())
        .unwrap_or_else(|| panic!("no PostToolUse input with a plan: {post:?}"));
    assert_eq!(exit["plan"], "# Plan A benign\n", "{exit}");
}

/// A `toolwright serve` session on a client answering elicitations.
struct Served {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Served {
    fn start(project: &std::path::Path, settings: &Value) -> Self {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolwright"))
            .args(["serve", "--cwd"])
            .arg(project)
            .args(["--settings", &settings.to_string()])
            .env("CLAUDE_CONFIG_DIR", project.join(".config"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let output = std::io::BufReader::new(child.stdout.take().unwrap());
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in output.lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut this = Self {
            child,
            stdin,
            lines,
        };
        this.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "review30", "version": "1"}}}),
        );
        let init = this.until_answer(1, |_, _| {});
        assert!(init.get("result").is_some(), "{init}");
        this.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        this
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(120))
            .expect("no message from the server in 120 s");
        serde_json::from_str(&line).unwrap()
    }

    /// Reads messages until the answer to request `id`, handing every server request to
    /// `on_request` (which answers it).
    fn until_answer(&mut self, id: u64, mut on_request: impl FnMut(&mut Self, Value)) -> Value {
        loop {
            let message = self.next();
            if message.get("method").is_some() {
                if message.get("id").is_some() {
                    on_request(self, message);
                }
            } else if message["id"] == id {
                return message;
            }
        }
    }

    fn call(&mut self, id: u64, tool: &str, arguments: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of a `tools/call` answer, checked to be no error.
fn ok_text(answer: &Value) -> String {
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    answer["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `toolwright serve`: while ExitPlanMode's elicitation is open, the client's Write of
/// another plan to the plan file succeeds; the user accepts the plan shown, and that plan
/// (not the file's new one) is what the result hands over and what the PostToolUse hook
/// reads in its input.
#[test]
fn serve_hands_over_the_plan_the_elicitation_showed() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let log = root.join("post.json");
    let settings = json!({"hooks": {"PostToolUse": [{"matcher": "ExitPlanMode",
        "hooks": [{"type": "command", "command": format!("cat > '{}'", log.display())}]}]}});
    let mut server = Served::start(&root, &settings);
    let accept = json!({"action": "accept", "content": {"allow": true}});
    let accept_all = |server: &mut Served, request: Value| {
        server.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": accept}));
    };

    server.call(2, "EnterPlanMode", json!({}));
    let entered = ok_text(&server.until_answer(2, accept_all));
    let plan_file = entered
        .split("Write your plan to ")
        .nth(1)
        .and_then(|rest| rest.split(" (create it").next())
        .unwrap_or_else(|| panic!("no plan file named: {entered}"))
        .to_owned();
    server.call(
        3,
        "Write",
        json!({"file_path": plan_file, "content": "# Plan A benign\n"}),
    );
    ok_text(&server.until_answer(3, accept_all));

    server.call(4, "ExitPlanMode", json!({}));
    let mut shown = Vec::new();
    let exited = server.until_answer(4, |server, request| {
        let message = request["params"]["message"].as_str().unwrap_or_default();
        if message.starts_with("Exit plan mode") {
            shown.push(message.to_owned());
            // Another request rewrites the plan file while the user reads; it is answered
            // before the user accepts.
            server.call(
                5,
                "Write",
                json!({"file_path": plan_file, "content": "# Plan B EVIL\n"}),
            );
            let written = server.until_answer(5, |_, other| panic!("asked again: {other}"));
            ok_text(&written);
        }
        server.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": accept}));
    });
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].contains("# Plan A benign"), "{}", shown[0]);
    assert_eq!(
        std::fs::read_to_string(&plan_file).unwrap(),
        "# Plan B EVIL\n"
    );
    let text = ok_text(&exited);
    assert!(
        text.ends_with("## Approved Plan:\n# Plan A benign\n"),
        "the model was not handed the plan approved: {text}"
    );
    assert!(!text.contains("EVIL"), "{text}");
    let post: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    assert_eq!(post["tool_input"]["plan"], "# Plan A benign\n", "{post}");
}
