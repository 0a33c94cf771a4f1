//! Async drivers over rmcp 3.x (feature `rmcp`).
