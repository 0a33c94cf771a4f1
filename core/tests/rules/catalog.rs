//! Catalog and tool behaviour beyond the shared vectors: thread safety, the tool spec, misuse.

use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use mcplens::catalog::{
    Action, Catalog, Disposition, ListChanged, PairTraversal, Reason, RefreshConfig, Refresher, Status, TraversalId,
    Want,
};
use mcplens::discovery::{Limits, ListKind, Listing, Outcome, Pager, Support};
use mcplens::tool;

fn listing(kind: ListKind, server: &str, page: &str) -> Listing {
    let mut p = Pager::new(kind, server, true, Limits::default(), Duration::ZERO).unwrap();
    p.poll_request().unwrap();
    p.handle_outcome(Outcome::Page(page), Duration::ZERO).unwrap();
    p.finish().unwrap()
}

fn pair(server: &str) -> (Listing, Listing) {
    (
        listing(ListKind::Resources, server, r#"{"resources":[{"uri":"x:1","name":"one"}]}"#),
        listing(ListKind::ResourceTemplates, server, r#"{"resourceTemplates":[{"uriTemplate":"x://{a}","name":"a"}]}"#),
    )
}

/// Starts a traversal pair of `server` (attaching it first if it has no connection): its id.
fn begin(machine: &mut Refresher, server: &str) -> TraversalId {
    if machine.epoch(server).is_none() {
        machine.attach(server, true);
    }
    machine.request(server, Want::Force, Duration::ZERO).unwrap();
    let mut begun = None;
    while let Some(action) = machine.poll_action() {
        if let Action::Traverse { traversal, .. } = action {
            begun = Some(traversal);
        }
    }
    begun.expect("a traversal starts")
}

/// A machine whose catalog holds `servers`, each refreshed once with [`pair`].
fn refreshed(servers: &[&str]) -> Refresher {
    let mut machine = Refresher::new(RefreshConfig::default(), 0);
    for s in servers {
        let traversal = begin(&mut machine, s);
        let (r, t) = pair(s);
        assert_eq!(machine.handle_traversed(traversal, Ok((&r, &t)), Duration::ZERO), Disposition::Committed);
    }
    machine
}

#[test]
fn catalog_is_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Catalog>();
    assert_send_sync::<Refresher>();
}

#[test]
fn concurrent_list_changed_storm_queues_exactly_one_refresh() {
    let mut machine = Refresher::new(RefreshConfig::default(), 0);
    let epoch = machine.attach("a", true);
    let first = begin(&mut machine, "a");
    let machine = Arc::new(Mutex::new(machine));
    let (r, t) = pair("a");
    let threads = 8;
    let per_thread = 250;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (machine, barrier) = (Arc::clone(&machine), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                (0..per_thread)
                    .map(|_| machine.lock().unwrap().handle_list_changed("a", epoch, Duration::ZERO))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let answers: Vec<ListChanged> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    assert_eq!(answers.iter().filter(|a| **a == ListChanged::Queued).count(), 1);
    assert_eq!(answers.iter().filter(|a| **a == ListChanged::AlreadyQueued).count(), threads * per_thread - 1);
    assert!(!answers.contains(&ListChanged::RefreshNow), "a refresh is running: never start a second one");
    // The running traversal predates the notifications: discarded, exactly one more started.
    let mut machine = Arc::try_unwrap(machine).unwrap().into_inner().unwrap();
    assert_eq!(machine.handle_traversed(first, Ok((&r, &t)), Duration::ZERO), Disposition::Discarded);
    let started: Vec<Action> = std::iter::from_fn(|| machine.poll_action()).collect();
    let [Action::Traverse { traversal: again, .. }] = started[..] else { panic!("one more traversal: {started:?}") };
    assert_eq!(machine.handle_traversed(again, Ok((&r, &t)), Duration::ZERO), Disposition::Committed);
    let rest: Vec<Action> = std::iter::from_fn(|| machine.poll_action()).collect();
    assert!(rest.iter().all(|a| matches!(a, Action::Resolve { .. })), "no third traversal: {rest:?}");
    assert_eq!(machine.catalog().status("a", Duration::ZERO).unwrap().status, Status::Ok);
}

#[test]
fn commit_refuses_listings_of_the_wrong_kind_or_server() {
    let mut machine = Refresher::new(RefreshConfig::default(), 0);
    let (r, t) = pair("a");
    let traversal = begin(&mut machine, "a");
    assert_eq!(machine.handle_traversed(traversal, Ok((&t, &r)), Duration::ZERO), Disposition::Failed);
    let status = machine.catalog().status("a", Duration::ZERO).unwrap();
    assert_eq!((status.generation, status.last_error.unwrap().code.as_str()), (0, "invalid_argument"));
    let traversal = begin(&mut machine, "a");
    let (r_b, t_b) = pair("b");
    assert_eq!(machine.handle_traversed(traversal, Ok((&r_b, &t_b)), Duration::ZERO), Disposition::Failed);
    // Nothing was applied by the refused commits; the right one still is.
    assert_eq!(machine.catalog().status("a", Duration::ZERO).unwrap().generation, 0);
    let traversal = begin(&mut machine, "a");
    assert_eq!(machine.handle_traversed(traversal, Ok((&r, &t)), Duration::ZERO), Disposition::Committed);
}

#[test]
fn tool_spec_is_read_only_deferred_and_bounded() {
    let spec = tool::spec();
    assert_eq!(spec.name, "ListMcpResourceTemplatesTool");
    assert!(spec.deferred);
    assert_eq!(spec.annotations["readOnlyHint"], true);
    let props = &spec.input_schema["properties"];
    assert_eq!(props["server"]["type"], "string");
    assert_eq!(props["offset"]["minimum"], 0);
    assert_eq!(props["limit"]["minimum"], 1);
    assert_eq!(props["limit"]["maximum"], 1000);
    assert_eq!(spec.input_schema["additionalProperties"], false);
    let json: serde_json::Value = serde_json::from_str(&spec.to_json()).unwrap();
    assert_eq!(json["inputSchema"], spec.input_schema);
}

#[test]
fn strict_schemas_require_every_property_and_let_optional_ones_be_null() {
    let spec = tool::spec();
    let strict = &spec.strict_input_schema;
    assert_eq!(strict["required"], serde_json::json!(["limit", "offset", "server"]));
    assert_eq!(strict["properties"]["server"]["type"], serde_json::json!(["string", "null"]));
    assert_eq!(strict["properties"]["limit"]["type"], serde_json::json!(["integer", "null"]));
    assert_eq!(strict["additionalProperties"], false);
    // What the strict form lets a model send, the tool reads as absent.
    let machine = refreshed(&["a"]);
    let nulls = r#"{"server":null,"offset":null,"limit":null}"#;
    assert_eq!(tool::call(machine.catalog(), nulls).unwrap(), tool::call(machine.catalog(), "{}").unwrap());
    assert_eq!(
        tool::call_resources(machine.catalog(), nulls).unwrap(),
        tool::call_resources(machine.catalog(), "{}").unwrap()
    );

    let read = tool::read::spec();
    assert_eq!(read.name, "ReadMcpResourceTool");
    assert_eq!(read.input_schema["required"], serde_json::json!(["server", "uri"]));
    assert_eq!(read.strict_input_schema, read.input_schema, "both properties are required already");
    for name in mcplens::catalog::RESOURCE_TOOLS {
        assert_eq!(tool::spec_of(name).unwrap().name, name);
    }
    assert!(tool::spec_of("Other").is_none());
}

#[test]
fn tool_output_is_byte_identical_across_runs_and_catalogs() {
    let build = || refreshed(&["zeta", "alpha", "mid"]);
    let (a, b) = (build(), build());
    let (a, b) = (a.catalog(), b.catalog());
    let first = tool::call(a, "{}").unwrap();
    for _ in 0..10 {
        assert_eq!(tool::call(a, "{}").unwrap(), first);
        assert_eq!(tool::call(b, "{}").unwrap(), first);
    }
    let servers: Vec<String> = serde_json::from_str::<serde_json::Value>(&first).unwrap()["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["server"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(servers, ["zeta", "alpha", "mid"]);
}

#[test]
fn resources_tool_spec_is_the_templates_tools_twin() {
    let (r, t) = (tool::resources_spec(), tool::spec());
    assert_eq!(r.name, "ListMcpResourcesTool");
    assert!(r.deferred);
    assert_eq!(r.annotations["readOnlyHint"], true);
    let keys =
        |s: &tool::ToolSpec| s.input_schema["properties"].as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&r), keys(&t));
    assert_eq!(r.input_schema["properties"]["limit"]["maximum"], 1000);
    assert_eq!(r.input_schema["additionalProperties"], false);
    assert!(r.description.contains("offer no concrete resources, not that a server has no tools."));
    assert!(t.description.contains("offer no resource templates, not that a server has no tools."));
}

#[test]
fn resources_tool_output_is_byte_identical_across_runs() {
    let machine = refreshed(&["zeta", "alpha"]);
    let c = machine.catalog();
    let first = tool::call_resources(c, "{}").unwrap();
    assert_eq!(
        first,
        r#"{"resources":[{"uri":"x:1","name":"one","server":"zeta"},{"uri":"x:1","name":"one","server":"alpha"}],"failures":[],"total":2}"#
    );
    for _ in 0..5 {
        assert_eq!(tool::call_resources(c, "{}").unwrap(), first);
    }
}

#[test]
fn refresher_can_live_behind_a_drivers_mutex() {
    fn assert_send<T: Send>() {}
    assert_send::<mcplens::catalog::Refresher>();
}

#[test]
fn refresh_config_reads_json_with_defaults_and_validates() {
    let config: RefreshConfig = serde_json::from_str(r#"{"retryBaseMs": 250}"#).unwrap();
    assert_eq!(config, RefreshConfig { retry_base: Duration::from_millis(250), ..RefreshConfig::default() });
    let defaults = RefreshConfig::default();
    assert_eq!(
        (defaults.retry_base, defaults.retry_max, defaults.min_ttl, defaults.shrink_min_items),
        (Duration::from_secs(1), Duration::from_secs(300), Duration::from_secs(10), 10)
    );
    assert!(serde_json::from_str::<RefreshConfig>(r#"{"retryBase": 1}"#).is_err(), "unknown keys are refused");
    let zero = RefreshConfig { retry_base: Duration::ZERO, ..defaults };
    assert!(zero.validate().is_err());
    let inverted = RefreshConfig { retry_max: Duration::from_millis(10), ..defaults };
    assert!(inverted.validate().is_err());
    assert!(defaults.validate().is_ok());
}

#[test]
fn the_generation_moves_on_changes_not_on_reads() {
    let mut machine = Refresher::new(RefreshConfig::default(), 0);
    let mut seen = machine.catalog().generation();
    let mut moved = |machine: &Refresher| {
        let now = machine.catalog().generation();
        let moved = now != seen;
        seen = now;
        moved
    };
    machine.add_server("a");
    assert!(moved(&machine), "a server added");
    machine.add_server("a");
    let c = machine.catalog();
    let _ = (c.status("a", Duration::ZERO), c.templates(None), c.visible_tools(), c.needs_refresh("a", Duration::ZERO));
    assert!(!moved(&machine), "reads and an idempotent add change nothing");
    let epoch = machine.attach("a", true);
    assert!(moved(&machine), "a connection that declares resources");
    assert_eq!(
        machine.catalog().visible_tools(),
        ["ListMcpResourceTemplatesTool", "ListMcpResourcesTool", "ReadMcpResourceTool"]
    );
    let traversal = begin(&mut machine, "a");
    assert!(!moved(&machine), "beginning a refresh lists nothing new");
    let (r, t) = pair("a");
    machine.handle_traversed(traversal, Ok((&r, &t)), Duration::ZERO);
    assert!(moved(&machine), "a commit");
    assert_eq!(machine.handle_list_changed("a", epoch, Duration::ZERO), ListChanged::RefreshNow);
    assert!(moved(&machine), "list_changed: the status is now outdated");
    machine.invalidate("a", Reason::ConnectionClosed, Duration::ZERO);
    assert!(moved(&machine));
    assert!(machine.catalog().visible_tools().is_empty(), "a cleared server no longer declares anything");
    assert!(machine.remove("a"));
    assert!(moved(&machine));
}

#[test]
fn invalidating_for_another_reason_clears_and_keeps_the_connection() {
    let mut machine = refreshed(&["a"]);
    let epoch = machine.epoch("a").unwrap();
    let traversal = begin(&mut machine, "a");
    machine.invalidate("a", Reason::ConfigurationChanged, Duration::ZERO);
    let status = machine.catalog().status("a", Duration::ZERO).unwrap();
    assert_eq!((status.status, status.templates), (Status::Unknown, 0), "both lists cleared at once");
    assert_eq!(machine.epoch("a"), Some(epoch), "the connection stays");
    let (r, t) = pair("a");
    assert_eq!(machine.handle_traversed(traversal, Ok((&r, &t)), Duration::ZERO), Disposition::Discarded);
    assert!(machine.catalog().needs_refresh("a", Duration::ZERO), "the next request traverses");
}

#[test]
fn a_client_is_initialized_once_its_host_holds_the_servers_capabilities() {
    use mcplens::discovery::initialized;
    use mcplens::error::{InvalidArgument, Misuse};
    assert_eq!(initialized("docs", Some(r#"{"resources":{}}"#)), Ok(true));
    assert_eq!(initialized("docs", Some(r#"{"tools":{}}"#)), Ok(false));
    for not_yet in [None, Some("null"), Some(" null ")] {
        let e = initialized("docs", not_yet).unwrap_err();
        assert_eq!((e.code().as_str(), e.server()), ("invalid_argument", "docs"));
        assert!(e.to_string().starts_with("server \"docs\": invalid argument: the client is not initialized"));
    }
    // The one message shape of a binding's own argument checks: no server, no prefix.
    assert_eq!(InvalidArgument::new("", "x").to_string(), "invalid argument: x");
    assert_eq!(InvalidArgument::new("", "x").server, None);
    assert_eq!(
        InvalidArgument::misuse("a", Misuse::SessionNotEntered).to_string(),
        "server \"a\": invalid argument: the session must be entered"
    );
}

/// The pair a host performs: resources, then templates over the same connection; the first
/// failure ends it (templates are not asked), a server without `resources` is asked nothing, a
/// client that is not initialized ends it at once, and only misuse is the host's error.
#[test]
fn the_pair_traversal_decides_what_is_asked() {
    let caps = Some(r#"{"resources":{}}"#);
    let t = TraversalId(1);
    let mut pair = PairTraversal::new(t, "a", caps, Limits::default(), "", Duration::ZERO);
    assert_eq!(pair.poll_request().map(|r| r.method), Some("resources/list"));
    assert_eq!(pair.poll_request(), None, "one request in flight");
    pair.handle_outcome(Outcome::Page(r#"{"resources":[]}"#), Duration::ZERO).unwrap();
    assert_eq!(pair.kind(), Some(ListKind::ResourceTemplates));
    assert_eq!(pair.poll_request().map(|r| r.method), Some("resources/templates/list"));
    pair.handle_outcome(Outcome::Page(r#"{"resourceTemplates":[]}"#), Duration::ZERO).unwrap();
    assert!(pair.is_done() && pair.poll_request().is_none());
    let e = pair.handle_outcome(Outcome::Transport, Duration::ZERO).unwrap_err();
    assert_eq!(e.code().as_str(), "invalid_state");
    let (resources, templates) = pair.finish().unwrap().unwrap();
    assert_eq!((resources.kind, templates.kind), (ListKind::Resources, ListKind::ResourceTemplates));

    let mut failed = PairTraversal::new(t, "a", caps, Limits::default(), "", Duration::ZERO);
    failed.poll_request().unwrap();
    failed.handle_outcome(Outcome::RpcError { code: -32603 }, Duration::ZERO).unwrap();
    assert!(failed.is_done() && failed.poll_request().is_none(), "templates are not asked");
    assert_eq!(failed.finish().unwrap().unwrap_err().code().as_str(), "server_error");

    let mut bare = PairTraversal::new(t, "a", Some(r#"{"tools":{}}"#), Limits::default(), "", Duration::ZERO);
    assert!(bare.is_done() && bare.poll_request().is_none(), "nothing asked without resources");
    let (resources, templates) = bare.finish().unwrap().unwrap();
    assert_eq!((resources.support, templates.support), (Support::NoCapability, Support::NoCapability));

    let uninitialized = PairTraversal::new(t, "a", None, Limits::default(), "", Duration::ZERO);
    assert_eq!(uninitialized.finish().unwrap().unwrap_err().code().as_str(), "invalid_argument");

    let mut early = PairTraversal::new(t, "a", caps, Limits::default(), "", Duration::ZERO);
    assert_eq!(early.handle_outcome(Outcome::Transport, Duration::ZERO).unwrap_err().code().as_str(), "invalid_state");
    early.poll_request().unwrap();
    assert!(early.finish().is_none(), "not ended: abandoned");
}

/// The completion call of a server that declares `completions`: an answer over the bound is
/// refused whole, and a server whose connection ends no longer offers completion.
#[test]
fn completion_answers_are_bounded_and_follow_the_connection() {
    let caps = r#"{"resources":{},"completions":{}}"#;
    let mut machine = Refresher::new(RefreshConfig::default(), 0);
    let epoch = machine.attach_capabilities("docs", caps);
    machine.request("docs", Want::Refresh, Duration::ZERO).unwrap();
    let Some(Action::Traverse { traversal, .. }) = machine.poll_action() else { panic!("no traversal") };
    let mut pair = PairTraversal::new(traversal, "docs", Some(caps), Limits::default(), "", Duration::ZERO);
    while let Some(request) = pair.poll_request() {
        let page = if request.method == "resources/list" {
            r#"{"resources":[]}"#
        } else {
            r#"{"resourceTemplates":[{"uriTemplate":"docs://{page}","name":"pages"}]}"#
        };
        pair.handle_outcome(Outcome::Page(page), Duration::ZERO).unwrap();
    }
    assert_eq!(machine.handle_pair(pair, Duration::ZERO), Disposition::Committed);
    assert!(machine.catalog().offers_completion("docs"));
    assert_eq!(machine.catalog().visible_tools().len(), 4);

    let input = r#"{"server":"docs","uriTemplate":"docs://{page}","variable":"page"}"#;
    let config = tool::CallConfig::default();
    let call = tool::ServerCall::new(machine.catalog(), tool::complete::NAME, input, &config, Duration::ZERO).unwrap();
    let huge = format!(r#"{{"completion":{{"values":["{}"]}}}}"#, "a".repeat(tool::complete::MAX_ANSWER_BYTES));
    let e = call.finish(Outcome::Page(&huge)).unwrap_err();
    assert_eq!((e.code().as_str(), e.server()), ("message_too_large", Some("docs")));

    assert!(machine.detach("docs", epoch));
    assert!(!machine.catalog().declares_completions("docs"));
    assert_eq!(machine.catalog().visible_tools().len(), 0);
    let e = tool::ServerCall::new(machine.catalog(), tool::complete::NAME, input, &config, Duration::ZERO).unwrap_err();
    assert_eq!(e.code().as_str(), "not_offered");
}
