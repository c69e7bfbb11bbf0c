//! Stdio front, child upstream (`fence mcp -- COMMAND…`): the server runs as the proxy's child,
//! one thread per direction with blocking I/O (a message crosses the proxy with no hand-off
//! between threads), and the main thread watching for either side to end.

use std::io::{BufReader, Read, Write};
use std::process::{ExitCode, ExitStatus};
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use crate::engine::{Engine, collected, deliver, report};
use crate::lines::{Lines, Sink, next_outcome};
use crate::options::{ChildServer, Options};
use crate::session::{Session, Side};
use crate::upstream::child::{self, Stage, status_code};
use crate::upstream::reaper::{Reaper, Swept};

/// Why the main thread woke up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    /// The client closed the proxy's stdin, or no longer reads its stdout.
    ClientGone,
    /// The upstream closed its stdout; every request left waiting has had its error.
    UpstreamOutputClosed,
    /// The upstream no longer reads its stdin.
    UpstreamInputClosed,
    /// The proxy received this signal.
    Signal(i32),
}

/// Runs the proxy on the given client input and output until one side ends.
pub(crate) fn serve(
    options: &Options,
    server: &ChildServer,
    client_in: impl Read + Send + 'static,
    client_out: impl Write + Send + 'static,
) -> ExitCode {
    let session = match Engine::open(options) {
        Ok(engine) => Arc::new(engine.session()),
        Err(code) => return code,
    };
    let (reaper, trouble) = Reaper::start(server.subreaper());
    if let Some(trouble) = trouble {
        report(&session, &trouble);
    }
    let started = match child::start(server, &reaper) {
        Ok(started) => started,
        Err(err) => {
            let (why, status) = child::cannot_start(server, &err);
            report(&session, &why);
            let limit = options.max_message_bytes();
            refuse_first_request(&session, limit, client_in, client_out, &why);
            return ExitCode::from(status);
        }
    };
    let mut child = started.child;
    let to_upstream = Arc::new(Sink::new(started.input));
    let to_client = Arc::new(Sink::new(client_out));
    let (events, woken) = mpsc::channel();

    let limit = options.max_message_bytes();
    spawn_relay(
        &session,
        limit,
        Side::Client,
        client_in,
        (&to_upstream, &to_client),
        events.clone(),
    );
    spawn_relay(
        &session,
        limit,
        Side::Upstream,
        started.output,
        (&to_client, &to_upstream),
        events.clone(),
    );
    #[cfg(unix)]
    let watcher = crate::signals::watch(events, Event::Signal);
    #[cfg(not(unix))]
    drop(events);

    // Ends the session after the first event: the upstream's stdin is closed, and it has a
    // grace period to exit, then SIGTERM, then SIGKILL; a signal to the proxy skips the first
    // wait, a second one skips to SIGKILL.
    let first = woken.recv().unwrap_or(Event::ClientGone);
    to_upstream.close();
    let mut output_closed = first == Event::UpstreamOutputClosed;
    let stage = if matches!(first, Event::Signal(_)) {
        Stage::Terminate
    } else {
        Stage::Wait
    };
    let status = child::end(
        &mut child,
        options.grace(),
        stage,
        |poll| match woken.recv_timeout(poll) {
            Ok(Event::Signal(_)) => true,
            Ok(Event::UpstreamOutputClosed) => {
                output_closed = true;
                false
            }
            Ok(_) | Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => false,
        },
        |note| report(&session, note),
    );
    reaper.forget(child.id());
    if let Swept::Left(left) = reaper.end_all(options.grace()) {
        report(
            &session,
            &format!(
                "{left} process(es) the upstream left behind did not exit within {} ms of \
                 SIGKILL; leaving them",
                options.grace().as_millis()
            ),
        );
    }
    #[cfg(unix)]
    if let Some(watcher) = watcher {
        watcher.close();
    }
    if !output_closed {
        // Forward what the upstream said before it ended, and the errors for what it left
        // unanswered, while the client may still read them.
        let deadline = Instant::now() + options.grace();
        while let Ok(event) = woken.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if event == Event::UpstreamOutputClosed {
                break;
            }
        }
    }
    exit_code(first, status, session.unanswered())
}

