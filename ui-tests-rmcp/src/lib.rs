//! trybuild cases live in `tests/`; this library is empty.
