// Just enough DOM for the unit tests of the HUD and the name labels (Vitest
// runs in Node, without a browser): elements with children, hidden, className,
// classList.toggle and inline style properties, and Text nodes. It counts
// every write, so tests can assert that a steady frame writes nothing, and
// allocates nothing itself on a write that changes no structure.

/** Writes made through every node of one document. */
export interface DomWrites {
  /** Text node data assignments. */
  text: number;
  /** style.setProperty calls. */
  style: number;
  /** hidden / className / classList changes. */
  attrs: number;
  /** Child lists changed (append, replaceChildren). */
  structure: number;
}

/** A Text node. */
export class FakeText {
  private value: string;

  constructor(
    private readonly writes: DomWrites,
    data: string,
  ) {
    this.value = data;
  }

  get data(): string {
    return this.value;
  }

  set data(v: string) {
    this.writes.text++;
    this.value = v;
  }

  get textContent(): string {
    return this.value;
  }
}

/** An element's inline style: custom properties and others, by name. */
class FakeStyle {
  private readonly props = new Map<string, string>();

  constructor(private readonly writes: DomWrites) {}

  setProperty(name: string, value: string): void {
    this.writes.style++;
    this.props.set(name, value);
  }

  getPropertyValue(name: string): string {
    return this.props.get(name) ?? '';
  }
}

/** An element. */
export class FakeElement {
  readonly children: (FakeElement | FakeText)[] = [];
  readonly style: FakeStyle;
  private readonly classes = new Set<string>();
  private isHidden = false;
  readonly classList = {
    toggle: (name: string, force?: boolean): boolean => {
      const on = force ?? !this.classes.has(name);
      if (on === this.classes.has(name)) return on;
      this.doc.writes.attrs++;
      if (on) this.classes.add(name);
      else this.classes.delete(name);
      return on;
    },
    contains: (name: string): boolean => this.classes.has(name),
  };

  constructor(
    private readonly doc: FakeDocument,
    readonly tagName: string,
  ) {
    this.style = new FakeStyle(doc.writes);
  }

  get ownerDocument(): FakeDocument {
    return this.doc;
  }

  get hidden(): boolean {
    return this.isHidden;
  }

  set hidden(v: boolean) {
    this.doc.writes.attrs++;
    this.isHidden = v;
  }

  get className(): string {
    return [...this.classes].join(' ');
  }

  set className(v: string) {
    this.doc.writes.attrs++;
    this.classes.clear();
    for (const c of v.split(/\s+/)) if (c) this.classes.add(c);
  }

  append(...nodes: (FakeElement | FakeText)[]): void {
    this.doc.writes.structure++;
    this.children.push(...nodes);
  }

  replaceChildren(...nodes: (FakeElement | FakeText)[]): void {
    this.doc.writes.structure++;
    this.children.splice(0, this.children.length, ...nodes);
  }

  get textContent(): string {
    return this.children.map((c) => c.textContent).join('');
  }

  /** Replaces the children with one new Text node, as the DOM does. */
  set textContent(v: string) {
    this.replaceChildren(new FakeText(this.doc.writes, v));
  }

  /** This element as the DOM type the code under test expects. */
  asHtml(): HTMLElement {
    return this as unknown as HTMLElement;
  }
}

/** A document that makes fake elements and text nodes and counts their writes. */
export class FakeDocument {
  readonly writes: DomWrites = { text: 0, style: 0, attrs: 0, structure: 0 };

  createElement(tag: string): FakeElement {
    return new FakeElement(this, tag);
  }

  createTextNode(data: string): FakeText {
    return new FakeText(this.writes, data);
  }

  /** Total writes of every kind so far. */
  totalWrites(): number {
    const w = this.writes;
    return w.text + w.style + w.attrs + w.structure;
  }
}
