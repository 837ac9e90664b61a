//! How GNU-style command lines spell options: bundled short options (`-uo FILE` is `-u -o
//! FILE`), abbreviated long options (`--out=FILE` is `--output=FILE`), and where the operands
//! of a command start once its options are read.
//!
//! The checks that refuse a dangerous option use [`short_bundle_has`] and [`names_long`], so
//! that every spelling getopt accepts is refused, not only the one written in full.

use super::parse::Word;

/// Whether `arg` is a bundle of short options (`-uo`, not `-`, `--x` or a plain word) that
/// contains one of `letters`. A letter inside the value of an earlier option counts too
/// (`-to` is `-t o` for sort): callers use this to refuse, so reading too much is safe.
pub(crate) fn short_bundle_has(arg: &str, letters: &[char]) -> bool {
    arg.strip_prefix('-').is_some_and(|rest| {
        !rest.is_empty() && !rest.starts_with('-') && rest.chars().any(|c| letters.contains(&c))
    })
}

/// Whether the bundle of short options `arg` contains one of `letters` before the first
/// letter in `value_letters` (whose value is the rest of the bundle): precise where
/// [`short_bundle_has`] would also read the value (`date -Iseconds` has no `-s`).
pub(crate) fn short_option_in(arg: &str, letters: &[char], value_letters: &str) -> bool {
    let Some(rest) = arg.strip_prefix('-').filter(|r| !r.starts_with('-')) else {
        return false;
    };
    for c in rest.chars() {
        if letters.contains(&c) {
            return true;
        }
        if value_letters.contains(c) {
            return false;
        }
    }
    false
}

/// Whether `arg` names the long option `long` (written with its dashes, `--output`) in a
/// spelling getopt accepts: in full or abbreviated to at least one letter (`--o`, `--out`),
/// with or without `=value`. An abbreviation that is ambiguous makes getopt fail, so
/// refusing it too is harmless. Longer options that start with `long` are included
/// (`--output-indicator-new` for `--output`): the caller refuses them as well.
pub(crate) fn names_long(arg: &str, long: &str) -> bool {
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    name.len() > 2 && name.starts_with("--") && (long.starts_with(name) || name.starts_with(long))
}

/// Whether allow rules look through a wrapper (Claude Code's safe wrappers), and with which
/// options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Safe {
    /// Not safe: only deny and ask rules look through it.
    No,
    /// Safe with any option of its table.
    AnyOption,
    /// Safe with these options only (bash's `time` keyword takes `-p` and nothing else).
    Only(&'static [&'static str]),
}

/// The options a command takes, as getopt reads them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OptionSpec {
    /// The command (its basename).
    pub name: &'static str,
    /// Short options that take a value: the rest of the bundle, else the next word.
    pub short_value: &'static str,
    /// Short options with an optional value, which is only ever the rest of the bundle.
    pub short_optional: &'static str,
    /// Short options without a value.
    pub short_flags: &'static str,
    /// Long options that take a value (`--user root` or `--user=root`), without dashes.
    pub long_value: &'static [&'static str],
    /// Long options without a value, or with an optional one (only as `--opt=value`).
    pub long_flags: &'static [&'static str],
    /// Long options that take several words (`bwrap --bind SRC DEST`, `nix-shell --arg
    /// NAME EXPR`): the name and how many.
    pub long_multi: &'static [(&'static str, usize)],
    /// Every long option is one word, `--name` or `--name=value` (firejail's): none that is
    /// not listed makes the reading uncertain.
    pub long_any: bool,
    /// Operands read before the command (`timeout DURATION`, `taskset MASK`).
    pub operands: usize,
    /// The operands are numbers (a duration, a mask, a priority): a word that does not look
    /// like one may be the command (`chrt -o rm` where the priority may be left out).
    pub numeric_operands: bool,
    /// Whether `NAME=VALUE` words after the options are assignments (`env`).
    pub assignments: bool,
    /// Options may follow operands (a permuting getopt, as `su`'s): they are read too.
    pub permute: bool,
    /// Short options (among `short_value`) whose value is a shell command string
    /// (`su -c CMD`) or, for `env -S`, a string split into a command.
    pub script_short: &'static str,
    /// Long options (among `long_value`) whose value is such a string.
    pub script_long: &'static [&'static str],
    /// Words that, where the command would start, run the next word as a shell command
    /// string instead (`flock FILE -c CMD`).
    pub command_script: &'static [&'static str],
    /// Short flags that make it look a name up instead of running it (`command -v`).
    pub lookup_flags: &'static str,
    /// Whether allow rules look through it.
    pub safe: Safe,
    /// Whether it runs its command in the shell itself (a `cd` behind it moves the shell):
    /// `builtin`, `command`, bash's `time` keyword, `noglob`.
    pub in_shell: bool,
    /// The subcommand that runs the command (`uv run`, `direnv exec`); empty when the
    /// program itself does. The options after it are read with this table; another
    /// subcommand (`uv pip list`) runs nothing. Options before it (`uv --quiet run`) are
    /// read with the same table.
    pub subcommand: &'static str,
    /// It runs none of its operands as a command, only the shell string of a script option
    /// (`nix-shell --run CMD`, whose operands are files and packages).
    pub no_command: bool,
}

impl OptionSpec {
    /// The same table under another name (`gtimeout` for `timeout`).
    const fn named(self, name: &'static str) -> Self {
        Self { name, ..self }
    }

    const fn new(name: &'static str) -> Self {
        Self {
            name,
            short_value: "",
            short_optional: "",
            short_flags: "",
            long_value: &[],
            long_flags: &[],
            long_multi: &[],
            long_any: false,
            operands: 0,
            numeric_operands: false,
            assignments: false,
            permute: false,
            script_short: "",
            script_long: &[],
            command_script: &[],
            lookup_flags: "",
            safe: Safe::No,
            in_shell: false,
            subcommand: "",
            no_command: false,
        }
    }
}

