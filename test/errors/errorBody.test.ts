// The error bodies of §2.4: what every HTTP refusal carries, kept loose.
import { describe, expect, it } from 'vitest';
import { ErrorResponseSchema, HTTPValidationErrorSchema, ValidationErrorSchema } from '../../src/errors/errorBody.js';

describe('error bodies (§2.4)', () => {
  it('ErrorResponse: accepts a string detail and keeps extra fields', () => {
    const input = { detail: 'Insufficient credits.', request_id: 'abc' };
    const r = ErrorResponseSchema.safeParse(input);
    expect(r.success).toBe(true);
    expect(r.data).toEqual(input);
  });

  it.each([{}, { detail: 42 }, { detail: null }, { detail: ['x'] }, 'Internal server error', null])(
    'ErrorResponse: rejects %j',
    (body) => {
      expect(ErrorResponseSchema.safeParse(body).success).toBe(false);
    },
  );

  it('ValidationError: loc may mix strings and integers', () => {
    const entry = { loc: ['body', 'upload_file', 0], msg: 'Field required', type: 'missing' };
    const r = ValidationErrorSchema.safeParse(entry);
    expect(r.success).toBe(true);
    expect(r.data).toEqual(entry);
  });

  it('ValidationError: accepts an empty loc and keeps extra fields (input, ctx)', () => {
    const entry = { loc: [], msg: 'bad', type: 'value_error', input: null, ctx: { limit: 3 } };
    const r = ValidationErrorSchema.safeParse(entry);
    expect(r.success).toBe(true);
    expect(r.data).toEqual(entry);
  });

  it.each([
    ['a fractional loc element', { loc: ['body', 1.5], msg: 'm', type: 't' }],
    ['a boolean loc element', { loc: [true], msg: 'm', type: 't' }],
    ['a null loc element', { loc: [null], msg: 'm', type: 't' }],
    ['a string loc', { loc: 'header', msg: 'm', type: 't' }],
    ['no loc', { msg: 'm', type: 't' }],
    ['no msg', { loc: ['header'], type: 't' }],
    ['no type', { loc: ['header'], msg: 'm' }],
    ['a numeric msg', { loc: ['header'], msg: 1, type: 't' }],
  ])('ValidationError: rejects %s', (_what, entry) => {
    expect(ValidationErrorSchema.safeParse(entry).success).toBe(false);
  });

  it('HTTPValidationError: a list of ValidationError (missing X-API-Key and upload_file)', () => {
    const body = {
      detail: [
        { loc: ['header', 'X-API-Key'], msg: 'Field required', type: 'missing' },
        { loc: ['body', 'upload_file'], msg: 'Field required', type: 'missing' },
      ],
    };
    const r = HTTPValidationErrorSchema.safeParse(body);
    expect(r.success).toBe(true);
    expect(r.data).toEqual(body);
    expect(HTTPValidationErrorSchema.safeParse({ detail: [] }).success).toBe(true);
  });

  it.each([
    ['a string detail', { detail: 'Invalid request.' }],
    ['an entry without msg', { detail: [{ loc: ['body'], type: 'missing' }] }],
    ['no detail', {}],
  ])('HTTPValidationError: rejects %s', (_what, body) => {
    expect(HTTPValidationErrorSchema.safeParse(body).success).toBe(false);
  });
});
