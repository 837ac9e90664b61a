//! Review 27 findings on what Bash commands are known to read and run: git printing files
//! past its pathspecs (a blob id, `--full-diff`), binutils' `@FILE` response files, jq
//! modules, wrappers that run a command deny rules did not see inside, and file readers
//! whose operands were not checked against Read deny rules. Each was allowed in bypass mode
//! (past a deny rule) before its fix; where the program is installed, a real run shows
//! what it does.

use crate::common::{Case, Fixture, case, installed, real_bash, run_table_in, write};

/// Runs `command` with the real bash in the fixture's project and returns what it printed
/// (standard output, through a file in the outside directory).
fn printed(fx: &Fixture, command: &str) -> String {
    let out = fx.out.join("printed.txt");
    let _ = std::fs::remove_file(&out);
    real_bash(
        &format!("( {command} ) > '{}' 2>/dev/null", out.display()),
        &fx.proj,
        &fx.home,
    );
    std::fs::read_to_string(&out).unwrap_or_default()
}

/// A case in bypass mode with these deny rules.
fn bypass(expect: &'static str, command: &str, deny: &[&str]) -> Case {
    case(expect, "Bash", command)
        .mode("bypassPermissions")
        .deny(deny)
}

// --- 1. git prints files its pathspecs do not select ------------------------------------------

/// A hex object id may be a blob, which `git show` prints whatever pathspec follows it
/// (`git show <blob> -- src/main.rs`, also beside a commit or without `--`), and
/// `--full-diff` makes `git log -p` / `git show` print every file the commits a pathspec
/// selects changed. With a Read deny rule on `secrets/**` (the secret committed), these
/// ask, in bypass mode too, as `git show <blob>` without a pathspec does; a revision name
/// with a pathspec, and a patch without `--full-diff`, stay allowed.
#[tokio::test]
async fn git_blob_ids_and_full_diff_print_files_past_their_pathspecs() {
    if !installed("git") {
        eprintln!("git is not installed: not run");
        return;
    }
    let fx = Fixture::new();
    write(&fx.proj.join("secrets/key.pem"), "TOP-SECRET-KEY\n");
    // A real repository in place of the fixture's stand-in `.git`.
    std::fs::remove_dir_all(fx.proj.join(".git")).unwrap();
    assert!(real_bash(
        &format!(
            "git init -q . && git add src/main.rs secrets/key.pem README.md && \
             git -c user.name=t -c user.email=t@t commit -qm one && \
             git rev-parse HEAD:secrets/key.pem > '{}'",
            fx.out.join("blob").display()
        ),
        &fx.proj,
        &fx.home
    ));
    let blob = std::fs::read_to_string(fx.out.join("blob")).unwrap();
    let blob = blob.trim();
    let short = &blob[..8];
    let leaking = [
        "git log -p --full-diff -1 -- src/main.rs".to_owned(),
        "git log --patch --full-diff -- src/main.rs".to_owned(),
        format!("git show {blob} -- src/main.rs"),
        format!("git show HEAD {blob} -- src/main.rs"),
        format!("git show {blob} src/main.rs"),
        format!("git show {short} -- src/main.rs"),
        "git show --full-diff -- src/main.rs".to_owned(),
        "git whatchanged -p --full-diff -- src/main.rs".to_owned(),
    ];
    for command in &leaking {
        assert!(
            printed(&fx, command).contains("TOP-SECRET-KEY"),
            "{command} did not print the secret"
        );
    }
    let deny = &["Read(./secrets/**)"];
    let mut cases = Vec::new();
    for command in &leaking {
        cases.push(bypass("ask", command, deny));
        cases.push(case("ask", "Bash", command).deny(deny));
    }
    for command in [
        "git log -p -1 -- src/main.rs",
        "git show HEAD -- src/main.rs",
        "git show HEAD~0 src/main.rs",
        "git log -p --follow -- src/main.rs",
        "git diff HEAD -- src/main.rs",
        "git log --oneline",
    ] {
        assert!(
            !printed(&fx, command).contains("TOP-SECRET-KEY"),
            "{command} printed the secret"
        );
        cases.push(case("allow", "Bash", command).deny(deny));
        cases.push(bypass("allow", command, deny));
    }
    run_table_in(&fx, cases).await;
}