/// Wrappers: commands that run the command given after their options. Deny and ask rules
/// look through all of them; allow rules only through the safe ones
/// ([`safe_wrapper_len`](super::commands::safe_wrapper_len)).
///
/// `su`/`runuser -c`, `flock -c`, `nix-shell --run` and `env -S` run a string: see
/// [`wrapper_script`].
pub(crate) const WRAPPERS: &[OptionSpec] = &[
    TIMEOUT,
    NICE,
    STDBUF,
    // Bash's `time` keyword takes `-p`; GNU time also `-f FORMAT` and `-o FILE`.
    OptionSpec {
        short_value: "fo",
        short_flags: "apqvV",
        long_value: &["format", "output"],
        long_flags: &[
            "append",
            "portability",
            "quiet",
            "verbose",
            "help",
            "version",
        ],
        safe: Safe::Only(&["-p"]),
        in_shell: true,
        ..OptionSpec::new("time")
    },
    OptionSpec {
        long_flags: &["help", "version"],
        safe: Safe::AnyOption,
        ..OptionSpec::new("nohup")
    },
    OptionSpec {
        short_flags: "pvV",
        lookup_flags: "vV",
        safe: Safe::Only(&["-p"]),
        in_shell: true,
        ..OptionSpec::new("command")
    },
    OptionSpec {
        safe: Safe::AnyOption,
        in_shell: true,
        ..OptionSpec::new("builtin")
    },
    OptionSpec {
        safe: Safe::AnyOption,
        in_shell: true,
        ..OptionSpec::new("noglob")
    },
    OptionSpec::new("coproc"),
    OptionSpec::new("busybox"),
    OptionSpec::new("toybox"),
    OptionSpec {
        long_value: &["user"],
        long_flags: &["keep-cwd", "disable-internal-agent", "help", "version"],
        ..OptionSpec::new("pkexec")
    },
    OptionSpec {
        short_value: "lfsib",
        short_flags: "uhv",
        long_value: &["lib", "faked"],
        long_flags: &["unknown-is-real", "help", "version"],
        ..OptionSpec::new("fakeroot")
    },
    // Tracers and debuggers run their command (their many other options are read as
    // flags: one not understood makes the reading uncertain, which only asks more).
    OptionSpec {
        short_value: "abeEIoOpPsSuUX",
        short_flags: "cCdDfFhiqrtTvVxyzZwkn",
        ..OptionSpec::new("strace")
    },
    OptionSpec {
        short_value: "aAeEFlLnopsuwx",
        short_flags: "bcCdfhirStTV",
        ..OptionSpec::new("ltrace")
    },
    OptionSpec::new("valgrind"),
    OptionSpec {
        short_value: "aCcDgpRrTtUu",
        short_optional: "h",
        short_flags: "AbBEeHiKklnPSsVv",
        long_value: &[
            "auth-type",
            "close-from",
            "login-class",
            "chdir",
            "group",
            "host",
            "prompt",
            "chroot",
            "role",
            "type",
            "command-timeout",
            "other-user",
            "user",
        ],
        long_flags: &[
            "askpass",
            "background",
            "bell",
            "preserve-env",
            "edit",
            "set-home",
            "help",
            "login",
            "remove-timestamp",
            "reset-timestamp",
            "list",
            "non-interactive",
            "preserve-groups",
            "stdin",
            "shell",
            "version",
            "validate",
        ],
        ..OptionSpec::new("sudo")
    },
    OptionSpec {
        short_value: "aCu",
        short_flags: "Lns",
        ..OptionSpec::new("doas")
    },
    OptionSpec {
        short_value: "CSu",
        short_flags: "iv0",
        long_value: &["chdir", "split-string", "unset"],
        long_flags: &[
            "ignore-environment",
            "null",
            "debug",
            "block-signal",
            "default-signal",
            "ignore-signal",
            "list-signal-handling",
            "help",
            "version",
        ],
        assignments: true,
        script_short: "S",
        script_long: &["split-string"],
        ..OptionSpec::new("env")
    },
    OptionSpec {
        short_value: "a",
        short_flags: "cl",
        ..OptionSpec::new("exec")
    },
    OptionSpec {
        short_value: "cnpPu",
        short_flags: "t",
        long_value: &["class", "classdata", "pid", "pgid", "uid"],
        long_flags: &["ignore", "help", "version"],
        ..OptionSpec::new("ionice")
    },
    OptionSpec {
        short_value: "nq",
        short_optional: "d",
        short_flags: "bcCegprtwx",
        long_value: &["interval", "equexit", "shotsdir"],
        long_flags: &[
            "beep",
            "color",
            "no-color",
            "differences",
            "errexit",
            "chgexit",
            "precise",
            "no-rerun",
            "no-title",
            "no-wrap",
            "exec",
            "help",
            "version",
        ],
        ..OptionSpec::new("watch")
    },
    OptionSpec {
        short_flags: "cfw",
        long_flags: &["ctty", "fork", "wait", "help", "version"],
        ..OptionSpec::new("setsid")
    },
    OptionSpec {
        short_flags: "ev",
        ..OptionSpec::new("chronic")
    },
    OptionSpec {
        short_flags: "p",
        ..OptionSpec::new("unbuffer")
    },
    OptionSpec {
        short_value: "tw",
        short_flags: "dimsu",
        ..OptionSpec::new("caffeinate")
    },
    OptionSpec {
        short_flags: "acp",
        long_flags: &["all-tasks", "cpu-list", "pid", "help", "version"],
        operands: 1,
        numeric_operands: true,
        ..OptionSpec::new("taskset")
    },
    OptionSpec {
        short_value: "DPT",
        short_flags: "abdfimoprRvhV",
        long_value: &["sched-runtime", "sched-period", "sched-deadline"],
        long_flags: &[
            "all-tasks",
            "batch",
            "deadline",
            "fifo",
            "idle",
            "other",
            "rr",
            "reset-on-fork",
            "max",
            "pid",
            "verbose",
            "help",
            "version",
        ],
        operands: 1,
        numeric_operands: true,
        ..OptionSpec::new("chrt")
    },
    OptionSpec {
        short_value: "wE",
        short_flags: "sexnoFuhV",
        long_value: &["timeout", "wait", "conflict-exit-code"],
        long_flags: &[
            "shared",
            "exclusive",
            "unlock",
            "nonblock",
            "nonblocking",
            "nb",
            "close",
            "no-fork",
            "verbose",
            "help",
            "version",
        ],
        operands: 1,
        command_script: &["-c", "--command"],
        ..OptionSpec::new("flock")
    },
    OptionSpec {
        short_value: "po",
        short_optional: "cdefilmnqrstuvxy",
        short_flags: "hV",
        long_value: &["pid", "output"],
        long_flags: &[
            "noheadings",
            "raw",
            "verbose",
            "help",
            "version",
            "core",
            "data",
            "nice",
            "fsize",
            "sigpending",
            "memlock",
            "rss",
            "nofile",
            "msgqueue",
            "rtprio",
            "stack",
            "cpu",
            "nproc",
            "as",
            "locks",
            "rttime",
        ],
        ..OptionSpec::new("prlimit")
    },
    OptionSpec {
        short_flags: "dhV",
        long_value: &[
            "ambient-caps",
            "inh-caps",
            "bounding-set",
            "ruid",
            "euid",
            "rgid",
            "egid",
            "reuid",
            "regid",
            "groups",
            "securebits",
            "pdeathsig",
            "selinux-label",
            "apparmor-profile",
            "landlock-access",
            "landlock-rule",
            "seccomp-filter",
        ],
        long_flags: &[
            "dump",
            "nnp",
            "no-new-privs",
            "clear-groups",
            "keep-groups",
            "init-groups",
            "reset-env",
            "help",
            "version",
        ],
        ..OptionSpec::new("setpriv")
    },
    OptionSpec {
        short_value: "RwSG",
        short_flags: "fhVmuinpCTUrc",
        long_value: &[
            "root",
            "wd",
            "setuid",
            "setgid",
            "propagation",
            "setgroups",
            "monotonic",
            "boottime",
            "map-user",
            "map-group",
            "map-users",
            "map-groups",
            "load-interp",
        ],
        long_flags: &[
            "mount",
            "uts",
            "ipc",
            "net",
            "pid",
            "user",
            "cgroup",
            "time",
            "fork",
            "map-root-user",
            "map-current-user",
            "map-auto",
            "kill-child",
            "mount-proc",
            "mount-binfmt",
            "keep-caps",
            "help",
            "version",
        ],
        ..OptionSpec::new("unshare")
    },
    OptionSpec {
        short_value: "cgGsuw",
        short_flags: "flmpPhV",
        long_value: RUNUSER_LONG_VALUE,
        long_flags: RUNUSER_LONG_FLAGS,
        permute: true,
        script_short: "c",
        script_long: &["command", "session-command"],
        ..OptionSpec::new("runuser")
    },
    OptionSpec {
        short_value: "cgGsw",
        short_flags: "flmpPhV",
        long_value: RUNUSER_LONG_VALUE,
        long_flags: RUNUSER_LONG_FLAGS,
        permute: true,
        script_short: "c",
        script_long: &["command", "session-command"],
        ..OptionSpec::new("su")
    },
    OptionSpec {
        short_value: "iwPpmMNCSfILoc",
        short_flags: "abHlsutTdDVh",
        long_value: &[
            "interleave",
            "weighted-interleave",
            "preferred",
            "preferred-many",
            "membind",
            "cpunodebind",
            "physcpubind",
            "cpubind",
            "shmmode",
            "length",
            "shm",
            "file",
            "shmid",
            "offset",
        ],
        long_flags: &[
            "all",
            "localalloc",
            "balancing",
            "show",
            "hardware",
            "huge",
            "strict",
            "touch",
            "dump",
            "dump-nodes",
            "version",
            "help",
        ],
        ..OptionSpec::new("numactl")
    },
    OptionSpec {
        short_value: "HMEpuC",
        short_flags: "hrtPqGdS",
        long_value: &[
            "host",
            "machine",
            "unit",
            "property",
            "description",
            "slice",
            "service-type",
            "uid",
            "gid",
            "nice",
            "working-directory",
            "setenv",
            "path-property",
            "socket-property",
            "timer-property",
            "on-active",
            "on-boot",
            "on-startup",
            "on-unit-active",
            "on-unit-inactive",
            "on-calendar",
            "capsule",
        ],
        long_flags: &[
            "help",
            "version",
            "no-ask-password",
            "user",
            "system",
            "scope",
            "slice-inherit",
            "no-block",
            "remain-after-exit",
            "wait",
            "send-sighup",
            "pty",
            "pipe",
            "quiet",
            "collect",
            "shell",
            "same-dir",
            "on-timezone-change",
            "on-clock-change",
        ],
        ..OptionSpec::new("systemd-run")
    },
    OptionSpec {
        short_value: "tSGW",
        short_optional: "mnuipCUTrw",
        short_flags: "aFZhV",
        long_value: &["target", "setuid", "setgid", "wdns"],
        long_flags: &[
            "all",
            "mount",
            "uts",
            "ipc",
            "net",
            "pid",
            "cgroup",
            "user",
            "time",
            "root",
            "wd",
            "preserve-credentials",
            "no-fork",
            "follow-context",
            "help",
            "version",
        ],
        ..OptionSpec::new("nsenter")
    },
    OptionSpec {
        long_value: &["groups", "userspec"],
        long_flags: &["skip-chdir", "help", "version"],
        operands: 1,
        ..OptionSpec::new("chroot")
    },
    // GNU coreutils under Homebrew's names (deny and ask rules only: not Claude Code's safe
    // wrappers).
    OptionSpec {
        safe: Safe::No,
        ..TIMEOUT.named("gtimeout")
    },
    OptionSpec {
        safe: Safe::No,
        ..NICE.named("gnice")
    },
    OptionSpec {
        safe: Safe::No,
        ..STDBUF.named("gstdbuf")
    },
    OptionSpec {
        long_flags: &["help", "version"],
        ..OptionSpec::new("gnohup")
    },
    OptionSpec {
        long_value: &["config-file", "dbus-daemon"],
        long_flags: &["help", "version"],
        ..OptionSpec::new("dbus-run-session")
    },
    OptionSpec {
        long_value: &["autolaunch", "config-file"],
        long_flags: &[
            "sh-syntax",
            "csh-syntax",
            "auto-syntax",
            "binary-syntax",
            "close-stderr",
            "exit-with-session",
            "exit-with-x11",
            "help",
            "version",
        ],
        ..OptionSpec::new("dbus-launch")
    },
    OptionSpec {
        long_flags: &["help", "version"],
        ..OptionSpec::new("catchsegv")
    },
    // Sandboxes. firejail's options are all one word (`--net=none`); its few short ones
    // are not listed (an uncertain reading). bwrap's take up to three values.
    OptionSpec {
        long_any: true,
        ..OptionSpec::new("firejail")
    },
    OptionSpec {
        long_value: &[
            "argv0",
            "userns",
            "userns2",
            "pidns",
            "uid",
            "gid",
            "hostname",
            "chdir",
            "unsetenv",
            "lock-file",
            "sync-fd",
            "remount-ro",
            "exec-label",
            "file-label",
            "proc",
            "dev",
            "tmpfs",
            "mqueue",
            "dir",
            "seccomp",
            "add-seccomp-fd",
            "block-fd",
            "userns-block-fd",
            "info-fd",
            "json-status-fd",
            "cap-add",
            "cap-drop",
            "perms",
            "size",
            "overlay-src",
            "tmp-overlay",
            "ro-overlay",
        ],
        long_flags: &[
            "help",
            "version",
            "level-prefix",
            "unshare-all",
            "share-net",
            "unshare-user",
            "unshare-user-try",
            "unshare-ipc",
            "unshare-pid",
            "unshare-net",
            "unshare-uts",
            "unshare-cgroup",
            "unshare-cgroup-try",
            "disable-userns",
            "assert-userns-disabled",
            "clearenv",
            "new-session",
            "die-with-parent",
            "as-pid-1",
        ],
        // `--args FD` (more arguments from a descriptor) is left out: unknown.
        long_multi: &[
            ("setenv", 2),
            ("bind", 2),
            ("bind-try", 2),
            ("dev-bind", 2),
            ("dev-bind-try", 2),
            ("ro-bind", 2),
            ("ro-bind-try", 2),
            ("bind-fd", 2),
            ("ro-bind-fd", 2),
            ("file", 2),
            ("bind-data", 2),
            ("ro-bind-data", 2),
            ("symlink", 2),
            ("chmod", 2),
            ("overlay", 3),
        ],
        ..OptionSpec::new("bwrap")
    },
    OptionSpec {
        short_value: "rbmqwvkiRS",
        short_flags: "0VhL",
        long_value: &[
            "rootfs",
            "bind",
            "mount",
            "qemu",
            "pwd",
            "cwd",
            "verbose",
            "kernel-release",
            "change-id",
        ],
        long_flags: &[
            "root-id",
            "kill-on-exit",
            "link2symlink",
            "help",
            "usage",
            "version",
        ],
        ..OptionSpec::new("proot")
    },
    // Environment runners: the subcommand that runs a command. Their many other options
    // are left to an uncertain reading.
    OptionSpec {
        short_value: "pC",
        short_flags: "qvnsmUh",
        long_value: &[
            "with",
            "with-editable",
            "with-requirements",
            "python",
            "package",
            "extra",
            "group",
            "only-group",
            "no-group",
            "env-file",
            "directory",
            "project",
            "index",
            "default-index",
            "index-url",
            "extra-index-url",
            "config-file",
            "cache-dir",
            "color",
            "config-setting",
        ],
        long_flags: &[
            "no-project",
            "isolated",
            "frozen",
            "locked",
            "no-sync",
            "active",
            "no-active",
            "script",
            "module",
            "all-extras",
            "no-dev",
            "dev",
            "all-packages",
            "all-groups",
            "no-default-groups",
            "exact",
            "no-editable",
            "no-env-file",
            "quiet",
            "verbose",
            "offline",
            "no-cache",
            "native-tls",
            "no-progress",
            "upgrade",
            "reinstall",
            "refresh",
            "no-config",
            "help",
        ],
        subcommand: "run",
        ..OptionSpec::new("uv")
    },
    OptionSpec {
        short_value: "CP",
        short_flags: "qvnhV",
        long_value: &["directory", "project"],
        long_flags: &[
            "quiet",
            "verbose",
            "no-interaction",
            "no-plugins",
            "no-cache",
            "ansi",
            "no-ansi",
            "help",
            "version",
        ],
        subcommand: "run",
        ..OptionSpec::new("poetry")
    },
    OptionSpec {
        long_flags: &["help"],
        subcommand: "run",
        ..OptionSpec::new("pipenv")
    },
    CONDA_RUN,
    CONDA_RUN.named("mamba"),
    OptionSpec {
        short_value: "npreu",
        short_flags: "ydvqh",
        long_value: &[
            "name",
            "prefix",
            "root-prefix",
            "env",
            "cwd",
            "label",
            "attach",
            "rc-file",
            "log-level",
        ],
        long_flags: &[
            "detach",
            "clean-env",
            "no-rc",
            "no-env",
            "verbose",
            "quiet",
            "json",
            "offline",
            "dry-run",
            "yes",
            "help",
        ],
        subcommand: "run",
        ..OptionSpec::new("micromamba")
    },
    // `direnv exec DIR COMMAND`: the `.envrc` it loads is a script of its own
    // ([`runs_a_program_it_is_given`](super::commands::runs_a_program_it_is_given)).
    OptionSpec {
        operands: 1,
        subcommand: "exec",
        ..OptionSpec::new("direnv")
    },
    // `nix-shell --run CMD` / `--command CMD` run a shell string; its operands are files
    // and, with `-p`, packages.
    OptionSpec {
        short_value: "AIijo",
        short_flags: "pEKQvkh",
        long_value: &[
            "attr",
            "include",
            "keep",
            "exclude",
            "run",
            "command",
            "max-jobs",
            "cores",
            "store",
            "eval-store",
            "log-format",
            "builders",
        ],
        long_flags: &[
            "pure",
            "impure",
            "packages",
            "expr",
            "keep-going",
            "keep-failed",
            "show-trace",
            "verbose",
            "quiet",
            "dry-run",
            "help",
            "version",
        ],
        long_multi: &[("arg", 2), ("argstr", 2), ("option", 2)],
        permute: true,
        script_long: &["run", "command"],
        no_command: true,
        ..OptionSpec::new("nix-shell")
    },
    // `flatpak-spawn [OPTION…] COMMAND`: on the host (`--host`) or in a new sandbox (GLib's
    // options: `--opt=value` or `--opt value`).
    OptionSpec {
        short_flags: "vh",
        long_value: &[
            "env",
            "unset-env",
            "forward-fd",
            "directory",
            "sandbox-expose",
            "sandbox-expose-ro",
            "sandbox-expose-path",
            "sandbox-expose-path-ro",
            "sandbox-flag",
            "app-path",
            "usr-path",
        ],
        long_flags: &[
            "host",
            "sandbox",
            "watch-bus",
            "expose-pids",
            "share-pids",
            "latest-version",
            "no-network",
            "clear-env",
            "verbose",
            "help",
        ],
        ..OptionSpec::new("flatpak-spawn")
    },
    // `entr [-acdnprsz] UTILITY [ARG…]` runs its utility each time a file changes (with
    // `-s`, a shell string:
    // [`runs_a_program_it_is_given`](super::commands::runs_a_program_it_is_given)).
    OptionSpec {
        short_flags: "acdnprsz",
        ..OptionSpec::new("entr")
    },
];

