//! The seam and the fakes: what the harness lends a compactor under test. The
//! [`seam::Compactor`] trait every compactor implements, the fake summarizer and
//! provider that answer it (with drawn faults and latency), the allocator of row ids
//! and the seeded random streams. Depends on the model only; knows no compactor.

pub mod ids;
pub mod provider;
pub mod rng;
pub mod seam;
pub mod summarizer;
pub mod test_rows;
