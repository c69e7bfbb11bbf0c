//! Integration tests of `fence-runtime` live in `tests/`; this library is empty.
