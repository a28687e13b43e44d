//! The integration tests of the report writers in one test binary.

mod aggregate;
mod common;
mod junit;
mod report_json;
mod text_files;
