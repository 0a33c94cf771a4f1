use super::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"9.9"}}}"#;
const INIT_RESULT: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"resources":{"listChanged":true}},"serverInfo":{"name":"docs","version":"1.2"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn t(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

fn actions(p: &mut Proxy) -> Vec<ProxyAction> {
    std::iter::from_fn(|| p.poll_action()).collect()
}

fn to_host(actions: &[ProxyAction]) -> Vec<Value> {
    actions
        .iter()
        .filter_map(|a| match a {
            ProxyAction::ToHost(l) => Some(serde_json::from_str(l).unwrap()),
            _ => None,
        })
        .collect()
}

fn to_upstream(actions: &[ProxyAction]) -> Vec<Value> {
    actions
        .iter()
        .filter_map(|a| match a {
            ProxyAction::ToUpstream(l) => Some(serde_json::from_str(l).unwrap()),
            _ => None,
        })
        .collect()
}

fn tracks(actions: &[ProxyAction]) -> Vec<TrackRecord> {
    actions
        .iter()
        .filter_map(|a| match a {
            ProxyAction::Track(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// A proxy past the handshake with an upstream that declares resources only.
fn ready(config: ProxyConfig) -> (Proxy, Vec<ProxyAction>) {
    let mut p = Proxy::new(config).unwrap();
    assert_eq!(p.handle_host(INIT.as_bytes(), t(0)), Verdict::Forward);
    assert_eq!(p.handle_upstream(INIT_RESULT.as_bytes(), t(5)), Verdict::Consumed);
    let mut out = actions(&mut p);
    assert_eq!(p.handle_host(INITIALIZED.as_bytes(), t(6)), Verdict::Forward);
    out.extend(actions(&mut p));
    (p, out)
}

/// Answers the proxy's own request `req` (a JSON value from [`to_upstream`]) with `result`.
fn answer(p: &mut Proxy, req: &Value, result: Value, now: Duration) -> Verdict {
    let line = json!({"jsonrpc": "2.0", "id": req["id"], "result": result}).to_string();
    p.handle_upstream(line.as_bytes(), now)
}

/// Answers the proxy's traversal (both lists, empty) until only its reads are left upstream;
/// returns those.
fn answer_lists_empty(p: &mut Proxy, now: Duration) -> Vec<Value> {
    let mut up = to_upstream(&actions(p));
    while let Some(list) = up.iter().find(|m| m["method"] != "resources/read").cloned() {
        let empty = if list["method"] == "resources/list" {
            json!({"resources": []})
        } else {
            json!({"resourceTemplates": []})
        };
        let _ = answer(p, &list, empty, now);
        up = to_upstream(&actions(p));
    }
    up
}

#[test]
fn initialize_result_gains_the_tools_capability_and_keeps_every_other_byte() {
    let (p, out) = ready(ProxyConfig::default());
    let host = out.iter().find_map(|a| if let ProxyAction::ToHost(l) = a { Some(l.clone()) } else { None }).unwrap();
    assert_eq!(host, INIT_RESULT.replace(r#""capabilities":{"#, r#""capabilities":{"tools":{"listChanged":true},"#));
    assert_eq!(p.server(), Some("docs"));
    let init = out.iter().find(|a| matches!(a, ProxyAction::Initialized { .. })).unwrap();
    assert_eq!(
        init,
        &ProxyAction::Initialized {
            server: PeerInfo::new("docs", Some("1.2")),
            client: Some(PeerInfo::new("host", Some("9.9"))),
            protocol_version: Some("2025-06-18".to_owned()),
        }
    );
    let track = tracks(&out);
    assert_eq!(track.len(), 1);
    assert_eq!((&track[0].method, &track[0].request_id), (&Method::Initialize, &TrackedId::Number(0)));
    assert_eq!(track[0].duration, t(5));
    // The answer goes to the host before anything else is done with it.
    assert!(matches!(out[0], ProxyAction::ToHost(_)));
}

#[test]
fn an_upstream_with_tools_or_without_resources_keeps_its_initialize_result() {
    for caps in [r#"{"tools":{},"resources":{}}"#, r#"{"tools":{}}"#, "{}"] {
        let mut p = Proxy::new(ProxyConfig::default()).unwrap();
        let _ = p.handle_host(INIT.as_bytes(), t(0));
        let result =
            format!(r#"{{"jsonrpc":"2.0","id":0,"result":{{"capabilities":{caps},"serverInfo":{{"name":"s"}}}}}}"#);
        assert_eq!(p.handle_upstream(result.as_bytes(), t(1)), Verdict::Forward, "{caps}");
    }
    let no_tools = ProxyConfig { tools: false, ..ProxyConfig::default() };
    let mut p = Proxy::new(no_tools).unwrap();
    let _ = p.handle_host(INIT.as_bytes(), t(0));
    assert_eq!(p.handle_upstream(INIT_RESULT.as_bytes(), t(1)), Verdict::Forward);
}

#[test]
fn results_the_proxy_does_not_own_are_forwarded_and_tracked() {
    let (mut p, _) = ready(ProxyConfig::default());
    let req = r#"{"jsonrpc":"2.0","id":"a-1","method":"prompts/get","params":{"name":"greet"}}"#;
    assert_eq!(p.handle_host(req.as_bytes(), t(10)), Verdict::Forward);
    let res = r#"{"jsonrpc":"2.0","id":"a-1","result":{"messages":[]}}"#;
    assert_eq!(p.handle_upstream(res.as_bytes(), t(13)), Verdict::Forward);
    let track = tracks(&actions(&mut p));
    assert_eq!(
        track,
        vec![TrackRecord {
            method: Method::PromptsGet,
            request_id: TrackedId::Text("a-1".to_owned()),
            started: t(10),
            duration: t(3),
            params: Some(r#"{"name":"greet"}"#.to_owned()),
            result: Some(r#"{"messages":[]}"#.to_owned()),
            error: None,
        }]
    );
    // An error answer is tracked with its code and message.
    let _ = p.handle_host(br#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"x://1"}}"#, t(20));
    let err = br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32002,"message":"nope"}}"#;
    assert_eq!(p.handle_upstream(err, t(21)), Verdict::Forward);
    let track = tracks(&actions(&mut p));
    assert_eq!(track[0].error, Some((-32002, "nope".to_owned())));
    // A method the core does not know is tracked by its name; notifications and garbage are
    // forwarded without a record.
    for line in [
        &br#"{"jsonrpc":"2.0","id":8,"method":"x/custom"}"#[..],
        br#"{"jsonrpc":"2.0","method":"notifications/x"}"#,
        b"not json",
        b"[1,2]",
        b"",
    ] {
        assert_eq!(p.handle_host(line, t(30)), Verdict::Forward);
    }
    assert_eq!(p.handle_upstream(br#"{"jsonrpc":"2.0","id":8,"result":{}}"#, t(31)), Verdict::Forward);
    let track = tracks(&actions(&mut p));
    assert_eq!(track.iter().map(|r| &r.method).collect::<Vec<_>>(), [&Method::Other("x/custom".into())]);
    let off = ProxyConfig { tracking: false, ..ProxyConfig::default() };
    let (mut p, out) = ready(off);
    assert!(tracks(&out).is_empty());
    assert!(out.iter().any(|a| matches!(a, ProxyAction::Initialized { .. })), "the handshake is reported anyway");
    let _ = p.handle_host(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, t(1));
    let _ = p.handle_upstream(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#, t(2));
    assert!(tracks(&actions(&mut p)).is_empty());
}

#[test]
fn an_upstream_without_tools_gets_its_tools_list_from_the_proxy() {
    let (mut p, _) = ready(ProxyConfig::default());
    assert_eq!(p.handle_host(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, t(10)), Verdict::Consumed);
    let out = actions(&mut p);
    let host = to_host(&out);
    let names: Vec<&str> =
        host[0]["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["mcplens_ListMcpResourceTemplatesTool", "mcplens_ListMcpResourcesTool", "mcplens_ReadMcpResourceTool"]
    );
    assert_eq!(tracks(&out)[0].method, Method::ToolsList);
    assert!(to_upstream(&out).is_empty());
}

/// A proxy past the handshake with an upstream that declares tools and resources.
fn ready_with_tools(config: ProxyConfig) -> Proxy {
    let mut p = Proxy::new(config).unwrap();
    let _ = p.handle_host(INIT.as_bytes(), t(0));
    let res = INIT_RESULT.replace(r#""capabilities":{"#, r#""capabilities":{"tools":{},"#);
    assert_eq!(p.handle_upstream(res.as_bytes(), t(5)), Verdict::Forward);
    let _ = p.handle_host(INITIALIZED.as_bytes(), t(6));
    let _ = actions(&mut p);
    p
}

#[test]
fn tools_list_gains_the_prefixed_resource_tools_on_its_first_page_only() {
    let config = ProxyConfig { tool_prefix: "lens.".to_owned(), ..ProxyConfig::default() };
    let mut p = ready_with_tools(config);
    let _ = p.handle_host(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, t(10));
    let upstream_tools = r#"{"name":"echo","inputSchema":{"type":"object"},"x-order":[3,1]}"#;
    let res = format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{upstream_tools}],"nextCursor":"c"}}}}"#);
    assert_eq!(p.handle_upstream(res.as_bytes(), t(11)), Verdict::Consumed);
    let out = actions(&mut p);
    let ProxyAction::ToHost(line) = &out[0] else { panic!("{out:?}") };
    assert!(line.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{upstream_tools},{{"#)));
    assert!(line.ends_with(r#"],"nextCursor":"c"}}"#));
    let v: Value = serde_json::from_str(line).unwrap();
    let names: Vec<&str> =
        v["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["echo", "lens.ListMcpResourceTemplatesTool", "lens.ListMcpResourcesTool", "lens.ReadMcpResourceTool"]
    );
    // One server: the read names none by need.
    assert_eq!(v["result"]["tools"][3]["inputSchema"]["required"], json!(["uri"]));
    // The next page is the upstream's alone.
    let _ = p.handle_host(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"c"}}"#, t(12));
    assert_eq!(p.handle_upstream(br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#, t(13)), Verdict::Forward);
    // An empty first page gets the tools without a leading comma.
    let _ = p.handle_host(br#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}"#, t(14));
    assert_eq!(p.handle_upstream(br#"{"jsonrpc":"2.0","id":4,"result":{"tools":[ ]}}"#, t(15)), Verdict::Consumed);
    let ProxyAction::ToHost(line) = &actions(&mut p)[0] else { panic!() };
    // The upstream's bytes (the space) are kept; no comma before the first tool.
    assert!(line.contains(r#""tools":[ {"name":"lens.ListMcpResourceTemplatesTool""#), "{line}");
}

#[test]
fn listing_calls_traverse_through_the_proxy_and_answer_from_the_catalog() {
    let (mut p, _) = ready(ProxyConfig::default());
    let call = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"mcplens_ListMcpResourceTemplatesTool","arguments":{}}}"#;
    assert_eq!(p.handle_host(call, t(100)), Verdict::Consumed);
    let up = to_upstream(&actions(&mut p));
    assert_eq!(up, vec![json!({"jsonrpc": "2.0", "id": "mcplens-proxy-1", "method": "resources/list"})]);
    let page = json!({"resources": [{"uri": "docs://a", "name": "a"}], "nextCursor": "p2"});
    assert_eq!(answer(&mut p, &up[0], page, t(101)), Verdict::Consumed);
    let up = to_upstream(&actions(&mut p));
    assert_eq!(up[0]["params"], json!({"cursor": "p2"}));
    assert_eq!(answer(&mut p, &up[0], json!({"resources": []}), t(102)), Verdict::Consumed);
    let up = to_upstream(&actions(&mut p));
    assert_eq!(up[0]["method"], "resources/templates/list");
    let templates = json!({"resourceTemplates": [{"uriTemplate": "note://{id}", "name": "note\u{202e}"}]});
    assert_eq!(answer(&mut p, &up[0], templates, t(103)), Verdict::Consumed);
    let out = actions(&mut p);
    let host = to_host(&out);
    assert_eq!(host.len(), 1);
    assert_eq!(host[0]["id"], 5);
    let text: Value = serde_json::from_str(host[0]["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        text,
        json!({"resourceTemplates": [{"uriTemplate": "note://{id}", "name": "note", "server": "docs"}], "failures": [], "total": 1})
    );
    let track = tracks(&out);
    assert_eq!((&track[0].method, track[0].duration), (&Method::ToolsCall, t(3)));
    // Now current: the resources tool answers at once, from the catalog.
    let call = br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"mcplens_ListMcpResourcesTool"}}"#;
    assert_eq!(p.handle_host(call, t(104)), Verdict::Consumed);
    let out = actions(&mut p);
    assert!(to_upstream(&out).is_empty());
    let text = to_host(&out)[0]["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(text.contains(r#""uri":"docs://a""#), "{text}");
}

#[test]
fn reads_go_upstream_and_come_back_rendered() {
    let (mut p, _) = ready(ProxyConfig::default());
    let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcplens_ListMcpResourcesTool"}}"#;
    let _ = p.handle_host(list, t(0));
    let up = to_upstream(&actions(&mut p));
    let _ = answer(&mut p, &up[0], json!({"resources": [{"uri": "docs://a", "name": "a"}]}), t(1));
    let up = to_upstream(&actions(&mut p));
    let _ = answer(&mut p, &up[0], json!({"resourceTemplates": []}), t(2));
    let _ = actions(&mut p);

    let read = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcplens_ReadMcpResourceTool","arguments":{"server":"docs","uri":"docs://a"}}}"#;
    assert_eq!(p.handle_host(read, t(10)), Verdict::Consumed);
    let up = to_upstream(&actions(&mut p));
    assert_eq!(up[0]["method"], "resources/read");
    assert_eq!(up[0]["params"], json!({"uri": "docs://a"}));
    let contents = json!({"contents": [{"uri": "docs://a", "text": "hello\u{200b} there", "_meta": {"x": 1}}]});
    assert_eq!(answer(&mut p, &up[0], contents, t(12)), Verdict::Consumed);
    let host = to_host(&actions(&mut p));
    let text = host[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.ends_with("\n--- content 1 text (11 of 11 characters) ---\nhello there"), "{text}");
    assert!(host[0]["result"].get("isError").is_none());

    // An unlisted URI is refused by the core without a request; the message names no URI.
    let read = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcplens_ReadMcpResourceTool","arguments":{"server":"docs","uri":"secret://token=abc"}}}"#;
    assert_eq!(p.handle_host(read, t(20)), Verdict::Consumed);
    let out = actions(&mut p);
    assert!(to_upstream(&out).is_empty());
    let host = to_host(&out);
    assert_eq!(host[0]["result"]["isError"], true);
    let text = host[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("error: unlisted_uri: ") && !text.contains("secret"), "{text}");

    // A read past its timeout is a `deadline` tool error; the late answer is dropped.
    let read = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mcplens_ReadMcpResourceTool","arguments":{"server":"docs","uri":"docs://a"}}}"#;
    let _ = p.handle_host(read, t(30));
    let up = to_upstream(&actions(&mut p));
    let due = p.poll_timeout().unwrap();
    assert_eq!(due, t(30) + ReadConfig::default().timeout);
    p.handle_timeout(due);
    let host = to_host(&actions(&mut p));
    assert!(host[0]["result"]["content"][0]["text"].as_str().unwrap().starts_with("error: deadline: "));
    assert_eq!(answer(&mut p, &up[0], json!({"contents": []}), due + t(1)), Verdict::Consumed);
    assert!(actions(&mut p).is_empty());
}

#[test]
fn the_proxys_read_cap_fits_what_hosts_pass_on() {
    assert_eq!(ProxyConfig::default().read.max_output_chars, DEFAULT_READ_OUTPUT_CHARS);
    let (mut p, _) = ready(ProxyConfig {
        read: ReadConfig { any_uri: true, ..ProxyConfig::default().read },
        ..ProxyConfig::default()
    });
    let read = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcplens_ReadMcpResourceTool","arguments":{"uri":"docs://big"}}}"#;
    let _ = p.handle_host(read, t(0));
    let up = answer_lists_empty(&mut p, t(1));
    let big = "line\n".repeat(100_000);
    let _ = answer(&mut p, &up[0], json!({"contents": [{"uri": "docs://big", "text": big}]}), t(2));
    let host = to_host(&actions(&mut p));
    let text = host[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.chars().count() <= DEFAULT_READ_OUTPUT_CHARS);
    assert!(text.starts_with(r#"{"truncated":{"textChars":500000,"#), "{}", &text[..200]);
    assert!(text.lines().nth(2) == Some("line"), "the text keeps its lines");
}

#[test]
fn a_first_read_waits_for_the_catalog() {
    let (mut p, _) = ready(ProxyConfig::default());
    let read = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcplens_ReadMcpResourceTool","arguments":{"server":"docs","uri":"note://7"}}}"#;
    assert_eq!(p.handle_host(read, t(0)), Verdict::Consumed);
    // Nothing listed yet: the catalog is traversed first, then the URI checked against it.
    let up = to_upstream(&actions(&mut p));
    assert_eq!(up[0]["method"], "resources/list");
    let _ = answer(&mut p, &up[0], json!({"resources": []}), t(1));
    let up = to_upstream(&actions(&mut p));
    let _ =
        answer(&mut p, &up[0], json!({"resourceTemplates": [{"uriTemplate": "note://{id}", "name": "note"}]}), t(2));
    let up = to_upstream(&actions(&mut p));
    assert_eq!((up[0]["method"].as_str(), &up[0]["params"]), (Some("resources/read"), &json!({"uri": "note://7"})));
    let _ = answer(&mut p, &up[0], json!({"contents": [{"uri": "note://7", "text": "seven"}]}), t(3));
    let host = to_host(&actions(&mut p));
    let text = host[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.ends_with("---\nseven"), "{text}");
}

#[test]
fn bad_tool_input_is_a_tool_error_and_unknown_names_are_relayed() {
    let mut p = ready_with_tools(ProxyConfig::default());
    let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcplens_ListMcpResourcesTool","arguments":{"limit":0}}}"#;
    assert_eq!(p.handle_host(call, t(0)), Verdict::Consumed);
    let host = to_host(&actions(&mut p));
    assert_eq!(host[0]["result"]["isError"], true);
    assert!(host[0]["result"]["content"][0]["text"].as_str().unwrap().starts_with("error: invalid_argument: "));
    // The upstream's own tool, and a resource tool's name without the prefix, go upstream.
    for name in ["echo", "ListMcpResourcesTool"] {
        let call = format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"{name}"}}}}"#);
        assert_eq!(p.handle_host(call.as_bytes(), t(1)), Verdict::Forward);
        let _ = p.handle_upstream(br#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#, t(2));
    }
}

#[test]
fn own_tool_names_are_read_as_json_however_they_are_written() {
    // A relayed call's params are read only when one of the proxy's names is in their text, or
    // an escape could hide one: a name written with an escape is still the proxy's tool, and the
    // upstream's tool is relayed when a proxy name is only in its arguments.
    let mut p = ready_with_tools(ProxyConfig::default());
    let escaped = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcplens\u005fListMcpResourcesTool","arguments":{"limit":0}}}"#;
    assert_eq!(p.handle_host(escaped, t(0)), Verdict::Consumed);
    let host = to_host(&actions(&mut p));
    assert_eq!(host[0]["id"], 1);
    assert!(host[0]["result"]["content"][0]["text"].as_str().unwrap().starts_with("error: invalid_argument: "));
    let mentioned = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"mcplens_ListMcpResourcesTool"}}}"#;
    assert_eq!(p.handle_host(mentioned, t(1)), Verdict::Forward);
    let plain = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
    assert_eq!(p.handle_host(plain, t(2)), Verdict::Forward);
    // The names' common beginning (the prefix) is looked for first: every tool is still found.
    let read = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mcplens_ReadMcpResourceTool","arguments":{}}}"#;
    assert_eq!(p.handle_host(read, t(3)), Verdict::Consumed);
    // With no prefix the names share no beginning: each one is looked for.
    let mut p = ready_with_tools(ProxyConfig { tool_prefix: String::new(), ..ProxyConfig::default() });
    for (id, name) in [(5, "ListMcpResourcesTool"), (6, "ReadMcpResourceTool")] {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{{}}}}}}"#
        );
        assert_eq!(p.handle_host(call.as_bytes(), t(id)), Verdict::Consumed, "{name}");
    }
    assert_eq!(p.handle_host(plain, t(9)), Verdict::Forward);
}

#[test]
fn host_ids_never_collide_with_the_proxys_own() {
    let (mut p, _) = ready(ProxyConfig::default());
    // The host uses the id the proxy would take next: the proxy skips it.
    let ping = br#"{"jsonrpc":"2.0","id":"mcplens-proxy-1","method":"ping"}"#;
    assert_eq!(p.handle_host(ping, t(0)), Verdict::Forward);
    let call = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"mcplens_ListMcpResourcesTool"}}"#;
    let _ = p.handle_host(call, t(1));
    let up = to_upstream(&actions(&mut p));
    assert_eq!(up[0]["id"], "mcplens-proxy-2");
    // The host then uses the proxy's id in flight: relayed under a fresh one, mapped back.
    let get = br#"{"jsonrpc":"2.0","id":"mcplens-proxy-2","method":"prompts/list","params":{}}"#;
    assert_eq!(p.handle_host(get, t(2)), Verdict::Consumed);
    let relayed = to_upstream(&actions(&mut p));
    assert_eq!(
        relayed,
        vec![json!({"jsonrpc": "2.0", "id": "mcplens-proxy-3", "method": "prompts/list", "params": {}})]
    );
    let back = br#"{"jsonrpc":"2.0","id":"mcplens-proxy-3","result":{"prompts":[]}}"#;
    assert_eq!(p.handle_upstream(back, t(3)), Verdict::Consumed);
    let out = actions(&mut p);
    assert_eq!(to_host(&out), vec![json!({"jsonrpc": "2.0", "id": "mcplens-proxy-2", "result": {"prompts": []}})]);
    assert_eq!(tracks(&out)[0].request_id, TrackedId::Text("mcplens-proxy-2".to_owned()));
    // The proxy's own answer is still its own; the host's ping answer is the host's.
    assert_eq!(answer(&mut p, &up[0], json!({"resources": []}), t(4)), Verdict::Consumed);
    assert_eq!(p.handle_upstream(br#"{"jsonrpc":"2.0","id":"mcplens-proxy-1","result":{}}"#, t(5)), Verdict::Forward);
}

#[test]
fn a_cancellation_of_a_remapped_request_names_the_id_the_upstream_knows() {
    let (mut p, _) = ready(ProxyConfig::default());
    let call = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"mcplens_ListMcpResourcesTool"}}"#;
    let _ = p.handle_host(call, t(1));
    let up = to_upstream(&actions(&mut p));
    assert_eq!(up[0]["id"], "mcplens-proxy-1");
    let get = br#"{"jsonrpc":"2.0","id":"mcplens-proxy-1","method":"prompts/list","params":{}}"#;
    assert_eq!(p.handle_host(get, t(2)), Verdict::Consumed);
    assert_eq!(to_upstream(&actions(&mut p))[0]["id"], "mcplens-proxy-2");
    let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"mcplens-proxy-1","reason":"user"}}"#;
    assert_eq!(p.handle_host(cancel, t(3)), Verdict::Consumed);
    assert_eq!(
        to_upstream(&actions(&mut p)),
        vec![json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": "mcplens-proxy-2", "reason": "user"}})]
    );
    // A request relayed under the host's own id is cancelled as the host wrote it.
    let _ = p.handle_host(br#"{"jsonrpc":"2.0","id":5,"method":"prompts/list"}"#, t(4));
    let _ = actions(&mut p);
    assert_eq!(
        p.handle_host(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#, t(5)),
        Verdict::Forward
    );
}

#[test]
fn own_requests_time_out_in_the_order_they_were_sent() {
    let config = ProxyConfig { read: ReadConfig { any_uri: true, ..ReadConfig::default() }, ..ProxyConfig::default() };
    let (mut p, _) = ready(config);
    for (id, uri) in [(1, "docs://a"), (2, "docs://b"), (3, "docs://c"), (4, "docs://d")] {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "mcplens_ReadMcpResourceTool", "arguments": {"uri": uri}}});
        let _ = p.handle_host(call.to_string().as_bytes(), t(10));
    }
    // The catalog is made current first: both lists answered, the four reads go out.
    let up = answer_lists_empty(&mut p, t(11));
    assert_eq!(up.len(), 4, "{up:?}");
    let due = p.poll_timeout().unwrap();
    p.handle_timeout(due);
    let answered: Vec<Value> = to_host(&actions(&mut p)).iter().map(|m| m["id"].clone()).collect();
    assert_eq!(answered, vec![json!(1), json!(2), json!(3), json!(4)]);
}

#[test]
fn own_requests_wait_for_the_handshake_to_finish() {
    let mut p = Proxy::new(ProxyConfig::default()).unwrap();
    let _ = p.handle_host(INIT.as_bytes(), t(0));
    let _ = p.handle_upstream(INIT_RESULT.as_bytes(), t(1));
    let _ = actions(&mut p);
    let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcplens_ListMcpResourcesTool"}}"#;
    let _ = p.handle_host(call, t(2));
    assert!(to_upstream(&actions(&mut p)).is_empty());
    assert_eq!(p.handle_host(INITIALIZED.as_bytes(), t(3)), Verdict::Forward);
    assert_eq!(to_upstream(&actions(&mut p))[0]["method"], "resources/list");
}

#[test]
fn list_changed_refreshes_the_catalog_and_is_relayed() {
    let (mut p, _) = ready(ProxyConfig::default());
    let changed = br#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}"#;
    assert_eq!(p.handle_upstream(changed, t(10)), Verdict::Forward);
    let up = to_upstream(&actions(&mut p));
    assert_eq!(up[0]["method"], "resources/list");
    let _ = answer(&mut p, &up[0], json!({"resources": [{"uri": "docs://new", "name": "new"}]}), t(11));
    let up = to_upstream(&actions(&mut p));
    let _ = answer(&mut p, &up[0], json!({"resourceTemplates": []}), t(12));
    assert!(actions(&mut p).is_empty());
    assert_eq!(p.refresher().catalog().resources(Some("docs")).unwrap()[0].uri, "docs://new");
}

#[test]
fn a_failed_traversal_shows_in_failures() {
    let (mut p, _) = ready(ProxyConfig::default());
    let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcplens_ListMcpResourcesTool"}}"#;
    let _ = p.handle_host(call, t(0));
    let up = to_upstream(&actions(&mut p));
    let err = json!({"jsonrpc": "2.0", "id": up[0]["id"], "error": {"code": -32603, "message": "boom"}}).to_string();
    assert_eq!(p.handle_upstream(err.as_bytes(), t(1)), Verdict::Consumed);
    let host = to_host(&actions(&mut p));
    let text: Value = serde_json::from_str(host[0]["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["failures"][0]["code"], "server_error");
    assert!(!text.to_string().contains("boom"));
    // The refresher retries a transient failure on its timer.
    assert!(p.poll_timeout().is_some());
}

#[test]
fn no_resources_no_tools() {
    let mut p = Proxy::new(ProxyConfig::default()).unwrap();
    let _ = p.handle_host(INIT.as_bytes(), t(0));
    let res = br#"{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"tools":{}},"serverInfo":{"name":"t"}}}"#;
    assert_eq!(p.handle_upstream(res, t(1)), Verdict::Forward);
    let _ = p.handle_host(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, t(2));
    assert_eq!(p.handle_upstream(br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#, t(3)), Verdict::Forward);
    let call = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcplens_ListMcpResourcesTool"}}"#;
    assert_eq!(p.handle_host(call, t(4)), Verdict::Forward);
}

#[test]
fn bad_settings_are_typed_errors() {
    for prefix in ["has space", "ü", &"x".repeat(65)] {
        let e = Proxy::new(ProxyConfig { tool_prefix: prefix.to_owned(), ..ProxyConfig::default() }).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(!e.to_string().contains(prefix));
    }
    let e = Proxy::new(ProxyConfig { server: Some(" ".to_owned()), ..ProxyConfig::default() }).unwrap_err();
    assert_eq!(e.code().as_str(), "invalid_argument");
    assert!(Proxy::new(ProxyConfig { tool_prefix: String::new(), ..ProxyConfig::default() }).is_ok());
}

#[test]
fn the_upstreams_answers_to_the_proxy_never_reach_the_host() {
    let (mut p, _) = ready(ProxyConfig::default());
    let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcplens_ListMcpResourcesTool"}}"#;
    let _ = p.handle_host(call, t(0));
    let up = to_upstream(&actions(&mut p));
    // Not UTF-8: still the proxy's answer (malformed), never relayed.
    let mut bad =
        format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"resources":[{{"uri":"x://1","name":"a"#, up[0]["id"])
            .into_bytes();
    bad.extend_from_slice(b"\xff\xfe\"}]}}");
    assert_eq!(p.handle_upstream(&bad, t(1)), Verdict::Consumed);
    let host = to_host(&actions(&mut p));
    let text: Value = serde_json::from_str(host[0]["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["failures"][0]["code"], "malformed_result");
    // An answer under an id the proxy minted that is not in flight (a wrong or repeated id): dropped.
    let stray = br#"{"jsonrpc":"2.0","id":"mcplens-proxy-1","result":{"resources":[]}}"#;
    assert_eq!(p.handle_upstream(stray, t(2)), Verdict::Consumed);
    assert!(actions(&mut p).is_empty());
    // Answers 100,000 arrays deep or with lone surrogates are still read (and their ids found).
    let _ = p.handle_host(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#, t(3));
    let deep =
        format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"_meta":{}1{}}}}}"#, "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(p.handle_upstream(deep.as_bytes(), t(4)), Verdict::Forward);
    assert_eq!(tracks(&actions(&mut p))[0].method, Method::Ping);
}

#[test]
fn a_cancelled_proxy_call_is_dropped_and_its_read_cancelled_upstream() {
    let (mut p, _) = ready(ProxyConfig::default());
    // A listing call waiting for its traversal: dropped; the traversal still commits.
    let list = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcplens_ListMcpResourcesTool"}}"#;
    let _ = p.handle_host(list, t(0));
    let up = to_upstream(&actions(&mut p));
    let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#;
    assert_eq!(p.handle_host(cancel, t(1)), Verdict::Consumed);
    let _ = answer(&mut p, &up[0], json!({"resources": [{"uri": "docs://a", "name": "a"}]}), t(2));
    let up = to_upstream(&actions(&mut p));
    let _ = answer(&mut p, &up[0], json!({"resourceTemplates": []}), t(3));
    assert!(to_host(&actions(&mut p)).is_empty());

    // A read in flight (the catalog is current now): dropped, and cancelled upstream.
    let read = br#"{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"mcplens_ReadMcpResourceTool","arguments":{"server":"docs","uri":"docs://a"}}}"#;
    let _ = p.handle_host(read, t(4));
    let up = to_upstream(&actions(&mut p));
    assert_eq!(up[0]["method"], "resources/read");
    let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r","reason":"user"}}"#;
    assert_eq!(p.handle_host(cancel, t(5)), Verdict::Consumed);
    let out = actions(&mut p);
    assert_eq!(
        to_upstream(&out),
        vec![json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": up[0]["id"]}})]
    );
    assert!(to_host(&out).is_empty());
    // Its late answer is dropped; no answer ever reaches the host.
    assert_eq!(answer(&mut p, &up[0], json!({"contents": []}), t(6)), Verdict::Consumed);
    assert!(actions(&mut p).is_empty());
    // A cancellation of a relayed request is relayed.
    let _ = p.handle_host(br#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#, t(7));
    let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}"#;
    assert_eq!(p.handle_host(cancel, t(8)), Verdict::Forward);
}

// 2026-07-28: the host begins with server/discover; every request carries an envelope in `_meta`.
const ENVELOPE: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"host","version":"2.0"},"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}"#;

fn discover() -> String {
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{"_meta":{ENVELOPE}}}}}"#)
}

/// The upstream's server/discover result with these capabilities.
fn discovered(caps: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"capabilities":{caps},"resultType":"complete","supportedVersions":["2026-07-28"],"ttlMs":0,"cacheScope":"private","_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"fast","version":"3"}}}}}}}}"#
    )
}

/// A proxy on a 2026-07-28 connection to an upstream with `caps`, and what the handshake did.
fn ready_modern(caps: &str) -> (Proxy, Vec<ProxyAction>) {
    let mut p = Proxy::new(ProxyConfig::default()).unwrap();
    assert_eq!(p.handle_host(discover().as_bytes(), t(0)), Verdict::Forward);
    let _ = p.handle_upstream(discovered(caps).as_bytes(), t(1));
    let out = actions(&mut p);
    (p, out)
}

fn own_notice(p: &mut Proxy) -> Vec<String> {
    actions(p)
        .into_iter()
        .filter_map(|a| match a {
            ProxyAction::Notice(n) => Some(n),
            _ => None,
        })
        .collect()
}

#[test]
fn a_2026_07_28_connection_stamps_the_hosts_envelope_and_listens_for_itself() {
    let (mut p, out) = ready_modern(r#"{"tools":{},"resources":{"listChanged":true}}"#);
    assert_eq!(p.server(), Some("fast"));
    let init = out.iter().find(|a| matches!(a, ProxyAction::Initialized { .. })).unwrap();
    assert_eq!(
        init,
        &ProxyAction::Initialized {
            server: PeerInfo::new("fast", Some("3")),
            client: Some(PeerInfo::new("host", Some("2.0"))),
            protocol_version: Some("2026-07-28".to_owned()),
        }
    );
    let envelope: Value = serde_json::from_str(ENVELOPE).unwrap();
    let up = to_upstream(&out);
    assert_eq!(
        up,
        vec![json!({"jsonrpc": "2.0", "id": "mcplens-proxy-1", "method": "subscriptions/listen",
            "params": {"_meta": envelope, "notifications": {"resourcesListChanged": true}}})]
    );
    assert_eq!(p.refresher().notifications("fast"), Some(Notifications::Listening));
    // The stream's acknowledgement is the proxy's; its deadline goes with it.
    assert!(p.poll_timeout().is_some());
    let ack = br#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"mcplens-proxy-1"},"notifications":{"resourcesListChanged":true}}}"#;
    assert_eq!(p.handle_upstream(ack, t(2)), Verdict::Consumed);
    assert!(actions(&mut p).is_empty());
    assert_eq!(p.poll_timeout(), None);
    // A listing call: the traversal's requests carry the envelope beside their own params.
    let call = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcplens_ListMcpResourceTemplatesTool","arguments":{},"_meta":{}}}"#;
    assert_eq!(p.handle_host(call, t(3)), Verdict::Consumed);
    let up = to_upstream(&actions(&mut p));
    assert_eq!(up[0]["params"], json!({"_meta": envelope}));
    let page = json!({"resources": [], "nextCursor": "c2", "resultType": "complete", "ttlMs": 0});
    let _ = answer(&mut p, &up[0], page, t(4));
    let up = to_upstream(&actions(&mut p));
    assert_eq!(up[0]["params"], json!({"_meta": envelope, "cursor": "c2"}));
    let _ = answer(&mut p, &up[0], json!({"resources": []}), t(5));
    let up = to_upstream(&actions(&mut p));
    let _ = answer(&mut p, &up[0], json!({"resourceTemplates": [{"uriTemplate": "a://{x}", "name": "a"}]}), t(6));
    let host = to_host(&actions(&mut p));
    // The proxy's own result speaks the revision.
    assert_eq!(host[0]["result"]["resultType"], "complete");
    // A list_changed on the proxy's stream is the proxy's: consumed, and the catalog re-lists.
    let changed = br#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"mcplens-proxy-1"}}}"#;
    assert_eq!(p.handle_upstream(changed, t(7)), Verdict::Consumed);
    let up = to_upstream(&actions(&mut p));
    assert_eq!((&up[0]["method"], &up[0]["params"]), (&json!("resources/list"), &json!({"_meta": envelope})));
    // One on a stream of the host's is relayed (and re-lists as well).
    let hosts = br#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}}"#;
    assert_eq!(p.handle_upstream(hosts, t(8)), Verdict::Forward);
    let hosts_ack = br#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"},"notifications":{}}}"#;
    assert_eq!(p.handle_upstream(hosts_ack, t(9)), Verdict::Forward);
}

#[test]
fn the_proxys_listen_stream_refused_or_ended() {
    let caps = r#"{"resources":{"listChanged":true}}"#;
    let refuse = |code: i64| {
        json!({"jsonrpc": "2.0", "id": "mcplens-proxy-1", "error": {"code": code, "message": "no"}}).to_string()
    };
    // -32601: the upstream offers no change notifications; nothing to tell.
    let (mut p, _) = ready_modern(caps);
    assert_eq!(p.handle_upstream(refuse(-32601).as_bytes(), t(2)), Verdict::Consumed);
    assert!(own_notice(&mut p).is_empty());
    assert_eq!(p.refresher().notifications("fast"), Some(Notifications::NotOffered));
    // Any other refusal: the operator is told, with the code; the server's text is not repeated.
    let (mut p, _) = ready_modern(caps);
    assert_eq!(p.handle_upstream(refuse(-32603).as_bytes(), t(2)), Verdict::Consumed);
    let notice = own_notice(&mut p);
    assert_eq!(notice.len(), 1);
    assert!(notice[0].starts_with("server_error: ") && notice[0].contains("fast") && notice[0].contains("-32603"));
    assert!(!notice[0].contains("no\""), "{notice:?}");
    assert_eq!(p.refresher().notifications("fast"), None);
    // Not acknowledged within the traversal deadline: cancelled upstream, a transport error.
    let (mut p, _) = ready_modern(caps);
    let due = p.poll_timeout().unwrap();
    p.handle_timeout(due);
    let out = actions(&mut p);
    assert_eq!(
        to_upstream(&out),
        vec![
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "mcplens-proxy-1"}})
        ]
    );
    assert!(matches!(&out[1], ProxyAction::Notice(n) if n.starts_with("transport_error: ")), "{out:?}");
    // Ended after its acknowledgement (the server closed it): no more notifications, and a change
    // may have gone unheard: the pair is listed again.
    let (mut p, _) = ready_modern(caps);
    let ack = br#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"mcplens-proxy-1"},"notifications":{"resourcesListChanged":true}}}"#;
    let _ = p.handle_upstream(ack, t(2));
    let call = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcplens_ListMcpResourcesTool"}}"#;
    let _ = p.handle_host(call, t(3));
    let up = to_upstream(&actions(&mut p));
    let _ = answer(&mut p, &up[0], json!({"resources": []}), t(4));
    let up = to_upstream(&actions(&mut p));
    let _ = answer(&mut p, &up[0], json!({"resourceTemplates": []}), t(5));
    let _ = actions(&mut p);
    let closed = br#"{"jsonrpc":"2.0","id":"mcplens-proxy-1","result":{"resultType":"complete"}}"#;
    assert_eq!(p.handle_upstream(closed, t(6)), Verdict::Consumed);
    let out = actions(&mut p);
    assert_eq!(to_upstream(&out)[0]["method"], "resources/list");
    assert!(out.iter().any(|a| matches!(a, ProxyAction::Notice(n) if n.contains("fast"))), "{out:?}");
    assert_eq!(p.refresher().notifications("fast"), Some(Notifications::NotOffered));
}

#[test]
fn a_2026_07_28_upstream_without_tools() {
    // No listChanged advertised: no stream. The tools list is the proxy's, in the revision's shape.
    let (mut p, out) = ready_modern(r#"{"resources":{}}"#);
    assert!(to_upstream(&out).is_empty());
    assert_eq!(p.refresher().notifications("fast"), Some(Notifications::NotOffered));
    let host = to_host(&out);
    assert_eq!(host[0]["result"]["capabilities"]["tools"], json!({"listChanged": true}));
    let list = format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"_meta":{ENVELOPE}}}}}"#);
    assert_eq!(p.handle_host(list.as_bytes(), t(2)), Verdict::Consumed);
    let result = &to_host(&actions(&mut p))[0]["result"];
    assert_eq!(result["tools"].as_array().unwrap().len(), 3);
    assert_eq!(
        (&result["resultType"], &result["ttlMs"], &result["cacheScope"]),
        (&json!("complete"), &json!(0), &json!("private"))
    );
}

#[test]
fn on_2026_07_28_the_tools_list_changed_goes_only_on_a_hosts_stream_that_asked() {
    let (mut p, _) = ready_modern(r#"{"tools":{},"resources":{}}"#);
    let listen = br#"{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}"#;
    assert_eq!(p.handle_host(listen, t(2)), Verdict::Forward);
    let quiet = br#"{"jsonrpc":"2.0","id":"listen-2","method":"subscriptions/listen","params":{"notifications":{"promptsListChanged":true}}}"#;
    assert_eq!(p.handle_host(quiet, t(2)), Verdict::Forward);
    let _ = p.handle_host(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#, t(3));
    let _ = p.handle_upstream(br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[],"resultType":"complete"}}"#, t(4));
    let _ = actions(&mut p);
    // The connection closes: the proxy's tools go.
    let (server, epoch) = (p.server().unwrap().to_owned(), p.refresher().epoch("fast").unwrap());
    assert!(p.refresher.detach(&server, epoch));
    p.drain(t(5));
    assert_eq!(
        to_host(&actions(&mut p)),
        vec![json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"}}})]
    );
    // Once the host's stream ended, nothing goes.
    let _ = p.handle_upstream(br#"{"jsonrpc":"2.0","id":"listen-1","result":{"resultType":"complete"}}"#, t(6));
    assert!(p.host_tool_streams.is_empty());
}

/// Lists one resource `docs://a` through the proxy's listing tool (the catalog is then current).
fn list_once(p: &mut Proxy, now: u64) {
    let list = br#"{"jsonrpc":"2.0","id":"l","method":"tools/call","params":{"name":"mcplens_ListMcpResourcesTool"}}"#;
    let _ = p.handle_host(list, t(now));
    let up = to_upstream(&actions(p));
    let _ = answer(p, &up[0], json!({"resources": [{"uri": "docs://a", "name": "a"}]}), t(now + 1));
    let up = to_upstream(&actions(p));
    let _ = answer(p, &up[0], json!({"resourceTemplates": []}), t(now + 2));
    let _ = actions(p);
}

#[test]
fn one_server_a_read_needs_no_server_name_and_another_name_is_refused() {
    let config = ProxyConfig { server: Some("everything".to_owned()), ..ProxyConfig::default() };
    let (mut p, _) = ready(config);
    list_once(&mut p, 0);
    let read = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcplens_ReadMcpResourceTool","arguments":{"uri":"docs://a"}}}"#;
    assert_eq!(p.handle_host(read, t(10)), Verdict::Consumed);
    let up = to_upstream(&actions(&mut p));
    assert_eq!((up[0]["method"].as_str(), &up[0]["params"]), (Some("resources/read"), &json!({"uri": "docs://a"})));
    let _ = answer(&mut p, &up[0], json!({"contents": [{"uri": "docs://a", "text": "A"}]}), t(11));
    let host = to_host(&actions(&mut p));
    assert!(host[0]["result"].get("isError").is_none(), "{host:?}");
    // The name the host gave (--server) reads too; serverInfo's name does not.
    for (server, ok) in [("everything", true), ("docs", false), ("", false)] {
        let read = json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcplens_ReadMcpResourceTool","arguments":{"server":server,"uri":"docs://a"}}});
        let _ = p.handle_host(read.to_string().as_bytes(), t(20));
        let out = actions(&mut p);
        assert_eq!(to_upstream(&out).len(), usize::from(ok), "{server}");
        if !ok {
            let text = to_host(&out)[0]["result"]["content"][0]["text"].as_str().unwrap().to_owned();
            assert!(text.starts_with("error: unknown_server: ") && text.contains("everything"), "{text}");
        } else {
            let up = to_upstream(&out);
            let _ = answer(&mut p, &up[0], json!({"contents": []}), t(21));
            let _ = actions(&mut p);
        }
    }
}

#[test]
fn a_server_tool_named_like_the_proxys_keeps_its_name_and_the_proxys_takes_a_free_one() {
    let mut p = ready_with_tools(ProxyConfig::default());
    let _ = p.handle_host(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, t(10));
    let theirs = r#"{"name":"mcplens_ReadMcpResourceTool","inputSchema":{"type":"object"}},{"name":"mcplens_ReadMcpResourceTool_2","inputSchema":{"type":"object"}}"#;
    let res = format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{theirs}]}}}}"#);
    assert_eq!(p.handle_upstream(res.as_bytes(), t(11)), Verdict::Consumed);
    let out = actions(&mut p);
    let v = &to_host(&out)[0];
    let names: Vec<&str> =
        v["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "mcplens_ReadMcpResourceTool",
            "mcplens_ReadMcpResourceTool_2",
            "mcplens_ListMcpResourceTemplatesTool",
            "mcplens_ListMcpResourcesTool",
            "mcplens_ReadMcpResourceTool_3"
        ]
    );
    let notices: Vec<&String> =
        out.iter().filter_map(|a| if let ProxyAction::Notice(n) = a { Some(n) } else { None }).collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("mcplens_ReadMcpResourceTool_3") && notices[0].contains("--tool-prefix"));
    // The server's tool is reached as it is; the proxy's by its new name.
    let call = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcplens_ReadMcpResourceTool","arguments":{"server":"docs","uri":"docs://a"}}}"#;
    assert_eq!(p.handle_host(call, t(12)), Verdict::Forward);
    let call = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mcplens_ReadMcpResourceTool_3","arguments":{"uri":"docs://a"}}}"#;
    assert_eq!(p.handle_host(call, t(13)), Verdict::Consumed);
    // Listed again the same way: no second notice.
    let _ = actions(&mut p);
    let _ = p.handle_host(br#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#, t(14));
    let res = format!(r#"{{"jsonrpc":"2.0","id":5,"result":{{"tools":[{theirs}]}}}}"#);
    let _ = p.handle_upstream(res.as_bytes(), t(15));
    assert!(!actions(&mut p).iter().any(|a| matches!(a, ProxyAction::Notice(_))));
}

#[test]
fn own_tool_names_skip_every_taken_name() {
    let taken = ["p_X", "p_X_2", "p_X_4"];
    assert_eq!(own_tool_name("p_", "X", |n| taken.contains(&n)), "p_X_3");
    assert_eq!(own_tool_name("p_", "Y", |n| taken.contains(&n)), "p_Y");
}

#[test]
fn the_hosts_end_answers_the_upstreams_requests_still_waiting() {
    let (mut p, _) = ready(ProxyConfig::default());
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"roots/list"}"#,
        r#"{"jsonrpc":"2.0","id":"e","method":"elicitation/create","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    ] {
        assert_eq!(p.handle_upstream(line.as_bytes(), t(1)), Verdict::Forward);
    }
    // The host answered the ping.
    assert_eq!(p.handle_host(br#"{"jsonrpc":"2.0","id":2,"result":{}}"#, t(2)), Verdict::Forward);
    let _ = actions(&mut p);
    p.handle_host_end(t(3));
    let up = to_upstream(&actions(&mut p));
    assert_eq!(up.len(), 2, "{up:?}");
    assert_eq!((&up[0]["id"], &up[0]["error"]["code"]), (&json!(1), &json!(HOST_ENDED_CODE)));
    assert_eq!(up[1]["id"], "e");
}

#[test]
fn a_message_over_the_bound_answers_the_request_it_belongs_to() {
    let (mut p, _) = ready(ProxyConfig { max_message_bytes: 2048, ..ProxyConfig::default() });
    // A host request over the bound: answered by the proxy, never relayed.
    p.handle_host_oversize(
        br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x","arguments":{"pad":"xxx"#,
        b"xxx\"}}}",
        t(1),
    );
    let out = actions(&mut p);
    assert!(to_upstream(&out).is_empty());
    let host = to_host(&out);
    assert_eq!((&host[0]["id"], &host[0]["error"]["code"]), (&json!(9), &json!(TOO_LARGE_CODE)));
    assert!(host[0]["error"]["message"].as_str().unwrap().contains("2048 bytes"));
    // An answer over the bound, its id last (as the TypeScript SDK writes): the host's request gets an error.
    assert_eq!(
        p.handle_host(br#"{"jsonrpc":"2.0","id":"q","method":"resources/read","params":{"uri":"a://b"}}"#, t(2)),
        Verdict::Forward
    );
    p.handle_upstream_oversize(
        br#"{"result":{"contents":[{"text":"aaa"#,
        br#"aaa"}]},"jsonrpc":"2.0","id":"q"}"#,
        t(3),
    );
    let out = actions(&mut p);
    let host = to_host(&out);
    assert_eq!((&host[0]["id"], &host[0]["error"]["code"]), (&json!("q"), &json!(TOO_LARGE_CODE)));
    assert_eq!(tracks(&out)[0].error.as_ref().map(|e| e.0), Some(TOO_LARGE_CODE));
    // The proxy's own read: message_too_large at once.
    list_once(&mut p, 10);
    let read = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"mcplens_ReadMcpResourceTool","arguments":{"uri":"docs://a"}}}"#;
    let _ = p.handle_host(read, t(20));
    let up = to_upstream(&actions(&mut p));
    let head = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"contents":[{{"text":"xx"#, up[0]["id"]);
    p.handle_upstream_oversize(head.as_bytes(), b"xx\"}]}}", t(21));
    let host = to_host(&actions(&mut p));
    let text = host[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("error: message_too_large: ") && text.contains("--max-message-bytes"), "{text}");
    // No id to read and one request in flight: that one.
    let _ = p.handle_host(br#"{"jsonrpc":"2.0","id":6,"method":"prompts/list"}"#, t(30));
    p.handle_upstream_oversize(b"{\"result\":{\"prompts\":[", b"]}}", t(31));
    assert_eq!(to_host(&actions(&mut p))[0]["id"], 6);
    // An upstream request over the bound: answered upstream.
    p.handle_upstream_oversize(
        br#"{"jsonrpc":"2.0","id":77,"method":"sampling/createMessage","params":{"#,
        b"}}",
        t(40),
    );
    let up = to_upstream(&actions(&mut p));
    assert_eq!((&up[0]["id"], &up[0]["error"]["code"]), (&json!(77), &json!(TOO_LARGE_CODE)));
}

#[test]
fn an_answer_naming_the_id_in_another_notation_is_the_requests() {
    let (mut p, _) = ready(ProxyConfig::default());
    for (asked, answered) in [("1e3", "1000.0"), (r#""\u0061""#, r#""a""#), ("7", "7.0")] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{asked},"method":"prompts/list"}}"#);
        assert_eq!(p.handle_host(line.as_bytes(), t(1)), Verdict::Forward);
        let back = format!(r#"{{"jsonrpc":"2.0","id":{answered},"result":{{"prompts":[]}}}}"#);
        assert_eq!(p.handle_upstream(back.as_bytes(), t(2)), Verdict::Forward);
        let out = actions(&mut p);
        assert_eq!(tracks(&out).len(), 1, "{asked} answered as {answered} is the request's answer");
    }
    assert_eq!(id_key("1e3"), "1000");
    assert_eq!(id_key("-0"), "0");
    assert_eq!(id_key("12"), "12");
    assert_eq!(id_key("1.5"), "1.5");
    assert_eq!(id_key(r#""\u0061""#), r#""a""#);
}

/// An upstream that declares `completions` and lists a template: the host is offered the fourth
/// tool, its call goes upstream as `completion/complete` (a server named by the host's own name
/// when the call names none) and comes back bounded; -32601 is `not_offered`.
#[test]
fn completions_go_upstream_and_come_back_bounded() {
    let mut p = Proxy::new(ProxyConfig::default()).unwrap();
    let _ = p.handle_host(INIT.as_bytes(), t(0));
    let res = INIT_RESULT.replace(r#""capabilities":{"#, r#""capabilities":{"completions":{},"#);
    assert_eq!(p.handle_upstream(res.as_bytes(), t(5)), Verdict::Consumed);
    let _ = p.handle_host(INITIALIZED.as_bytes(), t(6));
    let _ = actions(&mut p);
    let list =
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcplens_ListMcpResourceTemplatesTool"}}"#;
    let _ = p.handle_host(list, t(10));
    let up = to_upstream(&actions(&mut p));
    let _ = answer(&mut p, &up[0], json!({"resources": []}), t(11));
    let up = to_upstream(&actions(&mut p));
    let _ =
        answer(&mut p, &up[0], json!({"resourceTemplates": [{"uriTemplate": "docs://{page}", "name": "p"}]}), t(12));
    let host = to_host(&actions(&mut p));
    let text = host.iter().find(|m| m["id"] == 1).unwrap()["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(text.contains(r#""completion":["docs"]"#), "{text}");

    let tools = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let _ = p.handle_host(tools, t(13));
    let host = to_host(&actions(&mut p));
    let names: Vec<&str> =
        host[0]["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"mcplens_CompleteMcpResourceTemplateTool"), "{names:?}");

    let complete = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcplens_CompleteMcpResourceTemplateTool","arguments":{"uriTemplate":"docs://{page}","variable":"page","value":"in"}}}"#;
    assert_eq!(p.handle_host(complete, t(20)), Verdict::Consumed);
    let up = to_upstream(&actions(&mut p));
    assert_eq!(up[0]["method"], "completion/complete");
    let want =
        json!({"ref": {"type": "ref/resource", "uri": "docs://{page}"}, "argument": {"name": "page", "value": "in"}});
    assert_eq!(up[0]["params"], want);
    let values: Vec<Value> =
        (0..150).map(|i| json!(format!("v{i}"))).chain([json!(7), json!("bad\u{1b}[0m")]).collect();
    let _ = answer(&mut p, &up[0], json!({"completion": {"values": values, "total": "lots"}}), t(21));
    let host = to_host(&actions(&mut p));
    let text = host[0]["result"]["content"][0]["text"].as_str().unwrap();
    let out: Value = serde_json::from_str(text).unwrap();
    assert_eq!(out["values"].as_array().unwrap().len(), 100);
    assert_eq!(out["omitted"], json!({"cut": 50, "notString": 1, "unsafe": 1}));
    assert_eq!(out["ignored"], json!(["total"]));

    let _ = p.handle_host(complete, t(30));
    let up = to_upstream(&actions(&mut p));
    let refused = json!({"jsonrpc": "2.0", "id": up[0]["id"], "error": {"code": -32601, "message": "nope"}});
    let _ = p.handle_upstream(refused.to_string().as_bytes(), t(31));
    let host = to_host(&actions(&mut p));
    assert!(host[0]["result"]["content"][0]["text"].as_str().unwrap().starts_with("error: not_offered: "));
}

/// An upstream that declares `completions`: the host's first `tools/list` waits for the upstream's
/// first listing, so the completion tool is in the first list a host sees (hosts that never list
/// tools again would never see it) — relayed after it when the upstream has tools, answered by
/// the proxy when it has none. Later lists are not held.
#[test]
fn the_first_tools_list_waits_for_the_first_listing_of_a_completing_upstream() {
    for with_tools in [false, true] {
        let mut p = Proxy::new(ProxyConfig::default()).unwrap();
        let _ = p.handle_host(INIT.as_bytes(), t(0));
        let caps = if with_tools {
            r#""capabilities":{"tools":{},"completions":{},"#
        } else {
            r#""capabilities":{"completions":{},"#
        };
        let res = INIT_RESULT.replace(r#""capabilities":{"#, caps);
        let _ = p.handle_upstream(res.as_bytes(), t(5));
        let _ = p.handle_host(INITIALIZED.as_bytes(), t(6));
        let _ = actions(&mut p);
        let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        assert_eq!(p.handle_host(list, t(7)), Verdict::Consumed, "held");
        let out = actions(&mut p);
        assert!(to_host(&out).is_empty());
        let up = to_upstream(&out);
        assert_eq!(up.iter().map(|m| m["method"].as_str().unwrap()).collect::<Vec<_>>(), ["resources/list"]);
        let _ = answer(&mut p, &up[0], json!({"resources": []}), t(8));
        let up = to_upstream(&actions(&mut p));
        let _ =
            answer(&mut p, &up[0], json!({"resourceTemplates": [{"uriTemplate": "docs://{page}", "name": "p"}]}), t(9));
        let out = actions(&mut p);
        let result = if with_tools {
            // Relayed now; the upstream's answer gets the four tools spliced in.
            let up = to_upstream(&out);
            assert_eq!((up[0]["method"].as_str(), &up[0]["id"]), (Some("tools/list"), &json!(2)));
            let upstream_answer =
                br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"own","inputSchema":{"type":"object"}}]}}"#;
            let _ = p.handle_upstream(upstream_answer, t(10));
            let out = actions(&mut p);
            let host = to_host(&out);
            host.first().cloned().unwrap_or_else(|| json!({}))
        } else {
            to_host(&out)[0].clone()
        };
        let names: Vec<&str> =
            result["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert!(names.contains(&"mcplens_CompleteMcpResourceTemplateTool"), "{with_tools}: {names:?}");
        // A second list is not held.
        let again = br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
        let verdict = p.handle_host(again, t(20));
        assert_eq!(verdict, if with_tools { Verdict::Forward } else { Verdict::Consumed });
    }
}
