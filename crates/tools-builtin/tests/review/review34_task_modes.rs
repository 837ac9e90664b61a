//! Session 34, the task list's files: under a umask of 000 the `tasks` directory and a
//! list's directory were made world-writable (0777) and its files world-readable (0666),
//! while every other file of a session that may hold the model's words is the owner's alone.
//! The directories the store creates are 0700 now, whatever the umask (which the test sets
//! in a child process of its own, where it runs alone: the umask is the process's, and the
//! other tests of the `review` binary run beside it).

use std::os::unix::fs::PermissionsExt as _;

use tools_builtin::task_list::{NewTask, TaskListStore as TaskStore};

/// Set in the child process that runs the test under a umask of 000.
const CHILD: &str = "TW_REVIEW34_TASK_MODES_CHILD";

#[test]
fn the_directories_a_task_list_creates_are_private_whatever_the_umask() {
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                // Its path in the `review` binary, this file being its module
                // `review34_task_modes`.
                "review34_task_modes::the_directories_a_task_list_creates_are_private_whatever_the_umask",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        crate::common::assert_rerun_passed(&out);
        return;
    }
    nix::sys::stat::umask(nix::sys::stat::Mode::empty());
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join(".claude/tasks");
    let store = TaskStore::new(&root);
    let task = store
        .create(
            "session-1",
            NewTask {
                subject: "rotate the key".into(),
                description: "the key is sk-ant-SECRET".into(),
                ..NewTask::default()
            },
        )
        .unwrap();
    let mode =
        |p: &std::path::Path| -> u32 { std::fs::metadata(p).unwrap().permissions().mode() & 0o777 };
    for dir in [
        home.path().join(".claude"),
        root.clone(),
        store.list_dir("session-1"),
    ] {
        assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    }
    // The task itself is there, behind the private directory.
    let file = store
        .list_dir("session-1")
        .join(format!("{}.json", task.id));
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("sk-ant-SECRET")
    );
    // A directory that exists keeps its mode: the store does not change the user's choice.
    let shared = home.path().join("shared-tasks");
    std::fs::create_dir_all(shared.join("team")).unwrap();
    std::fs::set_permissions(shared.join("team"), std::fs::Permissions::from_mode(0o750)).unwrap();
    TaskStore::new(&shared)
        .create(
            "team",
            NewTask {
                subject: "s".into(),
                description: "d".into(),
                ..NewTask::default()
            },
        )
        .unwrap();
    assert_eq!(mode(&shared.join("team")), 0o750);
}
