//! Cron tools (Cargo feature `agent-triggers`): [`CronCreate`], [`CronList`] and
//! [`CronDelete`] schedule prompts on standard 5-field cron expressions, kept by a
//! [`CronStore`] that a host loop polls with [`CronStore::due_jobs`].
//!
//! # Semantics (Claude Code's, where it has them)
//!
//! - Expressions have five fields, `minute hour day-of-month month day-of-week`, parsed by
//!   the `croner` crate (lists, ranges, steps, `L`/`W`/`#`, `?`, and the
//!   `@hourly`/`@daily`/`@weekly`/`@monthly`/`@yearly` shortcuts). Claude Code's tool text
//!   shows numeric fields only; as an extension, month names (`JAN`-`DEC`) and weekday names
//!   (`SUN`-`SAT`) are accepted too, in any case, but only in their own field: a name anywhere else (`0 9 * MON
//!   *`) is refused with the field and the value, since croner would silently read it as a
//!   number of the other kind. Day-of-month and day-of-week combine as in Vixie cron: a field
//!   that starts with `*` (`*`, `*/2`) is unrestricted and the other one alone decides
//!   (`0 0 15 * */1` fires on the 15th only); when both are restricted, a day matching either
//!   fires (see [`parse_cron`]). They are evaluated in the
//!   machine's **local time zone** by default, as Claude Code does; a store can use UTC
//!   instead ([`CronTimeZone`]). An expression that never matches (`0 0 30 2 *`) is refused.
//! - `recurring` (default true) fires on every match; a one-shot job (`recurring: false`)
//!   fires once at the next match and is then removed. A recurring job expires after
//!   [`DEFAULT_RECURRING_MAX_AGE`] (seven days, as Claude Code): it fires one last time and is
//!   removed (configurable with [`CronStore::with_recurring_max_age`]; a job stored with
//!   `permanent: true` is exempt). After firing, a recurring job's next time is computed from
//!   the poll time, so a host that was asleep gets one fire, not a burst of missed ones.
//! - `durable` (default false): a session-only job lives in the store, which lives in the
//!   session's app state; a durable job lives in the store's JSON file, default
//!   `<project>/.claude/scheduled_tasks.json` (Claude Code's path and format:
//!   `{"tasks": [{id, cron, prompt, createdAt, lastFiredAt?, recurring?, permanent?}]}`,
//!   times in epoch milliseconds). The file holds durable jobs only.
//! - Several sessions (stores, in one process or several) may share the file. It is read
//!   again at every operation, so each sees the others' jobs, and every change (create,
//!   delete, a fire) is made under an exclusive `flock` of `<file>.lock` beside it (as the
//!   task list's changes are): the file is read again under the lock, only the entries the
//!   change is about are added, removed or updated (by id; every other entry is written back
//!   as it was, in its place), and the file is written atomically (temporary file in the
//!   same directory, fsync, rename) before the lock is released. A due durable job is
//!   claimed that way ([`CronStore::due_jobs`]): the store that records its fire (or removes
//!   a one-shot job) returns it, the others find it no longer due, so it fires once across
//!   sessions.
//! - A file that cannot be parsed is reported with its path and the parser's reason on every
//!   operation until it is fixed or removed; it is never overwritten. One bad entry (a field
//!   missing, an expression that does not parse or never fires, an id seen before) does not
//!   stop the others: it is not scheduled, [`CronStore::unusable`] and CronList report it
//!   with the reason, every rewrite of the file keeps it as it was, and CronDelete with its
//!   id removes it.
//! - At most [`MAX_JOBS`] jobs per store (its session-only jobs and the file's). Ids are
//!   eight hexadecimal characters.
//!
//! The host installs a store with [`install_cron_store`] (keeping a clone to poll); without
//! one, the tools create one for the context's working directory on first use. Only a host
//! that fires the due jobs should offer these tools: elsewhere CronCreate would tell the
//! model when a job fires next, and nothing would fire it (`toolwright`'s own commands, none
//! of which polls, leave them out).
use std::borrow::Cow;
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{Local, SecondsFormat, TimeZone, Utc};
use croner::Cron;
use nix::fcntl::Flock;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    AppState, MaxResultSize, ProgressSender, ToolError, ToolResult, ToolResultContent,
    ToolUseContext, TypedTool, ValidationError, async_trait,
};

use crate::fsutil;

/// The most jobs one store holds (Claude Code's limit).
pub const MAX_JOBS: usize = 50;

/// How long a recurring job lives before its last fire (seven days).
pub const DEFAULT_RECURRING_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// The durable file's path inside a project directory.
pub const DURABLE_FILE: &str = ".claude/scheduled_tasks.json";

/// The time zone cron expressions are evaluated in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CronTimeZone {
    /// The machine's local time zone (Claude Code's choice; the default).
    #[default]
    Local,
    /// UTC.
    Utc,
}

impl CronTimeZone {
    fn label(self) -> &'static str {
        match self {
            Self::Local => "local time",
            Self::Utc => "UTC",
        }
    }
}

/// Why a cron operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CronError {
    /// The expression does not parse.
    #[error(
        "Invalid cron expression \"{expr}\": {reason}. Use 5 fields: minute hour day-of-month month day-of-week (e.g. \"*/5 * * * *\")"
    )]
    InvalidExpression {
        /// The expression as given.
        expr: String,
        /// The parser's reason.
        reason: String,
    },
    /// The expression parses but matches no time.
    #[error("Cron expression \"{expr}\" never fires (no matching date)")]
    NeverFires {
        /// The expression.
        expr: String,
    },
    /// The store already holds [`MAX_JOBS`] jobs.
    #[error("Too many scheduled jobs (the limit is {max}); delete one with CronDelete first")]
    TooManyJobs {
        /// The limit.
        max: usize,
    },
    /// No job with this id.
    #[error("No scheduled job with id \"{id}\"; CronList shows the current ids")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// The durable file cannot be parsed; it is left untouched.
    #[error(
        "The scheduled jobs file {} is not valid ({reason}); fix or remove it, it was left untouched",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// Reading or writing the durable file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

impl From<CronError> for ToolError {
    fn from(e: CronError) -> Self {
        ToolError::msg(e.to_string())
    }
}

/// The five fields' names, in order.
const FIELD_NAMES: [&str; 5] = ["minute", "hour", "day-of-month", "month", "day-of-week"];

