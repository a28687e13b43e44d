//! Provider (todo)
