//! The one JSON reader of every surface: it refuses a key written twice in any object.
//!
//! This is a security property, not a style rule. JSON parsers disagree on which of two values
//! wins: the first, the last, or an error. So `{"content":"<fenced>","content":"raw"}` can be
//! fenced text to an auditor and raw text to the model's runtime. A reader that picks a winner
//! can be made to verify what the model never read. Refusing the unit leaves nothing to pick.
//!
//! Every surface parses each unit here: an SSE event's `data`, a record line, a trace line.
//! The rule holds at any depth, for any key, known or not.

use std::cell::Cell;
use std::fmt;

use serde::Deserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::report::ReadError;

/// Parses one unit as a JSON value, refusing a key written twice in any object
/// ([`ReadError::DuplicateKey`]). Every reader goes through here, so the rule is the same on
/// every surface.
pub(crate) fn parse_value(text: &str) -> Result<Value, ReadError> {
    let duplicate = Cell::new(None);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = StrictValue {
        duplicate: &duplicate,
    }
    .deserialize(&mut deserializer)
    .and_then(|value| deserializer.end().map(|()| value));
    value.map_err(|error| match duplicate.take() {
        Some(key) => ReadError::DuplicateKey {
            key,
            column: error.column(),
        },
        None => syntax_or_shape(&error),
    })
}

/// Reads any JSON value as the `Value` visitor of `serde_json` does, except that an object naming a
/// key twice is an error; the key is left in `duplicate` so the caller can say which.
#[derive(Clone, Copy)]
struct StrictValue<'a> {
    duplicate: &'a Cell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for StrictValue<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        // JSON has no NaN or infinity, so the number always exists.
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.into()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                let error = de::Error::custom(format_args!("duplicate key `{key}`"));
                self.duplicate.set(Some(key));
                return Err(error);
            }
            let value = map.next_value_seed(self)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// Reads a JSON value as `T`, reporting a mismatch as [`ReadError::Shape`].
pub(crate) fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, ReadError> {
    serde_json::from_value(value).map_err(|error| ReadError::Shape(error.to_string()))
}

/// A parser's error as a [`ReadError`]: a value of the wrong type is the wrong shape, anything
/// else is not JSON.
fn syntax_or_shape(error: &serde_json::Error) -> ReadError {
    match error.classify() {
        serde_json::error::Category::Data => ReadError::Shape(error.to_string()),
        serde_json::error::Category::Io
        | serde_json::error::Category::Syntax
        | serde_json::error::Category::Eof => ReadError::Json {
            message: error.to_string(),
            column: error.column(),
        },
    }
}
