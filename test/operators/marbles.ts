// Runs a marble test on virtual time, comparing with vitest's deep equality.
import { TestScheduler, type RunHelpers } from 'rxjs/testing';
import { expect } from 'vitest';

export function marbles(body: (helpers: RunHelpers) => void): void {
  new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(body);
}
