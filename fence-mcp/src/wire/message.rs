//! What the proxy reads of a message it sends over HTTP: the ids of the requests in it (each
//! gets an answer or an error from the response), and what the 2026-07-28 protocol's standard
//! headers repeat of it.

use serde_json::value::RawValue;

use crate::json::{self, Members, elements};

/// The `_meta` key that carries a request's protocol version in 2026-07-28.
const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// What one HTTP body of JSON-RPC holds, as far as the proxy's HTTP side cares.
#[derive(Debug, Default)]
pub(crate) struct Sent {
    /// The ids of its requests (not of notifications, nor of answers).
    pub(crate) requests: Vec<Box<RawValue>>,
    /// The first message's method, for `Mcp-Method`.
    pub(crate) method: Option<String>,
    /// The first message's name, URI or task id, for `Mcp-Name`.
    pub(crate) name: Option<String>,
    /// The protocol version the first message's `_meta` names (2026-07-28 and later).
    pub(crate) protocol: Option<String>,
    /// Whether it is a JSON-RPC batch, which a batch answers.
    pub(crate) batch: bool,
}

impl Sent {
    pub(crate) fn read(body: &[u8]) -> Sent {
        let mut sent = Sent::default();
        let Ok(raw) = serde_json::from_slice::<&RawValue>(body) else {
            return sent;
        };
        sent.batch = raw.get().starts_with('[');
        let messages = if sent.batch {
            elements(raw).unwrap_or_default()
        } else {
            vec![raw]
        };
        for (at, message) in messages.into_iter().enumerate() {
            let Some(members) = Members::of(message) else {
                continue;
            };
            let method = members.one("method").ok().flatten().and_then(json::string);
            let id = members
                .one("id")
                .ok()
                .flatten()
                .filter(|id| id.get() != "null");
            if let (Some(_), Some(id)) = (&method, id) {
                sent.requests.push(id.to_owned());
            }
            if at == 0 {
                sent.first(method.as_deref(), &members);
            }
        }
        sent
    }

    fn first(&mut self, method: Option<&str>, members: &Members<'_>) {
        let Some(method) = method else {
            return;
        };
        self.method = Some(method.to_owned());
        let params = members.one("params").ok().flatten().and_then(Members::of);
        let Some(params) = params else {
            return;
        };
        let key = match method {
            "tools/call" | "prompts/get" => Some("name"),
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => Some("uri"),
            "tasks/get" | "tasks/update" | "tasks/cancel" | "tasks/result" => Some("taskId"),
            _ => None,
        };
        self.name = key.and_then(|key| params.string(key)).map(Into::into);
        self.protocol = params
            .one("_meta")
            .ok()
            .flatten()
            .and_then(Members::of)
            .and_then(|meta| meta.string(PROTOCOL_VERSION_KEY))
            .map(Into::into);
    }
}

/// The protocol version an answer to `initialize` negotiated (its `result.protocolVersion`).
pub(crate) fn negotiated(message: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        result: Option<Negotiated<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Negotiated<'a> {
        #[serde(rename = "protocolVersion", borrow)]
        protocol_version: Option<std::borrow::Cow<'a, str>>,
    }
    let answer = serde_json::from_slice::<Answer<'_>>(message).ok()?;
    Some(answer.result?.protocol_version?.into_owned())
}

/// The `_meta` key of a 2026-07-28 notification that names the `subscriptions/listen` request
/// it is sent for.
pub(crate) const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// `message` with the request id it carries replaced by `id` (exact JSON): an answer's `id`,
/// and the subscription id a `subscriptions/listen` request's notifications and final result
/// name in their `_meta`. `None` when it carries none.
pub(crate) fn with_id(message: &[u8], id: &str) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(message).ok()?;
    let raw: &RawValue = serde_json::from_str(text).ok()?;
    let members = Members::of(raw)?;
    let mut parts = Vec::new();
    if members.one("method").ok()?.is_none() {
        parts.extend(members.one("id").ok()?.map(|old| (old, id.to_owned())));
    }
    let subscription = ["result", "params"]
        .into_iter()
        .find_map(|key| meta_of(&members, key)?.one(SUBSCRIPTION_ID_KEY).ok()?);
    parts.extend(subscription.map(|old| (old, id.to_owned())));
    if parts.is_empty() {
        return None;
    }
    Some(spliced(text, parts))
}

/// A `notifications/progress` with its progress token replaced by `token` (exact JSON).
pub(crate) fn with_progress_token(message: &[u8], token: &str) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(message).ok()?;
    let raw: &RawValue = serde_json::from_str(text).ok()?;
    let old = progress_of(&Members::of(raw)?)?;
    Some(spliced(text, vec![(old, token.to_owned())]))
}