/// `perf stat [OPTIONS] COMMAND` (perf's parse-options: bundles, `--opt=value` or `--opt
/// value`, abbreviations). Not in [`WRAPPERS`]: perf runs a command only after the
/// subcommands that take one ([`wrapped_command_starts`](super::commands::wrapped_command_starts)).
/// `--pre CMD` and `--post CMD` run a shell command
/// ([`runs_a_program_it_is_given`](super::commands::runs_a_program_it_is_given)).
pub(crate) const PERF_STAT: OptionSpec = OptionSpec {
    short_value: "eptCGoxrIMDb",
    short_flags: "aABcdgijnqSTv",
    long_value: &[
        "event",
        "filter",
        "pid",
        "tid",
        "cpu",
        "cgroup",
        "for-each-cgroup",
        "output",
        "field-separator",
        "repeat",
        "interval-print",
        "interval-count",
        "timeout",
        "metrics",
        "delay",
        "bpf-prog",
        "bpf-attr-map",
        "log-fd",
        "pre",
        "post",
        "control",
        "td-level",
        "cputype",
    ],
    long_flags: &[
        "all-cpus",
        "no-aggr",
        "big-num",
        "scale",
        "detailed",
        "group",
        "no-inherit",
        "json",
        "null",
        "quiet",
        "sync",
        "transaction",
        "verbose",
        "append",
        "per-socket",
        "per-die",
        "per-cluster",
        "per-cache",
        "per-core",
        "per-thread",
        "per-node",
        "metric-only",
        "metric-no-group",
        "metric-no-merge",
        "metric-no-threshold",
        "topdown",
        "smi-cost",
        "summary",
        "no-csv-summary",
        "interval-clear",
        "percore-show-thread",
        "iostat",
        "bpf-counters",
        "all-user",
        "all-kernel",
        "no-merge",
        "hybrid-merge",
        "help",
    ],
    ..OptionSpec::new("perf")
};

