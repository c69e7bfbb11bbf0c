//! Where a task came from, and the trust that follows from it.

use core::fmt;
use core::str::FromStr;

use alloc::string::String;

/// Where a task came from.
///
/// The wire spelling is the lowercase name: [`as_str`](Self::as_str) writes it, and
/// [`str::parse`] (through [`FromStr`]) reads exactly it, in no other casing.
///
/// ```
/// use fence_runtime::TaskOrigin;
///
/// assert_eq!(TaskOrigin::Peer.as_str(), "peer");
/// assert_eq!("schedule".parse(), Ok(TaskOrigin::Schedule));
/// assert!("Schedule".parse::<TaskOrigin>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum TaskOrigin {
    /// The agent's operator, typing to it.
    User,
    /// Another agent, over A2A.
    Peer,
    /// The agent's own schedule.
    Schedule,
    /// An external event, such as a webhook.
    Event,
    /// The completion of work the agent delegated.
    Completion,
    /// The runtime itself.
    System,
}

impl TaskOrigin {
    /// Every origin, in declaration order.
    pub const ALL: &'static [TaskOrigin] = &[
        TaskOrigin::User,
        TaskOrigin::Peer,
        TaskOrigin::Schedule,
        TaskOrigin::Event,
        TaskOrigin::Completion,
        TaskOrigin::System,
    ];

    /// The wire spelling: `user`, `peer`, `schedule`, `event`, `completion` or `system`.
    ///
    /// ```
    /// assert_eq!(fence_runtime::TaskOrigin::Completion.as_str(), "completion");
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskOrigin::User => "user",
            TaskOrigin::Peer => "peer",
            TaskOrigin::Schedule => "schedule",
            TaskOrigin::Event => "event",
            TaskOrigin::Completion => "completion",
            TaskOrigin::System => "system",
        }
    }

    /// The trust a task of this origin has when the sender says nothing about its own.
    const fn inherent_trust(self) -> Option<TrustClass> {
        match self {
            TaskOrigin::User | TaskOrigin::Schedule | TaskOrigin::System => {
                Some(TrustClass::Trusted)
            }
            TaskOrigin::Event => Some(TrustClass::Untrusted),
            TaskOrigin::Peer | TaskOrigin::Completion => None,
        }
    }
}

impl fmt::Display for TaskOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TaskOrigin {
    type Err = UnknownWireValue;

    /// Reads an exact wire spelling.
    ///
    /// # Errors
    ///
    /// Any other text, another casing or surrounding whitespace included.
    ///
    /// ```
    /// use fence_runtime::TaskOrigin;
    ///
    /// assert_eq!("event".parse(), Ok(TaskOrigin::Event));
    /// assert_eq!(" event".parse::<TaskOrigin>().unwrap_err().to_string(), "unknown task origin ` event`; expected one of user, peer, schedule, event, completion, system");
    /// ```
    fn from_str(wire: &str) -> Result<Self, Self::Err> {
        TaskOrigin::ALL
            .iter()
            .copied()
            .find(|origin| origin.as_str() == wire)
            .ok_or_else(|| {
                UnknownWireValue::new(
                    "task origin",
                    "one of user, peer, schedule, event, completion, system",
                    wire,
                )
            })
    }
}

/// Whether a task's payload is the operator instructing their own agent (`trusted`) or data
/// the model must not take as instructions (`untrusted`).
///
/// There is no way to give a task a trust class directly: it is derived from the origin by
/// [`TaskProvenance::derive`], and a `peer` or `completion` task is trusted only through
/// [`TaskProvenance::from_authenticated_sender`].
///
/// The wire spelling is the lowercase name: [`as_str`](Self::as_str) writes it, and
/// [`str::parse`] (through [`FromStr`]) reads exactly it.
///
/// ```
/// use fence_runtime::TrustClass;
///
/// assert_eq!("untrusted".parse(), Ok(TrustClass::Untrusted));
/// assert_eq!(TrustClass::Trusted.as_str(), "trusted");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TrustClass {
    /// The operator instructing their own agent: not fenced.
    Trusted,
    /// Data: fenced under `task:<origin>`.
    Untrusted,
}

impl TrustClass {
    /// The wire spelling: `trusted` or `untrusted`.
    ///
    /// ```
    /// assert_eq!(fence_runtime::TrustClass::Untrusted.as_str(), "untrusted");
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            TrustClass::Trusted => "trusted",
            TrustClass::Untrusted => "untrusted",
        }
    }
}

impl fmt::Display for TrustClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TrustClass {
    type Err = UnknownWireValue;

