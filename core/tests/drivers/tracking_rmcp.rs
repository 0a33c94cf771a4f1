//! The rmcp wrapper over a real rmcp server and client in one process (tokio duplex): one event per
//! request with the right type, URI, duration and error, and responses byte-identical with and
//! without tracking.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcplens::rmcp::Tracked;
use mcplens::tracking::{Batch, Event, ExportPolicy, Tracker, Transport};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResult, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    Prompt, PromptMessage, ProtocolVersion, ReadResourceRequestParams, ReadResourceResult, Resource, ResourceContents,
    ResourceTemplate, Role, ServerCapabilities, ServerConfig, SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const LONG: Duration = Duration::from_secs(60);

/// A small notes server: tools `echo` (sleeps 20 ms) and `divide` (tool error on zero), resources
/// `note://1` and `note://2` (blob), template `note://{id}`, prompt `summarize`.
#[derive(Clone, Default)]
struct Notes;

impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("notes", "0.3.0"))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Owned(vec![ProtocolVersion::V_2025_03_26, ProtocolVersion::V_2025_06_18])
    }

    async fn list_tools(
        &self,
        _r: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = Arc::new(json!({"type": "object"}).as_object().unwrap().clone());
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new("echo", "Echo the text", schema.clone()),
            Tool::new("divide", "a / b", schema),
        ]))
    }

    async fn call_tool(
        &self,
        r: CallToolRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let args = r.arguments.unwrap_or_default();
        match r.name.as_ref() {
            "echo" => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                let text = args.get("text").and_then(Value::as_str).unwrap_or("").to_owned();
                Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
            }
            "divide" => {
                let b = args.get("b").and_then(Value::as_f64).unwrap_or(0.0);
                if b == 0.0 {
                    Ok(CallToolResult::error(vec![ContentBlock::text("division by zero")]).into())
                } else {
                    let a = args.get("a").and_then(Value::as_f64).unwrap_or(0.0);
                    Ok(CallToolResult::success(vec![ContentBlock::text((a / b).to_string())]).into())
                }
            }
            _ => Err(ErrorData::invalid_params("unknown tool", None)),
        }
    }

    async fn list_resources(
        &self,
        _r: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new("note://1", "first")]))
    }

    async fn list_resource_templates(
        &self,
        _r: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![ResourceTemplate::new("note://{id}", "notes")]))
    }

    async fn read_resource(
        &self,
        r: ReadResourceRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        match r.uri.as_str() {
            "note://1" => Ok(ReadResourceResult::new(vec![ResourceContents::text("# One\n", "note://1")]).into()),
            "note://2" => Ok(ReadResourceResult::new(vec![ResourceContents::blob("aGVsbG8=", "note://2")]).into()),
            _ => Err(ErrorData::resource_not_found("no such note", None)),
        }
    }

    async fn subscribe(&self, _r: SubscribeRequestParams, _cx: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _r: UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_prompts(
        &self,
        _r: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new("summarize", Some("Summarize a note"), None)]))
    }

    async fn get_prompt(
        &self,
        _r: GetPromptRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, "Summarize note 1")]).into())
    }
}