// --- 2. binutils' response files ------------------------------------------------------------

/// `strings @FILE` reads more arguments from FILE (binutils' response files), so the files
/// listed there are read: with a Read deny rule they cannot be checked and ask, in bypass
/// mode too (as `xargs -a list cat` does). Without path rules, and for a plain file, it
/// stays allowed as read-only.
#[tokio::test]
async fn strings_response_files_name_files_that_cannot_be_checked() {
    let fx = Fixture::new();
    write(&fx.proj.join("list"), ".env\n");
    if installed("strings") {
        for command in ["strings @list", "strings -a @list", "strings -- @list"] {
            assert!(
                printed(&fx, command).contains("SECRET=1"),
                "{command} did not print .env"
            );
        }
    } else {
        eprintln!("strings is not installed: not run");
    }
    let deny = &["Read(.env)"];
    let mut cases = Vec::new();
    for command in [
        "strings @list",
        "strings -a @list",
        "strings -n 4 @list",
        "strings -- @list",
        "strings README.md @list",
    ] {
        cases.push(bypass("ask", command, deny));
        cases.push(case("ask", "Bash", command).deny(deny));
        cases.push(case("allow", "Bash", command));
    }
    cases.extend([
        bypass("deny", "strings .env", deny),
        bypass("deny", "strings @.env", deny),
        case("allow", "Bash", "strings README.md").deny(deny),
        case("allow", "Bash", "strings -n 8 README.md").deny(deny),
    ]);
    run_table_in(&fx, cases).await;
}

// --- 3. jq modules ----------------------------------------------------------------------------

/// A jq program that imports or includes a module (or data file) reads a file its command
/// line does not name, found through a path the program spells (`import "secrets/k" as
/// $k`), from a module directory (`-L DIR`), or from a program file that may do so (`-f`).
/// With Read deny rules these ask, in bypass mode too; `--rawfile` / `--slurpfile` are
/// checked as paths; a field or string named `import` or `include` is no module.
#[tokio::test]
async fn jq_modules_are_files_that_cannot_be_checked() {
    let fx = Fixture::new();
    write(&fx.proj.join("secrets/k.json"), "{\"s\":\"TOP-SECRET\"}\n");
    write(&fx.proj.join("secrets/m.jq"), "def s: \"TOP-SECRET\";\n");
    write(&fx.proj.join("prog.jq"), "import \"secrets/k\" as $k; $k\n");
    if installed("jq") {
        for command in [
            "jq -n 'import \"secrets/k\" as $k; $k'",
            "jq -n -L secrets 'import \"k\" as $k; $k'",
            "jq -n 'include \"secrets/m\"; s'",
            "jq -n -f prog.jq",
        ] {
            assert!(
                printed(&fx, command).contains("TOP-SECRET"),
                "{command} did not print the secret"
            );
        }
    } else {
        eprintln!("jq is not installed: not run");
    }
    let deny = &["Read(./secrets/**)"];
    let mut cases = Vec::new();
    for command in [
        "jq -n 'import \"secrets/k\" as $k; $k'",
        "jq -n -L . 'import \"secrets/k\" as $k; $k'",
        "jq -n --library-path=. 'import \"secrets/k\" as $k; $k'",
        "jq -n 'include \"secrets/m\"; s'",
        "jq -nr 'import \"secrets/k\" as $k; $k' package.json",
        "jq -n -f prog.jq",
        "jq -n --from-file prog.jq",
        "jq --arg x 1 -n 'include \"secrets/m\"; s'",
    ] {
        cases.push(bypass("ask", command, deny));
        cases.push(case("ask", "Bash", command).deny(deny));
    }
    cases.extend([
        bypass("deny", "jq -n --rawfile k secrets/k.json '$k'", deny),
        bypass("deny", "jq -n --slurpfile k secrets/k.json '$k'", deny),
        bypass("deny", "jq . secrets/k.json", deny),
        // The module directory itself is denied.
        bypass("deny", "jq -n -L secrets 'import \"k\" as $k; $k'", deny),
    ]);
    for command in [
        "jq . package.json",
        "jq '.import' package.json",
        "jq -r '.include | .[]' package.json",
        "jq -n '\"import x\"'",
        "jq --arg include x -n '$include'",
    ] {
        cases.push(case("allow", "Bash", command).deny(deny));
        cases.push(bypass("allow", command, deny));
    }
    run_table_in(&fx, cases).await;
}

