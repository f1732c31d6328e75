// What an order costs: subtotal, discount, shipping and tax, in cents.
import type { CartLine } from "./cart.js";

export interface OrderPrice {
  subtotal: number;
  discount: number;
  shipping: number;
  tax: number;
  total: number;
}

const TAX_RATES: Record<string, number> = { DE: 0.19, FR: 0.2, GB: 0.2, NL: 0.21 };

export function priceOrder(
  lines: readonly CartLine[],
  country: string,
  coupon?: string,
): OrderPrice {
  let subtotal = 0;
  for (const line of lines) {
    if (line.quantity <= 0) continue;
    subtotal += line.quantity * line.unitCents;
  }

  let discount = 0;
  if (coupon !== undefined) {
    const code = coupon.trim().toUpperCase();
    if (code === "WELCOME10") {
      discount = Math.round(subtotal * 0.1);
    } else if (code === "FREESHIP") {
      discount = 0;
    } else if (code.startsWith("FLAT")) {
      const amount = Number.parseInt(code.slice(4), 10);
      if (!Number.isNaN(amount)) discount = Math.min(amount * 100, subtotal);
    }
  }

  let shipping: number;
  if (coupon?.trim().toUpperCase() === "FREESHIP") {
    shipping = 0;
  } else if (subtotal - discount >= 5000) {
    shipping = 0;
  } else if (country === "DE" || country === "NL") {
    shipping = 490;
  } else if (country === "FR" || country === "GB") {
    shipping = 890;
  } else {
    shipping = 1990;
  }

  const rate = TAX_RATES[country] ?? 0;
  const tax = Math.round((subtotal - discount + shipping) * rate);
  const total = subtotal - discount + shipping + tax;
  return { subtotal, discount, shipping, tax, total };
}
