import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  CLOSE_CODES,
  ERROR_CODES,
  SessionError,
  SvcError,
  classifyDetail,
  errorFromClose,
  errorFromHttp,
  isSvcError,
  type ErrorCode,
} from '../../src/errors/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function expectApiError(e: ApiError, status: number): void {
  expect(e).toBeInstanceOf(ApiError);
  expect(e).toBeInstanceOf(SvcError);
  expect(e).toBeInstanceOf(Error);
  expect(isSvcError(e)).toBe(true);
  expect(ERROR_CODES).toContain(e.code);
  expect(typeof e.retryable).toBe('boolean');
  expect(e.status).toBe(status);
  expect(e.closeCode).toBeUndefined();
  expect(e.message.length).toBeGreaterThan(0);
  expect(e.toString()).toContain(e.code);
  expect(e.toString()).toContain(`HTTP ${status}`);
}
function expectSessionError(e: SessionError, closeCode: number): void {
  expect(e).toBeInstanceOf(SessionError);
  expect(e).toBeInstanceOf(SvcError);
  expect(e).toBeInstanceOf(Error);
  expect(ERROR_CODES).toContain(e.code);
  expect(typeof e.retryable).toBe('boolean');
  expect(e.closeCode).toBe(closeCode);
  expect(e.status).toBeUndefined();
  expect(e.message).toContain(String(closeCode));
  expect(e.toString()).toContain(`close ${closeCode}`);
}

describe('errorFromHttp: every row of §7.1', () => {
  it.each<[number, string, ErrorCode, boolean]>([
    [400, 'Unsupported file format. Supported formats: .aac, .aiff, .flac, .mp3, .mp4, .mov, .ogg, .opus, .wav, .webm', 'unsupported_format', false],
    [400, 'The uploaded file is empty.', 'empty_file', false],
    [400, 'The audio could not be processed. The file may be corrupted or in an unsupported format.', 'corrupt_audio', false],
    [400, 'Invalid request.', 'invalid_request', false],
    [401, 'Invalid API key.', 'invalid_api_key', false],
    [403, 'This request is not permitted.', 'not_permitted', false],
    [403, 'This API key does not have access to this model.', 'no_model_access', false],
    [429, 'Insufficient credits.', 'insufficient_credits', false],
    [429, 'Concurrent request limit reached. Please retry after your in-flight requests complete.', 'concurrency_limit', true],
    [429, 'Monthly usage limit reached.', 'monthly_usage_limit', false],
    [500, 'Internal server error', 'internal_error', true],
    [503, 'Service temporarily unavailable. Please try again later.', 'service_unavailable', true],
    [504, 'The request timed out. Please try again.', 'timeout', true],
  ])('%i %j → %s (retryable %s)', (status, detail, code, retryable) => {
    const body = { detail };
    const e = errorFromHttp(status, body);
    expectApiError(e, status);
    expect(e.code).toBe(code);
    expect(e.retryable).toBe(retryable);
    expect(e.detail).toBe(detail);
    expect(e.body).toEqual(body);
    expect(e.message).toContain(detail);
    expect(e.validationErrors).toBeUndefined();
  });

  it('422: HTTPValidationError → validation_error with the entries', () => {
    const body = {
      detail: [
        { loc: ['header', 'X-API-Key'], msg: 'Field required', type: 'missing', input: null },
        { loc: ['body', 'upload_file', 0], msg: 'Field required', type: 'missing' },
      ],
    };
    const e = errorFromHttp(422, body, 'audio event detection');
    expectApiError(e, 422);
    expect(e.code).toBe('validation_error');
    expect(e.retryable).toBe(false);
    expect(e.validationErrors).toEqual(body.detail);
    expect(e.detail).toEqual(body.detail);
    expect(e.body).toEqual(body);
    expect(e.message).toContain('audio event detection');
    expect(e.message).toContain('header.X-API-Key');
    expect(e.message).toContain('Field required');
  });

  it('422 with a string detail (audio too short) is still validation_error', () => {
    const e = errorFromHttp(422, { detail: 'Audio is too short for analysis; at least 0.5 s is required.' });
    expect(e.code).toBe('validation_error');
    expect(e.retryable).toBe(false);
    expect(e.validationErrors).toBeUndefined();
  });

  it('an HTTPValidationError body is validation_error whatever the status', () => {
    const e = errorFromHttp(400, { detail: [{ loc: ['query', 'x'], msg: 'bad', type: 'value_error' }] });
    expect(e.code).toBe('validation_error');
    expect(e.validationErrors).toHaveLength(1);
  });
});

