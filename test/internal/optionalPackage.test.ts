import { expect, it } from 'vitest';
import { SvcError } from '../../src/errors/index.js';
import { importOptional } from '../../src/internal/optionalPackage.js';

it('a package that is not installed is a missing_dependency error naming what to install', async () => {
  const err = await importOptional('svc-no-such-package', 'the thing', ['svc-no-such-package', 'ioredis'], () => import('svc-no-such-package' as string)).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(SvcError);
  expect(err).toMatchObject({ code: 'missing_dependency', retryable: false, detail: { package: 'svc-no-such-package', install: ['svc-no-such-package', 'ioredis'] } });
  expect((err as Error).message).toBe('the thing needs svc-no-such-package and ioredis: npm install svc-no-such-package ioredis');
});

it('an installed package loads; one that fails to load for another reason says so', async () => {
  const ws = await importOptional('ws', 'x', ['ws'], () => import('ws'));
  expect(typeof ws.WebSocket).toBe('function');
  const err = await importOptional('ws', 'x', ['ws'], () => Promise.reject(new SyntaxError('Unexpected token'))).catch((e: unknown) => e);
  expect(err).toMatchObject({ code: 'missing_dependency' });
  expect((err as Error).message).toBe('x needs ws, and ws failed to load: Unexpected token');
});