fn progress_of<'a>(members: &Members<'a>) -> Option<&'a RawValue> {
    if members.string("method")? != "notifications/progress" {
        return None;
    }
    Members::of(members.one("params").ok()??)?
        .one("progressToken")
        .ok()?
}

/// The members of the `_meta` of a message's `key` (`params` or `result`).
fn meta_of<'a>(members: &Members<'a>, key: &str) -> Option<Members<'a>> {
    Members::of(Members::of(members.one(key).ok()??)?.one("_meta").ok()??)
}

/// `text` with each part, a value read out of it, replaced by the text paired with it.
pub(crate) fn spliced(text: &str, mut parts: Vec<(&RawValue, String)>) -> Vec<u8> {
    parts.sort_unstable_by_key(|(part, _)| offset(text, part));
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() + 16 * parts.len());
    let mut copied = 0;
    for (part, with) in parts {
        let at = offset(text, part);
        out.extend_from_slice(&bytes[copied..at]);
        out.extend_from_slice(with.as_bytes());
        copied = at + part.get().len();
    }
    out.extend_from_slice(&bytes[copied..]);
    out
}

/// Where `part`, a value read out of `text` (and so borrowed from it), starts in it.
fn offset(text: &str, part: &RawValue) -> usize {
    let at = part.get().as_ptr().addr() - text.as_ptr().addr();
    debug_assert!(at + part.get().len() <= text.len());
    at
}

/// A header value for a name or URI as the 2026-07-28 protocol writes one: as it is when it
/// is printable ASCII without surrounding blanks, else `=?base64?…?=`.
pub(crate) fn header_value(value: &str) -> Option<http::HeaderValue> {
    let blank_ends = value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']);
    let printable = value.bytes().all(|byte| (0x20..0x7f).contains(&byte));
    let looks_encoded = value.starts_with("=?base64?") && value.ends_with("?=");
    let plain = !value.is_empty() && !blank_ends && printable && !looks_encoded;
    if plain {
        return http::HeaderValue::from_str(value).ok();
    }
    http::HeaderValue::from_str(&format!("=?base64?{}?=", base64(value.as_bytes()))).ok()
}

