//! The request-path queue: a preallocated byte buffer that `record` appends one length-prefixed
//! record to under a short lock (no allocation, no parsing, no serialization of JSON text), and that
//! the worker swaps for its spare buffer (double buffering) to read the records back.
//!
//! Bounded by records and bytes; when full, the oldest records are dropped (O(1): the head moves)
//! and counted. The space they held is reclaimed by an occasional compaction whose cost is
//! amortized over the bytes written since the previous one.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::build::{Operation, Payload, RequestId, RpcError, SessionKey};
use super::event::{Method, OTHER_METHOD_CODE};
use super::ids::TraceParent;

/// Fixed part: length, method, flags, session, times, ids, error code, then the host span (24
/// bytes, zero without one).
const HEADER: usize = 72;
const PAYLOAD_HEADER: usize = 9;

const F_TOOL_ERROR: u8 = 1;
const F_ERROR: u8 = 2;
const F_RID_NUM: u8 = 4;
const F_RID_TEXT: u8 = 8;
const F_HOST_SPAN: u8 = 16;

const K_NONE: u8 = 0;
const K_JSON: u8 = 1;
const K_OMITTED: u8 = 2;

/// A payload resolved to bytes for encoding.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Bytes<'a> {
    None,
    Json(&'a [u8]),
    Omitted(u64),
}

impl Bytes<'_> {
    fn encoded_len(&self) -> usize {
        PAYLOAD_HEADER + if let Bytes::Json(b) = self { b.len() } else { 0 }
    }
}

/// The variable parts of a record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parts<'a> {
    pub params: Bytes<'a>,
    pub meta: Bytes<'a>,
    pub result: Bytes<'a>,
}

fn rid_text<'a>(op: &Operation<'a>) -> &'a str {
    match op.request_id {
        RequestId::Text(s) => s,
        _ => "",
    }
}

fn err_msg<'a>(op: &Operation<'a>) -> &'a str {
    op.error.map(|e| e.message).unwrap_or("")
}

/// The name a [`Method::Other`] record carries (empty for a known method: its code says it).
fn other_name<'a>(op: &'a Operation<'_>) -> &'a str {
    match &op.method {
        Method::Other(name) => name,
        _ => "",
    }
}

/// The size of the encoded record.
pub(crate) fn encoded_len(op: &Operation<'_>, parts: &Parts<'_>) -> usize {
    HEADER
        + 4
        + rid_text(op).len()
        + 4
        + err_msg(op).len()
        + 4
        + other_name(op).len()
        + parts.params.encoded_len()
        + parts.meta.encoded_len()
        + parts.result.encoded_len()
}