/// How long a proxy whose server could not start waits for the client's first request, to
/// answer it with why, before it exits. A client sends `initialize` as soon as it has started
/// the proxy.
const FIRST_REQUEST_WAIT: Duration = Duration::from_secs(10);

/// The server could not be started (`why`): the client's first request, its `initialize`, is
/// answered with an error saying why, which a client shows, where a proxy that exits unheard
/// shows only "connection closed". Each line before it is read as it would be (a line that is
/// no message gets its error; a notification goes nowhere). Returns once the request is
/// answered, the client's input ends, or [`FIRST_REQUEST_WAIT`] has passed, whichever is first.
fn refuse_first_request(
    session: &Arc<Session>,
    limit: usize,
    client_in: impl Read + Send + 'static,
    client_out: impl Write + Send + 'static,
    why: &str,
) {
    let (session, why) = (session.clone(), why.to_owned());
    let (done, answered) = mpsc::channel();
    // The reader may block on the client's input for ever; it is left behind when the wait ends.
    thread::spawn(move || {
        let to_client = Sink::new(client_out);
        let mut reader = BufReader::with_capacity(1 << 16, client_in);
        let mut line = Vec::new();
        while let Some(outcome) =
            next_outcome(&session, limit, Side::Client, &mut reader, &mut line)
        {
            // What would go on to the server goes nowhere: there is none.
            collected(&session, outcome, &line, |mut reply| {
                to_client.send(&mut reply);
            });
            let errors = session.never_started(&why);
            if !errors.is_empty() {
                for mut error in errors {
                    to_client.send(&mut error);
                }
                break;
            }
        }
        let _ = done.send(());
    });
    let _ = answered.recv_timeout(FIRST_REQUEST_WAIT);
}

/// Relays one direction until its input ends: each line `input` gives is read by the session
/// as coming from `from`, goes on to `onward`, and any reply goes `back`. The first time
/// `onward` no longer reads, the main thread is told that side is gone.
fn relay<A: Write, B: Write>(
    session: &Session,
    limit: usize,
    from: Side,
    input: impl Read,
    (onward, back): (&Sink<A>, &Sink<B>),
    events: &Sender<Event>,
) {
    let deaf = match from {
        Side::Client => Event::UpstreamInputClosed,
        Side::Upstream => Event::ClientGone,
    };
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut line = Vec::new();
    let mut heard = true;
    while let Some(outcome) = next_outcome(session, limit, from, &mut reader, &mut line) {
        let mut to = Lines {
            line: &mut line,
            onward,
            back,
        };
        if !deliver(session, outcome, &mut to) && heard {
            heard = false;
            let _ = events.send(deaf);
        }
        if line.capacity() > 1 << 20 {
            // Do not hold on to the memory of one big message for the rest of the session.
            line = Vec::new();
        }
    }
}

/// Runs [`relay`] on a thread of its own, then tells the main thread its input has ended:
/// the client's, or the upstream's, once every request still waiting has had its error.
fn spawn_relay<R: Read + Send + 'static, A: Write + Send + 'static, B: Write + Send + 'static>(
    session: &Arc<Session>,
    limit: usize,
    from: Side,
    input: R,
    (onward, back): (&Arc<Sink<A>>, &Arc<Sink<B>>),
    events: Sender<Event>,
) {
    let (session, onward, back) = (session.clone(), onward.clone(), back.clone());
    thread::spawn(move || {
        relay(&session, limit, from, input, (&*onward, &*back), &events);
        let ended = match from {
            Side::Client => Event::ClientGone,
            Side::Upstream => {
                for mut error in session.upstream_gone() {
                    onward.send(&mut error);
                }
                Event::UpstreamOutputClosed
            }
        };
        let _ = events.send(ended);
    });
}

/// The proxy's status: 128 + a signal's number when a signal ended it; else the upstream's
/// own status (128 + the signal that ended it); but 1 for a status of 0 when requests were left
/// unanswered, and when the upstream could not be reaped.
fn exit_code(first: Event, status: Option<ExitStatus>, unanswered: usize) -> ExitCode {
    let code = match (first, status) {
        (Event::Signal(signal), _) => 128 + signal,
        (_, None) => 1,
        (_, Some(status)) => status_code(status),
    };
    let code = if code == 0 && unanswered > 0 { 1 } else { code };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
