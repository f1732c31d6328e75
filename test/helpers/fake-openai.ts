/**
 * A fake OpenAI-compatible server on loopback for tests with real provider
 * packages (`@ai-sdk/openai`, `@ai-sdk/openai-compatible`): it answers
 * `POST …/chat/completions` and `POST …/responses` (the Responses API that
 * `createOpenAI()(id)` speaks) with text or a tool call, as JSON or as SSE
 * when the request asks to stream, and, as the test scripts it,
 * errors with any status, body and headers (a 429 with `retry-after`, a
 * 500, a 401 that echoes the key) or a hang that never answers.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the server got. */
export interface FakeRequest {
  /** `chat` (`/chat/completions`) or `responses`. */
  api: "chat" | "responses";
  headers: IncomingHttpHeaders;
  /** The parsed JSON body. */
  body: Record<string, unknown>;
  /** The raw body text. */
  raw: string;
}

/** What the server answers to one request. */
export type FakeReply =
  | { kind: "text"; text: string; chunks?: string[] }
  | { kind: "tool"; name: string; args: unknown /** default `call_1` */; id?: string }
  | { kind: "error"; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: "hang" };

/** Decides the reply to request number `n` (from 0). */
export type FakeScript = (req: FakeRequest, n: number) => FakeReply;

/** A running fake server. */
export interface FakeServer {
  /** Base URL to give a provider (`http://127.0.0.1:PORT/v1`). */
  url: string;
  /** Every request so far, in order. */
  requests: FakeRequest[];
  /** Model ids of the hung requests the client closed (aborted). */
  abortedHangs(): string[];
  close(): Promise<void>;
}

/** Starts a fake server answering as `script` says. */
export async function startFakeOpenAI(script: FakeScript): Promise<FakeServer> {
  const requests: FakeRequest[] = [];
  const aborted: string[] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => {
      raw += d;
    });
    req.on("end", () => {
      const api = req.url?.endsWith("/responses") ? "responses" : "chat";
      if (req.method !== "POST" || !/\/(chat\/completions|responses)$/.test(req.url ?? "")) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw || "{}") as Record<string, unknown>;
      const request: FakeRequest = { api, headers: req.headers, body, raw };
      const reply = script(request, requests.length);
      requests.push(request);
      if (reply.kind === "hang") {
        res.on("close", () => {
          aborted.push(String(body.model));
        });
        return;
      }
      if (reply.kind === "error") {
        res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
        res.end(JSON.stringify(reply.body));
        return;
      }
      if (api === "responses") answerResponses(res, reply, body.stream === true);
      else answerChat(res, reply, body.stream === true, body.model);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    abortedHangs: () => [...aborted],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An OpenAI error body, as the API sends it. */
export function openAiError(message: string, code: string, type = "invalid_request_error") {
  return { error: { message, type, param: null, code } };
}

const USAGE = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };

function answerChat(
  res: ServerResponse,
  reply: Extract<FakeReply, { kind: "text" | "tool" }>,
  stream: boolean,
  model: unknown,
): void {
  const head = { id: "chatcmpl-1", created: 1_700_000_000, model: String(model ?? "m") };
  const call = (name: string, args: unknown, id = "call_1") => ({
    id,
    type: "function",
    function: { name, arguments: JSON.stringify(args) },
  });
  if (!stream) {
    const message =
      reply.kind === "text"
        ? { role: "assistant", content: reply.text }
        : {
            role: "assistant",
            content: null,
            tool_calls: [call(reply.name, reply.args, reply.id)],
          };
    const finish = reply.kind === "text" ? "stop" : "tool_calls";
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        ...head,
        object: "chat.completion",
        choices: [{ index: 0, message, finish_reason: finish }],
        usage: USAGE,
      }),
    );
    return;
  }
  const chunk = (delta: unknown, finish: string | null, usage?: unknown) =>
    JSON.stringify({
      ...head,
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...(usage ? { usage } : {}),
    });
  const events: string[] = [];
  if (reply.kind === "text") {
    for (const piece of reply.chunks ?? [reply.text])
      events.push(chunk({ role: "assistant", content: piece }, null));
    events.push(chunk({}, "stop", USAGE));
  } else {
    events.push(
      chunk(
        {
          role: "assistant",
          tool_calls: [{ index: 0, ...call(reply.name, reply.args, reply.id) }],
        },
        null,
      ),
    );
    events.push(chunk({}, "tool_calls", USAGE));
  }
  sendSse(res, events);
}

