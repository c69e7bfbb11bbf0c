//! The stdio front: the client writes JSON-RPC lines on the proxy's stdin and reads them on
//! its stdout ([`crate::lines`] frames them).

use std::io::{Stdin, Stdout};

use crate::upstream::child::widen_pipe;

/// The client's pipes, widened as a server's are: a large message crosses them in a few
/// hand-offs.
pub(crate) fn client() -> (Stdin, Stdout) {
    let (input, output) = (std::io::stdin(), std::io::stdout());
    widen_pipe(&input);
    widen_pipe(&output);
    (input, output)
}
