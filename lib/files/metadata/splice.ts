// A stripper's output as ranges of its input plus inserted bytes, copied once at the end (no object per piece).

export class Splice {
  // Pairs: [start, end) of the source, or [-1 - index into `inserts`, 0] for inserted bytes.
  private readonly ops: number[] = [];
  private readonly inserts: Buffer[] = [];
  private length = 0;
  private readonly labels = new Set<string>();
  private lastLabel = '';

  constructor(private readonly source: Buffer) {}

  /** Appends source bytes [start, end); adjacent ranges merge, so a file kept whole stays one range. */
  keep(start: number, end: number): void {
    if (end <= start) return;
    const count = this.ops.length;
    if (count >= 2 && this.ops[count - 2]! >= 0 && this.ops[count - 1] === start) this.ops[count - 1] = end;
    else this.ops.push(start, end);
    this.length += end - start;
  }

  insert(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.ops.push(-1 - this.inserts.length, 0);
    this.inserts.push(bytes);
    this.length += bytes.length;
  }

  /** Records what was removed, for the result's `removed` list. */
  note(label: string): void {
    if (label === this.lastLabel) return;
    this.lastLabel = label;
    this.labels.add(label);
  }

  get removed(): string[] {
    return [...this.labels];
  }

  get size(): number {
    return this.length;
  }

  /** The assembled bytes: the source Buffer itself when it was kept whole and nothing was inserted. */
  build(): Buffer {
    if (this.ops.length === 2 && this.ops[0] === 0 && this.ops[1] === this.source.length) return this.source;
    const out = Buffer.allocUnsafe(this.length);
    let at = 0;
    for (let index = 0; index < this.ops.length; index += 2) {
      const first = this.ops[index]!;
      if (first >= 0) {
        at += this.source.copy(out, at, first, this.ops[index + 1]!);
      } else {
        const inserted = this.inserts[-1 - first]!;
        at += inserted.copy(out, at);
      }
    }
    return out;
  }
}
