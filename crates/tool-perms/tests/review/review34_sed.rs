//! Session 34 on sed scripts that run commands: whether a sed script runs a shell command
//! (the `e` command, the `e` flag of `s`) is read by the same reader that finds the files a
//! script names, as GNU sed 4.9 reads a script. The loose scan it replaced took a `[` in a
//! replacement (`s/x/[/`) for a bracket expression running to the script's end, and so
//! missed the `e` command after it: `Bash(sed:*)` allowed `sed 's/x/[/;e rm -rf …' f`.

use crate::common::{Fixture, case, run_table_in};

/// A script that runs a command is asked even when `Bash(sed:*)` allows sed: the rules
/// cannot be matched against what the script runs. Checked against GNU sed 4.9: `echo x |
/// sed 's/x/[/;e echo RAN'` prints `RAN`.
#[tokio::test]
async fn an_allow_rule_for_sed_does_not_allow_a_script_that_runs_a_command() {
    let fx = Fixture::new();
    std::fs::write(fx.proj.join("f"), "x\n").unwrap();
    let allow = ["Bash(sed:*)"];
    let deny = ["Bash(rm:*)"];
    let mut cases = Vec::new();
    for command in [
        "sed 's/x/[/;e rm -rf /tmp/x' f",
        "sed 'y/x/[/;e rm -rf /tmp/x' f",
        "sed -e 's/x/[/' -e 'e rm -rf /tmp/x' f",
        "sed 's/x/[/e' f",
        "sed 's/x/y/;e rm -rf /tmp/x' f",
        // A script GNU sed 4.9 and older versions read differently (`b#`): not taken apart.
        "sed 'b#x\ne rm -rf /tmp/x' f",
    ] {
        cases.push(case("ask", "Bash", command).allow(&allow).deny(&deny));
    }
    // Scripts that run nothing stay allowed by the rule.
    for command in [
        "sed 's/x/[/' f",
        "sed 's/x/[y]/g;p' f",
        "sed -n '/[e]/p' f",
        "sed 'a e rm' f",
    ] {
        cases.push(case("allow", "Bash", command).allow(&allow).deny(&deny));
    }
    run_table_in(&fx, cases).await;
}