fn tracker() -> (Tracker, Arc<Mutex<Vec<Event>>>) {
    let sink: Arc<Mutex<Vec<Event>>> = Arc::default();
    let s = sink.clone();
    let t = Tracker::builder()
        .server("notes", Some("0.3.0"))
        .export_policy(ExportPolicy { max_delay: Duration::ZERO, ..ExportPolicy::default() })
        .callback("test", move |b: &Batch<'_>| {
            s.lock().unwrap().extend(b.events().cloned());
            Ok(())
        })
        .build()
        .unwrap();
    (t, sink)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_event_per_request_through_a_real_client() {
    let (t, sink) = tracker();
    let (srv_io, cli_io) = tokio::io::duplex(64 * 1024);
    let server = Tracked::new(Notes, t.clone()).with_transport(Transport::Memory);
    let srv = tokio::spawn(async move { server.serve(srv_io).await.unwrap().waiting().await });
    let client = ().serve(cli_io).await.unwrap();
    client.peer().set_response_cache_config(rmcp::ClientCacheConfig::disabled()).await;

    let tools = client.list_tools(None).await.unwrap();
    assert_eq!(tools.tools.len(), 2);
    let mut args = serde_json::Map::new();
    args.insert("text".into(), json!("hi"));
    let echoed = client.call_tool(CallToolRequestParams::new("echo").with_arguments(args)).await.unwrap();
    assert_ne!(echoed.is_error, Some(true));
    let mut args = serde_json::Map::new();
    args.insert("a".into(), json!(1));
    args.insert("b".into(), json!(0));
    let divided = client.call_tool(CallToolRequestParams::new("divide").with_arguments(args)).await.unwrap();
    assert_eq!(divided.is_error, Some(true));
    let unknown = client.call_tool(CallToolRequestParams::new("nope")).await;
    assert!(unknown.is_err());
    client.list_resources(None).await.unwrap();
    client.list_resource_templates(None).await.unwrap();
    client.read_resource(ReadResourceRequestParams::new("note://1")).await.unwrap();
    client.read_resource(ReadResourceRequestParams::new("note://2")).await.unwrap();
    assert!(client.read_resource(ReadResourceRequestParams::new("note://9")).await.is_err());
    #[allow(deprecated)]
    {
        client.subscribe(SubscribeRequestParams::new("note://1")).await.unwrap();
        client.unsubscribe(UnsubscribeRequestParams::new("note://1")).await.unwrap();
    }
    client.list_prompts(None).await.unwrap();
    client.get_prompt(GetPromptRequestParams::new("summarize")).await.unwrap();
    client.cancel().await.unwrap();
    let _ = srv.await;

    t.flush(LONG).unwrap();
    let events = sink.lock().unwrap().clone();
    let types: Vec<String> = events.iter().map(|e| e.method.event_type().into_owned()).collect();
    assert_eq!(
        types,
        vec![
            "mcp:initialize",
            "mcp:tools/list",
            "mcp:tools/call",
            "mcp:tools/call",
            "mcp:tools/call",
            "mcp:resources/list",
            "mcp:resources/templates/list",
            "mcp:resources/read",
            "mcp:resources/read",
            "mcp:resources/read",
            "mcp:resources/subscribe",
            "mcp:resources/unsubscribe",
            "mcp:prompts/list",
            "mcp:prompts/get",
        ]
    );
    let session = &events[0].session_id;
    assert!(events.iter().all(|e| &e.session_id == session && e.server.as_ref().unwrap().name == "notes"));
    assert!(session.is_some());
    assert!(events.iter().all(|e| e.transport == Some(Transport::Memory)));
    let init = &events[0];
    assert_eq!(init.client.as_ref().unwrap().name, "rmcp");
    // Later events carry the client and the negotiated version.
    assert_eq!(events[1].client.as_ref().unwrap().name, "rmcp");
    assert!(events[1].protocol_version.is_some());

    let echo = &events[2];
    assert_eq!(echo.resource_name.as_deref(), Some("echo"));
    assert!(echo.duration_ms >= 20.0, "the handler sleeps 20 ms: {}", echo.duration_ms);
    assert!(!echo.is_error);
    assert_eq!(echo.parameters.as_ref().unwrap().value()["arguments"]["text"], "hi");
    assert!(
        echo.parameters.as_ref().unwrap().value()["_meta"].get("progressToken").is_some(),
        "the request _meta is kept"
    );
    assert_eq!(echo.response.as_ref().unwrap().value()["content"][0]["text"], "hi");

    let divide = &events[3];
    assert!(divide.is_error);
    assert_eq!(divide.error.as_ref().unwrap().kind, mcplens::tracking::ErrorKind::Tool);
    assert_eq!(divide.error.as_ref().unwrap().message, "division by zero");

    let nope = &events[4];
    assert_eq!(nope.error.as_ref().unwrap().kind.code(), Some(-32602));

    let read1 = &events[7];
    assert_eq!(read1.resource_name.as_deref(), Some("note://1"));
    assert_eq!(read1.response.as_ref().unwrap().value()["contents"][0]["textBytes"], 6);
    let read2 = &events[8];
    assert_eq!(read2.response.as_ref().unwrap().value()["contents"][0]["blobBytes"], 5);
    let missing = &events[9];
    assert_eq!(missing.resource_name.as_deref(), Some("note://9"));
    assert_eq!(missing.error.as_ref().unwrap().kind.code(), Some(-32002));
    assert_eq!(events[10].resource_name.as_deref(), Some("note://1"));
    assert_eq!(events[13].resource_name.as_deref(), Some("summarize"));
    let ids: std::collections::BTreeSet<&str> = events.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids.len(), events.len());
    t.shutdown(LONG).unwrap();
}

