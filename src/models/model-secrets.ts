/**
 * Secrets kept out of what a model error tells (issue 20): a provider's
 * error may echo the API key it was sent (`Incorrect API key provided:
 * sk-…`), and the host passes the error's text on to the agent's thread —
 * from where it reaches the thread's model, another agent's model through
 * `call_worker`, events and the host's own error. {@link scrubSecrets}
 * removes the key values the host can find and anything shaped like a key.
 */

/** What replaces a secret. */
export const REDACTED = "[redacted]";

/** Shortest value taken as a secret: shorter ones would blank out ordinary words. */
const MIN_SECRET_CHARS = 8;

/** Environment variables whose values are credentials by their names. */
const SECRET_ENV_NAME = /API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|ACCESS_KEY|PRIVATE_KEY/i;

/** Header and setting names that carry credentials. */
const SECRET_HEADER_NAME = /auth|key|token|secret|password|cookie/i;

/**
 * Text shaped like a credential, whoever's it is: provider key prefixes,
 * Authorization values, JWTs, `key=value` pairs, long random tokens.
 */
const KEY_SHAPES: readonly RegExp[] = [
  // OpenAI (sk-proj-…), Anthropic (sk-ant-…), DeepSeek and others; `*` for masked echoes.
  /\bsk-[A-Za-z0-9_*-]{8,}/g,
  // Authorization values (capitalized, as headers spell them: "token counting" is prose).
  /\b(?:[Bb]earer|Basic|Token)\s+[A-Za-z0-9._~+/=*-]{6,}/g,
  /\bAIza[0-9A-Za-z_-]{20,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\b(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
  // A short lower-case prefix and a long random tail: gsk_…, xai-…, hf_…, r8_…, nvapi-…
  /\b[a-z][a-z0-9]{1,7}[-_][A-Za-z0-9]{20,}/g,
];

/** `api_key=…`, `"token": "…"`, `password: …`: the value goes. */
const KEY_VALUE =
  /\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|passwd)["']?\s*[:=]\s*["']?)([^\s"',;&]{4,})/gi;

/** 32+ characters of letters, digits and `_-+` (and base64's `=` padding) with both letters and digits: a random token. */
const LONG_TOKEN = /[A-Za-z0-9_+-]{32,}={0,2}/g;

/**
 * The secret values the host can find for `model` now: the credentials in
 * its provider's settings (`config.headers()` and `config.apiKey`, as the
 * AI SDK's own providers keep them; a wrapped model shows none) and the
 * values of environment variables named like credentials. Never throws.
 */
export async function heldSecrets(model: unknown): Promise<string[]> {
  const out = new Set<string>();
  const add = (v: unknown): void => {
    if (typeof v !== "string") return;
    const bare = v.replace(/^\s*(?:Bearer|Basic|Token)\s+/i, "").trim();
    for (const s of [v.trim(), bare]) if (s.length >= MIN_SECRET_CHARS) out.add(s);
  };
  for (const [name, value] of Object.entries(process.env))
    if (SECRET_ENV_NAME.test(name)) add(value);
  try {
    const config = (model as { config?: unknown } | null)?.config;
    if (typeof config === "object" && config !== null) {
      const c = config as Record<string, unknown>;
      for (const k of ["apiKey", "token", "key"]) add(c[k]);
      // The provider computes its headers on each call (the key may come
      // from the environment then): ask it as it would.
      const headers = typeof c.headers === "function" ? await c.headers() : c.headers;
      if (typeof headers === "object" && headers !== null)
        for (const [name, value] of Object.entries(headers))
          if (SECRET_HEADER_NAME.test(name)) add(value);
    }
  } catch {
    // A provider without its key (or a getter that throws) has nothing to find.
  }
  // Longest first: a key that holds another is removed whole.
  return [...out].sort((a, b) => b.length - a.length);
}

/**
 * Longest text looked at: callers keep 2000 characters of a message, and
 * the work here grows with the text (found by an adversarial review: a
 * 16 KB provider message held the host's event loop for seconds).
 */
const MAX_SCRUBBED_CHARS = 4096;

