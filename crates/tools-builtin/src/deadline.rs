//! Work that a call waits on only until its deadline: the work runs on a thread of its
//! own, and at the deadline the call answers with what the work has found so far, leaving
//! the thread behind.
//!
//! Glob and Grep read the disk, and a read can block for ever (`/proc/kmsg`, a directory or
//! a file on a hung network mount). Run on the calling thread, or on the runtime's blocking
//! pool, such a read would keep the call waiting until a signal, and keep the runtime from
//! shutting down (it waits for its blocking tasks). [`run`] starts the work on a thread of
//! its own and waits on it only until the deadline or the call's cancellation; the work
//! puts what it finds in a shared value that the call reads when it stops waiting.
//!
//! Each abandoned thread holds what it holds until its read returns, if ever: a model
//! repeating a search that hangs would pile them up without end. Each tool therefore
//! counts its own runs ([`Runs`], a static per tool, named in its [`Job`]): at most
//! [`MAX_LEFT_BEHIND`] of its threads run at once, each taking its slot atomically before it
//! starts and giving it back when it ends, so that no more than that can ever be left
//! behind, however many calls start together. While all of them are left behind, a new run
//! is refused at once, in the tool's own words; while some are still within their time, a
//! new run waits for a slot (until its own deadline or its cancellation), and is refused in
//! the tool's words if its deadline passes first.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use tool_core::{CancellationToken, ToolError};

/// How many runs of one tool may be running at once, and so how many left behind at their
/// deadline may still be running: with that many left behind, a new run is refused.
pub(crate) const MAX_LEFT_BEHIND: usize = 8;

/// How often a call waiting on its work looks at its cancellation.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// How often a call waiting for a free slot ([`Runs`]) looks again.
const SLOT_POLL: Duration = Duration::from_millis(10);

/// One tool's runs: how many hold a slot (their thread is started, or about to be, and has
/// not ended: at most [`MAX_LEFT_BEHIND`]) and, of those, how many were left behind at
/// their deadline or their cancellation. A tool has one, as a static.
pub(crate) struct Runs {
    /// Runs holding a slot: taken atomically before the thread starts, given back when it
    /// ends.
    active: AtomicUsize,
    /// Of the runs holding a slot, those left behind and still running.
    left_behind: AtomicUsize,
}

impl Runs {
    /// No run yet.
    pub(crate) const fn new() -> Self {
        Self {
            active: AtomicUsize::new(0),
            left_behind: AtomicUsize::new(0),
        }
    }

    /// `active` runs holding a slot, `left_behind` of them left behind: as if those had
    /// started and were stuck.
    #[cfg(test)]
    pub(crate) const fn with(active: usize, left_behind: usize) -> Self {
        Self {
            active: AtomicUsize::new(active),
            left_behind: AtomicUsize::new(left_behind),
        }
    }

    /// How many runs are left behind and still running.
    pub(crate) fn left_behind(&self) -> usize {
        self.left_behind.load(Ordering::SeqCst)
    }