/// `perf record [OPTIONS] COMMAND` (see [`PERF_STAT`]).
pub(crate) const PERF_RECORD: OptionSpec = OptionSpec {
    short_value: "ecoFmptuCrGjDkL",
    short_optional: "ISz",
    short_flags: "abdgiNnPqRsTvWx",
    long_value: &[
        "event",
        "filter",
        "pid",
        "tid",
        "uid",
        "realtime",
        "count",
        "output",
        "freq",
        "mmap-pages",
        "call-graph",
        "cgroup",
        "branch-filter",
        "delay",
        "clockid",
        "proc-map-timeout",
        "affinity",
        "mmap-flush",
        "switch-output-event",
        "switch-max-files",
        "max-size",
        "num-thread-synthesize",
        "pfm-events",
        "control",
        "synth",
        "vmlinux",
        "cpu",
        "setup-filter",
    ],
    long_flags: &[
        "exclude-perf",
        "all-cpus",
        "no-buffering",
        "no-inherit",
        "strict-freq",
        "stat",
        "data",
        "phys-data",
        "data-page-size",
        "code-page-size",
        "timestamp",
        "period",
        "sample-cpu",
        "sample-identifier",
        "no-samples",
        "no-buildid-cache",
        "no-buildid",
        "branch-any",
        "weight",
        "namespaces",
        "all-cgroups",
        "transaction",
        "per-thread",
        "running-time",
        "switch-events",
        "buildid-all",
        "buildid-mmap",
        "all-kernel",
        "all-user",
        "kernel-callchains",
        "user-callchains",
        "timestamp-filename",
        "timestamp-boundary",
        "dry-run",
        "tail-synthesize",
        "overwrite",
        "kcore",
        "off-cpu",
        "quiet",
        "verbose",
        "raw-samples",
        "intr-regs",
        "user-regs",
        "snapshot",
        "aio",
        "compression-level",
        "switch-output",
        "threads",
        "debuginfod",
        "aux-sample",
        "help",
    ],
    ..OptionSpec::new("perf")
};

