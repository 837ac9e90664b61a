//! Review 30's findings on the terminal's permission questions (`toolwright agent` on a
//! pseudo-terminal, the model a local mock of the Messages API): an `always` answer settles
//! the calls already waiting for a question that its rule covers, and a refusal after it
//! does not reach them; parallel calls are asked about in the order of the calls; `[a]lways`
//! is offered only where the rule it adds would let the same call run unasked (not for a
//! protected path's write, nor for ExitPlanMode, whose plan is shown once); and an
//! AskUserQuestion answer naming no option is asked again.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::model_api::*;
use crate::terminal::{agent_on_terminal, sh_quote};

/// Whether util-linux `script` is there (a CI machine must have it).
fn have_script() -> bool {
    if Command::new("script").arg("--version").output().is_ok() {
        return true;
    }
    let msg = "util-linux `script` (Debian's bsdutils) is not installed: this test cannot run";
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
    eprintln!("skipped: {msg}");
    false
}

/// A temp dir by its real path, with a project folder `proj` in it that the user trusts
/// (so no trust question comes first).
fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let proj = root.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    trust(&proj);
    (dir, root, proj)
}

/// What the terminal showed.
fn screen(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).replace('\r', "")
}

/// The model's requests after the first, which answer with text.
fn then_done(first: String) -> impl Fn(usize, &Request) -> Reply + Send + Sync + 'static {
    move |i, _| match i {
        0 => full(first.clone()),
        _ => full(turn(Some("Done."), &[])),
    }
}

/// The tool_results the model got in its second request.
fn second_results(seen: &Seen) -> Vec<(String, Value)> {
    let seen = seen.lock().unwrap();
    assert!(
        seen.len() >= 2,
        "the model was asked {} time(s)",
        seen.len()
    );
    results(&seen[1].messages()[2])
}

