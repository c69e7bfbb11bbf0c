//! The messages the Python SDK reads: pydantic's smart union over `mcp_types/jsonrpc.py`'s four
//! models.

use crate::lenient::Value;

/// Which model of the union `JSONRPCMessage` pydantic makes a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Request,
    Notification,
    Response,
    Error,
}

/// pydantic's smart union over `JSONRPCRequest | JSONRPCNotification | JSONRPCResponse |
/// JSONRPCError`, in lax mode: of the models the message is valid as, the one that sets the
/// most fields (an error's `ErrorData` counting its own), the first on a tie; which makes any
/// valid error an error, and then a request before a response before a notification. Unknown
/// members are ignored. The message as that model holds it.
pub(crate) fn pydantic(message: &Value) -> Result<(Kind, Value), ()> {
    if !message.is_object() {
        return Err(());
    }
    let field = |key: &str| message.get(key);
    let member = |key: &str, value: Value| (key.to_owned(), value);
    if field("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(());
    }
    let jsonrpc = member("jsonrpc", Value::String("2.0".to_owned()));
    let id = field("id").filter(|id| is_request_id(id));
    let params = match field("params") {
        None => Some(None),
        Some(Value::Null) => Some(Some(Value::Null)),
        Some(params) if params.is_object() => Some(Some(params.clone())),
        Some(_) => None,
    };
    if let (Some(error), Some(id)) = (field("error").and_then(error_data), field("id")) {
        if matches!(id, Value::Null) || is_request_id(id) {
            let members = vec![jsonrpc, member("id", id.clone()), member("error", error)];
            return Ok((Kind::Error, Value::Object(members)));
        }
    }
    let method = field("method").and_then(Value::as_str);
    if let (Some(id), Some(method), Some(params)) = (id, method, &params) {
        let mut members = vec![
            jsonrpc,
            member("id", id.clone()),
            member("method", Value::String(method.to_owned())),
        ];
        if let Some(params) = params {
            members.push(member("params", params.clone()));
        }
        return Ok((Kind::Request, Value::Object(members)));
    }
    if let (Some(id), Some(result)) = (id, field("result").filter(|result| result.is_object())) {
        let members = vec![
            jsonrpc,
            member("id", id.clone()),
            member("result", result.clone()),
        ];
        return Ok((Kind::Response, Value::Object(members)));
    }
    if let (Some(method), Some(params)) = (method, params) {
        let mut members = vec![jsonrpc, member("method", Value::String(method.to_owned()))];
        if let Some(params) = params {
            members.push(member("params", params));
        }
        return Ok((Kind::Notification, Value::Object(members)));
    }
    Err(())
}

/// `RequestId`: a strict int (a JSON number with no fraction or exponent), or a string.
pub(super) fn is_request_id(value: &Value) -> bool {
    match value {
        Value::String(_) => true,
        Value::Number(text) => {
            !text.contains(['.', 'e', 'E']) && text != "NaN" && !text.ends_with("Infinity")
        }
        _ => false,
    }
}

/// `ErrorData` in lax mode: its fields as pydantic holds them (`code` an int), or `None`.
fn error_data(error: &Value) -> Option<Value> {
    if !error.is_object() {
        return None;
    }
    let code = lax_int(error.get("code")?)?;
    let message = error.get("message")?.as_str()?;
    let mut members = vec![
        ("code".to_owned(), Value::Number(code)),
        ("message".to_owned(), Value::String(message.to_owned())),
    ];
    if let Some(data) = error.get("data") {
        members.push(("data".to_owned(), data.clone()));
    }
    Some(Value::Object(members))
}

/// An `int` in lax mode: an integer; a finite float with no fraction; `true` and `false`; a
/// string of one (white space around it, a sign, single underscores between digits, a `.` and
/// zeros after it). Its decimal text.
fn lax_int(value: &Value) -> Option<String> {
    let normal = |negative: bool, digits: &str| {
        let digits = digits.trim_start_matches('0');
        match (digits.is_empty(), negative) {
            (true, _) => "0".to_owned(),
            (false, true) => format!("-{digits}"),
            (false, false) => digits.to_owned(),
        }
    };
    match value {
        Value::Bool(flag) => Some(if *flag { "1" } else { "0" }.to_owned()),
        Value::Number(text)
            if !text.contains(['.', 'e', 'E'])
                && text
                    .bytes()
                    .all(|byte| byte == b'-' || byte.is_ascii_digit()) =>
        {
            let negative = text.starts_with('-');
            Some(normal(negative, text.trim_start_matches('-')))
        }
        Value::Number(text) => {
            let float: f64 = text.parse().ok()?;
            if !float.is_finite() || float.fract() != 0.0 {
                return None;
            }
            Some(if float == 0.0 {
                "0".to_owned()
            } else {
                format!("{float:.0}")
            })
        }
        Value::String(text) => {
            let text = text.trim_matches(|ch: char| ch.is_ascii_whitespace());
            let (negative, rest) = match text.as_bytes().first() {
                Some(b'-') => (true, &text[1..]),
                Some(b'+') => (false, &text[1..]),
                _ => (false, text),
            };
            let (whole, fraction) = rest.split_once('.').unwrap_or((rest, "0"));
            if !fraction.bytes().all(|byte| byte == b'0') {
                return None;
            }
            let parts: Vec<&str> = whole.split('_').collect();
            if parts
                .iter()
                .any(|part| part.is_empty() || !part.bytes().all(|byte| byte.is_ascii_digit()))
            {
                return None;
            }
            Some(normal(negative, &parts.concat()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lenient::{self, Dialect};

    fn kind(text: &str) -> Option<Kind> {
        pydantic(&lenient::parse_as(text, Dialect::Pydantic).ok()?)
            .ok()
            .map(|(kind, _)| kind)
    }

    #[test]
    fn the_smart_union_picks_as_pydantic_does() {
        for (text, expected) in [
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
                Some(Kind::Response),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
                Some(Kind::Request),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"},"method":"m"}"#,
                Some(Kind::Error),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
                Some(Kind::Error),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.0,"method":"m"}"#,
                Some(Kind::Notification),
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":true,"message":"x"}}"#,
                Some(Kind::Error),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}"#,
                None,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":" 7_0 ","message":"m"}}"#,
                Some(Kind::Error),
            ),
            (r#"{"jsonrpc":"2.0","id":null,"result":{}}"#, None),
            (r#"{"jsonrpc":"2.0","method":"n","params":[1]}"#, None),
            (
                r#"{"jsonrpc":"2.0","method":"n","params":null}"#,
                Some(Kind::Notification),
            ),
        ] {
            assert_eq!(kind(text), expected, "{text}");
        }
    }
}