/// Standard base64 with padding: the few header values that need it are short.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let word = chunk.iter().enumerate().fold(0u32, |word, (at, &byte)| {
            word | u32::from(byte) << (16 - 8 * at)
        });
        for at in 0..4 {
            if at <= chunk.len() {
                out.push(char::from(ALPHABET[(word >> (18 - 6 * at) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_names_its_method_name_and_version() {
        let sent = Sent::read(
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fetch","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        assert_eq!(sent.requests.len(), 1);
        assert_eq!(sent.requests[0].get(), "7");
        assert_eq!(sent.method.as_deref(), Some("tools/call"));
        assert_eq!(sent.name.as_deref(), Some("fetch"));
        assert_eq!(sent.protocol.as_deref(), Some("2026-07-28"));
    }

    #[test]
    fn notifications_and_answers_are_not_requests() {
        let sent = Sent::read(
            br#"[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":3,"result":{}},{"jsonrpc":"2.0","id":"a","method":"ping"}]"#,
        );
        let ids: Vec<_> = sent.requests.iter().map(|id| id.get()).collect();
        assert_eq!(ids, [r#""a""#]);
        assert_eq!(sent.method.as_deref(), Some("notifications/initialized"));
    }

    #[test]
    fn a_progress_token_is_given_back() {
        let progress = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":9,"progress":1}}"#;
        assert_eq!(
            with_progress_token(progress, r#""t""#).unwrap(),
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}"#
        );
        let other =
            br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"progressToken":9}}"#;
        assert_eq!(with_progress_token(other, "1"), None);
    }

    #[test]
    fn an_answer_and_a_subscription_notification_get_the_clients_id_back() {
        let answer = br#"{"jsonrpc":"2.0","id":41,"result":{"id":41}}"#;
        assert_eq!(
            with_id(answer, r#""k""#).unwrap(),
            br#"{"jsonrpc":"2.0","id":"k","result":{"id":41}}"#
        );
        let ended = br#"{"jsonrpc":"2.0","result":{"_meta":{"io.modelcontextprotocol/subscriptionId":41}},"id":41}"#;
        assert_eq!(
            with_id(ended, "7").unwrap(),
            br#"{"jsonrpc":"2.0","result":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}},"id":7}"#
        );
        assert!(with_id(br#"{"jsonrpc":"2.0","method":"x","id":41}"#, "1").is_none());
        let update = br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":41}}}"#;
        assert_eq!(
            with_id(update, "7").unwrap(),
            br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}"#
        );
    }

    #[test]
    fn header_values_that_cannot_travel_plain_are_base64() {
        assert_eq!(header_value("fetch").unwrap(), "fetch");
        assert_eq!(header_value(" x").unwrap(), "=?base64?IHg=?=");
        assert_eq!(header_value("é").unwrap(), "=?base64?w6k=?=");
        assert_eq!(header_value("ab").unwrap(), "ab");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"a"), "YQ==");
    }
}

/// What the 2026-07-28 protocol's `Mcp-Param-*` headers repeat of a `tools/call`'s arguments:
/// each tool's properties its input schema annotates with `x-mcp-header`, learnt from the
/// `tools/list` answers the proxy forwards, when the proxy is the HTTP client.
#[derive(Debug, Default)]
pub(crate) struct ParamHeaders {
    /// Tool name to (property path, header name) pairs.
    tools: std::collections::HashMap<String, Vec<(Vec<String>, String)>>,
}

impl ParamHeaders {
    /// Learns the annotations of the tools an upstream message lists, if it lists any.
    pub(crate) fn learn(&mut self, message: &[u8]) {
        if memchr::memmem::find(message, b"x-mcp-header").is_none() {
            return;
        }
        let Ok(message) = serde_json::from_slice::<serde_json::Value>(message) else {
            return;
        };
        let Some(tools) = message["result"]["tools"].as_array() else {
            return;
        };
        for tool in tools {
            let Some(name) = tool["name"].as_str() else {
                continue;
            };
            let mut found = Vec::new();
            annotations(&tool["inputSchema"], &mut Vec::new(), &mut found);
            self.tools.insert(name.to_owned(), found);
        }
    }

    /// The `Mcp-Param-*` headers of a `tools/call` of `tool`, from the request's JSON.
    pub(crate) fn headers(&self, tool: &str, request: &[u8]) -> Vec<(String, http::HeaderValue)> {
        let Some(annotated) = self.tools.get(tool).filter(|found| !found.is_empty()) else {
            return Vec::new();
        };
        let Ok(request) = serde_json::from_slice::<serde_json::Value>(request) else {
            return Vec::new();
        };
        let arguments = &request["params"]["arguments"];
        annotated
            .iter()
            .filter_map(|(path, header)| {
                let value = path
                    .iter()
                    .try_fold(arguments, |value, key| value.get(key))?;
                let text = match value {
                    serde_json::Value::String(text) => text.clone(),
                    serde_json::Value::Bool(_) | serde_json::Value::Number(_) => value.to_string(),
                    _ => return None,
                };
                Some((
                    format!("{}{header}", super::header::PARAM_PREFIX),
                    header_value(&text)?,
                ))
            })
            .collect()
    }
}

/// Every `x-mcp-header` on a property reached from `schema` through `properties` alone.
fn annotations(
    schema: &serde_json::Value,
    path: &mut Vec<String>,
    found: &mut Vec<(Vec<String>, String)>,
) {
    let Some(properties) = schema
        .get("properties")
        .and_then(serde_json::Value::as_object)
    else {
        return;
    };
    for (name, property) in properties {
        path.push(name.clone());
        if let Some(header) = property
            .get("x-mcp-header")
            .and_then(serde_json::Value::as_str)
        {
            if !header.is_empty() && http::HeaderName::from_bytes(header.as_bytes()).is_ok() {
                found.push((path.clone(), header.to_owned()));
            }
        }
        annotations(property, path, found);
        path.pop();
    }
}

#[cfg(test)]
mod param_tests {
    use super::*;

    #[test]
    fn annotated_arguments_become_param_headers() {
        let mut params = ParamHeaders::default();
        params.learn(
            br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"query","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry-Run"}}},"text":{"type":"string"}}}},{"name":"plain","inputSchema":{"type":"object"}}]}}"#,
        );
        let headers = params.headers(
            "query",
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"query","arguments":{"region":"eu west","opts":{"dry":true},"text":"x"}}}"#,
        );
        let mut headers: Vec<_> = headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.to_str().unwrap()))
            .collect();
        // In the order of the schema's properties, which serde_json keeps or sorts depending
        // on its features.
        headers.sort_unstable();
        assert_eq!(
            headers,
            [
                ("mcp-param-Dry-Run", "true"),
                ("mcp-param-Region", "eu west")
            ]
        );
        assert!(params.headers("plain", b"{}").is_empty());
        assert!(params.headers("unknown", b"{}").is_empty());
    }
}