describe('errorFromHttp: the detail decides, not the status (§5.1 rule 4, §7.2)', () => {
  it.each<[number, string, ErrorCode, boolean]>([
    [403, 'Invalid API key.', 'invalid_api_key', false],
    [403, 'Monthly usage limit reached.', 'monthly_usage_limit', false],
    [403, 'Insufficient credits.', 'insufficient_credits', false],
    [403, 'Concurrent request limit reached. Please retry after your in-flight requests complete.', 'concurrency_limit', true],
    [429, 'Insufficient credits.', 'insufficient_credits', false],
    [429, 'Monthly usage limit reached.', 'monthly_usage_limit', false],
    [429, 'Monthly credit limit reached.', 'monthly_credit_limit', false],
    [429, 'Too many concurrent requests. Please retry after in-flight requests complete.', 'concurrency_limit', true],
    [429, 'Maximum concurrent requests exceeded. Please try again later.', 'concurrency_limit', true],
    [502, 'Unable to validate request. Please try again.', 'upstream_unavailable', true],
  ])('%i %j → %s (retryable %s)', (status, detail, code, retryable) => {
    const e = errorFromHttp(status, { detail });
    expectApiError(e, status);
    expect(e.code).toBe(code);
    expect(e.retryable).toBe(retryable);
  });

  it('each 429 cause gets its own code', () => {
    const details = [
      'Insufficient credits.',
      'Monthly usage limit reached.',
      'Monthly credit limit reached.',
      'Concurrent request limit reached. Please retry after your in-flight requests complete.',
    ];
    const codes = details.map((d) => errorFromHttp(429, { detail: d }).code);
    expect(new Set(codes).size).toBe(details.length);
    // Only the concurrency limit clears by waiting (§7.4).
    expect(details.map((d) => errorFromHttp(429, { detail: d }).retryable)).toEqual([false, false, false, true]);
  });

  it.each<[number, ErrorCode, boolean]>([
    [400, 'invalid_request', false],
    [401, 'invalid_api_key', false],
    [403, 'usage_denied', false],
    [404, 'not_found', false],
    [422, 'validation_error', false],
    [429, 'rate_limited', true],
    [500, 'internal_error', true],
    [502, 'upstream_unavailable', true],
    [503, 'service_unavailable', true],
    [504, 'timeout', true],
    [418, 'http_error', false],
    [599, 'http_error', true],
  ])('%i with an unrecognised detail falls back on the status → %s', (status, code, retryable) => {
    const e = errorFromHttp(status, { detail: 'Something the client has never seen.' });
    expectApiError(e, status);
    expect(e.code).toBe(code);
    expect(e.retryable).toBe(retryable);
    expect(e.detail).toBe('Something the client has never seen.');
  });
});

