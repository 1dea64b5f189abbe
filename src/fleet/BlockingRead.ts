// The one blocking XREAD of a relay process, over the directory and every followed stream at
// once, on a connection of its own. A stream followed while a read blocks cuts it short
// (CLIENT UNBLOCK from the command connection) so the next read names it; a failed read backs
// off from 50 ms to 2 s. What to read and what to do with the answer is the reader's.
import type { Redis } from 'ioredis';

/** One read's streams (the directory first) and what to do with its answer. */
export interface ReadPlan {
  readonly keys: readonly string[];
  readonly ids: readonly string[];
  apply(result: [string, [string, string[]][]][]): void;
}

/** What the blocking read asks of the reader that owns it. */
export interface BlockingReadHost {
  /** The streams to read now. */
  plan(): ReadPlan;
  /** A read failed: Redis may be away. */
  failed(err: unknown): void;
  /** A read was answered: Redis is there. */
  answered(): void;
  readonly stats: { reads: number };
}

export class BlockingRead {
  private blockingId: number | undefined;
  private blocked = false;
  /** Bumped by `wakeUp`; a read sent before the latest bump is cut short. */
  private version = 0;
  private inflightVersion = 0;
  private wake: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly blocking: Redis,
    private readonly cmd: Redis,
    private readonly blockMs: number,
    private readonly host: BlockingReadHost,
  ) {
    // The connection's id, for UNBLOCK: asked again after each reconnect.
    blocking.on('ready', () => {
      blocking.client('ID').then(
        (id) => {
          this.blockingId = Number(id);
          this.wakeUp();
        },
        () => undefined,
      );
    });
    blocking.on('close', () => (this.blockingId = undefined));
  }

  /** The streams to read changed (or the connection is back): the next read names them. */
  wakeUp(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
    this.version++;
    this.unblock();
  }

  /**
   * A blocking read that does not name a new stream is cut short, so the next one does. The
   * UNBLOCK may reach Redis before the read it means to cut: then it is sent again shortly.
   */
  private unblock(): void {
    if (!this.blocked || this.blockingId === undefined || this.inflightVersion >= this.version) return;
    const read = this.host.stats.reads;
    this.cmd.client('UNBLOCK', this.blockingId).catch(() => undefined);
    setTimeout(() => {
      if (this.host.stats.reads === read) this.unblock();
    }, 100).unref();
  }

  /** Read until `close()`; settles once the last read is over. */
  async run(): Promise<void> {
    let backoff = 50;
    while (!this.closed) {
      if (this.blocking.status !== 'ready' || this.blockingId === undefined) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          setTimeout(resolve, 1000).unref();
        });
        continue;
      }
      this.inflightVersion = this.version;
      const plan = this.host.plan();
      let result: [string, [string, string[]][]][] | null;
      try {
        this.blocked = true;
        this.host.stats.reads++;
        result = (await this.blocking.xread('COUNT', 1000, 'BLOCK', this.blockMs, 'STREAMS', ...plan.keys, ...plan.ids)) as [string, [string, string[]][]][] | null;
        backoff = 50;
      } catch (err) {
        this.blocked = false;
        if (this.closed) return;
        this.host.failed(err);
        await new Promise((r) => setTimeout(r, backoff).unref());
        backoff = Math.min(backoff * 2, 2000);
        continue;
      } finally {
        this.blocked = false;
      }
      this.host.answered();
      if (result) plan.apply(result);
    }
  }

  /** Stop after the read in flight (the caller disconnects, which ends it). */
  close(): void {
    this.closed = true;
    this.wake?.();
  }
}
