// Turns a cart into a paid order.
import type { Cart } from "./cart.js";
import { formatPrice } from "./format.js";
import { priceOrder } from "./pricing.js";

export interface PaymentGateway {
  charge(cents: number, reference: string): Promise<{ id: string }>;
}

export interface CheckoutResult {
  paymentId: string;
  total: string;
}

export async function checkout(
  cart: Cart,
  gateway: PaymentGateway,
  country: string,
  coupon?: string,
): Promise<CheckoutResult> {
  if (cart.isEmpty) throw new Error("cannot check out an empty cart");
  const price = priceOrder(cart.lines(), country, coupon);
  const reference = `order-${Date.now()}`;
  console.log("charging", reference, price.total);
  const payment = await gateway.charge(price.total, reference);
  return { paymentId: payment.id, total: formatPrice(price.total) };
}
