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

/// Runs `toolwright trust`.
pub fn run(args: &TrustArgs) -> ExitCode {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let dir = match std::fs::canonicalize(&dir) {
        Ok(d) if d.is_dir() => d,
        Ok(_) => {
            eoutln!(
                "toolwright trust: cannot use {}: not a directory (trust is recorded for a folder)",
                dir.display()
            );
            return ExitCode::from(2);
        }
        Err(e) => {
            eoutln!("toolwright trust: cannot use {}: {e}", dir.display());
            return ExitCode::from(2);
        }
    };
    match crate::trust::set_trusted(&dir, !args.revoke) {
        Ok(record) => {
            let verb = if args.revoke {
                "no longer trusted"
            } else {
                "trusted"
            };
            outln!(
                "{} is {verb} (recorded in {}).",
                dir.display(),
                record.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eoutln!("toolwright trust: {e}");
            ExitCode::from(1)
        }
    }
}
