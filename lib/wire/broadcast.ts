/**
 * An unbounded broadcast queue: every subscriber receives every message published after it
 * subscribed, in order, until the queue closes.
 *
 * @module
 */

/** A single subscriber's view of a broadcast queue. */
export interface Subscription<T> extends AsyncIterable<T> {
  /** Next message, or `undefined` once the queue is closed and drained. */
  next(): Promise<T | undefined>;
  /** Stop receiving. */
  unsubscribe(): void;
}

/** Fan-out of messages to any number of subscribers. */
export class BroadcastQueue<T> {
  #subs = new Set<{ items: T[]; wake: (() => void) | null }>();
  #closed = false;
  #roomWaiters: { limit: number; resolve: () => void }[] = [];

  /** Whether the queue was closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Deliver a message to every current subscriber. */
  publish(item: T): void {
    if (this.#closed) return;
    for (const s of this.#subs) {
      s.items.push(item);
      s.wake?.();
    }
  }

  /** Close the queue; subscribers drain what they have and then end. */
  close(): void {
    this.#closed = true;
    for (const s of this.#subs) s.wake?.();
    this.#checkRoom();
  }

  /** The longest backlog of any subscriber. */
  get backlog(): number {
    let n = 0;
    for (const s of this.#subs) n = Math.max(n, s.items.length);
    return n;
  }

  /**
   * Resolves once every subscriber holds fewer than `limit` undelivered messages (at once when
   * that is already so, or when the queue is closed): the producer's backpressure.
   */
  room(limit: number): Promise<void> {
    if (this.#closed || this.backlog < limit) return Promise.resolve();
    return new Promise((resolve) => this.#roomWaiters.push({ limit, resolve }));
  }

  #checkRoom(): void {
    if (this.#roomWaiters.length === 0) return;
    const backlog = this.backlog;
    this.#roomWaiters = this.#roomWaiters.filter((w) => {
      if (this.#closed || backlog < w.limit) {
        w.resolve();
        return false;
      }
      return true;
    });
  }

  /** Subscribe to messages published from now on. */
  subscribe(): Subscription<T> {
    const sub = { items: [] as T[], wake: null as (() => void) | null };
    this.#subs.add(sub);
    const next = async (): Promise<T | undefined> => {
      while (true) {
        if (sub.items.length > 0) {
          const item = sub.items.shift();
          this.#checkRoom();
          return item;
        }
        if (this.#closed || !this.#subs.has(sub)) return undefined;
        await new Promise<void>((res) => (sub.wake = res));
        sub.wake = null;
      }
    };
    const unsubscribe = () => {
      this.#subs.delete(sub);
      sub.wake?.();
      this.#checkRoom();
    };
    return {
      next,
      unsubscribe,
      async *[Symbol.asyncIterator]() {
        while (true) {
          const item = await next();
          if (item === undefined) return;
          yield item;
        }
      },
    };
  }
}
