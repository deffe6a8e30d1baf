//! Integration tests of the ops framework (see `tests/`).