// --- 4. Wrappers that run a command -----------------------------------------------------------

/// Programs that run the command given after their options (GNU `gtimeout`,
/// `dbus-run-session`, `catchsegv`, the sandboxes `firejail`, `bwrap`, `proot`, the
/// environment runners `uv run`, `poetry run`, `conda`/`mamba`/`micromamba run`, `direnv
/// exec DIR`) are wrappers: a deny rule on `rm` sees `rm` behind them, in bypass mode.
/// `nix-shell --run`/`--command` run a shell string, which is read as a script. `tmux`,
/// `screen` and `at`/`batch` run shell commands this check does not take apart (a shell
/// string, a command sequence, a format's `#(…)`, standard input): with a Bash deny rule
/// they ask. Listing and querying (`tmux ls`, `at -l`) and other subcommands (`uv pip
/// list`) stay allowed.
#[tokio::test]
async fn wrappers_that_run_commands_meet_deny_rules() {
    let fx = Fixture::new();
    if installed("dbus-run-session") {
        std::fs::write(fx.out.join("victim"), "x").unwrap();
        real_bash("timeout 20 dbus-run-session rm victim", &fx.out, &fx.home);
        assert!(
            !fx.out.join("victim").exists(),
            "dbus-run-session did not run rm"
        );
    }
    let rm = &["Bash(rm:*)"];
    let mut cases = Vec::new();
    for command in [
        "gtimeout 5 rm x",
        "gtimeout -s KILL 5 rm x",
        "dbus-run-session rm x",
        "dbus-run-session -- rm x",
        "dbus-run-session --config-file=/tmp/c rm x",
        "dbus-run-session --dbus-daemon /usr/bin/dbus-daemon rm x",
        "catchsegv rm x",
        "firejail rm x",
        "firejail --noprofile --net=none rm x",
        "bwrap --bind / / rm x",
        "bwrap --ro-bind /usr /usr --ro-bind /lib /lib --ro-bind /lib64 /lib64 \
         --bind /tmp /tmp --proc /proc --dev /dev --unshare-all rm x",
        "bwrap --dev-bind / / --setenv A B --chdir /tmp rm x",
        "bwrap --overlay /a /b /c --bind / / rm x",
        "proot rm x",
        "proot -r / -w /tmp rm x",
        "proot --rootfs=/ -b /proc rm x",
        "uv run rm x",
        "uv run --with requests rm x",
        "uv run --python 3.12 -- rm x",
        "uv --quiet run rm x",
        "poetry run rm x",
        "poetry -C . run rm x",
        "conda run -n base rm x",
        "conda run --no-capture-output -p /opt/env rm x",
        "mamba run -n base rm x",
        "micromamba run -n base rm x",
        "direnv exec . rm x",
        "direnv exec /tmp/dir rm -rf x",
        "nix-shell --run 'rm x'",
        "nix-shell -p hello --run 'rm x'",
        "nix-shell shell.nix --command 'rm x; return'",
        "nix-shell --run=\"rm x\"",
        "sudo gtimeout 5 rm x",
        "uv run gtimeout 5 rm x",
    ] {
        cases.push(bypass("deny", command, rm));
    }
    for command in [
        "tmux new 'rm x'",
        "tmux new-session -d 'rm x'",
        "tmux -L s new -d rm x",
        "tmux new-window 'rm x'",
        "tmux -c 'rm x'",
        "tmux run-shell 'rm x'",
        "tmux send-keys 'rm x' Enter",
        "tmux ls -F '#(rm x)'",
        "tmux ls \\; new -d 'rm x'",
        "tmux",
        "screen -dm rm x",
        "screen -dmS s rm x",
        "screen -X stuff 'rm x\n'",
        "at now <<< 'rm x'",
        "echo 'rm x' | at now",
        "at -f job.sh now",
        "batch <<< 'rm x'",
    ] {
        cases.push(bypass("ask", command, rm));
    }
    for command in [
        "gtimeout 5 ls",
        "dbus-run-session ls",
        "firejail --noprofile ls",
        "bwrap --bind / / ls",
        "uv run pytest",
        "uv pip list",
        "uv sync",
        "poetry install",
        "poetry run pytest -x",
        "poetry -C . run pytest",
        "uv --quiet run pytest",
        "conda list",
        "conda run -n base python -V",
        "nix-shell -p hello --run hello",
        "direnv exec . ls",
        "tmux ls",
        "tmux list-sessions",
        "tmux has-session -t main",
        "tmux kill-session -t main",
        "tmux -V",
        "screen -ls",
        "at -l",
        "atq",
        "atrm 3",
    ] {
        cases.push(bypass("allow", command, rm));
    }
    // Default mode: everyday wrappers stay as they were.
    cases.extend([
        case("allow", "Bash", "timeout 5 ls"),
        case("ask", "Bash", "gtimeout 5 ls"),
        case("ask", "Bash", "uv run pytest"),
        case("allow", "Bash", "uv run pytest").allow(&["Bash(uv run pytest:*)"]),
        case("deny", "Bash", "uv run rm x")
            .allow(&["Bash(uv run:*)"])
            .deny(rm),
    ]);
    run_table_in(&fx, cases).await;
}