/// `perf trace [OPTIONS] COMMAND` (see [`PERF_STAT`]).
pub(crate) const PERF_TRACE: OptionSpec = OptionSpec {
    short_value: "eDoptuCmFGi",
    short_flags: "afsSTvq",
    long_value: &[
        "event",
        "expr",
        "delay",
        "output",
        "pid",
        "tid",
        "uid",
        "cpu",
        "mmap-pages",
        "pf",
        "cgroup",
        "input",
        "filter-pids",
        "duration",
        "max-events",
        "call-graph",
        "max-stack",
        "min-stack",
        "proc-map-timeout",
        "map-dump",
        "comm",
    ],
    long_flags: &[
        "all-cpus",
        "force",
        "summary",
        "with-summary",
        "time",
        "verbose",
        "no-inherit",
        "sched",
        "failure",
        "errno-summary",
        "syscalls",
        "print-sample",
        "show-on-off-events",
        "sort-events",
        "kernel-syscall-graph",
        "summary-only",
        "help",
    ],
    ..OptionSpec::new("perf")
};

/// `perf ftrace [OPTIONS] COMMAND` (see [`PERF_STAT`]).
pub(crate) const PERF_FTRACE: OptionSpec = OptionSpec {
    short_value: "tpTNGgDCmd",
    short_flags: "av",
    long_value: &[
        "tracer",
        "pid",
        "trace-funcs",
        "notrace-funcs",
        "graph-funcs",
        "nograph-funcs",
        "graph-depth",
        "cpu",
        "buffer-size",
        "delay",
        "func-opts",
        "graph-opts",
    ],
    long_flags: &["all-cpus", "verbose", "inherit", "help"],
    ..OptionSpec::new("perf")
};

/// `timeout`, kept apart for its Homebrew name (`gtimeout`).
const TIMEOUT: OptionSpec = OptionSpec {
    short_value: "ks",
    short_flags: "v",
    long_value: &["kill-after", "signal"],
    long_flags: &[
        "foreground",
        "preserve-status",
        "verbose",
        "help",
        "version",
    ],
    operands: 1,
    numeric_operands: true,
    safe: Safe::AnyOption,
    ..OptionSpec::new("timeout")
};

/// `nice`, kept apart for its Homebrew name (`gnice`).
const NICE: OptionSpec = OptionSpec {
    short_value: "n",
    long_value: &["adjustment"],
    long_flags: &["help", "version"],
    safe: Safe::AnyOption,
    ..OptionSpec::new("nice")
};

/// `stdbuf`, kept apart for its Homebrew name (`gstdbuf`).
const STDBUF: OptionSpec = OptionSpec {
    short_value: "ioe",
    long_value: &["input", "output", "error"],
    long_flags: &["help", "version"],
    safe: Safe::AnyOption,
    ..OptionSpec::new("stdbuf")
};

/// `conda run` (and `mamba run`): `-n ENV`, `-p PREFIX`, `--cwd DIR`.
const CONDA_RUN: OptionSpec = OptionSpec {
    short_value: "np",
    short_flags: "vh",
    long_value: &["name", "prefix", "cwd"],
    long_flags: &[
        "dev",
        "debug-wrapper-scripts",
        "no-capture-output",
        "live-stream",
        "verbose",
        "help",
    ],
    subcommand: "run",
    ..OptionSpec::new("conda")
};

const RUNUSER_LONG_VALUE: &[&str] = &[
    "command",
    "session-command",
    "group",
    "supp-group",
    "shell",
    "user",
    "whitelist-environment",
];

const RUNUSER_LONG_FLAGS: &[&str] = &[
    "fast",
    "login",
    "preserve-environment",
    "pty",
    "help",
    "version",
];

/// GNU xargs (and BSD's `-J`, `-R`, `-S` are unknown: the reading is then uncertain).
pub(crate) const XARGS: OptionSpec = OptionSpec {
    short_value: "adEILnPs",
    short_optional: "eil",
    short_flags: "0oprtx",
    long_value: &[
        "arg-file",
        "delimiter",
        "max-args",
        "max-procs",
        "max-chars",
        "process-slot-var",
    ],
    long_flags: &[
        "eof",
        "replace",
        "max-lines",
        "null",
        "open-tty",
        "interactive",
        "no-run-if-empty",
        "verbose",
        "exit",
        "show-limits",
        "help",
        "version",
    ],
    ..OptionSpec::new("xargs")
};

