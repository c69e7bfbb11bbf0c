//! The engine between every front and every upstream: what all sessions of one proxy share
//! (the upstream's name, how structured content is treated, the pin), and the one place that
//! says where the messages of a session's [`Outcome`] go.

use std::ffi::OsStr;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use crate::options::{Options, StructuredContent, Upstream};
use crate::pin::PinFile;
use crate::session::{Forward, Outcome, Session};

/// What every session of one proxy shares: the upstream's name, how structured content is
/// treated, and the pin its definitions are held to.
#[derive(Debug)]
pub(crate) struct Engine {
    name: String,
    named: bool,
    remove_structured: bool,
    pin: Option<Arc<PinFile>>,
}

impl Engine {
    /// The engine the options ask for, calling the upstream by its command's file name or its
    /// URL's host until it gives its own (unless the options name it); the exit status when the
    /// pin file cannot be used (2, as for any input that cannot be read), before any server is
    /// started.
    pub(crate) fn open(options: &Options) -> Result<Engine, ExitCode> {
        let name = match options.name() {
            Some(name) => name.to_owned(),
            None => default_name(options.upstream()),
        };
        let mut engine = Engine {
            name,
            named: options.name().is_some(),
            remove_structured: options.structured_content() == StructuredContent::Remove,
            pin: None,
        };
        if let Some((path, mode)) = options.pin() {
            match PinFile::open(path, mode, options.pin_update()) {
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

    /// A new session: one proxied connection's requests, all sharing the pin file. The first
    /// session to see a kind of item the file holds nothing of records it, for the rest of
    /// that session; every other is held to the file.
    pub(crate) fn session(&self) -> Session {
        self.session_with(PinFile::session)
    }

    /// A new session that many clients share (the stateless server behind an HTTP front):
    /// each list it sees records what the file holds nothing of yet, and is otherwise held to
    /// the file.
    #[cfg(feature = "http")]
    pub(crate) fn shared_session(&self) -> Session {
        self.session_with(PinFile::shared_session)
    }

    /// A new session, its pin (if the proxy pins) made by `pinning`.
    fn session_with(&self, pinning: impl Fn(&Arc<PinFile>) -> crate::pin::Pinning) -> Session {
        let session = Session::new(self.name.clone(), self.named);
        let session = if self.remove_structured {
            session.removing_structured_content()
        } else {
            session
        };
        match &self.pin {
            Some(pin) => session.pinned(Arc::new(pinning(pin))),
            None => session,
        }
    }
}

/// The name the proxy uses for the upstream until the server gives its own: the command's file
/// name, or the URL's host.
fn default_name(upstream: &Upstream) -> String {
    match upstream {
        Upstream::Child(server) => command_name(server.command()),
        #[cfg(feature = "http")]
        Upstream::Remote(server) => crate::upstream::url::host_of(server.url()),
    }
}

fn command_name(command: &OsStr) -> String {
    Path::new(command)
        .file_name()
        .unwrap_or(command)
        .to_string_lossy()
        .into_owned()
}

/// What the proxy says on stderr, each line prefixed with who says it.
pub(crate) fn report(session: &Session, note: &str) {
    eprintln!("fence mcp ({}): {note}", session.name());
}

/// Where the messages of one [`Outcome`] go: on, to the side the message was going to, and
/// back, to the side that sent it. Each front and upstream says how it writes them;
/// [`deliver`] alone says which goes where, and in what order.
pub(crate) trait Deliver {
    /// The message goes on as it came. `false` once that side is gone.
    fn as_it_came(&mut self) -> bool;
    /// A message of the proxy's own goes on (after the one that came, if that went on).
    /// `false` once that side is gone.
    fn onward(&mut self, message: Vec<u8>) -> bool;
    /// The message goes on rewritten. `false` once that side is gone.
    fn rewritten(&mut self, message: Vec<u8>) -> bool {
        self.onward(message)
    }
    /// A message of the proxy's own goes back to the side that sent the message.
    fn back(&mut self, message: Vec<u8>);
    /// Nothing of the message goes on.
    fn nothing(&mut self) {}
}

/// Acts on one outcome: its notes reported, its replies sent back, then the message (as it
/// came, rewritten, or nothing) and the proxy's own messages after it sent on. `false` when
/// the side they were going to is gone.
pub(crate) fn deliver(session: &Session, outcome: Outcome, to: &mut impl Deliver) -> bool {
    for note in &outcome.notes {
        report(session, note);
    }
    for reply in outcome.reply {
        to.back(reply);
    }
    let mut heard = match outcome.forward {
        Forward::AsIs => to.as_it_came(),
        Forward::Rewritten(message) => to.rewritten(message),
        Forward::Nothing => {
            to.nothing();
            true
        }
    };
    for message in outcome.also {
        heard &= to.onward(message);
    }
    heard
}

/// A [`Deliver`] that collects what goes on, as it came (`message`) or not, and sends what
/// goes back to `back`: for the fronts and upstreams that write whole messages elsewhere.
struct Collect<'a, B: FnMut(Vec<u8>)> {
    message: &'a [u8],
    onward: Vec<Vec<u8>>,
    back: B,
}

impl<'a, B: FnMut(Vec<u8>)> Collect<'a, B> {
    fn new(message: &'a [u8], back: B) -> Self {
        Collect {
            message,
            onward: Vec::new(),
            back,
        }
    }
}

impl<B: FnMut(Vec<u8>)> Deliver for Collect<'_, B> {
    fn as_it_came(&mut self) -> bool {
        self.onward.push(self.message.to_vec());
        true
    }

    fn onward(&mut self, message: Vec<u8>) -> bool {
        self.onward.push(message);
        true
    }

    fn back(&mut self, message: Vec<u8>) {
        (self.back)(message);
    }
}

/// The messages an outcome sends on, `message` being the one that came; what goes back goes to
/// `back`.
pub(crate) fn collected(
    session: &Session,
    outcome: Outcome,
    message: &[u8],
    back: impl FnMut(Vec<u8>),
) -> Vec<Vec<u8>> {
    let mut to = Collect::new(message, back);
    deliver(session, outcome, &mut to);
    to.onward
}
