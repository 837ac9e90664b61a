//! Session 31 on paths: programs that take file operands but were missing from the tables
//! (`link`, `rename`, `openssl -in/-out`, `uudecode -o`, `cpp`, `xmllint --output`, `hd`,
//! binutils) are judged as what they do to their files; a word bash expands as a glob is a
//! listing of its directory wherever it stands (`echo secrets/*`, `for f in secrets/*`);
//! `Read(./**)` and `Edit(./**)` cover the cwd's tree, not every path on disk; and a device
//! as a symlink's target (`ln -s /dev/null build.log`) is no reason to ask.

use std::path::Path;

use crate::common::{Case, Fixture, case, installed, real_bash, run_table_in};

/// The Read deny rule of the review: the project's `secrets` directory.
const SECRETS: &str = "Read(./secrets/**)";

/// A table row: Bash `command` in bypass mode, with `Read(./secrets/**)` denied.
fn bypass(expect: &'static str, command: &str) -> Case {
    case(expect, "Bash", command)
        .mode("bypassPermissions")
        .deny(&[SECRETS])
}

/// A fixture that also holds `evil.sh` (a script meant as a git hook), `evil.b64` (it,
/// base64-encoded), `a.c` (a C file) and `a.xml`.
fn fixture() -> Fixture {
    let fx = Fixture::new();
    std::fs::write(fx.proj.join("evil.sh"), "#!/bin/sh\necho pwned\n").unwrap();
    std::fs::write(fx.proj.join("evil.b64"), "IyEvYmluL3NoCmVjaG8gcHduZWQK\n").unwrap();
    std::fs::write(fx.proj.join("a.c"), "int x;\n").unwrap();
    std::fs::write(fx.proj.join("a.xml"), "<a/>\n").unwrap();
    fx
}

/// `link FILE1 FILE2` makes a hard link, as `ln FILE1 FILE2` does: with the real program,
/// the link made to a Read-denied key prints the key, and one made into `.git/hooks` is a
/// hook. Both operands are judged as `ln` judges them: the first is denied by the Read deny
/// rule, the second asks in bypass mode as a write into a protected directory.
#[tokio::test]
async fn link_is_judged_as_ln_without_s() {
    let fx = fixture();
    if installed("link") {
        assert!(real_bash("link secrets/key.pem x", &fx.proj, &fx.home));
        assert_eq!(std::fs::read_to_string(fx.proj.join("x")).unwrap(), "k");
        assert!(real_bash(
            "link evil.sh .git/hooks/pre-commit",
            &fx.proj,
            &fx.home
        ));
        assert!(fx.proj.join(".git/hooks/pre-commit").exists());
        std::fs::remove_file(fx.proj.join("x")).unwrap();
        std::fs::remove_file(fx.proj.join(".git/hooks/pre-commit")).unwrap();
    }
    run_table_in(
        &fx,
        vec![
            bypass("deny", "link secrets/key.pem x"),
            bypass("deny", "ln secrets/key.pem x"),
            bypass("ask", "link evil.sh .git/hooks/pre-commit"),
            bypass("ask", "ln evil.sh .git/hooks/pre-commit"),
            bypass("ask", "link -- evil.sh .git/hooks/pre-commit"),
            bypass("allow", "link evil.sh x"),
        ],
    )
    .await;
}

