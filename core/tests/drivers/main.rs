//! The core's drivers and exporters against real servers and sinks (rmcp, OTLP, MCPcat), as one
//! test binary. Needs the `rmcp`, `otlp` and `mcpcat` features (`make test` enables them all).

#[path = "../common/mod.rs"]
mod common;

mod hostile_matrix;
mod rmcp_catalog;
mod rmcp_driver;
mod rmcp_python_servers;
mod tracking_http;
mod tracking_rmcp;
