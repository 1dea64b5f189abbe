// Hand-written operators the way RxJS builds its own (`operate` + `createOperatorSubscriber`):
// a throw from user code or the operator's own logic goes down the error channel, once, and
// unsubscribes upstream, instead of being reported as unhandled while the stream goes on.
import { Observable, Subscriber, type OperatorFunction, type TeardownLogic } from 'rxjs';

/**
 * An operator from `init(source, subscriber)`, run once per subscription. A throw from `init`
 * errors the subscriber. Subscribe to `source` with {@link operatorSubscriber} so that throws
 * from the callbacks are routed too.
 */
export function operate<T, R>(init: (source: Observable<T>, subscriber: Subscriber<R>) => TeardownLogic): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      try {
        return init(source, subscriber);
      } catch (err) {
        subscriber.error(err);
        return undefined;
      }
    });
}

/** The callbacks of an {@link operatorSubscriber}; those left out pass the signal on. */
export interface OperatorHandlers<T> {
  next?: ((value: T) => void) | undefined;
  error?: ((err: unknown) => void) | undefined;
  complete?: (() => void) | undefined;
  /** Runs once when this subscriber is torn down, however it ends. */
  finalize?: (() => void) | undefined;
}

/**
 * The subscriber an operator hands to its source. It is chained to `destination` (unsubscribing
 * downstream unsubscribes upstream), and a throw from any handler errors `destination` and
 * unsubscribes upstream.
 */
export function operatorSubscriber<T>(destination: Subscriber<unknown>, handlers: OperatorHandlers<T>): Subscriber<T> {
  return new OperatorSubscriber(destination, handlers);
}

class OperatorSubscriber<T> extends Subscriber<T> {
  constructor(
    private readonly target: Subscriber<unknown>,
    private readonly handlers: OperatorHandlers<T>,
  ) {
    // A Subscriber given a Subscriber as destination adds itself to it.
    super(target);
  }

  protected override _next(value: T): void {
    const next = this.handlers.next;
    if (next === undefined) {
      this.target.next(value);
      return;
    }
    try {
      next(value);
    } catch (err) {
      this.target.error(err);
    }
  }

  protected override _error(err: unknown): void {
    const handle = this.handlers.error;
    if (handle === undefined) {
      this.target.error(err);
    } else {
      try {
        handle(err);
      } catch (thrown) {
        this.target.error(thrown);
      }
    }
    this.unsubscribe();
  }

  protected override _complete(): void {
    const handle = this.handlers.complete;
    if (handle === undefined) {
      this.target.complete();
    } else {
      try {
        handle();
      } catch (err) {
        this.target.error(err);
      }
    }
    this.unsubscribe();
  }

  override unsubscribe(): void {
    if (this.closed) return;
    super.unsubscribe();
    this.handlers.finalize?.();
  }
}