describe('errorFromHttp: bodies that are not ErrorResponse', () => {
  it.each<[number, unknown, ErrorCode, boolean]>([
    [502, '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>', 'upstream_unavailable', true],
    [502, 'error code: 502', 'upstream_unavailable', true],
    [503, 'Service Unavailable', 'service_unavailable', true],
    [503, 'upstream connect error or disconnect/reset before headers. reset reason: connection failure', 'service_unavailable', true],
    [504, '<html><body><h1>504 Gateway Time-out</h1></body></html>', 'timeout', true],
    [504, '', 'timeout', true],
    [502, undefined, 'upstream_unavailable', true],
    [503, null, 'service_unavailable', true],
    [504, { message: 'gateway timeout' }, 'timeout', true],
    [500, '', 'internal_error', true],
    [401, '', 'invalid_api_key', false],
    [429, 'Too Many Requests', 'rate_limited', true],
    [403, { error: 'forbidden' }, 'usage_denied', false],
    [400, { detail: 42 }, 'invalid_request', false],
    [422, { detail: [{ loc: 'header' }] }, 'validation_error', false],
  ])('%i %j → %s', (status, body, code, retryable) => {
    const e = errorFromHttp(status, body);
    expectApiError(e, status);
    expect(e.code).toBe(code);
    expect(e.retryable).toBe(retryable);
    expect(e.body).toEqual(body);
  });

  it('a raw text body is used as the detail, and a known text still decides', () => {
    const e = errorFromHttp(403, 'Invalid API key.');
    expect(e.code).toBe('invalid_api_key');
    expect(e.detail).toBe('Invalid API key.');
  });

  it('a huge raw text body is cut in the detail', () => {
    const e = errorFromHttp(502, 'x'.repeat(100_000));
    expect(typeof e.detail).toBe('string');
    expect((e.detail as string).length).toBeLessThanOrEqual(500);
  });

  it.each([502, 503, 504])('%i is retryable whatever the body', (status) => {
    for (const body of [undefined, '', 'oops', { detail: 'Something the client has never seen.' }, { nope: 1 }]) {
      expect(errorFromHttp(status, body).retryable).toBe(true);
    }
  });
});

describe('errorFromClose: close codes (§7.3, wire reference)', () => {
  it.each<[number, ErrorCode, boolean]>([
    [1000, 'missing_done', true],
    [1003, 'protocol_error', false],
    [1006, 'connection_lost', true],
    [1011, 'internal_error', true],
    [4001, 'invalid_api_key', false],
    [4002, 'invalid_audio', false],
    [4003, 'usage_denied', false],
    [4029, 'limit_exceeded', false],
    [4030, 'concurrency_limit', true],
    [4031, 'limit_exceeded', false],
    [4999, 'unexpected_close', false],
    [1001, 'service_restart', true],
    [1012, 'service_restart', true],
    [4000, 'unexpected_close', false],
  ])('%i without an error event → %s (retryable %s)', (closeCode, code, retryable) => {
    const e = errorFromClose(closeCode, '', undefined);
    expectSessionError(e, closeCode);
    expect(e.code).toBe(code);
    expect(e.retryable).toBe(retryable);
    expect(e.detail).toBeUndefined();
  });

  it('CLOSE_CODES covers every code of §7.3 and the wire reference', () => {
    for (const c of [1000, 1003, 1011, 4001, 4002, 4003, 4029, 4030, 4031]) expect(CLOSE_CODES[c]).toBeDefined();
    for (const entry of Object.values(CLOSE_CODES)) expect(ERROR_CODES).toContain(entry.code);
  });
});