/// Sandboxes move what the paths of their command name (`bwrap --bind`, `proot -r`), and
/// the wrapped command's own paths are still read through them: with a Read deny rule on
/// `.env`, `gtimeout 5 cat .env` is denied, and `bwrap … cat .env` / `proot -r DIR cat
/// .env` ask (the path may be another file under the sandbox's root).
#[tokio::test]
async fn paths_behind_the_new_wrappers_are_checked() {
    let fx = Fixture::new();
    let deny = &["Read(.env)"];
    let cases = vec![
        bypass("deny", "gtimeout 5 cat .env", deny),
        bypass("deny", "uv run cat .env", deny),
        bypass("deny", "catchsegv cat .env", deny),
        bypass("deny", "dbus-run-session -- cat .env", deny),
        bypass("deny", "direnv exec . cat .env", deny),
        bypass("ask", "bwrap --bind /tmp/x $P cat README.md", deny),
        bypass("ask", "proot -r /tmp/x cat README.md", deny),
        bypass("ask", "proot -w /tmp/x cat README.md", deny),
        bypass("allow", "gtimeout 5 cat README.md", deny),
        bypass("allow", "uv run cat README.md", deny),
    ];
    run_table_in(&fx, cases).await;
}

// --- 5. File readers ------------------------------------------------------------------------

