//! The upstream half: a stdio server the proxy runs as its child ([`child`]), or a Streamable
//! HTTP server at a URL ([`url`]).

pub(crate) mod child;
pub(crate) mod reaper;
#[cfg(feature = "http")]
pub(crate) mod url;