/// GNU parallel (20221122's table; Perl's Getopt::Long with bundling, stopping at the first
/// word that is no option). The options with an optional value (`-e`, `-i`, `-l`, `--eof`,
/// `--replace`, `--max-lines`) take the next word when it does not look like an option (or,
/// for `-l`, like a number): they are left out, so a reading with them is uncertain and
/// every later word may be the command.
pub(crate) const PARALLEL: OptionSpec = OptionSpec {
    short_value: "BCDEHIJLNPSUWadjns",
    short_flags: "0MTVXYghkmopqrtuvx",
    long_value: &[
        "_parset",
        "_test",
        "arg-file",
        "arg-file-sep",
        "arg-sep",
        "argfile",
        "argfilesep",
        "argsep",
        "basefile",
        "basenameextensionreplace",
        "basenamereplace",
        "bf",
        "bin",
        "block",
        "block-size",
        "block-timeout",
        "blocksize",
        "blocktimeout",
        "bner",
        "bnr",
        "bt",
        "col-sep",
        "colsep",
        "compress-program",
        "compressprogram",
        "ctag-string",
        "ctagstring",
        "debug",
        "decompress-program",
        "decompressprogram",
        "delay",
        "delimiter",
        "dirnamereplace",
        "dnr",
        "env",
        "er",
        "extensionreplace",
        "filter",
        "group-by",
        "groupby",
        "halt",
        "halt-on-error",
        "haltonerror",
        "header",
        "id",
        "jl",
        "joblog",
        "jobs",
        "limit",
        "linkinputsource",
        "load",
        "max-args",
        "max-chars",
        "max-procs",
        "max-replace-args",
        "maxargs",
        "maxchars",
        "maxprocs",
        "maxreplaceargs",
        "memfree",
        "memsuspend",
        "min-version",
        "minversion",
        "nice",
        "parens",
        "process-slot-var",
        "processslotvar",
        "profile",
        "recend",
        "recstart",
        "res",
        "result",
        "results",
        "retries",
        "return",
        "rpl",
        "rsync-opts",
        "rsyncopts",
        "semaphore-name",
        "semaphore-timeout",
        "semaphorename",
        "semaphoretimeout",
        "seqreplace",
        "shard",
        "shell-completion",
        "shellcompletion",
        "slf",
        "slotreplace",
        "sql",
        "sql-and-worker",
        "sql-master",
        "sql-worker",
        "sqlandworker",
        "sqlmaster",
        "sqlworker",
        "ssh",
        "ssh-delay",
        "sshdelay",
        "sshlogin",
        "sshloginfile",
        "st",
        "tag-string",
        "tagstring",
        "tempdir",
        "template",
        "term-seq",
        "termseq",
        "tf",
        "timeout",
        "tmpdir",
        "tmpl",
        "total",
        "total-jobs",
        "totaljobs",
        "transfer-file",
        "transfer-files",
        "transferfile",
        "transferfiles",
        "trc",
        "trim",
        "use-compress-program",
        "use-decompress-program",
        "usecompressprogram",
        "usedecompressprogram",
        "wd",
        "work-dir",
        "workdir",
        "xapplyinputsource",
    ],
    long_flags: &[
        "_pipe-means-argfiles",
        "bar",
        "bg",
        "bug",
        "cat",
        "cf",
        "cleanup",
        "color",
        "color-fail",
        "color-failed",
        "colorfail",
        "colorfailed",
        "colour",
        "colour-fail",
        "colour-failed",
        "colourfail",
        "colourfailed",
        "compress",
        "controlmaster",
        "csv",
        "ctag",
        "ctrl-c",
        "ctrlc",
        "dr",
        "dry-run",
        "dryrun",
        "embed",
        "eta",
        "exit",
        "fg",
        "fifo",
        "files",
        "filter-host",
        "filter-hosts",
        "filterhosts",
        "gnu",
        "group",
        "hashbang",
        "help",
        "hgrp",
        "hostgroup",
        "hostgroups",
        "hostgrp",
        "interactive",
        "keep-order",
        "keeporder",
        "latest-line",
        "latestline",
        "lb",
        "line-buffer",
        "line-buffered",
        "linebuffer",
        "linebuffered",
        "link",
        "ll",
        "max-line-length-allowed",
        "maxlinelengthallowed",
        "nn",
        "no-ctrl-c",
        "no-ctrlc",
        "no-k",
        "no-keep-order",
        "no-notice",
        "no-run-if-empty",
        "noctrlc",
        "nok",
        "nokeeporder",
        "nonall",
        "nonotice",
        "norunifempty",
        "noswap",
        "null",
        "number-of-cores",
        "number-of-cpus",
        "number-of-sockets",
        "number-of-threads",
        "numberofcores",
        "numberofcpus",
        "numberofsockets",
        "numberofthreads",
        "onall",
        "open-tty",
        "output-as-files",
        "outputasfiles",
        "pipe",
        "pipe-part",
        "pipepart",
        "plain",
        "plus",
        "progress",
        "quote",
        "record-env",
        "recordenv",
        "regex",
        "regexp",
        "remove-rec-sep",
        "removerecsep",
        "resume",
        "resume-failed",
        "resumefailed",
        "retry-failed",
        "retryfailed",
        "round",
        "round-robin",
        "roundrobin",
        "rrs",
        "semaphore",
        "session",
        "shebang",
        "shell-quote",
        "shell_quote",
        "shellquote",
        "show-limits",
        "showlimits",
        "shuf",
        "silent",
        "skip-first-line",
        "skipfirstline",
        "spreadstdin",
        "tag",
        "tee",
        "tmux",
        "tmux-pane",
        "tmuxpane",
        "tollef",
        "transfer",
        "tty",
        "ungroup",
        "use-cores-instead-of-threads",
        "use-cpus-instead-of-cores",
        "use-sockets-instead-of-threads",
        "usecoresinsteadofthreads",
        "usecpusinsteadofcores",
        "usesocketsinsteadofthreads",
        "verbose",
        "version",
        "wait",
        "will-cite",
        "willcite",
        "xapply",
        "xargs",
    ],
    ..OptionSpec::new("parallel")
};

/// xe (`getopt "+0A:FI:LN:Raf:j:npqs:v"`).
pub(crate) const XE: OptionSpec = OptionSpec {
    short_value: "AINfjs",
    short_flags: "0FLRanpqv",
    ..OptionSpec::new("xe")
};

/// The long option the word `v` (`--name` or `--name=value`) names in `spec`, as getopt
/// resolves an abbreviation; `None` when unknown or ambiguous.
pub(crate) fn long_option_name(spec: &OptionSpec, v: &str) -> Option<&'static str> {
    let long = v.strip_prefix("--")?;
    let name = long.split_once('=').map_or(long, |(n, _)| n);
    resolve_long(spec, name).map(|(full, _)| full)
}

/// The short options among `options` (the words after the command name, up to its
/// operands) as `spec`'s getopt reads them, in order: each letter with its value (`None`
/// for a flag, `Some(None)` for a value that is computed). Long options are skipped.
pub(crate) fn short_options(
    options: &[Word],
    spec: &OptionSpec,
) -> Vec<(char, Option<Option<String>>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(w) = options.get(i) {
        i += 1;
        let Some(v) = w.value.as_deref() else {
            continue;
        };
        if v == "--" {
            break;
        }
        if let Some(long) = v.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            if !long.contains('=') {
                i += resolve_long(spec, name).map_or(0, |(_, takes)| takes);
            }
            continue;
        }
        let Some(bundle) = v.strip_prefix('-') else {
            continue;
        };
        for (k, c) in bundle.char_indices() {
            let rest = &bundle[k + c.len_utf8()..];
            if spec.short_value.contains(c) {
                let value = if rest.is_empty() {
                    i += 1;
                    options.get(i - 1).map(|w| w.value.clone())
                } else {
                    Some(Some(rest.to_owned()))
                };
                out.push((c, Some(value.unwrap_or(None))));
                break;
            }
            out.push((c, None));
        }
    }
    out
}

/// The wrapper spec for a command name, if it is a wrapper.
pub(crate) fn wrapper_spec(name: &str) -> Option<&'static OptionSpec> {
    WRAPPERS.iter().find(|s| s.name == name)
}

/// Where the operands (for a wrapper: the command it runs) start after a command's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OptionsRead {
    /// Index in the words (the command name is index 0) of the first operand; may equal the
    /// number of words. For a wrapper that runs nothing (`command -v`, `flock FILE -c CMD`),
    /// the number of words.
    pub start: usize,
    /// The first word that was not understood (an unknown option, an ambiguous
    /// abbreviation, a computed word): the operands may start anywhere after it. `None` when
    /// every option was understood.
    pub unsure_from: Option<usize>,
    /// Where the value of a script option ([`OptionSpec::script_short`], `script_long`,
    /// `command_script`) is: the index of its word and the byte offset of the value in it.
    pub script: Option<(usize, usize)>,
    /// Whether a flag makes it look a name up instead of running it (`command -v`).
    pub lookup: bool,
}

/// How many words a long option (name without dashes, before `=`) takes as its value (0
/// for a flag), as getopt would resolve it: the exact name, else the only option it
/// abbreviates. `None` when unknown or ambiguous. Also returns the full name.
fn resolve_long(spec: &OptionSpec, name: &str) -> Option<(&'static str, usize)> {
    let lists = || {
        spec.long_value
            .iter()
            .map(|l| (*l, 1))
            .chain(spec.long_flags.iter().map(|l| (*l, 0)))
            .chain(spec.long_multi.iter().copied())
    };
    if let Some(found) = lists().find(|(l, _)| *l == name) {
        return Some(found);
    }
    if name.is_empty() {
        return None;
    }
    let mut found = None;
    for (l, takes) in lists() {
        if l.starts_with(name) {
            if found.is_some() {
                return None;
            }
            found = Some((l, takes));
        }
    }
    found
}