/// Readers whose file operands were not checked against Read deny rules: `fmt`, `pr`,
/// `base32`, `csplit` (which also writes its pieces), the gzip family (`zcat`, `gzip -c`,
/// `gunzip -c`), `scp` (a local source is read) and `zip` (its files, and with `-r` the
/// trees under them, are read). Their options' values are not taken for files, and other
/// files stay allowed.
#[tokio::test]
async fn file_readers_meet_read_deny_rules() {
    let fx = Fixture::new();
    write(&fx.proj.join("secrets/key.pem"), "TOP-SECRET\n");
    for (program, command, shows) in [
        ("fmt", "fmt .env", "SECRET=1"),
        ("fmt", "fmt -w 40 .env", "SECRET=1"),
        ("pr", "pr .env", "SECRET=1"),
        ("base32", "base32 .env | base32 -d", "SECRET=1"),
        ("csplit", "csplit -s .env 1 && cat xx00 xx01", "SECRET=1"),
        ("zcat", "zcat -f .env", "SECRET=1"),
        ("gzip", "gzip -c .env | gzip -dc", "SECRET=1"),
        (
            "zip",
            "zip -qr x.zip secrets && unzip -p x.zip",
            "TOP-SECRET",
        ),
    ] {
        if installed(program) {
            assert!(
                printed(&fx, command).contains(shows),
                "{command} did not show {shows}"
            );
        }
    }
    for f in ["xx00", "xx01", "x.zip"] {
        let _ = std::fs::remove_file(fx.proj.join(f));
    }
    let env = &["Read(.env)"];
    let secrets = &["Read(./secrets/**)"];
    let mut cases = Vec::new();
    for command in [
        "fmt .env",
        "fmt -w 40 .env",
        "fmt --width 40 .env",
        "pr .env",
        "pr -h title .env",
        "pr -2 -l 20 .env",
        "base32 .env",
        "base32 -w 0 .env",
        "base32 -d .env",
        "csplit .env 1",
        "csplit -f part .env '/x/'",
        "zcat .env",
        "zcat -f .env",
        "gzip -c .env",
        "gzip -dc .env",
        "gzip --stdout .env",
        "gunzip -c .env",
        "gzip .env",
        "scp .env host:",
        "scp -P 22 .env host:/tmp/",
        "scp -r src .env host:",
        "zip x.zip .env",
        "zip -r x.zip . -i .env",
        // `src/sub/.env`, below the tree sent.
        "zip -r x.zip src",
        "zip -rq x.zip src",
    ] {
        cases.push(bypass("deny", command, env));
    }
    for command in [
        "zip -r x.zip secrets",
        "zip -qr x.zip secrets",
        "zip --recurse-paths x.zip secrets",
        "scp -r secrets host:",
    ] {
        cases.push(bypass("deny", command, secrets));
    }
    for command in [
        "fmt README.md",
        "fmt -w 40 README.md",
        "pr -h .env README.md",
        "base32 README.md",
        "csplit README.md 1",
        "zcat -f README.md",
        "gzip -c README.md",
        "gzip README.md",
        "scp README.md host:",
        "scp host:.env /tmp/x",
        // Not `src`, which holds a `.env` the rule matches at any depth.
        "zip -r x.zip docs",
        "scp -r docs host:",
        "scp -r host:dir .",
        "gzip -rc docs",
        "zip x.zip README.md",
    ] {
        cases.push(bypass("allow", command, env));
    }
    cases.extend([
        // What is written is checked too: a piece, an archive, a decompressed file.
        bypass("deny", "csplit -f .env README.md 1", &["Edit(.env*)"]),
        bypass("deny", "zip .env README.md", &["Edit(.env)"]),
        bypass("deny", "gunzip .env.gz", &["Edit(.env)"]),
        bypass("deny", "gzip .env", &["Edit(.env.gz)"]),
        bypass("deny", "scp host:x .env", &["Edit(.env)"]),
        bypass("ask", "scp host:x .", &["Edit(.env)"]),
        bypass("deny", "zip -m x.zip README.md", &["Edit(README.md)"]),
        bypass("deny", "zip -O out.zip x.zip README.md", &["Edit(out.zip)"]),
        bypass("allow", "zip x.zip README.md", &["Edit(README.md)"]),
    ]);
    run_table_in(&fx, cases).await;
}

