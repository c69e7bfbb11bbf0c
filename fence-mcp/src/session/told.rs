//! What the proxy tells the client of its own accord, where stderr does not reach it: a warning
//! (`notifications/message`) for each thing the pin withheld, to a client that asked for
//! warnings with `logging/setLevel`; and the errors for the requests of a server that never
//! started.

use serde_json::value::RawValue;

use super::asked::Pending;
use super::{CONNECTION_CLOSED, Session, error_reply};
use crate::json::{self, Members};

/// How many warnings a session keeps, to send one client that enables logging after they were
/// made, and to send each once: past them, stderr alone says what was withheld.
const WARNINGS_KEPT: usize = 64;

/// The logger the proxy's warnings name, for a client that shows or filters by it.
const LOGGER: &str = "fence";

/// MCP's log levels (those of syslog), least severe first.
const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The rank of `warning` in [`LEVELS`].
const WARNING: usize = 3;

/// A session's warnings for its client.
#[derive(Debug, Default)]
pub(super) struct Told {
    /// Whether the client's last `logging/setLevel` asked for warnings.
    enabled: bool,
    /// The warnings made, in order, at most [`WARNINGS_KEPT`].
    warnings: Vec<String>,
    /// How many of them have been sent.
    sent: usize,
}

impl Told {
    /// The client sent `logging/setLevel` with `params`: whether it wants warnings now (a level
    /// it does not name, or none, leaves that as it was); the warnings it has not been sent,
    /// when it does.
    fn set_level(&mut self, params: Option<&RawValue>) -> Vec<Vec<u8>> {
        let level = params
            .and_then(Members::of)
            .and_then(|params| params.string("level"))
            .and_then(|level| LEVELS.iter().position(|known| *known == level));
        if let Some(level) = level {
            self.enabled = level <= WARNING;
        }
        self.unsent()
    }

    /// `warnings` were made: those not made before are kept; the messages to send the client
    /// now (none while it has not asked for warnings).
    fn warn(&mut self, warnings: Vec<String>) -> Vec<Vec<u8>> {
        for warning in warnings {
            if self.warnings.len() < WARNINGS_KEPT && !self.warnings.contains(&warning) {
                self.warnings.push(warning);
            }
        }
        self.unsent()
    }

    /// The warnings not sent yet, as `notifications/message`, when the client wants them.
    fn unsent(&mut self) -> Vec<Vec<u8>> {
        if !self.enabled {
            return Vec::new();
        }
        let unsent = &self.warnings[self.sent..];
        self.sent = self.warnings.len();
        unsent.iter().map(|warning| notification(warning)).collect()
    }
}

/// `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning",…}}`
fn notification(warning: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 + warning.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"#);
    json::write_string(&mut out, LOGGER);
    out.extend_from_slice(br#","data":"#);
    json::write_string(&mut out, &format!("fence mcp: {warning}"));
    out.extend_from_slice(b"}}");
    out
}

impl Session {
    /// The client's `logging/setLevel` with `params` is on its way: what goes back to the
    /// client at once (when it asks for warnings, those it has not been sent).
    pub(super) fn set_level(&self, params: Option<&RawValue>) -> Vec<Vec<u8>> {
        self.state().told.set_level(params)
    }

    /// What the pin withheld since this was last called: the warnings to send the client now.
    pub(super) fn withheld_warnings(&self) -> Vec<Vec<u8>> {
        let Some(pin) = &self.pin else {
            return Vec::new();
        };
        let withheld = pin.take_withheld();
        if withheld.is_empty() {
            return Vec::new();
        }
        self.state().told.warn(withheld)
    }

    /// The upstream could not be started (`why`): every request waiting gets an error saying
    /// why, and is forgotten.
    pub(crate) fn never_started(&self, why: &str) -> Vec<Vec<u8>> {
        let waiting: Vec<Pending> = self.state().client.drain().collect();
        waiting
            .iter()
            .filter(|pending| !pending.cancelled)
            .map(|pending| {
                let message = format!("fence mcp: {why} (for {})", pending.describe());
                error_reply(&pending.id, CONNECTION_CLOSED, &message)
            })
            .collect()
    }
}