function answerResponses(
  res: ServerResponse,
  reply: Extract<FakeReply, { kind: "text" | "tool" }>,
  stream: boolean,
): void {
  const usage = { input_tokens: 12, output_tokens: 5 };
  const item =
    reply.kind === "text"
      ? {
          type: "message",
          role: "assistant",
          id: "msg_1",
          status: "completed",
          content: [{ type: "output_text", text: reply.text, annotations: [] }],
        }
      : {
          type: "function_call",
          id: "fc_1",
          call_id: reply.id ?? "call_1",
          name: reply.name,
          arguments: JSON.stringify(reply.args),
          status: "completed",
        };
  if (!stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: "resp_1",
        object: "response",
        created_at: 1_700_000_000,
        model: "m",
        status: "completed",
        output: [item],
        usage,
      }),
    );
    return;
  }
  const added =
    reply.kind === "text"
      ? { type: "message", id: "msg_1" }
      : { ...item, arguments: "", status: "in_progress" };
  const deltas =
    reply.kind === "text"
      ? (reply.chunks ?? [reply.text]).map((delta) => ({
          type: "response.output_text.delta",
          item_id: "msg_1",
          delta,
        }))
      : [
          {
            type: "response.function_call_arguments.delta",
            item_id: "fc_1",
            output_index: 0,
            delta: item.arguments,
          },
        ];
  const events = [
    {
      type: "response.created",
      sequence_number: 0,
      response: { id: "resp_1", created_at: 1_700_000_000, model: "m" },
    },
    { type: "response.output_item.added", output_index: 0, item: added },
    ...deltas,
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: { usage } },
  ].map((e) => JSON.stringify(e));
  sendSse(res, events, false);
}

function sendSse(res: ServerResponse, events: string[], done = true): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const e of events) res.write(`data: ${e}\n\n`);
  if (done) res.write("data: [DONE]\n\n");
  res.end();
}

/**
 * The script of the provider tests, chosen by the request's model id
 * `<case>.<tag>` (the tag keeps each test's counters apart): `ok` answers
 * with a tool call — `call_worker` to `counter` when the instructions say
 * "You delegate.", else `read_file` of /notes.txt — and, once the tool's
 * result is back, with text naming it (in three streamed pieces);
 * `429-once` is a 429 with `retry-after: 1` first, then `ok`;
 * `429-always` and `500` always fail (with `retry-after-ms: 5`, so retries
 * are quick); `hang` never answers; `401` echoes the key it was sent, as
 * OpenAI's API does.
 */
export function scriptByModel(): FakeScript {
  const counts = new Map<string, number>();
  return (req): FakeReply => {
    const id = String(req.body.model ?? "");
    const n = counts.get(id) ?? 0;
    counts.set(id, n + 1);
    const scenario = id.split(".")[0];
    if (scenario === "hang") return { kind: "hang" };
    if (scenario === "401") {
      const key = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
      return {
        kind: "error",
        status: 401,
        body: openAiError(
          `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com/account/api-keys.`,
          "invalid_api_key",
        ),
      };
    }
    if (scenario === "429-always" || scenario === "500" || (scenario === "429-once" && n === 0)) {
      const status = scenario === "500" ? 500 : 429;
      return {
        kind: "error",
        status,
        headers: (scenario === "429-once"
          ? { "retry-after": "1" }
          : { "retry-after-ms": "5" }) as Record<string, string>,
        body:
          status === 429
            ? openAiError("Rate limit reached for requests", "rate_limit_exceeded", "requests")
            : openAiError(
                "The server had an error while processing your request.",
                "server_error",
                "server_error",
              ),
      };
    }
    const result = lastToolResult(req);
    if (result === undefined)
      return req.raw.includes("You delegate.")
        ? { kind: "tool", name: "call_worker", args: { worker: "counter", input: "count" } }
        : { kind: "tool", name: "read_file", args: { path: "/notes.txt" } };
    const text = `done: ${result.slice(0, 300)}`;
    return { kind: "text", text, chunks: ["done", ": ", result.slice(0, 300)] };
  };
}

/** The text of the last tool result a request carries, if any. */
function lastToolResult(req: FakeRequest): string | undefined {
  const items = (req.api === "chat" ? req.body.messages : req.body.input) as unknown[] | undefined;
  let out: string | undefined;
  for (const item of items ?? []) {
    const m = item as Record<string, unknown>;
    if (m.role === "tool" || m.type === "function_call_output") {
      const v = m.role === "tool" ? m.content : m.output;
      out = typeof v === "string" ? v : JSON.stringify(v);
    }
  }
  return out;
}