// --- 6. Revision names that resolve to a blob -------------------------------------------------

/// Any revision name may resolve to a blob (a tag can point at one, lightweight or
/// annotated), which `git show` prints whatever pathspec follows it. With a Read deny rule
/// on `.env` (committed), `git show <tag> -- a.txt` in each spelling of the tag, a plain
/// name and `@{-1}` (a tag outranks a branch of the same name) and the options that show
/// every tag (`--tags`, `--all`, `--glob`) ask, in bypass mode too. The revisions that are
/// commits by their syntax (`HEAD`, `@`, `HEAD~1`, `HEAD^`, `HEAD@{1}`, `NAME~N`, `NAME^`,
/// `NAME^{commit}`) stay allowed, as `git log -p` does (it never prints a blob).
#[tokio::test]
async fn revision_names_that_may_be_blobs_ask() {
    if !installed("git") {
        eprintln!("git is not installed: not run");
        return;
    }
    let fx = Fixture::new();
    write(&fx.proj.join("a.txt"), "hello\n");
    std::fs::remove_dir_all(fx.proj.join(".git")).unwrap();
    let commit = "git -c user.name=t -c user.email=t@t commit -q";
    assert!(real_bash(
        &format!(
            "git init -q . && git add .env a.txt && {commit} -m one && echo more >> a.txt && \
             {commit} -am two && git checkout -q -b other && {commit} --allow-empty -m three && \
             git checkout -q - && git tag blobtag $(git rev-parse HEAD:.env) && \
             git -c user.name=t -c user.email=t@t tag -a -m x anntag $(git rev-parse HEAD:.env) && \
             git tag other $(git rev-parse HEAD:.env)"
        ),
        &fx.proj,
        &fx.home
    ));
    let leaking = [
        "git show blobtag -- a.txt",
        "git show blobtag a.txt",
        "git show refs/tags/blobtag -- a.txt",
        "git show tags/blobtag -- a.txt",
        "git show anntag -- a.txt",
        "git show 'anntag^{}' -- a.txt",
        "git show HEAD blobtag -- a.txt",
        // A tag beside the branch `other` outranks it; `@{-1}` names that branch.
        "git show other -- a.txt",
        "git show @{-1} -- a.txt",
        "git show --tags -- a.txt",
        "git show --all -- a.txt",
        "git show --glob='refs/tags/b*' -- a.txt",
    ];
    for command in leaking {
        assert!(
            printed(&fx, command).contains("SECRET=1"),
            "{command} did not print the secret"
        );
    }
    let deny = &["Read(.env)"];
    let mut cases = Vec::new();
    for command in leaking {
        cases.push(bypass("ask", command, deny));
        cases.push(case("ask", "Bash", command).deny(deny));
    }
    for command in [
        "git show HEAD -- a.txt",
        "git show HEAD a.txt",
        "git show @ -- a.txt",
        "git show HEAD~1 -- a.txt",
        "git show HEAD^ -- a.txt",
        "git show HEAD^1 -- a.txt",
        "git show HEAD@{1} -- a.txt",
        "git show @{1} a.txt",
        "git show '@{-1}~0' -- a.txt",
        "git show 'blobtag~0' -- a.txt",
        "git show 'other^{commit}' -- a.txt",
        "git show other^ -- a.txt",
        "git log -p -- a.txt",
        "git log -p blobtag -- a.txt",
        "git log -p HEAD -- a.txt",
        "git whatchanged -p anntag -- a.txt",
    ] {
        assert!(
            !printed(&fx, command).contains("SECRET=1"),
            "{command} printed the secret"
        );
        cases.push(case("allow", "Bash", command).deny(deny));
        cases.push(bypass("allow", command, deny));
    }
    run_table_in(&fx, cases).await;
}

// --- 7. More file readers, and `dbus-launch` ------------------------------------------------

