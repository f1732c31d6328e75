// A shopping cart: lines of products, each with a quantity and a unit price in cents.
export interface CartLine {
  sku: string;
  name: string;
  quantity: number;
  unitCents: number;
}

export class Cart {
  readonly #lines: CartLine[] = [];

  add(line: CartLine): void {
    if (line.quantity <= 0) throw new RangeError(`quantity must be positive: ${line.quantity}`);
    // TODO: merge a line of the same sku instead of adding a second one
    this.#lines.push({ ...line });
  }

  remove(sku: string): boolean {
    const at = this.#lines.findIndex((l) => l.sku === sku);
    if (at === -1) return false;
    this.#lines.splice(at, 1);
    return true;
  }

  lines(): readonly CartLine[] {
    return this.#lines;
  }

  get itemCount(): number {
    return this.#lines.reduce((n, l) => n + l.quantity, 0);
  }

  get isEmpty(): boolean {
    return this.#lines.length === 0;
  }
}