/// [`agent_on_terminal`], typing what `typist` says: it is shown the screen every 20 ms and
/// answers what to type, if anything (so that an answer may wait for more than a question,
/// such as the pages a web server was asked for).
fn agent_typing(
    dir: &Path,
    url: &str,
    prompt: &str,
    mut typist: impl FnMut(&str) -> Option<&'static [u8]>,
) -> Output {
    let command_line = format!(
        "{} agent {}",
        sh_quote(env!("CARGO_BIN_EXE_toolwright")),
        sh_quote(prompt)
    );
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &command_line, "/dev/null"])
        .current_dir(dir)
        .env("ANTHROPIC_BASE_URL", url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("CLAUDE_CONFIG_DIR", dir.join(".no-user-config"))
        .env_remove("ENABLE_TOOL_SEARCH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let screen: Arc<Mutex<Vec<u8>>> = Arc::default();
    let mut pty_out = child.stdout.take().unwrap();
    let reader = {
        let screen = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut pty_out, &mut buf) {
                if n == 0 {
                    break;
                }
                screen.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    // Standard input stays open until the run is over; a run still going after a minute is
    // ended (the terminal closes with `script`).
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        let shown = String::from_utf8_lossy(&screen.lock().unwrap()).replace('\r', "");
        if let Some(typed) = typist(&shown) {
            stdin.write_all(typed).unwrap();
            stdin.flush().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    reader.join().unwrap();
    drop(stdin);
    let mut err = Vec::new();
    std::io::Read::read_to_end(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    Output {
        status,
        stdout: std::mem::take(&mut *screen.lock().unwrap()),
        stderr: err,
    }
}

/// A loopback web server answering every GET with a short text page; the paths asked for.
fn web_server() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let paths: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = Arc::clone(&paths);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut line = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            if let Some(path) = line.split_whitespace().nth(1) {
                log.lock().unwrap().push(path.to_owned());
            }
            loop {
                let mut header = String::new();
                match reader.read_line(&mut header) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if header.trim().is_empty() => break,
                    Ok(_) => {}
                }
            }
            let body = "a short page";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, paths)
}

/// Three parallel Reads of files in one folder outside the project ask once: `a` adds the
/// session rule for that folder, which settles the two calls already waiting for their
/// question (they were decided before the rule existed); all three are read.
#[test]
fn always_settles_the_calls_already_waiting_that_its_rule_covers() {
    if !have_script() {
        return;
    }
    let (_dir, root, proj) = project();
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let mut calls = Vec::new();
    for (id, name, text) in [
        ("toolu_1", "a.txt", "alpha"),
        ("toolu_2", "b.txt", "beta"),
        ("toolu_3", "c.txt", "gamma"),
    ] {
        std::fs::write(outside.join(name), text).unwrap();
        calls.push((
            id,
            "Read",
            json!({"file_path": outside.join(name).display().to_string()}),
        ));
    }
    let (url, seen) = serve(then_done(turn(None, &calls)));
    let out = agent_on_terminal(
        &proj,
        &url,
        "read them",
        &[("(always adds the session rule Read(", 1, b"a\n")],
    );
    let shown = screen(&out);
    assert!(out.status.success(), "{shown}\n{}", stderr(&out));
    assert_eq!(shown.matches("Allow Read?").count(), 1, "{shown}");
    let answered = second_results(&seen);
    assert_eq!(answered.len(), 3, "{answered:?}");
    for ((id, result), text) in answered.iter().zip(["alpha", "beta", "gamma"]) {
        assert!(result.get("is_error").is_none(), "{id}: {result}");
        assert!(
            result["content"].to_string().contains(text),
            "{id}: {result}"
        );
    }
}

/// Three parallel WebFetch calls, the second to another host: `a` to the first question
/// allows 127.0.0.1 for the session, which settles the third call at once; the `n` to the
/// second (localhost) question then rejects the turn, but does not reach the third call,
/// which the rule allowed before: the server is asked for the first and third pages (the
/// `n` is typed once it was, since the rejection stops the calls still running), never
/// the second. The questions come in the order of the calls, so the first one is
/// 127.0.0.1's.
#[test]
fn a_refusal_after_always_does_not_reach_the_calls_its_rule_allowed() {
    if !have_script() {
        return;
    }
    let (_dir, _root, proj) = project();
    let (port, paths) = web_server();
    let fetch = |host: &str, page: &str| json!({"url": format!("http://{host}:{port}/{page}"), "prompt": "what does it say?"});
    let calls = [
        ("toolu_1", "WebFetch", fetch("127.0.0.1", "one")),
        ("toolu_2", "WebFetch", fetch("localhost", "two")),
        ("toolu_3", "WebFetch", fetch("127.0.0.1", "three")),
    ];
    let (url, _seen) = serve(then_done(turn(None, &calls)));
    let (mut always, mut no) = (false, false);
    let asked = Arc::clone(&paths);
    let out = agent_typing(&proj, &url, "fetch them", |shown| {
        if !always && shown.contains("(always adds the session rule WebFetch(domain:127.0.0.1))") {
            always = true;
            return Some(b"a\n");
        }
        let fetched = asked.lock().unwrap().len();
        if !no && fetched >= 2 && shown.contains("session rule WebFetch(domain:localhost))") {
            no = true;
            return Some(b"n\n");
        }
        None
    });
    let shown = screen(&out);
    let mut fetched = paths.lock().unwrap().clone();
    fetched.sort();
    assert_eq!(fetched, ["/one", "/three"], "{shown}");
    assert_eq!(shown.matches("Allow WebFetch?").count(), 2, "{shown}");
    // The first question is the first call's; the third call is never asked about.
    let field = |host: &str, page: &str| format!("  url:\n    http://{host}:{port}/{page}\n");
    let first = shown.find(&field("127.0.0.1", "one")).expect(&shown);
    assert!(first < shown.find("Allow WebFetch?").unwrap(), "{shown}");
    assert!(!shown.contains(&field("127.0.0.1", "three")), "{shown}");
}

/// Where each question shows its call: the `file_path` field of the question.
fn asked_about(shown: &str, path: &Path) -> usize {
    shown
        .find(&format!("  file_path:\n    {}\n", path.display()))
        .unwrap_or_else(|| panic!("never asked about {}:\n{shown}", path.display()))
}

/// Parallel calls that each ask are asked about in the order of the calls, whatever order
/// their tasks reach the question in (three runs, so that a scheduling order that happens to
/// match once does not pass by chance).
#[test]
fn parallel_calls_are_asked_about_in_the_order_of_the_calls() {
    if !have_script() {
        return;
    }
    for _ in 0..3 {
        let (_dir, root, proj) = project();
        let files: Vec<PathBuf> = ["d1", "d2", "d3"]
            .iter()
            .map(|d| {
                let dir = root.join(d);
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("x.txt"), *d).unwrap();
                dir.join("x.txt")
            })
            .collect();
        let calls: Vec<(&str, &str, Value)> = ["toolu_1", "toolu_2", "toolu_3"]
            .into_iter()
            .zip(&files)
            .map(|(id, f)| (id, "Read", json!({"file_path": f.display().to_string()})))
            .collect();
        let (url, seen) = serve(then_done(turn(None, &calls)));
        let out = agent_on_terminal(
            &proj,
            &url,
            "read them",
            &[
                ("Allow Read?", 1, b"y\n"),
                ("Allow Read?", 2, b"y\n"),
                ("Allow Read?", 3, b"y\n"),
            ],
        );
        let shown = screen(&out);
        assert!(out.status.success(), "{shown}\n{}", stderr(&out));
        let at: Vec<usize> = files.iter().map(|f| asked_about(&shown, f)).collect();
        assert!(at[0] < at[1] && at[1] < at[2], "{at:?}\n{shown}");
        assert_eq!(second_results(&seen).len(), 3);
    }
}