/// Close relatives of the readers above print or encode the files they are given:
/// `bzcat`, `zgrep` (its first operand is the pattern), `zless`, `basenc`, `b2sum`, `sum`,
/// `join`, `shuf`, `iconv`, `uuencode`. With a Read deny rule on `.env` each is denied in
/// bypass mode; their options' values are not taken for files (`zgrep -e .env README.md`
/// reads README.md only), and the files `shuf -o` / `iconv -o` write meet Edit rules.
/// `dbus-launch` runs the command after its options, which a Bash deny rule sees.
#[tokio::test]
async fn more_file_readers_meet_read_deny_rules() {
    let fx = Fixture::new();
    write(&fx.proj.join("a.txt"), "SECRET other\n");
    for (program, command, shows) in [
        (
            "bzcat",
            "bzip2 -c .env > e.bz2 && bzcat e.bz2 && bzcat -f .env",
            "SECRET=1",
        ),
        ("zgrep", "zgrep S .env", "SECRET=1"),
        ("zless", "zless .env", "SECRET=1"),
        ("basenc", "basenc --base64 .env | base64 -d", "SECRET=1"),
        ("join", "join -t = .env .env", "SECRET=1"),
        ("shuf", "shuf .env", "SECRET=1"),
        ("shuf", "shuf -n 1 .env", "SECRET=1"),
        ("iconv", "iconv -f utf8 .env", "SECRET=1"),
        ("iconv", "iconv -f utf8 -t ascii .env", "SECRET=1"),
    ] {
        if installed(program) {
            assert!(
                printed(&fx, command).contains(shows),
                "{command} did not show {shows}"
            );
        }
    }
    let _ = std::fs::remove_file(fx.proj.join("e.bz2"));
    let env = &["Read(.env)"];
    let mut cases = Vec::new();
    for command in [
        "bzcat .env",
        "bzcat -f .env",
        "zgrep S .env",
        "zgrep -i -e S .env",
        "zgrep -A 2 S .env",
        "zegrep S .env",
        "zless .env",
        "zless -N .env",
        "basenc --base64 .env",
        "basenc --base32 -w 0 .env",
        "b2sum .env",
        "b2sum -l 128 .env",
        "sum .env",
        "sum -r .env",
        "join .env a.txt",
        "join -t = -1 1 a.txt .env",
        "shuf .env",
        "shuf -n 1 .env",
        "iconv -f utf8 .env",
        "iconv -f utf8 -t ascii .env",
        "iconv --from-code=utf8 .env",
        "uuencode .env x",
        "uuencode -m .env x",
    ] {
        cases.push(bypass("deny", command, env));
    }
    for command in [
        "bzcat README.md",
        "zgrep S README.md",
        "zgrep -e .env README.md",
        "zless README.md",
        "basenc --base64 README.md",
        "b2sum README.md",
        "sum README.md",
        "join -t = a.txt README.md",
        "shuf -n 1 README.md",
        "shuf -e a b",
        "iconv -f utf8 -t ascii README.md",
        "uuencode README.md x",
    ] {
        cases.push(bypass("allow", command, env));
    }
    cases.extend([
        bypass("deny", "shuf -o .env README.md", &["Edit(.env)"]),
        bypass("deny", "shuf --output=.env README.md", &["Edit(.env)"]),
        bypass("deny", "iconv -f utf8 -o .env README.md", &["Edit(.env)"]),
        bypass("deny", "dbus-launch rm x", &["Bash(rm:*)"]),
        bypass(
            "deny",
            "dbus-launch --exit-with-session rm x",
            &["Bash(rm:*)"],
        ),
        bypass(
            "deny",
            "dbus-launch --config-file=/tmp/c rm x",
            &["Bash(rm:*)"],
        ),
        bypass("deny", "dbus-launch cat .env", env),
        bypass("allow", "dbus-launch ls", &["Bash(rm:*)"]),
    ]);
    run_table_in(&fx, cases).await;
}
