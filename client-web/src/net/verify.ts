// A FlatBuffers verifier for the client. The flatbuffers npm package reads
// without bounds checks, so every frame from the network passes through here
// before a generated accessor touches it: offsets, vtables, strings (UTF-8 and
// NUL-terminated) and vectors are checked against the buffer, with limits on
// depth and table count, as the Rust verifier does for mino's own decoders.
// What a table holds comes from the schema: generated/mino/wire-layout.ts.

import type { FieldLayout, TableLayout } from '../generated/mino/wire-layout.js';

/** Verifier limits. */
export interface VerifyLimits {
  /** Deepest nesting of tables (root = 1). */
  readonly maxDepth: number;
  /** Most tables in one buffer. */
  readonly maxTables: number;
}

/** Why a buffer was refused. */
export class VerifyError extends Error {
  override readonly name = 'VerifyError';
}

/** A union value whose type this client does not know (not a malformed buffer). */
export class UnknownUnionError extends VerifyError {
  constructor(readonly unionType: number) {
    super(`unknown union member ${unionType}`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Checks one buffer against a root table spec. */
class Verifier {
  private readonly view: DataView;
  private tables = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly limits: VerifyLimits,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  root(spec: TableLayout): void {
    this.need(0, 4, 'root offset');
    this.table(this.uoffset(0), spec, 1);
  }

  private need(pos: number, size: number, what: string): void {
    if (pos < 0 || size < 0 || pos + size > this.bytes.length) {
      throw new VerifyError(`${what} out of bounds (${pos}+${size} > ${this.bytes.length})`);
    }
  }

  private aligned(pos: number, align: number, what: string): void {
    if (pos % align !== 0) throw new VerifyError(`${what} misaligned at ${pos}`);
  }

  /** Target of the uoffset stored at `pos`. */
  private uoffset(pos: number): number {
    this.need(pos, 4, 'offset');
    this.aligned(pos, 4, 'offset');
    const target = pos + this.view.getUint32(pos, true);
    this.need(target, 1, 'offset target');
    return target;
  }

  private table(pos: number, spec: TableLayout, depth: number): void {
    if (depth > this.limits.maxDepth) throw new VerifyError('tables nested too deep');
    if (++this.tables > this.limits.maxTables) throw new VerifyError('too many tables');
    this.need(pos, 4, `${spec.name} table`);
    this.aligned(pos, 4, `${spec.name} table`);
    const vtable = pos - this.view.getInt32(pos, true);
    this.need(vtable, 4, `${spec.name} vtable`);
    this.aligned(vtable, 2, `${spec.name} vtable`);
    const vtLen = this.view.getUint16(vtable, true);
    const tLen = this.view.getUint16(vtable + 2, true);
    if (vtLen < 4 || vtLen % 2 !== 0) throw new VerifyError(`${spec.name} vtable length ${vtLen}`);
    this.need(vtable, vtLen, `${spec.name} vtable`);
    this.need(pos, tLen, `${spec.name} table body`);
    const fieldAt = (vo: number, size: number): number => {
      const off = vo < vtLen ? this.view.getUint16(vtable + vo, true) : 0;
      if (off === 0) return 0;
      if (off + size > tLen) throw new VerifyError(`${spec.name} field ${vo} outside its table`);
      return pos + off;
    };
    for (const f of spec.fields) this.field(f, fieldAt, spec, depth);
  }

  private field(
    f: FieldLayout,
    fieldAt: (vo: number, size: number) => number,
    spec: TableLayout,
    depth: number,
  ): void {
    switch (f.kind) {
      case 'scalar': {
        const p = fieldAt(f.vo, f.size);
        if (p) this.aligned(p, f.size, `${spec.name} scalar`);
        return;
      }
      case 'struct': {
        const p = fieldAt(f.vo, f.size);
        if (p) this.aligned(p, f.align, `${spec.name} struct`);
        return;
      }
      case 'string': {
        const p = fieldAt(f.vo, 4);
        if (p) this.string(this.uoffset(p));
        return;
      }
      case 'vector': {
        const p = fieldAt(f.vo, 4);
        if (p) this.vector(this.uoffset(p), f.elemSize, f.align);
        return;
      }
      case 'table': {
        const p = fieldAt(f.vo, 4);
        if (p) this.table(this.uoffset(p), f.table, depth + 1);
        return;
      }
      case 'tables': {
        const p = fieldAt(f.vo, 4);
        if (!p) return;
        const start = this.uoffset(p);
        const len = this.vector(start, 4, 4);
        for (let i = 0; i < len; i++) this.table(this.uoffset(start + 4 + 4 * i), f.table, depth + 1);
        return;
      }
      case 'union':
        this.union(f, fieldAt, depth);
        return;
    }
  }

  private union(
    f: Extract<FieldLayout, { kind: 'union' }>,
    fieldAt: (vo: number, size: number) => number,
    depth: number,
  ): void {
    const tp = fieldAt(f.typeVo, 1);
    const type = tp ? this.view.getUint8(tp) : 0;
    const vp = fieldAt(f.vo, 4);
    if (type === 0) {
      if (vp) throw new VerifyError('union value without a type');
      return;
    }
    if (!vp) throw new VerifyError('union type without a value');
    const member = f.members.get(type);
    if (!member) throw new UnknownUnionError(type);
    this.table(this.uoffset(vp), member, depth + 1);
  }

  /** Checks a vector header and body; returns its length. */
  private vector(start: number, elemSize: number, align: number): number {
    this.need(start, 4, 'vector length');
    this.aligned(start, 4, 'vector');
    const len = this.view.getUint32(start, true);
    const bytes = len * elemSize;
    this.need(start + 4, bytes, 'vector body');
    this.aligned(start + 4, align, 'vector body');
    return len;
  }

  private string(start: number): void {
    const len = this.vector(start, 1, 1);
    this.need(start + 4 + len, 1, 'string terminator');
    if (this.bytes[start + 4 + len] !== 0) throw new VerifyError('string without NUL terminator');
    try {
      utf8.decode(this.bytes.subarray(start + 4, start + 4 + len));
    } catch {
      throw new VerifyError('string is not UTF-8');
    }
  }
}

/**
 * Verifies that `bytes` holds a well-formed table of type `spec` at its root.
 *
 * Throws [`VerifyError`] (or its subclass [`UnknownUnionError`] for a union
 * member the spec does not know); never reads outside `bytes`.
 */
export function verifyRoot(bytes: Uint8Array, spec: TableLayout, limits: VerifyLimits): void {
  new Verifier(bytes, limits).root(spec);
}
