//! `toolwright agent` on a pseudo-terminal (util-linux `script`), for the tests that answer
//! its questions as a person would.
#![allow(dead_code)]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Single-quotes `s` for `sh -c`.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Runs `toolwright agent <prompt>` in `dir` on a pseudo-terminal (util-linux `script`):
/// standard input and standard error are a terminal, so the run is interactive. Each
/// `(question, times, answer)` types `answer` once the terminal has shown `question` `times`
/// times. Standard output is everything the terminal showed. The model is `url`; the user's
/// configuration directory is `dir/.no-user-config`.
pub fn agent_on_terminal(
    dir: &Path,
    url: &str,
    prompt: &str,
    answers: &[(&str, usize, &[u8])],
) -> std::process::Output {
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
    // Everything the terminal shows, as it comes.
    let screen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut pty_out = child.stdout.take().unwrap();
    let reader = {
        let screen = screen.clone();
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
    for (question, times, answer) in answers {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let shown = String::from_utf8_lossy(&screen.lock().unwrap()).replace('\r', "");
            if shown.matches(question).count() >= *times {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "never asked {question:?}:\n{shown}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        stdin.write_all(answer).unwrap();
        stdin.flush().unwrap();
    }
    // Standard input stays open until the run is over (an end of input would refuse); a run
    // that waits for an answer nobody gives is ended after a minute.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            // The terminal closes with `script`: the agent gets SIGHUP and ends.
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    reader.join().unwrap();
    drop(stdin);
    let mut err = Vec::new();
    std::io::Read::read_to_end(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    std::process::Output {
        status,
        stdout: std::mem::take(&mut *screen.lock().unwrap()),
        stderr: err,
    }
}
