// The README's TypeScript examples compile against the package as it is: each ```ts block
// is written out as a module and typechecked with the project's settings.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

it('every ```ts block of the README typechecks', async () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  expect(blocks.length).toBeGreaterThan(5);
  const dir = join(root, 'test', '.readme-blocks');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    blocks.forEach((b, i) => writeFileSync(join(dir, `block${String(i).padStart(2, '0')}.ts`), `${b}\nexport {};\n`));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: '../../tsconfig.json', compilerOptions: { noEmit: true, noUnusedLocals: false, rootDir: '../..' }, include: ['./*.ts'] }),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const output = await new Promise<string>((resolve) =>
      execFile(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { timeout: 60_000 }, (_err, stdout, stderr) => resolve(`${stdout}${stderr}`)),
    );
    // Name the README block, not the temp file, when one fails.
    expect(output.replace(/test\/\.readme-blocks\/block(\d+)\.ts/g, 'README ```ts block #$1')).toBe('');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);