/// Month names, in the month field only.
const MONTH_NAMES: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// Weekday names, in the day-of-week field only.
const WEEKDAY_NAMES: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// Refuses a word (a run of letters) that does not belong in its field. `croner` lower-cases
/// the whole expression and replaces month and weekday names wherever they occur, so `MON`
/// in the month field would be January and `JAN` in the day-of-week field Monday; a name
/// glued to a number (`1jan`) would become another number. A name must stand alone (between
/// `,` and `-`, or before `#` and `/`) in its own field; the other words croner knows (`L`
/// and `W` in the day fields) are left to it.
fn check_words(fields: &[&str]) -> Result<(), String> {
    for (index, field) in fields.iter().enumerate() {
        let name = FIELD_NAMES[index];
        let bytes = field.as_bytes();
        let mut start = 0;
        while start < bytes.len() {
            if !bytes[start].is_ascii_alphabetic() {
                start += 1;
                continue;
            }
            let end = (start..bytes.len())
                .find(|&i| !bytes[i].is_ascii_alphabetic())
                .unwrap_or(bytes.len());
            let word = &field[start..end];
            let lower = word.to_ascii_lowercase();
            let before = start.checked_sub(1).map(|i| bytes[i]);
            let after = bytes.get(end).copied();
            let alone = matches!(before, None | Some(b',' | b'-'))
                && matches!(after, None | Some(b',' | b'-' | b'#' | b'/'));
            // The token the word is part of, to name it in the error.
            let token_start = field[..start]
                .rfind([',', '-', '/', '#'])
                .map_or(0, |i| i + 1);
            let token_end = field[end..]
                .find([',', '-', '/', '#'])
                .map_or(field.len(), |i| end + i);
            let token = &field[token_start..token_end];
            let is_month = MONTH_NAMES.contains(&lower.as_str());
            let is_weekday = WEEKDAY_NAMES.contains(&lower.as_str());
            let own_field = (is_month && index == 3) || (is_weekday && index == 4);
            if own_field && alone {
                start = end;
                continue;
            }
            let flag_letters = match index {
                2 => lower.bytes().all(|b| b == b'l' || b == b'w'),
                4 => lower == "l",
                _ => false,
            };
            if !is_month && !is_weekday && flag_letters {
                start = end;
                continue;
            }
            let accepts = match index {
                3 => " (months are 1-12 or JAN-DEC)",
                4 => " (days of the week are 0-7 or SUN-SAT)",
                2 => " (days of the month are 1-31, L or a day with W)",
                _ => " (only numbers go there)",
            };
            return Err(if own_field {
                format!("the {name} field has \"{token}\": a name must stand on its own{accepts}")
            } else if is_month {
                format!("the {name} field has \"{token}\", a month name{accepts}")
            } else if is_weekday {
                format!("the {name} field has \"{token}\", a day-of-week name{accepts}")
            } else {
                format!("the {name} field has \"{token}\", which it does not accept{accepts}")
            });
        }
    }
    Ok(())
}

/// Parses a 5-field cron expression (or an `@daily`-style shortcut).
///
/// Month names (`JAN`-`DEC`) are accepted in the month field only and weekday names
/// (`SUN`-`SAT`) in the day-of-week field only, in any case; anywhere else they are refused
/// with the field and the value. Day-of-month and day-of-week combine as in Vixie cron: when
/// either field starts with `*` (`*`, `*/2`) it is unrestricted and the other one alone
/// decides (`0 0 15 * */1` fires on the 15th only); when both are restricted, a day matching
/// either fires.
pub fn parse_cron(expr: &str) -> Result<Cron, CronError> {
    let trimmed = expr.trim();
    let invalid = |reason: String| CronError::InvalidExpression {
        expr: expr.to_owned(),
        reason,
    };
    if trimmed.starts_with('@') {
        // croner's own text for an unknown nickname speaks of six fields, which are refused
        // here: say which nicknames there are instead (`@reboot` has no time to fire at).
        const NICKNAMES: [&str; 6] = [
            "@yearly",
            "@annually",
            "@monthly",
            "@weekly",
            "@daily",
            "@hourly",
        ];
        if !NICKNAMES.iter().any(|n| n.eq_ignore_ascii_case(trimmed)) {
            return Err(invalid(format!(
                "`{trimmed}` is not a schedule here: use 5 fields (minute hour day-of-month \
                 month day-of-week) or one of {}",
                NICKNAMES.join(", ")
            )));
        }
        return Cron::new(trimmed)
            .parse()
            .map_err(|e| invalid(e.to_string().trim_end_matches('.').to_owned()));
    }
    let mut fields: Vec<&str> = trimmed.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(invalid(format!(
            "expected 5 fields, found {}",
            fields.len()
        )));
    }
    check_lists(&fields).map_err(invalid)?;
    check_words(&fields).map_err(invalid)?;
    // `7L` (the last Sunday, 7 being Sunday as 0 is) is croner's `0L`.
    let weekdays = fields[4]
        .split(',')
        .map(|item| {
            if item.eq_ignore_ascii_case("7l") {
                "0L"
            } else {
                item
            }
        })
        .collect::<Vec<_>>()
        .join(",");
    fields[4] = &weekdays;
    let mut cron = Cron::new(&fields.join(" "));
    // croner treats a day field as unrestricted only when it is exactly `*` (or `?`), and
    // otherwise ORs the two. Vixie cron also counts a field starting with `*` as
    // unrestricted; then the days must match both fields (the unrestricted one matches every
    // day it allows), which croner's AND mode gives. When either is exactly `*`, croner
    // ignores the mode and lets the other one decide, the same result.
    let star = |f: &str| f.starts_with(['*', '?']);
    if star(fields[2]) || star(fields[4]) {
        cron.with_dom_and_dow();
    }
    cron.parse()
        .map_err(|e| invalid(e.to_string().trim_end_matches('.').to_owned()))
}

/// The ranges of the five fields, in order.
const FIELD_RANGES: [(u32, u32); 5] = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)];

