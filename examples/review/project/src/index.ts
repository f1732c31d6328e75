// The shop's public API.
export { Cart, type CartLine } from "./cart.js";
export { type CheckoutResult, checkout, type PaymentGateway } from "./checkout.js";
export { formatPrice, parseMoney } from "./format.js";
export { type OrderPrice, priceOrder } from "./pricing.js";