/// A write to the project's `.claude/settings.json` (a protected path, which asks whatever
/// the allow rules say) offers no `[a]lways`: its rule would never let the write run unasked.
/// An `a` typed all the same allows the call once, adding no rule.
#[test]
fn always_is_not_offered_for_a_protected_paths_write() {
    if !have_script() {
        return;
    }
    let (_dir, _root, proj) = project();
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    let settings = proj.join(".claude/settings.json");
    let write = |id, content: &str| {
        (
            id,
            "Write",
            json!({"file_path": settings.display().to_string(), "content": content}),
        )
    };
    let first = turn(None, &[write("toolu_1", "{}")]);
    let second = turn(None, &[write("toolu_2", "{\"x\": 1}")]);
    let (url, _seen) = serve(move |i, _| match i {
        0 => full(first.clone()),
        1 => full(second.clone()),
        _ => full(turn(Some("Done."), &[])),
    });
    let out = agent_on_terminal(
        &proj,
        &url,
        "write the settings",
        &[
            ("Allow Write? [y]es / [n]o ", 1, b"a\n"),
            ("Allow Write? [y]es / [n]o ", 2, b"y\n"),
        ],
    );
    let shown = screen(&out);
    assert!(out.status.success(), "{shown}\n{}", stderr(&out));
    assert!(
        !shown.contains("[a]lways") && !shown.contains("always adds"),
        "{shown}"
    );
    assert_eq!(shown.matches("Allow Write? [y]es / [n]o ").count(), 2);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{\"x\": 1}");
}

/// ExitPlanMode always asks the user, so no `[a]lways` is offered; its plan is shown once (in
/// the question's headline, not again as the `plan` field).
#[test]
fn exit_plan_mode_offers_no_always_and_shows_its_plan_once() {
    if !have_script() {
        return;
    }
    let (_dir, _root, proj) = project();
    let (url, seen) = serve(|i, _| match i {
        0 => full(turn(None, &[("toolu_enter", "EnterPlanMode", json!({}))])),
        1 => full(turn(
            None,
            &[(
                "toolu_exit",
                "ExitPlanMode",
                json!({"plan": "PLAN ONE: add the parser"}),
            )],
        )),
        _ => full(turn(Some("Done."), &[])),
    });
    let out = agent_on_terminal(
        &proj,
        &url,
        "plan it",
        &[("Allow ExitPlanMode?", 1, b"y\n")],
    );
    let shown = screen(&out);
    assert!(out.status.success(), "{shown}\n{}", stderr(&out));
    let start = shown
        .find("Exit plan mode and start on this plan?")
        .unwrap();
    let end = shown.find("Allow ExitPlanMode?").unwrap();
    let question = &shown[start..end];
    assert_eq!(question.matches("PLAN ONE").count(), 1, "{question}");
    assert!(
        !question.contains("always") && !shown.contains("[a]lways"),
        "{shown}"
    );
    assert!(
        shown[end..].starts_with("Allow ExitPlanMode? [y]es / [n]o y"),
        "{shown}"
    );
    let seen = seen.lock().unwrap();
    let exited = &results(&seen[2].messages()[4])[0].1;
    assert!(exited.get("is_error").is_none(), "{exited}");
}

/// An AskUserQuestion answer made of option numbers that name no option (`3` of two, `0` of
/// three) is asked again, saying which numbers there are; it is not sent as the user's own
/// text. The answer given then is the one the model gets.
#[test]
fn an_option_number_out_of_range_is_asked_again() {
    if !have_script() {
        return;
    }
    let (_dir, _root, proj) = project();
    let questions = json!({"questions": [
        {"question": "Which database?", "header": "DB", "multiSelect": false,
         "options": [{"label": "SQLite", "description": "a file"},
                     {"label": "Postgres", "description": "a server"}]},
        {"question": "What else?", "header": "Extras", "multiSelect": true,
         "options": [{"label": "Docs", "description": ""}, {"label": "Bench", "description": ""},
                     {"label": "CI", "description": ""}]}
    ]});
    let (url, seen) = serve(then_done(turn(
        None,
        &[("toolu_q", "AskUserQuestion", questions)],
    )));
    let single = "A number, or your own answer (empty: skip): ";
    let multi = "Numbers separated by commas, or your own answer (empty: skip): ";
    let out = agent_on_terminal(
        &proj,
        &url,
        "ask me",
        &[
            (single, 1, b"3\n"),
            (single, 2, b"2\n"),
            (multi, 1, b"1,3,3,0\n"),
            (multi, 2, b"3, 1\n"),
        ],
    );
    let shown = screen(&out);
    assert!(out.status.success(), "{shown}\n{}", stderr(&out));
    assert!(shown.contains("There is no option 3: "), "{shown}");
    assert!(shown.contains("There is no option 0: "), "{shown}");
    let answered = second_results(&seen);
    let content = answered[0].1["content"].to_string();
    assert!(
        content.contains("Postgres") && content.contains("CI, Docs"),
        "{content}"
    );
    assert!(
        !content.contains("1,3,3,0") && !content.contains("\"3\""),
        "{content}"
    );
}