/// The shape of each field's list, before croner reads it: no empty item (`1,,2`, a
/// trailing `,`), no sign (`+5`), numbers within the field's range (croner's "Number out of
/// bounds" names neither), steps of at least 1, and `L` in the day-of-week field only after a
/// day (`5L`, the last Friday).
fn check_lists(fields: &[&str]) -> Result<(), String> {
    for (index, field) in fields.iter().enumerate() {
        let name = FIELD_NAMES[index];
        let (low, high) = FIELD_RANGES[index];
        for item in field.split(',') {
            if item.is_empty() {
                return Err(format!(
                    "the {name} field \"{field}\" has an empty item in its list"
                ));
            }
            if item.starts_with('-') || item.contains('+') {
                return Err(format!(
                    "the {name} field \"{field}\" has a sign in \"{item}\": write plain numbers"
                ));
            }
            if index == 4 && item.eq_ignore_ascii_case("l") {
                return Err(
                    "`L` in the day-of-week field needs a day before it (\"5L\": the last Friday of the month)"
                        .to_owned(),
                );
            }
            let (range, step) = match item.split_once('/') {
                Some((range, step)) => (range, Some(step)),
                None => (item, None),
            };
            if let Some(step) = step
                && let Ok(n) = step.parse::<u32>()
                && n == 0
            {
                return Err(format!(
                    "the {name} field \"{field}\" has a step of 0 in \"{item}\""
                ));
            }
            // The numbers of the range part (`#` gives the week in the day-of-week field).
            let values = range.split('#').next().unwrap_or(range);
            for number in values.split('-') {
                let digits = number.trim_end_matches(['L', 'l', 'W', 'w']);
                if let Ok(n) = digits.parse::<u32>()
                    && !(low..=high).contains(&n)
                {
                    return Err(format!(
                        "{n} is out of range in the {name} field \"{field}\" ({name} values are {low}-{high})"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A job to schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCronJob {
    /// The cron expression.
    pub cron: String,
    /// The prompt to run at each fire.
    pub prompt: String,
    /// Fire on every match (true) or once (false).
    pub recurring: bool,
    /// Also keep the job in the durable file.
    pub durable: bool,
}

/// A scheduled job, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronJob {
    /// The id (eight hexadecimal characters).
    pub id: String,
    /// The cron expression.
    pub cron: String,
    /// The prompt.
    pub prompt: String,
    /// Whether it fires on every match.
    pub recurring: bool,
    /// Whether it is kept in the durable file.
    pub durable: bool,
    /// Whether it is exempt from expiry (set only in the file).
    pub permanent: bool,
    /// When it was created.
    pub created_at: SystemTime,
    /// When it last fired, if it has.
    pub last_fired_at: Option<SystemTime>,
    /// When it fires next.
    pub next_fire_at: SystemTime,
}

/// A job whose time has come, returned by [`CronStore::due_jobs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueJob {
    /// The job's id.
    pub id: String,
    /// The cron expression.
    pub cron: String,
    /// The prompt to run.
    pub prompt: String,
    /// Whether the job is recurring.
    pub recurring: bool,
    /// Whether the job is durable.
    pub durable: bool,
    /// The fire time that was reached (at or before the poll time).
    pub scheduled_for: SystemTime,
    /// The job's next fire time; `None` when it was removed (one-shot, or expired).
    pub next_fire_at: Option<SystemTime>,
    /// True when a recurring job reached its maximum age and was removed after this fire.
    pub expired: bool,
}

#[derive(Debug, Clone)]
struct Job {
    id: String,
    cron: String,
    schedule: Cron,
    prompt: String,
    recurring: bool,
    durable: bool,
    permanent: bool,
    created_ms: i64,
    last_fired_ms: Option<i64>,
    next_ms: i64,
}

impl Job {
    fn snapshot(&self) -> CronJob {
        CronJob {
            id: self.id.clone(),
            cron: self.cron.clone(),
            prompt: self.prompt.clone(),
            recurring: self.recurring,
            durable: self.durable,
            permanent: self.permanent,
            created_at: from_ms(self.created_ms),
            last_fired_at: self.last_fired_ms.map(from_ms),
            next_fire_at: from_ms(self.next_ms),
        }
    }
}

/// One entry of the durable file (Claude Code's format).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileTask {
    id: String,
    cron: String,
    prompt: String,
    created_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_fired_at: Option<i64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    recurring: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    permanent: bool,
}

/// The durable file as read: entries stay raw until each is checked on its own.
#[derive(Debug, Default, Serialize, Deserialize)]
struct CronFile {
    /// Absent in a file with no jobs (`{}`), as an empty list.
    #[serde(default)]
    tasks: Vec<serde_json::Value>,
}

/// An entry of the durable file that is not scheduled, and why (see [`CronStore::unusable`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnusableJob {
    /// The entry's `id`, when it has a string one.
    pub id: Option<String>,
    /// What is wrong with it.
    pub reason: String,
}

fn to_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    }
}

fn from_ms(ms: i64) -> SystemTime {
    let d = Duration::from_millis(ms.unsigned_abs());
    if ms >= 0 {
        UNIX_EPOCH + d
    } else {
        UNIX_EPOCH - d
    }
}

/// The first match of `schedule` strictly after `after_ms`, in `tz`.
fn next_after(schedule: &Cron, tz: CronTimeZone, after_ms: i64) -> Option<i64> {
    // Cron has whole-second (here whole-minute) resolution: search from the second that
    // contains `after_ms`, exclusive, so the result is always later than `after_ms` (in the
    // hour a clock turned back repeats too: see the test).
    let secs = after_ms.div_euclid(1000);
    match tz {
        CronTimeZone::Utc => {
            let t = Utc.timestamp_opt(secs, 0).single()?;
            schedule
                .find_next_occurrence(&t, false)
                .ok()
                .map(|d| d.timestamp_millis())
        }
        CronTimeZone::Local => {
            let t = Local.timestamp_opt(secs, 0).single()?;
            schedule
                .find_next_occurrence(&t, false)
                .ok()
                .map(|d| d.timestamp_millis())
        }
    }
}

/// `t` as RFC 3339 in `tz`, to the second.
pub fn format_time(t: SystemTime, tz: CronTimeZone) -> String {
    let ms = to_ms(t);
    let formatted = match tz {
        CronTimeZone::Utc => Utc
            .timestamp_millis_opt(ms)
            .single()
            .map(|d| d.to_rfc3339_opts(SecondsFormat::Secs, true)),
        CronTimeZone::Local => Local
            .timestamp_millis_opt(ms)
            .single()
            .map(|d| d.to_rfc3339_opts(SecondsFormat::Secs, true)),
    };
    formatted.unwrap_or_else(|| format!("{ms} ms after the epoch"))
}

static ID_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A new job id, for which `taken` is false.
fn new_id(taken: impl Fn(&str) -> bool) -> String {
    loop {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(ID_COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_i64(to_ms(SystemTime::now()));
        h.write_u32(std::process::id());
        let id = format!("{:08x}", h.finish() & 0xffff_ffff);
        if !taken(&id) {
            return id;
        }
    }
}

/// The `id` of a raw entry of the durable file, when it has a string one.
fn entry_id(entry: &serde_json::Value) -> Option<&str> {
    entry.get("id").and_then(serde_json::Value::as_str)
}

/// What a job's fire does: the [`DueJob`] to hand out, and the job's next fire time
/// (`None`: it is removed).
fn fire(
    job: &Job,
    tz: CronTimeZone,
    max_age_ms: Option<i64>,
    now_ms: i64,
) -> (DueJob, Option<i64>) {
    let expired = job.recurring
        && !job.permanent
        && max_age_ms.is_some_and(|age| now_ms.saturating_sub(job.created_ms) >= age);
    let next = if job.recurring && !expired {
        next_after(&job.schedule, tz, now_ms)
    } else {
        None
    };
    let due = DueJob {
        id: job.id.clone(),
        cron: job.cron.clone(),
        prompt: job.prompt.clone(),
        recurring: job.recurring,
        durable: job.durable,
        scheduled_for: from_ms(job.next_ms),
        next_fire_at: next.map(from_ms),
        expired,
    };
    (due, next)
}

/// The durable file as read at one moment.
#[derive(Debug, Default)]
struct DurableFile {
    /// Every entry, raw, in file order: a rewrite keeps each as it is unless it changes.
    entries: Vec<serde_json::Value>,
    /// The entries that are jobs, each with its index in `entries`.
    jobs: Vec<(usize, Job)>,
    /// The entries that are not, in file order.
    unusable: Vec<UnusableJob>,
}

impl DurableFile {
    /// Whether `id` is the id of an entry (a job or not) or of a job in `session`.
    fn taken(&self, session: &[Job], id: &str) -> bool {
        session.iter().any(|j| j.id == id) || self.entries.iter().any(|e| entry_id(e) == Some(id))
    }
}

/// An exclusive `flock` on the durable file's lock file, held while a change to the file is
/// made (read again, changed, written), as the task list's changes are (`task_list.rs`): the
/// file itself cannot carry the lock, since each atomic write replaces it with a new file.
#[derive(Debug)]
struct FileLock {
    _lock: Flock<File>,
}

/// Turns an I/O error on `path` into a [`CronError`].
fn io_err(path: &Path) -> impl FnOnce(io::Error) -> CronError {
    let path = path.to_path_buf();
    move |source| CronError::Io { path, source }
}

/// The lock file of the durable file `path`: `<path>.lock`.
fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(OsString::from).unwrap_or_default();
    name.push(".lock");
    path.with_file_name(name)
}

#[derive(Debug)]
struct State {
    path: PathBuf,
    tz: CronTimeZone,
    max_age: Option<Duration>,
    /// The session-only jobs (never in the file).
    session: Vec<Job>,
    /// The order this store first saw each job in (its own and the file's), for listing.
    order: HashMap<String, u64>,
    next_order: u64,
    /// The unusable entries already reported in the log (each is reported once).
    reported: HashSet<(Option<String>, String)>,
}

impl State {
    /// Reads the durable file as it is now (a missing file has no entries). A file that
    /// cannot be parsed is an error, every time until it is fixed or removed.
    fn read_file(&mut self) -> Result<DurableFile, CronError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(DurableFile::default()),
            Err(source) => {
                return Err(CronError::Io {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        let file: CronFile = serde_json::from_slice(&bytes).map_err(|e| CronError::Corrupt {
            path: self.path.clone(),
            reason: e.to_string(),
        })?;
        let mut read = DurableFile {
            entries: file.tasks,
            ..DurableFile::default()
        };
        for (index, raw) in read.entries.iter().enumerate() {
            match self.job_from_entry(raw, &read.jobs, &read.unusable) {
                Ok(job) => read.jobs.push((index, job)),
                Err(reason) => {
                    let id = entry_id(raw).map(str::to_owned);
                    if self.reported.insert((id.clone(), reason.clone())) {
                        tracing::warn!(
                            path = %self.path.display(),
                            id = id.as_deref().unwrap_or(""),
                            "scheduled job not loaded: {reason}"
                        );
                    }
                    read.unusable.push(UnusableJob { id, reason });
                }
            }
        }
        Ok(read)
    }

    /// The job an entry of the durable file describes, or what is wrong with it. `loaded`
    /// and `unusable` are the entries before it (an id may appear once).
    fn job_from_entry(
        &self,
        raw: &serde_json::Value,
        loaded: &[(usize, Job)],
        unusable: &[UnusableJob],
    ) -> Result<Job, String> {
        let task = FileTask::deserialize(raw).map_err(|e| format!("not a job entry: {e}"))?;
        let seen = loaded.iter().any(|(_, j)| j.id == task.id)
            || unusable.iter().any(|u| u.id.as_ref() == Some(&task.id));
        if seen {
            return Err(format!("job id \"{}\" appears twice", task.id));
        }
        let schedule = parse_cron(&task.cron).map_err(|e| e.to_string())?;
        let from = task.last_fired_at.unwrap_or(task.created_at);
        let next_ms = next_after(&schedule, self.tz, from)
            .ok_or_else(|| format!("cron expression \"{}\" never fires", task.cron))?;
        Ok(Job {
            id: task.id,
            cron: task.cron,
            schedule,
            prompt: task.prompt,
            recurring: task.recurring,
            durable: true,
            permanent: task.permanent,
            created_ms: task.created_at,
            last_fired_ms: task.last_fired_at,
            next_ms,
        })
    }

    /// Writes `entries` to the durable file, atomically. Call with the lock held.
    fn write_file(
        &self,
        entries: Vec<serde_json::Value>,
        _lock: &FileLock,
    ) -> Result<(), CronError> {
        let io_err = io_err(&self.path);
        let mut bytes = match serde_json::to_vec_pretty(&CronFile { tasks: entries }) {
            Ok(bytes) => bytes,
            Err(e) => return Err(io_err(io::Error::other(e))),
        };
        bytes.push(b'\n');
        fsutil::atomic_write(&self.path, &bytes).map_err(io_err)
    }

    /// The listing position of `id` (given on first sight).
    fn order_of(&mut self, id: &str) -> u64 {
        if let Some(&n) = self.order.get(id) {
            return n;
        }
        let n = self.next_order;
        self.next_order += 1;
        self.order.insert(id.to_owned(), n);
        n
    }
}

/// The scheduled jobs of a session: session-only ones in memory, durable ones in a JSON
/// file that other sessions in the same project may share. Cheap to clone (clones share the
/// jobs). See the [module docs](self).
#[derive(Debug, Clone)]
pub struct CronStore {
    /// The durable file (also in `state`; here to take its lock without the state's
    /// mutex).
    path: Arc<Path>,
    state: Arc<Mutex<State>>,
}

impl CronStore {
    /// A store whose durable jobs live in `path` (read at every operation, changed under the
    /// lock file `<path>.lock`).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path: PathBuf = path.into();
        Self {
            path: Arc::from(path.as_path()),
            state: Arc::new(Mutex::new(State {
                path,
                tz: CronTimeZone::Local,
                max_age: Some(DEFAULT_RECURRING_MAX_AGE),
                session: Vec::new(),
                order: HashMap::new(),
                next_order: 0,
                reported: HashSet::new(),
            })),
        }
    }

    /// A store for a project: durable jobs in `<project_dir>/.claude/scheduled_tasks.json`.
    pub fn for_project(project_dir: &Path) -> Self {
        Self::new(project_dir.join(DURABLE_FILE))
    }

    /// Evaluates expressions in `tz` (default [`CronTimeZone::Local`]).
    pub fn with_time_zone(self, tz: CronTimeZone) -> Self {
        self.lock().tz = tz;
        self
    }

    /// Sets how long a recurring job lives; `None` keeps recurring jobs until deleted.
    pub fn with_recurring_max_age(self, max_age: Option<Duration>) -> Self {
        self.lock().max_age = max_age;
        self
    }

    /// The durable file.
    pub fn path(&self) -> PathBuf {
        self.path.to_path_buf()
    }

    /// The time zone expressions are evaluated in.
    pub fn time_zone(&self) -> CronTimeZone {
        self.lock().tz
    }

    /// The recurring-job lifetime.
    pub fn recurring_max_age(&self) -> Option<Duration> {
        self.lock().max_age
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the exclusive lock for changing the durable file (creating its directory if
    /// needed), waiting while another store (in this process or another) holds it. Always
    /// taken before the state's mutex, never while holding it: a wait for another session
    /// must not hold up what only needs the state (the time zone, session-only jobs).
    fn lock_file(&self) -> Result<FileLock, CronError> {
        let lock_path = lock_path(&self.path);
        let lock = crate::fsutil::lock_exclusive(&lock_path).map_err(io_err(&lock_path))?;
        Ok(FileLock { _lock: lock })
    }

    /// Schedules a job, its first fire being the first match after `now`. A durable job is
    /// added to the durable file as it is at that moment (under its lock), keeping every
    /// entry other sessions wrote.
    pub fn create(&self, job: NewCronJob, now: SystemTime) -> Result<CronJob, CronError> {
        let schedule = parse_cron(&job.cron)?;
        let lock = if job.durable {
            Some(self.lock_file()?)
        } else {
            None
        };
        let mut state = self.lock();
        let mut file = state.read_file()?;
        if state.session.len() + file.jobs.len() >= MAX_JOBS {
            return Err(CronError::TooManyJobs { max: MAX_JOBS });
        }
        let now_ms = to_ms(now);
        let next_ms =
            next_after(&schedule, state.tz, now_ms).ok_or_else(|| CronError::NeverFires {
                expr: job.cron.clone(),
            })?;
        let new = Job {
            id: new_id(|id| file.taken(&state.session, id)),
            cron: job.cron.trim().to_owned(),
            schedule,
            prompt: job.prompt,
            recurring: job.recurring,
            durable: job.durable,
            permanent: false,
            created_ms: now_ms,
            last_fired_ms: None,
            next_ms,
        };
        let snapshot = new.snapshot();
        if let Some(lock) = &lock {
            let task = FileTask {
                id: new.id.clone(),
                cron: new.cron.clone(),
                prompt: new.prompt.clone(),
                created_at: new.created_ms,
                last_fired_at: None,
                recurring: new.recurring,
                permanent: false,
            };
            let value =
                serde_json::to_value(task).map_err(|e| io_err(&state.path)(io::Error::other(e)))?;
            file.entries.push(value);
            state.write_file(file.entries, lock)?;
        } else {
            state.session.push(new);
        }
        state.order_of(&snapshot.id);
        Ok(snapshot)
    }

    /// Every job: the durable ones as the file has them now (including other sessions'),
    /// and this session's own, in creation order (jobs created in the same millisecond in
    /// the order this store first saw them).
    pub fn list(&self) -> Result<Vec<CronJob>, CronError> {
        let mut state = self.lock();
        let file = state.read_file()?;
        let snapshots: Vec<CronJob> = (file.jobs.iter().map(|(_, j)| j))
            .chain(&state.session)
            .map(Job::snapshot)
            .collect();
        let mut jobs: Vec<((SystemTime, u64), CronJob)> = snapshots
            .into_iter()
            .map(|j| ((j.created_at, state.order_of(&j.id)), j))
            .collect();
        // Forget the jobs that are gone.
        state
            .order
            .retain(|id, _| jobs.iter().any(|(_, j)| j.id == *id));
        jobs.sort_by_key(|(key, _)| *key);
        Ok(jobs.into_iter().map(|(_, j)| j).collect())
    }

    /// The entries of the durable file that are not scheduled, in file order, each with
    /// what is wrong with it. They stay in the file until fixed by hand or deleted.
    pub fn unusable(&self) -> Result<Vec<UnusableJob>, CronError> {
        let mut state = self.lock();
        Ok(state.read_file()?.unusable)
    }

    /// Removes the job `id` (and any unusable copy of it in the durable file), returning
    /// it; `None` when `id` named only an unusable entry of the durable file, which is
    /// removed from it. Durable entries are removed from the file as it is at that moment
    /// (under its lock): other sessions' entries stay.
    pub fn delete(&self, id: &str) -> Result<Option<CronJob>, CronError> {
        let mut state = self.lock();
        if let Some(index) = state.session.iter().position(|j| j.id == id) {
            let removed = state.session.remove(index);
            state.order.remove(id);
            return Ok(Some(removed.snapshot()));
        }
        let file = state.read_file()?;
        let not_found = || CronError::NotFound { id: id.to_owned() };
        if !file.entries.iter().any(|e| entry_id(e) == Some(id)) {
            return Err(not_found());
        }
        drop(state);
        let lock = self.lock_file()?;
        let mut state = self.lock();
        let mut file = state.read_file()?;
        let job = file
            .jobs
            .iter()
            .find(|(_, j)| j.id == id)
            .map(|(_, j)| j.snapshot());
        let before = file.entries.len();
        // A copy of it in the file (an unusable duplicate) goes too: it would be the job
        // again at the next read.
        file.entries.retain(|e| entry_id(e) != Some(id));
        if file.entries.len() == before {
            // Another session removed it since the first look.
            return Err(not_found());
        }
        state.write_file(file.entries, &lock)?;
        state.order.remove(id);
        Ok(job)
    }

    /// Whether `id` names a job of this session only (not in the durable file).
    pub fn is_session_job(&self, id: &str) -> bool {
        self.lock().session.iter().any(|j| j.id == id)
    }

    /// The jobs whose next fire time is at or before `now`, in fire-time order. Recurring
    /// jobs move to their first match after `now` (or are removed when they expire); one-shot
    /// jobs are removed.
    ///
    /// A due durable job is claimed under the durable file's lock: the file is read again,
    /// and only a job still due there is returned, its fire recorded (`lastFiredAt`) or its
    /// entry removed before the lock is released. Of several sessions polling the same file,
    /// one fires it. If that write fails, nothing changes and the error is returned (the
    /// same jobs are due at the next poll).
    ///
    /// Blocking (it reads the durable file and may wait for its lock, as `create`, `list`
    /// and `delete` do): call it off the async threads, e.g. in `spawn_blocking`.
    pub fn due_jobs(&self, now: SystemTime) -> Result<Vec<DueJob>, CronError> {
        let mut state = self.lock();
        let now_ms = to_ms(now);
        let tz = state.tz;
        let max_age_ms = state
            .max_age
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let mut due = Vec::new();
        let file = state.read_file()?;
        if file.jobs.iter().any(|(_, j)| j.next_ms <= now_ms) {
            drop(state);
            let lock = self.lock_file()?;
            state = self.lock();
            let mut file = state.read_file()?;
            let mut removed = Vec::new();
            for (index, job) in &file.jobs {
                if job.next_ms > now_ms {
                    continue;
                }
                let (fired, next) = fire(job, tz, max_age_ms, now_ms);
                due.push(fired);
                match (next, file.entries[*index].as_object_mut()) {
                    (Some(_), Some(entry)) => {
                        entry.insert("lastFiredAt".to_owned(), now_ms.into());
                    }
                    _ => removed.push(*index),
                }
            }
            if !due.is_empty() {
                let mut index = 0;
                file.entries.retain(|_| {
                    let keep = !removed.contains(&index);
                    index += 1;
                    keep
                });
                state.write_file(file.entries, &lock)?;
            }
        }
        let mut session = Vec::with_capacity(state.session.len());
        for mut job in std::mem::take(&mut state.session) {
            if job.next_ms > now_ms {
                session.push(job);
                continue;
            }
            let (fired, next) = fire(&job, tz, max_age_ms, now_ms);
            due.push(fired);
            if let Some(next_ms) = next {
                job.last_fired_ms = Some(now_ms);
                job.next_ms = next_ms;
                session.push(job);
            }
        }
        state.session = session;
        due.sort_by_key(|d| d.scheduled_for);
        Ok(due)
    }
}

/// The app-state slot holding the session's store.
#[derive(Debug, Default)]
struct CronSlot(Option<CronStore>);

/// Makes `store` the cron store of every context sharing `app_state` (keep a clone to poll
/// [`CronStore::due_jobs`]).
pub fn install_cron_store(app_state: &AppState, store: CronStore) {
    app_state.update::<CronSlot, _>(|slot| slot.0 = Some(store));
}

/// The context's store: the installed one, else one for the project (created on first use
/// and kept in the app state). The project is the session's project directory (not where a
/// `cd` left the shell), or, inside one of
/// EnterWorktree's worktrees (`<project>/.claude/worktrees/<name>`), the project it belongs
/// to: durable jobs must not live in a worktree that ExitWorktree may delete.
pub fn cron_store(ctx: &ToolUseContext) -> CronStore {
    let project = project_of(ctx.project_dir());
    ctx.app_state().update::<CronSlot, _>(|slot| {
        slot.0
            .get_or_insert_with(|| CronStore::for_project(&project))
            .clone()
    })
}

/// `cwd`, or the project whose `.claude/worktrees/<name>` holds it.
fn project_of(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| {
            dir.file_name().is_some_and(|n| n == "worktrees")
                && dir
                    .parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == ".claude")
        })
        .and_then(|worktrees| worktrees.parent()?.parent())
        .map_or_else(|| cwd.to_path_buf(), Path::to_path_buf)
}

// ----- CronCreate -----

/// Input of CronCreate.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CronCreateInput {
    /// Standard 5-field cron expression in local time: "M H DoM Mon DoW" (e.g. "*/5 * * * *" = every 5 minutes, "30 14 28 2 *" = Feb 28 at 2:30pm once)
    pub cron: String,
    /// The prompt to run at each fire time
    pub prompt: String,
    /// true (default) = fire on every cron match until deleted or auto-expired after 7 days. false = fire once at the next match, then auto-delete
    #[serde(default)]
    pub recurring: Option<bool>,
    /// true = persist to .claude/scheduled_tasks.json and survive restarts. false (default) = in-memory only, ends with this session
    #[serde(default)]
    pub durable: Option<bool>,
}

/// Output of CronCreate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CronCreateOutput {
    /// The new job's id.
    pub id: String,
    /// The expression.
    pub cron: String,
    /// Whether it recurs.
    pub recurring: bool,
    /// Whether it is durable.
    pub durable: bool,
    /// The first fire time (RFC 3339).
    #[serde(rename = "nextFireAt")]
    pub next_fire_at: String,
    /// `local time` or `UTC`.
    #[serde(rename = "timeZone")]
    pub time_zone: String,
    /// Days until a recurring job expires, when it does.
    #[serde(rename = "expiresAfterDays", skip_serializing_if = "Option::is_none")]
    pub expires_after_days: Option<u64>,
    /// The durable file, for a durable job.
    #[serde(rename = "durablePath", skip_serializing_if = "Option::is_none")]
    pub durable_path: Option<String>,
}