/// `rename` moves its file operands: util-linux's `rename FROM TO FILES…` (whose new names
/// are worked out, the whole path when FROM or TO holds a `/`, else the last component)
/// and Perl's `rename 's/…/…/' FILES…` (a literal substitution worked out; any other Perl
/// code names what cannot be seen). With the real util-linux program, `rename.ul evil.sh
/// .git/hooks/pre-commit evil.sh` writes the hook.
#[tokio::test]
async fn rename_moves_its_files_to_the_names_it_makes() {
    let fx = fixture();
    if installed("rename.ul") {
        assert!(real_bash(
            "rename.ul evil.sh .git/hooks/pre-commit evil.sh",
            &fx.proj,
            &fx.home
        ));
        assert!(fx.proj.join(".git/hooks/pre-commit").exists());
        std::fs::rename(
            fx.proj.join(".git/hooks/pre-commit"),
            fx.proj.join("evil.sh"),
        )
        .unwrap();
    }
    std::fs::write(fx.proj.join("a.htm"), "x").unwrap();
    std::fs::write(fx.proj.join("hooks-pre-commit"), "x").unwrap();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "rename evil.sh .git/hooks/pre-commit evil.sh"),
            bypass("ask", "rename.ul evil.sh .git/hooks/pre-commit evil.sh"),
            bypass("ask", "rename -v x .git x"),
            bypass("ask", "rename hooks- .git/hooks/ hooks-pre-commit"),
            bypass(
                "ask",
                "rename 's/evil.sh/.git\\/hooks\\/pre-commit/' evil.sh",
            ),
            bypass("ask", "rename 's|evil.sh|.git/hooks/pre-commit|' evil.sh"),
            bypass("ask", "rename -e 's/evil.sh/.git\\/hooks\\/x/' evil.sh"),
            // Perl code whose new names cannot be worked out: with path rules, asked.
            bypass("ask", "rename 'y/a-z/A-Z/' evil.sh"),
            bypass("ask", "rename '$_ = lc' evil.sh"),
            // A file moved away that a deny rule protects.
            bypass("deny", "rename key other secrets/key.pem"),
            bypass("deny", "rename 's/key/other/' secrets/key.pem"),
            // `-s` rewrites where a link leads (later writes through it land there): that
            // cannot be checked, so asked even where an allow rule names rename.
            bypass("ask", "rename -s a /home/u/.bashrc l"),
            bypass("ask", "rename --symlink a /home/u/.bashrc l"),
            case("ask", "Bash", "rename -s a /home/u/.bashrc l").allow(&["Bash(rename *)"]),
            // Everyday renames.
            bypass("allow", "rename .htm .html a.htm"),
            bypass("allow", "rename 's/\\.htm$/.html/' a.htm"),
            bypass("allow", "rename -n 's/htm/html/' *.htm"),
        ],
    )
    .await;
}

/// `openssl` reads the files named by `-in`, `-inkey`, `-kfile`, `-passin file:F`, … and
/// writes those named by `-out`, `-keyout`, …; an option it is not known to take is asked
/// about (its value checked as a write). With the real program, `openssl base64 -d -in
/// evil.b64 -out .git/hooks/pre-commit` writes the hook.
#[tokio::test]
async fn openssl_reads_its_in_options_and_writes_its_out_options() {
    let fx = fixture();
    if installed("openssl") {
        assert!(real_bash(
            "openssl base64 -d -in evil.b64 -out .git/hooks/pre-commit",
            &fx.proj,
            &fx.home
        ));
        assert_eq!(
            std::fs::read_to_string(fx.proj.join(".git/hooks/pre-commit")).unwrap(),
            "#!/bin/sh\necho pwned\n"
        );
        std::fs::remove_file(fx.proj.join(".git/hooks/pre-commit")).unwrap();
    }
    run_table_in(
        &fx,
        vec![
            bypass(
                "ask",
                "openssl base64 -d -in evil.b64 -out .git/hooks/pre-commit",
            ),
            bypass("ask", "openssl enc -d -a -in evil.b64 -out=.git/hooks/x"),
            bypass("ask", "openssl base64 -d --out .git/hooks/x -in evil.b64"),
            bypass("ask", "openssl req -new -keyout .git/hooks/x -out r.csr -nodes"),
            bypass("ask", "openssl base64 -frobnicate .git/hooks/x"),
            bypass("deny", "openssl base64 -in secrets/key.pem"),
            bypass("deny", "openssl rsa -in x.pem -passin file:secrets/key.pem"),
            bypass("deny", "openssl dgst -sha256 secrets/key.pem"),
            bypass("deny", "openssl sha256 secrets/key.pem"),
            bypass("deny", "openssl x509 -noout -text -in secrets/key.pem"),
            bypass("allow", "openssl base64 -d -in evil.b64 -out out.sh"),
            bypass("allow", "openssl rand -hex 16"),
            bypass(
                "allow",
                "openssl req -x509 -newkey rsa:2048 -nodes -keyout k.pem -out c.pem -days 365 -subj /CN=x",
            ),
            bypass("allow", "openssl x509 -in c.pem -noout -text"),
        ],
    )
    .await;
}

