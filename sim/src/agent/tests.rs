//! End-to-end tests of the agent loop.