/// The prompt of CronCreate; it doubles as the marker `cargo xtask profiles` looks for.
pub const CREATE_PROMPT: &str = "Schedule a prompt to run later, once or on a recurring cron schedule (toolwright-gated-tool:agent-triggers).

- cron: a standard 5-field expression, minute hour day-of-month month day-of-week, evaluated in the user's local time (\"*/5 * * * *\" every 5 minutes, \"0 9 * * 1-5\" weekdays at 9:00). Avoid :00 and :30 when the exact minute does not matter (\"7 * * * *\" rather than \"0 * * * *\").
- prompt: what to run when the job fires, written so it makes sense on its own.
- recurring: true (default) fires on every match; recurring jobs expire after 7 days (they fire one final time, then are removed). false fires once at the next match (for \"remind me at 3pm\" pin minute, hour, day and month), then the job is removed.
- durable: false (default) keeps the job for this session only; true also writes it to .claude/scheduled_tasks.json so it survives restarts.

Jobs fire only while the host is running. The result gives the job id (for CronDelete) and the next fire time. At most 50 jobs.";

/// The CronCreate tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct CronCreate;

#[async_trait]
impl TypedTool for CronCreate {
    type Input = CronCreateInput;
    type Output = CronCreateOutput;
    const NAME: &'static str = "CronCreate";

    fn description(&self) -> Cow<'_, str> {
        "Schedule a prompt to run at a future time, once or on a recurring cron schedule".into()
    }
    fn prompt(&self) -> Cow<'_, str> {
        CREATE_PROMPT.into()
    }
    fn search_hint(&self) -> Option<&str> {
        Some("schedule a recurring or one-shot prompt")
    }
    fn should_defer(&self) -> bool {
        true
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    async fn validate_input(
        &self,
        input: &CronCreateInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        let schedule = parse_cron(&input.cron).map_err(|e| ValidationError::new(e.to_string()))?;
        if input.prompt.trim().is_empty() {
            return Err(ValidationError::new("prompt must not be empty"));
        }
        let tz = cron_store(ctx).time_zone();
        if next_after(&schedule, tz, to_ms(SystemTime::now())).is_none() {
            return Err(ValidationError::new(
                CronError::NeverFires {
                    expr: input.cron.clone(),
                }
                .to_string(),
            ));
        }
        Ok(())
    }
    /// A session-only job touches only the session's own state: allowed, as Claude Code's
    /// default `checkPermissions` allows (deny and ask rules still apply first). A durable
    /// one writes `.claude/scheduled_tasks.json`, which later sessions run: plan mode refuses
    /// it, as any change.
    async fn check_permissions(
        &self,
        input: &CronCreateInput,
        ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        if input.durable == Some(true) && ctx.permission().plan_mode_refuses_changes() {
            return tool_core::ToolPermissionContext::plan_mode_refusal(Self::NAME);
        }
        tool_core::PermissionResult::allow()
    }
    async fn call(
        &self,
        input: CronCreateInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<CronCreateOutput>, ToolError> {
        let store = cron_store(&ctx);
        let new = NewCronJob {
            cron: input.cron,
            prompt: input.prompt,
            recurring: input.recurring.unwrap_or(true),
            durable: input.durable.unwrap_or(false),
        };
        let (job, tz, max_age, path) = fsutil::blocking(move || {
            let job = store.create(new, SystemTime::now())?;
            Ok((
                job,
                store.time_zone(),
                store.recurring_max_age(),
                store.path(),
            ))
        })
        .await?;
        Ok(ToolResult::new(CronCreateOutput {
            next_fire_at: format_time(job.next_fire_at, tz),
            time_zone: tz.label().to_owned(),
            expires_after_days: max_age
                .filter(|_| job.recurring)
                .map(|d| d.as_secs().div_ceil(86_400)),
            durable_path: job.durable.then(|| path.display().to_string()),
            id: job.id,
            cron: job.cron,
            recurring: job.recurring,
            durable: job.durable,
        }))
    }
    fn to_content(&self, o: &CronCreateOutput) -> ToolResultContent {
        let kind = if o.recurring { "recurring" } else { "one-shot" };
        let mut text = format!(
            "Scheduled {kind} job {} ({}, {}). ",
            o.id, o.cron, o.time_zone
        );
        if o.recurring {
            text.push_str(&format!("Next fire: {}. ", o.next_fire_at));
        } else {
            text.push_str(&format!(
                "It fires once at {}, then is removed. ",
                o.next_fire_at
            ));
        }
        match &o.durable_path {
            Some(path) => text.push_str(&format!("Persisted to {path}; it survives restarts. ")),
            None => {
                text.push_str("Session-only (not written to disk; it ends with this session). ")
            }
        }
        if let Some(days) = o.expires_after_days {
            text.push_str(&format!("Auto-expires after {days} days. "));
        }
        text.push_str(&format!("Use CronDelete with id {} to cancel it.", o.id));
        ToolResultContent::Text(text)
    }
}

// ----- CronList -----

/// Input of CronList (no fields).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CronListInput {}

/// One job as CronList shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CronJobView {
    /// The id.
    pub id: String,
    /// The expression.
    pub cron: String,
    /// The prompt.
    pub prompt: String,
    /// Whether it recurs.
    pub recurring: bool,
    /// Whether it is durable.
    pub durable: bool,
    /// When it was created (RFC 3339).
    #[serde(rename = "createdAt")]
    pub created_at: String,
    /// When it fires next (RFC 3339).
    #[serde(rename = "nextFireAt")]
    pub next_fire_at: String,
}