/// `uudecode -o F` writes F; without `-o` it writes the file its input names, which cannot
/// be seen (asked about when path rules exist); the files it is given are read.
#[tokio::test]
async fn uudecode_writes_its_output() {
    let fx = fixture();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "uudecode -o .git/hooks/pre-commit a.uu"),
            bypass("ask", "uudecode --output-file=.git/hooks/x a.uu"),
            bypass("ask", "uudecode a.uu"),
            bypass("deny", "uudecode -o x secrets/key.pem"),
            bypass("allow", "uudecode -o out.bin a.uu"),
        ],
    )
    .await;
}

/// `cpp IN OUT` and `cpp -o OUT IN` write OUT and read IN (with the real program, `cpp -P
/// secrets/key.pem` prints the key); so do the C compilers (`gcc -o F`): with the real
/// program, `gcc -o .git/hooks/pre-commit a.c` would write a hook.
#[tokio::test]
async fn cpp_and_the_c_compilers_read_their_inputs_and_write_their_output() {
    let fx = fixture();
    std::fs::write(fx.proj.join("secrets/key.pem"), "the key\n").unwrap();
    if installed("cpp") {
        let out = std::process::Command::new("cpp")
            .args(["-P", "secrets/key.pem"])
            .current_dir(&fx.proj)
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("the key"));
    }
    run_table_in(
        &fx,
        vec![
            bypass("ask", "cpp -o .git/hooks/pre-commit a.c"),
            bypass("ask", "cpp -P a.c .git/hooks/pre-commit"),
            bypass("ask", "cpp -P -o.git/hooks/x a.c"),
            bypass("ask", "cpp -MD -MF .git/hooks/x a.c"),
            bypass("deny", "cpp -P secrets/key.pem"),
            bypass("deny", "cpp -include secrets/key.pem a.c"),
            bypass("ask", "gcc -o .git/hooks/pre-commit a.c"),
            bypass("ask", "cc -O2 -Wall a.c -o .git/hooks/pre-commit"),
            bypass("ask", "clang -c a.c -o .git/hooks/x.o"),
            bypass("deny", "gcc -x c -E secrets/key.pem"),
            // The dependency file the preprocessor writes where its environment says.
            bypass("ask", "DEPENDENCIES_OUTPUT=.git/hooks/pre-commit cpp a.c"),
            bypass("allow", "cpp -P -DX=1 -I include a.c out.i"),
            bypass("allow", "gcc -O2 -Wall -std=c11 -c a.c -o a.o"),
            // Options that write files of their own (dumps, reports): not checked, asked.
            bypass("ask", "gcc -c a.c -fdump-tree-original=/home/u/.bashrc"),
            bypass("ask", "clang -c a.c -ftime-trace=.git/hooks/x"),
            bypass("ask", "gcc -c a.c -dumpdir .git/hooks/"),
            bypass("ask", "gcc -c a.c -fopt-info-missed=x.txt"),
            // Feature flags with a value that names no file stay allowed.
            bypass(
                "allow",
                "gcc -c a.c -fsanitize=address -fvisibility=hidden -g",
            ),
            bypass("allow", "cc a.c"),
        ],
    )
    .await;
}

/// `xmllint --output F` (`-o F`) writes F; its files, and its schema and DTD files, are
/// read.
#[tokio::test]
async fn xmllint_writes_its_output_and_reads_its_files() {
    let fx = fixture();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "xmllint --output .git/hooks/pre-commit a.xml"),
            bypass("ask", "xmllint --format -o .git/hooks/x a.xml"),
            bypass("ask", "xmllint -output .git/hooks/x a.xml"),
            bypass("deny", "xmllint secrets/key.pem"),
            bypass("deny", "xmllint --noout --schema secrets/key.pem a.xml"),
            bypass("allow", "xmllint --format --output out.xml a.xml"),
            bypass("allow", "xmllint --noout a.xml"),
        ],
    )
    .await;
}

