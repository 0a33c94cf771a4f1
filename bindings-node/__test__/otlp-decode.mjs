// A protobuf wire-format reader for the OTLP messages the tests receive
// (opentelemetry-proto: collector/trace/v1 ExportTraceServiceRequest, collector/metrics/v1
// ExportMetricsServiceRequest). Field numbers from the .proto files; unknown fields are skipped.

function varint(buf, i) {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    if (i >= buf.length) throw new Error('truncated varint');
    const b = buf[i++];
    value |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [value, i];
    shift += 7n;
  }
}

/** The fields of one message: `[number, wireType, value]` (varint → BigInt, others → bytes). */
function fields(buf) {
  const out = [];
  let i = 0;
  while (i < buf.length) {
    let key;
    [key, i] = varint(buf, i);
    const number = Number(key >> 3n);
    const wire = Number(key & 7n);
    let value;
    if (wire === 0) [value, i] = varint(buf, i);
    else if (wire === 1) (value = buf.subarray(i, i + 8)), (i += 8);
    else if (wire === 5) (value = buf.subarray(i, i + 4)), (i += 4);
    else if (wire === 2) {
      let len;
      [len, i] = varint(buf, i);
      value = buf.subarray(i, i + Number(len));
      i += Number(len);
    } else throw new Error(`unsupported wire type ${wire}`);
    if (i > buf.length) throw new Error('truncated message');
    out.push([number, wire, value]);
  }
  return out;
}

const text = (b) => Buffer.from(b).toString('utf8');
const hex = (b) => Buffer.from(b).toString('hex');
const fixed64 = (b) => Buffer.from(b).readBigUInt64LE(0);
const double = (b) => Buffer.from(b).readDoubleLE(0);

function anyValue(buf) {
  for (const [n, , v] of fields(buf)) {
    if (n === 1) return text(v);
    if (n === 2) return v !== 0n;
    if (n === 3) return BigInt.asIntN(64, v);
    if (n === 4) return double(v);
  }
  return undefined;
}

/** `repeated KeyValue` → an object. */
function attributes(list) {
  const out = {};
  for (const buf of list) {
    let key;
    let value;
    for (const [n, , v] of fields(buf)) {
      if (n === 1) key = text(v);
      if (n === 2) value = anyValue(v);
    }
    out[key] = value;
  }
  return out;
}

function all(buf, number) {
  return fields(buf)
    .filter(([n]) => n === number)
    .map(([, , v]) => v);
}

function resourceAttributes(resourceOwner) {
  const [resource] = all(resourceOwner, 1);
  return resource === undefined ? {} : attributes(all(resource, 1));
}

/** ExportTraceServiceRequest → `{ resource, scope, spans: [{name, kind, traceId, spanId, parentSpanId, startNanos, endNanos, attributes, status}] }[]`. */
export function decodeTraces(body) {
  return all(body, 1).map((rs) => ({
    resource: resourceAttributes(rs),
    scopes: all(rs, 2).map((ss) => {
      const [scope] = all(ss, 1);
      return {
        scope: scope === undefined ? undefined : text(all(scope, 1)[0] ?? new Uint8Array()),
        spans: all(ss, 2).map((span) => {
          const s = { attributes: {} };
          const attrs = [];
          for (const [n, , v] of fields(span)) {
            if (n === 1) s.traceId = hex(v);
            else if (n === 2) s.spanId = hex(v);
            else if (n === 4) s.parentSpanId = hex(v);
            else if (n === 5) s.name = text(v);
            else if (n === 6) s.kind = Number(v);
            else if (n === 7) s.startNanos = fixed64(v);
            else if (n === 8) s.endNanos = fixed64(v);
            else if (n === 9) attrs.push(v);
            else if (n === 15) {
              s.status = {};
              for (const [m, , w] of fields(v)) {
                if (m === 2) s.status.message = text(w);
                if (m === 3) s.status.code = Number(w);
              }
            }
          }
          s.attributes = attributes(attrs);
          return s;
        }),
      };
    }),
  }));
}

/** ExportMetricsServiceRequest → `[{ name, unit, points: [{count, sum, attributes}] }]` (histograms only). */
export function decodeMetrics(body) {
  const metrics = [];
  for (const rm of all(body, 1)) {
    for (const sm of all(rm, 2)) {
      for (const metric of all(sm, 2)) {
        const m = { points: [] };
        for (const [n, , v] of fields(metric)) {
          if (n === 1) m.name = text(v);
          else if (n === 3) m.unit = text(v);
          else if (n === 9) {
            for (const point of all(v, 1)) {
              const p = {};
              const attrs = [];
              for (const [k, , w] of fields(point)) {
                if (k === 4) p.count = Number(fixed64(w));
                else if (k === 5) p.sum = double(w);
                else if (k === 9) attrs.push(w);
              }
              p.attributes = attributes(attrs);
              m.points.push(p);
            }
          }
        }
        metrics.push(m);
      }
    }
  }
  return metrics;
}