fn put_bytes(out: &mut Vec<u8>, b: Bytes<'_>) {
    match b {
        Bytes::None => {
            out.push(K_NONE);
            out.extend_from_slice(&0u64.to_le_bytes());
        }
        Bytes::Json(j) => {
            out.push(K_JSON);
            out.extend_from_slice(&(j.len() as u64).to_le_bytes());
            out.extend_from_slice(j);
        }
        Bytes::Omitted(n) => {
            out.push(K_OMITTED);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
}

/// Append the record (exactly `len` bytes, from [`encoded_len`]).
pub(crate) fn encode(out: &mut Vec<u8>, len: usize, op: &Operation<'_>, parts: &Parts<'_>) {
    let mut flags = 0u8;
    if op.tool_error {
        flags |= F_TOOL_ERROR;
    }
    if op.error.is_some() {
        flags |= F_ERROR;
    }
    if op.host_span.is_some() {
        flags |= F_HOST_SPAN;
    }
    let rid_num = match op.request_id {
        RequestId::Number(n) => {
            flags |= F_RID_NUM;
            n
        }
        RequestId::Text(_) => {
            flags |= F_RID_TEXT;
            0
        }
        RequestId::None => 0,
    };
    let started = op.started_at.duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    let duration = op.duration.as_nanos().min(u128::from(u64::MAX)) as u64;
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.push(op.method.code());
    out.push(flags);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&op.session.0.to_le_bytes());
    out.extend_from_slice(&started.to_le_bytes());
    out.extend_from_slice(&duration.to_le_bytes());
    out.extend_from_slice(&rid_num.to_le_bytes());
    out.extend_from_slice(&op.error.map(|e| e.code).unwrap_or(0).to_le_bytes());
    let host = op.host_span.map_or(([0; 16], [0; 8]), |h| (h.trace_id, h.parent_span_id));
    out.extend_from_slice(&host.0);
    out.extend_from_slice(&host.1);
    let rid = rid_text(op).as_bytes();
    out.extend_from_slice(&(rid.len() as u32).to_le_bytes());
    out.extend_from_slice(rid);
    let msg = err_msg(op).as_bytes();
    out.extend_from_slice(&(msg.len() as u32).to_le_bytes());
    out.extend_from_slice(msg);
    let name = other_name(op).as_bytes();
    out.extend_from_slice(&(name.len() as u32).to_le_bytes());
    out.extend_from_slice(name);
    put_bytes(out, parts.params);
    put_bytes(out, parts.meta);
    put_bytes(out, parts.result);
}

fn u32_at(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// The length of the record starting at `at`.
pub(crate) fn record_len(buf: &[u8], at: usize) -> usize {
    u32_at(buf, at)
}

fn text(b: &[u8]) -> &str {
    // Everything written came from `&str`; a failure here would be a bug, so fall back to "".
    std::str::from_utf8(b).unwrap_or("")
}

fn take_payload<'a>(rec: &'a [u8], at: &mut usize) -> Payload<'a> {
    let kind = rec[*at];
    let n = u64_at(rec, *at + 1);
    *at += PAYLOAD_HEADER;
    match kind {
        K_JSON => {
            let n = n as usize;
            let p = Payload::Json(text(&rec[*at..*at + n]));
            *at += n;
            p
        }
        K_OMITTED => Payload::Omitted(n),
        _ => Payload::None,
    }
}

/// The session of a record (what [`decode`] reads as `session`, without reading the rest).
pub(crate) fn session_of(rec: &[u8]) -> SessionKey {
    SessionKey(u64_at(rec, 8))
}

/// Read one record back (the inverse of [`encode`]).
pub(crate) fn decode(rec: &[u8]) -> Option<Operation<'_>> {
    let code = rec[4];
    let flags = rec[5];
    let session = session_of(rec);
    let started = UNIX_EPOCH + Duration::from_nanos(u64_at(rec, 16));
    let duration = Duration::from_nanos(u64_at(rec, 24));
    let rid_num = u64_at(rec, 32) as i64;
    let error_code = u64_at(rec, 40) as i64;
    let mut at = HEADER;
    let n = u32_at(rec, at);
    let rid = text(&rec[at + 4..at + 4 + n]);
    at += 4 + n;
    let n = u32_at(rec, at);
    let msg = text(&rec[at + 4..at + 4 + n]);
    at += 4 + n;
    let n = u32_at(rec, at);
    let method = match code {
        OTHER_METHOD_CODE => Method::Other(text(&rec[at + 4..at + 4 + n]).into()),
        known => Method::from_code(known)?,
    };
    at += 4 + n;
    let params = take_payload(rec, &mut at);
    let meta = take_payload(rec, &mut at);
    let result = take_payload(rec, &mut at);
    Some(Operation {
        session,
        method,
        request_id: if flags & F_RID_NUM != 0 {
            RequestId::Number(rid_num)
        } else if flags & F_RID_TEXT != 0 {
            RequestId::Text(rid)
        } else {
            RequestId::None
        },
        started_at: started.max(SystemTime::UNIX_EPOCH),
        duration,
        params,
        meta,
        result,
        error: (flags & F_ERROR != 0).then_some(RpcError { code: error_code, message: msg }),
        tool_error: flags & F_TOOL_ERROR != 0,
        host_span: (flags & F_HOST_SPAN != 0).then(|| {
            let mut trace_id = [0u8; 16];
            let mut parent_span_id = [0u8; 8];
            trace_id.copy_from_slice(&rec[48..64]);
            parent_span_id.copy_from_slice(&rec[64..72]);
            TraceParent { trace_id, parent_span_id, flags: 1 }
        }),
    })
}

