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
    match stdin {
        Some(input) => output_with_input(command, input.as_bytes()),
        None => command.stdin(Stdio::null()).output().unwrap(),
    }
}

/// Runs `command` with `input` written to its standard input, which is then closed, and
/// returns what it printed and how it ended. The input is written from a thread of its
/// own, so that a child that prints much before it reads cannot hold both ends. `command`
/// is the command or a borrow of it (what a builder chain gives).
pub fn output_with_input(
    mut command: impl std::borrow::BorrowMut<Command>,
    input: &[u8],
) -> Output {
    let mut child = command
        .borrow_mut()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // The binary may refuse before it reads: a closed pipe is no failure here.
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}