/// Output of CronList.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CronListOutput {
    /// The jobs, in creation order.
    pub jobs: Vec<CronJobView>,
    /// Entries of the durable file that are not scheduled: `"<id>: <reason>"`, or the
    /// reason alone for an entry without an id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unusable: Vec<String>,
    /// The durable file, when it has unusable entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// The prompt of CronList (carries the gate marker too).
pub const LIST_PROMPT: &str = "List the scheduled cron jobs of this session (toolwright-gated-tool:agent-triggers): id, cron expression, recurring or one-shot, durable or session-only, next fire time and prompt.";

/// The CronList tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct CronList;

/// At most this many characters of a prompt in a CronList line.
const PROMPT_PREVIEW_CHARS: usize = 200;

#[async_trait]
impl TypedTool for CronList {
    type Input = CronListInput;
    type Output = CronListOutput;
    const NAME: &'static str = "CronList";

    fn description(&self) -> Cow<'_, str> {
        "List scheduled cron jobs".into()
    }
    fn prompt(&self) -> Cow<'_, str> {
        LIST_PROMPT.into()
    }
    fn search_hint(&self) -> Option<&str> {
        Some("list scheduled cron jobs")
    }
    fn should_defer(&self) -> bool {
        true
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn is_concurrency_safe(&self, _input: &CronListInput) -> bool {
        true
    }
    fn is_read_only(&self, _input: &CronListInput) -> bool {
        true
    }
    /// Touches only the session's own state: allowed, as Claude Code's default
    /// `checkPermissions` allows (deny and ask rules still apply first).
    async fn check_permissions(
        &self,
        _input: &CronListInput,
        _ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        tool_core::PermissionResult::allow()
    }
    async fn call(
        &self,
        _input: CronListInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<CronListOutput>, ToolError> {
        let store = cron_store(&ctx);
        let (jobs, unusable, tz, path) = fsutil::blocking(move || {
            Ok((
                store.list()?,
                store.unusable()?,
                store.time_zone(),
                store.path(),
            ))
        })
        .await?;
        Ok(ToolResult::new(CronListOutput {
            file: (!unusable.is_empty()).then(|| path.display().to_string()),
            unusable: unusable
                .into_iter()
                .map(|u| match u.id {
                    Some(id) => format!("{id}: {}", u.reason),
                    None => u.reason,
                })
                .collect(),
            jobs: jobs
                .into_iter()
                .map(|j| CronJobView {
                    created_at: format_time(j.created_at, tz),
                    next_fire_at: format_time(j.next_fire_at, tz),
                    id: j.id,
                    cron: j.cron,
                    prompt: j.prompt,
                    recurring: j.recurring,
                    durable: j.durable,
                })
                .collect(),
        }))
    }
    fn to_content(&self, output: &CronListOutput) -> ToolResultContent {
        let mut lines: Vec<String> = output
            .jobs
            .iter()
            .map(|j| {
                let kind = if j.recurring { "recurring" } else { "one-shot" };
                let scope = if j.durable { "durable" } else { "session-only" };
                let mut prompt: String = j.prompt.chars().take(PROMPT_PREVIEW_CHARS).collect();
                if j.prompt.chars().count() > PROMPT_PREVIEW_CHARS {
                    prompt.push('…');
                }
                format!(
                    "{} — {} ({kind}, {scope}) — next {}: {prompt}",
                    j.id, j.cron, j.next_fire_at
                )
            })
            .collect();
        if lines.is_empty() {
            lines.push("No scheduled jobs.".to_owned());
        }
        if let Some(file) = &output.file {
            lines.push(format!(
                "Not scheduled: {} unusable entries in {file} (kept as they are; fix the file, or remove one with CronDelete and its id):",
                output.unusable.len()
            ));
            lines.extend(output.unusable.iter().map(|u| format!("- {u}")));
        }
        ToolResultContent::Text(lines.join("\n"))
    }
}

// ----- CronDelete -----

/// Input of CronDelete.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CronDeleteInput {
    /// Job ID returned by CronCreate
    pub id: String,
}

