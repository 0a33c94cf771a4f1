//! Catalog and tool behaviour beyond the shared vectors: thread safety, the tool spec, misuse.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use mcplens::catalog::{Catalog, ListChanged, Status};
use mcplens::discovery::{Limits, ListKind, Listing, Outcome, Pager};
use mcplens::tool;

fn listing(kind: ListKind, server: &str, page: &str) -> Listing {
    let mut p = Pager::new(kind, server, true, Limits::default(), Duration::ZERO).unwrap();
    p.next_request().unwrap();
    p.accept(Outcome::Page(page), Duration::ZERO).unwrap();
    p.finish().unwrap()
}

fn pair(server: &str) -> (Listing, Listing) {
    (
        listing(ListKind::Resources, server, r#"{"resources":[{"uri":"x:1","name":"one"}]}"#),
        listing(ListKind::ResourceTemplates, server, r#"{"resourceTemplates":[{"uriTemplate":"x://{a}","name":"a"}]}"#),
    )
}

#[test]
fn catalog_is_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Catalog>();
}

#[test]
fn concurrent_list_changed_storm_queues_exactly_one_refresh() {
    let catalog = Arc::new(Catalog::new());
    let (r, t) = pair("a");
    let ticket = catalog.begin_refresh("a");
    let threads = 8;
    let per_thread = 250;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (catalog, barrier) = (Arc::clone(&catalog), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                (0..per_thread).map(|_| catalog.on_list_changed("a")).collect::<Vec<_>>()
            })
        })
        .collect();
    let answers: Vec<ListChanged> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    assert_eq!(answers.iter().filter(|a| **a == ListChanged::Queued).count(), 1);
    assert_eq!(answers.iter().filter(|a| **a == ListChanged::AlreadyQueued).count(), threads * per_thread - 1);
    assert!(!answers.contains(&ListChanged::RefreshNow), "a refresh is running: never start a second one");
    // The running refresh predates the notifications: discarded, one more requested.
    let c = catalog.commit(&ticket, &r, &t, Duration::ZERO).unwrap();
    assert!(!c.applied && c.refresh_again);
    let again = catalog.begin_refresh("a");
    let c = catalog.commit(&again, &r, &t, Duration::ZERO).unwrap();
    assert!(c.applied && !c.refresh_again);
    assert_eq!(catalog.status("a", Duration::ZERO).unwrap().status, Status::Ok);
}

#[test]
fn commit_refuses_listings_of_the_wrong_kind_or_server() {
    let catalog = Catalog::new();
    let (r, t) = pair("a");
    let ticket = catalog.begin_refresh("a");
    assert_eq!(catalog.commit(&ticket, &t, &r, Duration::ZERO).unwrap_err().code(), "invalid_argument");
    let (r_b, t_b) = pair("b");
    assert_eq!(catalog.commit(&ticket, &r_b, &t_b, Duration::ZERO).unwrap_err().code(), "invalid_argument");
    // Nothing was applied by the refused commits; the right one still is.
    assert_eq!(catalog.status("a", Duration::ZERO).unwrap().generation, 0);
    assert!(catalog.commit(&ticket, &r, &t, Duration::ZERO).unwrap().applied);
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
fn tool_output_is_byte_identical_across_runs_and_catalogs() {
    let build = || {
        let c = Catalog::new();
        for s in ["zeta", "alpha", "mid"] {
            let (r, t) = pair(s);
            let ticket = c.begin_refresh(s);
            c.commit(&ticket, &r, &t, Duration::ZERO).unwrap();
        }
        c
    };
    let (a, b) = (build(), build());
    let first = tool::call(&a, "{}").unwrap();
    for _ in 0..10 {
        assert_eq!(tool::call(&a, "{}").unwrap(), first);
        assert_eq!(tool::call(&b, "{}").unwrap(), first);
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
    let c = Catalog::new();
    for s in ["zeta", "alpha"] {
        let (r, t) = pair(s);
        let ticket = c.begin_refresh(s);
        c.commit(&ticket, &r, &t, Duration::ZERO).unwrap();
    }
    let first = tool::call_resources(&c, "{}").unwrap();
    assert_eq!(
        first,
        r#"{"resources":[{"uri":"x:1","name":"one","server":"zeta"},{"uri":"x:1","name":"one","server":"alpha"}],"failures":[],"total":2}"#
    );
    for _ in 0..5 {
        assert_eq!(tool::call_resources(&c, "{}").unwrap(), first);
    }
}

#[test]
fn refresher_can_live_behind_a_drivers_mutex() {
    fn assert_send<T: Send>() {}
    assert_send::<mcplens::catalog::Refresher>();
}

#[test]
fn refresh_config_reads_json_with_defaults_and_validates() {
    use mcplens::catalog::RefreshConfig;
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
    let catalog = Catalog::new();
    let mut seen = catalog.generation();
    let mut moved = |catalog: &Catalog| {
        let now = catalog.generation();
        let moved = now != seen;
        seen = now;
        moved
    };
    catalog.add_server("a");
    assert!(moved(&catalog), "a server added");
    catalog.add_server("a");
    let _ = (catalog.status("a", Duration::ZERO), catalog.templates(None), catalog.visible_tools());
    assert!(!moved(&catalog), "reads and an idempotent add change nothing");
    catalog.declare_resources("a", true);
    assert!(moved(&catalog));
    assert_eq!(catalog.visible_tools(), ["ListMcpResourceTemplatesTool", "ListMcpResourcesTool"]);
    catalog.declare_resources("a", true);
    assert!(!moved(&catalog));
    let (r, t) = pair("a");
    let ticket = catalog.begin_refresh("a");
    assert!(!moved(&catalog), "beginning a refresh lists nothing new");
    catalog.commit(&ticket, &r, &t, Duration::ZERO).unwrap();
    assert!(moved(&catalog), "a commit");
    assert_eq!(catalog.on_list_changed("a"), ListChanged::RefreshNow);
    assert!(moved(&catalog), "list_changed: the status is now outdated");
    catalog.invalidate("a", mcplens::catalog::Reason::ConnectionClosed);
    assert!(moved(&catalog));
    assert!(catalog.visible_tools().is_empty(), "a cleared server no longer declares anything");
    assert!(catalog.remove("a"));
    assert!(moved(&catalog));
}
