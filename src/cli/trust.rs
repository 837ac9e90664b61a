//! `toolwright trust [DIR] [--revoke]`: records that a folder's own settings may apply.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `toolwright trust`.
#[derive(Debug, clap::Args)]
pub struct TrustArgs {
    /// The folder (default: the current directory).
    pub dir: Option<PathBuf>,
    /// Withdraw trust instead.
    #[arg(long)]
    pub revoke: bool,
}

/// Runs `toolwright trust`. Paths are named as the untrusted notice names them
/// ([`crate::trust::shell_word`]): a folder's name is anyone's, and a control character in
/// it must not reach the terminal (a newline splitting the line, an escape sequence).
pub fn run(args: &TrustArgs) -> ExitCode {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let shown = crate::trust::shell_word;
    let dir = match std::fs::canonicalize(&dir) {
        Ok(d) if d.is_dir() => d,
        Ok(_) => {
            eoutln!(
                "toolwright trust: cannot use {}: not a directory (trust is recorded for a folder)",
                shown(&dir)
            );
            return ExitCode::from(2);
        }
        Err(e) => {
            eoutln!("toolwright trust: cannot use {}: {e}", shown(&dir));
            return ExitCode::from(2);
        }
    };
    // Not an error of the record: the folder given cannot be trusted this way.
    if !args.revoke
        && let Some(refusal) = crate::trust::home_refusal(&dir)
    {
        eoutln!("toolwright trust: {refusal}");
        return ExitCode::from(2);
    }
    match crate::trust::set_trusted(&dir, !args.revoke) {
        Ok(record) => {
            let verb = if args.revoke {
                "no longer trusted"
            } else {
                "trusted"
            };
            outln!(
                "{} is {verb} (recorded in {}).",
                shown(&dir),
                shown(&record)
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eoutln!("toolwright trust: {e}");
            ExitCode::from(1)
        }
    }
}
