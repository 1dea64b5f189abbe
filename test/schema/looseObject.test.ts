// looseObject: zod's loose object on core's compiled parser, as the event schemas use it.
import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { looseObject } from '../../src/schema/looseObject.js';

describe('looseObject', () => {
  const Point = looseObject({ x: z.number(), label: z.optional(z.string()) });

  it('validates its shape and keeps unknown fields, as z.looseObject does', () => {
    expect(Point.parse({ x: 1, extra: [1] })).toEqual({ x: 1, extra: [1] });
    expect(z.safeParse(z.looseObject({ x: z.number() }), { x: 1, extra: true }).data).toEqual(Point.parse({ x: 1, extra: true }));
    const r = Point.safeParse({ x: 'one' });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(['x']);
  });

  it('has the shape, so z.extend works on it', () => {
    expect(Object.keys(Point.shape)).toEqual(['x', 'label']);
    const Named = z.extend(Point, { label: z.string() });
    expect(Named.safeParse({ x: 1 }).success).toBe(false);
    expect(Named.parse({ x: 1, label: 'a', more: 2 })).toEqual({ x: 1, label: 'a', more: 2 });
  });
});
