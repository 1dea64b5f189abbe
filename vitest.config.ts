import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests import the package by its public names; these aliases point them at the sources.
export default defineConfig({
  resolve: {
    alias: [
      // 'svc-stream/batch', '/telephony', …: each subpath entry is src/<area>/index.ts.
      { find: /^svc-stream\/([a-z]+)$/, replacement: `${fileURLToPath(new URL('./src', import.meta.url))}/$1/index.ts` },
      { find: /^svc-stream$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
