/**
 * Fair scheduling of host operations across agents.
 *
 * Every port server of a host draws from one scheduler, each agent through
 * its own lane. An agent that is not backlogged (nothing queued, quota for
 * this turn left) has its operation started at once, so a lone sequential
 * reader never waits; past its quota an agent's operations queue, and the
 * scheduler starts queued operations round-robin across lanes, a bounded
 * number per lane per turn and a bounded time per turn, yielding to the
 * event loop (`setImmediate`) between turns. One agent's flood of cheap
 * requests therefore costs another agent at most one turn, and the event
 * loop is never held longer than one turn's time budget plus one operation's
 * synchronous part.
 */

/** Options of {@link createFairScheduler}. */
export interface FairSchedulerOptions {
  /** Operations one lane may start per turn. Default 1. */
  opsPerTurn?: number;
  /** Time after which a turn yields, even with work left, in ms. Default 4. */
  turnMs?: number;
}

/** One agent's queue; see {@link FairScheduler.openLane}. */
export interface Lane {
  /**
   * Starts `task` now if this lane is within its share, else queues it.
   * Tasks of a closed lane are dropped.
   */
  submit(task: () => void): void;
  /** Operations queued and not yet started. */
  readonly queued: number;
  /** Drops every queued task (they never start) and detaches the lane. */
  close(): void;
}

/** A scheduler shared by the port servers of one host. */
export interface FairScheduler {
  /** Opens a lane for one agent. */
  openLane(): Lane;
}

interface LaneState {
  tasks: (() => void)[];
  head: number;
  used: number;
  closed: boolean;
  /** Whether the lane is in the ready list (once at most). */
  listed: boolean;
}

/**
 * Creates a round-robin scheduler. One per host: lanes of different
 * schedulers do not see each other.
 */
export function createFairScheduler(opts: FairSchedulerOptions = {}): FairScheduler {
  const opsPerTurn = Math.max(1, opts.opsPerTurn ?? 1);
  const turnMs = Math.max(0, opts.turnMs ?? 4);
  /** Lanes with queued tasks, in round-robin order. */
  const ready: LaneState[] = [];
  let turnScheduled = false;
  let turn = 0;
  let laneTurn = new WeakMap<LaneState, number>();

  const usedThisTurn = (lane: LaneState): number => {
    if (laneTurn.get(lane) !== turn) {
      laneTurn.set(lane, turn);
      lane.used = 0;
    }
    return lane.used;
  };

  const schedule = (): void => {
    if (turnScheduled) return;
    turnScheduled = true;
    setImmediate(runTurn);
  };

  const startTask = (lane: LaneState, task: () => void): void => {
    lane.used++;
    try {
      task();
    } catch {
      // A task reports its own errors; one bad task must not stop the turn.
    }
  };

  function runTurn(): void {
    turnScheduled = false;
    turn++;
    if (turn > Number.MAX_SAFE_INTEGER - 1) {
      turn = 0;
      laneTurn = new WeakMap();
    }
    const deadline = performance.now() + turnMs;
    // Each pass gives every ready lane up to its quota, in order.
    let progress = true;
    while (ready.length > 0 && progress && performance.now() < deadline) {
      progress = false;
      for (let i = 0; i < ready.length && performance.now() < deadline; ) {
        const lane = ready[i]!;
        if (lane.closed || lane.head >= lane.tasks.length) {
          ready.splice(i, 1);
          lane.listed = false;
          continue;
        }
        if (usedThisTurn(lane) >= opsPerTurn) {
          i++;
          continue;
        }
        const task = lane.tasks[lane.head]!;
        lane.tasks[lane.head++] = noop;
        if (lane.head === lane.tasks.length) {
          lane.tasks.length = 0;
          lane.head = 0;
        }
        startTask(lane, task);
        progress = true;
        i++;
      }
    }
    // Rotate, so the lane served first this turn is served last next turn.
    if (ready.length > 1) ready.push(ready.shift()!);
    if (ready.length > 0) schedule();
  }

  return {
    openLane(): Lane {
      const lane: LaneState = { tasks: [], head: 0, used: 0, closed: false, listed: false };
      return {
        submit(task) {
          if (lane.closed) return;
          const backlog = lane.tasks.length - lane.head;
          if (backlog === 0 && usedThisTurn(lane) < opsPerTurn) {
            startTask(lane, task);
            // The quota is per turn (about one event-loop iteration): the
            // next turn resets it, so one must come.
            schedule();
            return;
          }
          if (!lane.listed) {
            lane.listed = true;
            ready.push(lane);
          }
          lane.tasks.push(task);
          schedule();
        },
        get queued() {
          return lane.tasks.length - lane.head;
        },
        close() {
          lane.closed = true;
          lane.tasks.length = 0;
          lane.head = 0;
        },
      };
    },
  };
}

const noop = (): void => {};

/** The scheduler used by port servers given none: one per process. */
export const defaultScheduler: FairScheduler = createFairScheduler();