/**
 * `text` (its first {@link MAX_SCRUBBED_CHARS} characters) without any of
 * `secrets` and without anything shaped like a key (see {@link KEY_SHAPES}),
 * each replaced by {@link REDACTED}. Linear in the text for each secret.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text.slice(0, MAX_SCRUBBED_CHARS);
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  // Whole forms of every key first, then stretches of them: a stretch of
  // "Bearer KEY" must not eat the start of KEY and leave its tail.
  const bare = [...new Set(secrets.map((s) => s.replace(/^(?:Bearer|Basic|Token)\s+/i, "")))];
  const forms = bare.map(listAlteredForms);
  for (const f of forms) for (const p of f.whole) out = out.replace(p, REDACTED);
  for (const f of forms) out = removeParts(out, f.parts);
  // A base64 form's padding goes with it.
  out = out.split(`${REDACTED}=`).join(REDACTED).split(`${REDACTED}=`).join(REDACTED);
  for (const shape of KEY_SHAPES) out = out.replace(shape, REDACTED);
  out = out.replace(KEY_VALUE, (_m, name: string, value: string) =>
    value === REDACTED ? `${name}${value}` : `${name}${REDACTED}`,
  );
  return out.replace(LONG_TOKEN, (m) => (/[0-9]/.test(m) && /[A-Za-z]/.test(m) ? REDACTED : m));
}

/** Shortest stretch of a held key that is removed where it stands alone. */
const KEY_PART = 12;

/** Characters a key's stretch takes along on each side (what is left of the key). */
const KEY_CHAR = /[\w-]/;

/**
 * `text` with every match of `parts` replaced by {@link REDACTED}, each
 * widened over the key characters next to it, so that what is left of the
 * key is never a tail shorter than a stretch. Matches are found first and
 * widened by hand: a pattern that widens itself (`[\w-]*…[\w-]*`)
 * backtracks quadratically on a long run of word characters.
 */
function removeParts(text: string, parts: readonly RegExp[]): string {
  const spans: [number, number][] = [];
  for (const p of parts) {
    p.lastIndex = 0;
    for (let m = p.exec(text); m !== null; m = p.exec(text)) {
      let start = m.index;
      let end = m.index + m[0].length;
      p.lastIndex = m.index + 1;
      while (start > 0 && KEY_CHAR.test(text[start - 1]!)) start--;
      while (end < text.length && KEY_CHAR.test(text[end]!)) end++;
      spans.push([start, end]);
    }
  }
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0]);
  let out = "";
  let at = 0;
  for (const [start, end] of spans) {
    if (end <= at) continue;
    out += start > at ? `${text.slice(at, start)}${REDACTED}` : at === 0 ? REDACTED : "";
    at = end;
  }
  return out + text.slice(at);
}

/** The patterns of one key, compiled once (keys stay the same for a host's life). */
const compiled = new Map<string, { whole: RegExp[]; parts: RegExp[] }>();
const MAX_COMPILED = 64;

/**
 * Patterns for what a provider may make of a held key (found by an
 * adversarial review): another case, whitespace or line breaks inside it,
 * its base64 or hex form, or a stretch of {@link KEY_PART} characters of it
 * (a key cut short).
 */
function listAlteredForms(secret: string): { whole: RegExp[]; parts: RegExp[] } {
  if (secret.length < 8) return { whole: [], parts: [] };
  const known = compiled.get(secret);
  if (known) return known;
  const bytes = Buffer.from(secret, "utf8");
  const whole = [
    secret,
    bytes.toString("base64").replace(/=+$/, ""),
    bytes.toString("base64url"),
    bytes.toString("hex"),
  ].map((f) => new RegExp(toFlexible(f), "gi"));
  const parts: RegExp[] = [];
  for (let i = 0; i + KEY_PART <= secret.length; i++)
    parts.push(new RegExp(toFlexible(secret.slice(i, i + KEY_PART)), "gi"));
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  const forms = { whole, parts };
  compiled.set(secret, forms);
  return forms;
}

/** A pattern for `text` in any case, with whitespace allowed between its characters. */
function toFlexible(text: string): string {
  return [...text].map((c) => c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("\\s*");
}
