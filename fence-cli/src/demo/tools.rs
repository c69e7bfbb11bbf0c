//! The demo's tool handlers and task payloads, written as an agent runtime writes its own: the
//! macros put the fence at each boundary, so none of them can hand the model raw text.

use std::fmt;
use std::io;
use std::path::Path;

use fence_runtime::{Fenced, TaskProvenance, fence_boundary};

/// The demo's one page: the status page of the service the ticket is about. Someone who can
/// edit it planted forged markers in many casings.
pub(super) const STATUS_PAGE: &str = include_str!("../../demo/status-page.html");
pub(super) const STATUS_URL: &str = "https://status.example.com/export";

/// An HTTP response, rendered as a client would show it.
#[derive(Fenced)]
#[fence(display)]
pub(super) struct Page {
    status: u16,
    content_type: &'static str,
    body: &'static str,
}

impl fmt::Display for Page {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "HTTP {}\ncontent-type: {}\n\n{}",
            self.status, self.content_type, self.body
        )
    }
}

/// Why a fetch failed.
#[derive(Debug)]
pub(super) struct NotFound(String);

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP 404: nothing at {}", self.0)
    }
}

/// A web fetch over an offline web of one page: the demo makes no network call.
#[fence_boundary(tool = "web-fetch")]
pub(super) fn web_fetch(url: &str) -> Result<Page, NotFound> {
    if url == STATUS_URL {
        Ok(Page {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: STATUS_PAGE,
        })
    } else {
        Err(NotFound(url.into()))
    }
}

/// A tool that fails: reading a file that is not there. Its error is the tool's own output,
/// so it is fenced too, and the output says it is an error.
#[fence_boundary]
pub(super) fn read_file(path: &Path) -> Result<String, io::Error> {
    std::fs::read_to_string(path)
}

#[cfg(unix)]
pub(super) use self::subprocess::{Exit, sh};

#[cfg(unix)]
mod subprocess {
    use std::cell::{Cell, RefCell};
    use std::io;
    use std::process::{Child, Command, Stdio};
    use std::rc::Rc;

    use fence_runtime::{ContentWriter, Fenced, RenderError, fence_boundary};

    /// Where the command's exit status is left, once its output has been fenced.
    pub(in crate::demo) type Exit = Rc<Cell<Option<i32>>>;

    /// A running command's standard output, fenced as it arrives: the boundary renders it by
    /// copying the pipe into the block a read at a time, through the streaming neutraliser, so
    /// a marker split across two reads is caught and the output is never first gathered into a
    /// string.
    pub(in crate::demo) struct Streamed {
        child: RefCell<Option<Child>>,
        exit: Exit,
    }

    impl Fenced for Streamed {
        fn render(&self, out: &mut ContentWriter<'_>) -> Result<(), RenderError> {
            let mut child = self
                .child
                .borrow_mut()
                .take()
                .ok_or_else(|| RenderError::new("the command's output was already fenced"))?;
            let mut stdout = child
                .stdout
                .take()
                .ok_or_else(|| RenderError::new("the command's stdout is not piped"))?;
            io::copy(&mut stdout, out)?;
            self.exit.set(child.wait()?.code());
            Ok(())
        }
    }

    /// Runs `script` with `sh -c`, its stdout fenced as it arrives.
    #[fence_boundary(tool = "sh")]
    pub(in crate::demo) fn sh(script: &str, exit: &Exit) -> Result<Streamed, io::Error> {
        let child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()?;
        Ok(Streamed {
            child: RefCell::new(Some(child)),
            exit: Rc::clone(exit),
        })
    }
}

/// A ticket that arrived by webhook: an `event` task, untrusted, so it is fenced.
#[derive(Fenced)]
#[fence(task)]
pub(super) struct Webhook {
    #[fence(provenance)]
    pub(super) provenance: TaskProvenance,
    #[fence(content)]
    pub(super) ticket: String,
}

/// The operator asking their own agent for something: a `user` task, trusted, never fenced.
#[derive(Fenced)]
#[fence(task)]
pub(super) struct OperatorRequest {
    #[fence(provenance)]
    pub(super) provenance: TaskProvenance,
    #[fence(content)]
    pub(super) request: String,
}