/// Output of CronDelete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CronDeleteOutput {
    /// The deleted job's id.
    pub id: String,
    /// True when the id named an unusable entry of the durable file (removed from it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unusable: bool,
}

/// The prompt of CronDelete (carries the gate marker too).
pub const DELETE_PROMPT: &str = "Cancel a scheduled cron job by the id CronCreate returned (toolwright-gated-tool:agent-triggers). A durable job is also removed from .claude/scheduled_tasks.json.";

/// The CronDelete tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct CronDelete;

#[async_trait]
impl TypedTool for CronDelete {
    type Input = CronDeleteInput;
    type Output = CronDeleteOutput;
    const NAME: &'static str = "CronDelete";

    fn description(&self) -> Cow<'_, str> {
        "Cancel a scheduled cron job".into()
    }
    fn prompt(&self) -> Cow<'_, str> {
        DELETE_PROMPT.into()
    }
    fn search_hint(&self) -> Option<&str> {
        Some("cancel a scheduled cron job")
    }
    fn should_defer(&self) -> bool {
        true
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    /// A session-only job's deletion touches only the session's own state: allowed, as
    /// Claude Code's default `checkPermissions` allows (deny and ask rules still apply
    /// first). A durable job's rewrites `.claude/scheduled_tasks.json`: plan mode refuses it,
    /// as any change.
    async fn check_permissions(
        &self,
        input: &CronDeleteInput,
        ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        if ctx.permission().plan_mode_refuses_changes()
            && !cron_store(ctx).is_session_job(&input.id)
        {
            return tool_core::ToolPermissionContext::plan_mode_refusal(Self::NAME);
        }
        tool_core::PermissionResult::allow()
    }
    async fn call(
        &self,
        input: CronDeleteInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<CronDeleteOutput>, ToolError> {
        let store = cron_store(&ctx);
        let id = input.id;
        let job = {
            let id = id.clone();
            fsutil::blocking(move || Ok(store.delete(&id)?)).await?
        };
        Ok(ToolResult::new(CronDeleteOutput {
            id,
            unusable: job.is_none(),
        }))
    }
    fn to_content(&self, output: &CronDeleteOutput) -> ToolResultContent {
        if output.unusable {
            return ToolResultContent::Text(format!(
                "Removed the unusable entry {} from the scheduled jobs file.",
                output.id
            ));
        }
        ToolResultContent::Text(format!("Cancelled job {}.", output.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In the hour a clock turned back repeats (New York, 2025-11-02, 01:00-02:00 twice), a
    /// job's next time is never one already past. Local time is the process's, so this runs
    /// itself again with `TZ` set.
    #[test]
    fn the_repeated_hour_of_a_clock_turned_back_has_no_past_next_time() {
        let zone = std::path::Path::new("/usr/share/zoneinfo/America/New_York");
        if !zone.exists() && std::env::var("CI").is_err() {
            eprintln!("notice: no time zone data ({}); skipping", zone.display());
            return;
        }
        if std::env::var_os("TOOLWRIGHT_TZ_CHILD").is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "cron::tests::the_repeated_hour_of_a_clock_turned_back_has_no_past_next_time",
                    "--nocapture",
                ])
                .env("TZ", "America/New_York")
                .env("TOOLWRIGHT_TZ_CHILD", "1")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{text}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(text.contains("1 passed"), "the child ran nothing: {text}");
            return;
        }
        // 06:16Z is 01:16 EST, the second 01:16 of the day.
        let now = Utc
            .with_ymd_and_hms(2025, 11, 2, 6, 16, 0)
            .unwrap()
            .timestamp_millis();
        let offset = Local
            .timestamp_millis_opt(now)
            .unwrap()
            .offset()
            .local_minus_utc();
        assert_eq!(offset, -5 * 3600, "no New York time zone data here");
        for daily in ["30 1 * * *", "*/15 1 * * *", "45 * * * *"] {
            let next = next_after(&parse_cron(daily).unwrap(), CronTimeZone::Local, now);
            assert!(next.unwrap() > now, "{daily}: {next:?}");
        }
        let every_15 = parse_cron("*/15 * * * *").unwrap();
        let mut at = now;
        for _ in 0..8 {
            let next = next_after(&every_15, CronTimeZone::Local, at).unwrap();
            assert!(next > at, "{next} is not after {at}");
            at = next;
        }
        // Past the repeated hour within those steps.
        assert!(
            at > Utc
                .with_ymd_and_hms(2025, 11, 2, 7, 0, 0)
                .unwrap()
                .timestamp_millis()
        );
    }

    #[test]
    fn expressions_need_five_fields() {
        assert!(parse_cron("*/5 * * * *").is_ok());
        assert!(parse_cron("@daily").is_ok());
        assert!(parse_cron("@Annually").is_ok());
        let err = parse_cron("@reboot").unwrap_err().to_string();
        assert!(
            err.contains("`@reboot` is not a schedule here: use 5 fields")
                && err.contains("@hourly")
                && !err.contains("six"),
            "{err}"
        );
        let err = parse_cron("0 */5 * * * *").unwrap_err().to_string();
        assert!(err.contains("expected 5 fields, found 6"), "{err}");
        let err = parse_cron("61 * * * *").unwrap_err().to_string();
        assert!(
            err.starts_with("Invalid cron expression \"61 * * * *\": "),
            "{err}"
        );
    }

    #[test]
    fn next_fire_is_strictly_later_and_in_the_zone() {
        let every5 = parse_cron("*/5 * * * *").unwrap();
        // 2024-01-01T10:00:00Z exactly: the next match is 10:05, not 10:00.
        let t = 1_704_103_200_000;
        assert_eq!(next_after(&every5, CronTimeZone::Utc, t), Some(t + 300_000));
        assert_eq!(
            next_after(&every5, CronTimeZone::Utc, t + 1),
            Some(t + 300_000)
        );
        let nine = parse_cron("0 9 * * *").unwrap();
        assert_eq!(
            format_time(
                from_ms(next_after(&nine, CronTimeZone::Utc, t).unwrap()),
                CronTimeZone::Utc
            ),
            "2024-01-02T09:00:00Z"
        );
        assert_eq!(
            next_after(&parse_cron("0 0 30 2 *").unwrap(), CronTimeZone::Utc, t),
            None
        );
    }
}