describe('errorFromClose: the error event text decides where it is known', () => {
  it.each<[number, string, ErrorCode, boolean]>([
    [4029, 'Insufficient credits.', 'insufficient_credits', false],
    [4029, 'Monthly usage limit reached.', 'monthly_usage_limit', false],
    [4031, 'Monthly credit limit reached.', 'monthly_credit_limit', false],
    [4031, 'Insufficient credits.', 'insufficient_credits', false],
    [4003, 'This request is not permitted.', 'not_permitted', false],
    [4003, 'This API key does not have access to this model.', 'no_model_access', false],
    [4003, 'Unable to validate request. Please try again.', 'upstream_unavailable', true],
    [4001, 'Invalid API key.', 'invalid_api_key', false],
    [4002, 'Invalid input audio', 'invalid_audio', false],
    [1003, 'Invalid configuration.', 'invalid_config', false],
    [1003, "Invalid audio_format='mp4'. Valid values: [wav, mp3, ogg, flac, webm, aac, aiff, s8, s16le]", 'invalid_audio_params', false],
    [1003, 'Raw audio formats require sample_rate and num_channels query parameters', 'invalid_audio_params', false],
    [1003, 'sample_rate and num_channels require audio_format to be specified', 'invalid_audio_params', false],
    [1003, 'Invalid sample_rate=50000. Valid values: [8000, 11025, 16000, 22050, 32000, 44100, 48000, 96000]', 'invalid_audio_params', false],
    [1003, 'Invalid num_channels=12. Must be between 1 and 8', 'invalid_audio_params', false],
    [1003, 'Expected a config frame before audio.', 'protocol_error', false],
    [1011, 'Internal server error', 'internal_error', true],
    [4999, 'Insufficient credits.', 'insufficient_credits', false],
    [4999, 'Something new', 'unexpected_close', false],
  ])('%i + %j → %s (retryable %s)', (closeCode, text, code, retryable) => {
    const e = errorFromClose(closeCode, '', text);
    expectSessionError(e, closeCode);
    expect(e.code).toBe(code);
    expect(e.retryable).toBe(retryable);
    expect(e.detail).toBe(text);
    expect(e.message).toContain(text);
  });

  it.each(['Insufficient credits.', 'Monthly usage limit reached.', 'This request is not permitted.', 'Internal server error', 'Something new'])(
    '4030 is always concurrency_limit, retryable (even with %j)',
    (text) => {
      const e = errorFromClose(4030, '', text);
      expect(e.code).toBe('concurrency_limit');
      expect(e.retryable).toBe(true);
      expect(e.detail).toBe(text);
    },
  );

  it('the close reason is used when there was no error event; the event wins over the reason', () => {
    expect(errorFromClose(4029, 'Insufficient credits.', undefined).code).toBe('insufficient_credits');
    expect(errorFromClose(4029, 'Insufficient credits.', undefined).detail).toBe('Insufficient credits.');
    const e = errorFromClose(4029, 'Insufficient credits.', 'Monthly usage limit reached.');
    expect(e.code).toBe('monthly_usage_limit');
    expect(e.detail).toBe('Monthly usage limit reached.');
  });

  it('carries the audio account when given', () => {
    const audio = { read: 9600, sent: 6400, unsent: 3200 };
    expect(errorFromClose(1011, '', 'Internal server error', audio).audio).toEqual(audio);
    expect(errorFromClose(1011, '', 'Internal server error').audio).toBeUndefined();
  });
});

describe('classifyDetail', () => {
  it('tolerates surrounding whitespace and returns undefined for unknown text', () => {
    expect(classifyDetail('  Insufficient credits.\n')).toBe('insufficient_credits');
    expect(classifyDetail('')).toBeUndefined();
    expect(classifyDetail('All good')).toBeUndefined();
  });
});

/** Every `.ts` file under the given folders of the repository. */
function sourceFiles(...dirs: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) out.push(p);
    }
  };
  for (const d of dirs) walk(join(ROOT, d));
  return out;
}

describe('ERROR_CODES', () => {
  it('is a list of unique snake_case codes', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    for (const c of ERROR_CODES) expect(c).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  it('holds every code any source file constructs an error with', () => {
    const used = new Map<string, string>();
    const ctor = /new\s+(?:Svc|Api|Session|Input|Contract|AudioSource|Relay)Error\(\s*['"]([A-Za-z_]+)['"]/g;
    for (const file of sourceFiles('src', 'operators', 'bin')) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(ctor)) used.set(m[1]!, file);
    }
    expect(used.size).toBeGreaterThan(10);
    const missing = [...used].filter(([code]) => !(ERROR_CODES as readonly string[]).includes(code));
    expect(missing).toEqual([]);
  });

  it('holds every code the classifier maps a detail, status or close code to', () => {
    const text = readFileSync(join(ROOT, 'src/errors/classify.ts'), 'utf8') + readFileSync(join(ROOT, 'src/errors/codes.ts'), 'utf8');
    const codes = [...text.matchAll(/(?:return|close\()\s*'([a-z_]+)'/g)].map((m) => m[1]!);
    expect(codes.length).toBeGreaterThan(20);
    for (const c of [...codes, 'unexpected_close']) expect(ERROR_CODES).toContain(c);
  });
});