/// `hd` is `hexdump -C`: it reads its files as hexdump does (and is read-only as hexdump
/// is); the binutils and the other readers read theirs; `objcopy`, `strip`, `ar` and
/// `ranlib` write what they change.
#[tokio::test]
async fn hd_the_binutils_and_other_readers_read_their_files() {
    let fx = fixture();
    run_table_in(
        &fx,
        vec![
            bypass("deny", "hd secrets/key.pem"),
            bypass("deny", "hexdump -C secrets/key.pem"),
            case("allow", "Bash", "hd README.md"),
            case("allow", "Bash", "cat README.md | hd"),
            bypass("deny", "dir secrets"),
            bypass("deny", "vdir secrets"),
            bypass("deny", "sha224sum secrets/key.pem"),
            bypass("deny", "sha384sum secrets/key.pem"),
            bypass("deny", "objdump -s secrets/key.pem"),
            bypass("deny", "readelf -a secrets/key.pem"),
            bypass("deny", "nm secrets/key.pem"),
            bypass("deny", "size secrets/key.pem"),
            bypass("deny", "objcopy -I binary -O binary secrets/key.pem out"),
            bypass("ask", "objcopy a.o .git/hooks/pre-commit"),
            bypass("ask", "objcopy --dump-section .text=.git/hooks/x a.o out.o"),
            bypass("deny", "objcopy --add-section .k=secrets/key.pem a.o out.o"),
            bypass("allow", "objcopy --strip-debug a.o b.o"),
            bypass("ask", "strip -o .git/hooks/pre-commit a.out"),
            bypass("ask", "strip .git/hooks/pre-commit"),
            bypass("allow", "strip -s a.out"),
            // A response file's options (`-o ~/.bashrc`) cannot be worked out: asked.
            bypass("ask", "strip @o.rsp a.out"),
            bypass("ask", "objcopy @o.rsp a.o b.o"),
            bypass("ask", "ranlib @o.rsp"),
            bypass("deny", "strip @secrets/key.pem a.out"),
            bypass("deny", "ar rc x.a secrets/key.pem"),
            bypass("ask", "ar rc .git/hooks/x a.o"),
            bypass("deny", "ar p secrets/key.pem"),
            bypass("ask", "ar x lib.a --output=.git/hooks"),
            bypass("allow", "ar rcs libx.a a.o"),
            bypass("allow", "ar t libx.a"),
            bypass("ask", "ranlib .git/hooks/x"),
        ],
    )
    .await;
}

/// A word bash expands as a glob lists the directory its fixed part names: `echo
/// secrets/*`, `printf '%s' secrets/*`, `echo OUTSIDE/*` and a `for` list are judged as an
/// `ls` of that directory (denied by a Read deny rule on it, asked about outside the working
/// directories, so refused in dontAsk mode), while everyday globs in the project stay
/// allowed and a glob that lists a directory that is not denied is judged as before.
#[tokio::test]
async fn a_glob_word_is_a_listing_of_its_directory() {
    let fx = fixture();
    std::fs::write(fx.proj.join("a.pyc"), "x").unwrap();
    std::fs::write(fx.proj.join("notes.txt"), "x").unwrap();
    let outside = "Read(//$O/**)";
    let dont_ask = |expect: &'static str, command: &str| {
        case(expect, "Bash", command)
            .mode("dontAsk")
            .deny(&[SECRETS, outside])
    };
    run_table_in(
        &fx,
        vec![
            dont_ask("deny", "echo $O/*"),
            dont_ask("deny", "echo secrets/*"),
            dont_ask("deny", "echo $O/*; echo secrets/*"),
            dont_ask("deny", "printf '%s\\n' secrets/*"),
            dont_ask("deny", "echo secrets/*.pem"),
            dont_ask("deny", "echo secrets/k?y.pem"),
            dont_ask("deny", "echo ~/.ssh/*"),
            dont_ask("deny", "ls -d secrets/*"),
            dont_ask("deny", "true secrets/*"),
            dont_ask("allow", "echo src/*"),
            dont_ask("allow", "echo *.txt"),
            dont_ask("allow", "echo 'secrets/*'"),
            dont_ask("allow", "echo secrets/\\*"),
            bypass("deny", "echo secrets/*"),
            bypass("deny", "for f in secrets/*; do echo \"$f\"; done"),
            bypass("deny", "git add secrets/*"),
            bypass("deny", "grep x secrets/*"),
            bypass("deny", "python3 x.py secrets/*"),
            bypass("deny", "sudo echo secrets/*"),
            bypass("deny", "cd secrets && echo *"),
            bypass("allow", "for f in *.txt; do echo \"$f\"; done"),
            bypass("allow", "echo $((2*3))"),
            // A glob in the project: as before.
            case("allow", "Bash", "echo src/*"),
            case("allow", "Bash", "cat src/*.rs"),
            case("ask", "Bash", "rm *.pyc"),
            case("allow", "Bash", "rm *.pyc").mode("acceptEdits"),
            case("allow", "Bash", "echo *"),
            case("ask", "Bash", "echo /usr/*"),
            // Only a file in the directory denied: listing it is not.
            case("allow", "Bash", "echo secrets/*").deny(&["Read(./secrets/key.pem)"]),
            case("allow", "Bash", "ls secrets").deny(&["Read(./secrets/key.pem)"]),
        ],
    )
    .await;
}