/// Records taken by the worker in one swap.
#[derive(Debug, Default)]
pub(crate) struct Drained {
    pub buf: Vec<u8>,
    pub head: usize,
    pub count: usize,
    /// Sequence number just past the last record taken: every record numbered below it has been
    /// either taken now, taken before, or dropped.
    pub end_seq: u64,
}

impl Drained {
    /// The records, in order.
    pub fn records(&self) -> impl Iterator<Item = &[u8]> {
        let mut at = self.head;
        let end = self.buf.len();
        std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            let n = record_len(&self.buf, at);
            let r = &self.buf[at..at + n];
            at += n;
            Some(r)
        })
    }
}

/// The staging buffer (held under the tracker's queue lock).
#[derive(Debug)]
pub(crate) struct Staging {
    buf: Vec<u8>,
    head: usize,
    live: usize,
    next_seq: u64,
    dropped: u64,
    rejected: u64,
    max_records: usize,
    max_bytes: usize,
}

impl Staging {
    pub fn new(max_records: usize, max_bytes: usize) -> Staging {
        Staging {
            buf: Vec::with_capacity(Staging::initial_capacity(max_bytes)),
            head: 0,
            live: 0,
            next_seq: 0,
            dropped: 0,
            rejected: 0,
            max_records: max_records.max(1),
            max_bytes: max_bytes.max(4096),
        }
    }

    /// The capacity buffers start with.
    pub fn initial_capacity(max_bytes: usize) -> usize {
        max_bytes.min(256 * 1024)
    }

    /// Operations handed to `record` so far (queued, dropped or refused).
    pub fn recorded(&self) -> u64 {
        self.next_seq + self.rejected
    }

    /// Operations dropped because the queue was full, or refused after shutdown.
    pub fn dropped(&self) -> u64 {
        self.dropped + self.rejected
    }

    /// Count an operation refused after shutdown as recorded and dropped.
    pub fn reject(&mut self) {
        self.rejected += 1;
    }

    /// The next sequence number (records numbered below it were queued or dropped from the queue).
    pub fn seq(&self) -> u64 {
        self.next_seq
    }

    /// Records waiting.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Whether the queue is past half full (time to wake the worker early).
    pub fn past_half(&self) -> bool {
        self.live * 2 >= self.max_records || (self.buf.len() - self.head) * 2 >= self.max_bytes
    }

    /// Append one record of `len` bytes, dropping the oldest records first if needed.
    pub fn push(&mut self, len: usize, write: impl FnOnce(&mut Vec<u8>)) {
        while self.live > 0 && (self.live >= self.max_records || self.buf.len() - self.head + len > self.max_bytes) {
            let n = record_len(&self.buf, self.head);
            self.head += n;
            self.live -= 1;
            self.dropped += 1;
        }
        if self.live == 0 {
            self.buf.clear();
            self.head = 0;
        } else if self.head >= 64 * 1024 && self.head >= self.buf.len() - self.head {
            // Reclaim the space of dropped records once it is at least half the buffer: the copy
            // (the live bytes, at most `head`) is paid for by the `head` bytes written since the
            // last one, and the buffer stays within twice the live bytes.
            self.buf.copy_within(self.head.., 0);
            self.buf.truncate(self.buf.len() - self.head);
            self.head = 0;
        }
        let before = self.buf.len();
        write(&mut self.buf);
        debug_assert_eq!(self.buf.len() - before, len);
        self.live += 1;
        self.next_seq += 1;
    }

