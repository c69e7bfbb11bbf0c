//! The running proxy: the upstream as a child process, one thread per direction with blocking
//! I/O (a message crosses the proxy with no hand-off between threads), and the main thread
//! watching for either side to end.

use std::ffi::OsStr;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitCode, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::lines::{Line, read_line, skim};
use crate::options::{Options, StructuredContent};
use crate::pin::Pinning;
use crate::reaper::{Reaper, Swept};
use crate::session::{Forward, Outcome, Session, Side};

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

/// A side's input, written a whole message at a time.
pub(crate) struct Sink<W> {
    writer: Mutex<Option<W>>,
}

impl<W: Write> Sink<W> {
    pub(crate) fn new(writer: W) -> Sink<W> {
        Sink {
            writer: Mutex::new(Some(writer)),
        }
    }

    /// Writes `message` and a `\n`, and flushes. `false` once the other side is gone.
    pub(crate) fn send(&self, message: &mut Vec<u8>) -> bool {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let sent = match writer.as_mut() {
            Some(out) => write_line(out, message).is_ok(),
            None => false,
        };
        if !sent {
            *writer = None;
        }
        sent
    }

    /// Closes the writer, so the side reading it sees the end of its input.
    pub(crate) fn close(&self) {
        self.writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

/// Writes `message` and a `\n`, and flushes: in one write when the message has room for the
/// `\n`, else in two rather than copy a large message to grow it.
pub(crate) fn write_line(out: &mut impl Write, message: &mut Vec<u8>) -> io::Result<()> {
    if message.len() < message.capacity() {
        message.push(b'\n');
        let written = out.write_all(message);
        message.pop();
        written?;
    } else {
        out.write_all(message)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// What the proxy says on stderr, each line prefixed with who says it.
pub(crate) fn report(session: &Session, note: &str) {
    eprintln!("fence mcp ({}): {note}", session.name());
}

/// Acts on one outcome: forward to `onward`, reply to `back`, report the notes. `false` when
/// the side the message was going to is gone.
fn deliver<A: Write, B: Write>(
    session: &Session,
    outcome: Outcome,
    line: &mut Vec<u8>,
    onward: &Sink<A>,
    back: &Sink<B>,
) -> bool {
    for note in &outcome.notes {
        report(session, note);
    }
    for mut reply in outcome.reply {
        back.send(&mut reply);
    }
    let mut heard = match outcome.forward {
        Forward::AsIs => onward.send(line),
        Forward::Rewritten(mut message) => onward.send(&mut message),
        Forward::Nothing => true,
    };
    for mut message in outcome.also {
        heard &= onward.send(&mut message);
    }
    heard
}

/// Spawns the upstream: its stdin and stdout piped to the proxy, its stderr the proxy's own,
/// and on Unix in a process group of its own, so ending the group ends whatever it started and
/// left in it (what left the group is the [`Reaper`]'s).
pub(crate) fn spawn(options: &Options) -> io::Result<Child> {
    let mut command = Command::new(options.command());
    command
        .args(options.args())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command.spawn()
}

/// Gives a pipe a 1 MiB buffer (Linux's limit for an unprivileged process), so a large
/// message crosses it in a few hand-offs between processes rather than hundreds of 64 KiB
/// ones. Anything that is not a pipe, or a system that refuses, keeps what it has.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn widen_pipe(pipe: &impl std::os::fd::AsFd) {
    let _ = nix::fcntl::fcntl(pipe, nix::fcntl::FcntlArg::F_SETPIPE_SZ(1 << 20));
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn widen_pipe<T>(_pipe: &T) {}

/// The name the proxy uses for the upstream until the server gives its own: the command's file
/// name.
pub(crate) fn command_name(command: &OsStr) -> String {
    Path::new(command)
        .file_name()
        .unwrap_or(command)
        .to_string_lossy()
        .into_owned()
}

/// Runs the proxy on the given client input and output until one side ends.
pub(crate) fn serve(
    options: &Options,
    client_in: impl Read + Send + 'static,
    client_out: impl Write + Send + 'static,
) -> ExitCode {
    let name = options
        .name()
        .map_or_else(|| command_name(options.command()), str::to_owned);
    let session = match Engine::open(options, name) {
        Ok(engine) => Arc::new(engine.session()),
        Err(code) => return code,
    };
    let (mut reaper, trouble) = Reaper::start(options.subreaper());
    if let Some(trouble) = trouble {
        report(&session, &trouble);
    }
    let mut child = match spawn(options) {
        Ok(child) => child,
        Err(err) => {
            let status = match err.kind() {
                io::ErrorKind::NotFound => 127,
                io::ErrorKind::PermissionDenied => 126,
                _ => 1,
            };
            report(
                &session,
                &format!(
                    "cannot start {:?}: {err}; check the command after `--`",
                    options.command()
                ),
            );
            return ExitCode::from(status);
        }
    };
    if let Some(trouble) = reaper.watch(child.id()) {
        report(&session, &trouble);
    }
    let (Some(upstream_in), Some(upstream_out)) = (child.stdin.take(), child.stdout.take()) else {
        unreachable!("both pipes were asked for")
    };
    widen_pipe(&upstream_in);
    widen_pipe(&upstream_out);
    let to_upstream = Arc::new(Sink::new(upstream_in));
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
        upstream_out,
        (&to_client, &to_upstream),
        events.clone(),
    );
    #[cfg(unix)]
    let watcher = watch_signals(events);
    #[cfg(not(unix))]
    drop(events);

    let first = woken.recv().unwrap_or(Event::ClientGone);
    let ended = shutdown(
        &session,
        &mut child,
        &to_upstream,
        &woken,
        options.grace(),
        first,
    );
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
    if !ended.output_closed {
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
    exit_code(first, &ended, session.unanswered())
}

/// What every session of one proxy shares: the upstream's name, how structured content is
/// treated, and the pin its definitions are held to.
#[derive(Debug)]
pub(crate) struct Engine {
    name: String,
    named: bool,
    remove_structured: bool,
    pin: Option<Arc<Pinning>>,
}

impl Engine {
    /// The engine the options ask for, calling the upstream `name` until it gives its own
    /// (unless the options name it); the exit status when the pin file cannot be used (2, as
    /// for any input that cannot be read), before any server is started.
    pub(crate) fn open(options: &Options, name: String) -> Result<Engine, ExitCode> {
        let mut engine = Engine {
            name: options.name().map_or(name, str::to_owned),
            named: options.name().is_some(),
            remove_structured: options.structured_content() == StructuredContent::Remove,
            pin: None,
        };
        if let Some((path, mode)) = options.pin() {
            match Pinning::open(path, mode, options.pin_update()) {
                Ok((pin, note)) => {
                    if let Some(note) = note {
                        report(&engine.session(), &note);
                    }
                    engine.pin = Some(Arc::new(pin));
                }
                Err(problem) => {
                    report(&engine.session(), &problem);
                    return Err(ExitCode::from(2));
                }
            }
        }
        Ok(engine)
    }

    /// A new session: one proxied connection's requests, all sharing the pin.
    pub(crate) fn session(&self) -> Session {
        let session = Session::new(self.name.clone(), self.named);
        let session = if self.remove_structured {
            session.removing_structured_content()
        } else {
            session
        };
        match &self.pin {
            Some(pin) => session.pinned(pin.clone()),
            None => session,
        }
    }
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
        if !deliver(session, outcome, &mut line, onward, back) && heard {
            heard = false;
            let _ = events.send(deaf);
        }
        if line.capacity() > 1 << 20 {
            // Do not hold on to the memory of one big message for the rest of the session.
            line = Vec::new();
        }
    }
}

/// Reads the next message from `from`'s input into `line` and says what it becomes; `None`
/// once the input has ended or failed. Blank lines are skipped.
pub(crate) fn next_outcome(
    session: &Session,
    limit: usize,
    from: Side,
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> Option<Outcome> {
    loop {
        return match read_line(reader, line, limit) {
            Ok(Line::Whole) if line.iter().all(u8::is_ascii_whitespace) => continue,
            Ok(Line::Whole) => Some(match from {
                Side::Client => session.client_line(line),
                Side::Upstream => session.upstream_line(line),
            }),
            Ok(Line::Oversized) => {
                let (skimmed, size) = skim(reader, line).ok()?;
                Some(session.oversized(from, skimmed.as_ref(), size, limit))
            }
            Ok(Line::End) | Err(_) => None,
        };
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

#[cfg(unix)]
fn watch_signals(events: Sender<Event>) -> Option<signal_hook::iterator::Handle> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = match signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) {
        Ok(signals) => signals,
        Err(err) => {
            eprintln!(
                "fence mcp: cannot watch for signals ({err}); a signal ends the proxy at once"
            );
            return None;
        }
    };
    let handle = signals.handle();
    thread::spawn(move || {
        for signal in &mut signals {
            if events.send(Event::Signal(signal)).is_err() {
                break;
            }
        }
    });
    Some(handle)
}

/// How the upstream ended: its status, unless it could not be reaped.
#[derive(Debug)]
struct Ended {
    status: Option<ExitStatus>,
    /// Whether its output has closed too (and its thread has delivered everything).
    output_closed: bool,
}

/// Ends the session after `first`: the upstream's stdin is closed, and it has `grace` to exit;
/// then (on Unix) its process group gets SIGTERM and another `grace`; then SIGKILL. A signal
/// to the proxy skips the first wait; a second one skips to SIGKILL. Once the upstream has
/// exited, whatever it started and left in its process group is killed too; what left the
/// group is the [`Reaper`]'s, after this returns.
fn shutdown(
    session: &Session,
    child: &mut Child,
    to_upstream: &Sink<ChildStdin>,
    woken: &Receiver<Event>,
    grace: Duration,
    first: Event,
) -> Ended {
    to_upstream.close();
    let mut output_closed = first == Event::UpstreamOutputClosed;
    let mut stage = if matches!(first, Event::Signal(_)) {
        Stage::Terminate
    } else {
        Stage::Wait
    };
    loop {
        match stage {
            Stage::Wait => {}
            Stage::Terminate => terminate(child),
            Stage::Kill => kill(child),
        }
        let deadline = Instant::now() + grace;
        let timed_out = loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    kill(child);
                    return Ended {
                        status: Some(status),
                        output_closed,
                    };
                }
                Ok(None) => {}
                Err(_) => {
                    return Ended {
                        status: None,
                        output_closed,
                    };
                }
            }
            let now = Instant::now();
            if now >= deadline {
                break true;
            }
            let poll = deadline
                .saturating_duration_since(now)
                .min(Duration::from_millis(10));
            match woken.recv_timeout(poll) {
                Ok(Event::Signal(_)) => break false,
                Ok(Event::UpstreamOutputClosed) => output_closed = true,
                Ok(_) | Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            }
        };
        let waited = grace.as_millis();
        stage = match stage {
            Stage::Wait => {
                if timed_out {
                    report(
                        session,
                        &format!(
                            "the upstream did not exit within {waited} ms of its input closing; sending it SIGTERM"
                        ),
                    );
                }
                Stage::Terminate
            }
            Stage::Terminate => {
                if timed_out {
                    report(
                        session,
                        &format!(
                            "the upstream did not exit within {waited} ms of SIGTERM; killing it"
                        ),
                    );
                }
                Stage::Kill
            }
            Stage::Kill => {
                report(
                    session,
                    "the upstream did not exit even when killed; leaving it",
                );
                return Ended {
                    status: None,
                    output_closed,
                };
            }
        };
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Wait,
    Terminate,
    Kill,
}

/// SIGTERM to the upstream's process group (elsewhere, the process is killed).
pub(crate) fn terminate(child: &mut Child) {
    #[cfg(unix)]
    signal_group(child, nix::sys::signal::Signal::SIGTERM);
    #[cfg(not(unix))]
    let _ = child.kill();
}

/// SIGKILL to the upstream's process group (elsewhere, the process is killed).
pub(crate) fn kill(child: &mut Child) {
    #[cfg(unix)]
    signal_group(child, nix::sys::signal::Signal::SIGKILL);
    #[cfg(not(unix))]
    let _ = child.kill();
}

#[cfg(unix)]
fn signal_group(child: &Child, signal: nix::sys::signal::Signal) {
    // The group was made with the child's pid as its id. It lives while any member does, so
    // its id is not reused before then; ESRCH just means it is already empty.
    if let Ok(group) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(group), signal);
    }
}

/// The proxy's status: 128 + a signal's number when a signal ended it; else the upstream's
/// own status (128 + the signal that ended it); but 1 for a status of 0 when requests were left
/// unanswered, and when the upstream could not be reaped.
fn exit_code(first: Event, ended: &Ended, unanswered: usize) -> ExitCode {
    let code = match (first, ended.status) {
        (Event::Signal(signal), _) => 128 + signal,
        (_, None) => 1,
        (_, Some(status)) => status_code(status),
    };
    let code = if code == 0 && unanswered > 0 { 1 } else { code };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn status_code(status: ExitStatus) -> i32 {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return 128 + signal;
    }
    status.code().unwrap_or(1)
}