/// Send JSON-RPC lines to a server and collect the raw response lines.
async fn raw_session<S: rmcp::Service<RoleServer>>(server: S, lines: &[Value]) -> Vec<String> {
    let (srv_io, cli_io) = tokio::io::duplex(64 * 1024);
    let srv = tokio::spawn(async move {
        if let Ok(running) = server.serve(srv_io).await {
            let _ = running.waiting().await;
        }
    });
    let (read, mut write) = tokio::io::split(cli_io);
    let mut reader = BufReader::new(read).lines();
    let mut out = Vec::new();
    for msg in lines {
        write.write_all(format!("{msg}\n").as_bytes()).await.unwrap();
        if msg.get("id").is_some() {
            out.push(reader.next_line().await.unwrap().unwrap());
        }
    }
    drop(write);
    drop(reader);
    let _ = srv.await;
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_are_byte_identical_with_and_without_tracking() {
    let req =
        |id: i64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let lines = vec![
        // The server supports up to 2025-06-18: negotiation must give the same answer with the
        // wrapper (it forwards supported_protocol_versions).
        req(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
        ),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        req(2, "tools/list", json!({})),
        req(3, "tools/call", json!({"name": "echo", "arguments": {"text": "same bytes"}})),
        req(4, "tools/call", json!({"name": "divide", "arguments": {"a": 1, "b": 0}})),
        req(5, "tools/call", json!({"name": "missing"})),
        req(
            6,
            "resources/read",
            json!({"uri": "note://1", "_meta": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}),
        ),
        req(7, "resources/read", json!({"uri": "note://404"})),
        req(8, "resources/templates/list", json!({})),
        req(9, "prompts/get", json!({"name": "summarize"})),
        req(10, "ping", json!({})),
    ];
    let plain = raw_session(Notes, &lines).await;
    let (t, sink) = tracker();
    let tracked = raw_session(Tracked::new(Notes, t.clone()), &lines).await;
    assert_eq!(plain.len(), 10);
    assert_eq!(plain, tracked);
    let init: Value = serde_json::from_str(&plain[0]).unwrap();
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");

    t.flush(LONG).unwrap();
    let events = sink.lock().unwrap().clone();
    assert_eq!(events.len(), 10, "ping is tracked too");
    assert!(events.iter().any(|e| e.method == mcplens::tracking::Method::Ping && e.request_id == Some(json!(10))));
    let read = events.iter().find(|e| e.request_id == Some(json!(6))).unwrap();
    assert_eq!(read.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(read.parent_span_id.as_deref(), Some("00f067aa0ba902b7"));
    let missing = events.iter().find(|e| e.request_id == Some(json!(7))).unwrap();
    assert_eq!(missing.error.as_ref().unwrap().kind.code(), Some(-32002));
    assert_eq!(missing.resource_name.as_deref(), Some("note://404"));
    t.shutdown(LONG).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disabled_tracker_is_a_pass_through() {
    let t = Tracker::disabled();
    let lines = vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}),
    ];
    let plain = raw_session(Notes, &lines).await;
    let tracked = raw_session(Tracked::new(Notes, t.clone()), &lines).await;
    assert_eq!(plain, tracked);
    assert_eq!(t.stats().recorded, 0);
}