/// Whether an operand looks like a number, a duration, a mask or a CPU list (`5`, `1.5m`,
/// `0x3`, `0-3,7`), not like a command.
fn numeric_like(v: &str) -> bool {
    v.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ',' | '-' | ':' | '+'))
}

/// What one option word does.
enum OptionWord {
    /// How many words it takes (itself and its values).
    Takes(usize),
    /// It was not understood.
    Unknown,
}

/// Reads one option word `v` (at index `i`, starting with `-`) with `spec`; records a script
/// option's value in `read`, and a lookup flag in `lookup`.
fn read_option_word(
    spec: &OptionSpec,
    v: &str,
    i: usize,
    read: &mut OptionsRead,
    lookup: &mut bool,
) -> OptionWord {
    if let Some(long) = v.strip_prefix("--") {
        let (name, value_at) = match long.split_once('=') {
            Some((n, _)) => (n, Some(2 + n.len() + 1)),
            None => (long, None),
        };
        return match resolve_long(spec, name) {
            Some((full, takes)) => {
                if spec.script_long.contains(&full) {
                    read.script = Some(value_at.map_or((i + 1, 0), |at| (i, at)));
                }
                // `--name=VALUE` holds the first value.
                OptionWord::Takes(1 + takes.saturating_sub(usize::from(value_at.is_some())))
            }
            None if spec.long_any => OptionWord::Takes(1),
            None => OptionWord::Unknown,
        };
    }
    for (k, c) in v.char_indices().skip(1) {
        let after = k + c.len_utf8();
        if spec.short_value.contains(c) {
            let next = after == v.len();
            if spec.script_short.contains(c) {
                read.script = Some(if next { (i + 1, 0) } else { (i, after) });
            }
            return OptionWord::Takes(if next { 2 } else { 1 });
        }
        if spec.short_optional.contains(c) {
            return OptionWord::Takes(1);
        }
        if !spec.short_flags.contains(c) {
            return OptionWord::Unknown;
        }
        *lookup |= spec.lookup_flags.contains(c);
    }
    OptionWord::Takes(1)
}

/// Reads the options of `words` (`words[0]` is the command) with `spec`, up to its operands.
pub(crate) fn read_options(words: &[Word], spec: &OptionSpec) -> OptionsRead {
    let mut read = OptionsRead {
        start: 0,
        unsure_from: None,
        script: None,
        lookup: false,
    };
    let mut lookup = false;
    let unsure = |i: usize, read: &mut OptionsRead| {
        if read.unsure_from.is_none() {
            read.unsure_from = Some(i);
        }
    };
    let mut i = 1;
    if !spec.subcommand.is_empty() {
        match subcommand_at(words, spec.subcommand) {
            Subcommand::At(at) => {
                // Options before the subcommand (`uv --quiet run`), read with the same
                // table: they must end right at it.
                let mut j = 1;
                while j < at {
                    let v = words[j].value.as_deref().unwrap_or("");
                    match read_option_word(spec, v, j, &mut read, &mut lookup) {
                        OptionWord::Takes(n) if v.starts_with('-') => j += n,
                        _ => break,
                    }
                }
                if j != at {
                    unsure(1, &mut read);
                }
                i = at + 1;
            }
            // A computed word: read below (it may be the command).
            Subcommand::Computed => {}
            Subcommand::Missing => {
                return OptionsRead {
                    start: words.len(),
                    ..read
                };
            }
            Subcommand::Other => {
                return OptionsRead {
                    start: words.len(),
                    lookup: true,
                    ..read
                };
            }
        }
    }
    let mut dashdash = false;
    while let Some(w) = words.get(i) {
        let Some(v) = w.value.as_deref() else {
            // A computed word could be an option or the command.
            unsure(i, &mut read);
            break;
        };
        if v == "--" {
            i += 1;
            dashdash = true;
            break;
        }
        if spec.name == "env" && v == "-" {
            i += 1;
            continue;
        }
        if !v.starts_with('-') || v == "-" {
            break;
        }
        if matches!(spec.name, "nice" | "gnice")
            && v.len() > 1
            && v[1..].chars().all(|c| c.is_ascii_digit())
        {
            i += 1;
            continue;
        }
        match read_option_word(spec, v, i, &mut read, &mut lookup) {
            OptionWord::Takes(n) => i += n,
            OptionWord::Unknown => {
                unsure(i, &mut read);
                i += 1;
            }
        }
    }
    if spec.permute && !dashdash {
        // Options after the operands (up to `--`) are options too.
        let mut j = i;
        while let Some(w) = words.get(j) {
            match w.value.as_deref() {
                Some("--") => break,
                Some(v) if v.starts_with('-') && v != "-" => {
                    match read_option_word(spec, v, j, &mut read, &mut lookup) {
                        OptionWord::Takes(n) => j += n,
                        OptionWord::Unknown => {
                            unsure(j, &mut read);
                            j += 1;
                        }
                    }
                }
                _ => j += 1,
            }
        }
    }
    if spec.assignments {
        while words
            .get(i)
            .and_then(|w| w.value.as_deref())
            .is_some_and(|v| !v.starts_with('-') && v.contains('='))
        {
            i += 1;
        }
    }
    for _ in 0..spec.operands {
        if let Some(w) = words.get(i) {
            if spec.numeric_operands && !w.value.as_deref().is_some_and(numeric_like) {
                // Not a number: perhaps the operand was left out and this is the command.
                unsure(i - 1, &mut read);
            }
            i += 1;
        }
    }
    if let Some(v) = words.get(i).and_then(|w| w.value.as_deref())
        && spec.command_script.contains(&v)
    {
        read.script = Some((i + 1, 0));
        i = words.len();
    }
    read.lookup = lookup;
    read.start = if lookup || spec.no_command {
        words.len()
    } else {
        i.min(words.len())
    };
    if spec.no_command {
        // No word after it is a command, whatever was not understood.
        read.unsure_from = None;
    }
    read
}

/// Where a wrapper's subcommand ([`OptionSpec::subcommand`]) is in `words`.
enum Subcommand {
    /// At this index: right after the program, or after options of its own.
    At(usize),
    /// A computed word stands where it may be.
    Computed,
    /// Nothing follows the program.
    Missing,
    /// Another subcommand, which runs nothing.
    Other,
}

/// Finds `sub` in `words`: the word after the program, or, when options come first (`uv
/// --quiet run`), the first later word that is `sub` (an option's value may come before
/// it, so any word counts).
fn subcommand_at(words: &[Word], sub: &str) -> Subcommand {
    match words.get(1).map(|w| w.value.as_deref()) {
        None => Subcommand::Missing,
        Some(None) => Subcommand::Computed,
        Some(Some(v)) if v == sub => Subcommand::At(1),
        Some(Some(v)) if v.starts_with('-') && v != "-" => {
            for (j, w) in words.iter().enumerate().skip(2) {
                match w.value.as_deref() {
                    None => return Subcommand::Computed,
                    Some(v) if v == sub => return Subcommand::At(j),
                    _ => {}
                }
            }
            Subcommand::Other
        }
        Some(Some(_)) => Subcommand::Other,
    }
}

