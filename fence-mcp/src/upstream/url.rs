//! The upstream at a URL: one HTTP client (reqwest, with rustls and the platform's certificate
//! verifier for `https`), the headers the operator gave, and what the proxy asks of every response.

use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue, Method};

use crate::options::RemoteServer;

/// The MCP server at a URL.
#[derive(Debug)]
pub(crate) struct Remote {
    client: reqwest::Client,
    url: reqwest::Url,
    /// `--header`s, sent on every request, replacing the client's of the same name.
    headers: HeaderMap,
}

/// The name the proxy calls a server at `url` until it gives its own: its host.
pub(crate) fn host_of(url: &str) -> String {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned))
        .unwrap_or_else(|| url.to_owned())
}

/// How many redirects within the server's origin the proxy follows for one request.
const MAX_REDIRECTS: usize = 5;

impl Remote {
    /// The upstream at the server's URL; why not, when the URL or a header cannot be used.
    pub(crate) fn new(server: &RemoteServer) -> Result<Remote, String> {
        let url = server.url();
        let url = reqwest::Url::parse(url).map_err(|err| {
            format!("--url {url:?} is not a URL ({err}); give one such as https://example.com/mcp")
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "--url {:?}: the scheme must be http or https",
                url.as_str()
            ));
        }
        let mut headers = HeaderMap::new();
        for (name, value) in server.headers() {
            let parsed = (
                HeaderName::from_bytes(name.trim().as_bytes()),
                HeaderValue::from_bytes(value.trim().as_bytes()),
            );
            let (Ok(name), Ok(mut value)) = parsed else {
                return Err(format!(
                    "--header {name:?}: not a header; write it as 'Name: value'"
                ));
            };
            value.set_sensitive(true);
            headers.append(name, value);
        }
        // Redirects within the server's own origin (`/mcp` to `/mcp/`) are followed, as a
        // client would; one elsewhere is not (the operator's `--header`s would go with it), and
        // reaches the gate, which withholds it rather than send the client past the proxy.
        let origin = url.origin();
        let redirects = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() < MAX_REDIRECTS && attempt.url().origin() == origin {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .tcp_nodelay(true)
            .redirect(redirects)
            .build()
            .map_err(|err| format!("cannot make an HTTP client: {err}"))?;
        Ok(Remote {
            client,
            url,
            headers,
        })
    }

    /// The upstream's URL, as the proxy says it.
    pub(crate) fn url(&self) -> &str {
        self.url.as_str()
    }

    /// What to do when the upstream refuses the proxy's credentials (401 or 403), by what
    /// the operator sent: none (pass a token with `--header`), one holding a variable the
    /// client that started the proxy did not expand (`${TOKEN}` as it is, named here without
    /// any secret), or one that may be wrong.
    pub(crate) fn credentials_advice(&self) -> String {
        if self.headers.is_empty() {
            return "it wants credentials; pass them with --header 'Authorization: Bearer …' \
                    (fence mcp runs no OAuth flow of its own)"
                .to_owned();
        }
        let names: Vec<&str> = self.headers.keys().map(HeaderName::as_str).collect();
        let names = names.join(", ");
        let unexpanded = self.headers.iter().find_map(|(name, value)| {
            let value = String::from_utf8_lossy(value.as_bytes());
            let start = value.find("${")?;
            let end = value[start..]
                .find('}')
                .map_or(value.len(), |end| start + end + 1);
            Some((name, crate::said::shown(&value[start..end])))
        });
        match unexpanded {
            Some((name, variable)) => format!(
                "it refused the --header sent ({names}), and --header {name} holds {variable} as \
                 it is: the client that started fence mcp did not expand that variable. Put the \
                 value itself in the client's configuration, or use a client that expands \
                 variables in `args`"
            ),
            None => format!(
                "it refused the --header sent ({names}): the token may be wrong, expired or \
                 without the access this needs; check its value (a common cause is a `${{TOKEN}}` \
                 in the client's configuration that the client passed on unexpanded)"
            ),
        }
    }

    /// A request to the upstream: `headers` (the client's, or the proxy's own), less those
    /// the proxy owns, then the operator's, and a request for an identity encoding.
    pub(crate) fn request(&self, method: Method, headers: &HeaderMap) -> reqwest::RequestBuilder {
        let mut sent = HeaderMap::with_capacity(headers.len() + self.headers.len() + 2);
        for (name, value) in headers {
            if crate::wire::hop_by_hop(name, headers)
                || name == http::header::HOST
                || name == http::header::CONTENT_LENGTH
                || name == http::header::ACCEPT_ENCODING
                || self.headers.contains_key(name)
            {
                continue;
            }
            sent.append(name.clone(), value.clone());
        }
        for (name, value) in &self.headers {
            sent.append(name.clone(), value.clone());
        }
        sent.insert(
            http::header::ACCEPT_ENCODING,
            HeaderValue::from_static("identity"),
        );
        self.client.request(method, self.url.clone()).headers(sent)
    }
}

/// Why an upstream's body could not be read whole.
#[derive(Debug)]
pub(crate) enum Unread {
    /// It is over the limit, which it names.
    OverLimit(usize),
    /// The connection broke off.
    Broke(reqwest::Error),
}

impl Unread {
    /// What the proxy says of an answer over `limit`.
    pub(crate) fn over_limit(limit: usize) -> String {
        format!("the upstream's answer is over the {limit}-byte limit (--max-message-bytes)")
    }
}

/// Reads a response's body whole, up to `limit` bytes.
pub(crate) async fn read_whole(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, Unread> {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) if body.len() + chunk.len() > limit => {
                return Err(Unread::OverLimit(limit));
            }
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => return Ok(body),
            Err(err) => return Err(Unread::Broke(err)),
        }
    }
}

/// An error and its causes, as one line: reqwest's own says only "error sending request".
pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// How many requests of the proxy's own ([`Aside`]) may be on their way at once.
const MAX_ASIDE: usize = 32;

/// The requests the proxy sends the upstream on its own behalf (its answers to the upstream's
/// requests, which the upstream acknowledges with an empty response): each on a task of its
/// own, so reading the stream that asked goes on, at most [`MAX_ASIDE`] at once (the next
/// waits for one to end), all ended with the shape.
#[derive(Debug)]
pub(crate) struct Aside {
    tasks: std::sync::Mutex<tokio::task::JoinSet<()>>,
    permits: std::sync::Arc<tokio::sync::Semaphore>,
}

impl Default for Aside {
    fn default() -> Aside {
        Aside {
            tasks: std::sync::Mutex::default(),
            permits: std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_ASIDE)),
        }
    }
}

impl Aside {
    /// Sends `request`, its response read and dropped.
    pub(crate) async fn send(&self, request: reqwest::RequestBuilder) {
        let Ok(permit) = self.permits.clone().acquire_owned().await else {
            return;
        };
        let mut tasks = self
            .tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while tasks.try_join_next().is_some() {}
        tasks.spawn(async move {
            let _ = request.send().await;
            drop(permit);
        });
    }
}
