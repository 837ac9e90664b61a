//! The binary run as the command-line tests run it (each includes this file with `#[path]`):
//! `toolwright ARGS` in a directory, given what the test writes on its standard input.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `toolwright` with `args`, to run in `cwd`; the caller adds its environment.
pub fn toolwright_command(args: &[&str], cwd: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolwright"));
    command.args(args).current_dir(cwd);
    command
}

/// Runs `command` with `stdin` on its standard input (none: `/dev/null`) and returns what
/// it printed and how it ended.
pub fn output_with_stdin(mut command: Command, stdin: Option<&str>) -> Output {
    let mut child = command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(input) = stdin {
        use std::io::Write;
        // The binary may refuse before it reads: a closed pipe is no failure here.
        let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    }
    child.wait_with_output().unwrap()
}