/// The string a wrapper runs through a shell (`su -c CMD`, `runuser --command=CMD`, `flock
/// FILE -c CMD`) or splits into a command (`env -S STRING`), when `words` is such a call:
/// `(split, Some(string))`, or `(split, None)` when the string is computed.
pub(crate) fn wrapper_script(words: &[Word]) -> Option<(bool, Option<String>)> {
    let name = words.first()?.value.as_deref()?;
    let spec = wrapper_spec(name.rsplit('/').next().unwrap_or(name))?;
    let (at, offset) = read_options(words, spec).script?;
    let split = spec.name == "env";
    let value = match words.get(at) {
        Some(w) => w
            .value
            .as_deref()
            .and_then(|v| v.get(offset..))
            .map(str::to_owned),
        None => return None,
    };
    Some((split, value))
}

/// How many places where a wrapper's command may start are read at most.
const MAX_STARTS: usize = 8;

/// Every place the command run by a wrapper or xargs may start: the reading with the option
/// table first, then, when a word was not understood, every later word that is not an option
/// (deny and ask rules must see all of them). Bounded to a few readings.
pub(crate) fn command_starts(words: &[Word], read: OptionsRead) -> Vec<usize> {
    let mut out = Vec::new();
    if read.start < words.len() {
        out.push(read.start);
    }
    if let Some(u) = read.unsure_from {
        for (j, w) in words.iter().enumerate().skip(u + 1) {
            if out.len() >= MAX_STARTS {
                break;
            }
            let option = w.value.as_deref().is_some_and(|v| v.starts_with('-'));
            if !option && !out.contains(&j) {
                out.push(j);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split(' ')
            .map(|w| Word {
                raw: w.into(),
                value: Some(w.into()),
                plain: true,
                glob: false,
            })
            .collect()
    }

    #[test]
    fn spellings() {
        assert!(short_bundle_has("-uo", &['o']));
        assert!(!short_bundle_has("--output", &['o']));
        assert!(!short_bundle_has("-", &['o']));
        assert!(names_long("--o=x", "--output"));
        assert!(names_long("--outp", "--output"));
        assert!(names_long("--output=x", "--output"));
        assert!(!names_long("--", "--output"));
        assert!(!names_long("--oneline", "--output"));
    }

    #[test]
    fn wrapper_options() {
        let read = |s: &str| {
            let w = words(s);
            let spec = wrapper_spec(w[0].value.as_deref().unwrap_or("")).copied();
            spec.map(|spec| read_options(&w, &spec))
        };
        let at = |start, unsure_from| {
            Some(OptionsRead {
                start,
                unsure_from,
                script: None,
                lookup: false,
            })
        };
        assert_eq!(read("nice -n 5 rm x"), at(3, None));
        assert_eq!(read("nice -n5 rm x"), at(2, None));
        assert_eq!(read("nice -5 rm x"), at(2, None));
        assert_eq!(read("nice --adj 5 rm x"), at(3, None));
        assert_eq!(read("timeout -k 5 10 rm x"), at(4, None));
        assert_eq!(read("sudo -u root rm x"), at(3, None));
        assert_eq!(read("sudo --user root rm x"), at(3, None));
        assert_eq!(read("sudo -Eu root rm x"), at(3, None));
        assert_eq!(read("sudo --bogus value rm x"), at(2, Some(1)));
        assert_eq!(read("env -u FOO A=1 rm x"), at(4, None));
        assert_eq!(read("stdbuf -o L rm x"), at(3, None));
        let w = words("sudo --bogus value rm x");
        let unsure = OptionsRead {
            start: 2,
            unsure_from: Some(1),
            script: None,
            lookup: false,
        };
        assert_eq!(command_starts(&w, unsure), [2, 3, 4]);
        assert!(short_option_in("-us", &['s'], "dfrI"));
        assert!(!short_option_in("-Iseconds", &['s'], "dfrI"));
        let w = words("xargs -i rm {}");
        assert_eq!(
            read_options(&w, &XARGS),
            OptionsRead {
                start: 2,
                unsure_from: None,
                script: None,
                lookup: false,
            }
        );
        let w = words("xargs --max-args 1 rm");
        assert_eq!(read_options(&w, &XARGS).start, 3);
        let w = words("xargs -tn1 rm");
        assert_eq!(read_options(&w, &XARGS).start, 2);
        let w = words("xargs --max 1 rm");
        assert_eq!(read_options(&w, &XARGS).unsure_from, Some(1));
        // An operand that is not a number may be the command (`chrt -o rm`).
        assert_eq!(read("chrt -o 0 rm x"), at(3, None));
        assert_eq!(read("chrt -o rm x").map(|r| r.unsure_from), Some(Some(1)));
        assert_eq!(read("flock -w 5 /tmp/l rm x"), at(4, None));
        // `command -v` looks a name up and runs nothing.
        assert_eq!(
            read("command -v rm").map(|r| (r.start, r.unsure_from, r.lookup)),
            Some((3, None, true))
        );
        // Options with several values, and with `=` holding the first.
        assert_eq!(read("bwrap --bind / / rm x"), at(4, None));
        assert_eq!(read("bwrap --bind=/ / --overlay a b c rm x"), at(7, None));
        assert_eq!(read("firejail --net=none --noprofile rm x"), at(3, None));
        assert_eq!(read("gtimeout -k 5 10 rm x"), at(4, None));
        // A subcommand runs the command; another one runs nothing.
        assert_eq!(read("uv run --with x rm x"), at(4, None));
        assert_eq!(read("uv --quiet run rm x"), at(3, None));
        assert_eq!(read("uv --bogus run rm x"), at(3, Some(1)));
        assert_eq!(read("poetry -C . run rm x"), at(4, None));
        assert_eq!(
            read("uv pip list").map(|r| (r.start, r.lookup)),
            Some((3, true))
        );
        assert_eq!(read("direnv exec . rm x"), at(3, None));
        // nix-shell runs only its `--run` string.
        assert_eq!(read("nix-shell -p a b --run x c").map(|r| r.start), Some(7));
    }

    #[test]
    fn wrapper_scripts() {
        let script = |s: &str| wrapper_script(&words(s));
        assert_eq!(
            script("flock /tmp/l -c ls"),
            Some((false, Some("ls".into())))
        );
        assert_eq!(
            script("flock -n /tmp/l --command ls"),
            Some((false, Some("ls".into())))
        );
        assert_eq!(script("flock /tmp/l rm -c"), None);
        assert_eq!(script("su me -c ls"), Some((false, Some("ls".into()))));
        assert_eq!(
            script("runuser -lc ls me"),
            Some((false, Some("ls".into())))
        );
        assert_eq!(script("su --comm=ls me"), Some((false, Some("ls".into()))));
        assert_eq!(script("env -S ls"), Some((true, Some("ls".into()))));
        assert_eq!(script("env -iSls"), Some((true, Some("ls".into()))));
        assert_eq!(
            script("env --split-string=ls"),
            Some((true, Some("ls".into())))
        );
        assert_eq!(script("env ls -S x"), None);
        assert_eq!(
            script("nix-shell -p a b --run x"),
            Some((false, Some("x".into())))
        );
        assert_eq!(
            script("nix-shell --command=x"),
            Some((false, Some("x".into())))
        );
        assert_eq!(script("nix-shell shell.nix"), None);
        assert_eq!(script("sudo ls"), None);
    }
}