    /// Takes a slot if one is free: checked and taken in one atomic step, so that calls
    /// starting together never take more than there are.
    fn reserve(&self) -> bool {
        self.active
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < MAX_LEFT_BEHIND).then_some(n + 1)
            })
            .is_ok()
    }

    /// Gives back the slot of a run whose thread ended (or never started).
    fn release(&self) {
        self.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whose work [`run`] runs: the tool's name, its count of runs left behind, and the words
/// its refusals use for where a run gets stuck.
#[derive(Clone, Copy)]
pub(crate) struct Job {
    /// The tool's name, as its errors say it (`Grep`).
    pub(crate) tool: &'static str,
    /// The name of the work's thread (`tw-grep`).
    pub(crate) thread: &'static str,
    /// The tool's runs, those left behind at their deadline (or their cancellation) and
    /// still running among them: the tool's own static.
    pub(crate) runs: &'static Runs,
    /// Where a run left behind is stuck, as the busy refusal says it after "each in": `a
    /// read that never returns (a file on a hung network mount)`.
    pub(crate) stuck_in: &'static str,
}

impl Job {
    /// The refusal of a new run while `stuck` ([`MAX_LEFT_BEHIND`]) runs are left behind.
    pub(crate) fn busy(&self, stuck: usize) -> String {
        format!(
            "{} cannot search now: {stuck} earlier searches are still stuck past their time \
             limit, each in {}. A new search starts once fewer than {MAX_LEFT_BEHIND} are \
             stuck: try again later, and leave out the path that hangs.",
            self.tool, self.stuck_in
        )
    }

    /// The refusal of a run whose deadline passed while it waited for a slot (all
    /// [`MAX_LEFT_BEHIND`] held by runs, some still within their time), `stuck` of them left
    /// behind: its work never started.
    pub(crate) fn full(&self, stuck: usize) -> String {
        format!(
            "{} cannot search now: its {MAX_LEFT_BEHIND} searches at a time are all in use \
             ({stuck} stuck past their time limit), and none ended before this one's limit. \
             It did not search: try again in a moment.",
            self.tool
        )
    }
}

/// Runs `work` on a thread of its own, handing it `shared` (where it puts what it finds),
/// and waits for it until `deadline`.
///
/// The work starts once it has one of the tool's [`MAX_LEFT_BEHIND`] slots (`job.runs`):
/// while all are taken by runs still within their time, the call waits for one, looking
/// again every few milliseconds.
///
/// Returns `Ok(Some(_))` with the work's value when it ended in time, `Ok(None)` when the
/// deadline passed first: the caller then answers with what `shared` holds, and the thread
/// is left behind, counted in `job.runs` until it ends. The work
/// should stop soon after the deadline on its own (checking it between reads, reading
/// through a reader that fails past it); stuck in a read, it ends when the read returns, if
/// ever, holding only `shared` and what its closure owns. The work's own error is returned
/// as it is.
///
/// Errors, besides the work's: [`ToolError::Cancelled`] as soon as `cancel` fires (the work
/// is left behind too); a refusal in the tool's words ([`Job::busy`]) while
/// [`MAX_LEFT_BEHIND`] runs are left behind (all the slots); a refusal in the tool's words
/// ([`Job::full`]) when the deadline passed while the call waited for a slot, so that the
/// work never started (the tool is busy: not a search that ran out of time); the thread
/// could not start; it panicked.
pub(crate) fn run<S, T, W>(
    job: Job,
    shared: &Arc<S>,
    deadline: Instant,
    cancel: &CancellationToken,
    work: W,
) -> Result<Option<T>, ToolError>
where
    S: Send + Sync + 'static,
    T: Send + 'static,
    W: FnOnce(&Arc<S>) -> Result<T, ToolError> + Send + 'static,
{
    // A slot first, checked and taken in one step: of calls starting together, no more
    // start than there are slots, and so no more than that can be left behind.
    while !job.runs.reserve() {
        let stuck = job.runs.left_behind();
        if stuck >= MAX_LEFT_BEHIND {
            return Err(ToolError::msg(job.busy(stuck)));
        }
        // Some of the slots are held by runs still within their time: one is free when
        // the first ends, or taken for good if it is left behind.
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled(None));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            // The work never started: the tool is busy, not a search that found nothing.
            return Err(ToolError::msg(job.full(job.runs.left_behind())));
        }
        std::thread::sleep(left.min(SLOT_POLL));
    }
    // Gives the slot back when the thread ends, or here if it never starts (the closure
    // holding it is dropped).
    let handoff = Arc::new(Handoff {
        state: AtomicU8::new(Handoff::RUNNING),
        runs: job.runs,
    });
    let (done, finished) = std::sync::mpsc::sync_channel(1);
    {
        let shared = Arc::clone(shared);
        let ending = WorkEnding(Arc::clone(&handoff));
        std::thread::Builder::new()
            .name(job.thread.to_owned())
            .spawn(move || {
                // Dropped last, however the work ends (a panic too).
                let _ending = ending;
                // The waiter may be gone (it answered at the deadline): nobody to tell.
                let _ = done.send(work(&shared));
            })
            .map_err(|e| ToolError::msg(format!("{} could not start its search: {e}", job.tool)))?;
    }
    // Until the work's outcome is in, a return (the deadline, a cancellation) leaves the
    // work behind.
    let mut leaving = Leaving(Some(&handoff));
    loop {
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled(None));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match finished.recv_timeout(left.min(CANCEL_POLL)) {
            Ok(outcome) => {
                leaving.0 = None;
                return outcome.map(Some);
            }
            // Without its outcome, the work is left behind from here (`leaving` dropped).
            Err(RecvTimeoutError::Timeout) if left.is_zero() => return Ok(None),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                leaving.0 = None;
                return Err(ToolError::msg(format!(
                    "{}'s search failed to complete: its thread panicked",
                    job.tool
                )));
            }
        }
    }
}

