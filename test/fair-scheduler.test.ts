/**
 * The fair scheduler on its own: an agent with nothing queued runs at once,
 * a backlogged agent waits its turn in round-robin order, and a closed lane's
 * queued work never starts.
 */
import { describe, expect, it } from "vitest";
import { createFairScheduler } from "../src/port/fair-scheduler.js";

const turn = () => new Promise((r) => setImmediate(r));

describe("fair scheduler", () => {
  it("serves lanes round-robin, one operation each per turn", async () => {
    const s = createFairScheduler({ opsPerTurn: 1 });
    const order: string[] = [];
    const flood = s.openLane();
    const other = s.openLane();
    for (let i = 0; i < 5; i++) flood.submit(() => order.push(`f${i}`));
    expect(order).toEqual(["f0"]); // nothing was queued: at once
    expect(flood.queued).toBe(4);
    other.submit(() => order.push("o0")); // its first op this turn: at once
    other.submit(() => order.push("o1"));
    for (let i = 0; i < 6; i++) await turn();
    // After the first turn, the two lanes alternate.
    expect(order.slice(0, 2)).toEqual(["f0", "o0"]);
    expect(order.indexOf("o1")).toBeLessThan(order.indexOf("f3"));
    expect(order).toHaveLength(7);
  });

  it("a closed lane's queued operations never start", async () => {
    const s = createFairScheduler({ opsPerTurn: 1 });
    const ran: number[] = [];
    const lane = s.openLane();
    for (let i = 0; i < 4; i++) lane.submit(() => ran.push(i));
    lane.close();
    lane.submit(() => ran.push(99));
    for (let i = 0; i < 4; i++) await turn();
    expect(ran).toEqual([0]);
  });

  it("a turn yields after its time budget, even with work left", async () => {
    const s = createFairScheduler({ opsPerTurn: 100, turnMs: 5 });
    const lane = s.openLane();
    let done = 0;
    const busy = () => {
      const until = performance.now() + 2;
      while (performance.now() < until);
      done++;
    };
    for (let i = 0; i < 60; i++) lane.submit(busy);
    const before = done;
    await turn();
    // One turn ran at most a few 2 ms tasks, not all sixty.
    expect(done - before).toBeLessThan(10);
    lane.close();
  });
});