    /// Reads an exact wire spelling.
    ///
    /// # Errors
    ///
    /// Any other text, another casing or surrounding whitespace included.
    ///
    /// ```
    /// use fence_runtime::TrustClass;
    ///
    /// assert_eq!("trusted".parse(), Ok(TrustClass::Trusted));
    /// assert!("TRUSTED".parse::<TrustClass>().is_err());
    /// ```
    fn from_str(wire: &str) -> Result<Self, Self::Err> {
        match wire {
            "trusted" => Ok(TrustClass::Trusted),
            "untrusted" => Ok(TrustClass::Untrusted),
            _ => Err(UnknownWireValue::new(
                "trust class",
                "trusted or untrusted",
                wire,
            )),
        }
    }
}

/// A wire value that is not one of the exact lowercase spellings.
///
/// ```
/// let err = "yes".parse::<fence_runtime::TrustClass>().unwrap_err();
/// assert_eq!(err.value(), "yes");
/// assert_eq!(err.to_string(), "unknown trust class `yes`; expected trusted or untrusted");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownWireValue {
    what: &'static str,
    expected: &'static str,
    value: String,
}

impl UnknownWireValue {
    fn new(what: &'static str, expected: &'static str, value: &str) -> Self {
        UnknownWireValue {
            what,
            expected,
            value: value.into(),
        }
    }

    /// The text that was read.
    #[must_use]
    pub fn value(&self) -> &str {
        &self.value
    }
}

impl fmt::Display for UnknownWireValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} `{}`; expected {}",
            self.what,
            self.value.escape_debug(),
            self.expected
        )
    }
}

impl core::error::Error for UnknownWireValue {}

/// A task's origin and the trust class derived from it.
///
/// Trust is derived, never declared: `user`, `schedule` and `system` tasks are trusted, `event`
/// tasks are untrusted, and `peer` and `completion` tasks are untrusted unless their sender was
/// authenticated by its channel, when they carry the trust it sent. Three functions make one,
/// and only the last can make a `peer` or `completion` task trusted:
///
/// | function | for | trusted when |
/// |---|---|---|
/// | [`derive`](Self::derive) | an origin your runtime knows itself | the origin is `user`, `schedule` or `system` |
/// | [`from_wire`](Self::from_wire) | an origin header of an inbound request | never |
/// | [`from_authenticated_sender`](Self::from_authenticated_sender) | a `peer` or `completion` task whose channel authenticated the sender | the sender sent `trusted` |
///
/// ```
/// use fence_runtime::{TaskOrigin, TaskProvenance, TrustClass};
///
/// let webhook = TaskProvenance::derive(TaskOrigin::Event);
/// assert_eq!(webhook.trust(), TrustClass::Untrusted);
///
/// let peer = TaskProvenance::derive(TaskOrigin::Peer);
/// assert_eq!(peer.trust(), TrustClass::Untrusted);
/// ```
///
/// `derive` takes no sender's trust, so no code that has not named
/// `from_authenticated_sender` can make a peer's task trusted:
///
/// ```compile_fail
/// use fence_runtime::{TaskOrigin, TaskProvenance, TrustClass};
///
/// let claimed: Option<TrustClass> = "trusted".parse().ok();
/// let peer = TaskProvenance::derive(TaskOrigin::Peer, claimed); // error: takes 1 argument
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TaskProvenance {
    origin: TaskOrigin,
    trust: TrustClass,
}

impl TaskProvenance {
    /// The provenance of a task whose origin your runtime knows itself — the operator's own
    /// session, the agent's schedule, a webhook endpoint — with the trust that origin has on its
    /// own.
    ///
    /// | origin | trust |
    /// |---|---|
    /// | `user`, `schedule`, `system` | trusted |
    /// | `event`, `peer`, `completion` | untrusted |
    ///
    /// A `peer` or `completion` task is untrusted here: it carries its sender's trust only
    /// through [`from_authenticated_sender`](Self::from_authenticated_sender). `origin` is what
    /// the runtime knows, never what a request says: read an inbound request's origin header
    /// with [`from_wire`](Self::from_wire), which never yields a trusted task.
    ///
    /// ```
    /// use fence_runtime::{TaskOrigin, TaskProvenance, TrustClass};
    ///
    /// let nightly = TaskProvenance::derive(TaskOrigin::Schedule);
    /// assert_eq!((nightly.origin(), nightly.trust()), (TaskOrigin::Schedule, TrustClass::Trusted));
    ///
    /// let callback = TaskProvenance::derive(TaskOrigin::Completion);
    /// assert_eq!((callback.origin(), callback.trust()), (TaskOrigin::Completion, TrustClass::Untrusted));
    /// ```
    #[must_use]
    pub const fn derive(origin: TaskOrigin) -> TaskProvenance {
        TaskProvenance::inheriting(origin, None)
    }

    /// The derivation table itself: `origin`'s own trust, or for `peer` and `completion` the
    /// trust the sender sent (untrusted when it sent none). Private: only
    /// [`from_authenticated_sender`](Self::from_authenticated_sender) passes a sender's trust.
    const fn inheriting(origin: TaskOrigin, inherited: Option<TrustClass>) -> TaskProvenance {
        let trust = match (origin.inherent_trust(), inherited) {
            (Some(trust), _) | (None, Some(trust)) => trust,
            (None, None) => TrustClass::Untrusted,
        };
        TaskProvenance { origin, trust }
    }