    /// Hand every waiting record to the worker, taking its spare buffer (cleared) as the new
    /// staging buffer.
    pub fn swap(&mut self, mut spare: Vec<u8>) -> Drained {
        spare.clear();
        let buf = std::mem::replace(&mut self.buf, spare);
        let d = Drained { buf, head: self.head, count: self.live, end_seq: self.next_seq };
        self.head = 0;
        self.live = 0;
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracking::pipeline::build::Operation;

    fn sample(i: i64) -> Operation<'static> {
        Operation {
            request_id: if i % 2 == 0 { RequestId::Number(i) } else { RequestId::Text("abc") },
            params: Payload::Json(r#"{"uri":"file:///x"}"#),
            error: (i % 3 == 0).then_some(RpcError { code: -32002, message: "nope" }),
            tool_error: i % 5 == 0,
            host_span: (i % 2 == 1).then_some(TraceParent {
                trace_id: [i as u8 + 1; 16],
                parent_span_id: [7; 8],
                flags: 1,
            }),
            method: if i == 4 { Method::Other("acme/search".into()) } else { Method::ResourcesRead },
            ..Operation::new(
                SessionKey(42),
                Method::ResourcesRead,
                UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789),
                Duration::from_nanos(1234),
            )
        }
    }

    fn parts(op: &Operation<'_>) -> Parts<'static> {
        let _ = op;
        Parts { params: Bytes::Json(br#"{"uri":"file:///x"}"#), meta: Bytes::None, result: Bytes::Omitted(99) }
    }

    #[test]
    fn round_trip() {
        let mut s = Staging::new(100, 1 << 20);
        for i in 0..10 {
            let op = sample(i);
            let p = parts(&op);
            let len = encoded_len(&op, &p);
            s.push(len, |out| encode(out, len, &op, &p));
        }
        let d = s.swap(Vec::new());
        assert_eq!(d.count, 10);
        assert_eq!(d.end_seq, 10);
        for (i, rec) in d.records().enumerate() {
            let op = decode(rec).unwrap();
            let want = sample(i as i64);
            assert_eq!(op.request_id, want.request_id);
            assert_eq!(op.error, want.error);
            assert_eq!(op.tool_error, want.tool_error);
            assert_eq!((op.host_span, &op.method), (want.host_span, &want.method));
            assert_eq!(op.started_at, want.started_at);
            assert_eq!(op.duration, want.duration);
            assert_eq!(op.session, SessionKey(42));
            assert!(matches!(op.params, Payload::Json(r#"{"uri":"file:///x"}"#)));
            assert!(matches!(op.result, Payload::Omitted(99)));
        }
    }

    #[test]
    fn drops_oldest_when_full() {
        let mut s = Staging::new(4, 1 << 20);
        for i in 0..10 {
            let op = Operation { request_id: RequestId::Number(i), ..sample(0) };
            let p = parts(&op);
            let len = encoded_len(&op, &p);
            s.push(len, |out| encode(out, len, &op, &p));
        }
        assert_eq!(s.dropped(), 6);
        let d = s.swap(Vec::new());
        let ids: Vec<_> = d.records().map(|r| decode(r).unwrap().request_id).collect();
        assert_eq!(ids, (6..10).map(RequestId::Number).collect::<Vec<_>>());
        assert_eq!(d.end_seq, 10);
    }

    #[test]
    fn byte_bound_compacts() {
        let mut s = Staging::new(1_000_000, 8192);
        let body = "x".repeat(1000);
        for i in 0..200 {
            let op = Operation { request_id: RequestId::Number(i), ..sample(0) };
            let p = Parts { params: Bytes::Json(body.as_bytes()), meta: Bytes::None, result: Bytes::None };
            let len = encoded_len(&op, &p);
            s.push(len, |out| encode(out, len, &op, &p));
            assert!(s.buf.len() <= 2 * 8192 + 64 * 1024 + len, "{}", s.buf.len());
        }
        let d = s.swap(Vec::new());
        let ids: Vec<_> = d.records().map(|r| decode(r).unwrap().request_id).collect();
        assert_eq!(ids.last(), Some(&RequestId::Number(199)));
        assert_eq!(ids.len() as u64 + s.dropped(), 200);
    }
}
