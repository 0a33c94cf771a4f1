/**
 * A page the SDK parsed, written as a tape the addon reads in place (`src/convert/tape.rs`, which
 * gives the format) instead of its `JSON.stringify`'d text: every string's UTF-8 in one byte buffer,
 * the page's shape in one `Float64Array`, crossing node-api once. Row `node_convert_page`
 * (`make bench-node`).
 */

/** Scratch buffers, reused from page to page (one page is written and read at a time). */
const SCRATCH = 1 << 16;
/** Past this many bytes a grown buffer is let go once its page is read. */
const KEEP = 1 << 22;
/**
 * Strings shorter than this (keys, names, URIs, most descriptions) are joined and encoded a batch
 * at a time, one call into the encoder for many strings; a longer one is encoded on its own.
 */
const LONG = 512;
const encoder = new TextEncoder();
let bytes = new Uint8Array(SCRATCH);
let tape = new Float64Array(SCRATCH >> 3);
/** The strings not encoded yet, joined in order. */
let joined = '';
/** Bytes written, the UTF-16 units of every string so far, entries written. */
let b = 0;
let units = 0;
let n = 0;
/** As in the core: nesting past this is declined (the page's text then decides). */
const MAX_DEPTH = 120;
/** An object with no keys, to learn whether `for...in` would walk inherited ones. */
const EMPTY = {};

/**
 * What `use` returns for `value`'s tape — exactly what `JSON.stringify(value)` writes, read before
 * the buffers are reused — or `undefined`, `use` not called, when `value` holds what the text
 * carries otherwise (a `toJSON` method, an object or array that is not plain, a BigInt, nesting
 * past the bound, a getter that throws). A lone surrogate is written as U+FFFD (or joined with its
 * neighbour's) and an integer past 2^53 as it is: the addon declines each.
 */
export function withTape<R>(value: unknown, use: (t: { bytes: Uint8Array; tape: Float64Array }) => R): R | undefined {
  // An enumerable key on Object.prototype: `for...in` would walk it (the text does not).
  for (const _ in EMPTY) return undefined;
  b = units = 0;
  n = 1;
  try {
    if (!write(value === undefined || typeof value === 'function' ? null : value, 0)) return undefined;
    encode('');
    tape[0] = units;
  } catch {
    return undefined;
  } finally {
    joined = '';
  }
  try {
    return use({ bytes: bytes.subarray(0, b), tape: tape.subarray(0, n) });
  } finally {
    if (bytes.length > KEEP) bytes = new Uint8Array(SCRATCH);
    if (tape.length > KEEP >> 3) tape = new Float64Array(SCRATCH >> 3);
  }
}

/** `a` with room for `more` after its first `used` entries. */
function grown<T extends Uint8Array | Float64Array>(a: T, used: number, more: number): T {
  if (used + more <= a.length) return a;
  const g = new (a.constructor as new (length: number) => T)(Math.max(a.length * 2, used + more));
  g.set(a.subarray(0, used));
  return g;
}

/** Encodes the joined strings, then `s`, after the bytes written. */
function encode(s: string): void {
  for (const t of [joined, s]) {
    bytes = grown(bytes, b, t.length * 3);
    b += encoder.encodeInto(t, bytes.subarray(b)).written;
  }
  joined = '';
}

/** Adds `s` after the strings so far; writes its end, in UTF-16 units. */
function str(s: string): void {
  if (s.length < LONG && joined.length < 1 << 16) joined += s;
  else encode(s);
  tape[n++] = units += s.length;
}

/** Skipped as a key's value, `null` as an element (as `JSON.stringify` does). */
const absent = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

function write(v: unknown, depth: number): boolean {
  if (n + 2 > tape.length) tape = grown(tape, n, 2); // a store only when it grows (a write barrier)
  if (typeof v === 'string') {
    tape[n++] = 4;
    str(v);
  } else if (typeof v === 'number') {
    // A non-finite number is null, as in the text.
    tape[n++] = Number.isFinite(v) ? 3 : 0;
    if (Number.isFinite(v)) tape[n++] = v;
  } else if (typeof v === 'boolean') tape[n++] = v ? 2 : 1;
  else if (v === null) tape[n++] = 0;
  else if (typeof v !== 'object' || depth >= MAX_DEPTH) return false; // a BigInt: JSON.stringify throws
  else if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  else if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return false;
    tape[n++] = 5;
    tape[n++] = v.length;
    for (let i = 0; i < v.length; i++) if (!write(absent(v[i]) ? null : v[i], depth + 1)) return false;
  } else {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return false;
    tape[n++] = 6;
    const count = n++;
    let kept = 0;
    // Own enumerable string keys in their order (none inherited: checked above); `for...in` reads
    // each value through V8's enum cache, where `Object.keys` and `v[key]` look each one up.
    for (const key in v) {
      const x: unknown = (v as Record<string, unknown>)[key];
      if (absent(x)) continue;
      if (n + 1 > tape.length) tape = grown(tape, n, 1);
      str(key);
      kept++;
      if (!write(x, depth + 1)) return false;
    }
    tape[count] = kept;
  }
  return true;
}