    /// Reads a task's provenance from the origin header of an inbound request. The result is
    /// never trusted.
    ///
    /// Only `peer` and `completion` can be claimed from the wire, and both are untrusted here:
    /// any other origin, an unreadable one, or none at all makes the task an untrusted `event`.
    /// No function that reads header text yields a trusted task. A `peer` or `completion` task
    /// whose sender was authenticated by its channel inherits the sender's trust only through
    /// [`from_authenticated_sender`](Self::from_authenticated_sender).
    ///
    /// ```
    /// use fence_runtime::{TaskOrigin, TaskProvenance, TrustClass};
    ///
    /// // A caller cannot claim to be the operator...
    /// let claimed = TaskProvenance::from_wire(Some("user"));
    /// assert_eq!((claimed.origin(), claimed.trust()), (TaskOrigin::Event, TrustClass::Untrusted));
    ///
    /// // ...nor carry trust in on a header.
    /// let peer = TaskProvenance::from_wire(Some("peer"));
    /// assert_eq!((peer.origin(), peer.trust()), (TaskOrigin::Peer, TrustClass::Untrusted));
    /// ```
    pub fn from_wire(origin_header: Option<&str>) -> TaskProvenance {
        match origin_header.map(str::parse) {
            Some(Ok(origin @ (TaskOrigin::Peer | TaskOrigin::Completion))) => {
                TaskProvenance::derive(origin)
            }
            _ => TaskProvenance::derive(TaskOrigin::Event),
        }
    }

    /// The provenance of a task whose sender its channel authenticated — the peer's own A2A
    /// connection, a signed completion callback — and which therefore inherits the trust the
    /// sender sent.
    ///
    /// This is the one path by which a task from outside the agent can be trusted, and the
    /// only function that takes a [`TrustClass`]: keep calls to it few, and greppable. Only
    /// `peer` and `completion` tasks inherit; as on the wire, any other origin is an untrusted
    /// `event`, so an authenticated sender still cannot claim to be the operator. `sender_trust` is a typed [`TrustClass`]: read it from a
    /// header with [`str::parse`] only after the channel has authenticated the sender.
    ///
    /// ```
    /// use fence_runtime::{TaskOrigin, TaskProvenance, TrustClass};
    ///
    /// let handoff = TaskProvenance::from_authenticated_sender(TaskOrigin::Peer, Some(TrustClass::Trusted));
    /// assert_eq!(handoff.trust(), TrustClass::Trusted);
    ///
    /// let silent = TaskProvenance::from_authenticated_sender(TaskOrigin::Completion, None);
    /// assert_eq!(silent.trust(), TrustClass::Untrusted);
    ///
    /// let operator = TaskProvenance::from_authenticated_sender(TaskOrigin::User, Some(TrustClass::Trusted));
    /// assert_eq!((operator.origin(), operator.trust()), (TaskOrigin::Event, TrustClass::Untrusted));
    /// ```
    #[must_use]
    pub const fn from_authenticated_sender(
        origin: TaskOrigin,
        sender_trust: Option<TrustClass>,
    ) -> TaskProvenance {
        match origin {
            TaskOrigin::Peer | TaskOrigin::Completion => {
                TaskProvenance::inheriting(origin, sender_trust)
            }
            _ => TaskProvenance::derive(TaskOrigin::Event),
        }
    }

    /// Where the task came from.
    ///
    /// ```
    /// use fence_runtime::{TaskOrigin, TaskProvenance};
    ///
    /// assert_eq!(TaskProvenance::derive(TaskOrigin::User).origin(), TaskOrigin::User);
    /// ```
    #[must_use]
    pub const fn origin(&self) -> TaskOrigin {
        self.origin
    }

    /// The derived trust class.
    ///
    /// ```
    /// use fence_runtime::{TaskOrigin, TaskProvenance, TrustClass};
    ///
    /// assert_eq!(TaskProvenance::derive(TaskOrigin::System).trust(), TrustClass::Trusted);
    /// ```
    #[must_use]
    pub const fn trust(&self) -> TrustClass {
        self.trust
    }

    /// Whether the task's payload is fenced: true exactly when it is untrusted.
    ///
    /// ```
    /// use fence_runtime::{TaskOrigin, TaskProvenance};
    ///
    /// assert!(TaskProvenance::derive(TaskOrigin::Event).is_fenced());
    /// assert!(!TaskProvenance::derive(TaskOrigin::User).is_fenced());
    /// ```
    #[must_use]
    pub const fn is_fenced(&self) -> bool {
        matches!(self.trust, TrustClass::Untrusted)
    }
}