/// `Read(./**)` and `Edit(./**)` (and `./**/*`, `./*`) cover the cwd's tree, as `Read(.)`
/// and `Edit(./)` do, not every path on disk: a file outside the cwd (the additional
/// working directory, a system header) is judged without them. A bare `**` still applies
/// anywhere, as a pattern starting with `**/` does.
#[tokio::test]
async fn dot_slash_star_star_covers_the_cwd_only() {
    let fx = fixture();
    let read = |expect: &'static str, file: &str, rule: &str| {
        case(expect, "Read", file).deny(&[rule]).add_dir("$O")
    };
    let write = |expect: &'static str, file: &str, rule: &str| {
        case(expect, "Write", file)
            .mode("acceptEdits")
            .deny(&[rule])
            .add_dir("$O")
    };
    let header = "/usr/include/stdio.h";
    let mut cases = Vec::new();
    for rule in [
        "Read(./**)",
        "Read(./**/*)",
        "Read(./*)",
        "Read(.)",
        "Read(./)",
    ] {
        cases.push(read("deny", "$P/README.md", rule));
        cases.push(read("deny", "$P/src/main.rs", rule));
        cases.push(read("allow", "$O/notes.md", rule));
        if Path::new(header).exists() {
            cases.push(read("ask", header, rule));
        }
    }
    for rule in ["Edit(./**)", "Edit(./**/*)", "Edit(./)"] {
        cases.push(write("deny", "$P/new.txt", rule));
        cases.push(write("deny", "$P/src/new.rs", rule));
        cases.push(write("allow", "$O/new.txt", rule));
    }
    cases.push(read("deny", "$O/notes.md", "Read(**)"));
    cases.push(read("deny", "$O/notes.md", "Read(**/*.md)"));
    cases.push(
        case("deny", "Bash", "cat $O/notes.md")
            .mode("bypassPermissions")
            .deny(&["Read(**)"]),
    );
    cases.push(
        case("allow", "Bash", "cat $O/notes.md")
            .mode("bypassPermissions")
            .deny(&["Read(./**)"]),
    );
    run_table_in(&fx, cases).await;
}

/// A symlink's target is not changed by `ln -s` or `cp -s`, only the link's own path is
/// written: `ln -s /dev/null build.log` is allowed in bypass mode as `ln -sf /dev/stdout
/// access.log` is (with the real program, `/dev/null` is still the device after it), while
/// `rm /dev/null`, `mv F /dev/null` and a hard link of the device still ask.
#[tokio::test]
async fn a_device_as_a_symlink_target_is_no_reason_to_ask() {
    let fx = fixture();
    assert!(real_bash("ln -s /dev/null build.log", &fx.proj, &fx.home));
    assert_eq!(
        std::fs::read_link(fx.proj.join("build.log")).unwrap(),
        Path::new("/dev/null")
    );
    let plain = |expect: &'static str, command: &str| {
        case(expect, "Bash", command).mode("bypassPermissions")
    };
    run_table_in(
        &fx,
        vec![
            plain("allow", "ln -s /dev/null build.log"),
            plain("allow", "ln -sf /dev/null build.log"),
            plain("allow", "ln --symbolic /dev/null x.log"),
            plain("allow", "ln -sf /dev/stdout access.log"),
            plain("allow", "cp -s /dev/null x"),
            plain("allow", "ln -s /dev/tty t"),
            plain("allow", "ln -s /dev/null"),
            plain("ask", "cd .git/hooks && ln -s /dev/null"),
            plain("ask", "ln -s /dev/null /dev/tty"),
            plain("ask", "rm /dev/null"),
            plain("ask", "mv evil.sh /dev/null"),
            plain("ask", "ln /dev/null x"),
            plain("ask", "link /dev/null x"),
            plain("ask", "ln -s /dev/null .git/hooks/pre-commit"),
            plain("ask", "ln -s ~/.bashrc x"),
        ],
    )
    .await;
}
