import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests import the package by its public names; these aliases point them at the sources.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^svc-stream\/operators$/, replacement: fileURLToPath(new URL('./src/operators/index.ts', import.meta.url)) },
      { find: /^svc-stream\/emulator$/, replacement: fileURLToPath(new URL('./src/emulator/index.ts', import.meta.url)) },
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
