// The one check of a positive option: the default when absent, the value when it is finite and
// above zero, a typed refusal naming the option otherwise.
import { describe, expect, it } from 'vitest';
import { positiveInteger, positiveOption } from '../../src/internal/positiveOption.js';

describe('positiveOption', () => {
  it('takes the default when absent and any finite number above zero as given', () => {
    expect(positiveOption('relay', 'maxStreams', undefined, 256)).toBe(256);
    expect(positiveOption('relay', 'maxStreams', 3, 256)).toBe(3);
    expect(positiveOption('relay', 'retryMs', 0.5, 1000)).toBe(0.5);
  });

  it('refuses zero, negatives, NaN and infinities, naming the owner and the option', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => positiveOption('fleet reader', 'blockMs', bad, 5000)).toThrow(
        expect.objectContaining({ code: 'invalid_argument', path: 'blockMs', message: `fleet reader option blockMs must be a positive number, got ${bad}` }),
      );
    }
  });
});

describe('positiveInteger', () => {
  it('takes the default when absent and a whole number of at least 1 as given; refuses the rest naming the option', () => {
    expect(positiveInteger('rtpSource', 'maxLegs', undefined, 64)).toBe(64);
    expect(positiveInteger('rtpSource', 'maxLegs', 1, 64)).toBe(1);
    for (const bad of [0, -2, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => positiveInteger('analyzeCalls', 'maxConcurrent', bad, 3)).toThrow(
        expect.objectContaining({ code: 'invalid_argument', path: 'maxConcurrent', message: `analyzeCalls option maxConcurrent must be a positive integer, got ${bad}` }),
      );
    }
  });
});
