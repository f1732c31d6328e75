// Money as people read it, and back.
const SYMBOLS: Record<string, string> = { EUR: "€", GBP: "£", USD: "$" };

export function formatPrice(cents: number, currency = "EUR"): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  const units = Math.floor(abs / 100).toLocaleString("en-US");
  const rest = String(abs % 100).padStart(2, "0");
  return `${sign}${SYMBOLS[currency] ?? `${currency} `}${units}.${rest}`;
}

// Accepts "12.50", "€12.50", 12.5 or { cents: 1250 } from older callers.
export function parseMoney(input: any): number {
  if (typeof input === "number") return Math.round(input * 100);
  if (typeof input === "object" && input !== null) return Number(input.cents);
  const text = String(input).replace(/[^\d.-]/g, "");
  const value = Number.parseFloat(text);
  if (Number.isNaN(value)) throw new TypeError(`not an amount: ${String(input)}`);
  return Math.round(value * 100);
}