/// Settles the count of runs left behind between the work's thread and the call waiting
/// on it: whichever of the two is done second knows whether the work was left behind, and
/// counts it out when it ends. The thread's end gives its slot back.
struct Handoff {
    state: AtomicU8,
    runs: &'static Runs,
}

impl Handoff {
    const RUNNING: u8 = 0;
    const ENDED: u8 = 1;
    const LEFT: u8 = 2;

    /// The work's thread ends (or never started): left behind, it no longer counts; its
    /// slot is free.
    fn ended(&self) {
        if self
            .state
            .compare_exchange(
                Self::RUNNING,
                Self::ENDED,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_err()
        {
            self.runs.left_behind.fetch_sub(1, Ordering::SeqCst);
        }
        // After the count of those left behind, which never exceeds the slots taken.
        self.runs.release();
    }

    /// The call answers without the work's outcome: work still running counts.
    fn leave(&self) {
        // Counted first, so that the thread's end never takes away a count not yet made.
        self.runs.left_behind.fetch_add(1, Ordering::SeqCst);
        if self
            .state
            .compare_exchange(
                Self::RUNNING,
                Self::LEFT,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_err()
        {
            self.runs.left_behind.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Held by the work's thread: tells its [`Handoff`] when the thread ends.
struct WorkEnding(Arc<Handoff>);

impl Drop for WorkEnding {
    fn drop(&mut self) {
        self.0.ended();
    }
}

/// Held by the call waiting on the work until the outcome is in: dropped before, it leaves
/// the work behind ([`Handoff::leave`]).
struct Leaving<'a>(Option<&'a Handoff>);

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        if let Some(handoff) = self.0.take() {
            handoff.leave();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::mpsc::{Receiver, Sender, channel};

    use super::*;

    fn job(runs: &'static Runs) -> Job {
        Job {
            tool: "Test",
            thread: "tw-test",
            runs,
            stuck_in: "a test",
        }
    }

    /// Waits (at most 10 s) until no run of `runs` is left behind, and none holds a slot.
    fn wait_until_none_left(runs: &Runs) {
        let waited = Instant::now();
        while runs.left_behind() > 0 || runs.active.load(Ordering::SeqCst) > 0 {
            assert!(
                waited.elapsed() < Duration::from_secs(10),
                "the work left behind never ended"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Work that puts `1` in what it shares, then blocks until released (or 30 s): a read
    /// that never returns.
    fn stuck_work(
        stuck: Receiver<()>,
    ) -> impl FnOnce(&Arc<Mutex<Vec<u32>>>) -> Result<(), ToolError> + Send + 'static {
        move |shared| {
            shared.lock().unwrap().push(1);
            let _ = stuck.recv_timeout(Duration::from_secs(30));
            shared.lock().unwrap().push(2);
            Ok(())
        }
    }

    /// Work that ends in time gives its value, or its own error as it is, and is not
    /// counted as left behind.
    #[test]
    fn work_that_ends_in_time_gives_its_outcome_and_is_not_counted() {
        static LEFT: Runs = Runs::new();
        let shared = Arc::new(Mutex::new(Vec::<u32>::new()));
        let later = Instant::now() + Duration::from_secs(10);
        let cancel = CancellationToken::new();
        let got = run(job(&LEFT), &shared, later, &cancel, |shared| {
            shared.lock().unwrap().push(7);
            Ok("done")
        })
        .unwrap();
        assert_eq!(got, Some("done"));
        assert_eq!(*shared.lock().unwrap(), [7]);
        let err = run(job(&LEFT), &shared, later, &cancel, |_| {
            Err::<(), _>(ToolError::msg("the work's own failure"))
        })
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            ToolError::msg("the work's own failure").to_string()
        );
        assert_eq!(LEFT.left_behind(), 0);
    }

    /// At the deadline the call answers without the work (`None`) and sees what the work
    /// had shared by then; the work goes on, counted as left behind, until it ends.
    #[test]
    fn work_past_the_deadline_is_left_behind_and_counted_until_it_ends() {
        static LEFT: Runs = Runs::new();
        let shared = Arc::new(Mutex::new(Vec::<u32>::new()));
        let (release, stuck): (Sender<()>, _) = channel();
        let limit = Duration::from_millis(200);
        let started = Instant::now();
        let cancel = CancellationToken::new();
        let got = run(
            job(&LEFT),
            &shared,
            started + limit,
            &cancel,
            stuck_work(stuck),
        )
        .unwrap();
        let took = started.elapsed();
        assert_eq!(got, None);
        assert!(took >= limit && took < Duration::from_secs(5), "{took:?}");
        assert_eq!(*shared.lock().unwrap(), [1]);
        assert_eq!(LEFT.left_behind(), 1);
        drop(release);
        wait_until_none_left(&LEFT);
        // It ran to its end, where nobody waits for it any more.
        assert_eq!(*shared.lock().unwrap(), [1, 2]);
    }

    /// A cancelled call answers at once, long before its deadline, and leaves its work
    /// behind, counted until it ends.
    #[test]
    fn a_cancelled_call_answers_at_once_and_leaves_its_work_behind() {
        static LEFT: Runs = Runs::new();
        let shared = Arc::new(Mutex::new(Vec::<u32>::new()));
        let (release, stuck) = channel();
        let cancel = CancellationToken::new();
        let canceller = {
            let cancel = cancel.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                cancel.cancel();
            })
        };
        let started = Instant::now();
        let err = run(
            job(&LEFT),
            &shared,
            started + Duration::from_secs(30),
            &cancel,
            stuck_work(stuck),
        )
        .unwrap_err();
        assert!(matches!(err, ToolError::Cancelled(None)), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(LEFT.left_behind(), 1);
        canceller.join().unwrap();
        drop(release);
        wait_until_none_left(&LEFT);
    }

    /// Work that panics is an error in the tool's words, not a panic of the call, and
    /// leaves nothing counted.
    #[test]
    fn work_that_panics_is_an_error_in_the_tools_words() {
        static LEFT: Runs = Runs::new();
        let shared = Arc::new(());
        let later = Instant::now() + Duration::from_secs(10);
        let err = run(
            job(&LEFT),
            &shared,
            later,
            &CancellationToken::new(),
            |_| -> Result<(), ToolError> { panic!("the work broke") },
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("Test's search failed to complete: its thread panicked"),
            "{err}"
        );
        assert_eq!(LEFT.left_behind(), 0);
    }

    /// Runs started at once while [`MAX_LEFT_BEHIND`] - 1 are left behind cannot together
    /// leave more than [`MAX_LEFT_BEHIND`] behind: of many calls let go by one barrier, with
    /// work that blocks, exactly one starts its work; the others are refused, or (while the
    /// one admitted still runs in time) wait and are refused at their deadline without
    /// starting.
    #[test]
    fn runs_started_at_once_never_leave_more_than_the_cap_behind() {
        static LEFT: Runs = Runs::with(MAX_LEFT_BEHIND - 1, MAX_LEFT_BEHIND - 1);
        const CALLS: usize = 8;
        let started = Arc::new(AtomicUsize::new(0));
        let barrier = Arc::new(std::sync::Barrier::new(CALLS));
        let (release, stuck) = channel::<()>();
        let stuck = Arc::new(Mutex::new(stuck));
        let calls: Vec<_> = (0..CALLS)
            .map(|_| {
                let (started, barrier, stuck) = (
                    Arc::clone(&started),
                    Arc::clone(&barrier),
                    Arc::clone(&stuck),
                );
                std::thread::spawn(move || {
                    let shared = Arc::new(());
                    barrier.wait();
                    let deadline = Instant::now() + Duration::from_millis(300);
                    run(
                        job(&LEFT),
                        &shared,
                        deadline,
                        &CancellationToken::new(),
                        move |_| {
                            started.fetch_add(1, Ordering::SeqCst);
                            // Blocks until released (or 30 s): a read that never returns.
                            let _ = stuck.lock().unwrap().recv_timeout(Duration::from_secs(30));
                            Ok(())
                        },
                    )
                })
            })
            .collect();
        let outcomes: Vec<_> = calls.into_iter().map(|c| c.join().unwrap()).collect();
        assert_eq!(started.load(Ordering::SeqCst), 1, "{outcomes:?}");
        assert_eq!(LEFT.left_behind(), MAX_LEFT_BEHIND);
        let mut left_at_the_deadline = 0;
        for outcome in &outcomes {
            match outcome {
                // The one admitted.
                Ok(None) => left_at_the_deadline += 1,
                Err(e) => {
                    let e = e.to_string();
                    assert!(
                        e == job(&LEFT).busy(MAX_LEFT_BEHIND)
                            || e.starts_with("Test cannot search now: its "),
                        "{e}"
                    );
                }
                Ok(Some(())) => panic!("a blocked run ended in time"),
            }
        }
        assert_eq!(left_at_the_deadline, 1, "{outcomes:?}");
        drop(release);
        let waited = Instant::now();
        while LEFT.left_behind() > MAX_LEFT_BEHIND - 1 {
            assert!(waited.elapsed() < Duration::from_secs(10), "it never ended");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A run that finds every slot held by runs still within their time waits for one
    /// instead of being refused (a model's ninth Grep of one response is not turned away
    /// for being the ninth), and runs as soon as one is free; one whose deadline passes
    /// while it waits is refused as busy, its work never started.
    #[test]
    fn a_run_past_the_slots_waits_for_one_instead_of_being_refused() {
        static BUSY: Runs = Runs::with(MAX_LEFT_BEHIND, 0);
        let shared = Arc::new(Mutex::new(Vec::<u32>::new()));
        let cancel = CancellationToken::new();
        let add = |shared: &Arc<Mutex<Vec<u32>>>| {
            shared.lock().unwrap().push(1);
            Ok(())
        };
        let soon = Instant::now() + Duration::from_millis(100);
        let err = run(job(&BUSY), &shared, soon, &cancel, add).unwrap_err();
        assert_eq!(
            err.to_string(),
            ToolError::msg(job(&BUSY).full(0)).to_string()
        );
        assert!(shared.lock().unwrap().is_empty(), "the work ran");
        // One of the runs ends after 200 ms.
        let ender = std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            BUSY.release();
        });
        let started = Instant::now();
        let later = started + Duration::from_secs(10);
        assert_eq!(
            run(job(&BUSY), &shared, later, &cancel, add).unwrap(),
            Some(())
        );
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(200) && took < Duration::from_secs(5),
            "{took:?}"
        );
        assert_eq!(*shared.lock().unwrap(), [1]);
        ender.join().unwrap();
        assert_eq!(BUSY.left_behind(), 0);
    }

    /// A run whose deadline passes while every slot is held by work that blocks (none of it
    /// left behind yet) is told the tool is busy, in its words, with how many of the slot
    /// holders are stuck: not `Ok(None)`, which callers read as a search that ran, found
    /// nothing and timed out. Its work never starts.
    #[test]
    fn a_run_whose_deadline_passes_waiting_for_a_slot_is_told_the_tool_is_busy() {
        static HELD: Runs = Runs::new();
        let (release, stuck) = channel::<()>();
        let stuck = Arc::new(Mutex::new(stuck));
        // Every slot taken by real work that blocks, with a deadline far away.
        let holders: Vec<_> = (0..MAX_LEFT_BEHIND)
            .map(|_| {
                let stuck = Arc::clone(&stuck);
                std::thread::spawn(move || {
                    run(
                        job(&HELD),
                        &Arc::new(()),
                        Instant::now() + Duration::from_secs(30),
                        &CancellationToken::new(),
                        move |_| {
                            let _ = stuck.lock().unwrap().recv_timeout(Duration::from_secs(30));
                            Ok(())
                        },
                    )
                })
            })
            .collect();
        let waited = Instant::now();
        while HELD.active.load(Ordering::SeqCst) < MAX_LEFT_BEHIND {
            assert!(
                waited.elapsed() < Duration::from_secs(10),
                "slots never taken"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let shared = Arc::new(Mutex::new(Vec::<u32>::new()));
        let add = |shared: &Arc<Mutex<Vec<u32>>>| {
            shared.lock().unwrap().push(1);
            Ok(())
        };
        let soon = Instant::now() + Duration::from_millis(100);
        let outcome = run(job(&HELD), &shared, soon, &CancellationToken::new(), add);
        match outcome {
            Err(e) => assert_eq!(
                e.to_string(),
                ToolError::msg(job(&HELD).full(0)).to_string(),
                "not the busy refusal"
            ),
            Ok(got) => panic!("a run that never got a slot answered Ok({got:?})"),
        }
        assert!(shared.lock().unwrap().is_empty(), "the work ran");
        drop(release);
        for holder in holders {
            assert_eq!(holder.join().unwrap().unwrap(), Some(()));
        }
        wait_until_none_left(&HELD);
    }

    /// While [`MAX_LEFT_BEHIND`] runs are left behind, a new one is refused at once, in
    /// the tool's words with how many are stuck, and its work never starts; one fewer, and
    /// it runs.
    #[test]
    fn a_run_is_refused_in_the_tools_words_while_too_many_are_left_behind() {
        static LEFT: Runs = Runs::with(MAX_LEFT_BEHIND, MAX_LEFT_BEHIND);
        let shared = Arc::new(Mutex::new(Vec::<u32>::new()));
        let later = Instant::now() + Duration::from_secs(10);
        let cancel = CancellationToken::new();
        let add = |shared: &Arc<Mutex<Vec<u32>>>| {
            shared.lock().unwrap().push(1);
            Ok(())
        };
        let err = run(job(&LEFT), &shared, later, &cancel, add).unwrap_err();
        assert_eq!(err.to_string(), job(&LEFT).busy(MAX_LEFT_BEHIND));
        assert!(
            err.to_string().starts_with(&format!(
                "Test cannot search now: {MAX_LEFT_BEHIND} earlier searches are still stuck"
            )),
            "{err}"
        );
        assert!(shared.lock().unwrap().is_empty(), "the work ran");
        LEFT.left_behind
            .store(MAX_LEFT_BEHIND - 1, Ordering::SeqCst);
        LEFT.active.store(MAX_LEFT_BEHIND - 1, Ordering::SeqCst);
        assert_eq!(
            run(job(&LEFT), &shared, later, &cancel, add).unwrap(),
            Some(())
        );
        assert_eq!(*shared.lock().unwrap(), [1]);
    }
}
